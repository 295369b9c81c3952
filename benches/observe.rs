//! Benchmark: get_window_state latency per app (tree only, and tree + screenshot) next to a
//! pyatspi walk of the same fields in the same run. Apps: GTK 3, GTK 4 (a real app, the
//! conformance fixture, and a big window that does not animate), Qt 5 and Qt 6 fixtures,
//! and a page of ~200 elements in Firefox and Chromium. Prints a Markdown table of medians and
//! p95s. Run with `cargo bench --bench observe` (`CUA_BENCH_APPS="Firefox,Qt 5"` for some
//! rows only).

#[path = "support/stats.rs"]
mod stats;
use stats::median_p95;
#[path = "support/machine.rs"]
mod machine;
use machine::wait_until_quiet;

use std::time::Instant;

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::json;

const RUNS: usize = 30;
const WARMUP: usize = 3;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1920,
        height: 1080,
        ..Default::default()
    })
    .expect("sandbox");
    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    let ctx = ToolContext::for_desktop(sandbox.desktop());

    println!(
        "| app | nodes (pyatspi) | elements | tree p50 | tree p95 | tree+screenshot p50 | tree+screenshot p95 | screenshot size | pyatspi walk p50 | pyatspi p95 | pyatspi / cua tree |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let project = env!("CARGO_MANIFEST_DIR");
    let path = |p: &str, args: &[&str]| json!({ "path": format!("{project}/{p}"), "additional_arguments": args });
    let apps = [
        (
            "gtk3-widget-factory",
            json!({ "name": "gtk3-widget-factory" }),
        ),
        ("Calculator (GTK 4)", json!({ "name": "Calculator" })),
        ("mousepad", json!({ "name": "mousepad" })),
        ("GTK 4 fixture", path("harness/apps/fixture_gtk4.py", &[])),
        ("big GTK 4 window", path("benches/support/big_gtk4.py", &[])),
        ("Qt 5 fixture", path("harness/apps/fixture_qt.py", &["5"])),
        ("Qt 6 fixture", path("harness/apps/fixture_qt.py", &["6"])),
        (
            "Firefox, 200-element page",
            json!({ "name": "firefox-esr", "urls": [format!("file://{project}/benches/support/big_page.html")] }),
        ),
        (
            "Chromium, 200-element page",
            json!({ "name": "chromium", "urls": [format!("file://{project}/benches/support/big_page.html")] }),
        ),
    ];
    // CUA_BENCH_APPS="Firefox,Qt 5" measures only the rows whose name holds one of those.
    let only = std::env::var("CUA_BENCH_APPS").ok();
    for (app, request) in apps {
        if only
            .as_deref()
            .is_some_and(|only| !only.split(',').any(|w| app.contains(w.trim())))
        {
            continue;
        }
        let launched = rt
            .block_on(registry.call(&ctx, "launch_app", request))
            .expect("launch");
        let pid = launched.structured["pid"].as_u64().unwrap();
        // Measured once the desktop is quiet: a browser's first seconds go to its own
        // start-up, and the pyatspi peer below runs after cua's calls, so without this wait
        // cua alone would pay for them.
        wait_until_quiet();
        let window = launched.structured["windows"][0]["window_id"]
            .as_u64()
            .unwrap();

        let measure = |include_screenshot: bool| {
            let args = json!({ "pid": pid, "window_id": window, "include_screenshot": include_screenshot });
            let mut samples = Vec::new();
            let mut last = None;
            for i in 0..WARMUP + RUNS {
                let t = Instant::now();
                let out = rt
                    .block_on(registry.call(&ctx, "get_window_state", args.clone()))
                    .expect("get_window_state");
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                if i >= WARMUP {
                    samples.push(ms);
                }
                last = Some(out);
            }
            (median_p95(samples), last.unwrap())
        };
        let ((tree_p50, tree_p95), tree_out) = measure(false);
        let ((full_p50, full_p95), full_out) = measure(true);
        let shot = &full_out.structured["screenshot"];
        // A browser retitles its window once the page loads: the title now.
        let listed = rt
            .block_on(registry.call(&ctx, "list_windows", json!({})))
            .expect("list_windows");
        let title = listed.structured["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["window_id"] == window)
            .and_then(|w| w["title"].as_str())
            .unwrap()
            .to_string();

        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/support/pyatspi_walk.py"
        );
        let mut py = sandbox.command("/usr/bin/python3");
        py.args([
            script,
            &pid.to_string(),
            &title,
            &(WARMUP + RUNS).to_string(),
        ]);
        let output = py.output().expect("run pyatspi walk");
        if !output.status.success() {
            panic!(
                "pyatspi walk failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let report: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("pyatspi json");
        let py_samples: Vec<f64> = report["times_ms"]
            .as_array()
            .unwrap()
            .iter()
            .skip(WARMUP)
            .map(|v| v.as_f64().unwrap())
            .collect();
        let (py_p50, py_p95) = median_p95(py_samples);
        println!(
            "| {app} | {} | {} | {tree_p50:.1} ms | {tree_p95:.1} ms | {full_p50:.1} ms | {full_p95:.1} ms | {}x{} | {py_p50:.1} ms | {py_p95:.1} ms | {:.1}x |",
            report["nodes"],
            tree_out.structured["element_count"],
            shot["width"],
            shot["height"],
            py_p50 / tree_p50
        );
    }
}
