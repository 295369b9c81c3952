//! `cua record --live` driven as a person drives it: through the page in a real browser.
//! cua records the calculator in one sandbox; a headless Chromium in a second sandbox opens
//! the page, and the project's own CDP tools (browser_click, browser_type, browser_pointer)
//! click on the screen's picture, type into it, use "Undo last", the inspector and "Save
//! as scenario". The calculator's own tree must show the product, the turn folders must
//! hold the flow without the undone turn, the inspector's step pasted into a scenario must
//! run, and `cua test` must pass against the golden the saved scenario makes.
//!
//! With `CUA_DOCS_SHOTS=DIR` the page's screenshots for docs/harness.md are written there.

mod common;

use std::path::Path;

use common::live::{LiveRecorder, calculator_shows, calculator_window, centre};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The page in Chromium: its session (the second sandbox), window and bound tab.
struct Page {
    session: common::Session,
    app: common::App,
    target_id: String,
    tab_id: String,
}

impl Page {
    fn open(url: &str) -> Page {
        let session = common::Session::private();
        let launched = session
            .call(
                "launch_app",
                json!({ "name": "chromium", "urls": [url],
                "additional_arguments": ["--window-size=1280,800", "--window-position=0,0"] }),
            )
            .expect("chromium launches");
        let app = common::App::launched(&launched);
        let (target_id, tab_id) = common::bind_browser(&session, &app, "cua live recorder");
        Page {
            target_id,
            tab_id,
            session,
            app,
        }
    }

    /// A browser tool on the bound tab.
    fn act(&self, tool: &str, mut args: Value) -> Value {
        let o = args.as_object_mut().unwrap();
        o.insert("target_id".into(), json!(self.target_id));
        o.insert("tab_id".into(), json!(self.tab_id));
        self.session
            .call(tool, args.clone())
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
            .structured
    }

    /// A JavaScript expression's value in the page.
    fn eval(&self, javascript: &str) -> Value {
        let out = self
            .session
            .call(
                "page",
                json!({ "pid": self.app.pid, "window_id": self.app.window_id,
                    "action": "execute_javascript", "javascript": javascript }),
            )
            .unwrap_or_else(|e| panic!("{javascript}: {e}"));
        out.structured["result"].clone()
    }

    /// Waits (bounded) until `javascript` is true in the page.
    fn until(&self, what: &str, javascript: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.eval(javascript) != json!(true) {
            let side = self.eval("document.getElementById('side').innerText");
            assert!(Instant::now() < deadline, "{what}; the side panel:\n{side}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Where screen point (`x`, `y`) is in the page's viewport (CSS pixels).
    fn viewport_point(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let r = self.eval(
            "(() => { const s = document.getElementById('screen'); const r = s.getBoundingClientRect(); \
             return [r.left, r.top, r.width / s.naturalWidth, r.height / s.naturalHeight]; })()",
        );
        let n = |i: usize| r[i].as_f64().unwrap();
        (n(0) + x * n(2), n(1) + y * n(3))
    }

    /// A button of the side panel, clicked as a user clicks it.
    fn press(&self, label: &str) {
        let snap = self.act("get_browser_state", json!({}));
        let r = snap["refs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap_or_else(|| panic!("no {label:?} in the page: {snap}"))["ref"]
            .clone();
        self.act("browser_click", json!({ "ref": r }));
    }

    fn turns_listed(&self) -> u64 {
        self.eval("document.querySelectorAll('#turns li[data-turn]').length")
            .as_u64()
            .unwrap()
    }

    /// Clicks screen point `at` on the picture and waits for its turn in the side panel.
    fn click_screen(&self, at: (f64, f64)) {
        let before = self.turns_listed();
        let (x, y) = self.viewport_point(at);
        self.act("browser_click", json!({ "x": x, "y": y }));
        self.until(
            &format!("no turn listed for the click at {at:?}"),
            &format!("document.querySelectorAll('#turns li[data-turn]').length > {before}"),
        );
    }

    /// The browser window's screenshot, into `dir/name` when docs' screenshots are asked.
    fn shot(&self, name: &str) {
        let Some(dir) = std::env::var_os("CUA_DOCS_SHOTS") else {
            return;
        };
        // The picture is current once no frame has come for half a second.
        self.until(
            "the page's picture never held still",
            "performance.now() - Number(document.getElementById('screen').dataset.shownAt) > 500",
        );
        let file = Path::new(&dir).join(name);
        self.session
            .call(
                "screenshot",
                json!({ "window_id": self.app.window_id, "screenshot_out_file": file }),
            )
            .expect("a screenshot of the page");
    }
}

#[test]
fn a_person_records_7_times_6_in_the_live_page_in_chromium_and_cua_test_passes() {
    let app_side = common::Session::private();
    let mut recorder = LiveRecorder::calculator(&app_side, "live-browser");
    let (pid, window, elements) = calculator_window(&app_side);

    let page = Page::open(&recorder.url);
    page.until(
        "the page never showed the screen",
        "document.getElementById('screen').naturalWidth === 1280",
    );
    // 7 × by clicks on the picture, 6 typed into it, = by a click.
    page.click_screen(centre(&elements, &["7"]));
    page.click_screen(centre(&elements, &["×", "Multiply"]));
    // Keys go where a person's go: to the browser window, whose focus is the picture.
    let listed = page.turns_listed();
    page.session.ok(
        "type_text",
        json!({ "pid": page.app.pid, "window_id": page.app.window_id, "text": "6", "as_keys": true }),
    );
    page.until(
        "the typed burst was never a turn",
        &format!("document.querySelectorAll('#turns li[data-turn]').length > {listed}"),
    );
    page.click_screen(centre(&elements, &["=", "Calculate result"]));
    calculator_shows(&app_side, &pid, &window, "42");
    page.shot("live-recording.png");

    // A stray click, then "Undo last": its turn leaves the list and the trajectory.
    page.click_screen(centre(&elements, &["1"]));
    let listed = page.turns_listed();
    page.press("Undo last");
    page.until(
        "Undo last took no turn back",
        &format!(
            "document.querySelectorAll('#turns li[data-turn]').length === {}",
            listed - 1
        ),
    );

    // The inspector: hovering over 7 names it; a click gives the step.
    page.press("Inspect");
    let (x, y) = page.viewport_point(centre(&elements, &["7"]));
    page.act(
        "browser_pointer",
        json!({ "action": "hover", "x": x, "y": y }),
    );
    page.until(
        "hovering over 7 never named it",
        "document.getElementById('locator').textContent.startsWith('button \"7\"')",
    );
    page.shot("live-inspector.png");
    page.act("browser_click", json!({ "x": x, "y": y }));
    page.until(
        "a click in the inspector gave no step",
        "document.getElementById('copied').textContent !== ''",
    );
    let step = page.eval("document.getElementById('step').textContent");
    let step = step.as_str().unwrap().to_string();
    page.press("Inspect");

    // Save as scenario, by typing its name into the form.
    let name_ref = page.act("get_browser_state", json!({}))["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "Scenario name")
        .map(|r| r["ref"].clone())
        .expect("the scenario name field");
    page.act(
        "browser_type",
        json!({ "ref": name_ref, "text": "calc-live" }),
    );
    page.press("Save as scenario");
    page.until(
        "Save as scenario said nothing",
        "document.getElementById('saved').textContent.startsWith('saved ')",
    );

    // The page goes (its browser and sandbox stop); then Ctrl-C ends the recording, which
    // is complete on disk without the undone turn.
    drop(page);
    recorder.interrupt();
    let turns = cua::replay::turn_dirs(&recorder.dir).unwrap();
    let tools: Vec<String> = turns
        .iter()
        .map(|(_, d)| {
            let a: Value =
                serde_json::from_slice(&std::fs::read(d.join("action.json")).unwrap()).unwrap();
            format!("{} {}", a["tool"].as_str().unwrap(), a["target"]["name"])
        })
        .collect();
    assert_eq!(
        tools
            .iter()
            .map(|t| t.split(' ').next().unwrap())
            .collect::<Vec<_>>(),
        ["launch_app", "click", "click", "type_text", "click"],
        "{tools:?}"
    );
    assert!(!tools.iter().any(|t| t.contains("\"1\"")), "{tools:?}");
    let hidden: Vec<_> = std::fs::read_dir(&recorder.dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.file_name())
        .collect();
    assert!(hidden.is_empty(), "leftovers: {hidden:?}");

    // The saved scenario: its first run is the golden, its second passes against it.
    recorder.cua_test("calc-live", &["--update"]);
    recorder.cua_test("calc-live", &[]);

    // The inspector's step, pasted into a scenario, runs and presses 7.
    assert!(
        step.contains("target = { role = \"button\", name = \"7\" }"),
        "{step}"
    );
    let scenario = format!(
        "description = \"the inspector's step\"\n\n[app]\nname = \"Calculator\"\nwindow = \"Calculator\"\n\n{step}"
    );
    std::fs::write(recorder.root.join("harness/inspected.toml"), scenario).unwrap();
    recorder.cua_test("inspected", &["--update"]);
    let golden = cua::replay::turn_dirs(&recorder.root.join("goldens/inspected")).unwrap();
    let after = std::fs::read_to_string(golden.last().unwrap().1.join("app_state.json")).unwrap();
    assert!(after.contains("text value=\\\"7\\\""), "{after}");
    let _ = std::fs::remove_dir_all(&recorder.root);
}
