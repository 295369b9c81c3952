//! Foreground delivery activates the target and uses real input, then restores the
//! previously active window and the pointer. Runs in its own desktop: it changes the
//! foreground on purpose, which the shared fixture's focus observer would flag.

mod common;

use common::{journal, runtime};
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

#[test]
fn foreground_click_lands_and_restores_active_window_and_pointer_and_gtk4_background_escalates() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let rt = runtime();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let registry = ToolRegistry::new();
    let call = |tool: &str, args: Value| {
        rt.block_on(registry.call(&ctx, tool, args.clone()))
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
    };

    let wf = call("launch_app", json!({ "name": "gtk3-widget-factory" })).structured;
    let calc = call("launch_app", json!({ "name": "Calculator" })).structured;
    let (wf_pid, wf_win) = (
        wf["pid"].as_u64().unwrap(),
        wf["windows"][0]["window_id"].as_u64().unwrap(),
    );
    let (calc_pid, calc_win) = (
        calc["pid"].as_u64().unwrap(),
        calc["windows"][0]["window_id"].as_u64().unwrap(),
    );
    call("move_cursor", json!({ "x": 5, "y": 790 }));
    let focus =
        || rt.block_on(async { ctx.platform().await.unwrap().focus_state().await.unwrap() });
    let before = focus();
    assert_eq!(
        before.active_window,
        Some(calc_win),
        "the calculator, launched last, is active"
    );

    let state = call(
        "get_window_state",
        json!({ "pid": wf_pid, "window_id": wf_win, "include_screenshot": false }),
    );
    let toggle = state.structured["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["role"] == "toggle_button"
                && e["name"] == "togglebutton"
                && e["states"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s == "sensitive")
        })
        .cloned()
        .unwrap();
    let was_checked = toggle["states"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "checked");
    let f = &toggle["pixel_frame"];
    let (x, y) = (
        f["x"].as_i64().unwrap() + f["w"].as_i64().unwrap() / 2,
        f["y"].as_i64().unwrap() + f["h"].as_i64().unwrap() / 2,
    );
    let out = call(
        "click",
        json!({ "pid": wf_pid, "window_id": wf_win, "x": x, "y": y, "delivery_mode": "foreground", "settle_ms": 2000 }),
    );
    assert_eq!(
        out.structured["path"], "foreground_event",
        "{}",
        out.summary
    );
    assert_eq!(out.structured["effect"], "confirmed", "{}", out.summary);
    let after = call(
        "get_window_state",
        json!({ "pid": wf_pid, "window_id": wf_win, "include_screenshot": false }),
    );
    let now_checked = after.structured["elements"]
        [toggle["element_index"].as_u64().unwrap() as usize]["states"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "checked");
    assert_ne!(
        was_checked, now_checked,
        "the real click toggled the button"
    );
    let restored = focus();
    assert_eq!(
        restored.active_window, before.active_window,
        "previous active window restored"
    );
    assert_eq!(restored.pointer, before.pointer, "pointer restored");

    // A background pixel click on a GTK4 surface that is no element cannot land: say so.
    let out = call(
        "click",
        json!({ "pid": calc_pid, "window_id": calc_win, "x": 150, "y": 100, "settle_ms": 300 }),
    );
    assert_eq!(out.structured["path"], "background_event");
    assert_eq!(
        out.structured["escalation"]["recommended"], "foreground",
        "{}",
        out.structured
    );
}

/// GTK 3 (with core device events, as `launch_app` starts it) takes synthetic pointer
/// events only while the real pointer is over its window. With the pointer parked in the
/// sandbox's corner, a background drag of the fixture's slider does nothing and says it
/// needs the foreground; with the pointer over the window, the same background drag moves
/// it, asks for nothing, and leaves the pointer where it was. Effects are read from the
/// fixture's journal.
#[test]
fn gtk3_background_drag_works_only_under_the_real_pointer_and_says_so() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let journal_path = sandbox.dir().join("journal.jsonl");
    let mut env = sandbox.desktop();
    env.app_env = vec![(
        "CUA_FIXTURE_JOURNAL".into(),
        journal_path.to_string_lossy().into_owned(),
    )];
    let rt = runtime();
    let ctx = ToolContext::for_desktop(env);
    let registry = ToolRegistry::new();
    let call = |tool: &str, args: Value| {
        rt.block_on(registry.call(&ctx, tool, args.clone()))
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
    };
    let levels = || -> Vec<f64> {
        journal(&journal_path)
            .iter()
            .filter(|e| e["event"] == "value-changed" && e["widget"] == "Level")
            .filter_map(|e| e["value"].as_f64())
            .collect()
    };

    let fixture = call(
        "launch_app",
        json!({ "path": format!("{}/harness/apps/fixture.py", env!("CARGO_MANIFEST_DIR")) }),
    );
    let app = common::App::launched(&fixture);
    let bounds = &fixture.structured["windows"][0]["bounds"];
    let state = call(
        "get_window_state",
        json!({ "pid": app.pid, "window_id": app.window_id, "include_screenshot": false }),
    );
    let slider = state.structured["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == "slider" && e["name"] == "Level")
        .cloned()
        .expect("the Level slider");
    let (x, y, w, h) = common::frame(&slider);
    // From the knob (at 0, the left end) to the middle of the track.
    let drag = json!({
        "pid": app.pid, "window_id": app.window_id,
        "from_x": x + 6, "from_y": y + h / 2, "to_x": x + w / 2, "to_y": y + h / 2,
    });

    let away = call("drag", drag.clone());
    assert_eq!(
        away.structured["escalation"]["recommended"], "foreground",
        "{}",
        away.structured
    );
    // The drag's events have all been handled once a later event is: the window's own
    // key press, journaled by the fixture.
    call("press_key", json!({ "pid": app.pid, "key": "x" }));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !journal(&journal_path)
        .iter()
        .any(|e| e["event"] == "key-press")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the key press never arrived"
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(
        levels().is_empty(),
        "the drag moved the slider: {:?}",
        levels()
    );

    // The pointer over the window (its counter label, no widget that reacts to it).
    let over = (
        bounds["x"].as_i64().unwrap() + w / 2,
        bounds["y"].as_i64().unwrap() + 10,
    );
    call("move_cursor", json!({ "x": over.0, "y": over.1 }));
    let under = call("drag", drag);
    assert!(
        under.structured["escalation"].is_null(),
        "{}",
        under.structured
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !levels().iter().any(|v| *v > 0.0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the background drag under the pointer did not move the slider"
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let pointer = rt.block_on(async {
        ctx.platform()
            .await
            .unwrap()
            .cursor_position()
            .await
            .unwrap()
    });
    assert_eq!(
        pointer,
        (over.0 as i32, over.1 as i32),
        "the pointer stayed put"
    );
}
