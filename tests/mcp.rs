//! `cua mcp` driven by a client no one here wrote: the official MCP Python SDK (PyPI `mcp`,
//! installed into a venv under target/). Plus raw JSON-RPC abuse over stdio: malformed
//! lines, unknown methods and tools, wrong argument types, a 10 MB argument; the server
//! answers each with an error and keeps serving.

mod common;
#[path = "support/npm.rs"]
mod npm;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cua::sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};

const MCP_SDK: &str = "mcp==2.3.0";

/// A venv with the Python SDK, made once.
fn python_with_sdk() -> PathBuf {
    common::python_venv("mcp-venv", MCP_SDK)
}

const TS_SDK: &str = "@modelcontextprotocol/sdk@1.32.2";

/// A folder with the TypeScript SDK installed and the client script next to it (ES
/// modules resolve packages from the script's folder), made once.
fn node_client_with_sdk() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-node");
    npm::install_once(&dir, &[TS_SDK, "ajv@8"]);
    let script = dir.join("mcp_ts_client.mjs");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_ts_client.mjs"),
        &script,
    )
    .unwrap();
    script
}

#[test]
fn the_python_sdk_lists_tools_observes_clicks_records_and_replays() {
    let python = python_with_sdk();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_python_client.py");
    drive_with_official_client(Command::new(python).arg(script), "py");
}

#[test]
fn the_typescript_sdk_lists_tools_observes_clicks_records_and_replays() {
    let script = node_client_with_sdk();
    drive_with_official_client(Command::new("node").arg(script), "ts");
}

/// Runs an SDK client script (args: cua binary, recording folder) against a fresh sandbox
/// and checks what it saw, the app's own state, and the recording.
fn drive_with_official_client(client: &mut Command, label: &str) {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let recording =
        std::env::temp_dir().join(format!("cua-mcp-rec-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&recording);
    let out = client
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
    // The action tools declare the schema of their structured result.
    let actions = [
        "click",
        "double_click",
        "drag",
        "hotkey",
        "move_cursor",
        "press_key",
        "right_click",
        "scroll",
        "set_value",
        "type_text",
    ];
    assert_eq!(seen["output_schemas"], json!(actions), "{seen}");
    if let Some(valid) = seen.get("output_valid") {
        assert_eq!(valid, &json!([true, true]), "{seen}");
    }
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
    assert_eq!(
        by_id(5)["result"]["structuredContent"]["error"],
        "invalid_arguments"
    );
    assert_eq!(by_id(6)["result"]["isError"], false);
    assert_eq!(by_id(6)["result"]["structuredContent"]["enabled"], false);
}

#[path = "support/mcp_client.rs"]
mod mcp_client;
use mcp_client::McpClient;

/// One `cua mcp` process: the calls in order, their results.
fn mcp_calls(envs: &[(String, String)], calls: &[(&str, Value)]) -> Vec<Value> {
    let mut client = McpClient::start(envs, &[]);
    let results = calls
        .iter()
        .map(|(t, a)| client.call(t, a.clone()))
        .collect();
    // The server finalizes (a recording, if any) on disconnect.
    client.finish();
    results
}

#[test]
fn set_config_in_a_session_stays_in_memory_and_the_cli_persists_the_global_default() {
    let home = std::env::temp_dir().join(format!("cua-config-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let envs = vec![("XDG_CONFIG_HOME".to_string(), home.display().to_string())];
    let file = home.join("cua/config.json");

    let r = mcp_calls(
        &envs,
        &[
            (
                "set_config",
                json!({"key": "max_image_dimension", "value": 640}),
            ),
            ("get_config", json!({})),
            (
                "set_config",
                json!({"key": "max_image_dimension", "value": "big"}),
            ),
            ("set_config", json!({"key": "no_such_key", "value": 1})),
        ],
    );
    assert_eq!(r[0]["isError"], false, "{r:?}");
    assert_eq!(r[1]["structuredContent"]["max_image_dimension"], 640);
    assert_eq!(
        r[1]["structuredContent"]["overridden"],
        json!(["max_image_dimension"])
    );
    assert!(
        r[2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`value`"),
        "{r:?}"
    );
    assert!(
        r[3]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("unknown config key"),
        "{r:?}"
    );
    assert!(
        !file.exists(),
        "a session's set_config never touches the global file"
    );

    // Another session does not see the first one's override.
    let r = mcp_calls(&envs, &[("get_config", json!({}))]);
    assert_eq!(r[0]["structuredContent"]["max_image_dimension"], 0);

    // The anonymous CLI writes the global default, which sessions then start from.
    let out = Command::new(env!("CARGO_BIN_EXE_cua"))
        .args([
            "set_config",
            r#"{"key": "policy.forbidden_apps", "value": ["xterm"]}"#,
        ])
        .envs(envs.iter().cloned())
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(stored["policy"]["forbidden_apps"], json!(["xterm"]));
    assert_eq!(stored["schema_version"], 1);
    let r = mcp_calls(&envs, &[("get_config", json!({}))]);
    assert_eq!(
        r[0]["structuredContent"]["policy"]["forbidden_apps"],
        json!(["xterm"])
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn max_image_dimension_scales_screenshots_frames_and_the_pixels_an_agent_clicks() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let home = std::env::temp_dir().join(format!("cua-config-scale-{}", std::process::id()));
    let mut envs = sandbox.env();
    envs.push(("XDG_CONFIG_HOME".into(), home.display().to_string()));
    let r = mcp_calls(&envs, &[("launch_app", json!({"name": "Calculator"}))]);
    let (pid, window) = (
        r[0]["structuredContent"]["pid"].clone(),
        r[0]["structuredContent"]["windows"][0]["window_id"].clone(),
    );
    let state = |envs: &[(String, String)], max: Option<u32>| {
        let mut calls = vec![];
        if let Some(m) = max {
            calls.push((
                "set_config",
                json!({"key": "max_image_dimension", "value": m}),
            ));
        }
        calls.push((
            "get_window_state",
            json!({"pid": pid, "window_id": window, "include_elements": true}),
        ));
        mcp_calls(envs, &calls).pop().unwrap()
    };
    // gnome-calculator settles its first layout a moment after its window shows (its
    // height changes by 12-25 px): wait until two reads agree, bounded.
    let size = |s: &Value| {
        (
            s["screenshot"]["width"].clone(),
            s["screenshot"]["height"].clone(),
        )
    };
    let mut full = state(&envs, None)["structuredContent"].clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let again = state(&envs, None)["structuredContent"].clone();
        let stable = size(&again) == size(&full);
        full = again;
        if stable || std::time::Instant::now() >= deadline {
            break;
        }
    }
    let small_result = state(&envs, Some(200));
    let small = small_result["structuredContent"].clone();
    let (fw, fh) = (
        full["screenshot"]["width"].as_f64().unwrap(),
        full["screenshot"]["height"].as_f64().unwrap(),
    );
    let (sw, sh) = (
        small["screenshot"]["width"].as_f64().unwrap(),
        small["screenshot"]["height"].as_f64().unwrap(),
    );
    assert_eq!(sw.max(sh), 200.0, "{small}");
    let scale = small["screenshot"]["scale"].as_f64().unwrap();
    assert!(
        (scale - 200.0 / fw.max(fh)).abs() < 1e-9,
        "full {fw}x{fh}, small {sw}x{sh}, scale {scale}"
    );
    let seven = |s: &Value| {
        s["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "7")
            .unwrap()["pixel_frame"]
            .clone()
    };
    let (f, sf) = (seven(&full), seven(&small));
    assert!((sf["x"].as_f64().unwrap() - f["x"].as_f64().unwrap() * scale).abs() <= 1.0);

    // A pixel click at the centre of the scaled frame presses 7 (read from the app's tree).
    let cx = sf["x"].as_f64().unwrap() + sf["w"].as_f64().unwrap() / 2.0;
    let cy = sf["y"].as_f64().unwrap() + sf["h"].as_f64().unwrap() / 2.0;
    let r = mcp_calls(
        &envs,
        &[
            (
                "set_config",
                json!({"key": "max_image_dimension", "value": 200}),
            ),
            (
                "click",
                json!({"pid": pid, "window_id": window, "x": cx, "y": cy}),
            ),
        ],
    );
    assert_eq!(r[1]["isError"], false, "{r:?}");
    let mut shown = String::new();
    for _ in 0..50 {
        let s = state(&envs, None)["structuredContent"].clone();
        shown = s["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| {
                e["role"] == "text"
                    && e["states"]
                        .as_array()
                        .is_some_and(|s| s.iter().any(|s| s == "editable"))
            })
            .and_then(|e| e["value"].as_str())
            .unwrap_or("")
            .to_string();
        if shown == "7" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(shown, "7");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn the_policy_refuses_forbidden_apps_combos_and_control_characters_and_recording_marks_them() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1024,
        height: 700,
        ..Default::default()
    })
    .expect("sandbox");
    let home = std::env::temp_dir().join(format!("cua-policy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join("cua")).unwrap();
    // The policy file: combos in mixed notations; the calculator needs approval.
    std::fs::write(
        home.join("cua/policy.toml"),
        "forbidden_key_combos = [\"⌘Q\", \"^W\", \"⌥⇧T\", \"Alt+F4\"]\nrequire_approval_for_app = [\"gnome-calculator\"]\n",
    )
    .unwrap();
    let mut envs = sandbox.env();
    envs.push(("XDG_CONFIG_HOME".into(), home.display().to_string()));
    let recording = home.join("rec");
    let r = mcp_calls(
        &envs,
        &[
            (
                "set_config",
                json!({"key": "policy.forbidden_apps", "value": ["mousepad"]}),
            ),
            ("launch_app", json!({"name": "mousepad"})),
            ("launch_app", json!({"name": "gnome-calculator"})),
            (
                "set_config",
                json!({"key": "policy.approved_apps", "value": ["gnome-calculator"]}),
            ),
            ("launch_app", json!({"name": "gnome-calculator"})),
            ("click", json!({"pid": 999_999, "x": 1, "y": 1})),
        ],
    );
    let text = |v: &Value| v["content"][0]["text"].as_str().unwrap_or("").to_string();
    assert_eq!(r[1]["structuredContent"]["error"], "refused", "{r:?}");
    assert!(text(&r[1]).contains("mousepad is a forbidden app"), "{r:?}");
    assert!(
        text(&r[2]).contains("approval required for gnome-calculator"),
        "{r:?}"
    );
    assert_eq!(r[4]["isError"], false, "approved: {r:?}");
    let pid = r[4]["structuredContent"]["pid"].clone();
    assert!(
        text(&r[5]).contains("cannot be identified"),
        "fail closed: {r:?}"
    );

    let r = mcp_calls(
        &envs,
        &[
            (
                "set_config",
                json!({"key": "policy.approved_apps", "value": ["gnome-calculator"]}),
            ),
            (
                "set_recording",
                json!({"enabled": true, "output_dir": recording}),
            ),
            ("hotkey", json!({"pid": pid, "keys": ["cmd", "q"]})),
            (
                "press_key",
                json!({"pid": pid, "key": "w", "modifiers": ["control"]}),
            ),
            (
                "press_key",
                json!({"pid": pid, "key": "T", "modifiers": ["shift", "option"]}),
            ),
            (
                "type_text",
                json!({"pid": pid, "text": "press Command-Q now"}),
            ),
            ("type_text", json!({"pid": pid, "text": "bell\u{7}"})),
            (
                "type_text",
                json!({"pid": pid, "text": "tab\tand\nnewline are fine"}),
            ),
            // Keysym and code-point notations, and meta (Alt), resolve as the tools do.
            (
                "press_key",
                json!({"pid": pid, "key": "0x77", "modifiers": ["ctrl"]}),
            ),
            ("hotkey", json!({"pid": pid, "keys": ["ctrl", "U+0077"]})),
            ("hotkey", json!({"pid": pid, "keys": ["meta", "f4"]})),
            ("set_recording", json!({"enabled": false})),
        ],
    );
    for (i, why) in [
        (2, "super+q is forbidden"),
        (3, "ctrl+w is forbidden"),
        (4, "alt+shift+t is forbidden"),
        (5, "super+q is forbidden"),
        (6, "U+0007"),
        (8, "ctrl+w is forbidden"),
        (9, "ctrl+w is forbidden"),
        (10, "alt+f4 is forbidden"),
    ] {
        assert_eq!(r[i]["structuredContent"]["error"], "refused", "{i}: {r:?}");
        assert!(text(&r[i]).contains(why), "{i}: {}", text(&r[i]));
    }
    assert_ne!(r[7]["structuredContent"]["error"], "refused", "{r:?}");
    // The refusals are turns of the recording, marked refused.
    for turn in 1..=5 {
        let action: Value = serde_json::from_slice(
            &std::fs::read(recording.join(format!("turn-{turn:05}/action.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(action["result"]["refused"], true, "turn {turn}: {action}");
    }
    // A broken policy file refuses everything, naming its line.
    std::fs::write(home.join("cua/policy.toml"), "forbidden_apps = [\n").unwrap();
    let r = mcp_calls(&envs, &[("launch_app", json!({"name": "mousepad"}))]);
    assert!(
        text(&r[0]).contains("policy.toml") && text(&r[0]).contains("line"),
        "{r:?}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn two_clients_of_one_daemon_keep_their_caches_config_and_recordings_apart() {
    let h = common::Home::start("sessions", (1024, 700));
    let (home, envs) = (&h.dir, &h.envs);
    let daemon = h.daemon();
    let mut a = McpClient::start(envs, &daemon.socket_args());
    let mut b = McpClient::start(envs, &daemon.socket_args());

    let launched = a.call("launch_app", json!({"name": "Calculator"}));
    let (pid, window) = (
        launched["structuredContent"]["pid"].clone(),
        launched["structuredContent"]["windows"][0]["window_id"].clone(),
    );
    let state = a.call(
        "get_window_state",
        json!({"pid": pid, "window_id": window, "include_screenshot": false, "include_elements": true}),
    );
    let seven = state["structuredContent"]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "7")
        .unwrap()["element_index"]
        .clone();
    // B never read the window: A's element cache is not B's.
    let r = b.call(
        "click",
        json!({"pid": pid, "window_id": window, "element_index": seven}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("get_window_state first"),
        "{r}"
    );

    // Config overrides stay in their session.
    a.call(
        "set_config",
        json!({"key": "max_image_dimension", "value": 300}),
    );
    let rb = b.call("get_config", json!({}));
    assert_eq!(rb["structuredContent"]["max_image_dimension"], 0, "{rb}");
    let ra = a.call("get_config", json!({}));
    assert_eq!(ra["structuredContent"]["max_image_dimension"], 300, "{ra}");

    // A records; B's calls meanwhile are not A's turns.
    let rec = home.join("rec");
    let r = a.call("set_recording", json!({"enabled": true, "output_dir": rec}));
    assert_eq!(r["isError"], false, "{r}");
    let stb = b.call(
        "get_window_state",
        json!({"pid": pid, "window_id": window, "include_screenshot": false, "include_elements": true}),
    );
    let six = stb["structuredContent"]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "6")
        .unwrap()["element_index"]
        .clone();
    assert_eq!(
        b.call(
            "click",
            json!({"pid": pid, "window_id": window, "element_index": six})
        )["isError"],
        false
    );
    assert_eq!(
        a.call(
            "click",
            json!({"pid": pid, "window_id": window, "element_index": seven})
        )["isError"],
        false
    );
    a.call("set_recording", json!({"enabled": false}));
    let turns: Vec<String> = std::fs::read_dir(&rec)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("turn-"))
        .collect();
    assert_eq!(turns, vec!["turn-00001".to_string()], "only A's click");
    let action: Value =
        serde_json::from_slice(&std::fs::read(rec.join("turn-00001/action.json")).unwrap())
            .unwrap();
    assert_eq!(action["target"]["name"], "7");
    assert!(action["arguments"].get("session").is_none(), "{action}");
    drop(a);
    drop(b);
}

#[test]
fn a_client_that_disconnects_mid_recording_leaves_a_finalized_recording() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 800,
        height: 600,
        ..Default::default()
    })
    .expect("sandbox");
    let dir = std::env::temp_dir().join(format!("cua-mcp-disconnect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let r = mcp_calls(
        &sandbox.env(),
        &[
            (
                "set_recording",
                json!({"enabled": true, "output_dir": dir, "video_experimental": true}),
            ),
            ("move_cursor", json!({"x": 10, "y": 10})),
        ],
    );
    assert_eq!(r[0]["isError"], false, "{r:?}");
    // No set_recording off: the client went away (stdin closed) and the server finalized.
    let session: Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
    assert!(session["stopped_at"].is_string(), "{session}");
    assert_eq!(session["turns_written"], 1, "{session}");
    let video = std::fs::metadata(dir.join("recording.mp4")).unwrap();
    assert!(video.len() > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_daemon_client_keeps_error_kinds_and_its_recording_is_finalized_when_it_is_killed() {
    let h = common::Home::start("lease", (800, 600));
    let (home, envs) = (&h.dir, &h.envs);
    let daemon = h.daemon();
    let mut a = McpClient::start(envs, &daemon.socket_args());
    // Error kinds survive the daemon's socket.
    a.call(
        "set_config",
        json!({"key": "policy.forbidden_key_combos", "value": ["ctrl+w"]}),
    );
    let r = a.call("hotkey", json!({"pid": 1, "keys": ["ctrl", "w"]}));
    assert_eq!(r["structuredContent"]["error"], "refused", "{r}");
    let r = a.call("click", json!({"pid": 1, "element_index": "x"}));
    assert_eq!(r["structuredContent"]["error"], "invalid_arguments", "{r}");

    let rec = home.join("rec");
    let r = a.call("set_recording", json!({"enabled": true, "output_dir": rec}));
    assert_eq!(r["isError"], false, "{r}");
    a.call("move_cursor", json!({"x": 10, "y": 10}));
    // Killed: no set_recording off, no stdin closed in order; the daemon sees its lease
    // connection close and finalizes the session.
    drop(a);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let session = loop {
        let s: Option<Value> = std::fs::read(rec.join("session.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        match s {
            Some(s) if s["stopped_at"].is_string() => break s,
            _ if std::time::Instant::now() > deadline => panic!("not finalized: {s:?}"),
            _ => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    };
    assert_eq!(session["turns_written"], 1, "{session}");
}

/// What an agent reads comes once and plainly: schemas without `session` in each (the
/// instructions say it once), Rust integer formats, nulls or definitions; get_window_state's
/// tree once (in the text) when the call says include_elements: false, and a value cut at
/// the text limit says so (read back from the editor holding 4,500 characters).
#[test]
fn responses_are_lean_the_tree_comes_once_and_a_cut_value_says_so() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1024,
        height: 700,
        ..Default::default()
    })
    .expect("sandbox");
    let mut client = McpClient::start(&sandbox.env(), &[]);
    let init = client.initialized.clone();
    assert!(
        init["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("`session`"),
        "{init}"
    );
    let listed = client.request("tools/list", json!({}))["result"].clone();
    let text = listed.to_string();
    for leftover in [
        "$defs",
        "$ref",
        "\"format\":\"uint",
        "\"null\"",
        "`Background`",
    ] {
        assert!(!text.contains(leftover), "tools/list holds {leftover}");
    }
    let click = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "click")
        .unwrap();
    let props = &click["inputSchema"]["properties"];
    assert_eq!(props["count"]["maximum"], 3, "{props}");
    assert_eq!(
        props["delivery_mode"]["enum"],
        json!(["background", "foreground"])
    );

    let launched = client.call("launch_app", json!({"name": "mousepad"}));
    let (pid, window) = (
        launched["structuredContent"]["pid"].clone(),
        launched["structuredContent"]["windows"][0]["window_id"].clone(),
    );
    let args = json!({"pid": pid, "window_id": window, "include_screenshot": false});
    // By default the structured result has what cua-driver's clients parse (the tree and
    // the elements); with include_elements: false the tree comes once, as text.
    let full = client.call("get_window_state", args.clone());
    let structured = full["structuredContent"].as_object().unwrap();
    assert!(
        structured["tree_markdown"]
            .as_str()
            .unwrap()
            .contains("- [0] ")
    );
    assert_eq!(
        structured["elements"].as_array().unwrap().len() as u64,
        structured["element_count"].as_u64().unwrap()
    );
    let mut without = args.clone();
    without["include_elements"] = json!(false);
    let lean = client.call("get_window_state", without);
    let structured = lean["structuredContent"].as_object().unwrap();
    assert!(!structured.contains_key("elements") && !structured.contains_key("tree_markdown"));
    assert!(structured["element_count"].as_u64().unwrap() > 0);
    let shown = lean["content"][0]["text"].as_str().unwrap();
    assert!(shown.contains("- [0] "), "the tree is in the text: {shown}");

    let mut with = args.clone();
    with["include_elements"] = json!(true);
    let editor = |client: &mut McpClient| {
        client.call("get_window_state", with.clone())["structuredContent"]["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == "text")
            .unwrap()
            .clone()
    };
    let before = editor(&mut client);
    let typed = "0123456789".repeat(450);
    let r = client.call(
        "type_text",
        json!({"pid": pid, "window_id": window, "element_index": before["element_index"], "text": typed}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let editor = editor(&mut client);
    assert_eq!(editor["value"].as_str().unwrap().chars().count(), 4000);
    assert_eq!(editor["value_truncated"], true);
    client.finish();
}
