//! cua-driver's browser tools in a real Chromium (launched by launch_app, its endpoint the
//! page relay's pipe): a window is bound, its tab read as refs, and each input tool's
//! effect is read back from the page's own journal (#log) through the browser's
//! accessibility tree over AT-SPI — not through CDP, which the tools themselves use.

mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Browser {
    session: common::Session,
    app: common::App,
    target_id: String,
    tab_id: String,
}

impl Browser {
    fn call(
        &self,
        tool: &str,
        mut args: Value,
    ) -> Result<cua::tools::ToolOutput, cua::errors::ToolError> {
        let o = args.as_object_mut().unwrap();
        o.entry("target_id").or_insert(json!(self.target_id));
        o.entry("tab_id").or_insert(json!(self.tab_id));
        self.session.call(tool, args)
    }

    /// A fresh snapshot's ref for the control labelled `label`.
    fn reference(&self, label: &str) -> String {
        self.references(&[label]).remove(0)
    }

    /// One fresh snapshot's refs for the controls labelled `labels`.
    fn references(&self, labels: &[&str]) -> Vec<String> {
        let snap = self.call("get_browser_state", json!({})).expect("snapshot");
        let refs = snap.structured["refs"].as_array().unwrap();
        labels
            .iter()
            .map(|label| {
                refs.iter()
                    .find(|r| r["label"] == *label)
                    .unwrap_or_else(|| panic!("no ref labelled {label:?}: {}", snap.summary))["ref"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    /// The window's accessibility tree as text (AT-SPI, not CDP).
    fn tree(&self) -> String {
        let state = self
            .session
            .call(
                "get_window_state",
                json!({ "pid": self.app.pid, "window_id": self.app.window_id, "include_screenshot": false }),
            )
            .expect("window state");
        state.structured["tree_markdown"]
            .as_str()
            .unwrap_or(&state.summary)
            .to_string()
    }

    /// Waits (bounded) until the page's tree shows `text`.
    fn shows(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let tree = self.tree();
            if tree.contains(text) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the page never showed {text:?}:\n{tree}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn open() -> Browser {
    let session = common::Session::private();
    let app = session.chromium_on("browser.html");
    let (target_id, tab_id) = common::bind_browser(&session, &app, "cua browser page");
    Browser {
        target_id,
        tab_id,
        session,
        app,
    }
}

fn refusal(result: Result<cua::tools::ToolOutput, cua::errors::ToolError>) -> String {
    match result {
        Ok(out) => panic!("expected a refusal, got {}", out.summary),
        Err(e) => e.refusal_code().unwrap_or("(no code)").to_string() + ": " + &e.to_string(),
    }
}

#[test]
fn browser_tools_act_in_a_chromium_tab_and_the_page_sees_it() {
    let b = open();

    // A snapshot lists the page's controls with roles and values.
    let snap = b.call("get_browser_state", json!({})).unwrap();
    let refs = snap.structured["refs"].as_array().unwrap().clone();
    let labels: Vec<&str> = refs.iter().filter_map(|r| r["label"].as_str()).collect();
    for label in ["Go", "Name", "Under", "Confirm", "Ask", "Hover", "Far"] {
        assert!(labels.contains(&label), "{label} missing: {}", snap.summary);
    }
    let name = refs.iter().find(|r| r["label"] == "Name").unwrap();
    assert_eq!(name["value"], "Ada", "{name}");
    assert_eq!(name["node"], "input", "{name}");

    // A trusted click: the page's handler runs. Recorded, it is a turn that keeps its tab's
    // URL and its button's role and label, so a replay finds them again (its ids were
    // this session's) and clicks Go a second time. On a page that already showed one
    // click, the change (a second journal line, "2.") is not the recorded one, and the
    // turn says so. (tests/browser_replay.rs replays a flow on a fresh browser.)
    let go = b.reference("Go");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("browser-recording-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    b.session
        .call(
            "set_recording",
            json!({ "enabled": true, "output_dir": dir }),
        )
        .unwrap();
    b.call("browser_click", json!({ "ref": go })).unwrap();
    b.session
        .call("set_recording", json!({ "enabled": false }))
        .unwrap();
    b.shows("clicked go");
    let action: Value =
        serde_json::from_slice(&std::fs::read(dir.join("turn-00001/action.json")).unwrap())
            .unwrap();
    assert_eq!(action["tool"], "browser_click");
    let replayed = b
        .session
        .call("replay_trajectory", json!({ "dir": dir, "delay_ms": 0 }));
    // A replay with a failed turn is an error (MCP isError) that carries its report.
    let replayed = match replayed {
        Err(cua::errors::ToolError::Reported { report, .. }) => report,
        other => panic!("the replay fails, with its report: {other:?}"),
    };
    let turn = &replayed["turns"][0];
    assert_eq!(turn["dispatched"], true, "{turn}");
    assert_eq!(turn["locator_match"], "role_name", "{turn}");
    // The turn's after-state holds the click's line (the recorder waits past Chromium's
    // focus event for it), so the replay onto this clicked page sees a second line where
    // the recording had one, and fails naming it.
    let after = std::fs::read_to_string(dir.join("turn-00001/app_state.json")).unwrap();
    assert!(after.contains("clicked go"), "{after}");
    assert_eq!(turn["ok"], false, "{turn}");
    assert!(
        turn["result_summary"]
            .as_str()
            .is_some_and(|s| s.contains("not the recorded one") && s.contains("\"2.\"")),
        "{turn}"
    );
    assert_eq!(action["browser"]["element"]["name"], "Go", "{action}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.tree().matches("clicked go").count() < 2 {
        assert!(
            Instant::now() < deadline,
            "the replay did not click Go again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // A covered button is refused for a trusted click (it would land on the cover); the
    // DOM route reaches it.
    let under = b.reference("Under");
    let covered = refusal(b.call("browser_click", json!({ "ref": under })));
    assert!(
        covered.starts_with("browser_action_unavailable") && covered.contains("covered"),
        "{covered}"
    );
    assert!(!b.tree().contains("clicked under"));
    b.call(
        "browser_click",
        json!({ "ref": under, "input_route": "dom_event" }),
    )
    .unwrap();
    b.shows("clicked under");

    // Typing: replace, then keystrokes appended; the value read back, and in the tree.
    let field = b.reference("Name");
    let typed = b
        .call(
            "browser_type",
            json!({ "ref": field, "text": "Grace", "replace": true }),
        )
        .unwrap();
    assert_eq!(typed.structured["effect"], "confirmed", "{}", typed.summary);
    let typed = b
        .call(
            "browser_type",
            json!({ "ref": field, "text": " Hopper", "mode": "keystrokes" }),
        )
        .unwrap();
    assert_eq!(
        typed.structured["value"], "Grace Hopper",
        "{}",
        typed.summary
    );
    b.shows("Grace Hopper");

    // A ref of an older snapshot is refused once a newer one is taken.
    let _ = b.reference("Go");
    let stale = refusal(b.call("browser_click", json!({ "ref": field })));
    assert!(stale.starts_with("browser_ref_stale"), "{stale}");

    // Pointer gestures.
    b.call(
        "browser_pointer",
        json!({ "action": "hover", "ref": b.reference("Hover") }),
    )
    .unwrap();
    b.shows("hovered");
    b.call(
        "browser_pointer",
        json!({ "action": "right_click", "ref": b.reference("Menu") }),
    )
    .unwrap();
    b.shows("context menu");
    b.call(
        "browser_pointer",
        json!({ "action": "double_click", "ref": b.reference("Twice") }),
    )
    .unwrap();
    b.shows("double clicked");
    let [source, target] = <[String; 2]>::try_from(b.references(&["Source", "Target"])).unwrap();
    b.call(
        "browser_pointer",
        json!({ "action": "drag", "ref": source, "destination_ref": target }),
    )
    .unwrap();
    b.shows("dropped on target");
    b.call(
        "browser_pointer",
        json!({ "action": "scroll", "x": 200, "y": 200, "delta_y": 400 }),
    )
    .unwrap();
    b.shows("scrolled");
}

#[test]
fn browser_dialogs_files_navigation_and_refusals_in_chromium() {
    let b = open();

    // No dialog yet.
    let none = b
        .call("browser_dialog", json!({ "action": "inspect" }))
        .unwrap();
    assert_eq!(none.structured["present"], false, "{}", none.summary);

    // A confirm: inspected, then accepted with its id; the page reads the answer.
    b.call(
        "browser_click",
        json!({ "ref": b.reference("Confirm"), "input_route": "dom_event" }),
    )
    .unwrap();
    let open = b
        .call("browser_dialog", json!({ "action": "inspect" }))
        .unwrap();
    assert_eq!(open.structured["present"], true, "{}", open.summary);
    assert_eq!(open.structured["kind"], "confirm");
    assert_eq!(open.structured["message"], "Sure?");
    let wrong = refusal(b.call(
        "browser_dialog",
        json!({ "action": "accept", "dialog_id": "dialog-0" }),
    ));
    assert!(wrong.starts_with("browser_action_unavailable"), "{wrong}");
    let id = open.structured["dialog_id"].clone();
    b.call(
        "browser_dialog",
        json!({ "action": "accept", "dialog_id": id }),
    )
    .unwrap();
    b.shows("confirm said true");

    // A prompt, opened by a trusted click (the click returns, saying so); while it is
    // open other input is refused, not left hanging; then it is answered.
    let ask = b
        .call("browser_click", json!({ "ref": b.reference("Ask") }))
        .unwrap();
    assert_eq!(ask.structured["dialog_opened"], true, "{}", ask.summary);
    let held = refusal(b.call("browser_click", json!({ "x": 5, "y": 5 })));
    assert!(
        held.starts_with("browser_action_unavailable") && held.contains("prompt"),
        "{held}"
    );
    let open = b
        .call("browser_dialog", json!({ "action": "inspect" }))
        .unwrap();
    assert_eq!(open.structured["kind"], "prompt", "{}", open.summary);
    let id = open.structured["dialog_id"].clone();
    b.call(
        "browser_dialog",
        json!({ "action": "accept", "dialog_id": id, "prompt_text": "Lin" }),
    )
    .unwrap();
    b.shows("prompt said Lin");

    // A file input given a file, no picker.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("browser-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("notes.txt");
    std::fs::write(&file, "hello").unwrap();
    let set = b
        .call(
            "browser_set_input_files",
            json!({ "ref": b.reference("Attachment"), "files": [file.to_str().unwrap()] }),
        )
        .unwrap();
    assert_eq!(set.structured["file_count"], 1, "{}", set.summary);
    b.shows("files 1 notes.txt");
    let link = dir.join("link.txt");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let refused = b.call(
        "browser_set_input_files",
        json!({ "ref": b.reference("Attachment"), "files": [link.to_str().unwrap()] }),
    );
    assert!(
        matches!(refused, Err(ref e) if e.to_string().contains("symlink")),
        "{refused:?}"
    );

    // A download, saved into the folder named, under its id; the file holds the link's data.
    let saved = b
        .call(
            "browser_download",
            json!({ "ref": b.reference("Save note"), "destination_root": dir.to_str().unwrap() }),
        )
        .unwrap();
    let id = saved.structured["download_id"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join(id)).unwrap(),
        "hello cua",
        "{}",
        saved.summary
    );
    let relative = b.call(
        "browser_download",
        json!({ "ref": b.reference("Save note"), "destination_root": "downloads" }),
    );
    assert!(
        matches!(relative, Err(cua::errors::ToolError::InvalidArguments(_))),
        "{relative:?}"
    );

    // Navigation: the window shows the new page; the old refs are retired.
    let go = b.reference("Go");
    let refused = b.call("browser_navigate", json!({ "url": "file:///etc/passwd" }));
    assert!(
        matches!(refused, Err(cua::errors::ToolError::InvalidArguments(_))),
        "{refused:?}"
    );
    let went = b
        .call("browser_navigate", json!({ "url": "about:blank" }))
        .unwrap();
    assert_eq!(went.structured["url"], "about:blank", "{}", went.summary);
    let stale = refusal(b.call("browser_click", json!({ "ref": go })));
    assert!(stale.starts_with("browser_ref_stale"), "{stale}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let windows = b
            .session
            .call("list_windows", json!({ "pid": b.app.pid }))
            .unwrap();
        if windows.summary.contains("about:blank") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the window never showed about:blank: {}",
            windows.summary
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Ids of another session, or none, are refused by name.
    let stale = refusal(b.session.fresh_call(
        "browser_click",
        json!({ "target_id": b.target_id, "tab_id": b.tab_id, "x": 1, "y": 1 }),
    ));
    assert!(stale.starts_with("browser_binding_stale"), "{stale}");
    let missing = refusal(b.call(
        "browser_click",
        json!({ "tab_id": "tab-999", "x": 1, "y": 1 }),
    ));
    assert!(missing.starts_with("browser_tab_not_found"), "{missing}");
    let format = b.call(
        "get_browser_state",
        json!({ "snapshot_format": "semantic_v2" }),
    );
    assert!(
        matches!(format, Err(cua::errors::ToolError::InvalidArguments(_))),
        "{format:?}"
    );

    // browser_prepare: this browser has an endpoint already; nothing is done.
    let ready = b
        .session
        .call("browser_prepare", json!({ "pid": b.app.pid }))
        .unwrap();
    assert_eq!(
        ready.structured["endpoint_state"], "ready",
        "{}",
        ready.summary
    );
    assert_eq!(ready.structured["launched"], false);
}

#[test]
fn firefox_is_refused_by_name_not_half_driven() {
    let session = common::Session::private();
    let url = concat!(
        "file://",
        env!("CARGO_MANIFEST_DIR"),
        "/harness/apps/page.html"
    );
    let launched = session
        .call(
            "launch_app",
            json!({ "name": "firefox-esr", "urls": [url] }),
        )
        .expect("firefox launches");
    let app = common::App::launched(&launched);
    let bound = refusal(session.call(
        "get_browser_state",
        json!({ "pid": app.pid, "window_id": app.window_id }),
    ));
    assert!(
        bound.starts_with("browser_route_unavailable") && bound.contains("page tool"),
        "{bound}"
    );
    let prepared = refusal(session.call("browser_prepare", json!({ "pid": app.pid })));
    assert!(
        prepared.starts_with("browser_route_unavailable"),
        "{prepared}"
    );
}
