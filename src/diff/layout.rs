//! Layout changes between two runs' after-states: elements (by role and name, and rank
//! among look-alikes) that moved, were resized, appeared or disappeared, read from the
//! recorded frames. The tree diff cannot show them (tree_markdown has no frames), so when
//! screenshots differ they are named before the pixel count: two swapped buttons read as
//! two moves, not as 413 differing pixels.

use std::collections::HashMap;

use serde_json::Value;

use crate::platform::Rect;

/// Frames closer than this are the same (anti-aliasing, sub-pixel layout).
const SAME_WITHIN_PX: i64 = 2;
/// At most this many changes are named.
const NAMED: usize = 3;

type Key = (String, String, usize);

/// Each framed element by role, name and rank among elements of that role and name.
fn framed(state: Option<&Value>) -> Vec<(Key, Rect)> {
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let Some(elements) = state.and_then(|s| s["elements"].as_array()) else {
        return Vec::new();
    };
    elements
        .iter()
        .filter_map(|e| {
            let frame: Rect = serde_json::from_value(e["frame"].clone()).ok()?;
            let role = e["role"].as_str()?.to_string();
            let name = e["name"].as_str().unwrap_or("").to_string();
            let rank = seen.entry((role.clone(), name.clone())).or_insert(0);
            *rank += 1;
            Some(((role, name, *rank - 1), frame))
        })
        .collect()
}

/// The layout changes from `expected` to `actual`, as one reason (None when none).
pub fn reason(expected: Option<&Value>, actual: Option<&Value>) -> Option<String> {
    let changes = changes(expected, actual);
    if changes.is_empty() {
        return None;
    }
    let mut named: Vec<String> = changes.iter().take(NAMED).cloned().collect();
    if changes.len() > NAMED {
        named.push(format!("and {} more", changes.len() - NAMED));
    }
    Some(format!("layout: {}", named.join("; ")))
}

fn changes(expected: Option<&Value>, actual: Option<&Value>) -> Vec<String> {
    let (e, a) = (framed(expected), framed(actual));
    let live: HashMap<&Key, &Rect> = a.iter().map(|(k, r)| (k, r)).collect();
    let was: HashMap<&Key, &Rect> = e.iter().map(|(k, r)| (k, r)).collect();
    let who = |(role, name, rank): &Key| {
        let nth = if *rank > 0 {
            format!(" (#{})", rank + 1)
        } else {
            String::new()
        };
        format!("{role} {name:?}{nth}")
    };
    let far = |x: i32, y: i32| (x as i64 - y as i64).abs() > SAME_WITHIN_PX;
    let mut out = Vec::new();
    for (k, before) in &e {
        match live.get(k) {
            None => out.push(format!("{} disappeared", who(k))),
            Some(after) => {
                if far(before.x, after.x) || far(before.y, after.y) {
                    out.push(format!(
                        "{} moved ({}, {}) → ({}, {})",
                        who(k),
                        before.x,
                        before.y,
                        after.x,
                        after.y
                    ));
                }
                if far(before.width, after.width) || far(before.height, after.height) {
                    out.push(format!(
                        "{} resized {}×{} → {}×{}",
                        who(k),
                        before.width,
                        before.height,
                        after.width,
                        after.height
                    ));
                }
            }
        }
    }
    for (k, _) in &a {
        if !was.contains_key(k) {
            out.push(format!("{} appeared", who(k)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(elements: &[(&str, &str, [i32; 4])]) -> Value {
        let elements: Vec<Value> = elements
            .iter()
            .map(|(role, name, [x, y, w, h])| {
                json!({ "role": role, "name": name, "frame": { "x": x, "y": y, "width": w, "height": h } })
            })
            .collect();
        json!({ "elements": elements })
    }

    #[test]
    fn swapped_resized_added_and_removed_elements_are_named() {
        let before = state(&[
            ("button", "Increment", [10, 10, 80, 30]),
            ("button", "Reset", [100, 10, 80, 30]),
            ("label", "Total", [10, 50, 100, 20]),
        ]);
        let swapped = state(&[
            ("button", "Reset", [10, 10, 80, 30]),
            ("button", "Increment", [100, 11, 80, 30]),
            ("label", "Total", [10, 50, 100, 20]),
        ]);
        assert_eq!(
            reason(Some(&before), Some(&swapped)).unwrap(),
            "layout: button \"Increment\" moved (10, 10) → (100, 11); button \"Reset\" moved (100, 10) → (10, 10)"
        );
        let other = state(&[
            ("button", "Increment", [10, 10, 120, 30]),
            ("label", "Total", [10, 50, 100, 20]),
            ("check_box", "Tax", [10, 80, 100, 20]),
        ]);
        assert_eq!(
            changes(Some(&before), Some(&other)),
            [
                "button \"Increment\" resized 80×30 → 120×30",
                "button \"Reset\" disappeared",
                "check_box \"Tax\" appeared"
            ]
        );
        assert_eq!(reason(Some(&before), Some(&before)), None);
        assert_eq!(
            reason(None, Some(&before))
                .unwrap()
                .matches("appeared")
                .count(),
            3
        );
    }
}
