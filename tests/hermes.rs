//! cua driven by a real client of cua-driver: hermes-agent's computer_use backend (PyPI
//! `hermes-agent[computer-use]==0.19.0`, installed into a venv under target/), which finds
//! cua through `HERMES_CUA_DRIVER_CMD`, reads its `manifest`, starts `cua mcp`, reads the
//! capability tokens of tools/list, and drives the fixture apps the way hermes' tool layer
//! does (tests/support/hermes_client.py), background first and in the foreground when
//! cua's answer recommends it. Each action's effect is read from the fixture's own journal.
//!
//! An action passes when the journal shows its effect. The only actions allowed to fail
//! are those that fail against cua-driver 0.21 too (the script says why for each) and the
//! cua limitations listed in [`KNOWN`], each with its reason.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cua::sandbox::{Sandbox, SandboxOptions};
use serde_json::Value;

const HERMES: &str = "hermes-agent[computer-use]==0.19.0";

/// Actions cua does not do on a toolkit yet, with why: (toolkit, step, reason).
const KNOWN: &[(&str, &str, &str)] = &[(
    "gtk4",
    "set_value option",
    "GTK 4.8's drop-down exposes no options until its popover opens; cua cannot select one \
     without a pointer (docs/toolkits.md: set_value on a combo box escalates on GTK 4)",
)];

/// A venv with hermes-agent and its computer-use extra (the MCP SDK), made once (the
/// tests of this binary wait for the one that makes it).
fn python_with_hermes() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON.get_or_init(install_hermes).clone()
}

fn install_hermes() -> PathBuf {
    common::python_venv("hermes-venv", HERMES)
}

/// Runs the hermes client against a fresh fixture of `toolkit` and returns its steps.
fn drive(toolkit: &str) -> Vec<Value> {
    let python = python_with_hermes();
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let work = std::env::temp_dir().join(format!("cua-hermes-{toolkit}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let journal = work.join("journal.jsonl");
    let (pid, window) = common::launch_fixture(sandbox.env(), toolkit, &journal);
    let out = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/hermes_client.py"))
        .arg(&journal)
        .arg(pid.to_string())
        .arg(window.to_string())
        .arg(toolkit)
        .arg(&work)
        .envs(sandbox.env())
        .env("HERMES_CUA_DRIVER_CMD", env!("CARGO_BIN_EXE_cua"))
        .env("HERMES_HOME", work.join("hermes-home"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the hermes client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("the client's report");
    let _ = std::fs::remove_dir_all(&work);
    report["steps"].as_array().cloned().unwrap_or_default()
}

fn check(toolkit: &str) {
    let steps = drive(toolkit);
    assert!(steps.len() >= 40, "the client ran {} steps", steps.len());
    let mut failures = Vec::new();
    for s in &steps {
        let name = s["name"].as_str().unwrap_or("");
        let excused = !s["fails_on_cua_driver"].is_null()
            || KNOWN.iter().any(|(t, n, _)| *t == toolkit && *n == name);
        if s["ok"] != true && !excused {
            failures.push(format!("{name}: {}", s["detail"]));
        }
    }
    let passed = steps.iter().filter(|s| s["ok"] == true).count();
    eprintln!(
        "hermes-agent on {toolkit}: {passed} of {} actions",
        steps.len()
    );
    assert!(
        failures.is_empty(),
        "hermes-agent's actions that failed on {toolkit}:\n{}",
        failures.join("\n")
    );
}

#[test]
fn hermes_agent_drives_a_gtk3_app_through_cua() {
    check("gtk3");
}

#[test]
fn hermes_agent_drives_a_gtk4_app_through_cua() {
    check("gtk4");
}
