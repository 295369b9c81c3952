//! A pixel turn's points as the diff compares them. Replay moves a recorded point to
//! where it lands in the live window (another size, a moved layout), so two runs' points
//! are the same when they fell on the same element (role and name, from before-states
//! that keep frames), or, where a side keeps none (cua-driver's), at the same place in
//! their windows (scaled by the before-screenshots' sizes, within a pixel and a half).

use std::path::Path;

use crate::trajectory::points::{RecordedFrame, element_at, points_of, recorded_window_size};

/// Within this many pixels of the same place in the window is the same place (replay
/// rounds a scaled point to whole pixels).
const SAME_PLACE_PX: f64 = 1.5;

/// Where one of a turn's points fell.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    pub keys: (&'static str, &'static str),
    pub at: (f64, f64),
    /// `role "name"` of the recorded element it fell on.
    pub element: Option<String>,
    /// The recorded window's size.
    pub window: Option<(u32, u32)>,
}

/// The places of a turn's points (`before`: its before-state, `frames`: that state's
/// framed elements); `words` names an element by role and name.
pub fn places(
    turn_dir: &Path,
    before: Option<&serde_json::Value>,
    frames: &[RecordedFrame],
    action: &crate::trajectory::Action,
    words: impl Fn(&str, &str) -> String,
) -> Vec<Place> {
    let points = points_of(&action.arguments);
    if points.is_empty() {
        return Vec::new();
    }
    let window = recorded_window_size(turn_dir);
    points
        .into_iter()
        .map(|(kx, ky, x, y)| {
            let element = element_at(frames, x, y).and_then(|f| {
                let elements = before?["elements"].as_array()?;
                let e = elements
                    .iter()
                    .find(|e| crate::snapshot::element_index(e) == Some(f.index as u64))?;
                Some(words(e["role"].as_str()?, e["name"].as_str().unwrap_or("")))
            });
            Place {
                keys: (kx, ky),
                at: (x, y),
                element,
                window,
            }
        })
        .collect()
}

/// How two runs' points differ, one line per point that does.
pub fn differences(expected: &[Place], actual: &[Place]) -> Vec<String> {
    let mut keys: Vec<(&str, &str)> = expected.iter().chain(actual).map(|p| p.keys).collect();
    keys.sort();
    keys.dedup();
    let find = |side: &[Place], k: (&str, &str)| side.iter().find(|p| p.keys == k).cloned();
    keys.into_iter()
        .filter_map(|k| {
            let label = format!("point {}/{}", k.0, k.1);
            match (find(expected, k), find(actual, k)) {
                (Some(e), Some(a)) => differ(&e, &a).map(|d| format!("{label}: {d}")),
                (e, a) => Some(format!(
                    "{label}: {} → {}",
                    show(e.as_ref()),
                    show(a.as_ref())
                )),
            }
        })
        .collect()
}

fn differ(e: &Place, a: &Place) -> Option<String> {
    if e.at == a.at {
        return None;
    }
    let both = |p: &Place| format!("({}, {})", p.at.0, p.at.1);
    if let (Some(ee), Some(ae)) = (&e.element, &a.element) {
        return (ee != ae).then(|| format!("{} on {ee} → {} on {ae}", both(e), both(a)));
    }
    if let (Some(ew), Some(aw)) = (e.window, a.window) {
        let off =
            |p: f64, from: u32, q: f64, to: u32| (p / from.max(1) as f64 * to as f64 - q).abs();
        let same = off(e.at.0, ew.0, a.at.0, aw.0) <= SAME_PLACE_PX
            && off(e.at.1, ew.1, a.at.1, aw.1) <= SAME_PLACE_PX;
        return (!same).then(|| {
            format!(
                "{} in a {}×{} window → {} in a {}×{} window (not the same place)",
                both(e),
                ew.0,
                ew.1,
                both(a),
                aw.0,
                aw.1
            )
        });
    }
    Some(format!("{} → {}", both(e), both(a)))
}

fn show(p: Option<&Place>) -> String {
    p.map(|p| format!("({}, {})", p.at.0, p.at.1))
        .unwrap_or_else(|| "absent".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(x: f64, y: f64, element: Option<&str>, window: Option<(u32, u32)>) -> Place {
        Place {
            keys: ("x", "y"),
            at: (x, y),
            element: element.map(str::to_string),
            window,
        }
    }

    #[test]
    fn points_are_the_same_on_the_same_element_or_at_the_same_place_in_the_window() {
        let seven = Some("button \"7\"");
        // Moved with its button: the same.
        let d = differences(
            &[place(40.0, 120.0, seven, None)],
            &[place(70.0, 300.0, seven, None)],
        );
        assert!(d.is_empty(), "{d:?}");
        // Onto another button: named.
        let d = differences(
            &[place(40.0, 120.0, seven, None)],
            &[place(70.0, 300.0, Some("button \"8\""), None)],
        );
        assert_eq!(
            d,
            ["point x/y: (40, 120) on button \"7\" → (70, 300) on button \"8\""]
        );
        // No frames on one side: scaled by the windows, within 1.5 px.
        let d = differences(
            &[place(115.0, 300.0, None, Some((365, 471)))],
            &[place(115.0, 316.0, seven, Some((365, 496)))],
        );
        assert!(d.is_empty(), "{d:?}");
        let d = differences(
            &[place(115.0, 300.0, None, Some((365, 471)))],
            &[place(115.0, 330.0, None, Some((365, 496)))],
        );
        assert_eq!(d.len(), 1, "{d:?}");
        // Nothing to tell by: literally.
        assert_eq!(
            differences(
                &[place(1.0, 2.0, None, None)],
                &[place(1.0, 3.0, None, None)]
            ),
            ["point x/y: (1, 2) → (1, 3)"]
        );
        assert_eq!(
            differences(&[], &[place(1.0, 2.0, None, None)]),
            ["point x/y: absent → (1, 2)"]
        );
    }
}
