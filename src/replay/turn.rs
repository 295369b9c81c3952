//! One replayed turn, as its steps: refuse what a trajectory may not do, bind the window,
//! find (or heal) the element (a browser turn: its tab and ref, [`super::browser`]), read
//! the live window, dispatch, check the change. Each step lives in the module that owns
//! its rule: [`super::window`], [`super::element`] and the healing ladder
//! [`super::heal`], [`super::escalate`], [`super::postcondition`].

use std::time::Instant;

use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::platform::WindowInfo;
use crate::trajectory::Action;

use super::postcondition::{Postcondition, Reading, pixels};
use super::window::{self, TurnStates};
use super::{
    Bindings, READY_TIMEOUT, REPLAY_TOOL, ReplayOptions, Turn, TurnResult, browser, element,
    escalate, launch, point,
};

/// Replays one turn; Ok with the tool's summary, or why the turn failed.
pub(super) async fn replay_turn(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    turn: &Turn,
    opts: &ReplayOptions,
    bindings: &mut Bindings,
    result: &mut TurnResult,
) -> Result<String, String> {
    let action = &turn.action;
    let tool = refuse_driver_changes(registry, action, opts)?;
    let browser_turn = browser::names_a_tab(tool)
        .then(|| browser::recorded(action, tool))
        .transpose()?;
    let mut args = arguments(action, result.turn)?;
    if tool == "launch_app" {
        result.dispatched = true;
        return launch::replay_launch(ctx, registry, action, args, opts, bindings, result).await;
    }
    let states = TurnStates::read(&turn.dir);

    let recorded = window::RecordedTarget::of(action, &states);
    let window =
        window::bind_window(ctx, registry, &recorded, opts, bindings, &mut args, result).await?;
    let Some(window) = window else {
        result.dispatched = true;
        return dispatch(ctx, registry, tool, args).await;
    };

    let target = Target {
        turn,
        states: &states,
        window: &window,
        browser: browser_turn.as_ref(),
    };
    let unbound = args.clone();
    find_target(ctx, registry, &target, bindings, &mut args, result).await?;

    let reading = reading_of(action, &states, opts, bindings);
    check_start(ctx, bindings, action, &states, &window, &reading).await;
    // What the check leaves out, said in the turn's summary (nothing is dropped silently).
    let incidental = match (&states.before, &states.after) {
        (Some(before), Some(after)) => incidental_note(before, after, &reading),
        _ => None,
    };
    let moment = kept_changing(action).map(|c| {
        format!(
            "the recording's window never held still here (still changing: {}): that text compared as any moment of it",
            c.join("; ")
        )
    });
    let left_out = match (incidental, moment) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    let change = match (&states.before, &states.after) {
        (Some(before), Some(after)) => Postcondition::between(before, after, reading),
        _ => None,
    };
    let pid = pid_of(&window);
    let pixel_change = pixels_to_change(ctx, turn, &states, change.is_none(), &window).await?;
    // Only what happens after the dispatch counts: the window as it is just before.
    let live_before = match &change {
        Some(_) => Some(window_now(ctx, bindings, pid, &window).await?),
        None => None,
    };
    bindings.last_state.remove(&window.window_id);

    result.dispatched = true;
    let summary = act(
        ctx,
        registry,
        &target,
        bindings,
        (unbound, args),
        live_before.as_deref(),
        result,
    )
    .await?;

    // When the recorded change showed (None: the turn has none to check).
    let mut checked = Ok(None);
    if let (Some(change), Some(live_before)) = (change, live_before) {
        let platform = ctx.platform().await.map_err(|e| e.to_string())?;
        checked = change
            .wait(platform.as_ref(), pid, &window, &live_before)
            .await
            .map(|shown| {
                bindings.last_state.insert(window.window_id, shown);
                Some(Instant::now())
            });
    }
    PixelChange::check(pixel_change.as_ref(), ctx, &window, &mut checked).await;
    // A recording of this replay reads the turn's after-state once the check is over.
    let seen = checked.as_ref().ok().copied().flatten();
    ctx.recorder.turn_checked(seen).await;
    checked.map(|_| match left_out {
        Some(note) => format!("{summary} ({note})"),
        None => summary,
    })
}

/// How the turn's recorded change is read: the replay's volatile text, the renames of
/// healed elements, another driver's vocabulary, and the incidental regions unless the
/// turn acts inside one.
fn reading_of(
    action: &Action,
    states: &TurnStates,
    opts: &ReplayOptions,
    bindings: &Bindings,
) -> Reading {
    let target_index = crate::trajectory::points::target_index(action, &states.before_frames);
    Reading {
        volatile: opts.volatile.clone(),
        moments: kept_changing(action)
            .map(super::postcondition::still_changing)
            .unwrap_or_default(),
        renames: bindings.renames.clone(),
        other_driver: action.by_other_driver(),
        incidental: opts
            .incidental
            .for_target(states.before.as_deref(), target_index),
        ..Reading::default()
    }
}

/// What an agent's recording saw still changing when it stopped reading this turn's
/// window (its `settle`, written only then); None for a turn that held still, or that a
/// run settling every turn recorded (its unsettled turns are never replayed as goldens).
fn kept_changing(action: &Action) -> Option<&[String]> {
    let settle = action.settle.as_ref()?;
    (settle.by == crate::trajectory::SettledBy::Agent
        && settle.status == crate::trajectory::SettleStatus::Unsettled)
        .then_some(settle.changing.as_slice())
}

fn pid_of(window: &WindowInfo) -> u32 {
    window.pid.unwrap_or(0)
}

/// Before the first step that acts in a window, compares the live window with the
/// recording's before-state there: an app that restored a session or opened another
/// document is named (`the app did not start as recorded: …`) instead of failing later on
/// a label it never showed. Only cua's own recordings (another driver's trees read
/// otherwise); a difference is a note, which a failing step's summary carries.
async fn check_start(
    ctx: &ToolContext,
    bindings: &mut Bindings,
    action: &Action,
    states: &TurnStates,
    window: &WindowInfo,
    reading: &Reading,
) {
    let pid = pid_of(window);
    if bindings.start_checked || action.by_other_driver() {
        return;
    }
    let Some(recorded) = &states.before else {
        return;
    };
    bindings.start_checked = true;
    let read_at = Instant::now();
    let Ok(live) = window_now(ctx, bindings, pid, window).await else {
        return;
    };
    // The turn's own reading just before it acts reuses this one while the app has sent
    // nothing since ([`window_now`]), instead of reading the window twice.
    bindings
        .last_state
        .entry(window.window_id)
        .or_insert_with(|| super::postcondition::LiveState {
            markdown: live.clone(),
            read_at,
        });
    let start = Reading {
        renames: Vec::new(),
        ..reading.clone()
    };
    let changes = super::postcondition::changed_lines(recorded, &live, &start);
    if changes.is_empty() {
        return;
    }
    let said = |sign: char| -> Vec<String> {
        changes
            .iter()
            .filter_map(|c| c.strip_prefix(&format!("{sign} ")).map(str::to_string))
            .collect()
    };
    let (shows, lacks) = (said('+'), said('-'));
    let mut parts = Vec::new();
    if !shows.is_empty() {
        parts.push(format!("it shows {}", super::postcondition::name(&shows)));
    }
    if !lacks.is_empty() {
        parts.push(format!(
            "it does not show {} (recorded)",
            super::postcondition::name(&lacks)
        ));
    }
    bindings.start_differs = Some(format!(
        "the app did not start as recorded: {}",
        parts.join("; ")
    ));
}

/// `not compared: N changes under status_bar, tool_bar (incidental)`, when the recorded
/// change has elements under incidental regions ([`crate::snapshot::incidental`]).
fn incidental_note(before: &str, after: &str, reading: &Reading) -> Option<String> {
    let n = super::postcondition::incidental_changes(before, after, reading);
    let changes = if n == 1 { "change" } else { "changes" };
    (n > 0).then(|| {
        format!(
            "not compared: {n} {changes} under {} (incidental)",
            reading.incidental.roles().join(", ")
        )
    })
}

/// Dispatches the turn's call (`args`, bound to the live element; `unbound` as before
/// that), escalating in a sandbox only when the window (`live_before`, else read by the
/// escalation where it may repeat) shows the first call did nothing. An element the app dropped between finding it and
/// acting on it (LibreOffice Calc makes its cells' objects anew as the sheet redraws) is
/// found again and the call made once more: the tool refused before sending anything.
async fn act(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    target: &Target<'_>,
    bindings: &mut Bindings,
    (unbound, args): (Value, Value),
    live_before: Option<&str>,
    result: &mut TurnResult,
) -> Result<String, String> {
    let tool = target.turn.action.tool.as_str();
    let before = live_before.map(str::to_string);
    let summary = dispatch_with(ctx, registry, tool, args, before.clone()).await;
    if !summary
        .as_ref()
        .is_err_and(|e| e.contains(crate::errors::ELEMENT_GONE))
    {
        return summary;
    }
    let mut args = unbound;
    find_target(ctx, registry, target, bindings, &mut args, result).await?;
    dispatch_with(ctx, registry, tool, args, before).await
}

/// What a turn acts on in its bound window.
struct Target<'a> {
    turn: &'a Turn,
    states: &'a TurnStates,
    window: &'a WindowInfo,
    /// A browser turn's recorded tab and element.
    browser: Option<&'a crate::trajectory::BrowserTarget>,
}

/// Rewrites the turn's arguments to what it acts on live: a browser turn's tab and ref,
/// else its element (healed on the ladder), else its points, moved with what they fell on.
async fn find_target(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    target: &Target<'_>,
    bindings: &mut Bindings,
    args: &mut Value,
    result: &mut TurnResult,
) -> Result<(), String> {
    let (turn, states, window) = (target.turn, target.states, target.window);
    if let Some(recorded) = target.browser {
        // Its window is the browser's: the tab and ref are found in it, not an element.
        if let Some(fields) = args.as_object_mut() {
            fields.remove("pid");
            fields.remove("window_id");
        }
        let rename = browser::bind(ctx, registry, recorded, window, args, result).await?;
        remember(bindings, rename);
        return Ok(());
    }
    let deadline = Instant::now() + READY_TIMEOUT;
    let action = &turn.action;
    match element::find_element(ctx, registry, action, states, window, args, deadline).await? {
        Some(element) => {
            result.locator_match = Some(element.rule.to_string());
            result.heal = element.heal;
            result.healed_target = element.healed_target;
            result.look_alikes = element.look_alikes;
            remember(bindings, element.rename);
        }
        None => {
            let recorded = point::RecordedLayout {
                turn_dir: &turn.dir,
                markdown: states.before.as_deref(),
                frames: &states.before_frames,
            };
            result.point_moved =
                point::map_points(ctx, registry, &recorded, args, window, &bindings.renames)
                    .await?;
        }
    }
    Ok(())
}

/// Keeps a healed element's rename for the later turns' checks (the latest per element).
fn remember(bindings: &mut Bindings, rename: Option<super::postcondition::Rename>) {
    if let Some(rename) = rename {
        bindings
            .renames
            .retain(|r| r.from_role != rename.from_role || r.from_name != rename.from_name);
        bindings.renames.push(rename);
    }
}

/// A change only pixels showed in the recording, and the live window before the turn.
struct PixelChange {
    region: crate::platform::Rect,
    count: usize,
    before: crate::platform::Capture,
}

/// A window without a tree whose text did not change in the recording (`text_unchanged`)
/// but whose pixels did: the live window's pixels now, which must change too.
async fn pixels_to_change(
    ctx: &ToolContext,
    turn: &Turn,
    states: &TurnStates,
    text_unchanged: bool,
    window: &WindowInfo,
) -> Result<Option<PixelChange>, String> {
    let read_by_ocr = states
        .before
        .as_deref()
        .is_some_and(crate::snapshot::text::markdown_read_by_ocr);
    let Some((region, count)) = (text_unchanged && read_by_ocr)
        .then(|| pixels::recorded_change(&turn.dir))
        .flatten()
    else {
        return Ok(None);
    };
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    Ok(platform
        .capture_window(window.window_id)
        .await
        .ok()
        .map(|before| PixelChange {
            region,
            count,
            before,
        }))
}

impl PixelChange {
    /// Fails the turn (`checked`) unless the live window's pixels changed (bounded), when
    /// such a change is expected.
    async fn check<T>(
        expected: Option<&Self>,
        ctx: &ToolContext,
        window: &WindowInfo,
        checked: &mut Result<T, String>,
    ) {
        if let Some(expected) = expected {
            if let Err(e) = expected.changed(ctx, window).await {
                *checked = Err(e);
            }
        }
    }

    /// Ok once the live window's pixels changed (bounded), else why the turn fails.
    async fn changed(&self, ctx: &ToolContext, window: &WindowInfo) -> Result<(), String> {
        let platform = ctx.platform().await.map_err(|e| e.to_string())?;
        let wait = super::postcondition::WAIT;
        if pixels::changed_after(platform.as_ref(), window.window_id, &self.before, wait).await {
            return Ok(());
        }
        let r = self.region;
        Err(format!(
            "the recorded change never showed within {} s: in the recording {} pixels changed (around {}, {}, {}×{}), and the live window did not change",
            wait.as_secs(),
            self.count,
            r.x,
            r.y,
            r.width,
            r.height
        ))
    }
}

/// The live window's tree now: the previous turn's last reading of it while the app has
/// sent nothing since (one tree read a turn, not two), else a fresh read.
async fn window_now(
    ctx: &ToolContext,
    bindings: &Bindings,
    pid: u32,
    window: &WindowInfo,
) -> Result<String, String> {
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    if let Some(last) = bindings.last_state.get(&window.window_id) {
        if last.still_current(platform.as_ref(), pid).await {
            return Ok(last.markdown.clone());
        }
    }
    read_markdown(ctx, pid, window).await
}

/// The turn's tool, unless it changes the driver itself and may not: a trajectory is input
/// from elsewhere.
fn refuse_driver_changes<'a>(
    registry: &ToolRegistry,
    action: &'a Action,
    opts: &ReplayOptions,
) -> Result<&'a str, String> {
    let tool = action.tool.as_str();
    if !registry
        .get(tool)
        .map_err(|e| e.to_string())?
        .changes_driver()
    {
        return Ok(tool);
    }
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
    Ok(tool)
}

/// The recorded arguments, without the recorder's own (`_…`) fields, and with the secret
/// a person gives for text that was redacted when recorded.
fn arguments(action: &Action, turn: u32) -> Result<Value, String> {
    let mut fields = action.arguments.clone();
    fields.retain(|k, _| !k.starts_with('_'));
    let mut args = Value::Object(fields);
    // Text typed into a password field was not recorded: the person replaying gives it.
    let redacted = &action.redacted;
    if !redacted.is_empty() {
        let var = format!("CUA_SECRET_TURN_{turn}");
        let secret = std::env::var(&var).map_err(|_| {
            format!(
                "this turn typed into a password field (or an element redaction.names lists) and its text was redacted when recorded; set {var} to replay it"
            )
        })?;
        for field in redacted {
            args[field] = json!(secret);
        }
    }
    Ok(args)
}

/// Calls the tool (escalated to the foreground where a sandbox allows it); its summary.
async fn dispatch(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    tool: &str,
    args: Value,
) -> Result<String, String> {
    dispatch_with(ctx, registry, tool, args, None).await
}

/// Dispatches, escalating in a sandbox when the window (`before`: its tree just before)
/// shows the first call did nothing; the summary says when an escalation was held back.
async fn dispatch_with(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    tool: &str,
    args: Value,
    before: Option<String>,
) -> Result<String, String> {
    let called = escalate::call(ctx, registry, tool, args, before).await;
    let summary = called
        .result
        .map(|out| out.summary)
        .map_err(|e| e.to_string())?;
    Ok(match called.held_back {
        Some(why) => format!("{summary} ({why})"),
        None => summary,
    })
}

/// The live window's tree as Markdown.
async fn read_markdown(ctx: &ToolContext, pid: u32, window: &WindowInfo) -> Result<String, String> {
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    crate::snapshot::window_markdown(platform.as_ref(), pid, window)
        .await
        .map_err(|e| format!("cannot read the window before the turn: {e}"))
}
