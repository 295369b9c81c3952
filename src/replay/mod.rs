//! Replay: walks a trajectory's turns in order and re-dispatches each recorded tool call
//! through the same registry an MCP or CLI call uses, against a fresh run of the apps.
//!
//! Recorded pids and window ids belong to another run, so they are rebound: a recorded
//! `launch_app` launches the app again and binds its new pid and window; other turns find
//! the live window by the recorded app identity (executable, app name, window title).
//! Element-indexed turns resolve the recorded locator to a current index: exact path, then
//! role + name, then the nearest frame, in a fresh snapshot (or in the previous turn's
//! snapshot when the locator's exact path leads to an element that is still live and
//! unchanged). Before each turn replay waits (bounded) for the window to exist and the
//! locator to resolve; after it, for the turn's recorded change to show in the live window
//! (`postcondition`), so the next turn never runs ahead of the app.
//!
//! Also replays recordings with no app identity and no locator (the reference driver's,
//! cua-driver's through its adapter): the window is bound by its recorded tree
//! (`bind`), the element through its line in the before-state's tree_markdown
//! ([`locate`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::errors::ToolError;
use crate::platform::WindowInfo;
use crate::snapshot::Snapshot;
use crate::trajectory::{Locator, read};

mod bind;
pub mod escalate;
pub mod launch;
pub mod locate;
mod point;
pub mod postcondition;
pub use launch::{AppOverride, Launched};
use locate::{LocatorRule, MarkdownTarget, resolve_locator, resolve_markdown};
use postcondition::{Postcondition, Shown};

/// The replay tool's name: a trajectory's turn of it is never replayed.
pub const REPLAY_TOOL: &str = "replay_trajectory";

/// How long a turn waits for its window and element to be there.
pub const READY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
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
}

/// The scenario's running app and its `[app]` table as launch_app arguments.
#[derive(Debug, Clone)]
pub struct BoundApp {
    pub pid: u32,
    pub window_id: u64,
    pub launch_args: Value,
}

/// One replayed turn.
#[derive(Debug, Clone, Serialize)]
pub struct TurnResult {
    pub turn: u32,
    pub tool: String,
    pub ok: bool,
    pub result_summary: String,
    /// How recorded ids mapped to live ones, e.g. `pid 123→456, window 7→9`.
    pub rebinding: Option<String>,
    /// Which rule found the element: `exact_path`, `role_name`, `nearest_frame`, `tree_markdown`.
    pub locator_match: Option<String>,
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
    pub attempted: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub stop_on_error: bool,
    pub turns: Vec<TurnResult>,
    pub first_failure: Option<u32>,
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
    action: Value,
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
            let tool = action["tool"].as_str().unwrap_or_default();
            registry.get(tool).map_err(|e| e.to_string())?;
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

/// Whether the element a cached snapshot resolves to is still that element: alive, same
/// name, and still visible/showing when it was. One round trip instead of a new tree walk.
async fn still_live(ctx: &ToolContext, snapshot: &Snapshot, index: usize) -> bool {
    let node = &snapshot.tree.nodes[snapshot.elements[index]];
    let Ok(platform) = ctx.platform().await else {
        return false;
    };
    let Ok(live) = platform.read_element(&node.handle).await else {
        return false;
    };
    let kept = |state: &str| {
        !node.states.iter().any(|s| s == state) || live.states.iter().any(|s| s == state)
    };
    live.name == node.name && kept("visible") && kept("showing") && kept("sensitive")
}

/// The pid and window a turn acted on, as recorded.
fn recorded_ids(action: &Value) -> (Option<u64>, Option<u64>) {
    let id = |k: &str| {
        action
            .pointer(&format!("/arguments/{k}"))
            .or_else(|| action.get(k))
            .and_then(Value::as_u64)
    };
    (id("pid"), id("window_id"))
}

/// A turn's recorded window trees (before and after the action), read once for all that
/// replay does with them: binding the window, finding the element, placing a point,
/// waiting for the change.
struct TurnStates {
    before: Option<String>,
    after: Option<String>,
    /// The before-state's framed elements (ours keeps them; cua-driver's does not).
    before_frames: Vec<crate::trajectory::points::RecordedFrame>,
}

impl TurnStates {
    fn read(turn_dir: &Path) -> TurnStates {
        let before = read::state(turn_dir, read::State::Before).ok().flatten();
        let markdown = |s: Option<Value>| s?["tree_markdown"].as_str().map(str::to_string);
        TurnStates {
            before_frames: before
                .as_ref()
                .map(crate::trajectory::points::frames_of)
                .unwrap_or_default(),
            before: markdown(before),
            after: markdown(read::state(turn_dir, read::State::After).ok().flatten()),
        }
    }
}

/// What a turn says about the window it acted on.
struct RecordedTarget<'a> {
    action: &'a Value,
    pid: Option<u64>,
    window: Option<u64>,
    /// No app identity (the reference driver's and cua-driver's turns).
    no_identity: bool,
    /// The recorded before-state, for matching a window that its identity does not
    /// find (none recorded, or an executable renamed between builds).
    state: Option<bind::RecordedWindow>,
    /// The names the turn gives its app (see [`launch::recorded_names`]).
    names: Vec<String>,
}

impl<'a> RecordedTarget<'a> {
    fn of(action: &'a Value, states: &TurnStates) -> RecordedTarget<'a> {
        let (pid, window) = recorded_ids(action);
        let no_identity = action.get("app").is_none_or(Value::is_null);
        let recorded_tree = states.before.as_deref().or(states.after.as_deref());
        let title = action["app"]["window_title"].as_str();
        let state = recorded_tree.and_then(|md| bind::RecordedWindow::of_markdown(md, title));
        let names = launch::recorded_names(action, state.as_ref().map(|s| s.title.as_str()));
        RecordedTarget {
            action,
            pid,
            window,
            no_identity,
            state,
            names,
        }
    }
}

/// One look for the live window of a recorded turn: the window its recorded window is
/// bound to, the recorded app identity, the same window of the same run, the window whose
/// tree matches the recorded one, and, for a turn with nothing to tell its window by, the
/// last launched app's (a turn with a recorded tree is never bound to a window that does
/// not show it).
async fn find_window(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &RecordedTarget<'_>,
    bindings: &Bindings,
) -> Result<Option<WindowInfo>, String> {
    let windows = live_windows(ctx).await?;
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    let find = |id: u64| windows.iter().find(|x| x.window_id == id).cloned();
    let bound = recorded
        .window
        .and_then(|w| bindings.windows.get(&w))
        .and_then(|w| find(*w))
        .or_else(|| bind::by_identity(platform.as_ref(), &windows, recorded.action))
        .or_else(|| {
            recorded.window.and_then(|w| {
                windows
                    .iter()
                    .find(|x| x.window_id == w && x.pid.map(u64::from) == recorded.pid)
                    .cloned()
            })
        });
    if bound.is_some() {
        return Ok(bound);
    }
    if let Some(state) = &recorded.state {
        // Live windows other recorded windows are bound to are not this one's.
        let taken: Vec<u64> = bindings
            .windows
            .iter()
            .filter(|(old, _)| Some(**old) != recorded.window)
            .map(|(_, new)| *new)
            .collect();
        return bind::by_tree(ctx, registry, &windows, state, &taken).await;
    }
    Ok(recorded
        .no_identity
        .then_some(bindings.last_launched)
        .flatten()
        .and_then(find))
}

/// Before the first turn: each recorded app (in the order the turns first use it) that
/// has a new build is started from it, and with `launch`, each that has no live window is
/// started, so apps come up in the recorded order (the last started has the focus, as
/// when they were recorded). Apps a recorded launch_app starts are left to that turn.
async fn start_recorded_apps(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    turns: &[Turn],
    opts: &ReplayOptions,
    bindings: &mut Bindings,
) -> Result<(), ToolError> {
    if !opts.launch && opts.apps.is_empty() {
        return Ok(());
    }
    let mut launched_by_turns = std::collections::HashSet::new();
    for Turn {
        number: n,
        dir,
        action,
    } in turns
    {
        let (Some(pid), _) = recorded_ids(action) else {
            continue;
        };
        if action["tool"] == "launch_app" {
            launched_by_turns.insert(pid);
            continue;
        }
        if launched_by_turns.contains(&pid) || bindings.launch_tried.contains(&pid) {
            continue;
        }
        let recorded = RecordedTarget::of(action, &TurnStates::read(dir));
        let new_build = launch::override_for(&opts.apps, &recorded.names);
        if new_build.is_none() {
            if !opts.launch {
                continue;
            }
            let running = find_window(ctx, registry, &recorded, bindings)
                .await
                .map_err(ToolError::failed)?;
            if let Some(w) = running {
                if let Some(old) = recorded.window {
                    bindings.windows.insert(old, w.window_id);
                }
                bindings.launch_tried.insert(pid);
                continue;
            }
        }
        bindings.launch_tried.insert(pid);
        start_recorded_app(ctx, registry, &recorded, new_build, bindings, *n)
            .await
            .map_err(|e| ToolError::failed(format!("turn {n}: {e}")))?;
    }
    Ok(())
}

/// Starts the app a turn needs (a new build when `new_build`), and binds the recorded
/// window to the window it showed.
async fn start_recorded_app(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &RecordedTarget<'_>,
    new_build: Option<&AppOverride>,
    bindings: &mut Bindings,
    turn: u32,
) -> Result<(), String> {
    let candidates = launch::candidates(&recorded.names, recorded.action, new_build);
    let (arguments, out) = launch::start(ctx, registry, &candidates).await?;
    let launched = Launched::new(
        turn,
        new_build
            .map(|o| o.recorded.clone())
            .or_else(|| recorded.names.first().cloned())
            .unwrap_or_default(),
        arguments,
        &out,
    );
    if let (Some(old), Some(new)) = (recorded.window, launched.window_id) {
        bindings.windows.insert(old, new);
    }
    bindings.last_launched = launched.window_id.or(bindings.last_launched);
    bindings.launched.push(launched);
    Ok(())
}

/// What a recorded element turn says its element was.
enum Recorded {
    Locator(Locator),
    Markdown(MarkdownTarget),
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
    let mut bindings = Bindings::default();
    let mut report = ReplayReport {
        directory: dir.to_path_buf(),
        attempted: 0,
        succeeded: 0,
        failed: 0,
        stop_on_error: opts.stop_on_error,
        turns: Vec::new(),
        first_failure: None,
        launched: Vec::new(),
    };
    start_recorded_apps(ctx, registry, &turns, opts, &mut bindings).await?;
    let mut previous_start: Option<Instant> = None;
    for Turn {
        number: n,
        dir: turn_dir,
        action,
    } in &turns
    {
        // delay_ms is a floor between turn starts (pacing for a person watching); each
        // turn already waited for its recorded change to show.
        if let Some(t) = previous_start {
            tokio::time::sleep_until((t + Duration::from_millis(opts.delay_ms)).into()).await;
        }
        let started = Instant::now();
        previous_start = Some(started);
        let mut result = TurnResult {
            turn: *n,
            tool: String::new(),
            ok: false,
            result_summary: String::new(),
            rebinding: None,
            locator_match: None,
            point_moved: None,
            dispatched: false,
            duration_ms: 0,
        };
        result.tool = action["tool"].as_str().unwrap_or("").to_string();
        match replay_turn(
            ctx,
            registry,
            turn_dir,
            action,
            opts,
            &mut bindings,
            &mut result,
        )
        .await
        {
            Ok(summary) => {
                result.ok = true;
                result.result_summary = summary;
            }
            Err(e) => result.result_summary = e,
        }
        result.duration_ms = started.elapsed().as_millis() as u64;
        report.attempted += 1;
        if result.ok {
            report.succeeded += 1;
        } else {
            report.failed += 1;
            report.first_failure.get_or_insert(*n);
        }
        progress(&result);
        let stop = !result.ok && opts.stop_on_error;
        report.turns.push(result);
        if stop {
            break;
        }
    }
    report.launched = bindings.launched;
    Ok(report)
}

async fn live_windows(ctx: &ToolContext) -> Result<Vec<WindowInfo>, String> {
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    Ok(platform
        .list_windows()
        .await
        .map_err(|e| e.to_string())?
        .windows)
}

async fn replay_turn(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    turn_dir: &Path,
    action: &Value,
    opts: &ReplayOptions,
    bindings: &mut Bindings,
    result: &mut TurnResult,
) -> Result<String, String> {
    let tool = action["tool"].as_str().unwrap_or("");
    if registry
        .get(tool)
        .map_err(|e| e.to_string())?
        .changes_driver()
    {
        if tool == REPLAY_TOOL {
            return Err(format!(
                "refused: a trajectory's {tool} turn is never replayed (it could replay itself); replay that folder on its own"
            ));
        }
        if !opts.allow_driver_changes {
            return Err(format!(
                "refused: {tool} changes the driver itself, and a trajectory's turns may not unless asked (`cua replay --allow-config`, or `allow_config: true` on replay_trajectory)"
            ));
        }
    }
    let mut args = action.get("arguments").cloned().unwrap_or(json!({}));
    if !args.is_object() {
        return Err("`arguments` is not an object".into());
    }
    if let Value::Object(m) = &mut args {
        m.retain(|k, _| !k.starts_with('_'));
    }
    // Text typed into a password field was not recorded: the person replaying gives it.
    let redacted = action.get("redacted").and_then(Value::as_array);
    if let Some(fields) = redacted.filter(|f| !f.is_empty()) {
        let var = format!("CUA_SECRET_TURN_{}", result.turn);
        let secret = std::env::var(&var).map_err(|_| {
            format!(
                "this turn typed into a password field (or an element redaction.names lists) and its text was redacted when recorded; set {var} to replay it"
            )
        })?;
        for field in fields.iter().filter_map(Value::as_str) {
            args[field] = json!(secret);
        }
    }
    let (recorded_pid, recorded_window) = recorded_ids(action);

    if tool == "launch_app" {
        result.dispatched = true;
        let names = launch::recorded_names(action, None);
        let new_build = launch::override_for(&opts.apps, &names);
        let out = match &opts.bound_app {
            None => match new_build {
                None => registry.call(ctx, tool, args).await,
                Some(o) => {
                    let mut build = launch::candidates(&names, action, Some(o)).remove(0);
                    if let Some(urls) = args.get("urls") {
                        build["urls"] = urls.clone();
                    }
                    let out = registry.call(ctx, tool, build.clone()).await;
                    if let Ok(out) = &out {
                        let recorded = o.recorded.clone();
                        let launched = Launched::new(result.turn, recorded, build, &out.structured);
                        bindings.launched.push(launched);
                    }
                    out
                }
            },
            Some(app) => {
                let recorded = ["path", "name", "desktop_id"]
                    .iter()
                    .find_map(|k| args.get(*k).and_then(Value::as_str))
                    .unwrap_or("an app")
                    .to_string();
                let launch = registry.get(tool).map_err(|e| e.to_string())?;
                let bound = launch::BoundLaunch {
                    launch,
                    pid: app.pid,
                    window_id: app.window_id,
                    recorded,
                };
                ToolRegistry::call_tool(ctx, &bound, app.launch_args.clone()).await
            }
        }
        .map_err(|e| e.to_string())?;
        let pid = out.structured["pid"].as_u64();
        let window = out
            .structured
            .pointer("/windows/0/window_id")
            .and_then(Value::as_u64);
        if let (Some(old), Some(new)) = (action.get("pid").and_then(Value::as_u64), pid) {
            bindings.pids.insert(old, new);
        }
        if let (Some(old), Some(new)) = (action.get("window_id").and_then(Value::as_u64), window) {
            bindings.windows.insert(old, new);
        }
        bindings.last_launched = window.or(bindings.last_launched);
        result.rebinding = Some(match (&opts.bound_app, new_build) {
            (Some(_), _) => format!("bound to the scenario's app, pid {}", pid.unwrap_or(0)),
            (None, Some(o)) => format!(
                "launched the new build {} as pid {}",
                o.path,
                pid.unwrap_or(0)
            ),
            (None, None) => format!("launched pid {}", pid.unwrap_or(0)),
        });
        return Ok(out.summary);
    }

    // Rebind pid and window, waiting for the window to be there.
    let needs_window = recorded_pid.is_some();
    let mut deadline = Instant::now() + READY_TIMEOUT;
    let states = TurnStates::read(turn_dir);
    let window = if needs_window {
        let recorded = RecordedTarget::of(action, &states);
        loop {
            if let Some(w) = find_window(ctx, registry, &recorded, bindings).await? {
                break Some(w);
            }
            // With `launch`, an app whose window is not there is started (once).
            if opts.launch && recorded_pid.is_some_and(|p| bindings.launch_tried.insert(p)) {
                start_recorded_app(ctx, registry, &recorded, None, bindings, result.turn).await?;
                deadline = Instant::now() + READY_TIMEOUT;
                continue;
            }
            if Instant::now() >= deadline {
                return Err(match (&recorded.state, action.pointer("/app/app_name")) {
                    (Some(r), None) => format!(
                        "no live window matches the recorded window \"{}\" (its title and a fifth of its element names, or half of them) after {} s; start its app first, or replay with --launch",
                        r.title,
                        READY_TIMEOUT.as_secs()
                    ),
                    _ => format!(
                        "no live window for {} (\"{}\") after {} s",
                        action
                            .pointer("/app/app_name")
                            .and_then(Value::as_str)
                            .unwrap_or("the recorded app"),
                        action
                            .pointer("/app/window_title")
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                        READY_TIMEOUT.as_secs()
                    ),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    } else {
        None
    };
    if let Some(w) = &window {
        let live_pid = w.pid.map(u64::from).unwrap_or(0);
        if let Some(old) = recorded_pid {
            bindings.pids.insert(old, live_pid);
            args["pid"] = json!(live_pid);
        }
        if let Some(old) = recorded_window {
            bindings.windows.insert(old, w.window_id);
        }
        if args.get("window_id").is_some() {
            args["window_id"] = json!(w.window_id);
        }
        result.rebinding = Some(format!(
            "pid {}→{live_pid}, window {}→{}",
            recorded_pid.unwrap_or(0),
            recorded_window
                .map(|w| w.to_string())
                .unwrap_or_else(|| "-".into()),
            w.window_id
        ));
    }

    // Element turns: resolve the locator in a fresh snapshot, waiting until it resolves.
    if let (Some(recorded_index), Some(w)) =
        (args.get("element_index").and_then(Value::as_u64), &window)
    {
        let recorded = match action.get("target").filter(|t| !t.is_null()) {
            Some(t) => Recorded::Locator(
                serde_json::from_value(t.clone())
                    .map_err(|e| format!("bad `target` locator: {e}"))?,
            ),
            None => Recorded::Markdown(
                states.before.as_deref().and_then(|md| MarkdownTarget::in_markdown(md, recorded_index as usize)).ok_or_else(|| {
                    format!("turn has element_index {recorded_index} but no locator and no [{recorded_index}] line in before_state.json's tree_markdown")
                })?,
            ),
        };
        let find = |snapshot: &Snapshot| match &recorded {
            Recorded::Locator(l) => resolve_locator(snapshot, l).map(|(i, r)| (i, r.as_str())),
            Recorded::Markdown(m) => resolve_markdown(snapshot, m).map(|i| (i, "tree_markdown")),
        };
        let pid = w.pid.unwrap_or(0);
        // The snapshot a previous turn took stands when the locator resolves in it by its
        // exact path to an element that is still live and unchanged: element turns then cost
        // one round trip instead of a tree walk. Anything less certain takes a fresh one.
        let exact = LocatorRule::ExactPath.as_str();
        let cached = match ctx.snapshot(pid, w.window_id) {
            Some(snap) => match find(&snap) {
                Ok((i, rule)) if rule == exact && still_live(ctx, &snap, i).await => {
                    Some((i, rule))
                }
                _ => None,
            },
            None => None,
        };
        let (index, rule) = match cached {
            Some(found) => found,
            None => loop {
                let (_, snapshot) = registry
                    .read_window(ctx, pid, w.window_id)
                    .await
                    .map_err(|e| e.to_string())?;
                match find(&snapshot) {
                    Ok(found) => break found,
                    Err(e) if Instant::now() >= deadline => return Err(e),
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            },
        };
        args["element_index"] = json!(index);
        // The recorded snapshot id named a snapshot of the recording's session.
        if let Some(fields) = args.as_object_mut() {
            fields.remove("snapshot_id");
        }
        result.locator_match = Some(rule.to_string());
    }

    if let (Some(w), None) = (&window, args.get("element_index")) {
        let recorded = point::RecordedLayout {
            turn_dir,
            markdown: states.before.as_deref(),
            frames: &states.before_frames,
        };
        result.point_moved = point::map_points(ctx, registry, &recorded, &mut args, w).await?;
    }

    result.dispatched = true;
    let out = escalate::call(ctx, registry, tool, args.clone())
        .await
        .result
        .map_err(|e| e.to_string())?;
    // The next turn goes once this one's recorded change shows.
    let post = match (&states.before, &states.after) {
        (Some(before), Some(after)) => Postcondition::between(before, after),
        _ => None,
    };
    let (Some(w), Some(post)) = (&window, post) else {
        return Ok(out.summary);
    };
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    let pid = args["pid"].as_u64().unwrap_or(0) as u32;
    match post.wait(platform.as_ref(), pid, w).await? {
        Shown::All => Ok(out.summary),
        Shown::Part(missing) => Ok(format!(
            "{} (recorded change partly shown; not seen: {})",
            out.summary,
            postcondition::name(&missing)
        )),
    }
}
