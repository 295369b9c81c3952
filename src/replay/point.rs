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

use std::path::Path;

use serde_json::{Value, json};

use super::locate::{MarkdownTarget, resolve_markdown};
use crate::dispatch::{ToolContext, ToolRegistry};
use crate::platform::{Rect, WindowInfo};
use crate::snapshot::Snapshot;
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
pub async fn map_points(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &RecordedLayout<'_>,
    args: &mut Value,
    live: &WindowInfo,
) -> Result<Option<String>, String> {
    let points = points_of(args);
    if points.is_empty() {
        return Ok(None);
    }
    let mut snapshot: Option<std::sync::Arc<Snapshot>> = None;
    let mut notes = Vec::new();
    for (kx, ky, x, y) in points {
        let anchor = element_at(recorded.frames, x, y);
        let mut live_anchor = None;
        if let (Some(a), Some(md)) = (anchor, recorded.markdown) {
            if snapshot.is_none() {
                let pid = live.pid.unwrap_or(0);
                let (_, snap) = registry
                    .read_window(ctx, pid, live.window_id)
                    .await
                    .map_err(|e| e.to_string())?;
                snapshot = Some(snap);
            }
            let snap = snapshot.as_deref().expect("taken above");
            live_anchor = MarkdownTarget::in_markdown(md, a.index)
                .and_then(|target| {
                    let i = resolve_markdown(snap, &target).ok()?;
                    let node = &snap.tree.nodes[*snap.elements.get(i)?];
                    Some((target, node.frame?))
                })
                .filter(|(_, f)| f.width > 0 && f.height > 0);
        }
        let (to, why) = match (anchor, live_anchor) {
            (Some(a), Some((target, frame))) => (
                within(x, y, a.frame, frame),
                format!("in {} \"{}\"", target.role, target.name),
            ),
            _ => {
                let Some(size) = recorded_window_size(recorded.turn_dir) else {
                    continue;
                };
                let (w, h) = (live.bounds.width, live.bounds.height);
                let from = Rect {
                    x: 0,
                    y: 0,
                    width: size.0 as i32,
                    height: size.1 as i32,
                };
                let to = Rect {
                    x: 0,
                    y: 0,
                    width: w,
                    height: h,
                };
                let lost = if anchor.is_some() {
                    "; the element it fell on is not in the live window"
                } else {
                    ""
                };
                (
                    within(x, y, from, to),
                    format!("by the window, {}×{}→{w}×{h}{lost}", size.0, size.1),
                )
            }
        };
        if to != (x, y) {
            args[kx] = whole_or_not(to.0);
            args[ky] = whole_or_not(to.1);
            notes.push(format!("({x}, {y})→({}, {}) {why}", to.0, to.1));
        }
    }
    Ok((!notes.is_empty()).then(|| notes.join("; ")))
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
