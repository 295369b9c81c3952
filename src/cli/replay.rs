//! `cua replay` and `cua record`: re-driving a trajectory with progress, and recording
//! through the daemon.

use super::*;

/// `cua replay DIR`: its flags as the replay's options.
pub(super) fn replay_command(a: ReplayArgs) -> i32 {
    if a.plan {
        return print_plan(&a.dir, a.raw, a.json);
    }
    let opts = ReplayOptions {
        delay_ms: a.delay_ms,
        stop_on_error: !a.no_stop_on_error,
        bound_app: None,
        allow_driver_changes: a.allow_config,
        launch: a.launch,
        apps: a.app,
        volatile: a.volatile,
        raw: a.raw,
        incidental: match a.no_incidental {
            true => crate::snapshot::incidental::Incidental::none(),
            false => crate::snapshot::incidental::Incidental::with_roles(&a.incidental_role),
        },
    };
    run_replay(&a.dir, opts, a.record_to.as_deref(), a.heal, a.json)
}

fn run_replay(
    dir: &std::path::Path,
    opts: ReplayOptions,
    record_to: Option<&std::path::Path>,
    heal: bool,
    json: bool,
) -> i32 {
    use crate::replay::{replay, turn_dirs};
    let total = match turn_dirs(dir) {
        Ok(t) => t.len(),
        Err(e) => return fail(e.exit_code(), e),
    };
    // --heal records the replay beside the trajectory, kept only as a pending change.
    let healing = match heal.then(|| HealTarget::of(dir)).transpose() {
        Ok(h) => h,
        Err(e) => return fail(2, e),
    };
    let record_to = healing.as_ref().map(|h| h.scratch.as_path()).or(record_to);
    let runtime = match runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let ctx = ToolContext::new();
    let registry = ToolRegistry::new();
    if let Some(out_dir) = record_to {
        let args = serde_json::json!({ "enabled": true, "output_dir": out_dir });
        if let Err(e) = runtime.block_on(registry.call(&ctx, "set_recording", args)) {
            return fail(e.exit_code(), e);
        }
        // Compared with the recording: each turn's after-state is the stable window, read
        // once the turn's recorded change has shown.
        ctx.recorder.settle_each_turn(crate::recording::EachTurn {
            after_check: true,
            incidental: opts.incidental.clone(),
            ..Default::default()
        });
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} turns {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let report = runtime.block_on(replay(&ctx, &registry, dir, &opts, |t| {
        bar.set_message(format!("turn {} {} {}", t.turn, t.tool, t.outcome()));
        // A step stands for its folded attempts too.
        bar.inc(1 + t.folded.len() as u64);
    }));
    bar.finish_and_clear();
    if record_to.is_some() {
        let _ = runtime.block_on(registry.call(
            &ctx,
            "set_recording",
            serde_json::json!({ "enabled": false }),
        ));
    }
    let report = match report {
        Ok(r) => r,
        Err(e) => return fail(e.exit_code(), e),
    };
    let healed_turns: Vec<serde_json::Value> = report
        .turns
        .iter()
        .filter_map(|t| Some(serde_json::json!({ "turn": t.turn, "heal": t.heal.as_ref()? })))
        .collect();
    if let Some(out_dir) = record_to {
        write_replay_note(out_dir, &report, &opts, &healed_turns);
    }
    if let Some(h) = &healing {
        let written = h.keep(report.failed == 0 && !healed_turns.is_empty());
        eprintln!("{}", written.unwrap_or_else(|e| format!("--heal: {e}")));
    }
    if json {
        out(&serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        print_replay(&report, total);
    }
    if report.failed > 0 { 1 } else { 0 }
}

/// `cua replay --plan DIR`: the steps a replay of DIR drives, read without a desktop.
fn print_plan(dir: &std::path::Path, raw: bool, json: bool) -> i32 {
    let plan = match crate::replay::plan_of(&ToolRegistry::new(), dir, raw) {
        Ok(p) => p,
        Err(e) => return fail(e.exit_code(), e),
    };
    if json {
        out(&serde_json::to_string_pretty(&plan).unwrap_or_default());
        return 0;
    }
    out(&format!(
        "{:<6} {:<12} {:<18} replays",
        "step", "turns", "tool"
    ));
    let mut step = 0;
    for s in &plan.steps {
        let turns = match s.turns.as_slice() {
            [one] => one.to_string(),
            [first, .., last] => format!("{first}-{last}"),
            [] => String::new(),
        };
        let (number, what) = match &s.skipped {
            Some(why) => ("-".to_string(), format!("skipped: {why}")),
            None => {
                step += 1;
                (step.to_string(), format!("turn {}", s.turn))
            }
        };
        out(&format!("{number:<6} {turns:<12} {:<18} {what}", s.tool));
        for f in &s.folded {
            out(&format!("{:<6} folded turn {}: {}", "", f.turn, f.why));
        }
    }
    let (skipped, folded) = plan.counts();
    let recorded: usize = plan.steps.iter().map(|s| s.turns.len()).sum();
    out(&format!(
        "{step} steps from {recorded} turns: {skipped} skipped, {folded} folded into a retry{}",
        if raw {
            " (--raw: every turn as recorded)"
        } else {
            ""
        }
    ));
    0
}

/// Beside the replay's recording (replay.json): what it replayed, the apps it started
/// itself, and what it healed.
fn write_replay_note(
    out_dir: &std::path::Path,
    report: &crate::replay::ReplayReport,
    opts: &ReplayOptions,
    healed_turns: &[serde_json::Value],
) {
    let note = serde_json::json!({
        "replayed": report.directory,
        "launch": opts.launch,
        "apps": opts.apps,
        "launched": report.launched,
        "healed": healed_turns,
    });
    let bytes = serde_json::to_vec_pretty(&note).unwrap_or_default();
    if let Err(e) = crate::files::write_atomic(&out_dir.join("replay.json"), &bytes) {
        eprintln!("warning: cannot write replay.json: {e}");
    }
}

/// The replay's report as a table: a line a turn (with its look-alikes and heal), the apps
/// it started, and the totals.
fn print_replay(report: &crate::replay::ReplayReport, total: usize) {
    out(&format!(
        "{:<6} {:<18} {:<6} {:>7}  {:<14} details",
        "turn", "tool", "result", "ms", "match"
    ));
    for t in &report.turns {
        for f in &t.folded {
            out(&format!(
                "{:<6} {:<18} folded into turn {}: {}",
                f.turn, t.tool, t.turn, f.why
            ));
        }
        out(&format!(
            "{:<6} {:<18} {:<6} {:>7}  {:<14} {}{}",
            t.turn,
            t.tool,
            t.outcome(),
            t.duration_ms,
            t.locator_match.as_deref().unwrap_or("-"),
            t.result_summary.lines().next().unwrap_or(""),
            t.rebinding
                .as_ref()
                .map(|r| format!(" [{r}]"))
                .unwrap_or_default()
        ));
        if let Some(choice) = &t.look_alikes {
            out(&format!("{:<6} look-alikes: {choice}", ""));
        }
        if let Some(heal) = &t.heal {
            out(&format!("{:<6} healed: {heal}", ""));
        }
    }
    for l in &report.launched {
        out(&format!(
            "started for turn {}: {} ({}), pid {}",
            l.turn,
            l.recorded,
            l.arguments,
            l.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into())
        ));
    }
    if let Some(start) = &report.start_differs {
        out(&format!("note: {start}"));
    }
    let healed = report.turns.iter().filter(|t| t.heal.is_some()).count();
    let steps = report.turns_recorded - report.folded - report.skipped;
    out(&format!(
        "{} of {steps} steps ({total} turns) attempted: {} succeeded, {} failed, {} turns skipped, {} folded into a retry{}{}",
        report.attempted,
        report.succeeded,
        report.failed,
        report.skipped,
        report.folded,
        match healed {
            0 => String::new(),
            n => format!(", {n} healed (see above)"),
        },
        report
            .first_failure
            .map(|n| format!(" (first failure: turn {n})"))
            .unwrap_or_default()
    ));
}

/// Where `cua replay --heal` records the replay, and the pending change it may become: the
/// trajectory `PARENT/NAME` gets `PARENT/NAME.new`, which `cua golden review NAME
/// --goldens PARENT` and `cua golden accept` treat as a pending golden.
struct HealTarget {
    goldens: crate::golden::Goldens,
    name: String,
    parent: std::path::PathBuf,
    /// The replay's recording while it runs (removed after).
    scratch: std::path::PathBuf,
}

impl HealTarget {
    fn of(dir: &std::path::Path) -> Result<HealTarget, String> {
        if crate::golden::in_ci() {
            return Err(
                "`--heal`: CI is set, and CI never writes a heal back (unset CI to write one)"
                    .into(),
            );
        }
        let dir = std::path::absolute(dir).map_err(|e| format!("`dir`: {e}"))?;
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            return Err(format!(
                "`--heal`: {} has no parent folder to write NAME.new into",
                dir.display()
            ));
        };
        let name = name.to_string_lossy().into_owned();
        Ok(HealTarget {
            goldens: crate::golden::Goldens::new(parent),
            scratch: parent.join(format!(".{name}.heal-{}", std::process::id())),
            parent: parent.to_path_buf(),
            name,
        })
    }

    /// Makes the replay's recording the pending change when `worth_it` (the replay passed
    /// and healed something); says what happened.
    fn keep(&self, worth_it: bool) -> Result<String, String> {
        let outcome = if worth_it {
            self.goldens.store_pending(&self.name, &self.scratch).map(|pending| {
                format!(
                    "healed: the pending change is {}; review it with `cua golden review {} --goldens {}` (or --web), then `cua golden accept {} --goldens {}`",
                    pending.display(),
                    self.name,
                    self.parent.display(),
                    self.name,
                    self.parent.display()
                )
            })
        } else {
            Ok("--heal: nothing written (no turn was healed, or a turn failed: only a replay that passed writes its heals back)".into())
        };
        let _ = std::fs::remove_dir_all(&self.scratch);
        outcome
    }
}

/// `cua record --live DIR --app NAME`: recording by doing ([`crate::live`]).
pub(super) fn run_live(
    dir: &Path,
    app: Option<&str>,
    display: Option<u32>,
    size: (u32, u32),
    backend: sandbox::Backend,
    harness: &Path,
    keep_app: bool,
) -> i32 {
    let Some(app) = app else {
        return fail(2, "cua record --live: --app NAME names the app to record");
    };
    let dir = std::env::current_dir().unwrap_or_default().join(dir);
    // Without --display, a sandbox of its own, whatever else runs: the recording starts
    // from a fresh desktop, and ends with it.
    let sb = match display {
        Some(_) => sandbox_for(display, size, backend),
        None => Sandbox::start(SandboxOptions {
            width: size.0,
            height: size.1,
            backend,
        })
        .map_err(|e| e.to_string()),
    };
    let sb = match sb {
        Ok(sb) => sb,
        Err(e) => return fail(1, e),
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let live = crate::live::Live {
        ctx: std::sync::Arc::new(ToolContext::for_desktop(sb.desktop())),
        registry: ToolRegistry::new(),
        runtime: rt.handle().clone(),
        harness: harness.to_path_buf(),
        keep_app,
    };
    let recorded = live.record(&dir, app, |url| {
        out(&format!("record by doing in the browser: {url}"));
        eprintln!(
            "each click and burst of typing there is a turn in {}; Ctrl-C ends the recording",
            dir.display()
        );
    });
    match recorded {
        Ok(()) => {
            out(&format!("recorded into {}", dir.display()));
            0
        }
        Err(e) => fail(1, e),
    }
}

pub(super) fn run_record(cmd: RecordCommand) -> i32 {
    let socket = crate::daemon::default_socket();
    let (tool, args) = match &cmd {
        RecordCommand::Start { dir, video, append } => {
            let dir = if dir.is_absolute() {
                dir.clone()
            } else {
                std::env::current_dir().unwrap_or_default().join(dir)
            };
            if std::os::unix::net::UnixStream::connect(&socket).is_err() {
                if let Err(e) = crate::daemon::spawn_daemon(&socket) {
                    return fail(1, e);
                }
            }
            (
                "set_recording",
                serde_json::json!({ "enabled": true, "output_dir": dir, "append": append, "video_experimental": video }),
            )
        }
        RecordCommand::Stop => ("set_recording", serde_json::json!({ "enabled": false })),
        RecordCommand::Status => ("get_recording_state", serde_json::json!({})),
    };
    match crate::daemon::call(&socket, tool, &args) {
        Some(Ok(out)) => print_output(&out, &OutputFlags::default()),
        Some(Err(e)) => fail(e.exit_code(), e),
        None => {
            out("not recording (no cua daemon runs for this display)");
            0
        }
    }
}
