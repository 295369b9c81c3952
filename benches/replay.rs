//! Benchmark: replay overhead per turn beyond the action itself (delay 0), including
//! rebinding, locator resolution, the live window read before each turn and the check that
//! the app made the turn's recorded change. Element clicks are recorded on a fresh GTK4 app
//! (calculator) and a fresh GTK3 app (widget factory), then replayed on another fresh one
//! (a replay makes the recorded changes again, from the recorded start); the overhead is a
//! turn's replay time minus the median of the same click dispatched directly.
//! `cargo bench --bench replay`.

#[path = "support/stats.rs"]
mod stats;
use stats::median;

use std::time::Instant;

use cua::replay::{ReplayOptions, replay};
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

const TURNS: usize = 20;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1600,
        height: 900,
        ..Default::default()
    })
    .expect("sandbox");
    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    println!(
        "| app | turns | first turn (fresh snapshot) | replay turn p50 | direct click p50 | overhead per turn p50 |"
    );
    println!("|---|---|---|---|---|---|");
    for (app, pick) in [
        (
            "Calculator",
            Box::new(|e: &Value| e["name"] == "1") as Box<dyn Fn(&Value) -> bool>,
        ),
        (
            "gtk3-widget-factory",
            Box::new(|e: &Value| e["role"] == "toggle_button" && e["name"] == "togglebutton"),
        ),
    ] {
        let ctx = ToolContext::for_desktop(sandbox.desktop());
        let call = |tool: &str, args: Value| rt.block_on(registry.call(&ctx, tool, args)).unwrap();
        // A fresh instance of the app, and the click on its element.
        let fresh_app = || {
            let launched = call(
                "launch_app",
                json!({ "name": app, "creates_new_application_instance": true }),
            )
            .structured;
            let (pid, window) = (
                launched["pid"].clone(),
                launched["windows"][0]["window_id"].clone(),
            );
            let state = call(
                "get_window_state",
                json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
            )
            .structured;
            let index = state["elements"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| pick(e))
                .unwrap()["element_index"]
                .clone();
            (
                pid.clone(),
                json!({ "pid": pid, "window_id": window, "element_index": index }),
            )
        };
        let quit = |pid: &Value| {
            let pid = pid.as_i64().unwrap() as i32;
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
            let deadline = Instant::now() + std::time::Duration::from_secs(10);
            while call("list_windows", json!({})).structured["windows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["pid"] == pid)
            {
                assert!(Instant::now() < deadline, "{app} did not quit");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        };
        let (pid, click) = fresh_app();
        let mut direct = Vec::new();
        for _ in 0..TURNS {
            let t = Instant::now();
            call("click", click.clone());
            direct.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let dir =
            std::env::temp_dir().join(format!("cua-bench-replay-{}-{app}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        quit(&pid);
        let (pid, click) = fresh_app();
        call(
            "set_recording",
            json!({ "enabled": true, "output_dir": dir }),
        );
        for _ in 0..TURNS {
            call("click", click.clone());
        }
        call("set_recording", json!({ "enabled": false }));
        quit(&pid);
        let (pid, _) = fresh_app();
        let fresh = ToolContext::for_desktop(sandbox.desktop());
        let opts = ReplayOptions {
            stop_on_error: true,
            ..ReplayOptions::default()
        };
        let mut per_turn = Vec::new();
        let mut last = Instant::now();
        let report = rt
            .block_on(replay(&fresh, &registry, &dir, &opts, |_| {
                per_turn.push(last.elapsed().as_secs_f64() * 1000.0);
                last = Instant::now();
            }))
            .unwrap();
        assert_eq!(report.failed, 0, "{:?}", report.turns);
        let first = per_turn[0];
        let (turn, click_ms) = (median(per_turn), median(direct));
        println!(
            "| {app} | {TURNS} | {first:.1} ms | {turn:.1} ms | {click_ms:.2} ms | {:.1} ms |",
            turn - click_ms
        );
        quit(&pid);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
