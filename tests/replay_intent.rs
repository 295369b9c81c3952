//! Replay by intent (#55) on a real GTK 4 app: an agent's recording holds its attempt and
//! its escalated retry, and replays to the recorded end state once, not twice.
//!
//! The agent presses 7 on GNOME Calculator (GTK 4) in the background; GTK 4 ignores
//! synthetic X events and cua answers with an escalation to the foreground; the agent
//! follows it and finishes 7 × 6 = in the foreground. The recording has both presses. A
//! replay on a fresh calculator folds the attempt into its retry and shows 42, read from
//! the calculator's own tree; `--raw` replays both presses and the calculator reads 77;
//! a recording whose retry pressed another key fails at that step.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cua::sandbox::Sandbox;
use serde_json::{Value, json};

use common::sandbox;

use common::Session;
use common::live::{calculator_shows, calculator_window};

fn scratch(name: &str) -> PathBuf {
    common::scratch("intent", name)
}

/// Records what the agent did into `dir`: launch, 7 in the background (escalated), 7 in
/// the foreground, then × 6 = in the foreground. The calculator showed 42.
fn record_agent(dir: &Path) {
    let session = Session::private();
    session.ok(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    );
    session.ok("launch_app", json!({ "name": "gnome-calculator" }));
    let (pid, window, _) = calculator_window(&session);
    let press = |key: &str, foreground: bool| {
        let mut args = json!({ "pid": pid, "window_id": window, "key": key });
        if foreground {
            args["delivery_mode"] = json!("foreground");
        }
        session.ok("press_key", args)
    };
    let attempt = press("7", false);
    assert_eq!(
        attempt["escalation"]["recommended"], "foreground",
        "GTK 4 ignores a background key, and cua says so: {attempt}"
    );
    press("7", true);
    calculator_shows(&session, &pid, &window, "7");
    for key in ["asterisk", "6", "return"] {
        press(key, true);
    }
    calculator_shows(&session, &pid, &window, "42");
    session.ok("set_recording", json!({ "enabled": false }));
}

/// `cua replay DIR --json --delay-ms 0 [ARGS]` on `sandbox`: its report.
fn replay_on(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> Value {
    common::replay_json(sandbox, dir, &[&["--delay-ms", "0"], args].concat())
}

/// The calculator's result field, read from its own tree in `sandbox`.
fn shown(sandbox: &Sandbox) -> String {
    let session = Session::for_desktop(sandbox.desktop());
    let (pid, window, _) = calculator_window(&session);
    let md = session.state(&pid, &window)["tree_markdown"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    md.lines()
        .find_map(|l| {
            let value = l.split("text value=\"").nth(1)?;
            Some(value.split('"').next()?.to_string())
        })
        .unwrap_or_else(|| panic!("no result field in\n{md}"))
}

/// `cua replay --plan DIR [ARGS]`: its output.
fn plan(dir: &Path, args: &[&str]) -> String {
    common::replay_plan(dir, args)
}

#[test]
fn an_agents_escalated_retry_replays_once_on_a_fresh_gtk4_calculator() {
    let dir = scratch("agent");
    record_agent(&dir);

    // The plan: launch, the attempt folded into its retry, × 6 =.
    let json_plan: Value = serde_json::from_str(&plan(&dir, &["--json"])).unwrap();
    let steps = json_plan["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 5, "{json_plan:#}");
    assert_eq!(steps[1]["turns"], json!([2, 3]), "{json_plan:#}");
    assert_eq!(steps[1]["folded"][0]["turn"], 2, "{json_plan:#}");
    let why = steps[1]["folded"][0]["why"].as_str().unwrap();
    assert!(why.contains("retried it in the foreground"), "{why}");
    let text = plan(&dir, &[]);
    assert!(
        text.contains("folded turn 2:")
            && text.contains("5 steps from 6 turns: 0 skipped, 1 folded"),
        "{text}"
    );

    // Replayed on a fresh calculator: 42, every step checked; the replay's recording
    // diffs clean against the agent's, step by step (the attempt is named, not compared).
    let desktop = sandbox();
    let out = scratch("agent-replayed");
    let report = replay_on(&desktop, &dir, &["--record-to", out.to_str().unwrap()]);
    assert_eq!(report["failed"], 0, "{report:#}");
    assert_eq!(report["attempted"], 5, "{report:#}");
    assert_eq!(report["folded"], 1, "{report:#}");
    assert_eq!(shown(&desktop), "42");
    assert!(report.get("start_differs").is_none(), "{report:#}");

    // Replayed again on the same desktop: the calculator is single-instance, so the
    // launch brings back the one showing 42, and the replay says the app did not start
    // as recorded, naming what it shows.
    let again = replay_on(&desktop, &dir, &[]);
    let start = again["start_differs"].as_str().unwrap_or_default();
    assert!(
        start.starts_with("the app did not start as recorded: it shows") && start.contains("42"),
        "{again:#}"
    );
    drop(desktop);
    let diff = Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("diff")
        .args([&dir, &out])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&diff.stdout).into_owned();
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(diff.status.code(), Some(0), "{said}");
    assert!(
        said.contains("not compared: expected turn 2 (press_key): folded into turn 3"),
        "{said}"
    );

    // --raw sends both presses: the calculator reads 77, and the replay says so.
    let desktop = sandbox();
    let report = replay_on(&desktop, &dir, &["--raw"]);
    assert_eq!(report["failed"], 1, "{report:#}");
    assert_eq!(report["first_failure"], 3, "{report:#}");
    assert!(report.to_string().contains("77"), "{report:#}");
    drop(desktop);

    // A recording whose retry pressed 8: the attempt is no longer its retry's (it is
    // replayed, escalated in the sandbox), and the step that presses 8 fails where the
    // recording showed 7.
    let changed = scratch("agent-changed");
    common::copy_dir(&dir, &changed);
    let action = changed.join("turn-00003/action.json");
    let text = std::fs::read_to_string(&action).unwrap();
    assert!(text.contains("\"key\": \"7\""), "{text}");
    std::fs::write(&action, text.replace("\"key\": \"7\"", "\"key\": \"8\"")).unwrap();
    let desktop = sandbox();
    let report = replay_on(&desktop, &changed, &[]);
    assert_eq!(report["first_failure"], 3, "{report:#}");
    assert_eq!(report["folded"], 0, "{report:#}");
    assert!(
        report["turns"][2]["result_summary"]
            .as_str()
            .is_some_and(|s| s.contains("expected text value=\"7\"")),
        "{report:#}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&changed);
}
