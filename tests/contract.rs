//! cua's contract against cua-driver 0.21's, as that binary answers
//! (tests/support/cua-driver-0.21.json, reduced from its real `tools/list` and `manifest`):
//! every tool cua has under a cua-driver name keeps its arguments, capability tokens, risk
//! class and hints; the launcher contract hermes-agent's main gates on holds. Every
//! difference is listed below with its reason, so a new one fails until it is explained.
//! tools/list is read from `cua mcp` over stdio, opened with an empty `initialize` (as
//! cua-driver's own test kit opens it).

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// cua-driver tools cua does not have yet.
const MISSING_TOOLS: &[(&str, &str)] = &[
    (
        "check_for_update",
        "cua is built from source; there is no release feed to ask",
    ),
    (
        "set_agent_cursor_theme",
        "cua has no cursor themes (set_agent_cursor_style)",
    ),
    (
        "parallel_mouse_drag",
        "not built: concurrent drags need a master pointer each (X input extension MPX); no client seen calls it",
    ),
];

/// cua-driver arguments a cua tool does not take yet: (tool, argument, why).
const MISSING_ARGUMENTS: &[(&str, &str, &str)] = &[];

/// Arguments cua requires where cua-driver does not: (argument, why).
const MORE_REQUIRED: &[(&str, &str)] = &[
    (
        "pid",
        "cua addresses every action to a process; element_token and target {kind: window} supply it",
    ),
    (
        "window_id",
        "page and set_value act on one window; element_token supplies it",
    ),
    (
        "element_index",
        "set_value acts on one element; element_token supplies it",
    ),
];

/// Capability tokens cua withholds or adds: (tool, token, why).
const TOKEN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "type_text",
        "-input.keyboard.type.terminal_safe",
        "cua does not detect terminal emulators to route keys around the text interface",
    ),
    (
        "hotkey",
        "+accessibility.element_tokens",
        "hotkey takes element_token (cua-driver's schema lists it too) and says so",
    ),
    (
        "scroll",
        "+input.scroll.coordinates",
        "cua's scroll takes x, y; hermes sends coordinates only where this token says so",
    ),
];

/// Hints that differ: (tool, why).
const HINT_DIFFERENCES: &[(&str, &str)] = &[(
    "install_ffmpeg",
    "cua downloads nothing (its video helper links FFmpeg): not destructive, not open-world",
)];

/// cua-driver flags of a shared subcommand that cua lacks: (subcommand, flag, why).
const MISSING_FLAGS: &[(&str, &str, &str)] = &[
    (
        "mcp",
        "--direct",
        "cua's MCP server always runs in process unless --socket",
    ),
    (
        "mcp",
        "--claude-code-computer-use-compat",
        "no compat tool surface",
    ),
    ("mcp", "--host-bundle-id", "macOS label"),
    ("serve", "--grant", "cua has no grantable boundary"),
    (
        "serve",
        "--session-policy",
        "deprecated alias of --capability-manifest",
    ),
    (
        "serve",
        "--approve-session-policy",
        "deprecated alias of --approve-capability-manifest",
    ),
    (
        "serve",
        "--claude-code-computer-use-compat",
        "no compat tool surface",
    ),
    ("serve", "--host-bundle-id", "macOS label"),
    (
        "serve",
        "--experimental-history",
        "cua keeps no computer history",
    ),
];

fn reference() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/cua-driver-0.21.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `tools/list` from `cua mcp`, after a bare initialize.
fn tools_list() -> Value {
    mcp_answer(&[], json!({ "method": "tools/list" }))
}

/// What an agent pays for tools/list, in bytes of compact JSON as the wire carries it,
/// and what each part of it costs (printed: docs/performance.md's table comes from here,
/// `cargo test --test contract tools_list_costs -- --nocapture`). The arguments many
/// tools share are described once, in the server's instructions, not in 60 schemas; the
/// `core` profile (CUA_TOOLS=core) lists what an agent's loop and a recorded test use.
#[test]
fn tools_list_costs_what_the_docs_say() {
    let size = |v: &Value| serde_json::to_string(v).unwrap().len();
    let full = tools_list();
    let tools = full["tools"].as_array().unwrap();
    let mut parts: std::collections::BTreeMap<String, usize> = Default::default();
    for t in tools {
        for (k, v) in t.as_object().unwrap() {
            *parts.entry(k.clone()).or_default() += size(v);
        }
        for prop in t["inputSchema"]["properties"].as_object().unwrap().values() {
            let d = prop["description"].as_str().unwrap_or("");
            *parts.entry("inputSchema: descriptions".into()).or_default() += d.len();
        }
    }
    let core = mcp_answer(&[("CUA_TOOLS", "core")], json!({ "method": "tools/list" }));
    println!("| part | bytes |\n|---|---:|");
    for (k, v) in &parts {
        println!("| {k} | {v} |");
    }
    println!(
        "| **all {} tools** | **{}** |\n| core profile ({} tools) | {} |",
        tools.len(),
        size(&full),
        core["tools"].as_array().unwrap().len(),
        size(&core)
    );
    assert!(size(&full) <= 80_000, "tools/list is {} bytes", size(&full));
    assert!(
        size(&core) <= 40_000,
        "the core profile is {} bytes",
        size(&core)
    );
    // The click's shared arguments are listed, their meaning said once.
    let click = tools.iter().find(|t| t["name"] == "click").unwrap();
    assert!(click["inputSchema"]["properties"]["pid"]["description"].is_null());
    let init = mcp_initialize();
    let said = init["instructions"].as_str().unwrap();
    for arg in [
        "`pid`",
        "`window_id`",
        "`element_index`",
        "`delivery_mode`",
        "`settle_ms`",
    ] {
        assert!(
            said.contains(arg),
            "the instructions say what {arg} means: {said}"
        );
    }
}

/// The answer to a bare initialize.
fn mcp_initialize() -> Value {
    mcp_answer(&[], Value::Null)
}

/// The answer of `cua mcp` (started with `env`) to `request`, after a bare initialize
/// (null: the answer to initialize itself).
fn mcp_answer(env: &[(&str, &str)], request: Value) -> Value {
    let request_is_initialize = request.is_null();
    let request = if request_is_initialize {
        json!({ "method": "ping" })
    } else {
        request
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("mcp")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut request = request;
    request["jsonrpc"] = json!("2.0");
    request["id"] = json!(2);
    for m in [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {} }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        request,
    ] {
        writeln!(stdin, "{m}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let init = replies
        .iter()
        .find(|r| r["id"] == 1)
        .expect("an answer to initialize");
    assert!(
        init.get("result").is_some(),
        "a bare initialize is answered: {init}"
    );
    if request_is_initialize {
        return init["result"].clone();
    }
    replies
        .into_iter()
        .find(|r| r["id"] == 2)
        .expect("an answer to the request")["result"]
        .clone()
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

#[test]
fn every_tool_under_a_cua_driver_name_keeps_its_arguments_tokens_and_risk() {
    let reference = reference();
    let list = tools_list();
    assert_eq!(list["capability_version"], reference["capability_version"]);
    assert_eq!(list["schema_version"], reference["schema_version"]);
    let ours: Vec<&Value> = list["tools"].as_array().unwrap().iter().collect();
    let theirs = reference["tools"].as_object().unwrap();
    let mut problems = Vec::new();

    let our_names: BTreeSet<&str> = ours.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in theirs.keys() {
        let listed = MISSING_TOOLS.iter().any(|(n, _)| n == name);
        if our_names.contains(name.as_str()) == listed {
            problems.push(format!(
                "{name}: {}",
                if listed {
                    "cua has it now; take it off MISSING_TOOLS"
                } else {
                    "cua-driver's tool is missing and not listed in MISSING_TOOLS"
                }
            ));
        }
    }

    for tool in &ours {
        let name = tool["name"].as_str().unwrap();
        assert!(
            tool["capabilities"].is_array() && tool["risk"]["class"].is_string(),
            "{name} carries capabilities and risk"
        );
        let Some(r) = theirs.get(name) else { continue };
        let props: BTreeSet<String> = tool["inputSchema"]["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        for arg in names(&r["arguments"]) {
            let excused = MISSING_ARGUMENTS
                .iter()
                .any(|(t, a, _)| *t == name && *a == arg);
            if props.contains(&arg) == excused {
                problems.push(format!(
                    "{name}.{arg}: {}",
                    if excused {
                        "taken now; take it off MISSING_ARGUMENTS"
                    } else {
                        "cua-driver's argument is not taken"
                    }
                ));
            }
        }
        for arg in names(&tool["inputSchema"]["required"]).difference(&names(&r["required"])) {
            if !MORE_REQUIRED.iter().any(|(a, _)| a == arg) {
                problems.push(format!("{name}: requires {arg}, which cua-driver does not"));
            }
        }
        let (ours_t, theirs_t) = (names(&tool["capabilities"]), names(&r["capabilities"]));
        for t in theirs_t.difference(&ours_t) {
            if !TOKEN_DIFFERENCES
                .iter()
                .any(|(n, d, _)| *n == name && d.strip_prefix('-') == Some(t))
            {
                problems.push(format!("{name}: withholds token {t} without a reason"));
            }
        }
        for t in ours_t.difference(&theirs_t) {
            if !TOKEN_DIFFERENCES
                .iter()
                .any(|(n, d, _)| *n == name && d.strip_prefix('+') == Some(t))
            {
                problems.push(format!("{name}: adds token {t} without a reason"));
            }
        }
        if tool["risk"]["class"] != r["risk"] {
            problems.push(format!(
                "{name}: risk {} where cua-driver says {}",
                tool["risk"]["class"], r["risk"]
            ));
        }
        let a = &tool["annotations"];
        let hints_differ = [
            ("read_only", "readOnlyHint"),
            ("destructive", "destructiveHint"),
            ("idempotent", "idempotentHint"),
            ("open_world", "openWorldHint"),
        ]
        .iter()
        // MCP's destructive hint means nothing on a read-only tool.
        .filter(|(k, _)| !(*k == "destructive" && r["read_only"] == true))
        .any(|(k, h)| a[*h] != r[*k]);
        if hints_differ && !HINT_DIFFERENCES.iter().any(|(n, _)| *n == name) {
            problems.push(format!("{name}: hints {a} differ from cua-driver's"));
        }
    }
    assert!(
        problems.is_empty(),
        "contract differences:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_manifest_meets_hermes_agents_start_up_contract() {
    let out = Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("manifest")
        .output()
        .unwrap();
    assert!(out.status.success());
    let manifest: Value = serde_json::from_slice(&out.stdout).expect("manifest is JSON");
    let reference = &reference()["manifest"];
    assert_eq!(manifest["schema_version"], reference["schema_version"]);
    // hermes-agent gates on a semantic version of at least 0.20.0.
    let version: Vec<u64> = manifest["binary_version"]
        .as_str()
        .unwrap()
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(
        version.len() == 3 && version >= vec![0, 20, 0],
        "{version:?}"
    );
    assert_eq!(manifest["mcp_invocation"]["args"], reference["mcp_args"]);
    let command = manifest["mcp_invocation"]["command"].as_str().unwrap();
    assert!(std::path::Path::new(command).is_file(), "{command}");
    let ours: std::collections::BTreeMap<String, BTreeSet<String>> = manifest["subcommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let flags = s["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["name"].as_str().unwrap().to_string())
                .collect();
            (s["name"].as_str().unwrap().to_string(), flags)
        })
        .collect();
    // What hermes-agent's main requires of a driver before it starts one.
    for (sub, flags) in [
        ("mcp", &["--socket", "--grant"][..]),
        (
            "serve",
            &[
                "--socket",
                "--permission-mode",
                "--capability-manifest",
                "--approve-capability-manifest",
                "--embedded",
            ][..],
        ),
        ("stop", &["--socket"][..]),
    ] {
        for flag in flags {
            assert!(
                ours.get(sub).is_some_and(|f| f.contains(*flag)),
                "manifest lacks {sub} {flag}"
            );
        }
    }
    let mut problems = Vec::new();
    for (sub, flags) in reference["subcommands"].as_object().unwrap() {
        let Some(ours) = ours.get(sub) else { continue };
        for flag in names(flags) {
            let excused = MISSING_FLAGS.iter().any(|(s, f, _)| s == sub && *f == flag);
            if ours.contains(&flag) == excused {
                problems.push(format!("{sub} {flag}"));
            }
        }
    }
    assert!(problems.is_empty(), "flag differences: {problems:?}");
}

/// The launcher's flags do what they say: a refused combination exits 2 naming the flag,
/// and `stop` / `status` answer for a socket nobody listens on.
#[test]
fn launcher_flags_refuse_what_cua_cannot_honour() {
    let cua = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cua"))
            .args(args)
            .output()
            .unwrap()
    };
    let socket = std::env::temp_dir().join(format!("cua-contract-{}.sock", std::process::id()));
    let s = socket.to_str().unwrap();
    let unacknowledged = cua(&["serve", "--socket", s, "--permission-mode", "unrestricted"]);
    assert_eq!(unacknowledged.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unacknowledged.stderr).contains("--dangerously-bypass-approvals")
    );
    let unbounded = cua(&["serve", "--socket", s, "--permission-mode", "bounded"]);
    assert_eq!(unbounded.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unbounded.stderr).contains("--capability-manifest"));
    let grant = cua(&["mcp", "--grant", "existing-profile"]);
    assert_eq!(grant.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&grant.stderr).contains("--grant existing-profile"));
    let status = cua(&["status", "--socket", s]);
    assert_eq!(status.status.code(), Some(1));
    let said: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(said["running"], false);
    assert_eq!(cua(&["stop", "--socket", s]).status.code(), Some(0));
}

/// cua-driver's own test (permission_prompt_authorization_test.rs): started with
/// `CUA_DRIVER_PERMISSION_MODE=standard`, `check_permissions {"prompt": true}` is refused
/// under cua-driver's code; a read is not. An environment that asks for a mode without
/// its other half stops start-up, naming the variable.
#[test]
fn the_environment_sets_the_permission_mode_and_an_agent_never_raises_a_prompt() {
    let standard = [("CUA_DRIVER_PERMISSION_MODE", "standard")];
    let call = |args: Value| json!({ "method": "tools/call", "params": { "name": "check_permissions", "arguments": args } });
    let refused = mcp_answer(&standard, call(json!({ "prompt": true })));
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["refusal"]["code"],
        "os_permission_prompt_requires_trusted_host",
        "{refused}"
    );
    let read = mcp_answer(&standard, call(json!({ "prompt": false })));
    assert!(read["structuredContent"].get("refusal").is_none(), "{read}");
    // Without a mode, cua answers as it always has (it never prompts).
    let unset = mcp_answer(&[], call(json!({ "prompt": true })));
    assert!(
        unset["structuredContent"].get("refusal").is_none(),
        "{unset}"
    );
    let half = Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("mcp")
        .env("CUA_DRIVER_PERMISSION_MODE", "unrestricted")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(half.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&half.stderr).contains("CUA_DRIVER_DANGEROUSLY_BYPASS_APPROVALS"),
        "{}",
        String::from_utf8_lossy(&half.stderr)
    );
}
