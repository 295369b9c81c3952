//! The change a turn recorded on a window without a tree, where its text did not change
//! (a check box ticked, a swatch filled): the region its pixels changed in, from the
//! turn's before.png and screenshot.png. Replay then requires the live window's pixels to
//! change after the action too ([`changed_after`]), or the turn fails: a click that did
//! nothing never passes for one that ticked a box. Text carets are left out on both sides
//! ([`crate::caret`]): a blink is neither a recorded change nor a live one.

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
    let (width, height) = before.dimensions();
    let carets = carets_between(width, height, before.as_raw(), after.as_raw());
    let (mut count, mut min, mut max) = (0, (usize::MAX, usize::MAX), (0, 0));
    for (i, (a, b)) in before.pixels().zip(after.pixels()).enumerate() {
        let (x, y) = (i % width as usize, i / width as usize);
        if differs(&a.0[..3], &b.0[..3]) && !in_any(&carets, x, y) {
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

/// Pixels that differ between two captures, text carets left out: a caret that blinks or
/// moves is no change of the app's.
fn changed_pixels(a: &Capture, b: &Capture) -> usize {
    if (a.width, a.height) != (b.width, b.height) {
        return usize::MAX;
    }
    let carets = carets_between(a.width, a.height, &a.rgba, &b.rgba);
    a.rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .enumerate()
        .filter(|(i, (p, q))| {
            let (x, y) = (i % a.width as usize, i / a.width as usize);
            differs(&p[..3], &q[..3]) && !in_any(&carets, x, y)
        })
        .count()
}

/// The text carets that differ between two RGBA pictures, anywhere in them (a window
/// without a tree says nothing of where its fields are), each grown by a pixel on every
/// side: a caret's smoothed edges differ less than its stroke.
fn carets_between(width: u32, height: u32, a: &[u8], b: &[u8]) -> Vec<Rect> {
    let whole = [Rect::new(0, 0, width as i32, height as i32)];
    crate::caret::carets(width, height, a, b, &whole)
        .into_iter()
        .map(|r| Rect::new(r.x - 1, r.y - 1, r.width + 2, r.height + 2))
        .collect()
}

fn in_any(rects: &[Rect], x: usize, y: usize) -> bool {
    let (x, y) = (x as i32, y as i32);
    rects
        .iter()
        .any(|r| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A white picture with black rectangles.
    fn picture(width: u32, height: u32, marks: &[Rect]) -> Capture {
        let mut rgba = vec![255u8; (width * height * 4) as usize];
        for r in marks {
            for y in r.y..r.y + r.height {
                for x in r.x..r.x + r.width {
                    let i = ((y as u32 * width + x as u32) * 4) as usize;
                    rgba[i..i + 3].copy_from_slice(&[0, 0, 0]);
                }
            }
        }
        Capture {
            width,
            height,
            rgba,
        }
    }

    #[test]
    fn a_caret_is_no_change_and_a_ticked_box_is() {
        let blank = picture(80, 40, &[]);
        // A caret that blinked on, and one that moved: no change either way.
        let caret = picture(80, 40, &[Rect::new(20, 10, 1, 16)]);
        let moved = picture(80, 40, &[Rect::new(31, 10, 1, 16)]);
        assert_eq!(changed_pixels(&blank, &caret), 0);
        assert_eq!(changed_pixels(&caret, &moved), 0);
        // A box ticked beside a blinking caret: the tick counts, and only it.
        let ticked = picture(
            80,
            40,
            &[Rect::new(20, 10, 1, 16), Rect::new(50, 10, 10, 10)],
        );
        assert_eq!(changed_pixels(&blank, &ticked), 100);
    }
}
