//! Busy widgets: what in a window shows how far along the app is, not what it did.
//! Progress bars, spinners (`animation`), elements in the `busy` state, and status labels
//! such as "Saving…" or "Loading data...". A run that is faster or slower than its golden
//! shows them otherwise (a loaded machine skips a bar the golden caught at 0), so a turn's
//! stability ignores them and the diff leaves them out: their tree lines (with what is
//! under them) and their frames in screenshots. A scenario that tests one says
//! `mask_busy = false` in its `[diff]`.
//!
//! The rules are this file; docs/harness.md lists them.

use regex::Regex;
use serde_json::Value;

use crate::platform::Rect;
use crate::snapshot::markdown;

/// Roles whose every element is busy.
pub const BUSY_ROLES: &[&str] = &["progress_bar", "animation"];
/// Roles whose element is busy when its name says work is under way ([`busy_label`]).
const STATUS_ROLES: &[&str] = &["label", "status", "static", "text"];

/// A name that says work is under way: a word ending in "ing", and an ellipsis at the end
/// ("Saving…", "Loading data...", "Processing 3 files…").
fn busy_label(name: &str) -> bool {
    static PATTERN: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^\p{L}*ing\b.*(…|\.\.\.)$").expect("built-in pattern"))
        .is_match(name.trim())
}

/// Whether an element of this role, name and states is busy.
pub fn is_busy<S: AsRef<str>>(role: &str, name: &str, states: &[S]) -> bool {
    let role = markdown::role_key(role);
    BUSY_ROLES.contains(&role.as_str())
        || states.iter().any(|s| s.as_ref() == "busy")
        || (STATUS_ROLES.contains(&role.as_str()) && busy_label(name))
}

/// The states a tree line shows in its `(…)` group.
fn line_states(raw: &str) -> Vec<&str> {
    let head = raw.split(" [actions=").next().unwrap_or(raw);
    match head
        .strip_suffix(')')
        .and_then(|h| h.rfind(" (").map(|i| &h[i + 2..]))
    {
        Some(group) => group.split(", ").collect(),
        None => Vec::new(),
    }
}

/// A tree_markdown without its busy lines and what is under them; the indices of the
/// elements left are renumbered from 0, so a bar that comes and goes shifts nothing.
/// Returns the text unchanged (borrowed) when it holds no busy line.
pub fn without_busy_lines(tree: &str) -> std::borrow::Cow<'_, str> {
    let cut =
        |line: &markdown::Line, raw: &str| match is_busy(&line.role, &line.name, &line_states(raw))
        {
            true => markdown::Cut::Line,
            false => markdown::Cut::Keep,
        };
    match markdown::without_subtrees(tree, cut) {
        Some((text, _)) => std::borrow::Cow::Owned(text),
        None => std::borrow::Cow::Borrowed(tree),
    }
}

/// Whether a state shows work under way that promises a change: an element in the `busy`
/// state or a "Saving…" label (a progress bar or spinner alone may sit still for good).
pub fn in_progress(state: &Value) -> bool {
    let tree = state["tree_markdown"].as_str().unwrap_or("");
    tree.lines().any(|raw| {
        markdown::parse(raw).first().is_some_and(|l| {
            let states = line_states(raw);
            states.contains(&"busy")
                || (STATUS_ROLES.contains(&markdown::role_key(&l.role).as_str())
                    && busy_label(&l.name))
        })
    })
}

/// A recorded state without its busy widgets: tree lines (renumbered), indexed elements
/// (renumbered) and the `busy` list.
pub fn without_busy(state: &Value) -> Value {
    let mut out = state.clone();
    if let Some(tree) = state["tree_markdown"].as_str() {
        out["tree_markdown"] = Value::String(without_busy_lines(tree).into_owned());
    }
    if let Some(elements) = state["elements"].as_array() {
        crate::snapshot::keep_elements(&mut out, elements, |e| !element_is_busy(e));
    }
    if let Some(o) = out.as_object_mut() {
        o.remove("busy");
    }
    out
}

fn element_is_busy(e: &Value) -> bool {
    let states: Vec<&str> = e["states"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    is_busy(
        e["role"].as_str().unwrap_or(""),
        e["name"].as_str().unwrap_or(""),
        &states,
    )
}

/// The frames of a state's busy widgets, window-local: its indexed busy elements and the
/// `busy` list the recorder adds for the ones the tree does not index.
pub fn frames(state: &Value) -> Vec<Rect> {
    let listed = state["busy"].as_array().into_iter().flatten();
    let indexed = state["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| element_is_busy(e));
    listed
        .chain(indexed)
        .filter_map(|e| frame_of(&e["frame"]))
        .collect()
}

/// A frame as states write it: `{x, y, w, h}` (or `width`, `height`).
pub(crate) fn frame_of(f: &Value) -> Option<Rect> {
    let n = |k: &str| f.get(k).and_then(Value::as_i64).map(|v| v as i32);
    Some(Rect {
        x: n("x")?,
        y: n("y")?,
        width: n("w").or_else(|| n("width"))?,
        height: n("h").or_else(|| n("height"))?,
    })
}

/// The busy widgets of a tree, as a recorded state's `busy` list: role, name and
/// window-local frame (the tree indexes only some of them, and keeps frames of those only).
pub fn listed(tree: &crate::platform::AxTree) -> Vec<Value> {
    crate::snapshot::framed_nodes(tree, |n| is_busy(&n.role, &n.name, &n.states))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bars_spinners_busy_states_and_status_labels_are_busy() {
        let none: [&str; 0] = [];
        assert!(is_busy("progress_bar", "", &none));
        assert!(is_busy("progress bar", "Download", &none));
        assert!(is_busy("animation", "Spinner", &none));
        assert!(is_busy("panel", "", &["busy"]));
        assert!(is_busy("label", "Saving…", &none));
        assert!(is_busy("label", "Loading data...", &none));
        assert!(!is_busy("label", "Saving", &none), "no ellipsis");
        assert!(!is_busy("label", "Open…", &none), "not under way");
        assert!(
            !is_busy("button", "Loading…", &none),
            "a button is a control"
        );
        assert!(!is_busy("label", "Count: 3", &none));
    }

    #[test]
    fn busy_lines_and_their_children_go_and_indices_close_up() {
        let tree = "- frame \"w\"\n  - [0] button \"Add\"\n  - [1] progress_bar value=\"0\"\n    - label \"0%\"\n  - label \"Saving…\"\n  - [2] text \"Notes\" value=\"x\" (focused)\n";
        assert_eq!(
            without_busy_lines(tree),
            "- frame \"w\"\n  - [0] button \"Add\"\n  - [1] text \"Notes\" value=\"x\" (focused)\n"
        );
        let calm = "- frame \"w\"\n  - [0] button \"Add\"\n";
        assert!(matches!(
            without_busy_lines(calm),
            std::borrow::Cow::Borrowed(_)
        ));
        let busy_state =
            "- frame \"w\"\n  - [0] panel \"Results\" (busy)\n    - [1] button \"x\"\n";
        assert_eq!(without_busy_lines(busy_state), "- frame \"w\"\n");
    }

    #[test]
    fn a_state_loses_its_busy_elements_and_lists_their_frames() {
        let state = serde_json::json!({
            "tree_markdown": "- frame\n  - [0] progress_bar value=\"10\"\n  - [1] button \"Go\"\n",
            "elements": [
                { "element_index": 0, "role": "progress_bar", "name": "", "states": [], "frame": { "x": 1, "y": 2, "w": 30, "h": 4 } },
                { "element_index": 1, "role": "button", "name": "Go", "states": [], "frame": { "x": 5, "y": 9, "w": 20, "h": 10 } },
            ],
            "element_count": 2,
            "busy": [ { "role": "animation", "name": "Spinner", "frame": { "x": 50, "y": 60, "w": 16, "h": 16 } } ],
        });
        assert_eq!(
            frames(&state),
            [Rect::new(50, 60, 16, 16), Rect::new(1, 2, 30, 4)]
        );
        let calm = without_busy(&state);
        assert_eq!(calm["tree_markdown"], "- frame\n  - [0] button \"Go\"\n");
        assert_eq!(calm["elements"][0]["element_index"], 0);
        assert_eq!(calm["elements"][0]["name"], "Go");
        assert_eq!(calm["element_count"], 1);
        assert!(calm.get("busy").is_none());
    }
}
