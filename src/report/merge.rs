//! `cua report merge`: the report folders of N shards (each written by `cua test --shard
//! I/N --report DIR`) made into one report: every scenario of every shard, failures first,
//! in one HTML report, one report.json and one JUnit file, as a CI's final job wants them.
//!
//! A shard's report.json names its run folders on the machine that ran it; what the
//! merged page shows comes from the shard's report folder instead (the images its own
//! index.html shows), copied into the merged folder.

use std::path::{Path, PathBuf};

use super::ScenarioReport;

/// The scenarios of each shard's `report.json`, failures first (then flaky, then passed;
/// by name within each); every problem (a missing folder, a corrupt file, a scenario in
/// two shards) named by its shard.
pub fn read_shards(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, ScenarioReport)>, Vec<String>> {
    let mut problems = Vec::new();
    let mut all: Vec<(PathBuf, ScenarioReport)> = Vec::new();
    for dir in dirs {
        let file = dir.join("report.json");
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!(
                    "{}: {e} (a shard's folder is what `cua test --report DIR` wrote)",
                    file.display()
                ));
                continue;
            }
        };
        #[derive(serde::Deserialize)]
        struct Shard {
            scenarios: Vec<ScenarioReport>,
        }
        match serde_json::from_str::<Shard>(&text) {
            Ok(shard) => {
                for s in shard.scenarios {
                    if let Some((other, _)) = all.iter().find(|(_, r)| r.name == s.name) {
                        problems.push(format!(
                            "scenario `{}` is in two shards: {} and {}",
                            s.name,
                            other.display(),
                            dir.display()
                        ));
                        continue;
                    }
                    all.push((dir.clone(), s));
                }
            }
            Err(e) => problems.push(format!(
                "{}: line {} column {}: {e}",
                file.display(),
                e.line(),
                e.column()
            )),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    if all.is_empty() {
        return Err(vec!["no scenarios in the shards' report.json files".into()]);
    }
    all.sort_by_key(|(_, r)| (rank(r), r.name.clone()));
    Ok(all)
}

/// Failures first, then flaky passes, then passes.
fn rank(r: &ScenarioReport) -> u8 {
    match (r.passed, r.flaky()) {
        (false, _) => 0,
        (true, true) => 1,
        (true, false) => 2,
    }
}

/// Copies each scenario's images from its shard's report folder into `out` (where the
/// merged page finds them) and points the reports at them; returns the reports.
pub fn gather_assets(
    shards: Vec<(PathBuf, ScenarioReport)>,
    out: &Path,
) -> std::io::Result<Vec<ScenarioReport>> {
    let mut reports = Vec::new();
    for (shard, mut report) in shards {
        let slug = super::html::slug(&report.name);
        let from = shard.join(&slug);
        if from.is_dir() {
            crate::files::copy_dir(&from, &out.join(&slug))?;
        }
        // The run folders report.json names were on the shard's machine.
        for t in report.diff.iter_mut().flat_map(|d| d.turns.iter_mut()) {
            t.expected_dir = None;
            t.actual_dir = None;
        }
        if let Some(f) = &mut report.failure_state {
            f.screenshot = None;
        }
        reports.push(report);
    }
    Ok(reports)
}
