//! Which live window a recorded turn acts on, when no earlier turn bound its recorded
//! window yet: by the recorded app identity (ours), or, for a recording that has none
//! (cua-driver's, or an app renamed between builds), by the recorded before-state: the
//! live window whose title and tree best match it, never an unrelated one.

use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::platform::WindowInfo;
use crate::snapshot::markdown;

/// The share of the recorded window's element names a live window must show to be it.
const MIN_SHARED: f64 = 0.5;
/// With the recorded title, a live window showing this share is it (its content moved
/// on: another document, another page of a dialog).
const MIN_SHARED_WITH_TITLE: f64 = 0.2;

/// The live window of the recorded app identity (executable, app name, window title).
pub fn by_identity(
    platform: &dyn crate::platform::Platform,
    windows: &[WindowInfo],
    action: &Value,
) -> Option<WindowInfo> {
    let app = action.get("app");
    let title = app.and_then(|a| a["window_title"].as_str());
    let app_name = app.and_then(|a| a["app_name"].as_str());
    let exe = app
        .and_then(|a| a["executable"].as_str())
        .filter(|e| !e.is_empty());
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
    names: Vec<String>,
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
            names: distinct_names(&lines),
        })
    }

    /// How much of the recorded window `markdown` shows: the share of recorded names
    /// present, plus a quarter for the same title.
    fn score(&self, title: &str, markdown: &str) -> Option<f64> {
        if self.names.is_empty() {
            return None;
        }
        let live = distinct_names(&markdown::parse(markdown));
        let shared =
            self.names.iter().filter(|n| live.contains(n)).count() as f64 / self.names.len() as f64;
        let same_title = title == self.title;
        let enough = shared >= MIN_SHARED || (same_title && shared >= MIN_SHARED_WITH_TITLE);
        enough.then_some(shared + if same_title { 0.25 } else { 0.0 })
    }
}

fn distinct_names(lines: &[markdown::Line]) -> Vec<String> {
    let mut names: Vec<String> = lines
        .iter()
        .filter(|l| !l.name.trim().is_empty())
        .map(|l| l.name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
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
        if let Some(score) = recorded.score(&w.title, md) {
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
        let lines = markdown::parse(CALC);
        RecordedWindow {
            title: "Calculator".into(),
            names: distinct_names(&lines),
        }
    }

    #[test]
    fn a_window_matches_by_its_names_and_title_never_by_title_alone() {
        let r = recorded();
        let live = "- frame \"Calculator\"\n  - [0] button \"7 7\"\n  - [1] button \"8 8\"\n  - [2] button \"+ +\"\n  - [3] button \"= =\"\n";
        assert_eq!(r.score("Calculator", live), Some(1.25));
        // Another title, the same content: still it (a renamed build).
        assert_eq!(r.score("Calculator 2", live), Some(1.0));
        // The same title, unrelated content: not it.
        let other = "- frame \"Files\"\n  - [0] button \"Open\"\n  - [1] button \"Save\"\n";
        assert_eq!(r.score("Calculator", other), None);
        // The same title and a fifth of the names: it (its content moved on).
        let moved = "- frame \"Calculator\"\n  - [0] button \"Open\"\n";
        assert!(r.score("Calculator", moved).is_some());
        assert_eq!(r.score("Text Editor", moved), None);
    }
}
