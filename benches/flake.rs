//! Benchmark: how often `cua test` fails a right run. Every shipped scenario (harness/*.toml,
//! each on the display servers it lists) runs against its golden N times on a quiet machine,
//! then M times with `stress-ng --cpu 2` loading both cores, as a busy CI runner would. The
//! builds never change, so every failure is the harness crying wolf; the table gives the
//! failures per scenario and, for each, why (the failing turn's first reason).
//!
//! `cargo bench --bench flake` runs 30 quiet and 10 loaded passes (the bar #42 set);
//! CUA_FLAKE_QUIET=N and CUA_FLAKE_LOADED=M change them, and CUA_FLAKE_SCENARIOS=a,b picks
//! scenarios. Runs with CI set, so no pending golden is written. Needs stress-ng.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::Value;

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What one pass of `cua test` said of each scenario: None passed, else why it failed.
fn pass(scenarios: &[String], work: &std::path::Path) -> BTreeMap<String, Option<String>> {
    let out = Command::new(env!("CARGO_BIN_EXE_cua"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["test", "--json", "--work-dir"])
        .arg(work)
        .args(scenarios)
        .env("CI", "true")
        .output()
        .expect("run cua test");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "cua test --json: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let name = s["name"].as_str().unwrap_or("?").to_string();
            (name, (s["passed"] != true).then(|| why(s)))
        })
        .collect()
}

/// A failed scenario's first reason: its error's first line, else its first failing turn's.
fn why(s: &Value) -> String {
    if let Some(e) = s["error"].as_str() {
        return e.lines().next().unwrap_or("").to_string();
    }
    let turns = s["diff"]["turns"].as_array().cloned().unwrap_or_default();
    turns
        .iter()
        .find(|t| t["status"] != "passed")
        .map(|t| {
            format!(
                "turn {} {}: {}",
                t["turn"],
                t["status"].as_str().unwrap_or(""),
                t["reasons"][0].as_str().unwrap_or("")
            )
        })
        .unwrap_or_else(|| "failed".into())
}

/// Failures per scenario over `runs` passes, with the reasons seen and how often.
#[derive(Default)]
struct Tally {
    failed: usize,
    reasons: BTreeMap<String, usize>,
}

fn block(
    label: &str,
    runs: usize,
    scenarios: &[String],
    work: &std::path::Path,
) -> BTreeMap<String, Tally> {
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let started = Instant::now();
    for k in 1..=runs {
        for (name, failure) in pass(scenarios, work) {
            let t = tally.entry(name).or_default();
            if let Some(reason) = failure {
                t.failed += 1;
                *t.reasons.entry(reason).or_default() += 1;
            }
        }
        eprintln!(
            "{label}: pass {k} of {runs} done ({:.0} s)",
            started.elapsed().as_secs_f64()
        );
    }
    tally
}

/// `stress-ng --cpu 2`, until dropped.
struct Load(Child);

impl Load {
    fn start() -> Load {
        let child = Command::new("stress-ng")
            .args(["--cpu", "2", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("stress-ng (scripts/setup installs it)");
        Load(child)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        // stress-ng ends its workers when its parent gets SIGTERM.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.0.wait();
    }
}

fn main() {
    let quiet_runs = count("CUA_FLAKE_QUIET", 30);
    let loaded_runs = count("CUA_FLAKE_LOADED", 10);
    let scenarios: Vec<String> = std::env::var("CUA_FLAKE_SCENARIOS")
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let work = std::env::temp_dir().join(format!("cua-flake-{}", std::process::id()));
    let quiet = block("quiet", quiet_runs, &scenarios, &work);
    let loaded = {
        let _load = Load::start();
        block("stress-ng --cpu 2", loaded_runs, &scenarios, &work)
    };
    let _ = std::fs::remove_dir_all(&work);

    println!("| scenario | quiet: failed / runs | stress-ng --cpu 2: failed / runs | why |");
    println!("|---|---|---|---|");
    let names: std::collections::BTreeSet<&String> = quiet.keys().chain(loaded.keys()).collect();
    let (mut all_quiet, mut all_loaded) = (0, 0);
    for name in names {
        let q = quiet.get(name).map_or(0, |t| t.failed);
        let l = loaded.get(name).map_or(0, |t| t.failed);
        all_quiet += q;
        all_loaded += l;
        let mut reasons: Vec<String> = Vec::new();
        for t in [quiet.get(name), loaded.get(name)].into_iter().flatten() {
            reasons.extend(t.reasons.iter().map(|(r, n)| format!("{n}× {r}")));
        }
        println!(
            "| {name} | {q} / {quiet_runs} | {l} / {loaded_runs} | {} |",
            if reasons.is_empty() {
                "-".to_string()
            } else {
                reasons.join("; ").replace('|', "\\|")
            }
        );
    }
    println!(
        "\nfailures: {all_quiet} quiet, {all_loaded} under stress-ng --cpu 2 (every build unchanged: each failure cried wolf)"
    );
}
