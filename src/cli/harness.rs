//! `cua diff`, `cua test` and `cua golden …`: the regression loop from the command line;
//! the review itself lives in `golden` (terminal and browser).

use super::*;

/// Reads a diff config file, or the defaults.
pub fn read_diff_config(path: Option<&Path>) -> Result<crate::diff::DiffConfig, String> {
    match path {
        None => Ok(crate::diff::DiffConfig::default()),
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| format!("--config {}: {e}", p.display()))?;
            crate::diff::DiffConfig::from_toml(&text, &p.display().to_string())
        }
    }
}

pub(super) fn run_diff(
    expected: &Path,
    actual: &Path,
    config: Option<&Path>,
    outputs: &crate::report::Outputs,
) -> i32 {
    let started = std::time::Instant::now();
    let config = match read_diff_config(config) {
        Ok(c) => c,
        Err(e) => return fail(2, e),
    };
    let diff = match crate::diff::diff_trajectories(expected, actual, &config) {
        Ok(d) => d,
        Err(e) => return fail(2, e),
    };
    let name = expected
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trajectory".into());
    let report =
        crate::report::ScenarioReport::of_diff(name, diff, started.elapsed().as_millis() as u64);
    let passed = report.passed;
    if let Err(e) = outputs.emit("cua diff", std::slice::from_ref(&report)) {
        return fail(1, format!("writing the report: {e}"));
    }
    if passed { 0 } else { 1 }
}

/// `cua report merge DIR…`: the shards' reports as one (see [`crate::report::merge`]).
pub(super) fn run_report_merge(dirs: &[PathBuf], outputs: &crate::report::Outputs) -> i32 {
    use crate::report::merge;
    let shards = match merge::read_shards(dirs) {
        Ok(s) => s,
        Err(problems) => {
            return fail(2, format!("cannot merge:\n  {}", problems.join("\n  ")));
        }
    };
    let reports = match &outputs.report_dir {
        Some(dir) => match merge::gather_assets(shards, dir) {
            Ok(r) => r,
            Err(e) => {
                return fail(
                    1,
                    format!("copying the shards' images into {}: {e}", dir.display()),
                );
            }
        },
        None => shards.into_iter().map(|(_, r)| r).collect(),
    };
    let title = format!("cua test ({} shards)", dirs.len());
    if let Err(e) = outputs.emit_with(&title, &reports, crate::report::html::write_merged) {
        return fail(1, format!("writing the report: {e}"));
    }
    if reports.iter().all(|r| r.passed) {
        0
    } else {
        1
    }
}

/// Per invocation: two `cua test` runs at once must not record into the same folders.
pub(super) fn default_work_dir() -> PathBuf {
    std::env::temp_dir().join(format!("cua-test-{}", std::process::id()))
}

pub(super) fn run_test(
    opts: crate::harness::TestOptions,
    outputs: &crate::report::Outputs,
    own_work_dir: bool,
    fail_on_flaky: bool,
) -> i32 {
    if opts.update && crate::golden::in_ci() {
        return fail(
            2,
            "--update: CI is set, and nothing under goldens/ is written under CI",
        );
    }
    if opts.jobs == 0 {
        return fail(2, "--jobs must be at least 1");
    }
    if opts.repeat == 0 {
        return fail(2, "--repeat must be at least 1");
    }
    if opts.repeat > 1 && (opts.update || opts.retries > 0) {
        return fail(
            2,
            "--repeat runs each scenario as it is: not with --update or --retries",
        );
    }
    let scenarios = match crate::harness::select(&opts) {
        Ok(s) => s,
        Err(problems) => return fail(2, problems.join("\n       ")),
    };
    eprintln!(
        "running {} scenario(s) with {} job(s); runs in {}",
        scenarios.len(),
        opts.jobs,
        opts.work_dir.display()
    );
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let reports = crate::harness::run_all(&scenarios, &opts, |r| {
        let n = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        eprintln!(
            "[{n}/{}] {} {} in {:.1} s",
            scenarios.len(),
            r.name,
            if r.flaky() {
                "passed on a retry (FLAKY)"
            } else if r.passed {
                "passed"
            } else {
                "FAILED"
            },
            r.duration_ms as f64 / 1000.0
        );
    });
    if opts.scenarios.is_empty() {
        for name in crate::harness::obsolete_goldens(&opts.goldens_dir, &opts.harness_dir) {
            eprintln!(
                "warning: obsolete golden {} (no {}.toml in {})",
                opts.goldens_dir.join(&name).display(),
                name,
                opts.harness_dir.display()
            );
        }
    }
    if let Err(e) = outputs.emit("cua test", &reports) {
        return fail(1, format!("writing the report: {e}"));
    }
    let passed = reports.iter().all(|r| r.passed);
    if passed && own_work_dir {
        let _ = std::fs::remove_dir_all(&opts.work_dir);
    } else if !passed {
        eprintln!("runs kept in {}", opts.work_dir.display());
    }
    if !passed {
        return 1;
    }
    if fail_on_flaky && reports.iter().any(|r| r.flaky()) {
        eprintln!("--fail-on-flaky: a scenario passed only on a retry");
        return 1;
    }
    0
}

/// The diff config a scenario declares, or the defaults when it has no file.
pub(super) fn scenario_config(
    dirs: &HarnessDirs,
    scenario: &str,
) -> Result<crate::diff::DiffConfig, String> {
    let file = dirs
        .harness
        .join(format!("{}.toml", crate::golden::scenario_of(scenario)));
    if !file.is_file() {
        return Ok(crate::diff::DiffConfig::default());
    }
    crate::harness::Scenario::load(&file).map(|s| s.spec.diff)
}

pub(super) fn run_golden(cmd: GoldenCommand) -> i32 {
    match cmd {
        GoldenCommand::List { dirs } => list_goldens(&dirs),
        GoldenCommand::Accept {
            scenarios,
            all,
            dirs,
        }
        | GoldenCommand::Reject {
            scenarios,
            all,
            dirs,
        } if scenarios.is_empty() && !all => {
            let _ = dirs;
            fail(2, "name the scenarios, or give --all")
        }
        GoldenCommand::Accept {
            scenarios,
            all,
            dirs,
        } => each_scenario(&dirs, scenarios, all, |goldens, name| {
            goldens
                .accept(name)
                .map(|p| format!("accepted: {}", p.display()))
        }),
        GoldenCommand::Reject {
            scenarios,
            all,
            dirs,
        } => each_scenario(&dirs, scenarios, all, |goldens, name| {
            goldens
                .reject(name)
                .map(|()| format!("rejected: {}", goldens.pending(name).display()))
        }),
        GoldenCommand::Review {
            scenario,
            turn,
            accept,
            reject,
            web,
            dirs,
        } => {
            let decision = match (turn, accept, reject) {
                (None, _, _) => None,
                (Some(_), false, false) => return fail(2, "--turn needs --accept or --reject"),
                (Some(t), accept, _) => Some((t, accept)),
            };
            review_goldens(&dirs, scenario, decision, web)
        }
    }
}

/// `cua golden list`: every scenario and golden, with what it has (a golden, a pending
/// one, no scenario any more).
fn list_goldens(dirs: &HarnessDirs) -> i32 {
    let goldens = crate::golden::Goldens::new(&dirs.goldens);
    let obsolete = crate::harness::obsolete_goldens(&dirs.goldens, &dirs.harness);
    let scenarios = match crate::harness::discover(&dirs.harness) {
        Ok(s) => s,
        // Outside a project there is nothing to list: say where it looked.
        Err(e) if !dirs.goldens.is_dir() => return fail(2, e),
        Err(_) => Vec::new(),
    };
    let mut names: Vec<String> = scenarios
        .iter()
        .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    // Every golden too: obsolete ones, and a backend's own (`fixture@gnome`).
    names.extend(goldens.list().into_iter().map(|g| g.scenario));
    names.sort();
    names.dedup();
    for name in names {
        let mut state = vec![match goldens.golden(&name).is_dir() {
            true => "golden",
            false => "no golden",
        }];
        if goldens.pending(&name).is_dir() {
            state.push("pending");
        }
        if obsolete.contains(&name) {
            state.push("obsolete (no scenario)");
        }
        out(&format!("{name:<24} {}", state.join(", ")));
    }
    0
}

/// `cua golden review`: the pending goldens' changed turns, in the browser (`web`), one
/// turn decided (`decision`: the turn, and whether to accept it), or asked on the terminal.
fn review_goldens(
    dirs: &HarnessDirs,
    scenario: Option<String>,
    decision: Option<(u32, bool)>,
    web: bool,
) -> i32 {
    let goldens = crate::golden::Goldens::new(&dirs.goldens);
    let names = match scenario {
        Some(s) => vec![s],
        None => pending_names(&goldens),
    };
    if names.is_empty() {
        out(&format!("no pending goldens in {}", dirs.goldens.display()));
        return 0;
    }
    if web {
        return review_in_browser(dirs, &goldens, names);
    }
    if decision.is_none() && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return fail(
            2,
            "review asks on a terminal; without one use --turn N --accept|--reject, or cua golden accept|reject",
        );
    }
    for name in names {
        let config = match scenario_config(dirs, &name) {
            Ok(c) => c,
            Err(e) => return fail(2, e),
        };
        let result = match decision {
            Some((turn, accept)) => decide_turn(&goldens, &name, &config, turn, accept),
            None => crate::golden::review(
                &goldens,
                &name,
                &config,
                &mut std::io::stdout(),
                &mut crate::golden::ask_terminal,
            )
            .map(|n| out(&format!("{name}: {n} turn(s) accepted"))),
        };
        if let Err(e) = result {
            return fail(2, e);
        }
    }
    0
}

fn review_in_browser(
    dirs: &HarnessDirs,
    goldens: &crate::golden::Goldens,
    names: Vec<String>,
) -> i32 {
    let mut scenarios = Vec::new();
    for name in names {
        match scenario_config(dirs, &name) {
            Ok(c) => scenarios.push((name, c)),
            Err(e) => return fail(2, e),
        }
    }
    let served = crate::golden::web::serve(goldens, scenarios, |url| {
        out(&format!("review in the browser: {url}"));
        out("(Ctrl-C stops the review; it also stops once nothing is left)");
    });
    match served {
        Ok(()) => 0,
        Err(e) => fail(2, e),
    }
}

/// `--turn N --accept|--reject`: one changed turn into the golden, or kept as it is.
fn decide_turn(
    goldens: &crate::golden::Goldens,
    name: &str,
    config: &crate::diff::DiffConfig,
    turn: u32,
    accept: bool,
) -> Result<(), String> {
    use crate::golden::Decision;
    let wanted = if accept {
        Decision::Accept
    } else {
        Decision::Reject
    };
    let done = crate::golden::decide_turn(goldens, name, config, turn, wanted)
        .map_err(|e| format!("`--turn`: {e}"))?;
    out(&format!(
        "{name} turn {turn}: {}",
        if done.accepted {
            "accepted into the golden"
        } else {
            "kept as in the golden"
        }
    ));
    if done.review_done {
        out(&format!(
            "{name}: no changed turn left undecided, pending golden removed"
        ));
    }
    Ok(())
}

/// Runs `op` for the named scenarios (or every one with a pending golden); exit 2 if any
/// failed.
pub(super) fn each_scenario(
    dirs: &HarnessDirs,
    scenarios: Vec<String>,
    all: bool,
    op: impl Fn(&crate::golden::Goldens, &str) -> Result<String, String>,
) -> i32 {
    let goldens = crate::golden::Goldens::new(&dirs.goldens);
    let names = if all {
        pending_names(&goldens)
    } else {
        scenarios
    };
    let mut code = 0;
    for name in names {
        match op(&goldens, &name) {
            Ok(done) => out(&done),
            Err(e) => code = fail(2, e),
        }
    }
    code
}

pub(super) fn pending_names(goldens: &crate::golden::Goldens) -> Vec<String> {
    goldens
        .list()
        .into_iter()
        .filter(|g| g.pending)
        .map(|g| g.scenario)
        .collect()
}
