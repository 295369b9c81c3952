//! The regression harness behind `cua test`: scenarios (`harness/<name>.toml`) are run each
//! in its own sandbox (own Xvfb, D-Bus and AT-SPI bus): launch the app, drive it (a
//! recorded trajectory replayed, or inline tool calls) with recording on, then diff the run
//! against `goldens/<name>/` and hand the result to the reports.
//!
//! Paths in a scenario (app path, URLs, trajectory) are relative to the project root, the
//! folder holding `harness/`. In env values `{run_dir}` is the scenario's run folder.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::diff::diff_trajectories;
use crate::golden::{self, Goldens};
use crate::replay::ReplayOptions;
use crate::report::ScenarioReport;
use crate::sandbox::{Sandbox, SandboxOptions};
use crate::tools::{ToolContext, ToolRegistry};

mod drive;
mod scenario;
pub mod verdict;

pub use drive::pin_size;
use drive::*;

pub use scenario::{AppSpec, Scenario, ScenarioFile, Step, TargetSpec};

/// A target wait gives up before its timeout once nothing matches and the app has sent
/// no accessibility event for this long: a quiet tree will not grow the element.
const TARGET_QUIET: Duration = Duration::from_secs(5);

/// Every scenario under `harness_dir`, by name.
pub fn discover(harness_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(harness_dir).map_err(|e| {
        let looked = std::path::absolute(harness_dir).unwrap_or_else(|_| harness_dir.into());
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "no scenarios: looked for a harness folder at {} (run from the project root, give --harness DIR, or a scenario's path)",
                looked.display()
            )
        } else {
            format!("harness folder {}: {e}", looked.display())
        }
    })?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    // By scenario name (`fixture` before `fixture-gtk4`, which path order reverses).
    files.sort_by_key(|f| f.file_stem().map(|s| s.to_os_string()));
    Ok(files)
}

/// `cua test` options.
#[derive(Debug, Clone)]
pub struct TestOptions {
    pub harness_dir: PathBuf,
    pub goldens_dir: PathBuf,
    /// Scenario names; empty means all.
    pub scenarios: Vec<String>,
    pub jobs: usize,
    /// (index from 1, count)
    pub shard: Option<(usize, usize)>,
    pub update: bool,
    /// Runs of a failing scenario after the first; a pass on one of them is flaky.
    pub retries: usize,
    /// Runs of each scenario (1: once); runs that differ from the first are reported.
    pub repeat: usize,
    /// Where runs are recorded (one folder per scenario, emptied first).
    pub work_dir: PathBuf,
    /// Write a passing run that healed back as its recording's pending change.
    pub heal: bool,
    /// Run every scenario on this display server only (None: on each its file lists).
    pub backend: Option<crate::sandbox::Backend>,
}

/// Parses `I/N` (I from 1).
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not I/N"))?;
    let (i, n): (usize, usize) = (
        i.parse().map_err(|_| format!("bad shard index in `{s}`"))?,
        n.parse().map_err(|_| format!("bad shard count in `{s}`"))?,
    );
    if n == 0 || i == 0 || i > n {
        return Err(format!("`{s}`: need 1 <= I <= N"));
    }
    Ok((i, n))
}

/// The scenarios a `cua test` invocation runs, loaded; bad input is every problem found.
pub fn select(opts: &TestOptions) -> Result<Vec<Scenario>, Vec<String>> {
    let mut problems = Vec::new();
    let mut chosen: Vec<PathBuf> = if opts.scenarios.is_empty() {
        discover(&opts.harness_dir).map_err(|e| vec![e])?
    } else {
        opts.scenarios
            .iter()
            .filter_map(|name| {
                // A name (`fixture`) is looked up in the harness folder; a path
                // (`harness/fixture.toml`) is taken as it is.
                let f = if name.ends_with(".toml") || name.contains('/') {
                    PathBuf::from(name)
                } else {
                    opts.harness_dir.join(format!("{name}.toml"))
                };
                if f.is_file() {
                    Some(f)
                } else {
                    problems.push(format!(
                        "no scenario `{name}` ({} does not exist)",
                        f.display()
                    ));
                    None
                }
            })
            .collect()
    };
    chosen.sort_by_key(|f| f.file_stem().map(|s| s.to_os_string()));
    chosen.dedup();
    if let Some((i, n)) = opts.shard {
        chosen = chosen
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i - 1)
            .map(|(_, f)| f)
            .collect();
    }
    let scenarios: Vec<Scenario> = chosen
        .iter()
        .filter_map(|f| Scenario::load(f).map_err(|e| problems.push(e)).ok())
        .flat_map(|s| s.per_backend(opts.backend))
        .collect();
    if scenarios.is_empty() && problems.is_empty() && opts.shard.is_none() {
        problems.push(format!("no scenarios in {}", opts.harness_dir.display()));
    }
    if problems.is_empty() {
        Ok(scenarios)
    } else {
        Err(problems)
    }
}

/// Runs scenarios on `jobs` threads, each scenario in its own sandbox; `done` is told of
/// each result as it comes. Results come back in scenario order.
pub fn run_all(
    scenarios: &[Scenario],
    opts: &TestOptions,
    done: impl Fn(&ScenarioReport) + Sync,
) -> Vec<ScenarioReport> {
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<ScenarioReport>>> = Mutex::new(vec![None; scenarios.len()]);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, scenarios.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(scenario) = scenarios.get(i) else {
                        break;
                    };
                    let report = if opts.repeat > 1 {
                        run_repeated(scenario, opts)
                    } else {
                        run_with_retries(scenario, opts)
                    };
                    done(&report);
                    results.lock().unwrap()[i] = Some(report);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .flatten()
        .collect()
}

/// Runs a scenario, and again up to `opts.retries` times while it fails (never with
/// `--update`); each failed attempt's reason is kept, so a later pass is reported flaky.
pub fn run_with_retries(scenario: &Scenario, opts: &TestOptions) -> ScenarioReport {
    let mut failed_attempts = Vec::new();
    loop {
        let mut report = run_scenario(scenario, opts);
        if report.passed || opts.update || failed_attempts.len() >= opts.retries {
            report.failed_attempts = failed_attempts;
            return report;
        }
        failed_attempts.push(report.failure_summary());
    }
}

/// `--repeat N`: runs a scenario N times (run K in `<work>/repeat-K/`), each against the
/// golden, and compares every run with the first: a turn that differed between repeats is
/// named with the fields that moved, and fails the scenario (its golden could not be
/// trusted).
pub fn run_repeated(scenario: &Scenario, opts: &TestOptions) -> ScenarioReport {
    let started = Instant::now();
    let run_dir = |k: usize| opts.work_dir.join(format!("repeat-{k}"));
    let mut reports = Vec::new();
    for k in 1..=opts.repeat {
        let mut o = opts.clone();
        o.work_dir = run_dir(k);
        reports.push(run_scenario(scenario, &o));
    }
    let first = run_dir(1).join(&scenario.name);
    let mut moved = Vec::new();
    for k in 2..=opts.repeat {
        match diff_trajectories(
            &first,
            &run_dir(k).join(&scenario.name),
            &scenario.spec.diff,
        ) {
            Ok(d) => moved.extend(d.failed_turns().map(|t| {
                format!(
                    "repeat {k} differs from repeat 1 at turn {} ({}): {}",
                    t.turn,
                    t.tool,
                    t.reasons.join("; ")
                )
            })),
            Err(e) => moved.push(format!("repeat {k}: cannot compare with repeat 1: {e}")),
        }
    }
    let failing = reports.iter().position(|r| !r.passed).unwrap_or(0);
    let mut report = reports.swap_remove(failing);
    report.notes.push(format!(
        "{} repeats; runs in {}/repeat-1..{}",
        opts.repeat,
        opts.work_dir.display(),
        opts.repeat
    ));
    if !moved.is_empty() {
        report.passed = false;
        let list: Vec<String> = moved.iter().map(|m| format!("  {m}")).collect();
        let flakes = format!(
            "{} turn(s) differed between repeats:\n{}",
            moved.len(),
            list.join("\n")
        );
        report.error = Some(match report.error.take() {
            Some(e) => format!("{e}\n{flakes}"),
            None => flakes,
        });
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    report
}

/// Runs one scenario and compares it with its golden.
pub fn run_scenario(scenario: &Scenario, opts: &TestOptions) -> ScenarioReport {
    let started = Instant::now();
    let run_dir = opts.work_dir.join(&scenario.name);
    let mut report = ScenarioReport {
        name: scenario.name.clone(),
        passed: false,
        diff: None,
        error: None,
        notes: Vec::new(),
        duration_ms: 0,
        failed_attempts: Vec::new(),
        recorded_turns: 0,
        failure_state: None,
        heals: Vec::new(),
        look_alikes: Vec::new(),
    };
    let finish = |mut r: ScenarioReport| {
        r.duration_ms = started.elapsed().as_millis() as u64;
        r.recorded_turns = crate::replay::turn_dirs(&run_dir).map_or(0, |t| t.len());
        r.failure_state = crate::report::FailureState::read(&run_dir);
        r
    };
    let goldens = Goldens::new(&opts.goldens_dir);
    // `--update` makes a new golden: the old one's changes are not waited for.
    let golden = (!opts.update)
        .then(|| goldens.golden(&scenario.golden))
        .filter(|g| g.is_dir());
    let driven = match drive(scenario, &run_dir, golden.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            report.error = Some(e);
            return finish(report);
        }
    };
    report.heals = driven.heals;
    report.look_alikes = driven.look_alikes;
    report.notes.extend(driven.not_replayed);
    let mut unhonoured = driven.unhonoured;
    unhonoured.extend(verdict::unhonoured(&run_dir, |n| driven.quiet.contains(&n)));
    if !unhonoured.is_empty() {
        let list: Vec<String> = unhonoured.iter().map(|u| format!("  {u}")).collect();
        report.error = Some(format!(
            "{} turn(s) did not do what their step asked (a step meant to change nothing says expect_effect = false):\n{}",
            unhonoured.len(),
            list.join("\n")
        ));
        if opts.update {
            report
                .notes
                .push("golden not updated: a run with such turns never becomes a golden".into());
        }
        return finish(report);
    }
    match opts.update {
        true => update_golden(scenario, &run_dir, &goldens, &mut report),
        false => compare_with_golden(scenario, &run_dir, opts, &goldens, &mut report),
    }
    finish(report)
}

/// `--update`: the run becomes the scenario's golden, unless it came from another backend
/// than the golden's (compared next time) or a turn never held still.
fn update_golden(
    scenario: &Scenario,
    run_dir: &Path,
    goldens: &Goldens,
    report: &mut ScenarioReport,
) {
    if !scenario.makes_golden {
        // Runs in parallel with the run that writes the golden: compared next time.
        report.passed = true;
        report.notes.push(format!(
            "the golden comes from the scenario's first backend; this {} run is compared with it by the next `cua test`",
            scenario.backend.name()
        ));
        return;
    }
    let unsettled = verdict::unsettled(run_dir);
    if !unsettled.is_empty() {
        let list: Vec<String> = unsettled.iter().map(|u| format!("  {u}")).collect();
        report.error = Some(format!(
            "golden not updated: {} turn(s) never held still, so no state of theirs can be a golden (raise settle_timeout_ms, or mask what keeps changing):\n{}",
            unsettled.len(),
            list.join("\n")
        ));
        return;
    }
    match goldens.store(&scenario.golden, run_dir) {
        Ok(dest) => {
            if goldens.pending(&scenario.golden).exists() {
                let _ = goldens.reject(&scenario.golden);
            }
            report.passed = true;
            report
                .notes
                .push(format!("golden updated: {}", dest.display()));
        }
        Err(e) => report.error = Some(format!("updating the golden: {e}")),
    }
}

/// The run against the scenario's golden: the verdict, a pending golden where it failed
/// (outside CI), a heal proposal where it passed by healing.
fn compare_with_golden(
    scenario: &Scenario,
    run_dir: &Path,
    opts: &TestOptions,
    goldens: &Goldens,
    report: &mut ScenarioReport,
) {
    let ci = golden::in_ci();
    let golden = goldens.golden(&scenario.golden);
    if !golden.is_dir() {
        report.error = Some(format!(
            "no golden at {} (run `cua test {} --update`, or accept the pending one)",
            golden.display(),
            scenario.golden
        ));
        report
            .notes
            .extend(write_pending(goldens, scenario, run_dir, ci));
        return;
    }
    let mut d = match diff_trajectories(&golden, run_dir, &scenario.spec.diff) {
        Ok(d) => d,
        Err(e) => {
            report.error = Some(format!("golden {}: {e}", golden.display()));
            return;
        }
    };
    if let Some(max) = scenario.spec.max_turn_ms {
        verdict::over_budget(&mut d, max);
    }
    report.passed = d.passed;
    if d.passed && opts.heal && !report.heals.is_empty() {
        report.notes.push(write_heal(scenario, run_dir, ci));
    }
    if !d.passed {
        report
            .notes
            .extend(write_pending(goldens, scenario, run_dir, ci));
    } else if !ci && goldens.pending(&scenario.golden).exists() {
        let _ = goldens.reject(&scenario.golden);
        report
            .notes
            .push("passes again: stale pending golden removed".into());
    }
    report.diff = Some(d);
}

fn write_pending(
    goldens: &Goldens,
    scenario: &Scenario,
    run_dir: &Path,
    ci: bool,
) -> Option<String> {
    if ci {
        return Some("CI is set: no pending golden written".into());
    }
    if !scenario.makes_golden {
        return Some(format!(
            "no pending golden from a {} run: the golden comes from the scenario's first backend",
            scenario.backend.name()
        ));
    }
    Some(match goldens.store_pending(&scenario.golden, run_dir) {
        Ok(p) => format!(
            "pending golden: {} (review: cua golden review {n}; accept: cua golden accept {n})",
            p.display(),
            n = scenario.golden
        ),
        Err(e) => format!("could not write the pending golden: {e}"),
    })
}

/// `cua test --heal`: a passing run that healed is written back as the pending change of
/// the scenario's recording (`<trajectory>.new`), to review and accept like a golden.
fn write_heal(scenario: &Scenario, run_dir: &Path, ci: bool) -> String {
    if ci {
        return "CI is set: --heal wrote nothing".into();
    }
    let Some(recording) = scenario
        .spec
        .trajectory
        .as_ref()
        .map(|t| scenario.root.join(t))
    else {
        return "--heal: the scenario replays no recording, so nothing was healed".into();
    };
    let (Some(parent), Some(name)) = (recording.parent(), recording.file_name()) else {
        return format!("--heal: {} has no parent folder", recording.display());
    };
    let name = name.to_string_lossy();
    match Goldens::new(parent).store_pending(&name, run_dir) {
        Ok(p) => format!(
            "healed: the pending change of the recording is {} (review: cua golden review {name} --goldens {d}; accept: cua golden accept {name} --goldens {d})",
            p.display(),
            d = parent.display()
        ),
        Err(e) => format!("--heal: could not write the pending change: {e}"),
    }
}

pub use golden::obsolete_goldens;

#[cfg(test)]
mod tests {
    use super::*;

    fn options(scenarios: &[&str], shard: Option<(usize, usize)>) -> TestOptions {
        TestOptions {
            harness_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("harness"),
            goldens_dir: PathBuf::from("goldens"),
            scenarios: scenarios.iter().map(|s| s.to_string()).collect(),
            jobs: 1,
            shard,
            update: false,
            retries: 0,
            repeat: 1,
            work_dir: PathBuf::from("unused"),
            heal: false,
            backend: None,
        }
    }

    fn names(opts: &TestOptions) -> Vec<String> {
        select(opts).unwrap().into_iter().map(|s| s.name).collect()
    }

    #[test]
    fn shards_split_the_sorted_scenarios_without_overlap() {
        let mut all = names(&options(&[], None));
        all.sort();
        assert!(all.len() >= 5, "{all:?}");
        let first = names(&options(&[], Some((1, 2))));
        let second = names(&options(&[], Some((2, 2))));
        let mut both: Vec<String> = first.iter().chain(&second).cloned().collect();
        both.sort();
        assert_eq!(both, all);
        assert!(first.iter().all(|n| !second.contains(n)));
        assert_eq!(parse_shard("3/2").unwrap_err(), "`3/2`: need 1 <= I <= N");
        assert!(parse_shard("1/0").is_err() && parse_shard("x").is_err());
        // A scenario runs once on each display server it lists, the first under its own
        // name; `--backend` runs every one once, on that server.
        let picked = names(&options(&["fixture", "calculator"], None));
        assert_eq!(
            picked,
            [
                "calculator",
                "fixture",
                "fixture@wayland",
                "fixture@kde",
                "fixture@gnome"
            ]
        );
        let mut on_x11 = options(&["fixture", "calculator"], None);
        on_x11.backend = Some(crate::sandbox::Backend::X11);
        assert_eq!(names(&on_x11), ["calculator", "fixture"]);
        let mut on_wayland = on_x11.clone();
        on_wayland.backend = Some(crate::sandbox::Backend::Wayland);
        assert_eq!(
            names(&on_wayland),
            ["calculator@wayland", "fixture@wayland"]
        );
    }
}
