//! Benchmark: action latency with recording off vs on, same actions, same run. The return
//! path is timed (what the agent waits for); the background finishing of each turn (the
//! after-state once the window is quiet, PNG encoding and writes on the writer thread) is
//! awaited outside the timed region and reported on its own. `cargo bench --bench recording`.

#[path = "support/stats.rs"]
mod stats;
use stats::median;

use std::time::Instant;

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::json;

const RUNS: usize = 30;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1600,
        height: 900,
    })
    .expect("sandbox");
    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let run =
        |tool: &str, args: serde_json::Value| rt.block_on(registry.call(&ctx, tool, args)).unwrap();
    let launched = run("launch_app", json!({ "name": "gtk3-widget-factory" })).structured;
    let (pid, window) = (
        launched["pid"].as_u64().unwrap(),
        launched["windows"][0]["window_id"].as_u64().unwrap(),
    );
    let state = run(
        "get_window_state",
        json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
    );
    let toggle = state.structured["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == "toggle_button" && e["name"] == "togglebutton")
        .unwrap()["index"]
        .clone();
    let click = json!({ "pid": pid, "window_id": window, "element_index": toggle });
    let dir = std::env::temp_dir().join(format!("cua-bench-recording-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    let mut off = Vec::new();
    let mut on = Vec::new();
    let mut finishing = Vec::new();
    for _ in 0..3 {
        run("click", click.clone());
    }
    for _ in 0..RUNS {
        let t = Instant::now();
        run("click", click.clone());
        off.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    run(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    );
    for _ in 0..RUNS {
        let t = Instant::now();
        run("click", click.clone());
        on.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        rt.block_on(ctx.recorder.finish_pending());
        finishing.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    run("set_recording", json!({ "enabled": false }));
    let turns = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("turn-")
        })
        .count();
    assert_eq!(turns, RUNS, "every recorded click wrote a turn");
    let (off, on, fin) = (median(off), median(on), median(finishing));
    println!("| element click (gtk3-widget-factory) | p50 |");
    println!("|---|---|");
    println!("| recording off | {off:.2} ms |");
    println!("| recording on, return path | {on:.2} ms |");
    println!("| added on the return path | {:.2} ms |", on - off);
    println!(
        "| turn finishing in the background (after-state once quiet, capture) | {fin:.1} ms |"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
