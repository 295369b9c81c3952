//! The tools and forms cua took from cua-driver, on a real GTK 3 app (the fixture, whose
//! journal says what it received): element tokens, verify_state, invoke_menu, sessions as
//! tools, set_window_frame, get_desktop_state, health_report, and `cua call`'s JSON.

mod common;
#[path = "support/mcp_client.rs"]
#[allow(dead_code)]
mod mcp_client;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use common::journal;
use cua::tools::{Sessions, ToolContext};
use serde_json::{Value, json};

/// A session on a sandbox of its own with a fresh GTK 3 fixture journaling to `journal`.
struct Fixture {
    session: common::Session,
    pid: u64,
    window_id: u64,
    journal: PathBuf,
}

impl std::ops::Deref for Fixture {
    type Target = common::Session;
    fn deref(&self) -> &common::Session {
        &self.session
    }
}

impl Fixture {
    fn start(name: &str) -> Fixture {
        let session = common::Session::private();
        let journal = std::env::temp_dir().join(format!(
            "cua-driver-tools-{name}-{}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&journal);
        let (pid, window_id) = common::launch_fixture(session.sandbox().env(), "gtk3", &journal);
        Fixture {
            session,
            pid,
            window_id,
            journal,
        }
    }

    fn state(&self) -> Value {
        self.call(
            "get_window_state",
            json!({ "pid": self.pid, "window_id": self.window_id, "include_screenshot": false }),
        )
        .unwrap()
        .structured
    }

    fn element(state: &Value, name: &str) -> Value {
        state["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no element {name}"))
            .clone()
    }

    /// Waits (bounded) for the journal to hold an event `shows` accepts.
    fn journaled(&self, shows: impl Fn(&Value) -> bool) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
        while std::time::Instant::now() < deadline {
            if journal(&self.journal).iter().any(&shows) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.journal);
    }
}

#[test]
fn an_element_token_names_one_element_and_a_stale_one_is_refused() {
    let f = Fixture::start("tokens");
    let state = f.state();
    let increment = Fixture::element(&state, "Increment");
    let token = increment["element_token"].as_str().unwrap().to_string();
    assert!(token.starts_with('s') && token.contains(':'), "{token}");
    // The label, frame in cua-driver's names; every element carries its token. The frame
    // is in screen points (cua-driver's), pixel_frame in the screenshot's pixels.
    assert_eq!(increment["label"], "Increment");
    assert!(increment["frame"]["w"].as_i64().unwrap() > 0);
    let windows = f
        .call("list_windows", json!({ "pid": f.pid }))
        .unwrap()
        .structured;
    let window = &windows["windows"][0];
    for (screen, pixel, origin) in [("x", "x", "x"), ("y", "y", "y")] {
        assert_eq!(
            increment["frame"][screen].as_i64().unwrap(),
            increment["pixel_frame"][pixel].as_i64().unwrap() + window[origin].as_i64().unwrap(),
            "{increment} in {window}"
        );
    }
    assert!(
        state["elements"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["element_token"].is_string())
    );
    assert_eq!(state["total_element_count"], state["element_count"]);

    // The token alone is enough: pid, window and index come from its snapshot.
    f.call("click", json!({ "element_token": token })).unwrap();
    assert!(f.journaled(|e| e["event"] == "clicked" && e["widget"] == "Increment"));

    let conflicting = f
        .call(
            "click",
            json!({ "element_token": token, "window_id": f.window_id + 1 }),
        )
        .unwrap_err();
    assert!(
        conflicting.to_string().contains("`window_id`"),
        "{conflicting}"
    );
    // Once a newer read of the window exists, the token is stale: refused, never
    // re-resolved (cua-driver's rule), and the newer read's token works.
    let newer = f.state();
    let stale = f
        .call("click", json!({ "element_token": token }))
        .unwrap_err();
    assert!(
        stale.to_string().contains("element_token is stale"),
        "{stale}"
    );
    assert_eq!(stale.kind(), "stale_element_token");
    let fresh = Fixture::element(&newer, "Increment")["element_token"].clone();
    f.call("click", json!({ "element_token": fresh })).unwrap();
    assert!(f.journaled(|e| e["event"] == "clicked" && e["count"] == 2));
    let clicks = journal(&f.journal)
        .iter()
        .filter(|e| e["event"] == "clicked")
        .count();
    assert_eq!(clicks, 2, "the refused token pressed nothing");
}

#[test]
fn verify_state_waits_for_an_effect_and_says_when_it_does_not_come() {
    let f = Fixture::start("verify");
    let state = f.state();
    let token = Fixture::element(&state, "Increment")["element_token"].clone();
    f.call("click", json!({ "element_token": token })).unwrap();
    let verify = |label: &str, timeout: u64| {
        f.call(
            "verify_state",
            json!({ "pid": f.pid, "window_id": f.window_id, "timeout_ms": timeout, "expect": [
                { "element": { "selector": { "role": "label", "label_contains": label } } },
                { "element": { "selector": { "role": "push button", "label_contains": "increment" }, "enabled": true } },
                { "window": { "exists": true } },
            ] }),
        )
        .unwrap()
        .structured
    };
    let met = verify("Count: 1", 3000);
    assert_eq!(met["satisfied"], true, "{met}");
    assert_eq!(
        (&met["status"], &met["stable"]),
        (&json!("satisfied"), &json!(true))
    );
    assert!(met["samples"].as_u64().unwrap() >= 2, "{met}");
    assert!(f.journaled(|e| e["event"] == "clicked" && e["count"] == 1));
    let unmet = verify("Count: 5", 300);
    assert_eq!(unmet["satisfied"], false, "{unmet}");
    assert_eq!(unmet["status"], "unsatisfied", "{unmet}");
    assert_eq!(unmet["predicates"][0]["status"], "unsatisfied");
    assert_eq!(unmet["predicates"][2]["status"], "satisfied");
    let refused = f
        .call(
            "verify_state",
            json!({ "pid": f.pid, "window_id": f.window_id, "expect": [] }),
        )
        .unwrap_err();
    assert!(refused.to_string().contains("`expect`"), "{refused}");
}

#[test]
fn invoke_menu_runs_an_item_by_its_path_and_names_a_missing_one() {
    let f = Fixture::start("menu");
    let ran = f
        .call(
            "invoke_menu",
            json!({ "pid": f.pid, "window_id": f.window_id, "path": ["File", "Say hello"] }),
        )
        .unwrap();
    assert_eq!(ran.structured["path"], json!(["File", "Say hello"]));
    assert!(f.journaled(|e| e["event"] == "activated" && e["widget"] == "Say hello"));
    let missing = f
        .call(
            "invoke_menu",
            json!({ "pid": f.pid, "window_id": f.window_id, "path": ["File", "Say goodbye"] }),
        )
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("\"Say goodbye\"") && missing.contains("\"Say hello\""),
        "{missing}"
    );
    let hellos = journal(&f.journal)
        .iter()
        .filter(|e| e["widget"] == "Say hello")
        .count();
    assert_eq!(hellos, 1);
}

#[test]
fn sessions_are_tools_and_an_ended_one_stays_ended_until_revived() {
    let f = Fixture::start("sessions");
    let sessions = Sessions::new(Arc::new(ToolContext::for_session(
        f.sandbox().desktop(),
        "connection",
    )));
    let call = |tool: &str, args: Value| {
        let ctx = sessions.for_call(tool, &args)?;
        f.block_on(f.registry().call(&ctx, tool, args))
    };
    let started = call("start_session", json!({ "session": "run-1" })).unwrap();
    assert_eq!(started.structured["active"], true);
    assert_eq!(started.structured["revived"], false);
    // The session keeps its own snapshots: a token read in it works in it only.
    let state = call(
        "get_window_state",
        json!({ "session": "run-1", "pid": f.pid, "window_id": f.window_id, "include_screenshot": false }),
    )
    .unwrap();
    let token = Fixture::element(&state.structured, "Reset")["element_token"].clone();
    assert!(call("click", json!({ "element_token": token })).is_err());
    call(
        "click",
        json!({ "session": "run-1", "element_token": token }),
    )
    .unwrap();
    assert!(f.journaled(|e| e["event"] == "clicked" && e["widget"] == "Reset"));
    let got = call("get_session", json!({ "session": "run-1" })).unwrap();
    assert_eq!(got.structured["snapshots"], 1);
    let listed = call("list_sessions", json!({})).unwrap();
    let names: Vec<&Value> = listed.structured["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["session"])
        .collect();
    assert_eq!(names, [&json!("connection"), &json!("run-1")]);
    call("end_session", json!({ "session": "run-1" })).unwrap();
    let refused = call("get_session", json!({ "session": "run-1" })).unwrap_err();
    assert!(
        refused.to_string().contains("start_session revives it"),
        "{refused}"
    );
    let revived = call("start_session", json!({ "session": "run-1" })).unwrap();
    assert_eq!(revived.structured["revived"], true);
    assert_eq!(
        call("get_session", json!({ "session": "run-1" }))
            .unwrap()
            .structured["snapshots"],
        0,
        "a revived session starts empty"
    );

    // A session confined to windows (cua-driver's capture_scope) refuses screen-level
    // calls, by code, and presses nothing; its scope is fixed until the session ends.
    let confined = json!({ "session": "windows-only", "capture_scope": "window" });
    call("start_session", confined).unwrap();
    let clicks_before = journal(&f.journal)
        .iter()
        .filter(|e| e["event"] == "clicked")
        .count();
    let err = call("get_desktop_state", json!({ "session": "windows-only" })).unwrap_err();
    assert_eq!(err.refusal_code(), Some("desktop_scope_disabled"), "{err}");
    let windows = call("list_windows", json!({ "pid": f.pid }))
        .unwrap()
        .structured;
    let w = &windows["windows"][0];
    let (x, y) = (w["x"].as_i64().unwrap() + 40, w["y"].as_i64().unwrap() + 40);
    let err = call(
        "click",
        json!({ "session": "windows-only", "scope": "desktop", "x": x, "y": y }),
    )
    .unwrap_err();
    assert_eq!(err.refusal_code(), Some("desktop_scope_disabled"), "{err}");
    let conflict = call(
        "start_session",
        json!({ "session": "windows-only", "capture_scope": "desktop" }),
    )
    .unwrap_err();
    assert_eq!(conflict.refusal_code(), Some("session_policy_conflict"));
    // auto: window reads until escalate_session unlocks the desktop, for good.
    call(
        "start_session",
        json!({ "session": "auto", "capture_scope": "auto" }),
    )
    .unwrap();
    let gws = json!({ "session": "auto", "pid": f.pid, "window_id": f.window_id, "include_screenshot": false });
    call("get_window_state", gws.clone()).unwrap();
    let err = call("get_screen_size", json!({ "session": "auto" })).unwrap_err();
    assert_eq!(err.refusal_code(), Some("desktop_escalation_required"));
    let escalated = call(
        "escalate_session",
        json!({ "session": "auto", "reason": "no_window_target" }),
    )
    .unwrap();
    assert_eq!(escalated.structured["effective_scope"], "desktop");
    call("get_screen_size", json!({ "session": "auto" })).unwrap();
    let err = call("get_window_state", gws).unwrap_err();
    assert_eq!(err.refusal_code(), Some("window_scope_disabled"));
    let clicks_after = journal(&f.journal)
        .iter()
        .filter(|e| e["event"] == "clicked")
        .count();
    assert_eq!(
        clicks_before, clicks_after,
        "a refused call pressed nothing"
    );
    // A session that set no scope is not confined.
    call("get_desktop_state", json!({ "session": "run-1" })).unwrap();
}

#[test]
fn set_window_frame_moves_a_window_and_get_desktop_state_shows_the_screen() {
    let f = Fixture::start("frame");
    let moved = f
        .call(
            "set_window_frame",
            // cua-driver's schema has numbers here; a fraction is rounded.
            json!({ "pid": f.pid, "window_id": f.window_id, "x": 200.2, "y": 150, "width": 499.6, "height": 600.0 }),
        )
        .unwrap();
    // Read back from the X server through list_windows, not from the tool's reply.
    let windows = f.call("list_windows", json!({ "pid": f.pid })).unwrap();
    let bounds = &windows.structured["windows"][0]["bounds"];
    assert_eq!(
        (
            bounds["x"].as_i64(),
            bounds["y"].as_i64(),
            bounds["width"].as_i64(),
            bounds["height"].as_i64()
        ),
        (Some(200), Some(150), Some(500), Some(600)),
        "reply {}, window {bounds}",
        moved.structured
    );
    // The pointer too goes where a fractional point rounds to (read back from the server).
    f.call("move_cursor", json!({ "x": 300.4, "y": 240.6 }))
        .unwrap();
    let at = f.call("get_cursor_position", json!({})).unwrap().structured;
    assert_eq!((&at["x"], &at["y"]), (&json!(300), &json!(241)), "{at}");
    let desk = f.call("get_desktop_state", json!({})).unwrap();
    assert_eq!(desk.structured["screenshot_width"], 1280);
    assert_eq!(desk.structured["screenshot_height"], 800);
    let png = desk.image.expect("the screen's PNG").data;
    let screen = image::load_from_memory(&png).unwrap().to_rgb8();
    assert_eq!(screen.dimensions(), (1280, 800));
    // The window shows where it was put: its pixels are not the empty desktop's.
    let window = f
        .call("screenshot", json!({ "window_id": f.window_id }))
        .unwrap()
        .image
        .unwrap()
        .data;
    let window = image::load_from_memory(&window).unwrap().to_rgb8();
    let same = (0..50)
        .flat_map(|dy| (0..50).map(move |dx| (dx * 7, dy * 7)))
        .filter(|&(x, y)| screen.get_pixel(200 + x, 150 + y) == window.get_pixel(x, y))
        .count();
    assert!(
        same > 2000,
        "{same} of 2500 sampled pixels match the window's"
    );
}

#[test]
fn health_report_and_call_speak_cua_drivers_json() {
    let f = Fixture::start("health");
    let report = f.call("health_report", json!({})).unwrap().structured;
    assert_eq!(report["overall"], "ok", "{report}");
    assert_eq!(report["checks"].as_array().unwrap().len(), 5);
    let only = f
        .call("health_report", json!({ "include": ["ax_capability"] }))
        .unwrap()
        .structured;
    let skipped = only["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "skip")
        .count();
    assert_eq!(skipped, 4);
    // `cua call` to a pipe prints JSON: results, and failures with isError.
    let call = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cua"))
            .arg("call")
            .args(args)
            .envs(f.sandbox().env())
            .output()
            .unwrap()
    };
    let size = call(&["get_screen_size", "{}"]);
    let size: Value = serde_json::from_slice(&size.stdout).unwrap();
    assert_eq!(size["width"], 1280);
    let bad = call(&["get_window_state", r#"{"pid": 1, "window_id": 5}"#]);
    assert_eq!(bad.status.code(), Some(1));
    let bad: Value = serde_json::from_slice(&bad.stdout).unwrap();
    assert_eq!(bad["isError"], true);
    assert!(bad["message"].as_str().unwrap().contains("window 5"));
    let shot = call(&[
        "get_window_state",
        &json!({ "pid": f.pid, "window_id": f.window_id }).to_string(),
    ]);
    let shot: Value = serde_json::from_slice(&shot.stdout).unwrap();
    assert!(
        shot["screenshot_png_b64"]
            .as_str()
            .is_some_and(|b| b.len() > 1000)
    );
    assert_eq!(shot["screenshot_mime_type"], "image/png");
}

/// A daemon in standard permission mode refuses what cua-driver's standard profile does,
/// and `cua stop` ends it (its socket goes).
#[test]
fn a_standard_mode_daemon_refuses_kill_app_and_stops_on_request() {
    let f = Fixture::start("daemon");
    let socket = std::env::temp_dir().join(format!("cua-driver-tools-{}.sock", std::process::id()));
    let s = socket.to_str().unwrap().to_string();
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_cua"))
        .args([
            "serve",
            "--embedded",
            "--socket",
            &s,
            "--permission-mode",
            "standard",
        ])
        .envs(f.sandbox().env())
        .spawn()
        .unwrap();
    let cua = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cua"))
            .args(args)
            .envs(f.sandbox().env())
            .output()
            .unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while cua(&["status", "--socket", &s]).status.code() != Some(0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon never answered"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = f.pid.to_string();
    let kill = cua(&[
        "call",
        "kill_app",
        &format!("{{\"pid\": {pid}}}"),
        "--socket",
        &s,
    ]);
    assert_eq!(kill.status.code(), Some(1));
    let said: Value = serde_json::from_slice(&kill.stdout).unwrap();
    assert_eq!(said["error"], "refused", "{said}");
    assert!(
        std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the app still runs"
    );
    assert_eq!(cua(&["stop", "--socket", &s]).status.code(), Some(0));
    assert!(daemon.wait().unwrap().success());
    assert!(!socket.exists());
}

/// hotkey addressed to an element (by its token): the field is focused first, then the
/// combo lands (the fixture journals the focus and the keys).
#[test]
fn hotkey_by_element_token_focuses_the_field_first() {
    let f = Fixture::start("hotkey");
    let state = f.state();
    let token = Fixture::element(&state, "Name")["element_token"].clone();
    f.call(
        "hotkey",
        json!({ "keys": ["ctrl", "a"], "element_token": token }),
    )
    .unwrap();
    assert!(f.journaled(|e| e["event"] == "focused" && e["widget"] == "Name"));
    assert!(f.journaled(|e| e["event"] == "key-press" && e["key"] == "a"));
}

/// GTK 3 clears `showing` on what a view scrolled out of sight: those rows are listed,
/// marked offscreen and without a frame (as cua-driver lists them), and gain a frame once
/// scrolled into view (read from the app's own tree).
#[test]
fn rows_scrolled_out_of_view_are_listed_offscreen_until_scrolled_in() {
    let f = Fixture::start("offscreen");
    let state = f.state();
    let offscreen = |e: &Value| {
        e["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "offscreen")
    };
    let first = Fixture::element(&state, "Item 1");
    assert!(!offscreen(&first) && first["frame"].is_object(), "{first}");
    let far = Fixture::element(&state, "Item 12");
    assert!(offscreen(&far) && far["frame"].is_null(), "{far}");
    assert!(
        !far.as_object().unwrap().contains_key("pixel_frame"),
        "{far}"
    );
    let markdown = state["tree_markdown"].as_str().unwrap();
    assert!(
        markdown.contains("list_item \"Item 12\" (offscreen)"),
        "{markdown}"
    );
    // A hidden part of the window stays out: nothing of a closed menu is listed.
    assert!(
        state["elements"].as_array().unwrap().len() < 80,
        "{markdown}"
    );

    let list = Fixture::element(&state, "Item 1")["element_index"].clone();
    f.call(
        "scroll",
        json!({ "pid": f.pid, "window_id": f.window_id, "element_index": list, "direction": "down", "amount": 10 }),
    )
    .unwrap();
    assert!(f.journaled(|e| e["event"] == "scrolled" && e["widget"] == "Items"));
    // The view moved: the first row went out of sight and rows below it came in, framed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
    loop {
        let now = f.state();
        let rows: Vec<Value> = (1..=50)
            .map(|i| Fixture::element(&now, &format!("Item {i}")))
            .collect();
        let shown: Vec<&Value> = rows.iter().filter(|r| !offscreen(r)).collect();
        if offscreen(&rows[0]) && !shown.is_empty() && shown.iter().all(|r| r["frame"].is_object())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the rows on screen never changed: {}",
            now["tree_markdown"]
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Keys in a desktop scope, with no point: they go to the frontmost window through the
/// real keyboard, and the answer says it was desktop-scoped (the fixture journals the key).
#[test]
fn desktop_scoped_keys_go_to_the_frontmost_window() {
    let f = Fixture::start("desktop-keys");
    f.call(
        "bring_to_front",
        json!({ "pid": f.pid, "window_id": f.window_id }),
    )
    .unwrap();
    let out = f
        .call("press_key", json!({ "scope": "desktop", "key": "f5" }))
        .unwrap();
    assert!(
        out.summary.starts_with("desktop scope: "),
        "{}",
        out.summary
    );
    assert_eq!(
        out.structured["window_id"], f.window_id,
        "{}",
        out.structured
    );
    assert!(f.journaled(|e| e["event"] == "key-press" && e["key"] == "F5"));
}

/// cua-driver's policy file (CUA_DRIVER_POLICY_FILE), given to a daemon: an MCP client in
/// front of it does not see the denied tool, and calling it anyway is refused in
/// cua-driver's words; the allowed tool runs.
#[test]
fn a_policy_file_hides_and_refuses_denied_tools_through_the_daemon() {
    let f = Fixture::start("policy-file");
    let dir = std::env::temp_dir().join(format!("cua-policy-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "allow:\n  tools: [get_config, list_windows]\n  rules:\n    - tool: screenshot\n      constraints:\n        window_id: {\"const\": 1}\ndeny:\n  tools: [list_apps]\n",
    )
    .unwrap();
    let socket = dir.join("cua.sock");
    let mut envs = f.sandbox().env();
    envs.push((
        "CUA_DRIVER_POLICY_FILE".into(),
        policy.display().to_string(),
    ));
    let daemon = common::Daemon::start(&socket, &envs);
    let mut client = mcp_client::McpClient::start(&f.sandbox().env(), &daemon.socket_args());
    let listed = client.request("tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"get_config") && names.contains(&"screenshot"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"list_apps") && !names.contains(&"click"),
        "{names:?}"
    );
    let refused = client.call("list_apps", json!({}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Permission denied"),
        "{refused}"
    );
    assert_eq!(
        refused["structuredContent"]["refusal"]["code"],
        "permission_denied"
    );
    let rule_unmet = client.call("screenshot", json!({ "window_id": f.window_id }));
    assert_eq!(rule_unmet["isError"], true, "{rule_unmet}");
    let windows = client.call("list_windows", json!({ "pid": f.pid }));
    assert_eq!(
        windows["structuredContent"]["windows"][0]["window_id"],
        f.window_id
    );
    client.finish();
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A gesture over three calls: mouse_button_down on the Level slider's handle, mouse_drag
/// to its middle, mouse_button_up. In the background (the default) GTK 3 ignores
/// synthetic drags unless the pointer is over it, and the answer says so rather than
/// claiming the move. Once the session's desktop is unlocked (capture_scope desktop) the
/// gesture is the real pointer's: the slider follows (the fixture journals its value) and
/// the person's pointer is back where it was once released.
#[test]
fn a_button_held_over_several_calls_drags_a_slider() {
    let f = Fixture::start("held");
    let level = Fixture::element(&f.state(), "Level");
    let frame = &level["pixel_frame"];
    let (x, y, w, h) = (
        frame["x"].as_f64().unwrap(),
        frame["y"].as_f64().unwrap(),
        frame["w"].as_f64().unwrap(),
        frame["h"].as_f64().unwrap(),
    );
    let (at, mid) = (json!({ "x": x + 6.0, "y": y + h / 2.0 }), x + w / 2.0);
    let target = json!({ "pid": f.pid, "window_id": f.window_id });
    let with = |base: &Value, extra: Value| {
        let mut v = base.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };

    f.call("mouse_button_down", with(&target, at.clone()))
        .unwrap();
    let moved = f
        .call(
            "mouse_drag",
            json!({ "x": mid, "y": y + h / 2.0, "settle_ms": 300 }),
        )
        .unwrap();
    f.call("mouse_button_up", json!({})).unwrap();
    let landed = f.journaled(|e| e["event"] == "value-changed" && e["widget"] == "Level");
    assert!(
        landed || moved.structured["effect"] != "confirmed",
        "a background move that did not land was claimed: {}",
        moved.structured
    );

    let refused = f.call(
        "mouse_button_down",
        with(
            &target,
            json!({ "x": 1, "y": 1, "delivery_mode": "foreground" }),
        ),
    );
    assert!(
        matches!(&refused, Err(e) if e.to_string().contains("delivery_mode")),
        "{refused:?}"
    );
    f.call("start_session", json!({ "capture_scope": "desktop" }))
        .unwrap();
    let before = f.call("get_cursor_position", json!({})).unwrap().structured;
    let pressed = f.call("mouse_button_down", with(&target, at)).unwrap();
    assert_eq!(pressed.structured["held_button"]["held"], true);
    let again = f
        .call(
            "mouse_button_down",
            with(&target, json!({ "x": 1, "y": 1 })),
        )
        .unwrap_err();
    assert!(again.to_string().contains("already held"), "{again}");
    f.call(
        "mouse_drag",
        json!({ "x": mid, "y": y + h / 2.0, "duration_ms": 200 }),
    )
    .unwrap();
    let released = f.call("mouse_button_up", json!({})).unwrap();
    assert_eq!(released.structured["held_button"]["held"], false);
    assert!(f.journaled(|e| e["event"] == "value-changed"
        && e["widget"] == "Level"
        && e["value"].as_f64().is_some_and(|v| v > 10.0)));
    let after = f.call("get_cursor_position", json!({})).unwrap().structured;
    assert_eq!(
        before, after,
        "the pointer is back where the person left it"
    );
    let none = f.call("mouse_button_up", json!({})).unwrap_err();
    assert!(
        none.to_string().contains("mouse_button_down first"),
        "{none}"
    );
}

/// The clipboard both ways, through the app: text cua writes is what the app pastes
/// (ctrl+v into its Name field, from its journal), text the app copies is what cua reads,
/// an image is offered as image/png; a one-shot `cua call` refuses to write (the content
/// would die with it), and a bad path is named.
#[test]
fn the_clipboard_carries_text_both_ways_through_the_app() {
    let f = Fixture::start("clipboard");
    let written = f
        .call("clipboard_write", json!({ "text": "pasted by cua" }))
        .unwrap();
    assert!(
        written.structured["types"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "UTF8_STRING"),
        "{}",
        written.structured
    );
    let name = Fixture::element(&f.state(), "Name")["element_token"].clone();
    f.call(
        "hotkey",
        json!({ "element_token": name, "keys": ["ctrl", "v"] }),
    )
    .unwrap();
    assert!(
        f.journaled(|e| e["event"] == "changed"
            && e["widget"] == "Name"
            && e["text"] == "pasted by cua"),
        "the app never pasted: {:?}",
        journal(&f.journal)
    );

    // The app copies: its Notes' text, selected and copied with its own shortcuts.
    let notes = Fixture::element(&f.state(), "Notes");
    f.call(
        "type_text",
        json!({ "element_token": notes["element_token"], "text": "copied by the app" }),
    )
    .unwrap();
    for keys in [["ctrl", "a"], ["ctrl", "c"]] {
        let token = Fixture::element(&f.state(), "Notes")["element_token"].clone();
        f.call("hotkey", json!({ "element_token": token, "keys": keys }))
            .unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
    loop {
        let read = f
            .call("clipboard_read", json!({ "include_text": true }))
            .unwrap()
            .structured;
        if read["text"] == "copied by the app" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{read}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let types_only = f.call("clipboard_read", json!({})).unwrap().structured;
    assert!(types_only["text"].is_null(), "{types_only}");

    let png = std::env::temp_dir().join(format!("cua-clip-{}.png", std::process::id()));
    image::RgbImage::from_pixel(4, 4, image::Rgb([200, 10, 10]))
        .save(&png)
        .unwrap();
    f.call("clipboard_write", json!({ "image_path": png }))
        .unwrap();
    let read = f.call("clipboard_read", json!({})).unwrap().structured;
    assert!(
        read["types"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "image/png"),
        "{read}"
    );
    let _ = std::fs::remove_file(&png);
    let err = f
        .call("clipboard_write", json!({ "file_path": "relative.txt" }))
        .unwrap_err();
    assert!(err.to_string().contains("`file_path`"), "{err}");

    let one_shot = Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["call", "clipboard_write", "{\"text\": \"x\"}"])
        .envs(f.sandbox().env())
        .output()
        .unwrap();
    assert_eq!(one_shot.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&one_shot.stdout).contains("cua serve"),
        "{}",
        String::from_utf8_lossy(&one_shot.stdout)
    );
}
