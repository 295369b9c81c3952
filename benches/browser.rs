//! Benchmark: an agent's observe → act loop in a Chromium page, as it pays it, back to
//! back, in one browser that launch_app started (its endpoint behind the page relay), on
//! the project's browser test page. Three ways to click the page's "Go" button once
//! the agent has looked:
//! - browser tools: get_browser_state (the tab's refs) → browser_click (trusted input at the
//!   ref's centre, after the cover check);
//! - `page`: query_dom (the buttons) → click_element (the element's click());
//! - the accessibility tree: get_window_state without a screenshot → click by element index.
//!
//! The browser-tools loop is measured again with recording on.
//!
//! 5 warm-up loops then 30 measured, each through the tool registry. Every click adds a
//! line to the page's journal, so later reads are a little larger, alike for all three.
//! `cargo bench --bench browser`.

#[path = "support/stats.rs"]
mod stats;

use std::time::{Duration, Instant};

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

const RUNS: usize = 30;
const WARMUP: usize = 5;

fn main() {
    let rt = cua::tools::runtime().expect("runtime");
    let registry = ToolRegistry::new();
    let url = concat!(
        "file://",
        env!("CARGO_MANIFEST_DIR"),
        "/harness/apps/browser.html"
    );
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let call = |tool: &str, args: Value| {
        rt.block_on(registry.call(&ctx, tool, args))
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    };
    let launched = call("launch_app", json!({ "name": "chromium", "urls": [url] }));
    let (pid, window_id) = (
        launched.structured["pid"].clone(),
        launched.structured["windows"][0]["window_id"].clone(),
    );
    // Bound once the window's title names the page's tab.
    let deadline = Instant::now() + Duration::from_secs(30);
    let bound = loop {
        let out = rt.block_on(registry.call(
            &ctx,
            "get_browser_state",
            json!({ "pid": pid, "window_id": window_id }),
        ));
        if let Ok(out) = out {
            if out.structured["binding_quality"] == "exact" {
                break out.structured;
            }
        }
        assert!(Instant::now() < deadline, "the page never loaded");
        std::thread::sleep(Duration::from_millis(200));
    };
    let tab = json!({
        "target_id": bound["target_id"],
        "tab_id": bound["tabs"].as_array().unwrap().iter().find(|t| t["active"] == true).unwrap()["tab_id"],
    });
    let window = json!({ "pid": pid, "window_id": window_id });
    let with = |base: &Value, extra: Value| {
        let mut args = base.clone();
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };

    let measure = |one_loop: &dyn Fn()| {
        let mut samples = Vec::with_capacity(RUNS);
        for i in 0..WARMUP + RUNS {
            let started = Instant::now();
            one_loop();
            if i >= WARMUP {
                samples.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        stats::median_p95(samples)
    };
    // The ref of the page's "Go" button in a fresh snapshot.
    let go_ref = || {
        let snap = call("get_browser_state", tab.clone());
        snap.structured["refs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "Go")
            .expect("Go")["ref"]
            .clone()
    };
    let browser_tools = measure(&|| {
        call("browser_click", with(&tab, json!({ "ref": go_ref() })));
    });
    let page_tool = measure(&|| {
        call(
            "page",
            with(
                &window,
                json!({ "action": "query_dom", "css_selector": "button", "attributes": ["id"] }),
            ),
        );
        call(
            "page",
            with(
                &window,
                json!({ "action": "click_element", "selector": "#go" }),
            ),
        );
    });
    let tree = measure(&|| {
        let state = call(
            "get_window_state",
            with(&window, json!({ "include_screenshot": false })),
        );
        let go = state.structured["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == "button" && (e["label"] == "Go" || e["name"] == "Go"))
            .expect("Go in the tree")["element_index"]
            .clone();
        call("click", with(&window, json!({ "element_index": go })));
    });
    // The loop's halves, apart.
    let observe = measure(&|| {
        call("get_browser_state", tab.clone());
    });
    let go = go_ref();
    let act = measure(&|| {
        call("browser_click", with(&tab, json!({ "ref": go })));
    });
    let dom_act = measure(&|| {
        call(
            "browser_click",
            with(&tab, json!({ "ref": go, "input_route": "dom_event" })),
        );
    });
    // Last, so that its turns' waits touch no other row: the same loop recorded: each click a turn that keeps its tab's URL and its ref's
    // role and label, with the browser window's states before and after.
    let dir = std::env::temp_dir().join(format!("cua-bench-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    );
    let recorded = measure(&|| {
        call("browser_click", with(&tab, json!({ "ref": go_ref() })));
    });
    call("set_recording", json!({ "enabled": false }));
    let _ = std::fs::remove_dir_all(&dir);
    println!("| observe → act loop (Chromium page) | p50 | p95 | vs browser tools |");
    println!("|---|---|---|---|");
    for (label, (p50, p95)) in [
        ("get_browser_state → browser_click", browser_tools),
        ("the same, recording on", recorded),
        ("page query_dom → page click_element", page_tool),
        ("get_window_state (no image) → click", tree),
        ("get_browser_state alone", observe),
        ("browser_click (trusted) alone", act),
        ("browser_click (dom_event) alone", dom_act),
    ] {
        println!(
            "| {label} | {p50:.1} ms | {p95:.1} ms | {:.2}x |",
            p50 / browser_tools.0
        );
    }
}
