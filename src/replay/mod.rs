//! Replay: walks a trajectory's steps in order and re-dispatches each recorded tool call
//! through the same registry an MCP or CLI call uses, against a fresh run of the apps, which
//! may be the next build.
//!
//! The turns are first read into steps ([`plan`]): a turn recorded as failed or refused
//! is skipped, an attempt the app did not show is folded into the retry that did the work,
//! so a replay does what the recording did once (`raw` replays every turn as recorded).
//!
//! A step's turn goes in steps ([`turn`]): its recorded window is bound to a live one
//! ([`window`]: a recorded `launch_app` launches the app again; other turns find the live
//! window by the recorded app identity or tree); its element is found in the live window
//! through the healing ladder ([`heal`]: exact path, role + name, role + loose name, the
//! same name under another role; never an element of another name, never a guess between
//! look-alikes), and every heal is reported; the turn is dispatched; then the live app must
//! make the turn's recorded change, exactly, from the state it had just before the dispatch
//! ([`postcondition`]): a missing, contradicted or unrecorded change fails the turn, naming
//! the element. So a replay never says yes to a run that ended elsewhere.
//!
//! Also replays recordings with no app identity and no locator (the reference driver's,
//! cua-driver's through its adapter): the window is bound by its recorded tree
//! (`bind`), the element through its line in the before-state's tree_markdown
//! ([`locate`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::errors::ToolError;
use crate::trajectory::{Action, Locator, read};

mod bind;
mod browser;
mod element;
pub mod escalate;
pub mod heal;
pub mod launch;
pub mod locate;
pub mod plan;
mod point;
pub mod postcondition;
mod turn;
mod window;
pub use launch::{AppOverride, Launched};
pub use plan::{Folded, Plan, Step};

/// The replay tool's name: a trajectory's turn of it is never replayed.
pub const REPLAY_TOOL: &str = "replay_trajectory";

/// How long a turn waits for its window and element to be there.
pub const READY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub delay_ms: u64,
    pub stop_on_error: bool,
    /// `cua test`: the app the scenario launched. Recorded `launch_app` turns bind to it
    /// instead of launching what the recording launched (the build under test wins).
    pub bound_app: Option<BoundApp>,
    /// Run turns of tools that change the driver itself (set_config, set_recording): a
    /// trajectory is input from elsewhere, so they are refused unless asked for.
    /// replay_trajectory turns are refused either way (a trajectory could replay itself).
    pub allow_driver_changes: bool,
    /// Start each recorded app that has no live window, before the first turn in the order
    /// the turns first use them (`cua replay --launch`).
    pub launch: bool,
    /// Recorded apps started from another build (`cua replay --app RECORDED=PATH`).
    pub apps: Vec<AppOverride>,
    /// Text that is no part of a turn's change (a clock, a counter): each match is the
    /// same in every tree line (a scenario's `[diff]` redactions under `cua test`).
    pub volatile: Vec<regex::Regex>,
    /// Replay every turn as recorded (`cua replay --raw`): no turn skipped or folded.
    pub raw: bool,
    /// Regions whose contents follow the app's timing, left out of each turn's check
    /// unless the turn acts inside one ([`crate::snapshot::incidental`]).
    pub incidental: crate::snapshot::incidental::Incidental,
}

/// The scenario's running app and its `[app]` table as launch_app arguments.
#[derive(Debug, Clone)]
pub struct BoundApp {
    pub pid: u32,
    pub window_id: u64,
    pub launch_args: Value,
}

/// One step of the replay: the turn it replayed, or the turn it skipped.
#[derive(Debug, Clone, Serialize)]
pub struct TurnResult {
    pub turn: u32,
    pub tool: String,
    pub ok: bool,
    pub result_summary: String,
    /// Why the turn was not replayed (`recorded as failed (…)`); such a step is neither
    /// attempted nor failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The earlier attempts this step stands for, not replayed, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<Folded>,
    /// How recorded ids mapped to live ones, e.g. `pid 123→456, window 7→9`.
    pub rebinding: Option<String>,
    /// Which rule found the element: `exact_path`, `role_name`, `loose_name`,
    /// `same_name` (the healing ladder's rungs), or `tree_markdown`.
    pub locator_match: Option<String>,
    /// How the element was healed, for a reader (`button "Add" → button "Add item" (name
    /// contains)`); None when it was found as recorded.
    pub heal: Option<String>,
    /// The healed element's locator in the live window: what `--heal` writes back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub healed_target: Option<Locator>,
    /// When more than one live element fitted the turn's element: every candidate and
    /// what decided between them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub look_alikes: Option<String>,
    /// Where a recorded point moved to in the live window, and why, when it moved
    /// (e.g. `(120, 300)→(180, 450) in button "7"`).
    pub point_moved: Option<String>,
    /// Whether the tool was called (false: the turn failed before, finding its window or
    /// element, so a recording of the replay has no turn for it).
    pub dispatched: bool,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    pub directory: PathBuf,
    /// The trajectory's turns.
    pub turns_recorded: usize,
    /// Steps replayed (a step and the attempts folded into it count once).
    pub attempted: usize,
    pub succeeded: usize,
    pub failed: usize,
    /// Turns not replayed, each with its reason in `turns`.
    pub skipped: usize,
    /// Attempts folded into the step that retried them.
    pub folded: usize,
    /// Every turn replayed as recorded (`raw`).
    pub raw: bool,
    pub stop_on_error: bool,
    pub turns: Vec<TurnResult>,
    pub first_failure: Option<u32>,
    /// How the app's window, when the first step met it, differs from the recording's
    /// first before-state (`the app did not start as recorded: …`): a restored session,
    /// leftover data, another document. Also said in the failing step's summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_differs: Option<String>,
    /// Apps the replay started itself (`launch`, `apps`), in order.
    pub launched: Vec<Launched>,
}

/// The turn folders of a trajectory, in order (see [`crate::trajectory::read`]); an
/// error naming `dir` when there are none.
pub fn turn_dirs(dir: &Path) -> Result<Vec<(u32, PathBuf)>, ToolError> {
    Ok(read::turn_folders(dir)
        .map_err(|e| ToolError::invalid(format!("`dir`: {e}")))?
        .into_iter()
        .map(|t| (t.number, t.dir))
        .collect())
}

/// One turn of the trajectory, read.
struct Turn {
    number: u32,
    dir: PathBuf,
    action: Action,
}

/// Reads every turn before the first is driven (once: the replay works from what it
/// read), so a corrupt trajectory is bad input reported turn by turn (exit 2 at the CLI),
/// never half replayed.
fn read_turns(registry: &ToolRegistry, dir: &Path) -> Result<Vec<Turn>, ToolError> {
    let folders = turn_dirs(dir)?;
    let mut turns = Vec::new();
    let mut problems = Vec::new();
    for (number, dir) in folders {
        let checked = read::action(&dir).and_then(|action| {
            registry.get(&action.tool).map_err(|e| e.to_string())?;
            Ok(action)
        });
        match checked {
            Ok(action) => turns.push(Turn {
                number,
                dir,
                action,
            }),
            Err(problem) => problems.push(format!("turn {number}: {problem}")),
        }
    }
    if problems.is_empty() {
        return Ok(turns);
    }
    Err(ToolError::invalid(format!(
        "{} of {} turns cannot be read, nothing was replayed:\n  {}",
        problems.len(),
        turns.len() + problems.len(),
        problems.join("\n  ")
    )))
}

/// The steps of the trajectory in `dir` (`raw`: one a turn, as recorded), read as a
/// replay reads them: `cua replay --plan`.
pub fn plan_of(registry: &ToolRegistry, dir: &Path, raw: bool) -> Result<Plan, ToolError> {
    Ok(plan_turns(&read_turns(registry, dir)?, raw))
}

/// The plan of turns already read.
fn plan_turns(turns: &[Turn], raw: bool) -> Plan {
    Plan::of_folders(
        turns.iter().map(|t| (t.number, t.dir.as_path(), &t.action)),
        raw,
    )
}

/// Recorded ids → live ones, built up as the replay goes.
#[derive(Default)]
struct Bindings {
    pids: HashMap<u64, u64>,
    windows: HashMap<u64, u64>,
    /// The window of the last app a replayed launch_app started: the target of turns that
    /// carry no app identity (the reference driver records none).
    last_launched: Option<u64>,
    /// Recorded pids whose app this replay started, or tried to.
    launch_tried: std::collections::HashSet<u64>,
    launched: Vec<Launched>,
    /// Healed elements' recorded names → live ones, read into later turns' changes.
    renames: Vec<postcondition::Rename>,
    /// The last reading of each live window that showed a turn's change: the next turn's
    /// before-state while the app has sent nothing since.
    last_state: HashMap<u64, postcondition::LiveState>,
    /// The start was checked: the first step that acts in a window with a recorded
    /// before-state compared it with the live window.
    start_checked: bool,
    /// What that check found different ([`ReplayReport::start_differs`]).
    start_differs: Option<String>,
}

/// Replays every turn of `dir`.
pub async fn replay(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    dir: &Path,
    opts: &ReplayOptions,
    mut progress: impl FnMut(&TurnResult),
) -> Result<ReplayReport, ToolError> {
    let turns = read_turns(registry, dir)?;
    let plan = plan_turns(&turns, opts.raw);
    let (skipped, folded) = plan.counts();
    let mut bindings = Bindings::default();
    let mut report = ReplayReport {
        directory: dir.to_path_buf(),
        turns_recorded: turns.len(),
        attempted: 0,
        succeeded: 0,
        failed: 0,
        skipped,
        folded,
        raw: opts.raw,
        stop_on_error: opts.stop_on_error,
        turns: Vec::new(),
        first_failure: None,
        start_differs: None,
        launched: Vec::new(),
    };
    let by_number = |n: u32| turns.iter().find(|t| t.number == n);
    let replayed: Vec<&Turn> = plan
        .steps
        .iter()
        .filter(|s| s.skipped.is_none())
        .filter_map(|s| by_number(s.turn))
        .collect();
    window::start_recorded_apps(ctx, registry, &replayed, opts, &mut bindings).await?;
    let mut previous_start: Option<Instant> = None;
    for step in plan.steps {
        let Some(turn) = by_number(step.turn) else {
            continue;
        };
        let mut result = TurnResult::of(&step);
        if result.skipped.is_some() {
            progress(&result);
            report.turns.push(result);
            continue;
        }
        // delay_ms is a floor between turn starts (pacing for a person watching); each
        // turn already waited for its recorded change to show.
        if let Some(t) = previous_start {
            tokio::time::sleep_until((t + Duration::from_millis(opts.delay_ms)).into()).await;
        }
        let started = Instant::now();
        previous_start = Some(started);
        match turn::replay_turn(ctx, registry, turn, opts, &mut bindings, &mut result).await {
            Ok(summary) => {
                result.ok = true;
                result.result_summary = summary;
            }
            Err(e) => {
                result.result_summary = match &bindings.start_differs {
                    Some(start) => format!("{e} ({start})"),
                    None => e,
                }
            }
        }
        result.duration_ms = started.elapsed().as_millis() as u64;
        report.attempted += 1;
        if result.ok {
            report.succeeded += 1;
        } else {
            report.failed += 1;
            report.first_failure.get_or_insert(step.turn);
        }
        progress(&result);
        let stop = !result.ok && opts.stop_on_error;
        report.turns.push(result);
        if stop {
            break;
        }
    }
    report.start_differs = bindings.start_differs.take();
    report.launched = bindings.launched;
    Ok(report)
}

impl TurnResult {
    /// `ok`, `skip` or `FAILED`, as a person reads the step's outcome.
    pub fn outcome(&self) -> &'static str {
        match (self.ok, &self.skipped) {
            (_, Some(_)) => "skip",
            (true, None) => "ok",
            (false, None) => "FAILED",
        }
    }

    /// The turns this step left out, a line each ([`plan::left_out`]).
    pub fn left_out(&self) -> Vec<String> {
        plan::left_out(self.turn, &self.tool, self.skipped.as_deref(), &self.folded)
    }

    /// A step's result before it runs: a skipped step is done (ok, not dispatched).
    fn of(step: &Step) -> TurnResult {
        TurnResult {
            turn: step.turn,
            tool: step.tool.clone(),
            ok: step.skipped.is_some(),
            result_summary: step.skipped.clone().unwrap_or_default(),
            skipped: step.skipped.clone(),
            folded: step.folded.clone(),
            rebinding: None,
            locator_match: None,
            heal: None,
            healed_target: None,
            look_alikes: None,
            point_moved: None,
            dispatched: false,
            duration_ms: 0,
        }
    }
}
