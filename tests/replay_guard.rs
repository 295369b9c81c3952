//! What a replay may press, and whether `cua test` and `cua replay` agree (#42), on the
//! order form (GTK 3: harness/apps/order_gtk3.py; Qt 5: order_qt.py). One recording of
//! the base build types an item and a quantity, clicks Add by element, then clicks Add's
//! centre as a pixel turn. The app's own journal says what was pressed:
//! - on a build where Add reads "Add item" and comes after Clear, the element turn heals
//!   and the pixel turn follows the healed element: Clear is never pressed;
//! - on a build without Add, the pixel turn is refused naming both elements;
//! - on a build with a second Add after Clear, the turn names both candidates and what
//!   decided;
//! - on a build whose Add shows its line 1.5 s late, the in-process replay and `cua test`
//!   (against a golden of the base build) both pass, turn by turn, and the report shows the
//!   slow turn's latency beside the golden's.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::runtime;
use cua::replay::{ReplayOptions, ReplayReport, replay};
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

struct Run {
    rt: tokio::runtime::Runtime,
    ctx: ToolContext,
    registry: ToolRegistry,
    script: &'static str,
    args: &'static [&'static str],
}

impl Run {
    fn call(&self, tool: &str, args: Value) -> Value {
        self.rt
            .block_on(self.registry.call(&self.ctx, tool, args.clone()))
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
            .structured
    }

    fn app_args(&self, variant: &str, journal: &Path) -> Vec<String> {
        let mut a: Vec<String> = self.args.iter().map(|s| s.to_string()).collect();
        a.extend([
            "--journal".into(),
            journal.display().to_string(),
            "--variant".into(),
            variant.into(),
        ]);
        a
    }

    fn script_path(&self) -> String {
        format!(
            "{}/harness/apps/{}",
            env!("CARGO_MANIFEST_DIR"),
            self.script
        )
    }

    fn launch(&self, variant: &str, journal: &Path) -> (Value, Value) {
        let out = self.call(
            "launch_app",
            json!({
                "path": self.script_path(),
                "additional_arguments": self.app_args(variant, journal),
                "creates_new_application_instance": true,
            }),
        );
        (out["pid"].clone(), out["windows"][0]["window_id"].clone())
    }

    fn element(&self, pid: &Value, window: &Value, role: &str, name: &str) -> Value {
        let st = self.call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
        );
        st["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == role && e["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {role} {name:?} in {}", st["tree_markdown"]))
    }

    fn replay(&self, dir: &Path) -> ReplayReport {
        self.rt
            .block_on(replay(
                &self.ctx,
                &self.registry,
                dir,
                &ReplayOptions::default(),
                |_| {},
            ))
            .unwrap()
    }

    fn quit(&self, pid: &Value) {
        let raw = pid.as_i64().unwrap() as i32;
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(raw),
            nix::sys::signal::Signal::SIGTERM,
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.call("list_windows", json!({}))["windows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["pid"] == *pid)
        {
            assert!(Instant::now() < deadline, "the form did not quit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Records the flow on the base build into `dir`.
    fn record(&self, dir: &Path, journal: &Path) {
        let (pid, window) = self.launch("", journal);
        self.call(
            "set_recording",
            json!({ "enabled": true, "output_dir": dir }),
        );
        let by_element = |tool: &str, role: &str, name: &str, extra: Value| {
            let e = self.element(&pid, &window, role, name);
            let mut args =
                json!({ "pid": pid, "window_id": window, "element_index": e["element_index"] });
            for (k, v) in extra.as_object().unwrap() {
                args[k] = v.clone();
            }
            self.call(tool, args);
        };
        by_element("type_text", "text", "Item", json!({ "text": "apple" }));
        by_element("type_text", "text", "Quantity", json!({ "text": "3" }));
        by_element("click", "button", "Add", json!({}));
        let add = self.element(&pid, &window, "button", "Add");
        let f = &add["pixel_frame"];
        let (x, y) = (
            f["x"].as_i64().unwrap() + f["w"].as_i64().unwrap() / 2,
            f["y"].as_i64().unwrap() + f["h"].as_i64().unwrap() / 2,
        );
        // In the foreground: GTK 3 ignores a synthetic click while the pointer is elsewhere.
        self.call(
            "click",
            json!({ "pid": pid, "window_id": window, "x": x, "y": y, "delivery_mode": "foreground" }),
        );
        self.call("set_recording", json!({ "enabled": false }));
        self.quit(&pid);
        assert_eq!(clicks(journal), ["Add", "Add"], "the recording itself");
    }
}

/// Every widget the app's journal says was clicked, in order.
fn clicks(journal: &Path) -> Vec<String> {
    std::fs::read_to_string(journal)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "clicked")
        .map(|e| e["widget"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A sandbox and a folder of its own for test `label`.
fn setup(
    label: &str,
    script: &'static str,
    args: &'static [&'static str],
) -> (Sandbox, Run, PathBuf) {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 900,
        ..Default::default()
    })
    .expect("sandbox");
    let base = std::env::temp_dir().join(format!(
        "cua-guard-{label}-{}-{}",
        script.trim_end_matches(".py"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let run = Run {
        rt: runtime(),
        ctx: ToolContext::for_desktop(sandbox.desktop()),
        registry: ToolRegistry::new(),
        script,
        args,
    };
    (sandbox, run, base)
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
    let report = run.replay(recording);
    run.quit(&pid);
    (report, clicks(&journal))
}

fn pixel_turns_and_look_alikes(script: &'static str, args: &'static [&'static str]) {
    let (sandbox, run, base) = setup("pixel", script, args);
    let recording = base.join("recorded");
    run.record(&recording, &base.join("recorded.jsonl"));
    let mut failures = Vec::new();

    // Renamed and moved after Clear: the element turn heals, the pixel turn follows it.
    let (report, pressed) = replay_on(&run, &recording, &base, "relabel_move");
    if report.failed > 0 || pressed != ["Add", "Add"] {
        failures.push(format!(
            "relabel_move: pressed {pressed:?}; {:#?}",
            report.turns
        ));
    }
    let moved = report.turns[3].point_moved.clone().unwrap_or_default();
    if !moved.contains("in button \"Add item\"") {
        failures.push(format!(
            "relabel_move: the point's move is not reported: {moved:?}"
        ));
    }

    // No Add: the pixel turn would land on Clear; it is refused naming both.
    let (report, pressed) = replay_on(&run, &recording, &base, "no_add");
    if pressed.iter().any(|p| p == "Clear") {
        failures.push(format!("no_add: pressed Clear: {pressed:?}"));
    }
    let pixel = &report.turns[3];
    let refusal =
        "recorded point was on button \"Add\"; it is now on button \"Clear\" (not pressed)";
    if pixel.ok || !pixel.result_summary.contains(refusal) {
        failures.push(format!("no_add: turn 4 said {:?}", pixel.result_summary));
    }

    // A second Add after Clear: the right one is pressed, and both are named.
    let (report, pressed) = replay_on(&run, &recording, &base, "add_after_clear");
    if report.failed > 0 || pressed != ["Add", "Add"] {
        failures.push(format!(
            "add_after_clear: pressed {pressed:?}; {:#?}",
            report.turns
        ));
    }
    let choice = report.turns[2].look_alikes.clone().unwrap_or_default();
    if !(choice.starts_with("2 elements fit button \"Add\"") && choice.contains("chosen by")) {
        failures.push(format!(
            "add_after_clear: look-alikes not named: {choice:?}"
        ));
    }
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn gtk3_a_pixel_turn_never_presses_another_control_and_look_alikes_are_named() {
    pixel_turns_and_look_alikes("order_gtk3.py", &[]);
}

#[test]
fn qt5_a_pixel_turn_never_presses_another_control_and_look_alikes_are_named() {
    pixel_turns_and_look_alikes("order_qt.py", &["--qt", "5"]);
}

/// `cua test` on `variant` against a golden of the base build (made by `cua test --update`
/// in `root`): its JSON report.
fn cua_test(root: &Path, run: &Run, variant: &str, update: bool) -> Value {
    let journal = root.join(format!("test-{variant}.jsonl"));
    let args: Vec<String> = run.app_args(variant, &journal);
    let scenario = format!(
        "trajectory = {:?}\n[app]\npath = {:?}\nargs = {}\nwindow = \"cua order form\"\n",
        root.join("recorded").display().to_string(),
        run.script_path(),
        serde_json::to_string(&args).unwrap()
    );
    std::fs::create_dir_all(root.join("harness")).unwrap();
    std::fs::write(root.join("harness/order.toml"), scenario).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cua"));
    cmd.current_dir(root)
        .args(["test", "order", "--json", "--work-dir"])
        .arg(root.join(format!("work-{variant}")))
        .env_remove("CI");
    if update {
        cmd.arg("--update");
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "cua test --json: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn cua_test_and_cua_replay_agree_on_a_build_that_shows_its_change_late() {
    let (sandbox, run, base) = setup("slow", "order_gtk3.py", &[]);
    let recording = base.join("recorded");
    run.record(&recording, &base.join("recorded.jsonl"));
    let golden = cua_test(&base, &run, "", true);
    assert_eq!(golden["passed"], true, "the golden run: {golden:#}");

    let (replayed, pressed) = replay_on(&run, &recording, &base, "slow_add");
    assert_eq!(pressed, ["Add", "Add"]);
    let tested = cua_test(&base, &run, "slow_add", false);
    let turns = tested["scenarios"][0]["diff"]["turns"].as_array().cloned();
    let turns = turns.unwrap_or_else(|| panic!("no diff: {tested:#}"));
    let replay_verdicts: Vec<bool> = replayed.turns.iter().map(|t| t.ok).collect();
    let test_verdicts: Vec<bool> = turns.iter().map(|t| t["status"] == "passed").collect();
    assert_eq!(
        replay_verdicts, test_verdicts,
        "cua replay {:#?}\ncua test {tested:#}",
        replayed.turns
    );
    assert!(
        replay_verdicts.iter().all(|ok| *ok),
        "{:#?}",
        replayed.turns
    );
    // The slow Add (turn 3) took longer than the golden's, and the report says so.
    let (slow, golden_ms) = (
        turns[2]["actual_latency_ms"].as_u64().unwrap_or(0),
        turns[2]["expected_latency_ms"].as_u64().unwrap_or(u64::MAX),
    );
    assert!(
        slow >= 1400 && golden_ms < 1000,
        "latency {slow} ms, golden {golden_ms} ms"
    );
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
}
