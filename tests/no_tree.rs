//! Apps without an accessibility tree (#43), on the order form's Tk twin
//! (harness/apps/order_tk.py): Tk has no accessibility bridge and sets no `_NET_WM_PID`.
//! Its pid comes from the X server (X-Resource), its text from OCR, and its journal says
//! what was pressed:
//! - observed: get_window_state lists its labels and buttons as `ocr_text` elements, with
//!   frames and confidence, and says they come from OCR;
//! - driven: a click by index on "Add", one by point on "Clear", typing into a field
//!   clicked by point;
//! - recorded and replayed on the same build; replayed on a build with the form 60 px
//!   lower, it finds the buttons where they went; on a build with Add and Clear swapped it
//!   presses Add, never Clear.

mod common;

use std::path::Path;

use common::order_form::{Form, Run};
use cua::replay::{ReplayOptions, ReplayReport};
use serde_json::{Value, json};

const TK: Form = Form {
    script: "order_tk.py",
    args: &[],
    gtk4: false,
};

/// Every widget the app's journal says was clicked, in order.
fn clicks(journal: &Path) -> Vec<String> {
    common::journal(journal)
        .iter()
        .filter(|e| e["event"] == "clicked")
        .map(|e| e["widget"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The last text the journal says `widget` held.
fn last_text(journal: &Path, widget: &str) -> Option<String> {
    common::journal(journal)
        .iter()
        .rev()
        .find(|e| e["event"] == "changed" && e["widget"] == widget)
        .and_then(|e| e["text"].as_str().map(String::from))
}

/// The centre of an element's pixel frame.
fn centre(e: &Value) -> (i64, i64) {
    let f = &e["pixel_frame"];
    (
        f["x"].as_i64().unwrap() + f["w"].as_i64().unwrap() / 2,
        f["y"].as_i64().unwrap() + f["h"].as_i64().unwrap() / 2,
    )
}

fn ocr_text(run: &Run, pid: &Value, window: &Value, name: &str) -> Value {
    run.element(pid, window, "ocr_text", name)
}

#[test]
fn a_tk_window_is_observed_by_ocr_and_driven_by_index_and_by_point() {
    let (sandbox, run, base) = Run::start("tk-observe", TK);
    let journal = base.join("journal.jsonl");
    let (pid, window) = run.launch("", &journal);
    assert!(pid.as_u64().is_some(), "launch_app found no pid: {pid}");

    let state = run.session.state(&pid, &window);
    assert_eq!(state["text_source"], "ocr", "{state:#}");
    let markdown = state["tree_markdown"].as_str().unwrap();
    assert!(
        markdown.starts_with("Text read off the pixels by OCR"),
        "{markdown}"
    );
    for name in ["Item", "Quantity", "Gift wrap", "Add", "Clear", "Total: 0"] {
        let e = ocr_text(&run, &pid, &window, name);
        let confidence = e["confidence"].as_f64().unwrap_or(0.0);
        assert!(confidence >= 45.0, "{name}: {e}");
        assert!(e["pixel_frame"]["w"].as_i64().unwrap() > 0, "{name}: {e}");
    }

    // By index: Add. By point: Clear.
    let add = ocr_text(&run, &pid, &window, "Add");
    run.call(
        "click",
        json!({ "pid": pid, "window_id": window, "element_index": add["element_index"] }),
    );
    let (x, y) = centre(&ocr_text(&run, &pid, &window, "Clear"));
    run.call(
        "click",
        json!({ "pid": pid, "window_id": window, "x": x, "y": y }),
    );
    assert_eq!(clicks(&journal), ["Add", "Clear"]);

    // Typing at a point: the field right of the "Item" label (an empty field shows no
    // text to read), clicked there, then keys; then more keys to the focus it took.
    let item = ocr_text(&run, &pid, &window, "Item");
    let f = &item["pixel_frame"];
    let field = (f["x"].as_i64().unwrap() + 150, centre(&item).1);
    run.call(
        "type_text",
        json!({ "pid": pid, "window_id": window, "x": field.0, "y": field.1, "text": "pe" }),
    );
    run.call(
        "type_text",
        json!({ "pid": pid, "window_id": window, "text": "ar" }),
    );
    assert_eq!(last_text(&journal, "Item").as_deref(), Some("pear"));
    run.quit(&pid);
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
}

/// Records typing an item, clicking Add by index and Clear by point, then Add by point.
fn record(run: &Run, dir: &Path, journal: &Path) {
    let (pid, window) = run.launch("", journal);
    run.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    );
    let add = ocr_text(run, &pid, &window, "Add");
    run.call(
        "click",
        json!({ "pid": pid, "window_id": window, "element_index": add["element_index"] }),
    );
    let (x, y) = centre(&ocr_text(run, &pid, &window, "Clear"));
    run.call(
        "click",
        json!({ "pid": pid, "window_id": window, "x": x, "y": y }),
    );
    let (x, y) = centre(&ocr_text(run, &pid, &window, "Add"));
    run.call(
        "click",
        json!({ "pid": pid, "window_id": window, "x": x, "y": y }),
    );
    run.call("set_recording", json!({ "enabled": false }));
    run.quit(&pid);
    assert_eq!(
        clicks(journal),
        ["Add", "Clear", "Add"],
        "the recording itself"
    );
}

/// Replays the recording on `variant` (a fresh app); the report and the journal's clicks.
fn replay_on(
    run: &Run,
    recording: &Path,
    base: &Path,
    variant: &str,
) -> (ReplayReport, Vec<String>) {
    let journal = base.join(format!("{variant}.jsonl"));
    let (pid, _) = run.launch(variant, &journal);
    let report = run.replay(recording, &ReplayOptions::default());
    run.quit(&pid);
    (report, clicks(&journal))
}

#[test]
fn a_tk_recording_replays_heals_a_moved_form_and_never_presses_a_swapped_button() {
    let (sandbox, run, base) = Run::start("tk-replay", TK);
    let recording = base.join("recorded");
    record(&run, &recording, &base.join("recorded.jsonl"));
    let mut failures = Vec::new();
    for variant in ["", "moved_down", "reorder"] {
        let (report, pressed) = replay_on(&run, &recording, &base, variant);
        if report.failed > 0 || pressed != ["Add", "Clear", "Add"] {
            failures.push(format!(
                "{variant:?}: pressed {pressed:?}; {:#?}",
                report.turns
            ));
        }
        // On the moved builds the pixel turns say where their point went.
        let moved = report.turns[1..].iter().all(|t| t.point_moved.is_some());
        if !variant.is_empty() && !moved {
            failures.push(format!(
                "{variant:?}: a moved point is not reported: {:#?}",
                report.turns
            ));
        }
    }
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
