//! Apps without an accessibility tree (#43), on the order form's Tk twin
//! (harness/apps/order_tk.py): Tk has no accessibility bridge and sets no `_NET_WM_PID`.
//! Its pid comes from the X server (X-Resource), its text from OCR, and its journal says
//! what was pressed:
//! - observed: get_window_state lists its labels and buttons as `ocr_text` elements, with
//!   frames and confidence, and says they come from OCR;
//! - driven: a click by index on "Add", one by point on "Clear", typing into a field
//!   clicked by point;
//! - recorded and replayed on the same build; replayed on a build with the form 60 px
//!   lower, it finds the buttons where they went (by their text), and the check box,
//!   which has none, by the picture around its point; on a build with Add and Clear
//!   swapped it presses Add, never Clear; on a build drawn 1.5× larger the check box's
//!   picture shows nowhere, and the turn fails saying so, without a press; on a build whose
//!   check box ignores clicks, the turn fails: its pixels changed when recorded, not now.

mod common;

use std::path::Path;

use common::order_form::{Form, Run, clicks};
use cua::replay::{ReplayOptions, ReplayReport};
use serde_json::{Value, json};

const TK: Form = Form {
    script: "order_tk.py",
    args: &[],
    gtk4: false,
};

/// The last text the journal says `widget` held.
fn last_text(journal: &Path, widget: &str) -> Option<String> {
    common::journal(journal)
        .iter()
        .rev()
        .find(|e| e["event"] == "changed" && e["widget"] == widget)
        .and_then(|e| e["text"].as_str().map(String::from))
}

/// Clicks in the window where `at` says: `{"element_index": …}` or `{"x": …, "y": …}`.
fn click_at(session: &common::Session, pid: &Value, window: &Value, at: Value) {
    let mut args = json!({ "pid": pid, "window_id": window });
    for (k, v) in at.as_object().expect("an object") {
        args[k] = v.clone();
    }
    session.ok("click", args);
}

/// What `read` gives once it gives `want`, or after 5 s what it gives then.
fn settled<T, W>(read: impl Fn() -> T, want: W) -> T
where
    T: PartialEq<W>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let now = read();
        if now == want || std::time::Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
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
    // Tk has no accessibility bridge: OCR says what it stands in for.
    assert_eq!(state["tree_source"], "ocr (no bridge)", "{state:#}");
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
    click_at(
        &run.session,
        &pid,
        &window,
        json!({ "element_index": add["element_index"] }),
    );
    let (x, y) = centre(&ocr_text(&run, &pid, &window, "Clear"));
    click_at(&run.session, &pid, &window, json!({ "x": x, "y": y }));
    // A click without a read-back returns before the app handled it: the journal is
    // waited for (bounded).
    assert_eq!(
        settled(|| clicks(&journal), vec!["Add", "Clear"]),
        ["Add", "Clear"]
    );

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
    let typed = settled(|| last_text(&journal, "Item"), Some("pear".to_string()));
    assert_eq!(typed.as_deref(), Some("pear"));
    run.quit(&pid);
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
}

/// Every value the journal says the Gift wrap check box took.
fn toggles(journal: &Path) -> Vec<bool> {
    common::journal(journal)
        .iter()
        .filter(|e| e["event"] == "toggled")
        .filter_map(|e| e["active"].as_bool())
        .collect()
}

/// Records clicking Add by index, Clear by point, the Gift wrap box by point (left of its
/// label: no text there), then Add by point.
fn record(run: &Run, dir: &Path, journal: &Path) {
    let (pid, window) = run.launch("", journal);
    run.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    );
    let add = ocr_text(run, &pid, &window, "Add");
    click_at(
        &run.session,
        &pid,
        &window,
        json!({ "element_index": add["element_index"] }),
    );
    let (x, y) = centre(&ocr_text(run, &pid, &window, "Clear"));
    click_at(&run.session, &pid, &window, json!({ "x": x, "y": y }));
    let gift = ocr_text(run, &pid, &window, "Gift wrap");
    let (x, y) = (
        gift["pixel_frame"]["x"].as_i64().unwrap() - 12,
        centre(&gift).1,
    );
    click_at(&run.session, &pid, &window, json!({ "x": x, "y": y }));
    let (x, y) = centre(&ocr_text(run, &pid, &window, "Add"));
    click_at(&run.session, &pid, &window, json!({ "x": x, "y": y }));
    run.call("set_recording", json!({ "enabled": false }));
    run.quit(&pid);
    assert_eq!(
        clicks(journal),
        ["Add", "Clear", "Add"],
        "the recording itself"
    );
    assert_eq!(toggles(journal), [true], "the recording itself");
}

/// Replays the recording on `variant` (a fresh app); the report, the journal's clicks and
/// its check box's values.
fn replay_on(
    run: &Run,
    recording: &Path,
    base: &Path,
    variant: &str,
) -> (ReplayReport, Vec<String>, Vec<bool>) {
    let journal = base.join(format!("{variant}.jsonl"));
    let (pid, _) = run.launch(variant, &journal);
    let report = run.replay(recording, &ReplayOptions::default());
    run.quit(&pid);
    (report, clicks(&journal), toggles(&journal))
}

#[test]
fn a_tk_recording_replays_heals_a_moved_form_and_never_presses_a_swapped_button() {
    let (sandbox, run, base) = Run::start("tk-replay", TK);
    let recording = base.join("recorded");
    record(&run, &recording, &base.join("recorded.jsonl"));
    let mut failures = Vec::new();
    for variant in ["", "moved_down", "reorder"] {
        let (report, pressed, ticked) = replay_on(&run, &recording, &base, variant);
        if report.failed > 0 || pressed != ["Add", "Clear", "Add"] || ticked != [true] {
            failures.push(format!(
                "{variant:?}: pressed {pressed:?}, ticked {ticked:?}; {:#?}",
                report.turns
            ));
            continue;
        }
        // On the moved builds the pixel turns say where their point went; the check
        // box's, which no text anchors, by image.
        let moved: Vec<String> = report.turns[1..]
            .iter()
            .map(|t| t.point_moved.clone().unwrap_or_default())
            .collect();
        if !variant.is_empty()
            && (moved.iter().any(String::is_empty) || !moved[1].ends_with("by image"))
        {
            failures.push(format!("{variant:?}: the moved points: {moved:?}"));
        }
    }
    // A check box that looks the same and ignores the click: its text never changed, its
    // pixels did in the recording and do not now; the turn fails saying so.
    let (report, _, ticked) = replay_on(&run, &recording, &base, "inert_gift");
    let said = report
        .turns
        .iter()
        .find(|t| t.turn == 3)
        .map(|t| t.result_summary.clone());
    let said = said.unwrap_or_default();
    if !ticked.is_empty() || !said.contains("the live window did not change") {
        failures.push(format!(
            "inert_gift: ticked {ticked:?}; turn 3 said {said:?}"
        ));
    }
    // Drawn 1.5x larger: the check box's picture is nowhere; its turn fails, unpressed.
    let (report, _, ticked) = replay_on(&run, &recording, &base, "large");
    let turn = report.turns.iter().find(|t| t.turn == 3);
    let said = turn.map(|t| t.result_summary.clone()).unwrap_or_default();
    if !ticked.is_empty()
        || turn.is_none_or(|t| t.ok)
        || !said.contains("shows nowhere in the live window")
    {
        failures.push(format!("large: ticked {ticked:?}; turn 3 said {said:?}"));
    }
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The SDL fixture (harness/apps/fixture_sdl.py, pygame): a window drawn pixel by pixel.
/// Observed by OCR, driven by index, by point and by keys, recorded, and replayed on its
/// build with the buttons 60 px lower; the journal says what it received.
#[test]
fn an_sdl_window_is_observed_by_ocr_driven_recorded_and_replayed_on_a_moved_build() {
    let base = std::env::temp_dir().join(format!("cua-sdl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let journal = base.join("journal.jsonl");
    let start = |variant: &str, journal: &Path| {
        let session = common::Session::on(cua::sandbox::SandboxOptions {
            width: 1024,
            height: 768,
            ..Default::default()
        })
        .with_app_env(&[
            ("CUA_FIXTURE_JOURNAL", journal.display().to_string()),
            ("CUA_FIXTURE_VARIANT", variant.to_string()),
        ]);
        let path = format!("{}/harness/apps/fixture_sdl.py", env!("CARGO_MANIFEST_DIR"));
        let out = session.ok(
            "launch_app",
            json!({ "path": path, "creates_new_application_instance": true }),
        );
        let (pid, window) = (out["pid"].clone(), out["windows"][0]["window_id"].clone());
        (session, pid, window)
    };
    let text = |s: &common::Session, pid: &Value, window: &Value, name: &str| {
        s.element(pid, window, |e| {
            e["role"] == "ocr_text" && e["name"] == name
        })
    };

    let (session, pid, window) = start("", &journal);
    let recording = base.join("recorded");
    session.ok(
        "set_recording",
        json!({ "enabled": true, "output_dir": recording }),
    );
    let increment = text(&session, &pid, &window, "Increment");
    assert!(
        increment["confidence"].as_f64().unwrap() >= 45.0,
        "{increment}"
    );
    click_at(
        &session,
        &pid,
        &window,
        json!({ "element_index": increment["element_index"] }),
    );
    let (x, y) = centre(&text(&session, &pid, &window, "Reset"));
    click_at(&session, &pid, &window, json!({ "x": x, "y": y }));
    let (x, y) = centre(&text(&session, &pid, &window, "Increment"));
    click_at(&session, &pid, &window, json!({ "x": x, "y": y }));
    session.ok(
        "type_text",
        json!({ "pid": pid, "window_id": window, "text": "ok" }),
    );
    session.ok("set_recording", json!({ "enabled": false }));
    // What the window shows now, read by OCR: the app's own count and keys.
    text(&session, &pid, &window, "Count: 1");
    text(&session, &pid, &window, "Typed: ok");
    drop(session);
    assert_eq!(clicks(&journal), ["Increment", "Reset", "Increment"]);
    let keys: Vec<Value> = common::journal(&journal)
        .into_iter()
        .filter(|e| e["event"] == "key-press")
        .collect();
    assert_eq!(keys.last().map(|e| e["text"].clone()), Some(json!("ok")));

    for variant in ["", "moved"] {
        let journal = base.join(format!("replay-{variant}.jsonl"));
        let (session, _, _) = start(variant, &journal);
        let report = session.replay(&recording, &ReplayOptions::default());
        let pressed = clicks(&journal);
        assert!(
            report.failed == 0 && pressed == ["Increment", "Reset", "Increment"],
            "{variant:?}: pressed {pressed:?}; {:#?}",
            report.turns
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// #55 item 5: a click by point into an empty entry, whose picture up close (plain white)
/// shows in several places (both entries), replays on the unchanged build: the picture
/// still shows at the recorded point, so it is pressed there; the typing after it lands in
/// that entry (the journal says so).
#[test]
fn a_tk_click_into_an_empty_entry_replays_on_the_unchanged_build() {
    let (sandbox, run, base) = Run::start("tk-empty-entry", TK);
    let recording = base.join("recorded");
    let journal = base.join("recorded.jsonl");
    let (pid, window) = run.launch("", &journal);
    run.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": recording }),
    );
    let quantity = ocr_text(&run, &pid, &window, "Quantity");
    let f = &quantity["pixel_frame"];
    let field = (f["x"].as_i64().unwrap() + 150, centre(&quantity).1);
    click_at(
        &run.session,
        &pid,
        &window,
        json!({ "x": field.0, "y": field.1 }),
    );
    run.call(
        "type_text",
        json!({ "pid": pid, "window_id": window, "text": "3" }),
    );
    let typed = settled(|| last_text(&journal, "Quantity"), Some("3".to_string()));
    assert_eq!(typed.as_deref(), Some("3"), "the recording itself");
    run.call("set_recording", json!({ "enabled": false }));
    run.quit(&pid);

    let replayed = base.join("replayed.jsonl");
    let (pid, _) = run.launch("", &replayed);
    let report = run.replay(&recording, &ReplayOptions::default());
    let typed = settled(|| last_text(&replayed, "Quantity"), Some("3".to_string()));
    let item = last_text(&replayed, "Item");
    run.quit(&pid);
    // A build whose Quantity refuses input: the replay fails, it does not pass.
    let refused = base.join("refused.jsonl");
    let (pid, _) = run.launch("refuse_qty", &refused);
    let refusing = run.replay(&recording, &ReplayOptions::default());
    run.quit(&pid);
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
    assert_eq!(report.failed, 0, "{:#?}", report.turns);
    assert_eq!(typed.as_deref(), Some("3"), "{:#?}", report.turns);
    assert_eq!(item, None, "typed into the other entry");
    assert!(refusing.failed > 0, "{:#?}", refusing.turns);
}

const GRID: Form = Form {
    script: "grid_tk.py",
    args: &[],
    gtk4: false,
};

/// The text each cell of the week planner's journal says it holds now.
fn cells(journal: &Path) -> std::collections::BTreeMap<String, String> {
    common::journal(journal)
        .iter()
        .filter(|e| e["event"] == "changed")
        .map(|e| {
            let text = e["text"].as_str().unwrap_or_default().to_string();
            (e["cell"].as_str().unwrap_or_default().to_string(), text)
        })
        .collect()
}

/// #55 item 5: a click into an empty cell of a grid (harness/apps/grid_tk.py), replayed on
/// a build that moved the grid. Up close, and with 2× and 4× its context, the cell looks
/// like its neighbours, so the picture alone cannot place it; the text nearest the
/// recorded point, read in the recorded picture and found once in the live window, says
/// where it went ("Friday" is in the moved build's notice too, so "Saturday" does): the
/// typing lands in that cell (the app's journal), and the step says how the point was
/// found. On the unchanged build it is pressed where it was recorded.
#[test]
fn a_click_into_a_look_alike_cell_follows_the_text_nearest_it_on_a_moved_build() {
    let (sandbox, run, base) = Run::start("tk-grid", GRID);
    let recording = base.join("recorded");
    let journal = base.join("recorded.jsonl");
    let (pid, window) = run.launch("", &journal);
    run.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": recording }),
    );
    let cell = (
        centre(&ocr_text(&run, &pid, &window, "Friday")).0,
        centre(&ocr_text(&run, &pid, &window, "Week 5")).1,
    );
    click_at(
        &run.session,
        &pid,
        &window,
        json!({ "x": cell.0, "y": cell.1 }),
    );
    run.call(
        "type_text",
        json!({ "pid": pid, "window_id": window, "text": "7" }),
    );
    let want = std::collections::BTreeMap::from([("Friday/Week 5".to_string(), "7".to_string())]);
    let typed = settled(|| cells(&journal), want.clone());
    assert_eq!(typed, want, "the recording itself");
    run.call("set_recording", json!({ "enabled": false }));
    run.quit(&pid);

    let mut failures = Vec::new();
    for variant in ["", "moved"] {
        let replayed = base.join(format!("replayed-{variant}.jsonl"));
        let (pid, _) = run.launch(variant, &replayed);
        let report = run.replay(&recording, &ReplayOptions::default());
        let typed = settled(|| cells(&replayed), want.clone());
        run.quit(&pid);
        let how = report.turns[0].point_moved.clone().unwrap_or_default();
        let anchored = how.contains("anchored by the text");
        if report.failed > 0 || typed != want || anchored != (variant == "moved") {
            failures.push(format!(
                "{variant:?}: cells {typed:?}, point {how:?}; {:#?}",
                report.turns
            ));
        }
    }
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
