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
use crate::platform::{Rect, WindowInfo};
use crate::tools::{Snapshot, ToolContext, ToolRegistry};

/// The argument pairs that hold a window-local point.
const POINTS: [(&str, &str); 3] = [("x", "y"), ("from_x", "from_y"), ("to_x", "to_y")];

/// An indexed element of a recorded before-state, with its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedFrame {
    pub index: usize,
    pub frame: Rect,
}

/// The framed elements of a recorded state (ours keeps `elements[]` with frames).
pub fn frames_of(state: &Value) -> Vec<RecordedFrame> {
    let Some(elements) = state["elements"].as_array() else {
        return Vec::new();
    };
    elements
        .iter()
        .filter_map(|e| {
            let index = e["index"].as_u64()? as usize;
            let frame: Rect = serde_json::from_value(e["frame"].clone()).ok()?;
            (frame.width > 0 && frame.height > 0).then_some(RecordedFrame { index, frame })
        })
        .collect()
}

/// What a turn recorded about its window, for mapping its points.
pub struct RecordedWindow<'a> {
    pub turn_dir: &'a Path,
    pub markdown: Option<&'a str>,
    pub frames: &'a [RecordedFrame],
}

/// Moves each recorded point in `args` to where it lands in `live`. Returns what moved
/// and why (e.g. `(120, 300)→(180, 450) in button "7"`), None when no point moved.
pub async fn map_points(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &RecordedWindow<'_>,
    args: &mut Value,
    live: &WindowInfo,
) -> Result<Option<String>, String> {
    let points: Vec<_> = POINTS
        .iter()
        .filter_map(|(kx, ky)| Some((*kx, *ky, args[*kx].as_f64()?, args[*ky].as_f64()?)))
        .collect();
    if points.is_empty() {
        return Ok(None);
    }
    let mut snapshot: Option<std::sync::Arc<Snapshot>> = None;
    let mut notes = Vec::new();
    for (kx, ky, x, y) in points {
        let anchor = smallest_holding(recorded.frames, x, y);
        let mut live_anchor = None;
        if let (Some(a), Some(md)) = (anchor, recorded.markdown) {
            if snapshot.is_none() {
                snapshot = Some(live_snapshot(ctx, registry, live).await?);
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
                let Some(size) = recorded_size(recorded.turn_dir) else {
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
            args[kx] = json!(to.0);
            args[ky] = json!(to.1);
            notes.push(format!("({x}, {y})→({}, {}) {why}", to.0, to.1));
        }
    }
    Ok((!notes.is_empty()).then(|| notes.join("; ")))
}

/// The smallest recorded element whose frame holds the point.
fn smallest_holding(frames: &[RecordedFrame], x: f64, y: f64) -> Option<RecordedFrame> {
    frames
        .iter()
        .filter(|f| {
            let r = f.frame;
            x >= r.x as f64 && y >= r.y as f64 && x < r.right() as f64 && y < r.bottom() as f64
        })
        .min_by_key(|f| f.frame.width as i64 * f.frame.height as i64)
        .copied()
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

/// The recorded window's size: its before-screenshot's, read from the PNG header.
fn recorded_size(turn_dir: &Path) -> Option<(u32, u32)> {
    image::image_dimensions(turn_dir.join("before.png")).ok()
}

async fn live_snapshot(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    live: &WindowInfo,
) -> Result<std::sync::Arc<Snapshot>, String> {
    let pid = live.pid.unwrap_or(0);
    registry
        .call(
            ctx,
            "get_window_state",
            json!({ "pid": pid, "window_id": live.window_id, "include_screenshot": false }),
        )
        .await
        .map_err(|e| e.to_string())?;
    ctx.snapshot(pid, live.window_id)
        .ok_or_else(|| "no snapshot of the live window".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: i32, y: i32, width: i32, height: i32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn a_point_keeps_its_place_in_a_moved_or_resized_frame() {
        let from = rect(100, 50, 40, 20);
        assert_eq!(
            within(110.0, 55.0, from, rect(300, 80, 40, 20)),
            (310.0, 85.0)
        );
        assert_eq!(
            within(110.0, 55.0, from, rect(100, 50, 80, 40)),
            (120.0, 60.0)
        );
        // The same frame: the point is left as recorded (fractions kept).
        assert_eq!(within(110.5, 55.25, from, from), (110.5, 55.25));
    }

    #[test]
    fn the_smallest_frame_holding_the_point_is_its_element() {
        let frames = [
            RecordedFrame {
                index: 0,
                frame: rect(0, 0, 400, 300),
            },
            RecordedFrame {
                index: 1,
                frame: rect(10, 10, 50, 30),
            },
        ];
        assert_eq!(
            smallest_holding(&frames, 20.0, 20.0).map(|f| f.index),
            Some(1)
        );
        assert_eq!(
            smallest_holding(&frames, 200.0, 200.0).map(|f| f.index),
            Some(0)
        );
        // The right and bottom edges are outside.
        assert_eq!(smallest_holding(&frames, 400.0, 10.0), None);
        let state = json!({ "elements": [
            { "index": 3, "frame": { "x": 1, "y": 2, "width": 3, "height": 4 } },
            { "index": 4, "frame": null },
            { "index": 5, "frame": { "x": 1, "y": 2, "width": 0, "height": 4 } },
        ]});
        assert_eq!(
            frames_of(&state),
            vec![RecordedFrame {
                index: 3,
                frame: rect(1, 2, 3, 4)
            }]
        );
    }
}
