//! Benchmark: how a tree read's cost grows with the window. One window of N buttons in one
//! container (harness/apps/button_grid.py, and button_grid.html in Chromium), N from 100 to
//! 10,000, in GTK 3, GTK 4, Qt 5 and Chromium; get_window_state (tree only) next to a plain
//! pyatspi walk of the same fields in the same run. Prints a Markdown table of medians, the
//! ratio, the cost per 1,000 nodes (flat when the cost is linear), and whether every button
//! was read. Run with `cargo bench --bench tree_size`; CUA_BENCH_TOOLKITS="GTK 3,Qt 5" and
//! CUA_BENCH_SIZES=100,1600 pick rows.

#[path = "support/machine.rs"]
mod machine;
#[path = "support/stats.rs"]
mod stats;

use std::time::Instant;

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

const SIZES: &[usize] = &[100, 400, 1_600, 3_200, 10_000];
/// Timed reads per row: fewer for the biggest windows (a pyatspi walk of 10,000 nodes
/// takes tens of seconds).
fn runs(size: usize) -> usize {
    if size >= 3_200 { 3 } else { 7 }
}

fn main() {
    let toolkits = ["GTK 3", "GTK 4", "Qt 5", "Chromium"];
    let only = |var: &str, name: &str| {
        std::env::var(var)
            .ok()
            .is_none_or(|only| only.split(',').any(|w| w.trim() == name))
    };
    println!(
        "| toolkit | buttons | nodes (pyatspi) | buttons read by cua | cua tree p50 | pyatspi walk p50 | pyatspi / cua | cua per 1,000 nodes |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for toolkit in toolkits {
        if !only("CUA_BENCH_TOOLKITS", toolkit) {
            continue;
        }
        for &size in SIZES {
            if !only("CUA_BENCH_SIZES", &size.to_string()) {
                continue;
            }
            // A sandbox per row: no window, cache or bus state carries from the last.
            let sandbox = Sandbox::start(SandboxOptions {
                width: 1920,
                height: 1080,
                ..Default::default()
            })
            .expect("sandbox");
            row(&sandbox, toolkit, size);
        }
    }
}

/// One row of the table: the app launched, its tree read whole once, then timed.
fn row(sandbox: &Sandbox, toolkit: &str, size: usize) {
    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let project = env!("CARGO_MANIFEST_DIR");
    let request = match toolkit {
        "Chromium" => json!({
            "name": "chromium",
            "urls": [format!("file://{project}/harness/apps/button_grid.html?n={size}")],
        }),
        _ => {
            let arg = match toolkit {
                "GTK 3" => "gtk3",
                "GTK 4" => "gtk4",
                _ => "qt5",
            };
            json!({
                "path": format!("{project}/harness/apps/button_grid.py"),
                "additional_arguments": [arg, size.to_string()],
            })
        }
    };
    let launched = rt
        .block_on(registry.call(&ctx, "launch_app", request))
        .expect("launch");
    let pid = launched.structured["pid"].as_u64().unwrap();
    let window = launched.structured["windows"][0]["window_id"]
        .as_u64()
        .unwrap();
    let args = json!({ "pid": pid, "window_id": window, "include_screenshot": false });
    let read = || {
        rt.block_on(registry.call(&ctx, "get_window_state", args.clone()))
            .expect("get_window_state")
            .structured
    };
    // The app exports a big tree a while after its window shows: wait (bounded) until a
    // read holds every button, then until the machine is quiet.
    let deadline = Instant::now() + std::time::Duration::from_secs(120);
    let mut state = read();
    while buttons_in(&state) < size && Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(500));
        state = read();
    }
    machine::wait_until_quiet();
    let runs = runs(size);
    let mut samples = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        state = read();
        samples.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let cua_p50 = stats::median(samples);
    let title = state["title"].as_str().unwrap_or_default().to_string();
    // A pyatspi walk of a big window takes tens of seconds: two timed walks there.
    let (py_p50, nodes) = pyatspi_walk(sandbox, pid, &title, runs.min(2));
    let read_all = match buttons_in(&state) {
        n if n == size => "all".to_string(),
        n => format!("**{n}**"),
    };
    println!(
        "| {toolkit} | {size} | {nodes} | {read_all} | {cua_p50:.0} ms | {py_p50:.0} ms | {:.1}× | {:.0} ms |",
        py_p50 / cua_p50,
        cua_p50 * 1000.0 / nodes.max(1) as f64
    );
}

/// How many of the grid's buttons ("Button K") an answer holds.
fn buttons_in(state: &Value) -> usize {
    state["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["role"] == "button")
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("Button ")))
        .count()
}

/// The median of `runs` pyatspi walks of the window (after one untimed), and the nodes it
/// read.
fn pyatspi_walk(sandbox: &Sandbox, pid: u64, title: &str, runs: usize) -> (f64, u64) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/support/pyatspi_walk.py"
    );
    let mut py = sandbox.command("/usr/bin/python3");
    py.args([script, &pid.to_string(), title, &(runs + 1).to_string()]);
    let output = py.output().expect("run pyatspi walk");
    assert!(
        output.status.success(),
        "pyatspi walk failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("pyatspi json");
    let samples: Vec<f64> = report["times_ms"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .filter_map(Value::as_f64)
        .collect();
    (
        stats::median(samples),
        report["nodes"].as_u64().unwrap_or(0),
    )
}
