//! Benchmark: MCP over stdio. The round trip of a trivial tool (get_recording_state)
//! through `cua mcp` (target p50 ≤ 1 ms), and get_window_state (tree + screenshot, the
//! image base64-encoded in the reply) over MCP next to the same call in-process, same run.
//! Then what an agent reads: the size of `tools/list` and of a calculator's
//! get_window_state result (its parts apart), against the sizes measured before the lean
//! responses of #17 (target: 40% smaller, nothing an agent needs lost).
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
/// Sizes before the lean responses (measured on this machine, same calls): tools/list,
/// and a calculator get_window_state's result without its image.
const BEFORE_TOOLS_LIST: usize = 39_288;
const BEFORE_STATE_WITHOUT_IMAGE: usize = 11_831;
const STATES: usize = 20;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1600,
        height: 900,
        ..Default::default()
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
    agent_reads(&mut client, &rt, &registry, &ctx);
    client.finish();
}

/// What an agent pays to read: bytes of JSON, as the client receives them.
fn agent_reads(
    client: &mut McpClient,
    rt: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    ctx: &ToolContext,
) {
    let list = client.request("tools/list", json!({}))["result"].clone();
    let listed = list.to_string().len();
    // Output schemas are for the client's validation; hosts put names, descriptions and
    // input schemas before the model. Each schema costs its bytes plus `,"outputSchema":`.
    let output_schemas: usize = list["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("outputSchema"))
        .map(|s| s.to_string().len() + r#","outputSchema":"#.len())
        .sum();
    let launched = rt
        .block_on(registry.call(ctx, "launch_app", json!({ "name": "Calculator" })))
        .unwrap()
        .structured;
    let args = json!({ "pid": launched["pid"], "window_id": launched["windows"][0]["window_id"] });
    let result = client.call("get_window_state", args);
    let total = result.to_string().len();
    let blocks = result["content"].as_array().cloned().unwrap_or_default();
    let image: usize = blocks
        .iter()
        .filter(|b| b["type"] == "image")
        .map(|b| b["data"].as_str().map_or(0, str::len))
        .sum();
    let text: usize = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().map_or(0, str::len))
        .sum();
    let structured = result["structuredContent"].to_string().len();
    let ratio = |now: usize, before: usize| {
        if before == 0 {
            "-".to_string()
        } else {
            format!("{:.0}% smaller", 100.0 - now as f64 * 100.0 / before as f64)
        }
    };
    println!();
    println!("| What an agent reads (bytes of JSON) | now | before | change |");
    println!("|---|---|---|---|");
    println!(
        "| tools/list | {listed} | {BEFORE_TOOLS_LIST} | {} |",
        ratio(listed, BEFORE_TOOLS_LIST)
    );
    let for_model = listed - output_schemas;
    println!(
        "| — without its outputSchemas (what a host shows the model) | {for_model} | {BEFORE_TOOLS_LIST} | {} |",
        ratio(for_model, BEFORE_TOOLS_LIST)
    );
    println!("| — its outputSchemas (the action tools' result) | {output_schemas} | 0 | |");
    let without_image = total - image;
    println!(
        "| Calculator get_window_state, without the image | {without_image} | {BEFORE_STATE_WITHOUT_IMAGE} | {} |",
        ratio(without_image, BEFORE_STATE_WITHOUT_IMAGE)
    );
    println!("| — its text block | {text} | | |");
    println!("| — its structuredContent | {structured} | | |");
    println!("| — its image (base64 PNG, the same either way) | {image} | | |");
}
