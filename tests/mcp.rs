//! `cua mcp` driven by a client no one here wrote: the official MCP Python SDK (PyPI `mcp`,
//! installed into a venv under target/). Plus raw JSON-RPC abuse over stdio: malformed
//! lines, unknown methods and tools, wrong argument types, a 10 MB argument; the server
//! answers each with an error and keeps serving.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cua::sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};

const MCP_SDK: &str = "mcp==2.3.0";

/// A venv with the Python SDK, made once.
fn python_with_sdk() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv");
    let python = venv.join("bin/python");
    let ready = venv.join(".installed");
    if !ready.exists() {
        let status = Command::new("/usr/bin/python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 -m venv (apt: python3-venv)");
        assert!(status.success(), "python3 -m venv failed");
        let out = Command::new(venv.join("bin/pip"))
            .args(["install", "-q", MCP_SDK])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pip install {MCP_SDK}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(&ready, MCP_SDK).unwrap();
    }
    python
}

#[test]
fn the_python_sdk_lists_tools_observes_clicks_records_and_replays() {
    let python = python_with_sdk();
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
    })
    .expect("sandbox");
    let recording = std::env::temp_dir().join(format!("cua-mcp-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&recording);
    let out = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_python_client.py"))
        .arg(env!("CARGO_BIN_EXE_cua"))
        .arg(&recording)
        .envs(sandbox.env())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(seen["server"], "cua");
    let registry = cua::tools::ToolRegistry::new();
    let names: Vec<&str> = registry.tools().map(|t| t.name()).collect();
    assert_eq!(seen["tools"].as_array().unwrap().len(), names.len());
    assert!(
        seen["read_only"]
            .as_array()
            .unwrap()
            .contains(&json!("get_window_state"))
    );
    assert!(
        !seen["read_only"]
            .as_array()
            .unwrap()
            .contains(&json!("click"))
    );
    assert_eq!(seen["state_types"], json!(["text", "image"]));
    assert!(seen["image_bytes"].as_u64().unwrap() > 1000, "{seen}");
    assert_eq!(seen["first_click"]["is_error"], false, "{seen}");
    assert_eq!(seen["bad_call"]["is_error"], true);
    assert!(
        seen["bad_call"]["text"].as_str().unwrap().contains("`pid`"),
        "{seen}"
    );
    // Effects, read from the calculator's own tree.
    assert_eq!(seen["display_after_clicks"], "42", "{seen}");
    assert_eq!(seen["display_before_replay"], "7", "{seen}");
    assert_eq!(seen["display_after_replay"], "42", "{seen}");
    let replay = &seen["replay"]["structured"];
    assert_eq!(replay["attempted"], 3, "{seen}");
    assert_eq!(replay["failed"], 0, "{seen}");
    // The recording was finalized: three turns and a stopped session.
    let session: Value =
        serde_json::from_slice(&std::fs::read(recording.join("session.json")).unwrap()).unwrap();
    assert!(session["stopped_at"].is_string(), "{session}");
    assert!(recording.join("turn-00003/action.json").is_file());
    assert!(!recording.join("turn-00004").exists());
    let _ = std::fs::remove_dir_all(&recording);
}

#[test]
fn bad_json_rpc_gets_error_responses_and_the_server_keeps_serving() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("mcp")
        .env_remove("DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let big = "x".repeat(10_000_000);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        "this is not json {".to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "click", "arguments": {"pid": "seven"}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "type_text", "arguments": {"pid": 1, "text": big}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "get_recording_state", "arguments": {}}}).to_string(),
    ];
    for l in &lines {
        stdin.write_all(l.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: i64| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no reply {id}: {replies:?}"))
    };
    assert!(
        replies
            .iter()
            .any(|r| r["id"].is_null() && r["error"]["code"] == -32700),
        "{replies:?}"
    );
    assert_eq!(by_id(2)["error"]["code"], -32601);
    assert_eq!(by_id(3)["error"]["code"], -32602);
    assert!(
        by_id(3)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );
    assert_eq!(by_id(4)["result"]["isError"], true);
    assert_eq!(
        by_id(4)["result"]["structuredContent"]["error"],
        "invalid_arguments"
    );
    assert_eq!(by_id(5)["result"]["isError"], true);
    assert_eq!(by_id(6)["result"]["isError"], false);
    assert_eq!(by_id(6)["result"]["structuredContent"]["enabled"], false);
}
