//! Which live window a recorded turn acts on, when no earlier turn bound its recorded
//! window yet: by the recorded app identity (ours), or, for a recording that has none
//! (cua-driver's, or an app renamed between builds), by the recorded before-state: the
//! live window whose title and tree best match it, never an unrelated one.

use std::collections::BTreeSet;

use serde_json::json;

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::names;
use crate::platform::WindowInfo;
use crate::snapshot::markdown;

/// The share of the smaller side's names (recorded or live) that the other side must show.
/// The smaller side, because one tree may list what the other hides: cua-driver records
/// every item of every closed menu (250 names), where the live tree shows the 8 menus.
const MIN_SHARED: f64 = 0.5;
/// And at least this many names shared (all, for a recorded window with fewer), so that
/// a small live window that shares an "OK" and a "Cancel" with a large recorded one is
/// not it.
const MIN_SHARED_NAMES: usize = 3;
/// With the recorded title, a live window showing this share is it (its content moved
/// on: another document, another page of a dialog); it still shares a name.
const MIN_SHARED_WITH_TITLE: f64 = 0.2;
/// What the same title, or the same app, adds to a window's score.
const SAME_TITLE: f64 = 0.25;
const SAME_APP: f64 = 0.25;

/// The live window of the recorded app identity (executable, app name, window title).
pub fn by_identity(
    platform: &dyn crate::platform::Platform,
    windows: &[WindowInfo],
    action: &crate::trajectory::Action,
) -> Option<WindowInfo> {
    let app = action.app.as_ref();
    let title = app.map(|a| a.window_title.as_str());
    let app_name = app.map(|a| a.app_name.as_str());
    let exe = app.map(|a| a.executable.as_str()).filter(|e| !e.is_empty());
    let score = |w: &WindowInfo| -> i32 {
        let w_exe = w.pid.and_then(|pid| platform.process_executable(pid));
        (exe.is_some() && w_exe.as_deref() == exe) as i32 * 4
            + (app_name == Some(w.app_name.as_str())) as i32 * 2
            + (title == Some(w.title.as_str())) as i32
    };
    windows
        .iter()
        .filter(|w| w.is_on_screen)
        .map(|w| (score(w), w))
        .filter(|(s, _)| *s >= 2)
        .max_by_key(|(s, w)| (*s, w.z_index))
        .map(|(_, w)| w.clone())
}

/// What a turn's before-state says its window looked like.
pub struct RecordedWindow {
    pub title: String,
    /// Its element names, compared as [`names::comparable`] reads them (the window's own
    /// line is its title, scored on its own: a title alone never binds).
    names: BTreeSet<String>,
    /// The names the turn gives its app (executable, app name, title parts).
    apps: Vec<String>,
}

impl RecordedWindow {
    /// From a recorded state's tree_markdown; None without a window line. The title is
    /// the window line's name, or `title` when that line has none (ours keeps the title
    /// beside the tree, in the state's and the action's app fields).
    pub fn of_markdown(md: &str, title: Option<&str>) -> Option<RecordedWindow> {
        let lines = markdown::parse(md);
        let window = lines.first().filter(|l| l.depth == 0)?;
        let title = match (window.name.as_str(), title) {
            ("", Some(t)) => t.to_string(),
            (name, _) => name.to_string(),
        };
        Some(RecordedWindow {
            title,
            names: element_names(&lines),
            apps: Vec::new(),
        })
    }

    /// The app names the turn gives (see [`super::launch::recorded_names`]), which a live
    /// window's app name is checked against.
    pub fn with_apps(mut self, apps: &[String]) -> RecordedWindow {
        self.apps = apps.iter().map(|a| names::comparable(a)).collect();
        self
    }

    /// How much of the recorded window a live one (its title, app name and tree) shows:
    /// the names both show, over the smaller side's count, plus [`SAME_TITLE`] and
    /// [`SAME_APP`], plus a tenth of the share over the larger side (of two windows
    /// that both show every recorded name, the one closer in size is it). None when it
    /// is not the recorded window.
    fn score(&self, title: &str, app: &str, markdown: &str) -> Option<f64> {
        let live = element_names(&markdown::parse(markdown));
        let smaller = self.names.len().min(live.len());
        if smaller == 0 {
            return None;
        }
        let shared = self.names.intersection(&live).count();
        let share = shared as f64 / smaller as f64;
        let same_title = same_title(title, &self.title);
        let enough = (share >= MIN_SHARED && shared >= MIN_SHARED_NAMES.min(self.names.len()))
            || (same_title && shared > 0 && share >= MIN_SHARED_WITH_TITLE);
        let same_app = !app.is_empty() && self.apps.contains(&names::comparable(app));
        let larger = self.names.len().max(live.len()) as f64;
        enough.then_some(
            share
                + if same_title { SAME_TITLE } else { 0.0 }
                + if same_app { SAME_APP } else { 0.0 }
                + 0.1 * shared as f64 / larger,
        )
    }
}

/// Two titles of one window: compared as names are, without the mark of a modified
/// document (`*Untitled 1 - Mousepad`).
fn same_title(a: &str, b: &str) -> bool {
    let read = |t: &str| names::comparable(t.trim().trim_start_matches('*'));
    read(a) == read(b)
}

/// The names of a tree's elements, below its window line.
fn element_names(lines: &[markdown::Line]) -> BTreeSet<String> {
    lines
        .iter()
        .filter(|l| l.depth > 0)
        .map(|l| names::comparable(&l.name))
        .filter(|n| !n.is_empty())
        .collect()
}

/// The on-screen window (other than those in `taken`) that best matches `recorded`, read
/// through get_window_state. Ok(None) when none matches; an error naming the windows
/// when two match equally well (replay never guesses between them).
pub async fn by_tree(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    windows: &[WindowInfo],
    recorded: &RecordedWindow,
    taken: &[u64],
) -> Result<Option<WindowInfo>, String> {
    let mut scored: Vec<(f64, &WindowInfo)> = Vec::new();
    for w in windows
        .iter()
        .filter(|w| w.is_on_screen && !taken.contains(&w.window_id))
    {
        let Some(pid) = w.pid else { continue };
        let state = registry
            .call(
                ctx,
                "get_window_state",
                json!({ "pid": pid, "window_id": w.window_id, "include_screenshot": false }),
            )
            .await;
        let Ok(state) = state else { continue };
        let md = state.structured["tree_markdown"].as_str().unwrap_or("");
        if let Some(score) = recorded.score(&w.title, &w.app_name, md) {
            scored.push((score, w));
        }
    }
    choose(scored, &recorded.title)
}

/// The best scored window; an error naming both when the best two tie.
fn choose(mut scored: Vec<(f64, &WindowInfo)>, title: &str) -> Result<Option<WindowInfo>, String> {
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    match scored.as_slice() {
        [] => Ok(None),
        [(best, a), (second, b), ..] if best - second < 0.01 => Err(format!(
            "two live windows match the recorded window \"{title}\" equally well: {} and {}; close one, or replay with the app bound (`--app`)",
            describe(a),
            describe(b)
        )),
        [(_, w), ..] => Ok(Some((*w).clone())),
    }
}

fn describe(w: &WindowInfo) -> String {
    format!(
        "{} \"{}\" (pid {}, window {})",
        w.app_name,
        w.title,
        w.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
        w.window_id
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(pid: u32, window_id: u64) -> WindowInfo {
        WindowInfo {
            window_id,
            pid: Some(pid),
            app_name: "Calculator".into(),
            title: "Calculator".into(),
            bounds: crate::platform::Rect {
                x: 0,
                y: 0,
                width: 10,
                height: 10,
            },
            z_index: 0,
            is_on_screen: true,
            space_id: None,
        }
    }

    #[test]
    fn the_best_window_wins_and_a_tie_names_both() {
        let (a, b) = (window(10, 1), window(20, 2));
        assert!(choose(vec![], "Calculator").unwrap().is_none());
        let best = choose(vec![(0.9, &a), (1.2, &b)], "Calculator").unwrap();
        assert_eq!(best.map(|w| w.window_id), Some(2));
        let e = choose(vec![(1.25, &a), (1.25, &b)], "Calculator").unwrap_err();
        assert!(
            e.contains("pid 10, window 1") && e.contains("pid 20, window 2"),
            "{e}"
        );
    }

    const CALC: &str = "- [0] window \"Calculator\"\n  - [1] button \"7 7\"\n  - [2] button \"8 8\"\n  - [3] button \"+ +\"\n  - [4] button \"= =\"\n";

    fn recorded() -> RecordedWindow {
        RecordedWindow::of_markdown(CALC, None)
            .unwrap()
            .with_apps(&["gnome-calculator".into(), "Calculator".into()])
    }

    #[test]
    fn a_window_matches_by_its_names_and_title_never_by_title_alone() {
        let r = recorded();
        let live = "- frame \"Calculator\"\n  - [0] button \"7 7\"\n  - [1] button \"8 8\"\n  - [2] button \"+ +\"\n  - [3] button \"= =\"\n";
        assert_eq!(r.score("Calculator", "", live), Some(1.35));
        // The same app besides.
        assert_eq!(r.score("Calculator", "Calculator", live), Some(1.6));
        // Another title, the same content: still it (a renamed build).
        assert_eq!(r.score("Calculator 2", "", live), Some(1.1));
        // The same title, unrelated content: not it.
        let other = "- frame \"Files\"\n  - [0] button \"Open\"\n  - [1] button \"Save\"\n";
        assert_eq!(r.score("Calculator", "Calculator", other), None);
        // The same title and a name: it (its content moved on).
        let moved = "- frame \"Calculator\"\n  - [0] button \"Open\"\n  - [1] button \"=\"\n";
        assert!(r.score("Calculator", "", moved).is_some());
        assert_eq!(r.score("Text Editor", "", moved), None);
        // Two shared names, another title: too few to be it.
        let two = "- frame \"Pad\"\n  - [0] button \"7\"\n  - [1] button \"8\"\n";
        assert_eq!(r.score("Pad", "", two), None);
    }

    /// cua-driver 0.21 records every item of every closed menu, padded towards its
    /// accelerator; the live tree shows the menus. The smaller side decides.
    #[test]
    fn a_tree_that_lists_closed_menus_matches_the_live_window_that_hides_them() {
        let mut md = String::from("- frame = \"Untitled 1 - Mousepad\"\n");
        for menu in ["File", "Edit", "Search", "View", "Document", "Help"] {
            md.push_str(&format!("        - menu \"{menu}\"\n"));
            for i in 0..40 {
                md.push_str(&format!(
                    "          - menu item \"{menu} item {i}      \"\n"
                ));
            }
        }
        md.push_str("        - [252] text = \"\"\n");
        let r = RecordedWindow::of_markdown(&md, None)
            .unwrap()
            .with_apps(&["Untitled 1".into(), "Mousepad".into()]);
        let live = "- frame \"Untitled 1 - Mousepad\"\n  - menu_bar\n    - [0] menu \"_File\"\n    - [1] menu \"Edit\"\n    - [2] menu \"Search\"\n    - [3] menu \"View\"\n    - [4] menu \"Document\"\n    - [5] menu \"Help\"\n  - label \"Warning: you are using the root account.\"\n  - [7] text value=\"\"\n";
        // 6 of the 7 live names are recorded; the title and the app are the same.
        let score = r.score("Untitled 1 - Mousepad", "Mousepad", live).unwrap();
        assert!(
            (score - (6.0 / 7.0 + 0.5 + 0.1 * 6.0 / 246.0)).abs() < 1e-9,
            "{score}"
        );
        // Another app's window under another title, with a "File" and an "Edit" menu.
        let other = "- frame \"Notes\"\n  - [0] menu \"File\"\n  - [1] menu \"Edit\"\n  - [2] button \"Bold\"\n  - [3] button \"Italic\"\n";
        assert_eq!(r.score("Notes", "Notes", other), None);
    }
}
