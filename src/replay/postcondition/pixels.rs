//! The change a turn recorded on a window without a tree, where its text did not change
//! (a check box ticked, a swatch filled): the region its pixels changed in, from the
//! turn's before.png and screenshot.png. Replay then requires the live window's pixels to
//! change after the action too ([`changed_after`]), or the turn fails: a click that did
//! nothing never passes for one that ticked a box.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::platform::{Capture, Platform, Rect};

/// A pixel differs when a channel differs by more than this (a font's smoothing does not).
const CHANNEL_SLACK: u8 = 24;
/// Fewer differing pixels than this are not a change a person would see.
const FEWEST: usize = 4;

/// Where the turn's recorded pixels changed (the bounding box, window pixels) and how
/// many changed; None when they did not, or the turn kept no pair of pictures.
pub fn recorded_change(turn_dir: &Path) -> Option<(Rect, usize)> {
    let open = |name: &str| image::open(turn_dir.join(name)).ok().map(|i| i.to_rgba8());
    let (before, after) = (open("before.png")?, open("screenshot.png")?);
    if before.dimensions() != after.dimensions() {
        return None;
    }
    let width = before.width() as usize;
    let (mut count, mut min, mut max) = (0, (usize::MAX, usize::MAX), (0, 0));
    for (i, (a, b)) in before.pixels().zip(after.pixels()).enumerate() {
        if differs(&a.0[..3], &b.0[..3]) {
            let (x, y) = (i % width, i / width);
            count += 1;
            min = (min.0.min(x), min.1.min(y));
            max = (max.0.max(x), max.1.max(y));
        }
    }
    (count >= FEWEST).then(|| {
        let frame = Rect::new(
            min.0 as i32,
            min.1 as i32,
            (max.0 - min.0 + 1) as i32,
            (max.1 - min.1 + 1) as i32,
        );
        (frame, count)
    })
}

/// Whether two pixels' colour channels (alpha left out) differ beyond CHANNEL_SLACK.
fn differs(a: &[u8], b: &[u8]) -> bool {
    a.iter().zip(b).any(|(x, y)| x.abs_diff(*y) > CHANNEL_SLACK)
}

fn changed_pixels(a: &Capture, b: &Capture) -> usize {
    if (a.width, a.height) != (b.width, b.height) {
        return usize::MAX;
    }
    a.rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .filter(|(p, q)| differs(&p[..3], &q[..3]))
        .count()
}

/// Waits (at most `bound`) until the window's pixels differ from `before` by a change a
/// person would see; whether they did.
pub async fn changed_after(
    platform: &dyn Platform,
    window_id: u64,
    before: &Capture,
    bound: Duration,
) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        if let Ok(now) = platform.capture_window(window_id).await {
            if changed_pixels(before, &now) >= FEWEST {
                return true;
            }
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
