//! Text carets in screenshots. A caret blinks, and it is drawn a frame before or after the
//! text it follows, so two runs of the same turn show it in different columns or not at
//! all (GTK 4's calculator: 55 px, the caret after "7" in one run and before it in the
//! other). Playwright hides carets before it compares; a desktop app's caret cannot be
//! hidden from outside, so cua masks it instead: a thin upright mark that differs, 1-3 px
//! wide and at least 6 px and four times its width tall, is a caret. The diff looks inside
//! the frames of editable elements (from either run's state; `[diff] mask_carets = false`
//! compares them); replay's pixel checks on a window without a tree, where no element says
//! where its fields are, look in the whole window. Anything wider still counts.

use serde_json::Value;

use crate::platform::Rect;

/// A caret is at most this wide...
const MAX_WIDTH: i32 = 3;
/// ...at least this tall...
const MIN_HEIGHT: i32 = 6;
/// ...and at least this many times as tall as wide.
const MIN_ASPECT: i32 = 4;
/// A channel that differs by more than this is a differing pixel here (a caret is drawn
/// in the text's colour over the field's background: far apart).
const CHANNEL_DELTA: i32 = 48;

/// The window-local frames of a state's editable elements (its screenshot pixels).
pub fn editable_frames(state: Option<&Value>) -> Vec<Rect> {
    let Some(elements) = state.and_then(|s| s["elements"].as_array()) else {
        return Vec::new();
    };
    elements
        .iter()
        .filter(|e| {
            e["states"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x == "editable"))
        })
        .filter_map(|e| {
            let frame = e.get("pixel_frame").unwrap_or(&e["frame"]);
            crate::snapshot::busy::frame_of(frame)
        })
        .collect()
}

/// The carets that differ between two screenshots of `width` × `height` (RGBA) inside
/// `zones`: each caret's rectangle, a pixel wider on each side.
pub fn carets(
    width: u32,
    height: u32,
    expected: &[u8],
    actual: &[u8],
    zones: &[Rect],
) -> Vec<Rect> {
    let (w, h) = (width as i32, height as i32);
    let differs = |x: i32, y: i32| {
        let i = ((y * w + x) * 4) as usize;
        (0..3).any(|c| (expected[i + c] as i32 - actual[i + c] as i32).abs() > CHANNEL_DELTA)
    };
    let mut out = Vec::new();
    for zone in zones {
        let (x0, y0) = (zone.x.max(0), zone.y.max(0));
        let (x1, y1) = ((zone.x + zone.width).min(w), (zone.y + zone.height).min(h));
        if x0 >= x1 || y0 >= y1 {
            continue;
        }
        let zw = (x1 - x0) as usize;
        let mut seen = vec![false; zw * (y1 - y0) as usize];
        let at = |x: i32, y: i32| (y - y0) as usize * zw + (x - x0) as usize;
        for y in y0..y1 {
            for x in x0..x1 {
                if seen[at(x, y)] || !differs(x, y) {
                    continue;
                }
                // The connected mark (8 neighbours) this pixel starts, as its bounding box.
                let (mut left, mut right, mut top, mut bottom) = (x, x, y, y);
                let mut stack = vec![(x, y)];
                seen[at(x, y)] = true;
                while let Some((px, py)) = stack.pop() {
                    (left, right) = (left.min(px), right.max(px));
                    (top, bottom) = (top.min(py), bottom.max(py));
                    for (dx, dy) in NEIGHBOURS {
                        let (nx, ny) = (px + dx, py + dy);
                        if nx < x0 || ny < y0 || nx >= x1 || ny >= y1 || seen[at(nx, ny)] {
                            continue;
                        }
                        if differs(nx, ny) {
                            seen[at(nx, ny)] = true;
                            stack.push((nx, ny));
                        }
                    }
                }
                let (mw, mh) = (right - left + 1, bottom - top + 1);
                if mw <= MAX_WIDTH && mh >= MIN_HEIGHT && mh >= MIN_ASPECT * mw {
                    out.push(Rect {
                        x: left - 1,
                        y: top - 1,
                        width: mw + 2,
                        height: mh + 2,
                    });
                }
            }
        }
    }
    out
}

const NEIGHBOURS: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn field(w: u32, h: u32) -> Vec<u8> {
        vec![255; (w * h * 4) as usize]
    }

    fn line(img: &mut [u8], w: u32, x: u32, y: std::ops::Range<u32>, thick: u32) {
        for yy in y {
            for xx in x..x + thick {
                let i = ((yy * w + xx) * 4) as usize;
                img[i..i + 3].copy_from_slice(&[0, 0, 0]);
            }
        }
    }

    const ZONE: Rect = Rect {
        x: 0,
        y: 0,
        width: 40,
        height: 30,
    };

    #[test]
    fn a_caret_that_moved_inside_an_editable_field_is_found_in_both_places() {
        let (mut a, mut b) = (field(40, 30), field(40, 30));
        line(&mut a, 40, 10, 5..25, 1);
        line(&mut b, 40, 20, 5..25, 2);
        let found = carets(40, 30, &a, &b, &[ZONE]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0],
            Rect {
                x: 9,
                y: 4,
                width: 3,
                height: 22
            }
        );
    }

    #[test]
    fn wide_or_short_marks_and_marks_outside_editable_fields_are_no_caret() {
        let (a, mut b) = (field(40, 30), field(40, 30));
        line(&mut b, 40, 10, 5..25, 5);
        line(&mut b, 40, 30, 5..9, 1);
        assert!(carets(40, 30, &a, &b, &[ZONE]).is_empty());
        let (a, mut b) = (field(40, 30), field(40, 30));
        line(&mut b, 40, 10, 5..25, 1);
        let elsewhere = Rect {
            x: 20,
            y: 0,
            width: 20,
            height: 30,
        };
        assert!(carets(40, 30, &a, &b, &[elsewhere]).is_empty());
    }

    #[test]
    fn editable_frames_come_from_elements_in_the_editable_state() {
        let state = serde_json::json!({ "elements": [
            { "role": "text", "states": ["editable"], "frame": { "x": 5, "y": 171, "w": 343, "h": 32 } },
            { "role": "button", "states": [], "frame": { "x": 0, "y": 0, "w": 9, "h": 9 } },
            { "role": "paragraph", "states": ["editable"], "frame": { "x": 1, "y": 1, "w": 1, "h": 1 },
              "pixel_frame": { "x": 2, "y": 2, "w": 2, "h": 2 } },
        ]});
        let frames = editable_frames(Some(&state));
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[1].x, 2);
    }
}
