//! Routing, effect checks and escalation of the pointer tools on the in-memory desktop
//! (`platform::memory`): which route a click takes, what it reads back, and when it says
//! that the app ignored it. The apps are described by their quirks, as a backend reports
//! them (GTK 3 and GTK 4 here, as `platform/linux/quirks.rs` describes them). The same
//! behaviour on real apps is in tests/input.rs, tests/foreground.rs and tests/toolkits.rs.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::platform::AxNode;
use crate::platform::memory::{MemoryPlatform, PID, WINDOW};
use crate::platform::{AppQuirks, PointerCaveat, Rect};
use crate::tools::{ToolContext, ToolRegistry};

/// GTK 3: background pointer events only while the real pointer is over the window.
fn gtk3() -> AppQuirks {
    AppQuirks {
        toolkit: Some("gtk 3.24.38".into()),
        ignores_background_pointer: Some(PointerCaveat::UnlessPointerOver("ignores them")),
        ..AppQuirks::default()
    }
}

/// GTK 4: no background event at all.
fn gtk4() -> AppQuirks {
    AppQuirks {
        toolkit: Some("GTK 4.8.3".into()),
        ignores_background_keys: Some("ignores them"),
        ignores_background_pointer: Some(PointerCaveat::Always("ignores them")),
        hides_entry_text: true,
        ..AppQuirks::default()
    }
}

fn check_box(checked: bool) -> crate::platform::AxNode {
    let states: &[&str] = if checked {
        &["sensitive", "checked"]
    } else {
        &["sensitive"]
    };
    AxNode::test("check_box", "Enable feature")
        .with_states(states)
        .with_actions(&["click"])
        .with_frame(Rect::new(10, 10, 80, 20))
}

async fn call(ctx: &ToolContext, tool: &str, args: Value) -> Value {
    ToolRegistry::new()
        .call(ctx, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
        .structured
}

async fn click_index_0(mem: &Arc<MemoryPlatform>) -> Value {
    let ctx = ToolContext::with_platform(mem.clone());
    call(
        &ctx,
        "get_window_state",
        json!({ "pid": PID, "window_id": WINDOW }),
    )
    .await;
    call(
        &ctx,
        "click",
        json!({ "pid": PID, "window_id": WINDOW, "element_index": 0 }),
    )
    .await
}

#[tokio::test]
async fn a_toggle_clicked_by_index_runs_its_action_and_reads_the_flip_back() {
    let mem = Arc::new(MemoryPlatform::new(gtk3(), vec![check_box(false)]));
    let out = click_index_0(&mem).await;
    assert_eq!(out["path"], "element_action", "{out}");
    assert_eq!(out["effect"], "confirmed", "{out}");
    assert_eq!(mem.journal(), ["do_action /1 click"]);
    assert!(
        mem.nodes.lock().unwrap()[1]
            .states
            .contains(&"checked".to_string())
    );
}

#[tokio::test]
async fn a_toggle_whose_action_changes_nothing_is_not_reported_as_done() {
    let mut mem = MemoryPlatform::new(gtk3(), vec![check_box(false)]);
    mem.actions_work = false;
    let mem = Arc::new(mem);
    let out = click_index_0(&mem).await;
    assert_eq!(out["path"], "element_action", "{out}");
    assert_ne!(out["effect"], "confirmed", "{out}");
}

#[tokio::test]
async fn a_modified_pixel_click_on_gtk4_is_sent_and_escalates_to_foreground() {
    let mem = Arc::new(MemoryPlatform::new(gtk4(), vec![check_box(false)]));
    let ctx = ToolContext::with_platform(mem.clone());
    let out = call(
        &ctx,
        "click",
        json!({ "pid": PID, "window_id": WINDOW, "x": 50, "y": 20, "modifier": ["shift"] }),
    )
    .await;
    assert_eq!(out["path"], "background_event", "{out}");
    assert_eq!(out["escalation"]["recommended"], "foreground", "{out}");
    let journal = mem.journal();
    assert_eq!(journal.len(), 1, "{journal:?}");
    assert!(journal[0].starts_with("input Background"), "{journal:?}");
}

#[tokio::test]
async fn a_gtk3_pixel_click_off_any_element_escalates_only_without_the_real_pointer() {
    for (pointer_over, escalates) in [(false, true), (true, false)] {
        let mut mem = MemoryPlatform::new(gtk3(), Vec::new());
        mem.pointer_over = pointer_over;
        let mem = Arc::new(mem);
        let ctx = ToolContext::with_platform(mem.clone());
        let out = call(
            &ctx,
            "click",
            json!({ "pid": PID, "window_id": WINDOW, "x": 150, "y": 80 }),
        )
        .await;
        assert_eq!(out["path"], "background_event", "{out}");
        assert_eq!(
            out["escalation"]["recommended"] == "foreground",
            escalates,
            "pointer over: {pointer_over}: {out}"
        );
    }
}
