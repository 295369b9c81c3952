//! Foreground delivery activates the target and uses real input, then restores the
//! previously active window and the pointer. Runs in its own desktop: it changes the
//! foreground on purpose, which the shared fixture's focus observer would flag.

mod common;

use common::runtime;
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

#[test]
fn foreground_click_lands_and_restores_active_window_and_pointer_and_gtk4_background_escalates() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
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
    let f = &toggle["frame"];
    let (x, y) = (
        f["x"].as_i64().unwrap() + f["width"].as_i64().unwrap() / 2,
        f["y"].as_i64().unwrap() + f["height"].as_i64().unwrap() / 2,
    );
    let out = call(
        "click",
        json!({ "pid": wf_pid, "window_id": wf_win, "x": x, "y": y, "delivery_mode": "foreground", "settle_ms": 2000 }),
    );
    assert_eq!(out.structured["path"], "xtest_fg", "{}", out.summary);
    assert_eq!(out.structured["effect"], "confirmed", "{}", out.summary);
    let after = call(
        "get_window_state",
        json!({ "pid": wf_pid, "window_id": wf_win, "include_screenshot": false }),
    );
    let now_checked =
        after.structured["elements"][toggle["index"].as_u64().unwrap() as usize]["states"]
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
    assert_eq!(out.structured["path"], "x11_event");
    assert_eq!(
        out.structured["escalation"]["recommended"], "foreground",
        "{}",
        out.structured
    );
}
