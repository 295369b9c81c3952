//! Binding a turn's recorded window to a live one: the recorded ids, app identity and
//! tree a turn carries ([`RecordedTarget`]), the lookups that find its live window
//! ([`find_window`]), the apps a replay starts itself, and the bounded wait for the window
//! to be there ([`bind_window`]).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::errors::ToolError;
use crate::platform::WindowInfo;
use crate::trajectory::{Action, read};

use super::launch::{self, AppOverride, Launched};
use super::{Bindings, READY_TIMEOUT, ReplayOptions, Turn, TurnResult, bind};

/// A turn's recorded window trees (before and after the action), read once for all that
/// replay does with them: binding the window, finding the element, placing a point,
/// waiting for the change.
pub(super) struct TurnStates {
    pub before: Option<String>,
    pub after: Option<String>,
    /// The before-state's framed elements (ours keeps them; cua-driver's does not).
    pub before_frames: Vec<crate::trajectory::points::RecordedFrame>,
}

impl TurnStates {
    pub fn read(turn_dir: &Path) -> TurnStates {
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
pub(super) struct RecordedTarget<'a> {
    action: &'a Action,
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
    pub fn of(action: &'a Action, states: &TurnStates) -> RecordedTarget<'a> {
        let (pid, window) = action.recorded_ids();
        let no_identity = action.app.is_none();
        let recorded_tree = states.before.as_deref().or(states.after.as_deref());
        let title = action.app.as_ref().map(|a| a.window_title.as_str());
        let state = recorded_tree.and_then(|md| bind::RecordedWindow::of_markdown(md, title));
        let names = launch::recorded_names(action, state.as_ref().map(|s| s.title.as_str()));
        let state = state.map(|s| s.with_apps(&names));
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
pub(super) async fn find_window(
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
pub(super) async fn start_recorded_apps(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    turns: &[&Turn],
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
        let (Some(pid), _) = action.recorded_ids() else {
            continue;
        };
        if action.tool == "launch_app" {
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

pub(super) async fn live_windows(ctx: &ToolContext) -> Result<Vec<WindowInfo>, String> {
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    Ok(platform
        .list_windows()
        .await
        .map_err(|e| e.to_string())?
        .windows)
}

/// Waits (bounded by [`READY_TIMEOUT`]) for the live window of a turn that acted on one,
/// starting its app once with `launch`; rebinds the turn's pid and window arguments to it
/// and says how in `result`. None for a turn that names no window.
pub(super) async fn bind_window(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &RecordedTarget<'_>,
    opts: &ReplayOptions,
    bindings: &mut Bindings,
    args: &mut Value,
    result: &mut TurnResult,
) -> Result<Option<WindowInfo>, String> {
    let (Some(old_pid), recorded_window) = (recorded.pid, recorded.window) else {
        return Ok(None);
    };
    let mut deadline = Instant::now() + READY_TIMEOUT;
    let window = loop {
        if let Some(w) = find_window(ctx, registry, recorded, bindings).await? {
            break w;
        }
        // With `launch`, an app whose window is not there is started (once).
        if opts.launch && bindings.launch_tried.insert(old_pid) {
            start_recorded_app(ctx, registry, recorded, None, bindings, result.turn).await?;
            deadline = Instant::now() + READY_TIMEOUT;
            continue;
        }
        if Instant::now() >= deadline {
            return Err(no_window(recorded));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let live_pid = window.pid.map(u64::from).unwrap_or(0);
    bindings.pids.insert(old_pid, live_pid);
    args["pid"] = json!(live_pid);
    if let Some(old) = recorded_window {
        bindings.windows.insert(old, window.window_id);
    }
    if args.get("window_id").is_some() {
        args["window_id"] = json!(window.window_id);
    }
    result.rebinding = Some(format!(
        "pid {old_pid}→{live_pid}, window {}→{}",
        recorded_window
            .map(|w| w.to_string())
            .unwrap_or_else(|| "-".into()),
        window.window_id
    ));
    Ok(Some(window))
}

/// Why no live window was bound to a turn's recorded one.
fn no_window(recorded: &RecordedTarget) -> String {
    let app = recorded.action.app.as_ref();
    match (&recorded.state, app) {
        (Some(r), None) => format!(
            "no live window matches the recorded window \"{}\" (half the element names of the smaller of the two trees, at least 3, or its title and a fifth of them) after {} s; start its app first, or replay with --launch",
            r.title,
            READY_TIMEOUT.as_secs()
        ),
        _ => format!(
            "no live window for {} (\"{}\") after {} s",
            app.map_or("the recorded app", |a| a.app_name.as_str()),
            app.map_or("", |a| a.window_title.as_str()),
            READY_TIMEOUT.as_secs()
        ),
    }
}
