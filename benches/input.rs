//! Benchmark: dispatch-to-return latency of input tools (no settle) for an element click,
//! type_text of 100 characters and a pixel click, next to xdotool clicking the same button
//! in the same run. Prints a Markdown table. Run with `cargo bench --bench input`.

#[path = "support/stats.rs"]
mod stats;
use stats::median_p95;

use std::time::Instant;

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

const RUNS: usize = 40;
const WARMUP: usize = 3;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1600,
        height: 900,
        ..Default::default()
    })
    .expect("sandbox");
    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let call = |tool: &str, args: Value| {
        rt.block_on(registry.call(&ctx, tool, args))
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    };

    let launched = call("launch_app", json!({ "name": "gtk3-widget-factory" }));
    let pid = launched.structured["pid"].as_u64().unwrap();
    let window = &launched.structured["windows"][0];
    let window_id = window["window_id"].as_u64().unwrap();
    let (wx, wy) = (
        window["bounds"]["x"].as_i64().unwrap(),
        window["bounds"]["y"].as_i64().unwrap(),
    );
    let state = call(
        "get_window_state",
        json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
    );
    let find = |pred: &dyn Fn(&Value) -> bool| {
        state.structured["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| pred(e))
            .cloned()
            .expect("element")
    };
    let sensitive = |e: &Value| {
        e["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "sensitive")
    };
    let toggle =
        find(&|e| e["role"] == "toggle_button" && e["name"] == "togglebutton" && sensitive(e));
    let entry = find(&|e| e["role"] == "text" && e["value"] == "entry" && sensitive(e));
    let f = &toggle["frame"];
    let (cx, cy) = (
        f["x"].as_i64().unwrap() + f["w"].as_i64().unwrap() / 2,
        f["y"].as_i64().unwrap() + f["h"].as_i64().unwrap() / 2,
    );

    let measure = |tool: &str, args: Value, reset: &dyn Fn()| {
        let mut samples = Vec::new();
        for i in 0..WARMUP + RUNS {
            reset();
            let t = Instant::now();
            rt.block_on(registry.call(&ctx, tool, args.clone()))
                .unwrap_or_else(|e| panic!("{tool}: {e}"));
            if i >= WARMUP {
                samples.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        median_p95(samples)
    };
    let text: String = "The quick brown fox jumps over the lazy dog; héllo → ✓ "
        .chars()
        .cycle()
        .take(100)
        .collect();
    let rows = [
        (
            "click (element, element_action)",
            measure(
                "click",
                json!({ "pid": pid, "window_id": window_id, "element_index": toggle["element_index"] }),
                &|| {},
            ),
        ),
        (
            "type_text 100 chars (element, element_text)",
            measure(
                "type_text",
                json!({ "pid": pid, "window_id": window_id, "element_index": entry["element_index"], "text": text }),
                &|| {
                    call(
                        "set_value",
                        json!({ "pid": pid, "window_id": window_id, "element_index": entry["element_index"], "value": "" }),
                    );
                },
            ),
        ),
        (
            "click (pixel, resolved to element_action)",
            measure(
                "click",
                json!({ "pid": pid, "window_id": window_id, "x": cx, "y": cy }),
                &|| {},
            ),
        ),
        (
            "click (pixel, background_event: modifier forces events)",
            measure(
                "click",
                json!({ "pid": pid, "window_id": window_id, "x": cx, "y": cy, "modifier": ["shift"] }),
                &|| {},
            ),
        ),
    ];

    // The peer: xdotool moving the real pointer and clicking the same button.
    let mut xdo = Vec::new();
    for i in 0..WARMUP + RUNS {
        let mut cmd = sandbox.command("xdotool");
        cmd.args([
            "mousemove",
            &(wx + cx).to_string(),
            &(wy + cy).to_string(),
            "click",
            "1",
        ]);
        let t = Instant::now();
        let status = cmd.status().expect("xdotool");
        assert!(status.success());
        if i >= WARMUP {
            xdo.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let (xdo_p50, xdo_p95) = median_p95(xdo);

    println!("| action | p50 | p95 | xdotool click p50 / this p50 |");
    println!("|---|---|---|---|");
    for (name, (p50, p95)) in rows {
        println!(
            "| {name} | {p50:.2} ms | {p95:.2} ms | {:.0}x |",
            xdo_p50 / p50
        );
    }
    println!(
        "| xdotool mousemove + click (process per call) | {xdo_p50:.2} ms | {xdo_p95:.2} ms | 1x |"
    );
}
