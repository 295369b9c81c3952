//! Recordings the real cua-driver 0.21 wrote (trajectories/cua-driver-0.21, made with the
//! record_*.py scripts beside them): calculator-7x6 (7 × 6 = on GNOME Calculator, by element
//! tokens) and mousepad-note (three type_text turns into Mousepad's editor, whose title
//! gains a `*` on the way). Each replays with `cua replay --launch` on a fresh app, every
//! turn, each turn's recorded change checked in cua-driver's own tree vocabulary; the
//! replay recorded with `--record-to` diffs clean against the recording; results are read
//! from the app's tree. A recording changed to press 5 instead of 6, or to type another
//! word, fails at the turn whose recorded change it cannot make, and its diff says so.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cua::sandbox::Sandbox;
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

use common::sandbox as desktop;

fn recording(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("trajectories/cua-driver-0.21")
        .join(name)
}

/// `cua replay DIR --launch --json [EXTRA]` on a fresh desktop; its report and the desktop.
fn replay(dir: &Path, extra: &[&str]) -> (Value, Sandbox) {
    let sandbox = desktop();
    let report = replay_on(&sandbox, dir, &[&["--launch"], extra].concat());
    (report, sandbox)
}

/// `cua replay DIR --json [ARGS]` on `sandbox`: its report.
fn replay_on(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> Value {
    common::replay_json(sandbox, dir, args)
}

/// `cua diff EXPECTED ACTUAL`: its exit code and summary.
fn diff(expected: &Path, actual: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("diff")
        .arg(expected)
        .arg(actual)
        .output()
        .unwrap();
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A fresh folder for a test's trajectory.
fn scratch(name: &str) -> PathBuf {
    common::scratch("driver-rec", name)
}

/// The markdown tree of the one window of the app named `app` (list_windows' app_name).
fn tree_of(sandbox: &Sandbox, app: &str) -> String {
    let runtime = common::runtime();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let registry = ToolRegistry::new();
    let windows = runtime
        .block_on(registry.call(&ctx, "list_windows", json!({})))
        .unwrap();
    let window = windows.structured["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["app_name"].as_str().is_some_and(|n| n.contains(app)))
        .unwrap_or_else(|| panic!("no {app} window in {}", windows.structured))
        .clone();
    let state = runtime
        .block_on(registry.call(
            &ctx,
            "get_window_state",
            json!({ "pid": window["pid"], "window_id": window["window_id"], "include_screenshot": false }),
        ))
        .unwrap();
    state.structured["tree_markdown"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The calculator's labels, read from its own tree.
fn labels(sandbox: &Sandbox) -> Vec<String> {
    tree_of(sandbox, "Calculator")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- label \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect()
}

#[test]
fn a_real_cua_driver_recording_replays_every_turn_diffs_clean_and_the_app_shows_its_result() {
    let out = scratch("calc-out");
    let (report, sandbox) = replay(
        &recording("calculator-7x6"),
        &["--record-to", out.to_str().unwrap()],
    );
    assert_eq!(report["attempted"], 4, "{report}");
    assert_eq!(report["succeeded"], 4, "{report}");
    let shown = labels(&sandbox);
    assert!(
        shown.iter().any(|l| l == "42") && shown.iter().any(|l| l == "7×6"),
        "the calculator shows {shown:?}"
    );
    let (code, said) = diff(&recording("calculator-7x6"), &out);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(code, Some(0), "{said}");
}

#[test]
fn a_changed_cua_driver_recording_fails_where_its_recorded_change_is_not_made() {
    let dir = scratch("calc-changed");
    common::copy_dir(&recording("calculator-7x6"), &dir);
    // Turn 3 pressed "6" (element 21 of its snapshot); make it press "5" (element 20).
    let action = dir.join("turn-00003/action.json");
    let text = std::fs::read_to_string(&action).unwrap();
    assert!(text.contains("\"s00000003:21\""));
    std::fs::write(
        &action,
        text.replace("\"s00000003:21\"", "\"s00000003:20\""),
    )
    .unwrap();
    let (report, sandbox) = replay(&dir, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(report["succeeded"], 3, "{report}");
    assert_eq!(report["first_failure"], 4, "{report}");
    let failure = report.to_string();
    assert!(
        failure.contains("42"),
        "the failure names the missing result: {report}"
    );
    let shown = labels(&sandbox);
    assert!(
        shown.iter().any(|l| l == "35"),
        "the calculator shows {shown:?}"
    );
}

#[test]
fn a_real_mousepad_recording_replays_every_turn_and_diffs_clean() {
    let out = scratch("mousepad-out");
    let (report, sandbox) = replay(
        &recording("mousepad-note"),
        &["--record-to", out.to_str().unwrap()],
    );
    assert_eq!(report["attempted"], 3, "{report}");
    assert_eq!(report["succeeded"], 3, "{report}");
    let tree = tree_of(&sandbox, "Mousepad");
    assert!(
        tree.contains("value=\"Hello from cua-driver\\nsecond line and a third\""),
        "the editor holds {tree}"
    );
    assert!(
        tree.starts_with("- frame \"*Untitled 1 - Mousepad\""),
        "{tree}"
    );
    let (code, said) = diff(&recording("mousepad-note"), &out);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(code, Some(0), "{said}");
}

#[test]
fn a_changed_mousepad_recording_fails_at_the_turn_that_types_another_word() {
    let dir = scratch("mousepad-changed");
    common::copy_dir(&recording("mousepad-note"), &dir);
    // Turn 2 typed "second line"; make it type "second lime".
    let action = dir.join("turn-00002/action.json");
    let text = std::fs::read_to_string(&action).unwrap();
    assert!(text.contains("\"second line\""));
    std::fs::write(&action, text.replace("\"second line\"", "\"second lime\"")).unwrap();
    let out = scratch("mousepad-changed-out");
    let (report, _sandbox) = replay(
        &dir,
        &["--no-stop-on-error", "--record-to", out.to_str().unwrap()],
    );
    assert_eq!(report["first_failure"], 2, "{report}");
    assert!(
        report.to_string().contains("second line"),
        "the failure names the missing text: {report}"
    );
    // The replay of the changed recording, against the real one: turn 2 differs.
    let (code, said) = diff(&recording("mousepad-note"), &out);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("✗ turn-00002"), "{said}");
}

/// One trajectory of the calculator's turns, then Mousepad's (as a session that used two
/// apps records them), in `dir`.
fn calculator_then_mousepad(dir: &Path) {
    let mut n = 0;
    for name in ["calculator-7x6", "mousepad-note"] {
        let mut turns: Vec<PathBuf> = std::fs::read_dir(recording(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("turn-")
            })
            .collect();
        turns.sort();
        for turn in turns {
            n += 1;
            common::copy_dir(&turn, &dir.join(format!("turn-{n:05}")));
        }
    }
    std::fs::copy(
        recording("mousepad-note").join("session.json"),
        dir.join("session.json"),
    )
    .unwrap();
}

/// The apps a person started before replaying, fresh: cua-driver's recorded windows are
/// bound to them by what both trees show. Mousepad's recorded tree lists every item of
/// every closed menu (257 elements, names padded towards their accelerators), where the
/// live one shows the 6 menus: the names of the smaller tree decide.
#[test]
fn a_cua_driver_recording_binds_the_apps_a_person_started_by_what_both_trees_show() {
    let dir = scratch("two-apps");
    calculator_then_mousepad(&dir);
    let sandbox = desktop();
    let runtime = common::runtime();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let registry = ToolRegistry::new();
    for app in ["gnome-calculator", "mousepad"] {
        runtime
            .block_on(registry.call(&ctx, "launch_app", json!({ "name": app })))
            .unwrap_or_else(|e| panic!("launch {app}: {e}"));
    }
    let out = scratch("two-apps-out");
    let report = replay_on(&sandbox, &dir, &["--record-to", out.to_str().unwrap()]);
    assert_eq!(report["attempted"], 7, "{report}");
    assert_eq!(report["succeeded"], 7, "{report}");
    let shown = labels(&sandbox);
    assert!(
        shown.iter().any(|l| l == "42"),
        "the calculator shows {shown:?}"
    );
    let tree = tree_of(&sandbox, "Mousepad");
    assert!(
        tree.contains("value=\"Hello from cua-driver\\nsecond line and a third\""),
        "the editor holds {tree}"
    );
    let (code, said) = diff(&dir, &out);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(code, Some(0), "{said}");
}

/// `cua replay --plan DIR --json [EXTRA]`: the plan, read without a desktop.
fn plan_of(dir: &Path, extra: &[&str]) -> Value {
    let printed = common::replay_plan(dir, &[&["--json"], extra].concat());
    serde_json::from_str(&printed).unwrap()
}

#[test]
fn a_cua_driver_recording_with_a_refused_turn_replays_every_step_and_skips_the_refused_one() {
    // mousepad-note with a turn cua-driver refused inserted after turn 2 (shipped, and the
    // scenario `mousepad-cua-driver` replays it): a background Return (`result_error:
    // true`), its window unchanged before and after. The real recordings that hold one
    // follow it with the foreground Return; here nothing follows it, so a replay that sent
    // it would leave a line break the recording never had.
    let dir = recording("mousepad-refused");
    let plan = plan_of(&dir, &[]);
    let steps = plan["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "{plan}");
    assert_eq!(steps[2]["turn"], 3, "{plan}");
    assert!(
        steps[2]["skipped"]
            .as_str()
            .is_some_and(|s| s.starts_with("recorded as failed (error: background key delivery")),
        "{plan}"
    );
    let out = scratch("mousepad-refused-out");
    let (report, sandbox) = replay(&dir, &["--record-to", out.to_str().unwrap()]);
    assert_eq!(report["attempted"], 3, "{report}");
    assert_eq!(report["succeeded"], 3, "{report}");
    assert_eq!(report["skipped"], 1, "{report}");
    assert_eq!(
        report["turns"][2]["skipped"], steps[2]["skipped"],
        "{report}"
    );
    let tree = tree_of(&sandbox, "Mousepad");
    assert!(
        tree.contains("value=\"Hello from cua-driver\\nsecond line and a third\""),
        "the editor holds {tree}"
    );
    drop(sandbox);
    // The replay's recording has the three steps; against the recording it replayed (the
    // refused turn named, not compared) and against the one without it, it diffs clean.
    let (code, said) = diff(&dir, &out);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("not compared: expected turn 3 (press_key): recorded as failed"),
        "{said}"
    );
    let (code, said) = diff(&recording("mousepad-note"), &out);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(code, Some(0), "{said}");

    // --raw sends the refused Return: the editor gets a line break the recording never
    // had, and the turn after it fails.
    let (report, sandbox) = replay(&dir, &["--raw", "--no-stop-on-error"]);
    assert_eq!(report["skipped"], 0, "{report}");
    assert!(report["failed"].as_u64() >= Some(1), "{report}");
    let tree = tree_of(&sandbox, "Mousepad");
    assert!(
        tree.contains("second line\\n"),
        "the raw replay sent the refused Return: {tree}"
    );
}
