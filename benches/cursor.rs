//! Benchmark: what the agent cursor costs a click, back to back on the GTK 3 fixture's
//! Increment button (element click, dispatch to return): overlay off (the sandbox
//! default), overlay off while a video records (the helper draws the cursor), overlay on
//! with no glide or dwell (the overlay's own cost), and overlay on with the reference's
//! glide (750 ms) and dwell (400 ms), which an agent pays by design. Prints a Markdown
//! table with medians and each row's ratio to the first. `cargo bench --bench cursor`.

#[path = "support/stats.rs"]
mod stats;
use stats::median_p95;

use std::time::Instant;

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

const RUNS: usize = 40;
const SLOW_RUNS: usize = 5;
const WARMUP: usize = 3;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    let ctx = ToolContext::for_session(sandbox.desktop(), "bench");
    let call = |tool: &str, args: Value| {
        rt.block_on(registry.call(&ctx, tool, args))
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    };
    let fixture = format!("{}/harness/apps/fixture.py", env!("CARGO_MANIFEST_DIR"));
    let launched = call("launch_app", json!({ "path": fixture }));
    let pid = launched.structured["pid"].as_u64().unwrap();
    let window_id = launched.structured["windows"][0]["window_id"]
        .as_u64()
        .unwrap();
    let state = call(
        "get_window_state",
        json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
    );
    let increment = state.structured["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "Increment")
        .cloned()
        .expect("Increment");
    let click =
        json!({ "pid": pid, "window_id": window_id, "element_index": increment["element_index"] });
    // Each click moves the cursor between two points, as an agent's clicks do.
    let elsewhere = json!({ "x": 40, "y": 40 });
    let measure = |runs: usize| {
        let mut samples = Vec::new();
        for i in 0..WARMUP + runs {
            call("move_cursor", elsewhere.clone());
            let t = Instant::now();
            call("click", click.clone());
            if i >= WARMUP {
                samples.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        median_p95(samples)
    };

    let off = measure(RUNS);
    let video_dir = sandbox.dir().join("bench-video");
    call(
        "set_recording",
        json!({ "enabled": true, "output_dir": video_dir, "video_experimental": true }),
    );
    let off_video = measure(RUNS);
    call("set_recording", json!({ "enabled": false }));
    call("set_agent_cursor_enabled", json!({ "enabled": true }));
    call(
        "set_agent_cursor_motion",
        json!({ "glide_duration_ms": 0, "dwell_after_click_ms": 0 }),
    );
    let on_instant = measure(RUNS);
    call(
        "set_agent_cursor_motion",
        json!({ "glide_duration_ms": 750, "dwell_after_click_ms": 400 }),
    );
    let on_reference = measure(SLOW_RUNS);

    println!("| element click on the GTK 3 fixture | runs | p50 | p95 | p50 / overlay off |");
    println!("|---|---|---|---|---|");
    for (name, runs, (p50, p95)) in [
        ("overlay off (sandbox default)", RUNS, off),
        ("overlay off, video recording", RUNS, off_video),
        ("overlay on, glide 0 ms, dwell 0 ms", RUNS, on_instant),
        (
            "overlay on, glide 750 ms, dwell 400 ms (reference)",
            SLOW_RUNS,
            on_reference,
        ),
    ] {
        println!(
            "| {name} | {runs} | {p50:.2} ms | {p95:.2} ms | {:.2}x |",
            p50 / off.0
        );
    }
}
