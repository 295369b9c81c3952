//! Benchmark: the `page` tool's round trip as an agent pays it, in the project's test page
//! in a Chromium and a Firefox that cua launched (one sandbox each, one at a time). Per
//! browser, 5 warm-up calls then 50 measured calls through the tool registry, back to
//! back: `get_text`, `query_dom` (buttons and inputs with two attributes), and, as the peer
//! an agent would otherwise use for the same text, `get_window_state` without a screenshot
//! (window lookup, accessibility tree, Markdown). Each call opens the debugging connection,
//! finds the window's tab, evaluates and closes. Each browser runs twice: as launch_app
//! starts it (behind the `cua-page-relay` helper, reachable by this user only: Chromium's
//! pipe, Firefox's one BiDi session held) and, as the peer, with a loopback port of its own
//! (`--remote-debugging-port=0`, a WebSocket per call: what launch_app gave them before).
//! `cargo bench --bench page`.
//!
//! Target (issue #15): `page get_text` on a launched Chromium ≤ 20 ms median.

#[path = "support/stats.rs"]
mod stats;

use std::time::{Duration, Instant};

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

const RUNS: usize = 50;
const WARMUP: usize = 5;

fn main() {
    let rt = cua::tools::runtime().expect("runtime");
    let registry = ToolRegistry::new();
    let url = concat!(
        "file://",
        env!("CARGO_MANIFEST_DIR"),
        "/harness/apps/page.html"
    );
    println!(
        "| browser | page get_text p50 | p95 | page query_dom p50 | p95 | get_window_state (no image) p50 | p95 | tree / get_text |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut chromium_get_text = f64::NAN;
    let mut port_get_text = f64::NAN;
    let mut firefox_get_text = f64::NAN;
    let mut firefox_port_get_text = f64::NAN;
    let runs: [(&str, &str, &[&str]); 4] = [
        ("chromium (relay)", "chromium", &[]),
        (
            "chromium (port)",
            "chromium",
            &["--remote-debugging-port=0"],
        ),
        ("firefox-esr (relay)", "firefox-esr", &[]),
        (
            "firefox-esr (port)",
            "firefox-esr",
            &["--remote-debugging-port=0"],
        ),
    ];
    for (label, browser, flags) in runs {
        let sandbox = Sandbox::start(SandboxOptions {
            width: 1280,
            height: 800,
            ..Default::default()
        })
        .expect("sandbox");
        let ctx = ToolContext::for_desktop(sandbox.desktop());
        let call = |tool: &str, args: Value| rt.block_on(registry.call(&ctx, tool, args));
        let launched = call(
            "launch_app",
            json!({ "name": browser, "urls": [url], "additional_arguments": flags }),
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        let (pid, window_id) = (
            launched.structured["pid"].clone(),
            launched.structured["windows"][0]["window_id"].clone(),
        );
        let target = json!({ "pid": pid, "window_id": window_id });
        let with = |extra: Value| {
            let mut args = target.clone();
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            args
        };
        // The page has loaded once its text shows.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !call("page", with(json!({ "action": "get_text" })))
            .map(|o| {
                o.structured["text"]
                    .as_str()
                    .unwrap_or("")
                    .contains("not clicked")
            })
            .unwrap_or(false)
        {
            assert!(
                Instant::now() < deadline,
                "{browser}: the page did not load"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let measure = |tool: &str, args: Value| {
            let mut samples = Vec::with_capacity(RUNS);
            for i in 0..WARMUP + RUNS {
                let started = Instant::now();
                call(tool, args.clone()).unwrap_or_else(|e| panic!("{browser} {tool}: {e}"));
                if i >= WARMUP {
                    samples.push(started.elapsed().as_secs_f64() * 1000.0);
                }
            }
            stats::median_p95(samples)
        };
        let text = measure("page", with(json!({ "action": "get_text" })));
        let dom = measure(
            "page",
            with(
                json!({ "action": "query_dom", "css_selector": "button, input",
                         "attributes": ["id", "value"] }),
            ),
        );
        let tree = measure(
            "get_window_state",
            with(json!({ "include_screenshot": false })),
        );
        match label {
            "chromium (relay)" => chromium_get_text = text.0,
            "chromium (port)" => port_get_text = text.0,
            "firefox-esr (relay)" => firefox_get_text = text.0,
            "firefox-esr (port)" => firefox_port_get_text = text.0,
            _ => {}
        }
        println!(
            "| {label} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2}x |",
            text.0,
            text.1,
            dom.0,
            dom.1,
            tree.0,
            tree.1,
            tree.0 / text.0
        );
    }
    println!(
        "\nthe relay's cost: Chromium get_text {chromium_get_text:.2} ms through it, {port_get_text:.2} ms on a port ({:.2}x); Firefox {firefox_get_text:.2} ms, {firefox_port_get_text:.2} ms ({:.2}x)",
        chromium_get_text / port_get_text,
        firefox_get_text / firefox_port_get_text
    );
    println!(
        "page get_text on a launched Chromium: {chromium_get_text:.2} ms median (target ≤ 20 ms: {})",
        if chromium_get_text <= 20.0 {
            "met"
        } else {
            "NOT met"
        }
    );
}
