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
//! Also reads the reference driver's recordings (no schema_version, Unix-seconds
//! timestamps, no locator: an element turn is resolved through the line of that index in
//! its before-state's tree_markdown).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::errors::ToolError;
use crate::platform::WindowInfo;
use crate::tools::{Snapshot, ToolContext, ToolRegistry};
use crate::trajectory::{Locator, PathStep, read};

pub mod escalate;
pub mod postcondition;
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

/// Locator from the reference format: the `[N]` line of the before-state's tree_markdown.
fn locator_from_markdown(turn_dir: &Path, index: u64) -> Option<Locator> {
    let md = read::state_markdown(turn_dir, read::State::Before)?;
    let tag = format!("[{index}] ");
    let line = md.lines().find_map(|l| {
        l.trim_start()
            .strip_prefix("- ")
            .and_then(|l| l.strip_prefix(&tag))
    })?;
    let mut words = line.splitn(2, ' ');
    let role = words.next()?.to_string();
    let rest = words.next().unwrap_or("");
    let name = rest
        .strip_prefix('"')
        .and_then(|r| r.find('"').map(|end| r[..end].to_string()))
        .or_else(|| {
            rest.split_once("id=")
                .map(|(_, n)| n.split_whitespace().next().unwrap_or("").to_string())
        })
        .unwrap_or_default();
    Some(Locator {
        role: role.clone(),
        name: name.clone(),
        path: vec![PathStep {
            role,
            name,
            index: 0,
        }],
        frame: None,
        states: Vec::new(),
        element_index: index as usize,
    })
}

/// How a locator was matched in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocatorRule {
    ExactPath,
    RoleName,
    NearestFrame,
}

impl LocatorRule {
    pub fn as_str(self) -> &'static str {
        match self {
            LocatorRule::ExactPath => "exact_path",
            LocatorRule::RoleName => "role_name",
            LocatorRule::NearestFrame => "nearest_frame",
        }
    }
}

/// The element index in `snapshot` that a locator designates, and the rule that found it:
/// exact path, then role + name (the nearest frame among several), then the nearest frame
/// of the same role. On failure the message lists the closest candidates.
pub fn resolve_locator(snapshot: &Snapshot, loc: &Locator) -> Result<(usize, LocatorRule), String> {
    let nodes = &snapshot.tree.nodes;
    let node = |i: usize| &nodes[snapshot.elements[i]];
    let count = snapshot.elements.len();
    if loc.path.len() > 1 {
        let found = (0..count).find(|&i| {
            let n = node(i);
            // Cheap filter before building the path.
            n.role == loc.role
                && n.name == loc.name
                && Locator::of(&snapshot.tree, snapshot.elements[i], i).path == loc.path
        });
        if let Some(i) = found {
            return Ok((i, LocatorRule::ExactPath));
        }
    }
    let distance = |i: usize| -> i64 {
        let (Some(f), Some(r)) = (node(i).frame, loc.frame) else {
            return i64::MAX / 2;
        };
        let ((x, y), (cx, cy)) = (f.center(), r.center());
        (x as i64 - cx as i64).abs() + (y as i64 - cy as i64).abs()
    };
    let same = (0..count)
        .filter(|&i| node(i).role == loc.role && node(i).name == loc.name)
        .min_by_key(|&i| distance(i));
    if let Some(i) = same {
        return Ok((i, LocatorRule::RoleName));
    }
    if loc.frame.is_some() {
        let near = (0..count)
            .filter(|&i| node(i).role == loc.role)
            .min_by_key(|&i| distance(i))
            .filter(|&i| distance(i) < 40);
        if let Some(i) = near {
            return Ok((i, LocatorRule::NearestFrame));
        }
    }
    let mut closest: Vec<(i64, String)> = (0..count)
        .map(|i| {
            let n = node(i);
            let score = (n.role == loc.role) as i64 * 2
                + (n.name.contains(&loc.name) || loc.name.contains(&n.name)) as i64;
            (-score, format!("[{i}] {} \"{}\"", n.role, n.name))
        })
        .collect();
    closest.sort();
    let shown: Vec<String> = closest.into_iter().take(3).map(|(_, s)| s).collect();
    Err(format!(
        "no element matches {} \"{}\" (closest: {})",
        loc.role,
        loc.name,
        shown.join(", ")
    ))
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

/// Finds the live window for a recorded one through the app identity.
fn match_window(windows: &[WindowInfo], action: &Value) -> Option<WindowInfo> {
    let app = action.get("app");
    let title = app.and_then(|a| a["window_title"].as_str());
    let app_name = app.and_then(|a| a["app_name"].as_str());
    let exe = app
        .and_then(|a| a["executable"].as_str())
        .filter(|e| !e.is_empty());
    let score = |w: &WindowInfo| -> i32 {
        let w_exe = w
            .pid
            .and_then(crate::platform::linux::apps::process_executable);
        (exe.is_some() && w_exe.as_deref() == exe) as i32 * 4
            + (app_name == Some(w.app_name.as_str())) as i32 * 2
            + (title == Some(w.title.as_str())) as i32
    };
    windows
        .iter()
        .filter(|w| w.is_on_screen)
        .map(|w| (score(w), w))
        .filter(|(s, _)| *s >= 2)
        .max_by_key(|(s, w)| (*s, w.z_index))
        .map(|(_, w)| w.clone())
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
        loop {
            let windows = live_windows(ctx).await?;
            let bound = recorded_window
                .and_then(|w| bindings.windows.get(&w))
                .and_then(|w| windows.iter().find(|x| x.window_id == *w))
                .cloned()
                .or_else(|| match_window(&windows, action))
                .or_else(|| {
                    let no_identity = action.get("app").is_none_or(Value::is_null);
                    no_identity
                        .then_some(bindings.last_launched)
                        .flatten()
                        .and_then(|w| windows.iter().find(|x| x.window_id == w))
                        .cloned()
                })
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
            if let Some(w) = bound {
                break Some(w);
            }
            if Instant::now() >= deadline {
                return Err(format!(
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
                ));
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
        let locator: Locator = match action.get("target").filter(|t| !t.is_null()) {
            Some(t) => serde_json::from_value(t.clone()).map_err(|e| format!("bad `target` locator: {e}"))?,
            None => locator_from_markdown(turn_dir, recorded_index).ok_or_else(|| {
                format!("turn has element_index {recorded_index} but no locator and no matching line in before_state.json")
            })?,
        };
        let from_markdown = action.get("target").is_none_or(Value::is_null);
        let pid = w.pid.unwrap_or(0);
        // The snapshot a previous turn took stands when the locator resolves in it by its
        // exact path to an element that is still live and unchanged: element turns then cost
        // one round trip instead of a tree walk. Anything less certain takes a fresh one.
        let cached = match ctx.snapshot(pid, w.window_id) {
            Some(snap) => match resolve_locator(&snap, &locator) {
                Ok((i, LocatorRule::ExactPath)) if still_live(ctx, &snap, i).await => {
                    Some((i, LocatorRule::ExactPath))
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
                match resolve_locator(&snapshot, &locator) {
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
        result.locator_match = Some(if from_markdown {
            "tree_markdown".to_string()
        } else {
            rule.as_str().to_string()
        });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::{AxNode, AxTree, Rect};

    fn node(role: &str, name: &str, parent: Option<usize>, children: Vec<usize>, x: i32) -> AxNode {
        AxNode {
            role: role.into(),
            name: name.into(),
            value: None,
            states: vec![],
            actions: vec![],
            frame: Some(Rect {
                x,
                y: 0,
                width: 10,
                height: 10,
            }),
            actionable: true,
            parent,
            children,
            handle: String::new(),
        }
    }

    /// frame > [panel A > button "1" x=0, button "1" x=100], [panel B > button "2" x=200]
    fn snapshot() -> Snapshot {
        let nodes = vec![
            node("frame", "w", None, vec![1, 4], 0),
            node("panel", "A", Some(0), vec![2, 3], 0),
            node("push_button", "1", Some(1), vec![], 0),
            node("push_button", "1", Some(1), vec![], 100),
            node("panel", "B", Some(0), vec![5], 0),
            node("push_button", "2", Some(4), vec![], 200),
        ];
        Snapshot {
            snapshot_id: "t".into(),
            pid: 1,
            window_id: 1,
            tree: AxTree {
                nodes,
                warning: None,
            },
            elements: vec![2, 3, 5],
        }
    }

    #[test]
    fn exact_path_wins_then_role_name_by_nearest_frame_then_nearest_frame() {
        let snap = snapshot();
        let second_one = Locator::of(&snap.tree, 3, 1);
        assert_eq!(
            resolve_locator(&snap, &second_one),
            Ok((1, LocatorRule::ExactPath))
        );

        let mut moved = second_one.clone();
        moved.path[1].name = "renamed panel".into();
        moved.frame = Some(Rect {
            x: 90,
            ..moved.frame.unwrap()
        });
        assert_eq!(
            resolve_locator(&snap, &moved),
            Ok((1, LocatorRule::RoleName))
        );

        let mut renamed = Locator::of(&snap.tree, 5, 2);
        renamed.name = "two".into();
        renamed.path.last_mut().unwrap().name = "two".into();
        assert_eq!(
            resolve_locator(&snap, &renamed),
            Ok((2, LocatorRule::NearestFrame))
        );

        renamed.frame = Some(Rect {
            x: 700,
            ..renamed.frame.unwrap()
        });
        let err = resolve_locator(&snap, &renamed).unwrap_err();
        assert!(
            err.contains("no element matches push_button \"two\""),
            "{err}"
        );
        assert!(err.contains("closest: [0] push_button \"1\""), "{err}");
    }
}
