//! Stable after-states, for runs whose turns are compared with a golden's (`cua test`,
//! `cua replay --record-to`): a turn's after-state is taken once the window reads the same,
//! tree and pixels, on two reads in a row at least [`GAP`] apart, each after the app's
//! events and repaints have paused. Busy widgets (progress bars, spinners, "Saving…";
//! [`crate::snapshot::busy`]) are left out of that comparison: they never hold still on
//! cue: their moves are waited for until the bound, then left aside, and a "Saving…" is
//! waited out. A replay first checks its turn's recorded change; the reads start only then, so a
//! build that shows its change late is read once the change is there.
//!
//! Bounded: a window still changing when the bound runs out (a scenario's
//! `settle_timeout_ms`, default [`TIMEOUT`]) is taken as it last read, marked `unsettled`
//! with what kept changing, and the harness reports it as such, never as a regression.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::StateCapture;
use super::settle::{self, Cut, Effect};
use crate::platform::{Capture, Platform, Rect, WindowInfo};
use crate::snapshot::busy;
use crate::snapshot::incidental::Incidental;
use crate::trajectory::{Settle, SettleStatus};

/// How long a window may take to hold still, by default.
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// Two reads that agree must be at least this far apart.
const GAP: Duration = Duration::from_millis(150);
/// Before a read, the app has sent no event and the window has not repainted for this long.
const QUIET: Duration = Duration::from_millis(25);
/// At most this many changes are named for an unsettled window.
const NAMED: usize = 3;

/// One read of the window.
struct Read {
    state: StateCapture,
    at: Instant,
}

/// A window just launched, once it holds still as an after-state must (or `timeout` runs
/// out): what a replay waits for before its next turn reads the window, when no recorder
/// settles the launch for it. A browser builds its page's tree after its window shows; a
/// next turn that read its before-state then would take the page's arrival for its own
/// change.
pub async fn first_screen(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    timeout: Duration,
) -> Settle {
    let effect = Effect {
        before: None,
        action_started: Instant::now(),
        confirmed: true,
        recheck_silent: false,
    };
    let incidental = crate::snapshot::incidental::Incidental::default();
    stable_state(platform, pid, window, effect, None, timeout, &incidental)
        .await
        .1
}

/// The window's state once it holds still (or the bound runs out), and how that went.
/// `shown`: when a replay saw the turn's recorded change, if it did. What is under
/// `incidental`'s regions is not compared, so it need not hold still either.
pub async fn stable_state(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
    effect: Effect<'_>,
    shown: Option<Instant>,
    timeout: Duration,
    incidental: &Incidental,
) -> (StateCapture, Settle) {
    let before = effect.before.cloned();
    let action_started = effect.action_started;
    // The first read waits for the action's effect as every recorded turn does; never cut.
    let (_never, uncut) = Cut::new();
    let nobody = std::sync::Mutex::new(None);
    // The reads below see a change the app made without an event.
    let effect = Effect {
        recheck_silent: false,
        ..effect
    };
    let first = settle::settled_state(platform, pid, window, effect, &uncut, &nobody)
        .await
        .state;
    // Read by now (the settle reads at its end): an upper bound of when it showed.
    let first_at = Instant::now();
    let deadline = Instant::now() + timeout;
    let mut last = Read {
        state: first,
        at: first_at,
    };
    // The first read of the state it settled in, busy widgets aside.
    let mut settled_at = first_at;
    let (status, changing) = loop {
        tokio::time::sleep_until((last.at + GAP).min(deadline).into()).await;
        settle::pause(platform.as_ref(), pid, window.window_id, QUIET, deadline).await;
        let at = Instant::now();
        let (json, frame) = settle::read_state(platform, pid, window).await;
        let next = Read {
            state: StateCapture {
                json,
                pixels: frame.map(|(c, _)| c),
            },
            at,
        };
        // Held still: the same reads, busy widgets included, and no work under way that
        // promises a change ("Saving…"). Busy widgets that keep moving are waited for
        // until the bound, then left aside (the diff masks them): only other changes make
        // a window unsettled.
        let (a, b) = (
            Comparable::of(&last.state, incidental),
            Comparable::of(&next.state, incidental),
        );
        let still = same_pixels_and_tree(&a, &b) && !busy::in_progress(&next.state.json);
        if still {
            break (SettleStatus::Stable, Vec::new());
        }
        let changes = differences(&a, &b);
        let moved = !changes.is_empty();
        if moved {
            settled_at = next.at;
        }
        last = next;
        if Instant::now() >= deadline {
            match moved {
                true => break (SettleStatus::Unsettled, changes),
                false => break (SettleStatus::Stable, Vec::new()),
            }
        }
    };
    // A replay's check may have seen it sooner than the first read (which follows it).
    let seen = match shown {
        Some(s) if settled_at == first_at => s.min(first_at),
        _ => settled_at,
    };
    let changed = before
        .as_ref()
        .is_some_and(|b| !settle::differences_in_tree(b, &last.state.json, NAMED).is_empty());
    let settle = Settle {
        status,
        latency_ms: seen.saturating_duration_since(action_started).as_millis() as u64,
        changed,
        changing,
        by: crate::trajectory::SettledBy::Run,
    };
    (last.state, settle)
}

/// A read as the settle compares it: the state without what is under incidental regions,
/// its pixels, and the frames of what was left out (masked in the pixels).
struct Comparable<'a> {
    json: std::borrow::Cow<'a, Value>,
    pixels: Option<&'a Capture>,
    left_out: Vec<Rect>,
}

impl<'a> Comparable<'a> {
    fn of(read: &'a StateCapture, incidental: &Incidental) -> Self {
        let (json, left_out) = match incidental.is_none() {
            true => (std::borrow::Cow::Borrowed(&read.json), Vec::new()),
            false => {
                let (json, frames) = incidental.without(&read.json);
                (std::borrow::Cow::Owned(json), frames)
            }
        };
        Comparable {
            json,
            pixels: read.pixels.as_ref(),
            left_out,
        }
    }
}

/// Whether two reads are the same, busy widgets included (incidental regions aside).
fn same_pixels_and_tree(a: &Comparable, b: &Comparable) -> bool {
    let tree = |s: &Value| (s["title"].clone(), s["tree_markdown"].clone());
    let pixels = match (a.pixels, b.pixels) {
        (Some(pa), Some(pb)) if a.left_out.is_empty() && b.left_out.is_empty() => {
            pa.width == pb.width && pa.height == pb.height && pa.rgba == pb.rgba
        }
        (Some(pa), Some(pb)) => {
            let masks: Vec<Rect> = a.left_out.iter().chain(&b.left_out).copied().collect();
            changed_pixels(pa, pb, &masks).is_none()
        }
        (None, None) => true,
        _ => false,
    };
    pixels && tree(&a.json) == tree(&b.json)
}

/// What differs between two reads of a window, busy widgets and incidental regions aside:
/// tree lines that came or went, and the pixels that changed. Empty when they agree.
fn differences(a: &Comparable, b: &Comparable) -> Vec<String> {
    let mut out = settle::differences_in_tree(&a.json, &b.json, NAMED);
    if let (Some(pa), Some(pb)) = (a.pixels, b.pixels) {
        let mut masks = busy::frames(&a.json);
        masks.extend(busy::frames(&b.json));
        masks.extend(a.left_out.iter().chain(&b.left_out).copied());
        if let Some(changed) = changed_pixels(pa, pb, &masks) {
            out.push(changed);
        }
    }
    out
}

/// `pixels: N px changed in (x, y, w, h)` when two captures differ outside `masks`.
fn changed_pixels(a: &Capture, b: &Capture, masks: &[Rect]) -> Option<String> {
    if (a.width, a.height) != (b.width, b.height) {
        return Some(format!(
            "size: {}x{} → {}x{}",
            a.width, a.height, b.width, b.height
        ));
    }
    let masked = |x: i32, y: i32| masks.iter().any(|m| m.contains(x, y));
    let (mut count, mut min, mut max) = (0u64, (i32::MAX, i32::MAX), (i32::MIN, i32::MIN));
    for (i, (pa, pb)) in a
        .rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .enumerate()
    {
        if pa == pb {
            continue;
        }
        let (x, y) = ((i as u32 % a.width) as i32, (i as u32 / a.width) as i32);
        if masked(x, y) {
            continue;
        }
        count += 1;
        min = (min.0.min(x), min.1.min(y));
        max = (max.0.max(x), max.1.max(y));
    }
    (count > 0).then(|| {
        format!(
            "pixels: {count} px changed in ({}, {}, {}x{})",
            min.0,
            min.1,
            max.0 - min.0 + 1,
            max.1 - min.1 + 1
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn capture(w: u32, h: u32, lit: &[(u32, u32)]) -> Capture {
        let mut rgba = vec![0u8; (w * h * 4) as usize];
        for &(x, y) in lit {
            let i = ((y * w + x) * 4) as usize;
            rgba[i..i + 4].copy_from_slice(&[255, 255, 255, 255]);
        }
        Capture {
            width: w,
            height: h,
            rgba,
        }
    }

    fn state(tree: &str, pixels: Capture) -> StateCapture {
        StateCapture {
            json: json!({ "title": "w", "tree_markdown": tree,
                "busy": [ { "role": "animation", "name": "", "frame": { "x": 8, "y": 0, "w": 2, "h": 2 } } ] }),
            pixels: Some(pixels),
        }
    }

    #[test]
    fn two_reads_agree_when_only_busy_widgets_moved() {
        let a = state(
            "- frame\n  - [0] button \"Add\"\n  - [1] progress_bar value=\"10\"\n",
            capture(10, 4, &[(8, 0)]),
        );
        let b = state(
            "- frame\n  - [0] button \"Add\"\n",
            capture(10, 4, &[(9, 1)]),
        );
        assert_eq!(
            differences_of(&a, &b, &Incidental::none()),
            Vec::<String>::new()
        );
    }

    fn differences_of(a: &StateCapture, b: &StateCapture, incidental: &Incidental) -> Vec<String> {
        differences(
            &Comparable::of(a, incidental),
            &Comparable::of(b, incidental),
        )
    }

    /// Calc's toolbar enables Clone late: not compared, so it need not hold still; with no
    /// incidental regions (or a turn that acts in the toolbar) it must.
    #[test]
    fn a_toolbar_that_changes_late_holds_no_settle_up() {
        let tree = |clone: &str| {
            format!(
                "- frame\n  - tool_bar\n    - [0] button \"Clone\"{clone}\n  - [1] table_cell \"A3\" value=\"42\"\n"
            )
        };
        let with_frame = |tree: String, lit: &[(u32, u32)]| {
            let mut s = state(&tree, capture(10, 4, lit));
            s.json["elements"] = json!([{ "element_index": 0, "role": "button",
                "frame": { "x": 0, "y": 0, "w": 4, "h": 2 } },
                { "element_index": 1, "role": "table_cell", "frame": { "x": 0, "y": 2, "w": 10, "h": 2 } }]);
            s
        };
        let a = with_frame(tree(" (disabled)"), &[(1, 1)]);
        let b = with_frame(tree(""), &[(2, 1)]);
        let regions = Incidental::default();
        assert!(same_pixels_and_tree(
            &Comparable::of(&a, &regions),
            &Comparable::of(&b, &regions)
        ));
        assert_eq!(differences_of(&a, &b, &regions), Vec::<String>::new());
        assert_eq!(differences_of(&a, &b, &Incidental::none()).len(), 3);
        // A change outside the region still counts.
        let c = with_frame(tree("").replace("42", "43"), &[(2, 1)]);
        assert_eq!(differences_of(&b, &c, &regions).len(), 2);
    }

    #[test]
    fn what_kept_changing_is_named_lines_and_pixels() {
        let a = state("- frame\n  - [0] label \"Count: 1\"\n", capture(10, 4, &[]));
        let b = state(
            "- frame\n  - [0] label \"Count: 2\"\n",
            capture(10, 4, &[(1, 1), (3, 2)]),
        );
        assert_eq!(
            differences_of(&a, &b, &Incidental::none()),
            [
                "tree: - - [0] label \"Count: 1\"",
                "tree: + - [0] label \"Count: 2\"",
                "pixels: 2 px changed in (1, 1, 3x2)",
            ]
        );
        let c = state("- frame\n", capture(12, 4, &[]));
        assert!(
            differences_of(&a, &c, &Incidental::none()).contains(&"size: 10x4 → 12x4".to_string())
        );
    }
}
