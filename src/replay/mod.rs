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

use crate::errors::ToolError;
use crate::platform::WindowInfo;
use crate::tools::{Snapshot, ToolContext, ToolRegistry};
use crate::trajectory::{Locator, read};

mod bind;
pub mod escalate;
pub mod locate;
pub mod postcondition;
use locate::{LocatorRule, MarkdownTarget, resolve_locator, resolve_markdown};
use postcondition::{Postcondition, Shown};

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

/// Reads every turn before the first is driven, so a corrupt trajectory is bad input
/// reported turn by turn (exit 2 at the CLI), never half replayed.
fn check_turns(registry: &ToolRegistry, turns: &[(u32, PathBuf)]) -> Result<(), ToolError> {
    let problems: Vec<String> = turns
        .iter()
        .filter_map(|(n, dir)| {
            let problem = match read::action(dir) {
                Err(e) => e,
                Ok(action) => {
                    let tool = action["tool"].as_str().unwrap_or_default();
                    registry.get(tool).err()?.to_string()
                }
            };
            Some(format!("turn {n}: {problem}"))
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    Err(ToolError::invalid(format!(
        "{} of {} turns cannot be read, nothing was replayed:\n  {}",
        problems.len(),
        turns.len(),
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
}

/// Replays every turn of `dir`.
pub async fn replay(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    dir: &Path,
    opts: &ReplayOptions,
    mut progress: impl FnMut(&TurnResult),
) -> Result<ReplayReport, ToolError> {
    let turns = turn_dirs(dir)?;
    check_turns(registry, &turns)?;
    let mut bindings = Bindings::default();
    let mut report = ReplayReport {
        directory: dir.to_path_buf(),
        attempted: 0,
        succeeded: 0,
        failed: 0,
        stop_on_error: opts.stop_on_error,
        turns: Vec::new(),
        first_failure: None,
    };
    let mut previous_start: Option<Instant> = None;
    for (n, turn_dir) in turns.iter() {
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
            dispatched: false,
            duration_ms: 0,
        };
        match read::action(turn_dir) {
            Err(e) => result.result_summary = e,
            Ok(action) => {
                result.tool = action["tool"].as_str().unwrap_or("").to_string();
                match replay_turn(
                    ctx,
                    registry,
                    turn_dir,
                    &action,
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
            }
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
        if tool == <crate::tools::ReplayTrajectory as crate::tools::ToolSpec>::NAME {
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
    let recorded_pid = args
        .get("pid")
        .and_then(Value::as_u64)
        .or_else(|| action.get("pid").and_then(Value::as_u64));
    let recorded_window = args
        .get("window_id")
        .and_then(Value::as_u64)
        .or_else(|| action.get("window_id").and_then(Value::as_u64));

    if tool == "launch_app" {
        result.dispatched = true;
        let out = match &opts.bound_app {
            None => registry.call(ctx, tool, args).await,
            Some(app) => {
                let recorded = ["path", "name", "desktop_id"]
                    .iter()
                    .find_map(|k| args.get(*k).and_then(Value::as_str))
                    .unwrap_or("an app")
                    .to_string();
                let bound = crate::tools::BoundLaunch {
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
        result.rebinding = Some(match opts.bound_app {
            Some(_) => format!("bound to the scenario's app, pid {}", pid.unwrap_or(0)),
            None => format!("launched pid {}", pid.unwrap_or(0)),
        });
        return Ok(out.summary);
    }

    // Rebind pid and window, waiting for the window to be there.
    let needs_window = recorded_pid.is_some();
    let deadline = Instant::now() + READY_TIMEOUT;
    let window = if needs_window {
        let no_identity = action.get("app").is_none_or(Value::is_null);
        let recorded_state = no_identity
            .then(|| bind::RecordedWindow::of_turn(turn_dir))
            .flatten();
        // Live windows other recorded windows are bound to are not this one's.
        let taken: Vec<u64> = bindings
            .windows
            .iter()
            .filter(|(old, _)| Some(**old) != recorded_window)
            .map(|(_, new)| *new)
            .collect();
        loop {
            let windows = live_windows(ctx).await?;
            let mut bound = recorded_window
                .and_then(|w| bindings.windows.get(&w))
                .and_then(|w| windows.iter().find(|x| x.window_id == *w))
                .cloned()
                .or_else(|| bind::by_identity(&windows, action))
                .or_else(|| {
                    // Same run: the recorded window still exists with the recorded pid.
                    recorded_window
                        .and_then(|w| {
                            windows
                                .iter()
                                .find(|x| x.window_id == w && x.pid.map(u64::from) == recorded_pid)
                        })
                        .cloned()
                });
            if bound.is_none() {
                if let Some(recorded) = &recorded_state {
                    bound = bind::by_tree(ctx, registry, &windows, recorded, &taken).await?;
                }
            }
            let bound = bound.or_else(|| {
                no_identity
                    .then_some(bindings.last_launched)
                    .flatten()
                    .and_then(|w| windows.iter().find(|x| x.window_id == w))
                    .cloned()
            });
            if let Some(w) = bound {
                break Some(w);
            }
            if Instant::now() >= deadline {
                return Err(match (&recorded_state, action.pointer("/app/app_name")) {
                    (Some(r), None) => format!(
                        "no live window matches the recorded window \"{}\" (its title and a fifth of its element names, or half of them) after {} s; start its app first",
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
                MarkdownTarget::of_turn(turn_dir, recorded_index as usize).ok_or_else(|| {
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
                registry
                    .call(
                        ctx,
                        "get_window_state",
                        json!({ "pid": pid, "window_id": w.window_id, "include_screenshot": false }),
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                let snapshot = ctx.snapshot(pid, w.window_id).ok_or("snapshot missing")?;
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

    result.dispatched = true;
    let out = escalate::call(ctx, registry, tool, args.clone())
        .await
        .result
        .map_err(|e| e.to_string())?;
    // The next turn goes once this one's recorded change shows.
    let (Some(w), Some(post)) = (&window, Postcondition::of_turn(turn_dir)) else {
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
