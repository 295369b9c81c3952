//! Settling: when a window shows an action's effect and has stopped changing, so its
//! state can be taken as the turn's after-state.
//!
//! Toolkits show an effect a little after the action returns (GTK 4 ~250 ms after a
//! click), and a state read before that would make every golden one step behind. Where the
//! app sends accessibility events (the platform's event feed), settling waits on them: for
//! the first change event after the action began (unless the tool already read its effect
//! back), then for a short quiet gap without events; the tree is read once. Where no event
//! has ever come from the app, it falls back to comparing tree reads. The screenshot is
//! taken once the window has stopped repainting (the platform's repaint reports: X
//! Damage), or, where those are not known, when two frames in a row agree. Everything is
//! bounded: an app that never goes quiet (an animation) costs at most `QUIET_MAX`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::StateCapture;
use crate::platform::{Capture, Platform, Repaint, WindowInfo, event_after};

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

/// What is known of the action whose effect is awaited.
pub struct Effect<'a> {
    /// The window's state before the action, when it was taken.
    pub before: Option<&'a Value>,
    pub action_started: Instant,
    /// The tool read the implied change back: it shows already.
    pub confirmed: bool,
}

/// The window's state once the action's effect has shown and the window is quiet.
pub async fn settled_state(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    effect: Effect<'_>,
) -> StateCapture {
    let (json, first) = match platform.app_activity(pid).await {
        Some(a) if a.events > 0 => by_events(platform, pid, window, &effect).await,
        _ => by_polling(platform, pid, window, &effect).await,
    };
    let deadline = effect.action_started + QUIET_MAX;
    let pixels = steady_pixels(
        platform.as_ref(),
        window.window_id,
        first,
        effect.action_started,
        deadline,
    )
    .await;
    StateCapture { json, pixels }
}

/// The next action is about to run: a burst of events or repaints in progress gets this
/// long to end, at most, before the window is read as it is.
const CUT_QUIET_MAX: Duration = Duration::from_millis(40);

/// The settled state, unless `cut` fires first (the next recorded action is about to run):
/// then the window as it is now, which is what the app showed after this action and before
/// the next one touched it. The next action never waits for a settle.
pub async fn unless_cut(
    settled: impl std::future::Future<Output = StateCapture>,
    cut: tokio::sync::oneshot::Receiver<()>,
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
) -> StateCapture {
    tokio::pin!(settled);
    tokio::select! {
        biased;
        state = &mut settled => state,
        fired = cut => match fired {
            Ok(()) => state_now(platform, pid, window).await,
            // No cut will come (recording stops): settle to the end.
            Err(_) => settled.await,
        },
    }
}

/// The window now, after at most CUT_QUIET_MAX for the app's events and the window's
/// repaints to pause (QUIET_GAP without one).
async fn state_now(platform: &Arc<dyn Platform>, pid: u32, window: &WindowInfo) -> StateCapture {
    let until = Instant::now() + CUT_QUIET_MAX;
    loop {
        let last_event = platform.app_activity(pid).await.and_then(|a| a.last);
        let last_repaint = platform.last_repaint(window.window_id).await.map(|r| r.at);
        let busy_until = last_event
            .into_iter()
            .chain(last_repaint)
            .map(|t| t + QUIET_GAP)
            .max();
        match busy_until {
            Some(t) if t > Instant::now() && Instant::now() < until => {
                tokio::time::sleep_until(t.min(until).into()).await
            }
            _ => break,
        }
    }
    let (json, frame) = read_state(platform, pid, window).await;
    StateCapture {
        json,
        pixels: frame.map(|(c, _)| c),
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

async fn by_events(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    effect: &Effect<'_>,
) -> (Value, Frame) {
    let last_event = || async { platform.app_activity(pid).await.and_then(|a| a.last) };
    let effect_deadline = effect.action_started + EFFECT_WAIT;
    let deadline = effect.action_started + QUIET_MAX;
    // Events before this instant do not count as the effect showing.
    let mut since = effect.action_started;
    let waiting_for_effect = !effect.confirmed;
    loop {
        if waiting_for_effect {
            event_after(platform.as_ref(), pid, since, effect_deadline).await;
        }
        // Sleep until QUIET_GAP after the last event, then look again.
        while let Some(last) = last_event().await {
            let quiet_at = (last + QUIET_GAP).min(deadline);
            if Instant::now() >= quiet_at {
                break;
            }
            tokio::time::sleep_until(quiet_at.into()).await;
        }
        let read_at = Instant::now();
        let (state, frame) = read_state(platform, pid, window).await;
        // An event that was not the effect (a focus change, an event our own reads
        // caused) can end the first wait early: with the tree still as before, wait on for
        // an event after this read while the effect may still come.
        let unchanged = effect.before.is_some_and(|b| *b == state);
        if !(unchanged && waiting_for_effect && Instant::now() < effect_deadline) {
            return (state, frame);
        }
        since = read_at;
    }
}

async fn by_polling(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    effect: &Effect<'_>,
) -> (Value, Frame) {
    let started = Instant::now();
    tokio::time::sleep(POLL_FIRST).await;
    let read = || crate::snapshot::window_state_json(platform.as_ref(), pid, window);
    let mut last = read().await;
    while started.elapsed() < POLL_MAX {
        let unchanged = !effect.confirmed && effect.before.is_some_and(|b| *b == last);
        if unchanged && started.elapsed() < EFFECT_WAIT {
            tokio::time::sleep(POLL_EVERY).await;
            last = read().await;
            continue;
        }
        tokio::time::sleep(POLL_QUIET).await;
        let now = read().await;
        let same = now == last;
        last = now;
        if same {
            break;
        }
    }
    (last, None)
}

/// A capture of the window once it has stopped repainting. Where the platform reports
/// repaints: taken after a quiet gap without one (`repaint_quiet_gap`; the first frame, when nothing repainted
/// since it was asked for: GTK 4's calculator repainted "42" between the server taking a
/// capture and its reply arriving, and a capture dated by its reply showed "7×6"). Otherwise, or while it keeps
/// repainting until `deadline` (an animation): a capture the next frame, at least
/// FRAME_GAP later, agrees with; the last one when frames keep differing.
async fn steady_pixels(
    platform: &dyn Platform,
    window_id: u64,
    first: Frame,
    action_started: Instant,
    deadline: Instant,
) -> Option<Capture> {
    if let Some(last_repaint) = repaints_quiet(platform, window_id, action_started, deadline).await
    {
        match first {
            Some((frame, taken)) if last_repaint < taken => return Some(frame),
            _ => return platform.capture_window(window_id).await.ok(),
        }
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

/// Waits until the window has not repainted for its quiet gap and returns its last
/// repaint; None when repaints are not known here, or when it still repaints at `deadline`.
async fn repaints_quiet(
    platform: &dyn Platform,
    window_id: u64,
    action_started: Instant,
    deadline: Instant,
) -> Option<Instant> {
    loop {
        let last = platform.last_repaint(window_id).await?;
        let quiet_at = last.at + repaint_quiet_gap(last, action_started);
        if Instant::now() >= quiet_at {
            return Some(last.at);
        }
        if quiet_at > deadline {
            return None;
        }
        tokio::time::sleep_until(quiet_at.into()).await;
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
