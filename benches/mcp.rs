//! Benchmark: MCP over stdio. The round trip of a trivial tool (get_recording_state)
//! through `cua mcp` (target p50 ≤ 1 ms), and get_window_state (tree + screenshot, the
//! image base64-encoded in the reply) over MCP next to the same call in-process, same run.
//! `cargo bench --bench mcp`.

#[path = "../tests/support/mcp_client.rs"]
mod mcp_client;
#[path = "support/stats.rs"]
mod stats;

use std::time::Instant;

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use mcp_client::McpClient;
use serde_json::json;
use stats::median_p95;

const TRIVIAL: usize = 500;
const STATES: usize = 20;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1600,
        height: 900,
    })
    .expect("sandbox");
    let envs = sandbox.env();
    let mut client = McpClient::start(&envs, &[]);

    let mut trivial = Vec::new();
    for _ in 0..TRIVIAL {
        let t = Instant::now();
        let r = client.call("get_recording_state", json!({}));
        trivial.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(r["isError"], false);
    }
    let (p50, p95) = median_p95(trivial);
    println!("| MCP over stdio | calls | p50 | p95 | target |");
    println!("|---|---|---|---|---|");
    println!(
        "| get_recording_state round trip | {TRIVIAL} | {p50:.3} ms | {p95:.3} ms | p50 ≤ 1 ms |"
    );

    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    println!();
    println!("| get_window_state (tree + screenshot) | MCP p50 | in-process p50 | ratio |");
    println!("|---|---|---|---|");
    for app in ["Calculator", "gtk3-widget-factory"] {
        let launched = rt
            .block_on(registry.call(&ctx, "launch_app", json!({ "name": app })))
            .unwrap()
            .structured;
        let args =
            json!({ "pid": launched["pid"], "window_id": launched["windows"][0]["window_id"] });
        // Warm both paths (the first walk of a GTK4 app fills its cache).
        rt.block_on(registry.call(&ctx, "get_window_state", args.clone()))
            .unwrap();
        client.call("get_window_state", args.clone());
        let mut over_mcp = Vec::new();
        let mut in_process = Vec::new();
        for _ in 0..STATES {
            let t = Instant::now();
            let r = client.call("get_window_state", args.clone());
            over_mcp.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(r["isError"], false, "{r}");
            let t = Instant::now();
            rt.block_on(registry.call(&ctx, "get_window_state", args.clone()))
                .unwrap();
            in_process.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let (m, _) = median_p95(over_mcp);
        let (i, _) = median_p95(in_process);
        println!("| {app} | {m:.1} ms | {i:.1} ms | {:.2}x |", m / i);
    }
    client.finish();
}
