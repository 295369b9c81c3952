//! Where a recorded pixel turn's points land in the live window.
//!
//! Points are window-local pixels of the recorded window, and the live window may differ:
//! another size (a toolkit settling at another height, a user's resize), or a new build
//! whose layout moved. A point keeps its place in the element it fell on: the smallest
//! indexed element of the recorded before-state whose frame holds it, found again live
//! through its tree_markdown line (role, name, ancestors, rank), the offset scaled to the
//! live frame. Without one (a recording that keeps no frames, as cua-driver's; a point on
//! no element; an element the live window lacks), the point keeps its place in the
//! window, scaled from the recorded window's size (its before.png) to the live one's.
//! Either way, the element now under the point must be the recorded one (healed as
//! element turns heal, earlier heals of the run included), or the turn is refused naming
//! both: a point never presses another control.

use std::path::Path;

use serde_json::{Value, json};

use super::heal::{self, describe};
use super::locate::{MarkdownTarget, resolve_markdown, same_name};
use super::postcondition::Rename;
use crate::dispatch::{ToolContext, ToolRegistry};
use crate::platform::{Rect, WindowInfo};
use crate::snapshot::Snapshot;
use crate::trajectory::Locator;
use crate::trajectory::points::{RecordedFrame, element_at, points_of, recorded_window_size};

/// What a turn recorded about its window's layout, for mapping its points (not
/// [`super::bind::RecordedWindow`], which binds the window).
pub struct RecordedLayout<'a> {
    pub turn_dir: &'a Path,
    pub markdown: Option<&'a str>,
    pub frames: &'a [RecordedFrame],
}

/// Moves each recorded point in `args` to where it lands in `live`. Returns what moved
/// and why (e.g. `(120, 300)→(180, 450) in button "7"`), None when no point moved.
///
/// A point never presses another element: where the recording kept frames, the element
/// now under the point must be the one recorded there, found through the healing ladder
/// (with the run's earlier heals, `renames`); otherwise the turn is refused naming both
/// (`recorded point was on button "Add"; it is now on button "Clear" (not pressed)`).
pub async fn map_points(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &RecordedLayout<'_>,
    args: &mut Value,
    live: &WindowInfo,
    renames: &[Rename],
) -> Result<Option<String>, String> {
    let points = args.as_object().map(points_of).unwrap_or_default();
    if points.is_empty() {
        return Ok(None);
    }
    let mut snapshot: Option<std::sync::Arc<Snapshot>> = None;
    let mut notes = Vec::new();
    for (kx, ky, x, y) in points {
        let anchor = element_at(recorded.frames, x, y);
        // Where the recording kept frames, the live window is read: to find the anchor,
        // and to see what the point would press.
        if snapshot.is_none() && !recorded.frames.is_empty() {
            let pid = live.pid.unwrap_or(0);
            let (_, snap) = registry
                .read_window(ctx, pid, live.window_id)
                .await
                .map_err(|e| e.to_string())?;
            snapshot = Some(snap);
        }
        let recorded_element = match (anchor, recorded.markdown) {
            (Some(a), Some(md)) => MarkdownTarget::in_markdown(md, a.index),
            _ => None,
        };
        let live_anchor = match (&snapshot, &recorded_element, anchor) {
            (Some(snap), Some(target), Some(a)) => find_anchor(snap, target, a.frame, renames),
            _ => None,
        };
        let (mut to, mut why) = match (anchor, &live_anchor) {
            (Some(a), Some((_, frame, described))) => {
                (within(x, y, a.frame, *frame), format!("in {described}"))
            }
            // No recorded window size to scale from (no before.png): the point stays where
            // it was recorded, and is still checked below against what it would press.
            _ => match recorded_window_size(recorded.turn_dir) {
                None => ((x, y), String::new()),
                Some(size) => {
                    let (w, h) = (live.bounds.width, live.bounds.height);
                    let from = Rect::new(0, 0, size.0 as i32, size.1 as i32);
                    let lost = if anchor.is_some() {
                        "; the element it fell on is not in the live window"
                    } else {
                        ""
                    };
                    (
                        within(x, y, from, Rect::new(0, 0, w, h)),
                        format!("by the window, {}×{}→{w}×{h}{lost}", size.0, size.1),
                    )
                }
            },
        };
        // A window without a tree (read by OCR): a point that follows no element goes
        // where the picture under it went, never to its raw place unchecked.
        let read_by_ocr = snapshot
            .as_deref()
            .is_some_and(|s| crate::snapshot::text::read_by_ocr(&s.tree));
        if live_anchor.is_none() && read_by_ocr {
            (to, why) = by_image(ctx, recorded.turn_dir, (x, y), live).await?;
        }
        if let Some(snap) = snapshot.as_deref() {
            let was = recorded_element.as_ref().map(|t| renamed(t, renames));
            let under = element_under(snap, to.0, to.1);
            let pressed_is_anchor = match (&live_anchor, under) {
                (Some((index, frame, _)), Some(u)) => {
                    u == *index || snap_frame(snap, u).is_some_and(|f| inside(f, *frame))
                }
                (Some(_), None) => true,
                (None, _) => false,
            };
            if !pressed_is_anchor {
                refuse_other_element(snap, was, under, anchor.is_some())?;
            }
        }
        if to != (x, y) {
            args[kx] = whole_or_not(to.0);
            args[ky] = whole_or_not(to.1);
            notes.push(format!("({x}, {y})→({}, {}) {why}", to.0, to.1));
        }
    }
    Ok((!notes.is_empty()).then(|| notes.join("; ")))
}

/// Where the picture around a recorded point (the turn's before.png) shows in the live
/// window, and how it was found: the one place it does, or an error naming none or each
/// (not pressed).
async fn by_image(
    ctx: &ToolContext,
    turn_dir: &Path,
    (x, y): (f64, f64),
    live: &WindowInfo,
) -> Result<((f64, f64), String), String> {
    let point = format!("({x}, {y})");
    let recorded = image::open(turn_dir.join("before.png"))
        .map_err(|e| {
            format!("the window has no accessibility tree, and the picture to find the recorded point {point} by is unreadable (before.png: {e}); not pressed")
        })?
        .to_rgba8();
    let recorded = crate::platform::Capture {
        width: recorded.width(),
        height: recorded.height(),
        rgba: recorded.into_raw(),
    };
    let (px, py) = (x.round() as i32, y.round() as i32);
    let (patch, at) = crate::visual::patch_around(&recorded, px, py).ok_or_else(|| {
        format!("the recorded point {point} is outside its before.png; not pressed")
    })?;
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    // A window still drawing (a slow build, a late repaint) may not show the picture yet:
    // it is looked for again until it shows, within READY_TIMEOUT.
    let deadline = std::time::Instant::now() + super::READY_TIMEOUT;
    let (shot, mut found) = loop {
        let shot = platform
            .capture_window(live.window_id)
            .await
            .map_err(|e| format!("no screenshot of the live window to find {point} in: {e}"))?;
        let found = crate::visual::find_patch(&shot, &patch, at);
        if !found.is_empty() || std::time::Instant::now() >= deadline {
            break (shot, found);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    // The picture still shows at the recorded point: pressed there (a plain patch, such
    // as an empty entry's, shows in many places; the recorded one is still the one).
    if !found.is_empty() && crate::visual::shows_at(&shot, &patch, at, px, py) {
        return Ok(((x, y), "by image".into()));
    }
    // It moved, and shows in several places: more of its context, until one is left.
    for scale in [2, 4] {
        if found.len() < 2 {
            break;
        }
        let Some((wider, at)) = crate::visual::patch_around_scaled(&recorded, px, py, scale) else {
            break;
        };
        let narrowed = crate::visual::find_patch(&shot, &wider, at);
        if narrowed.is_empty() {
            break;
        }
        found = narrowed;
    }
    // Still tied: the text nearest the recorded point says where the point went.
    if found.len() > 1 {
        if let Some(((ax, ay), text)) = anchored_by_text(&recorded, &shot, &patch, at, (px, py)) {
            return Ok((
                (f64::from(ax), f64::from(ay)),
                format!("by image, anchored by the text \"{text}\" nearest it"),
            ));
        }
    }
    match found.as_slice() {
        [one] => Ok(((f64::from(one.x), f64::from(one.y)), "by image".into())),
        [] => Err(format!(
            "the picture around the recorded point {point} (click.png marks it) shows nowhere in the live window within {} s (not pressed)",
            super::READY_TIMEOUT.as_secs()
        )),
        several => Err(format!(
            "the picture around the recorded point {point} shows in {} places in the live window: {} (not pressed)",
            several.len(),
            several
                .iter()
                .map(|f| format!("({}, {})", f.x, f.y))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Where the recorded point went, by the text nearest it, when its picture shows in
/// several places even with 4× its context (an empty cell among empty cells): a word read
/// once in the recorded picture and once in the live window, nearest the point first (of
/// the three nearest), moves the point as it moved; the picture must still show there.
/// The point and the word; None when no word does.
fn anchored_by_text(
    recorded: &crate::platform::Capture,
    live: &crate::platform::Capture,
    patch: &image::GrayImage,
    at: (i32, i32),
    (px, py): (i32, i32),
) -> Option<((i32, i32), String)> {
    // Words of two letters or more: a lone digit or mark reads differently run to run.
    let words = |c: &crate::platform::Capture| -> Option<Vec<(String, Rect)>> {
        let lines = crate::ocr::read(c).ok()?;
        Some(
            lines
                .iter()
                .flat_map(|l| &l.words)
                .filter(|w| w.text.chars().filter(|c| c.is_alphanumeric()).count() >= 2)
                .map(|w| (w.text.clone(), w.frame))
                .collect(),
        )
    };
    let (before, now) = (words(recorded)?, words(live)?);
    let once =
        |ws: &[(String, Rect)], text: &str| ws.iter().filter(|(t, _)| t == text).count() == 1;
    let centre = |r: &Rect| (r.x + r.width / 2, r.y + r.height / 2);
    let mut nearest: Vec<&(String, Rect)> = before
        .iter()
        .filter(|(t, _)| once(&before, t) && once(&now, t))
        .collect();
    nearest.sort_by_key(|(_, r)| {
        let (cx, cy) = centre(r);
        (i64::from(cx - px)).pow(2) + (i64::from(cy - py)).pow(2)
    });
    nearest.into_iter().take(3).find_map(|(text, was)| {
        let (_, is) = now.iter().find(|(t, _)| t == text)?;
        let ((wx, wy), (ix, iy)) = (centre(was), centre(is));
        let to = (px + ix - wx, py + iy - wy);
        crate::visual::shows_at(live, patch, at, to.0, to.1).then(|| (to, text.clone()))
    })
}

/// The recorded element in the live window: its index, frame and `role "name"`; found by
/// its tree line, else through the healing ladder (role and name moved, loosely renamed,
/// another role), with the run's earlier heals applied to its recorded name.
fn find_anchor(
    snap: &Snapshot,
    target: &MarkdownTarget,
    recorded_frame: Rect,
    renames: &[Rename],
) -> Option<(usize, Rect, String)> {
    let (role, name) = renamed(target, renames);
    let framed = |i: usize| {
        let node = element_node(snap, i)?;
        let f = node.frame.filter(|f| f.width > 0 && f.height > 0)?;
        Some((i, f, describe(&node.role, &node.name)))
    };
    if let Ok(i) = resolve_markdown(
        snap,
        &MarkdownTarget {
            role: role.clone(),
            name: name.clone(),
            ..target.clone()
        },
    ) {
        return framed(i);
    }
    let locator = Locator {
        role,
        name,
        path: Vec::new(),
        frame: Some(recorded_frame),
        states: Vec::new(),
        element_index: 0,
    };
    framed(heal::find(snap, &locator, None).ok()?.index)
}

/// A recorded element's role and name as the live app calls it after the run's heals.
fn renamed(target: &MarkdownTarget, renames: &[Rename]) -> (String, String) {
    let role = crate::snapshot::markdown::role_key(&target.role);
    renames
        .iter()
        .find(|r| {
            crate::snapshot::markdown::role_key(&r.from_role) == role
                && same_name(&r.from_name, &target.name)
        })
        .map(|r| (r.to_role.clone(), r.to_name.clone()))
        .unwrap_or((role, target.name.clone()))
}

/// Refuses a point that would land on another element than the recorded one, naming both;
/// Ok when what is under it now is the recorded element by role and name.
fn refuse_other_element(
    snap: &Snapshot,
    was: Option<(String, String)>,
    under: Option<usize>,
    recorded_on_element: bool,
) -> Result<(), String> {
    let now = under.and_then(|u| element_node(snap, u));
    if let (Some((role, name)), Some(n)) = (&was, now) {
        if crate::snapshot::markdown::role_key(&n.role) == *role && same_name(name, &n.name) {
            return Ok(());
        }
    }
    let was_text = match (&was, recorded_on_element) {
        (Some((role, name)), _) => describe(role, name),
        (None, true) => "an element".to_string(),
        (None, false) => "no element".to_string(),
    };
    match now {
        Some(n) => Err(format!(
            "recorded point was on {was_text}; it is now on {} (not pressed)",
            describe(&n.role, &n.name)
        )),
        None if was.is_some() => Err(format!(
            "recorded point was on {was_text}; the live window has no such element, and the point now falls on no element (not pressed)"
        )),
        None => Ok(()),
    }
}

/// Element `i` of a live snapshot.
fn element_node(snap: &Snapshot, i: usize) -> Option<&crate::platform::AxNode> {
    snap.tree.nodes.get(*snap.elements.get(i)?)
}

fn snap_frame(snap: &Snapshot, i: usize) -> Option<Rect> {
    element_node(snap, i)?.frame
}

fn inside(inner: Rect, outer: Rect) -> bool {
    inner.x >= outer.x
        && inner.y >= outer.y
        && inner.right() <= outer.right()
        && inner.bottom() <= outer.bottom()
}

/// The smallest live element whose frame holds (x, y): what a press there reaches.
fn element_under(snap: &Snapshot, x: f64, y: f64) -> Option<usize> {
    let frames: Vec<RecordedFrame> = (0..snap.elements.len())
        .filter_map(|i| {
            Some(RecordedFrame {
                index: i,
                frame: snap_frame(snap, i).filter(|f| !f.is_empty())?,
            })
        })
        .collect();
    element_at(&frames, x, y).map(|f| f.index)
}

/// The point at the same place in `to` as (x, y) in `from`, in whole pixels.
fn within(x: f64, y: f64, from: Rect, to: Rect) -> (f64, f64) {
    if from.width == to.width && from.height == to.height {
        let dx = (to.x - from.x) as f64;
        let dy = (to.y - from.y) as f64;
        return (x + dx, y + dy);
    }
    let along = |p: f64, a: i32, len: i32, b: i32, new_len: i32| {
        let share = (p - a as f64) / len.max(1) as f64;
        (b as f64 + share * new_len as f64).round()
    };
    (
        along(x, from.x, from.width, to.x, to.width),
        along(y, from.y, from.height, to.y, to.height),
    )
}

/// A whole number as an integer (as a recorded point usually is), else as it is.
fn whole_or_not(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < i64::MAX as f64 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_keeps_its_place_in_a_moved_or_resized_frame() {
        let from = Rect::new(100, 50, 40, 20);
        assert_eq!(
            within(110.0, 55.0, from, Rect::new(300, 80, 40, 20)),
            (310.0, 85.0)
        );
        assert_eq!(
            within(110.0, 55.0, from, Rect::new(100, 50, 80, 40)),
            (120.0, 60.0)
        );
        // The same frame: the point is left as recorded (fractions kept).
        assert_eq!(within(110.5, 55.25, from, from), (110.5, 55.25));
    }
}
