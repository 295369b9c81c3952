//! A recording the real cua-driver 0.21 wrote (trajectories/cua-driver-0.21/calculator-7x6:
//! 7 × 6 = on GNOME Calculator, by element tokens, made with record_calculator.py beside it)
//! replays with `cua replay --launch` on a fresh calculator: every turn, each turn's
//! recorded change checked in cua-driver's own tree vocabulary. The result is read from the
//! calculator's tree. A recording changed to press 5 instead of 6 fails at the turn whose
//! recorded change it cannot make.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

fn recording() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("trajectories/cua-driver-0.21/calculator-7x6")
}

/// `cua replay DIR --launch --json` on a fresh desktop; its report and the desktop.
fn replay(dir: &Path) -> (Value, Sandbox) {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
    })
    .expect("sandbox");
    let out = Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("replay")
        .arg(dir)
        .args(["--launch", "--json"])
        .envs(sandbox.env())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "replay --json: {e}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (report, sandbox)
}

/// The calculator's labels, read from its own tree.
fn labels(sandbox: &Sandbox) -> Vec<String> {
    let runtime = common::runtime();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let registry = ToolRegistry::new();
    let windows = runtime
        .block_on(registry.call(&ctx, "list_windows", json!({})))
        .unwrap();
    let calc = windows.structured["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["app_name"] == "Calculator")
        .expect("the calculator's window")
        .clone();
    let state = runtime
        .block_on(registry.call(
            &ctx,
            "get_window_state",
            json!({ "pid": calc["pid"], "window_id": calc["window_id"], "include_screenshot": false }),
        ))
        .unwrap();
    state.structured["tree_markdown"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- label \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect()
}

#[test]
fn a_real_cua_driver_recording_replays_every_turn_and_the_app_shows_its_result() {
    let (report, sandbox) = replay(&recording());
    assert_eq!(report["attempted"], 4, "{report}");
    assert_eq!(report["succeeded"], 4, "{report}");
    let shown = labels(&sandbox);
    assert!(
        shown.iter().any(|l| l == "42") && shown.iter().any(|l| l == "7×6"),
        "the calculator shows {shown:?}"
    );
}

#[test]
fn a_changed_cua_driver_recording_fails_where_its_recorded_change_is_not_made() {
    let dir = std::env::temp_dir().join(format!("cua-driver-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    common::copy_dir(&recording(), &dir);
    // Turn 3 pressed "6" (element 21 of its snapshot); make it press "5" (element 20).
    let action = dir.join("turn-00003/action.json");
    let text = std::fs::read_to_string(&action).unwrap();
    assert!(text.contains("\"s00000003:21\""));
    std::fs::write(
        &action,
        text.replace("\"s00000003:21\"", "\"s00000003:20\""),
    )
    .unwrap();
    let (report, sandbox) = replay(&dir);
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
