//! Settling: when a window shows an action's effect and has stopped changing, so its
//! state can be taken as the turn's after-state.
//!
//! Toolkits show an effect a little after the action returns (GTK 4 ~250 ms after a
//! click), and a state read before that would make every golden one step behind. Where the
//! app sends accessibility events (the platform's event feed), settling waits on them: for
//! the first change event after the action began (unless the tool already read its effect
//! back), then for a short quiet gap without events; the tree is read once, or not at all
//! when the agent read it (get_window_state) after the app's last event. Where no event
//! has ever come from the app, it falls back to comparing tree reads. The screenshot is
//! taken once the window has stopped repainting (the platform's repaint reports: X
//! Damage), or, where those are not known, when two frames in a row agree. Everything is
//! bounded: an app that never goes quiet (an animation) costs at most `QUIET_MAX`. A
//! settle ends early, at its next wait, when the next recorded action cuts it ([`Cut`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::StateCapture;
use crate::platform::{Capture, Platform, Repaint, WindowInfo};

/// With no change event yet, wait this long after the action began for one (an action may
/// have no visible effect)...
const EFFECT_WAIT: Duration = Duration::from_millis(400);
/// ...then until the app has sent nothing for this long...
const QUIET_GAP: Duration = Duration::from_millis(25);
/// ...within this long after the action began, in all.
const QUIET_MAX: Duration = Duration::from_millis(650);
/// A window repainting frame by frame is quiet after this many of its frame intervals
/// without one (a loaded machine delays an animation's frames: 25 ms took a fade's
/// colour in between under the full test suite)...
const REPAINT_QUIET_FRAMES: u32 = 3;
/// ...at most this long.
const REPAINT_QUIET_MAX: Duration = Duration::from_millis(200);
/// Two captures this far apart must agree for the screenshot...
const FRAME_GAP: Duration = Duration::from_millis(5);
/// ...tried this many times.
const FRAME_TRIES: usize = 4;

/// Without events: first look this long after the action...
const POLL_FIRST: Duration = Duration::from_millis(60);
/// ...while nothing changed, look again this often...
const POLL_EVERY: Duration = Duration::from_millis(50);
/// ...and once it differs, two reads this far apart must agree.
const POLL_QUIET: Duration = Duration::from_millis(120);
/// At most this long in all.
const POLL_MAX: Duration = Duration::from_millis(650);
/// How long a window without a tree gets to repaint after an action before it is read.
const TEXT_EFFECT_WAIT: Duration = Duration::from_millis(1500);

/// The agent's reading of a window's tree, as a turn keeps it.
pub struct Observation {
    pub window_id: u64,
    pub read_started: Instant,
    pub state: Value,
}

/// What is known of the action whose effect is awaited.
pub struct Effect<'a> {
    /// The window's state before the action, when it was taken.
    pub before: Option<&'a Value>,
    pub action_started: Instant,
    /// The tool read the implied change back: it shows already.
    pub confirmed: bool,
    /// Read the tree again once its events are quiet, for a change the app makes without
    /// an event ([`silent_changes`]); a stable settle, which reads until two reads agree
    /// anyway, does not need it.
    pub recheck_silent: bool,
}

/// A turn's after-state, and whether the window held still.
pub struct Settled {
    pub state: StateCapture,
    /// What still changed between the last two reads when the window never held still
    /// within the bound, busy widgets and incidental regions aside ([`agent_changes`];
    /// empty when it did, or when the next action cut the wait).
    pub still_changing: Vec<String>,
}

/// The window's state once the action's effect has shown and the window is quiet; or,
/// when `cut` fires first (the next recorded action is about to run), the window as it is
/// then, which is what the app showed after this action and before the next one touched
/// it. The next action never waits for a settle.
pub async fn settled_state(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    effect: Effect<'_>,
    cut: &Cut,
    observed: &std::sync::Mutex<Option<Observation>>,
) -> Settled {
    let mut still_changing = Vec::new();
    let tree = match platform.app_activity(pid).await {
        Some(a) if a.events > 0 => {
            match by_events(platform, pid, window, &effect, cut, observed).await {
                Some((json, first)) if effect.recheck_silent => {
                    let silent = silent_changes(platform, pid, window, &json, cut).await;
                    still_changing = silent.changing;
                    match silent.later {
                        Some(later) => Some((later, None)),
                        None => Some((json, first)),
                    }
                }
                read => read,
            }
        }
        _ => match by_polling(platform, pid, window, &effect, cut).await {
            Some((read, changing)) => {
                still_changing = changing;
                Some(read)
            }
            None => None,
        },
    };
    let Some((json, mut first)) = tree else {
        let state = state_now(platform, pid, window, effect.action_started, observed).await;
        return Settled {
            state,
            still_changing,
        };
    };
    if let Some(bound) = platform.app_quirks(pid).await.repaints_after_tree {
        // The tree shows the effect; the pixels may not yet: a frame taken before the
        // app's next repaint would show the window one step behind its tree.
        // Swing holds a clicked button pressed for 68 ms before its action runs.
        let since = Instant::now().max(effect.action_started + SWING_PRESS);
        cut.repaint_after(platform.as_ref(), window.window_id, since, since + bound)
            .await;
        first = None;
    }
    let deadline = effect.action_started + QUIET_MAX;
    let pixels = steady_pixels(
        platform.as_ref(),
        pid,
        window.window_id,
        first,
        effect.action_started,
        deadline,
        cut,
    )
    .await;
    Settled {
        state: StateCapture { json, pixels },
        still_changing,
    }
}

/// The next action is about to run: a burst of events or repaints in progress gets this
/// long to end, at most, before the window is read as it is.
const CUT_QUIET_MAX: Duration = Duration::from_millis(40);
/// ...and a window whose pixels are behind its tree this long to repaint, at most.
const CUT_CATCH_UP_MAX: Duration = Duration::from_millis(300);

/// Before a screenshot, the window's pixels get to catch up with its tree: when the app's
/// last accessibility event came after the window's last repaint, a screenshot now shows
/// the state before that event. An agent pressing keys back to back on GTK 4's calculator
/// recorded a turn whose tree said "7×6" and whose screenshot showed "7×" (1 turn in 5
/// runs): GTK 4 paints a change a frame or more after its tree shows it. A repaint after
/// the event is waited for, at most CUT_CATCH_UP_MAX; where the platform reports no
/// repaints, nothing is waited for. True when the pixels were behind (a frame taken before
/// is stale).
async fn pixels_catch_up(platform: &dyn Platform, pid: u32, window_id: u64) -> bool {
    let Some(last_repaint) = platform.last_repaint(window_id).await.map(|r| r.at) else {
        return false;
    };
    let last_event = platform.app_activity(pid).await.and_then(|a| a.last);
    let Some(event) = last_event.filter(|e| *e > last_repaint) else {
        return false;
    };
    crate::platform::repaint_after(platform, window_id, event, event + CUT_CATCH_UP_MAX).await;
    true
}

/// Fires when the next recorded action is about to run: a settle stops waiting there,
/// never in the middle of a read (a tree read dropped half-way left the app's connection
/// hanging the next read of that app).
#[derive(Clone)]
pub struct Cut(tokio::sync::watch::Receiver<bool>);

impl Cut {
    /// The cut, and what fires it (`send(true)`).
    pub fn new() -> (tokio::sync::watch::Sender<bool>, Cut) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (tx, Cut(rx))
    }

    fn fired(&self) -> bool {
        *self.0.borrow()
    }

    /// Sleeps until `t`, or until the cut fires; true when it fired.
    async fn sleep_until(&self, t: Instant) -> bool {
        let mut rx = self.0.clone();
        if *rx.borrow_and_update() {
            return true;
        }
        tokio::select! {
            _ = tokio::time::sleep_until(t.into()) => {}
            changed = rx.changed() => {
                // No cut can come any more (the turn is being finished): sleep it out.
                if changed.is_err() {
                    tokio::time::sleep_until(t.into()).await;
                }
            }
        }
        self.fired()
    }

    /// Waits for an event from app `pid` after `since`, until `until`; None when cut
    /// first, else whether one came.
    async fn event_after(
        &self,
        platform: &dyn Platform,
        pid: u32,
        since: Instant,
        until: Instant,
    ) -> Option<bool> {
        crate::platform::event_after_unless(platform, pid, since, until, |t| self.sleep_until(t))
            .await
    }

    /// Waits for window `window_id` to repaint after `since`, until `until`; None when cut
    /// first, else whether it did.
    async fn repaint_after(
        &self,
        platform: &dyn Platform,
        window_id: u64,
        since: Instant,
        until: Instant,
    ) -> Option<bool> {
        let wait = |t| self.sleep_until(t);
        crate::platform::repaint_after_unless(platform, window_id, since, until, wait).await
    }
}

/// The window now, after at most CUT_QUIET_MAX for the app's events and the window's
/// repaints to pause (QUIET_GAP without one).
async fn state_now(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    action_started: Instant,
    observed: &std::sync::Mutex<Option<Observation>>,
) -> StateCapture {
    let until = Instant::now() + CUT_QUIET_MAX;
    let last_event = pause(platform.as_ref(), pid, window.window_id, QUIET_GAP, until).await;
    pixels_catch_up(platform.as_ref(), pid, window.window_id).await;
    if let Some(json) = seen_since(observed, window, last_event, action_started) {
        // The agent read the window after its last event: only the pixels are new.
        let pixels = platform.capture_window(window.window_id).await.ok();
        return StateCapture { json, pixels };
    }
    let (json, frame) = read_state(platform, pid, window).await;
    StateCapture {
        json,
        pixels: frame.map(|(c, _)| c),
    }
}

/// Waits until app `pid` has sent no event and window `window_id` has not repainted for
/// `gap`, or until `until`; returns the app's last event (as of the last look).
pub(super) async fn pause(
    platform: &dyn Platform,
    pid: u32,
    window_id: u64,
    gap: Duration,
    until: Instant,
) -> Option<Instant> {
    loop {
        let last_event = platform.app_activity(pid).await.and_then(|a| a.last);
        let last_repaint = platform.last_repaint(window_id).await.map(|r| r.at);
        let busy_until = last_event
            .into_iter()
            .chain(last_repaint)
            .map(|t| t + gap)
            .max();
        match busy_until {
            Some(t) if t > Instant::now() && Instant::now() < until => {
                tokio::time::sleep_until(t.min(until).into()).await
            }
            _ => return last_event,
        }
    }
}

/// A capture and when it was taken.
pub(super) type Frame = Option<(Capture, Instant)>;

/// The tree, and a capture taken while it is read (the first of the two frames that must
/// agree).
pub(super) async fn read_state(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
) -> (Value, Frame) {
    let shot = {
        let platform = platform.clone();
        let id = window.window_id;
        tokio::spawn(async move {
            // Dated when asked for: the server may take the picture well before the reply
            // arrives (a repaint in between is in the reply's time, not in the picture).
            let asked = Instant::now();
            let c = platform.capture_window(id).await.ok();
            c.map(|c| (c, asked))
        })
    };
    let json = crate::snapshot::window_state_json(platform.as_ref(), pid, window).await;
    (json, shot.await.ok().flatten())
}

/// The tree once the effect showed and the app went quiet (None: cut first).
async fn by_events(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    effect: &Effect<'_>,
    cut: &Cut,
    observed: &std::sync::Mutex<Option<Observation>>,
) -> Option<(Value, Frame)> {
    let last_event = || async { platform.app_activity(pid).await.and_then(|a| a.last) };
    let effect_deadline = effect.action_started + EFFECT_WAIT;
    let deadline = effect.action_started + QUIET_MAX;
    // Events before this instant do not count as the effect showing.
    let mut since = effect.action_started;
    // A web engine focuses a clicked control before the page's handler runs, so a change
    // of focus alone is not yet the effect there. Elsewhere a first state change counts,
    // as it always did (a Swing button's press is followed by its action, then a repaint
    // that the after-state's screenshot waits for from there).
    let web = platform.app_quirks(pid).await.web_engine;
    let waiting_for_effect = !effect.confirmed;
    loop {
        if waiting_for_effect {
            cut.event_after(platform.as_ref(), pid, since, effect_deadline)
                .await?;
        }
        // Sleep until QUIET_GAP after the last event, then look again.
        while let Some(last) = last_event().await {
            let quiet_at = (last + QUIET_GAP).min(deadline);
            if Instant::now() >= quiet_at {
                break;
            }
            if cut.sleep_until(quiet_at).await {
                return None;
            }
        }
        let read_at = Instant::now();
        let (state, frame) =
            match seen_since(observed, window, last_event().await, effect.action_started) {
                // The agent read the window after its last event: the app still shows that.
                Some(state) => (state, None),
                None => read_state(platform, pid, window).await,
            };
        // An event that was not the effect (a focus change, an event our own reads
        // caused) can end the first wait early: with the tree still as before (in a web
        // engine, but for the states a click passes through), wait on for an event after
        // this read while the effect may still come. A focus that is the whole effect is
        // kept at the effect wait's end.
        let unchanged = effect.before.is_some_and(|b| match web {
            true => crate::snapshot::same_but_passing(b, &state),
            false => *b == state,
        });
        if !(unchanged && waiting_for_effect && Instant::now() < effect_deadline) || cut.fired() {
            return Some((state, frame));
        }
        since = read_at;
    }
}

/// How long after a read whose events had gone quiet the tree is read again, to see a
/// change the app made without an event...
const SILENT_HOLD: Duration = Duration::from_millis(150);
/// ...and while the reads differ, for at most this long in all (the last read may come up
/// to SILENT_HOLD later).
const SILENT_MAX: Duration = Duration::from_millis(600);
/// An agent's turn that never held still names at most this many lines that kept
/// changing: a replay reads each named one as any moment of it (its postcondition's
/// `still_changing`), so they are not cut at the few a person needs to read.
const CHANGING_NAMED: usize = 24;

/// What reading a quiet window again found ([`silent_changes`]).
struct Silent {
    /// The window's later state, when it changed since the read (busy widgets aside).
    later: Option<Value>,
    /// What still changed between the last two reads when the bound ran out (empty: the
    /// window held still, or the wait was cut).
    changing: Vec<String>,
}

/// Whether the window changed after `read` without an accessibility event. Gnumeric
/// updates its status label (`Sum = 42`) after the selection moved, sending no event: a
/// recording read when the events went quiet kept `Sum = 0`, and its diff against its own
/// replay failed. Reads until two agree (busy widgets aside, as the stable settle compares
/// them: a pulsing bar never holds still and says nothing of the action), SILENT_HOLD
/// apart, within SILENT_MAX; the next action cuts it (an agent acting sooner pays
/// nothing). A window still changing at the bound says what changed.
async fn silent_changes(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    read: &Value,
    cut: &Cut,
) -> Silent {
    let held = |later: Option<Value>| Silent {
        later,
        changing: Vec::new(),
    };
    if lost(read) {
        return held(None);
    }
    let deadline = Instant::now() + SILENT_MAX;
    let mut last: Option<Value> = None;
    loop {
        // Never nearer than SILENT_HOLD: two reads closer together agree on a window that
        // changes every 100 ms (seen: a last read clamped to the bound, 74 ms after the one
        // before, took a ticking page for still).
        if cut.sleep_until(Instant::now() + SILENT_HOLD).await {
            return held(last);
        }
        let now = crate::snapshot::window_state_json(platform.as_ref(), pid, window).await;
        // A window that went away since (the app was stopped before the next action came)
        // shows nothing later: the state is the one it last showed.
        if lost(&now) {
            return held(last);
        }
        let changing = agent_changes(last.as_ref().unwrap_or(read), &now);
        if changing.is_empty() {
            // Held still: the change, if there was one, is in `last` already.
            return held(last);
        }
        if Instant::now() >= deadline {
            return Silent {
                later: Some(now),
                changing,
            };
        }
        last = Some(now);
    }
}

/// What changed between two reads of an agent's turn, as its `unsettled` note names it:
/// tree lines, busy widgets and incidental regions aside. What toolbars and status bars
/// show follows the app's timing, not the action (Calc's Undo and Clone enable late): the
/// harness's settle leaves them aside too, so a recording and its replay read the window at
/// one moment.
fn agent_changes(a: &Value, b: &Value) -> Vec<String> {
    let incidental = crate::snapshot::incidental::Incidental::default();
    let without = |v: &Value| incidental.without(v).0;
    differences_in_tree(&without(a), &without(b), CHANGING_NAMED)
}

/// Whether a read found no window to read (an error, or a degraded state: gone, or no
/// tree and no pixels).
fn lost(state: &Value) -> bool {
    state.get("error").is_some() || state["degraded"] == true
}

/// The agent's reading of `window`, when it began after the action and after the app's
/// last event (`last_event`): nothing has changed since.
fn seen_since(
    observed: &std::sync::Mutex<Option<Observation>>,
    window: &WindowInfo,
    last_event: Option<Instant>,
    action_started: Instant,
) -> Option<Value> {
    let o = observed.lock().unwrap();
    let o = o.as_ref()?;
    let after = o.read_started > action_started && last_event.is_some_and(|e| o.read_started > e);
    (o.window_id == window.window_id && after).then(|| o.state.clone())
}

/// The tree once two reads agree (None: cut first), and what still changed between the
/// last two reads when they never did within POLL_MAX ([`agent_changes`]).
async fn by_polling(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    effect: &Effect<'_>,
    cut: &Cut,
) -> Option<((Value, Frame), Vec<String>)> {
    // A window without a tree (its state read by OCR) says nothing of an effect but its
    // pixels, and a read costs ~200 ms (more on a loaded machine): its first read waits
    // for a repaint after the action (an SDL app drawing once a frame showed a click's
    // effect after the polling bound under load, and the turn recorded the one before).
    if effect
        .before
        .is_some_and(crate::snapshot::text::state_read_by_ocr)
    {
        let since = effect.action_started;
        cut.repaint_after(
            platform.as_ref(),
            window.window_id,
            since,
            since + TEXT_EFFECT_WAIT,
        )
        .await;
    }
    let started = Instant::now();
    let sleep = |d: Duration| cut.sleep_until(Instant::now() + d);
    if sleep(POLL_FIRST).await {
        return None;
    }
    let read = || crate::snapshot::window_state_json(platform.as_ref(), pid, window);
    let mut last = read().await;
    while started.elapsed() < POLL_MAX {
        let unchanged = !effect.confirmed && effect.before.is_some_and(|b| *b == last);
        if unchanged && started.elapsed() < EFFECT_WAIT {
            if sleep(POLL_EVERY).await {
                return None;
            }
            last = read().await;
            continue;
        }
        if sleep(POLL_QUIET).await {
            // The last read is the window after this action.
            return Some(((last, None), Vec::new()));
        }
        let now = read().await;
        if now == last {
            return Some(((last, None), Vec::new()));
        }
        let previous = std::mem::replace(&mut last, now);
        if started.elapsed() >= POLL_MAX {
            // Text read by OCR differs read to read by itself (a glyph read two ways): it
            // says nothing of a window that keeps changing.
            let changing = match crate::snapshot::text::state_read_by_ocr(&last) {
                true => Vec::new(),
                false => agent_changes(&previous, &last),
            };
            return Some(((last, None), changing));
        }
    }
    Some(((last, None), Vec::new()))
}

/// A capture of the window once it has stopped repainting. Where the platform reports
/// repaints: taken after a quiet gap without one (`repaint_quiet_gap`; the first frame, when nothing repainted
/// since it was asked for: GTK 4's calculator repainted "42" between the server taking a
/// capture and its reply arriving, and a capture dated by its reply showed "7×6"). Otherwise, or while it keeps
/// repainting until `deadline` (an animation): a capture the next frame, at least
/// FRAME_GAP later, agrees with; the last one when frames keep differing.
async fn steady_pixels(
    platform: &dyn Platform,
    pid: u32,
    window_id: u64,
    first: Frame,
    action_started: Instant,
    deadline: Instant,
    cut: &Cut,
) -> Option<Capture> {
    match repaints_quiet(platform, window_id, action_started, deadline, cut).await {
        Quiet::Since(last_repaint) => {
            // A frame taken before the pixels caught up with the tree is stale.
            let behind = pixels_catch_up(platform, pid, window_id).await;
            return match first {
                Some((frame, taken)) if !behind && last_repaint < taken => Some(frame),
                _ => platform.capture_window(window_id).await.ok(),
            };
        }
        // The next action is about to run: the window as it shows now, its pixels caught
        // up with its tree.
        Quiet::Cut => {
            pixels_catch_up(platform, pid, window_id).await;
            return platform.capture_window(window_id).await.ok();
        }
        Quiet::Unknown => {}
    }
    let (mut last, mut taken) = match first {
        Some(f) => f,
        None => (
            platform.capture_window(window_id).await.ok()?,
            Instant::now(),
        ),
    };
    for _ in 0..FRAME_TRIES {
        tokio::time::sleep(FRAME_GAP.saturating_sub(taken.elapsed())).await;
        taken = Instant::now();
        let Ok(next) = platform.capture_window(window_id).await else {
            break;
        };
        let same = next.width == last.width && next.height == last.height && next.rgba == last.rgba;
        last = next;
        if same || Instant::now() >= deadline {
            break;
        }
    }
    Some(last)
}

/// How long Swing holds a button pressed before its action runs (`doClick`'s 68 ms, and
/// a margin).
const SWING_PRESS: Duration = Duration::from_millis(90);

/// What waiting for a window to stop repainting came to.
enum Quiet {
    /// Quiet after its last repaint, then.
    Since(Instant),
    /// Repaints are not known here, or it still repaints at the deadline.
    Unknown,
    /// The next action is about to run.
    Cut,
}

/// Waits until the window has not repainted for its quiet gap.
async fn repaints_quiet(
    platform: &dyn Platform,
    window_id: u64,
    action_started: Instant,
    deadline: Instant,
    cut: &Cut,
) -> Quiet {
    loop {
        let Some(last) = platform.last_repaint(window_id).await else {
            return Quiet::Unknown;
        };
        let quiet_at = last.at + repaint_quiet_gap(last, action_started);
        if Instant::now() >= quiet_at {
            return Quiet::Since(last.at);
        }
        if quiet_at > deadline {
            return Quiet::Unknown;
        }
        if cut.sleep_until(quiet_at).await {
            return Quiet::Cut;
        }
    }
}

/// How long a window must go without repainting to count as still: QUIET_GAP, or a few of
/// its animation's frame intervals when it was animating, bounded. Only frames since the
/// action began make an animation: a single repaint showing the effect, close to the one
/// that showed the previous turn's, is no animation (taken as one, every back-to-back
/// recorded click of the GTK 3 fixture waited 200 ms).
fn repaint_quiet_gap(last: Repaint, action_started: Instant) -> Duration {
    last.cadence
        .filter(|frame| {
            last.at
                .checked_sub(*frame)
                .is_some_and(|before| before >= action_started)
        })
        .map(|frame| (frame * REPAINT_QUIET_FRAMES).clamp(QUIET_GAP, REPAINT_QUIET_MAX))
        .unwrap_or(QUIET_GAP)
}

/// Tree lines that differ between two states, busy widgets aside (at most `named`, then
/// how many more).
pub(super) fn differences_in_tree(a: &Value, b: &Value, named: usize) -> Vec<String> {
    let text = |s: &Value| {
        let title = s["title"].as_str().unwrap_or("").to_string();
        let tree = s["tree_markdown"].as_str().unwrap_or("");
        (
            title,
            crate::snapshot::busy::without_busy_lines(tree).into_owned(),
        )
    };
    let ((ta, a), (tb, b)) = (text(a), text(b));
    let mut out = Vec::new();
    if ta != tb {
        out.push(format!("title: {ta:?} → {tb:?}"));
    }
    if a == b {
        return out;
    }
    let diff = similar::TextDiff::from_lines(&a, &b);
    let lines: Vec<String> = diff
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .map(|c| {
            let sign = if c.tag() == similar::ChangeTag::Delete {
                "-"
            } else {
                "+"
            };
            format!("tree: {sign} {}", c.value().trim())
        })
        .collect();
    let more = lines.len().saturating_sub(named);
    out.extend(lines.into_iter().take(named));
    if more > 0 {
        out.push(format!("tree: and {more} more line(s)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_animating_window_waits_a_few_of_its_frames_and_a_still_one_the_short_gap() {
        let action_started = Instant::now();
        let at = action_started + Duration::from_millis(500);
        let gap = |cadence| repaint_quiet_gap(Repaint { at, cadence }, action_started);
        assert_eq!(gap(None), QUIET_GAP);
        assert_eq!(gap(Some(Duration::from_millis(2))), QUIET_GAP);
        assert_eq!(
            gap(Some(Duration::from_millis(40))),
            Duration::from_millis(120)
        );
        assert_eq!(gap(Some(Duration::from_millis(240))), REPAINT_QUIET_MAX);
        // The frame before this one came before the action: one repaint, no animation.
        let first = Repaint {
            at: action_started + Duration::from_millis(10),
            cadence: Some(Duration::from_millis(200)),
        };
        assert_eq!(repaint_quiet_gap(first, action_started), QUIET_GAP);
    }
}
