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

mod scenario;
pub mod verdict;

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
    };
    let finish = |mut r: ScenarioReport| {
        r.duration_ms = started.elapsed().as_millis() as u64;
        r.recorded_turns = crate::replay::turn_dirs(&run_dir).map_or(0, |t| t.len());
        r.failure_state = crate::report::FailureState::read(&run_dir);
        r
    };
    let driven = match drive(scenario, &run_dir) {
        Ok(d) => d,
        Err(e) => {
            report.error = Some(e);
            return finish(report);
        }
    };
    let (undispatched, no_effect_expected) = driven;
    let mut unhonoured = undispatched;
    unhonoured.extend(verdict::unhonoured(&run_dir, |n| {
        no_effect_expected.contains(&n)
    }));
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
    let goldens = Goldens::new(&opts.goldens_dir);
    let ci = golden::in_ci();
    if opts.update {
        match goldens.store(&scenario.name, &run_dir) {
            Ok(dest) => {
                if goldens.pending(&scenario.name).exists() {
                    let _ = goldens.reject(&scenario.name);
                }
                report.passed = true;
                report
                    .notes
                    .push(format!("golden updated: {}", dest.display()));
            }
            Err(e) => report.error = Some(format!("updating the golden: {e}")),
        }
        return finish(report);
    }
    let golden = goldens.golden(&scenario.name);
    if !golden.is_dir() {
        report.error = Some(format!(
            "no golden at {} (run `cua test {} --update`, or accept the pending one)",
            golden.display(),
            scenario.name
        ));
        report
            .notes
            .extend(write_pending(&goldens, scenario, &run_dir, ci));
        return finish(report);
    }
    match diff_trajectories(&golden, &run_dir, &scenario.spec.diff) {
        Err(e) => report.error = Some(format!("golden {}: {e}", golden.display())),
        Ok(d) => {
            report.passed = d.passed;
            if d.passed {
                if !ci && goldens.pending(&scenario.name).exists() {
                    let _ = goldens.reject(&scenario.name);
                    report
                        .notes
                        .push("passes again: stale pending golden removed".into());
                }
            } else {
                report
                    .notes
                    .extend(write_pending(&goldens, scenario, &run_dir, ci));
            }
            report.diff = Some(d);
        }
    }
    finish(report)
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
    Some(match goldens.store_pending(&scenario.name, run_dir) {
        Ok(p) => format!(
            "pending golden: {} (review: cua golden review {n}; accept: cua golden accept {n})",
            p.display(),
            n = scenario.name
        ),
        Err(e) => format!("could not write the pending golden: {e}"),
    })
}

/// Starts the sandbox, launches the app, and records the steps into `run_dir` (which
/// also receives files the app writes there, such as the fixture's journal; the diff reads
/// only turn folders). Returns the replayed turns that never reached their tool (window or
/// element not found: they leave no turn in the run), and the turns of steps that say
/// `expect_effect = false`.
fn drive(
    scenario: &Scenario,
    run_dir: &Path,
) -> Result<(Vec<verdict::Unhonoured>, Vec<u32>), String> {
    if run_dir.exists() {
        std::fs::remove_dir_all(run_dir)
            .map_err(|e| format!("cannot empty {}: {e}", run_dir.display()))?;
    }
    std::fs::create_dir_all(run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let run_dir = run_dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let sandbox = Sandbox::start(SandboxOptions {
        width: scenario.screen.0,
        height: scenario.screen.1,
    })
    .map_err(|e| format!("sandbox: {e}"))?;
    let mut desktop = sandbox.desktop();
    desktop.app_env = scenario
        .spec
        .app
        .env
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.replace("{run_dir}", &run_dir.to_string_lossy()),
            )
        })
        .collect();
    let ctx = ToolContext::for_desktop(desktop);
    let registry = ToolRegistry::new();
    let runtime = crate::tools::runtime().map_err(|e| format!("async runtime: {e}"))?;
    let result = runtime.block_on(async {
        let (pid, window) = launch(&ctx, &registry, scenario).await?;
        registry
            .call(
                &ctx,
                "set_recording",
                json!({ "enabled": true, "output_dir": run_dir }),
            )
            .await
            .map_err(|e| format!("set_recording: {e}"))?;
        let steps = match &scenario.spec.trajectory {
            Some(t) => {
                let app = crate::replay::BoundApp {
                    pid,
                    window_id: window,
                    launch_args: app_as_written(&scenario.spec.app),
                };
                replay_steps(&ctx, &registry, &scenario.root.join(t), app)
                    .await
                    .map(|u| (u, Vec::new()))
            }
            None => inline_steps(&ctx, &registry, scenario, pid, window)
                .await
                .map(|quiet| (Vec::new(), quiet)),
        };
        let stopped = registry
            .call(&ctx, "set_recording", json!({ "enabled": false }))
            .await
            .map_err(|e| format!("set_recording off: {e}"));
        if steps.is_err() {
            keep_failure_state(&ctx, &registry, pid, window, &run_dir).await;
        }
        stopped.and(steps)
    });
    drop(sandbox);
    result
}

async fn launch(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    scenario: &Scenario,
) -> Result<(u32, u64), String> {
    let app = &scenario.spec.app;
    let mut args = serde_json::Map::new();
    if let Some(n) = &app.name {
        args.insert("name".into(), json!(n));
    }
    if let Some(p) = &app.path {
        args.insert(
            "path".into(),
            json!(
                scenario
                    .root
                    .join(p)
                    .canonicalize()
                    .map_err(|e| format!("app.path: {e}"))?
            ),
        );
    }
    if !app.args.is_empty() {
        args.insert("additional_arguments".into(), json!(app.args));
    }
    if !app.urls.is_empty() {
        let urls: Vec<String> = app
            .urls
            .iter()
            .map(|u| {
                let local = scenario.root.join(u);
                if !u.contains("://") && local.exists() {
                    local
                        .canonicalize()
                        .map(|p| format!("file://{}", p.display()))
                        .unwrap_or_else(|_| u.clone())
                } else {
                    u.clone()
                }
            })
            .collect();
        args.insert("urls".into(), json!(urls));
    }
    args.insert("creates_new_application_instance".into(), json!(true));
    let label = app.name.as_deref().or(app.path.as_deref()).unwrap_or("app");
    // An app that never shows an accessible window is started once more: on a loaded
    // machine a first start can miss (seen once in CI: GTK3 widget factory, no tree in
    // 30 s). Both attempts' last observations go into the error.
    let mut seen = Vec::new();
    for _attempt in 0..2 {
        let wait = scenario.ready_timeout() / 2;
        match launch_once(ctx, registry, app, Value::Object(args.clone()), wait).await {
            Ok(found) => return Ok(found),
            Err((pid, why)) => {
                seen.push(why);
                if let Some(pid) = pid {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
        }
    }
    Err(format!("{label}: {}", seen.join("; then, started again: ")))
}

/// One launch and the wait for its window and tree; on failure the pid (to stop it) and
/// what was last seen.
async fn launch_once(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    app: &AppSpec,
    args: Value,
    wait: Duration,
) -> Result<(u32, u64), (Option<u32>, String)> {
    let out = registry
        .call(ctx, "launch_app", args)
        .await
        .map_err(|e| (None, format!("launch_app: {e}")))?;
    let pid = out.structured["pid"]
        .as_u64()
        .ok_or((None, "launch_app returned no pid".to_string()))? as u32;
    let deadline = Instant::now() + wait;
    let title = app.window.clone().unwrap_or_default();
    let mut last = String::from("no window yet");
    loop {
        let listed = registry
            .call(ctx, "list_windows", json!({}))
            .await
            .map_err(|e| (Some(pid), format!("list_windows: {e}")))?;
        let windows: Vec<&Value> = listed.structured["windows"]
            .as_array()
            .into_iter()
            .flatten()
            .collect();
        let ours: Vec<&Value> = windows
            .iter()
            .copied()
            .filter(|w| w["pid"].as_u64() == Some(pid as u64))
            .collect();
        let found = ours
            .iter()
            .find(|w| w["title"].as_str().is_some_and(|t| t.contains(&title)))
            .and_then(|w| w["window_id"].as_u64());
        if found.is_none() && !windows.is_empty() {
            // Name what is showing: a misspelt `window` is then plain to see.
            let shown = if ours.is_empty() { &windows } else { &ours };
            let titles: Vec<String> = shown
                .iter()
                .map(|w| format!("\"{}\"", w["title"].as_str().unwrap_or("")))
                .collect();
            last = format!(
                "{} showing: {}",
                if ours.is_empty() {
                    "other apps' windows"
                } else {
                    "its windows"
                },
                titles.join(", ")
            );
        }
        if let Some(window) = found {
            // The window is there; wait for its accessibility tree too.
            let state = registry
                .call(
                    ctx,
                    "get_window_state",
                    json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
                )
                .await;
            match state {
                Ok(s) if s.structured["element_count"].as_u64().unwrap_or(0) > 0 => {
                    if let Some(size) = &app.size {
                        let size = crate::sandbox::parse_size(size).map_err(|e| (Some(pid), e))?;
                        pin_size(ctx, window, size, deadline + wait)
                            .await
                            .map_err(|e| (Some(pid), format!("`app.size`: {e}")))?;
                    }
                    return Ok((pid, window));
                }
                Ok(s) => {
                    last = format!(
                        "window {window} has no accessible element ({})",
                        s.structured["degraded_reason"]
                            .as_str()
                            .unwrap_or("empty tree")
                    )
                }
                Err(e) => last = format!("window {window}: get_window_state: {e}"),
            }
        } else if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err((None, format!("pid {pid} exited before showing a window")));
        }
        if Instant::now() >= deadline {
            return Err((
                Some(pid),
                format!(
                    "no window{} with an accessibility tree after {} s (last seen: {last})",
                    if title.is_empty() {
                        String::new()
                    } else {
                        format!(" titled \"…{title}…\"")
                    },
                    wait.as_secs()
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Resizes the window and waits until its screenshot has that size.
pub async fn pin_size(
    ctx: &ToolContext,
    window: u64,
    (width, height): (u32, u32),
    deadline: Instant,
) -> Result<(), String> {
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    loop {
        let shot = platform
            .capture_window(window)
            .await
            .map_err(|e| format!("capture: {e}"))?;
        if (shot.width, shot.height) == (width, height) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the window stays {}x{}, not {width}x{height}",
                shot.width, shot.height
            ));
        }
        platform
            .resize_window(window, width, height)
            .await
            .map_err(|e| format!("resize: {e}"))?;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The scenario's `[app]` as launch_app arguments, paths as the scenario writes them
/// (relative to the project root), so a run's trajectory reads the same in every checkout.
fn app_as_written(app: &AppSpec) -> Value {
    let mut args = serde_json::Map::new();
    if let Some(n) = &app.name {
        args.insert("name".into(), json!(n));
    }
    if let Some(p) = &app.path {
        args.insert("path".into(), json!(p));
    }
    if !app.args.is_empty() {
        args.insert("additional_arguments".into(), json!(app.args));
    }
    if !app.urls.is_empty() {
        args.insert("urls".into(), json!(app.urls));
    }
    Value::Object(args)
}

async fn replay_steps(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    dir: &Path,
    app: crate::replay::BoundApp,
) -> Result<Vec<verdict::Unhonoured>, String> {
    let opts = ReplayOptions {
        delay_ms: 0,
        stop_on_error: false,
        bound_app: Some(app),
        allow_driver_changes: false,
        launch: false,
        apps: Vec::new(),
    };
    // Dispatched turns are recorded (the verdict and the diff judge them); the others
    // are handed back, since nothing in the run shows them.
    let report = crate::replay::replay(ctx, registry, dir, &opts, |_| {})
        .await
        .map_err(|e| format!("replay {}: {e}", dir.display()))?;
    Ok(report
        .turns
        .into_iter()
        .filter(|t| !t.ok && !t.dispatched)
        .map(|t| verdict::Unhonoured {
            turn: t.turn,
            tool: t.tool,
            reason: format!("the recording's turn was never run: {}", t.result_summary),
        })
        .collect())
}

/// Saves what the window shows (screenshot and tree) in the run folder, for the report of
/// a step that failed before its turn ran. Best effort: the window may be gone.
async fn keep_failure_state(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    pid: u32,
    window: u64,
    run_dir: &Path,
) {
    use crate::report::FailureState;
    let shot = run_dir.join(FailureState::SCREENSHOT);
    let state = registry
        .call(
            ctx,
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "screenshot_out_file": shot, "max_image_dimension": 0 }),
        )
        .await;
    if let Ok(state) = state {
        let tree = state.structured["tree_markdown"].as_str().unwrap_or("");
        let _ = crate::files::write_atomic(&run_dir.join(FailureState::TREE), tree.as_bytes());
    }
}

/// Runs the steps; returns the turns of steps that expect no effect. Recording starts
/// after the launch, so turn 1 is the first step's; a step escalated to the foreground
/// takes two turns. A step whose target never shows ends the run, named by number and line.
async fn inline_steps(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    scenario: &Scenario,
    pid: u32,
    window: u64,
) -> Result<Vec<u32>, String> {
    let mut turn = 1;
    let mut quiet = Vec::new();
    for (i, step) in scenario.spec.step.iter().enumerate() {
        let mut args = step.args.clone().unwrap_or(json!({}));
        let schema = registry
            .get(&step.tool)
            .map_err(|e| e.to_string())?
            .input_schema();
        let takes = |k: &str| schema["properties"].get(k).is_some();
        if takes("pid") && args.get("pid").is_none() {
            args["pid"] = json!(pid);
        }
        if takes("window_id") && args.get("window_id").is_none() {
            args["window_id"] = json!(window);
        }
        if let Some(target) = &step.target {
            let wait = scenario.ready_timeout();
            let index = wait_for_target(ctx, registry, pid, window, target, wait)
                .await
                .map_err(|e| format!("{}: {e}", scenario.step_label(i)))?;
            args["element_index"] = json!(index);
            // The target was resolved in the snapshot just taken.
            if let Some(fields) = args.as_object_mut() {
                fields.remove("snapshot_id");
            }
        }
        // A failed step is recorded as a failed turn; the verdict and the diff judge it.
        let calls = crate::replay::escalate::call(ctx, registry, &step.tool, args)
            .await
            .calls;
        if step.expect_effect == Some(false) {
            quiet.extend(turn..turn + calls);
        }
        turn += calls;
    }
    Ok(quiet)
}

/// The element index of a step's target, waiting (bounded by `wait`) for it to show. The
/// wait ends early when nothing matches and the app has been quiet for [`TARGET_QUIET`]:
/// no accessibility event from it, and its tree reads the same.
async fn wait_for_target(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    pid: u32,
    window: u64,
    target: &TargetSpec,
    wait: Duration,
) -> Result<usize, String> {
    let started = Instant::now();
    let deadline = started + wait;
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    // The last sign of life: an accessibility event from the app, or a tree that read
    // differently from the read before (for apps whose events are not seen).
    let mut changed = started;
    let mut last_tree = String::new();
    loop {
        let (state, snapshot) = registry
            .read_window(ctx, pid, window)
            .await
            .map_err(|e| format!("get_window_state: {e}"))?;
        let tree = state.structured["tree_markdown"].as_str().unwrap_or("");
        if tree != last_tree {
            changed = Instant::now();
            last_tree = tree.to_string();
        }
        let matches: Vec<usize> = (0..snapshot.elements.len())
            .filter(|&i| {
                let n = &snapshot.tree.nodes[snapshot.elements[i]];
                n.role == target.role && n.name == target.name
            })
            .collect();
        if let Some(&i) = matches.get(target.nth) {
            return Ok(i);
        }
        if let Some(event) = platform.app_activity(pid).await.and_then(|a| a.last) {
            changed = changed.max(event);
        }
        let gave_up = if Instant::now() >= deadline {
            Some(format!("after {} s", wait.as_secs()))
        } else {
            (changed.elapsed() >= TARGET_QUIET).then(|| {
                format!(
                    "and the app has changed nothing for {} s",
                    TARGET_QUIET.as_secs()
                )
            })
        };
        if let Some(why) = gave_up {
            return Err(format!(
                "target {} {:?} (nth {}): {} match(es) {why}; closest: {}",
                target.role,
                target.name,
                target.nth,
                matches.len(),
                closest_elements(&snapshot, target)
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Up to five elements nearest a target: the same role or name first, then names close
/// to it.
fn closest_elements(snapshot: &crate::tools::Snapshot, target: &TargetSpec) -> String {
    let mut scored: Vec<(usize, usize, &crate::platform::AxNode)> = snapshot
        .elements
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let node = &snapshot.tree.nodes[n];
            let distance = strsim::levenshtein(&node.role, &target.role)
                + strsim::levenshtein(&node.name, &target.name);
            (distance, i, node)
        })
        .collect();
    scored.sort_by_key(|(d, i, _)| (*d, *i));
    let near: Vec<String> = scored
        .iter()
        .take(5)
        .map(|(_, i, n)| format!("[{i}] {} {:?}", n.role, n.name))
        .collect();
    if near.is_empty() {
        "none (the window has no elements)".into()
    } else {
        near.join(", ")
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
        }
    }

    fn names(opts: &TestOptions) -> Vec<String> {
        select(opts).unwrap().into_iter().map(|s| s.name).collect()
    }

    #[test]
    fn shards_split_the_sorted_scenarios_without_overlap() {
        let all = names(&options(&[], None));
        assert!(all.len() >= 5, "{all:?}");
        let first = names(&options(&[], Some((1, 2))));
        let second = names(&options(&[], Some((2, 2))));
        let mut both: Vec<String> = first.iter().chain(&second).cloned().collect();
        both.sort();
        assert_eq!(both, all);
        assert!(first.iter().all(|n| !second.contains(n)));
        assert_eq!(parse_shard("3/2").unwrap_err(), "`3/2`: need 1 <= I <= N");
        assert!(parse_shard("1/0").is_err() && parse_shard("x").is_err());
        let picked = names(&options(&["fixture", "calculator"], None));
        assert_eq!(picked, ["calculator", "fixture"]);
    }
}
