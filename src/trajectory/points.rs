//! Window-local points in a trajectory's turns: which arguments hold one, and which
//! recorded element a point fell on. Replay moves a point to where it lands in the live
//! window; the diff compares two runs' points by what they fell on; both read them here.

use serde_json::Value;

use crate::platform::Rect;

/// The argument pairs that hold a window-local point (click, scroll, type_text and
/// press_key at a point; drag's ends).
pub const POINT_ARGUMENTS: [(&str, &str); 3] = [("x", "y"), ("from_x", "from_y"), ("to_x", "to_y")];

/// Each point an action's arguments hold: its x key, y key and value.
pub fn points_of(
    arguments: &serde_json::Map<String, Value>,
) -> Vec<(&'static str, &'static str, f64, f64)> {
    let number = |k: &str| arguments.get(k).and_then(Value::as_f64);
    POINT_ARGUMENTS
        .iter()
        .filter_map(|(kx, ky)| Some((*kx, *ky, number(kx)?, number(ky)?)))
        .collect()
}

/// An indexed element of a recorded state, with its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedFrame {
    pub index: usize,
    pub frame: Rect,
}

/// The framed elements of a recorded state (ours keeps `elements[]` with frames;
/// cua-driver's states hold only markdown).
pub fn frames_of(state: &Value) -> Vec<RecordedFrame> {
    let Some(elements) = state["elements"].as_array() else {
        return Vec::new();
    };
    elements
        .iter()
        .filter_map(|e| {
            let index = crate::snapshot::element_index(e)? as usize;
            let frame: Rect = serde_json::from_value(e["frame"].clone()).ok()?;
            (frame.width > 0 && frame.height > 0).then_some(RecordedFrame { index, frame })
        })
        .collect()
}

/// The element a point fell on: the smallest recorded frame that holds it.
pub fn element_at(frames: &[RecordedFrame], x: f64, y: f64) -> Option<RecordedFrame> {
    frames
        .iter()
        .filter(|f| {
            let r = f.frame;
            x >= r.x as f64 && y >= r.y as f64 && x < r.right() as f64 && y < r.bottom() as f64
        })
        .min_by_key(|f| f.frame.width as i64 * f.frame.height as i64)
        .copied()
}

/// The recorded element a turn acted on, by its index in the turn's before-state: its
/// element, else the element its first point fell on (`before_frames`).
pub fn target_index(
    action: &crate::trajectory::Action,
    before_frames: &[RecordedFrame],
) -> Option<usize> {
    if let Some(index) = action.element_index() {
        return Some(index as usize);
    }
    let (_, _, x, y) = points_of(&action.arguments).into_iter().next()?;
    element_at(before_frames, x, y).map(|f| f.index)
}

/// A turn's window size when recorded: its before-screenshot's, read from the PNG header.
pub fn recorded_window_size(turn_dir: &std::path::Path) -> Option<(u32, u32)> {
    image::image_dimensions(turn_dir.join("before.png")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_point_falls_on_the_smallest_frame_holding_it() {
        let frames = [
            RecordedFrame {
                index: 0,
                frame: Rect::new(0, 0, 400, 300),
            },
            RecordedFrame {
                index: 1,
                frame: Rect::new(10, 10, 50, 30),
            },
        ];
        assert_eq!(element_at(&frames, 20.0, 20.0).map(|f| f.index), Some(1));
        assert_eq!(element_at(&frames, 200.0, 200.0).map(|f| f.index), Some(0));
        // The right and bottom edges are outside.
        assert_eq!(element_at(&frames, 400.0, 10.0), None);
        let state = json!({ "elements": [
            { "index": 3, "frame": { "x": 1, "y": 2, "width": 3, "height": 4 } },
            { "index": 4, "frame": null },
            { "index": 5, "frame": { "x": 1, "y": 2, "width": 0, "height": 4 } },
        ]});
        assert_eq!(
            frames_of(&state),
            vec![RecordedFrame {
                index: 3,
                frame: Rect::new(1, 2, 3, 4)
            }]
        );
        let args = json!({ "x": 1, "y": 2.5, "from_x": 3 });
        assert_eq!(
            points_of(args.as_object().unwrap()),
            vec![("x", "y", 1.0, 2.5)]
        );
    }
}
