//! Incidental regions: the parts of a window whose content follows the app's own timing,
//! not the action a turn took. A toolbar's buttons turn sensitive when the app gets round
//! to it (LibreOffice Calc enables Undo a while after a cell edit has shown, often after
//! the next turn began), and a status bar's counts and clocks follow later still. Compared
//! as part of a turn's change, they fail a replay of the unchanged app whenever it is a
//! little faster or slower than the recording.
//!
//! So what is under a region's line is left out wherever two runs of a turn are compared:
//! replay's and `cua test`'s check of each turn's change (replay's postcondition)
//! and `cua diff` (the tree's lines and, in screenshots, the region's own frame, which
//! the recorder lists as the state's `regions`, and the frames of its elements). The
//! region's own line stays: a toolbar that appears or goes is a change. A turn whose target
//! is inside a region is compared there in full (pressing Bold is a toolbar change).
//!
//! The rules are this file; docs/harness.md lists them. A scenario adds roles
//! (`[diff] incidental_roles`) or compares everything (`mask_incidental = false`);
//! `cua replay` takes `--incidental-role` and `--no-incidental`.

use serde_json::Value;

use crate::platform::Rect;
use crate::snapshot::markdown::{self, Cut, role_key};

/// Roles whose contents are incidental unless a scenario says otherwise.
pub const DEFAULT_ROLES: &[&str] = &["tool_bar", "status_bar"];

/// The roles whose contents a comparison leaves out (in [`role_key`] form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incidental {
    roles: Vec<String>,
}

impl Default for Incidental {
    fn default() -> Self {
        Incidental::with_roles::<&str>(&[])
    }
}

impl Incidental {
    /// Nothing is incidental: every line compares.
    pub fn none() -> Incidental {
        Incidental { roles: Vec::new() }
    }

    /// The default roles and `extra`.
    pub fn with_roles<S: AsRef<str>>(extra: &[S]) -> Incidental {
        let mut roles: Vec<String> = DEFAULT_ROLES
            .iter()
            .map(|r| r.to_string())
            .chain(extra.iter().map(|r| role_key(r.as_ref())))
            .collect();
        roles.sort();
        roles.dedup();
        Incidental { roles }
    }

    pub fn is_none(&self) -> bool {
        self.roles.is_empty()
    }

    /// The roles, for messages.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// Whether a line of this role holds an incidental region.
    pub fn is_region(&self, role: &str) -> bool {
        !self.roles.is_empty() && self.roles.contains(&role_key(role))
    }

    /// The rules for one turn: none when its target (element `target` of the recorded
    /// before-state `before_tree`) is a region or inside one.
    pub fn for_target(&self, before_tree: Option<&str>, target: Option<usize>) -> Incidental {
        self.for_lineage(&lineage(before_tree, target))
    }

    /// The rules for a turn whose target and its ancestors have these roles ([`lineage`]):
    /// none when one of them is a region.
    pub fn for_lineage(&self, roles: &[String]) -> Incidental {
        match roles.iter().any(|r| self.is_region(r)) {
            true => Incidental::none(),
            false => self.clone(),
        }
    }
}

/// The regions of a tree that have a frame, as a recorded state's `regions` list: role,
/// name and window-local frame. A region's items may have no frame (LibreOffice's status
/// bar labels) or a wrong one, so a screenshot comparison masks the region by its own.
pub fn listed(tree: &crate::platform::AxTree) -> Vec<Value> {
    let regions = Incidental::default();
    crate::snapshot::framed_nodes(tree, |n| regions.is_region(&n.role))
}

/// The roles of element `target` of the tree `before_tree` and of its ancestors (empty
/// when either is unknown): what [`Incidental::for_lineage`] needs to know of a turn.
pub fn lineage(before_tree: Option<&str>, target: Option<usize>) -> Vec<String> {
    let (Some(tree), Some(index)) = (before_tree, target) else {
        return Vec::new();
    };
    let lines = markdown::parse(tree);
    markdown::element_with_ancestors(&lines, index)
        .map(|(line, up)| {
            std::iter::once(line)
                .chain(up)
                .map(|l| l.role.clone())
                .collect()
        })
        .unwrap_or_default()
}

impl Incidental {
    /// A tree_markdown without what is under its regions' lines (indices renumbered), and
    /// the old indices of the elements taken out; None when nothing was.
    pub fn without_lines(&self, tree: &str) -> Option<(String, Vec<usize>)> {
        if self.is_none() {
            return None;
        }
        markdown::without_subtrees(tree, |line, _| match self.is_region(&line.role) {
            true => Cut::Under,
            false => Cut::Keep,
        })
    }

    /// A state without what is under its regions: its tree's lines and its indexed
    /// elements (both renumbered), and the frames a screenshot comparison masks: the
    /// regions' own (the state's `regions`) and those of the elements taken out.
    pub fn without(&self, state: &Value) -> (Value, Vec<Rect>) {
        let Some((tree, dropped)) = state["tree_markdown"]
            .as_str()
            .and_then(|t| self.without_lines(t))
        else {
            return (state.clone(), Vec::new());
        };
        let mut out = state.clone();
        out["tree_markdown"] = Value::String(tree);
        let mut frames: Vec<Rect> = state["regions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| self.is_region(r["role"].as_str().unwrap_or("")))
            .filter_map(|r| crate::snapshot::busy::frame_of(&r["frame"]))
            .collect();
        if let Some(elements) = state["elements"].as_array() {
            let is_dropped = |e: &Value| {
                crate::snapshot::element_index(e).is_some_and(|i| dropped.contains(&(i as usize)))
            };
            frames.extend(
                elements
                    .iter()
                    .filter(|e| is_dropped(e))
                    .filter_map(|e| crate::snapshot::busy::frame_of(&e["frame"])),
            );
            crate::snapshot::keep_elements(&mut out, elements, |e| !is_dropped(e));
        }
        (out, frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CALC: &str = "- frame \"Calc\"\n  - tool_bar \"Standard\"\n    - [0] button \"Undo\" value=\"0\" (disabled)\n    - [1] button \"Bold\"\n  - [2] table_cell \"A1\" value=\"12\"\n  - status_bar\n    - label \"Sum: 12\"\n";

    #[test]
    fn what_is_under_a_toolbar_or_status_bar_is_left_out_and_the_rest_renumbered() {
        let (tree, dropped) = Incidental::default().without_lines(CALC).unwrap();
        assert_eq!(
            tree,
            "- frame \"Calc\"\n  - tool_bar \"Standard\"\n  - [0] table_cell \"A1\" value=\"12\"\n  - status_bar\n"
        );
        assert_eq!(dropped, vec![0, 1]);
        assert_eq!(Incidental::none().without_lines(CALC), None);
        let more = Incidental::with_roles(&["table_cell"]);
        assert!(more.is_region("table cell") && more.is_region("tool bar"));
    }

    #[test]
    fn a_turn_whose_target_is_in_a_region_compares_it_in_full() {
        let all = Incidental::default();
        assert!(all.for_target(Some(CALC), Some(1)).is_none(), "Bold");
        assert_eq!(all.for_target(Some(CALC), Some(2)), all, "a cell");
        assert_eq!(all.for_target(None, Some(1)), all, "no recorded tree");
        assert_eq!(all.for_target(Some(CALC), None), all, "no element");
    }

    #[test]
    fn a_state_loses_its_regions_elements_and_gives_their_frames() {
        let state = json!({
            "tree_markdown": CALC,
            "regions": [
                { "role": "tool_bar", "name": "Standard", "frame": { "x": 0, "y": 0, "w": 90, "h": 8 } },
                { "role": "panel", "name": "", "frame": { "x": 0, "y": 0, "w": 9, "h": 9 } },
            ],
            "elements": [
                { "element_index": 0, "role": "button", "name": "Undo", "frame": { "x": 1, "y": 2, "w": 3, "h": 4 } },
                { "element_index": 1, "role": "button", "name": "Bold", "frame": { "x": 5, "y": 2, "w": 3, "h": 4 } },
                { "element_index": 2, "role": "table_cell", "name": "A1", "frame": { "x": 0, "y": 9, "w": 9, "h": 9 } },
            ],
        });
        let (out, frames) = Incidental::default().without(&state);
        assert_eq!(
            frames.len(),
            3,
            "the toolbar's own frame and its two buttons'"
        );
        assert_eq!(frames[0], Rect::new(0, 0, 90, 8));
        assert_eq!(out["elements"][0]["name"], "A1");
        assert_eq!(out["elements"][0]["element_index"], 0);
        assert_eq!(out["element_count"], 1);
    }
}
