//! Diffing trajectories: an expected (golden) and an actual run compared turn by turn on
//! the action, the post-action accessibility tree (after redaction, as a unified diff) and
//! the post-action screenshot (the perceptual [`pixels`] diff, with tolerances and masks).
//! Missing and extra turns are differences too.
//!
//! Everything here reads; nothing is written. Bad input (a missing folder, corrupt JSON, an
//! unreadable PNG, a bad config) comes back as [`DiffError::BadInput`] with every problem
//! named, so callers can exit 2 without having written a report.

mod compare;
mod config;
mod layout;
mod load;
pub mod pixels;
mod points;
pub mod tree;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::platform::Rect;
use crate::trajectory::Action;
use pixels::{ImageRef, PixelDiffOptions};
use tree::{Redaction, redact, unified};

use compare::*;
pub use config::{DiffConfig, MaskRule, RedactRule};
use load::*;

/// Why a diff could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("bad input:\n  {}", .0.join("\n  "))]
    BadInput(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    Passed,
    Failed,
    /// In the expected trajectory only.
    Missing,
    /// In the actual trajectory only.
    Extra,
    /// A run's window never held still: its state could not be compared.
    Unsettled,
}

/// The screenshot comparison of one turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PixelSummary {
    pub diff_pixels: u64,
    pub diff_ratio: f64,
    pub masked_pixels: u64,
    /// `expected WxH, actual WxH` when the sizes differ.
    pub size_mismatch: Option<String>,
    pub within_tolerance: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnDiff {
    pub turn: u32,
    pub tool: String,
    pub status: TurnStatus,
    /// One line per difference, e.g. `pixels: 312 px differ (0.4%), max 0`.
    pub reasons: Vec<String>,
    /// What is said of the turn without failing it: the expected run's window never held
    /// still when it was recorded (an agent's recording of a window that kept changing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `field: expected → actual` lines.
    pub action_diff: Vec<String>,
    /// Unified diff of the redacted post-action tree.
    pub tree_diff: Option<String>,
    pub pixels: Option<PixelSummary>,
    /// Milliseconds the golden's app took to settle this turn, when it settled each turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_latency_ms: Option<u64>,
    /// ... and the run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_latency_ms: Option<u64>,
    pub expected_dir: Option<PathBuf>,
    pub actual_dir: Option<PathBuf>,
    /// The diff image (PNG) when the screenshots differ beyond tolerance.
    #[serde(skip)]
    pub diff_png: Option<Vec<u8>>,
}

impl TurnDiff {
    pub fn passed(&self) -> bool {
        self.status == TurnStatus::Passed
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrajectoryDiff {
    pub expected: PathBuf,
    pub actual: PathBuf,
    pub passed: bool,
    pub turns: Vec<TurnDiff>,
    /// Turns left out of the comparison, as a replay leaves them out (a turn recorded as
    /// failed, an attempt folded into its retry), each with its side and why: a recording
    /// and its replay compare step by step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<String>,
}

impl TrajectoryDiff {
    pub fn failed_turns(&self) -> impl Iterator<Item = &TurnDiff> {
        self.turns.iter().filter(|t| !t.passed())
    }
}

/// Whether one side of a turn pair was recorded by another driver (cua-driver).
fn is_foreign(e: &LoadedTurn, a: &LoadedTurn) -> bool {
    [e, a].iter().any(|t| t.action.by_other_driver())
}

/// Compares two trajectories turn by turn.
pub fn diff_trajectories(
    expected_dir: &Path,
    actual_dir: &Path,
    config: &DiffConfig,
) -> Result<TrajectoryDiff, DiffError> {
    let mut problems = Vec::new();
    let rules = config
        .redactions()
        .map_err(|e| DiffError::BadInput(vec![e]))?;
    let mut expected = load(expected_dir, "expected", &mut problems);
    let mut actual = load(actual_dir, "actual", &mut problems);
    if config.mask_busy {
        expected.iter_mut().for_each(LoadedTurn::without_busy);
        actual.iter_mut().for_each(LoadedTurn::without_busy);
    }
    let incidental = config.incidental();
    expected
        .iter_mut()
        .chain(actual.iter_mut())
        .for_each(|t| t.without_incidental(&incidental));
    if !problems.is_empty() {
        return Err(DiffError::BadInput(problems));
    }
    let mut not_compared = Vec::new();
    let expected = steps_of(expected, "expected", &mut not_compared);
    let actual = steps_of(actual, "actual", &mut not_compared);

    // Pair turns by position: a missing turn in the middle shows as a changed turn there and
    // a missing one at the end, which is what a reader of the two runs side by side sees.
    let pairs = expected.len().max(actual.len());
    let mut rebinding = Rebinding::default();
    let mut turns: Vec<TurnDiff> = (0..pairs)
        .map(|i| match (expected.get(i), actual.get(i)) {
            (Some(e), Some(a)) => compare_pair(e, a, config, &rules, &mut rebinding),
            (Some(e), None) => one_sided(e, TurnStatus::Missing),
            (None, Some(a)) => one_sided(a, TurnStatus::Extra),
            (None, None) => unreachable!("i < max(len)"),
        })
        .collect();

    if config.compare_screenshots {
        let paired = expected.len().min(actual.len());
        for (i, result) in compare_all_screenshots(&expected[..paired], &actual[..paired], config) {
            match result {
                Ok(Some((summary, png))) => {
                    let (e, a) = (&expected[i], &actual[i]);
                    let t = &mut turns[i];
                    if !summary.within_tolerance {
                        t.reasons.extend(pixel_reasons(e, a, &summary, config));
                        t.diff_png = png;
                    }
                    t.pixels = Some(summary);
                }
                Ok(None) => {}
                Err(e) => problems.extend(e),
            }
        }
        if !problems.is_empty() {
            return Err(DiffError::BadInput(problems));
        }
    }
    for t in &mut turns {
        if t.status == TurnStatus::Passed && !t.reasons.is_empty() {
            t.status = TurnStatus::Failed;
        }
    }
    Ok(TrajectoryDiff {
        expected: expected_dir.to_path_buf(),
        actual: actual_dir.to_path_buf(),
        passed: turns.iter().all(TurnDiff::passed),
        turns,
        not_compared,
    })
}

/// The turns a replay of this trajectory drives ([`crate::replay::plan`]): a turn recorded
/// as failed and an attempt folded into its retry are left out, each named in `left_out`.
fn steps_of(turns: Vec<LoadedTurn>, side: &str, left_out: &mut Vec<String>) -> Vec<LoadedTurn> {
    let plan = crate::replay::Plan::of_folders(
        turns.iter().map(|t| (t.number, t.dir.as_path(), &t.action)),
        false,
    );
    let mut kept = Vec::new();
    for step in &plan.steps {
        let lines = crate::replay::plan::left_out(
            step.turn,
            &step.tool,
            step.skipped.as_deref(),
            &step.folded,
        );
        left_out.extend(lines.into_iter().map(|l| format!("{side} {l}")));
        if step.skipped.is_none() {
            kept.push(step.turn);
        }
    }
    turns
        .into_iter()
        .filter(|t| kept.contains(&t.number))
        .collect()
}

/// A turn of both runs compared: its action, its tree (or, for another driver's turn, its
/// change) and whether both windows held still. Pixels come after, in parallel.
fn compare_pair(
    e: &LoadedTurn,
    a: &LoadedTurn,
    config: &DiffConfig,
    rules: &[Redaction],
    rebinding: &mut Rebinding,
) -> TurnDiff {
    // A turn another driver recorded numbers its elements its own way.
    let foreign = is_foreign(e, a);
    let designated = [&e.designated, &a.designated];
    let action_diff =
        action_differences(&e.action, &a.action, designated, rebinding, rules, foreign);
    // Another driver's tree shows other parts of the app (closed menus, hidden toolbars)
    // in other words: its turn is compared by the change it made, in one reading, as
    // replay checks it, not line by line.
    let change = (foreign && config.compare_tree)
        .then(|| tree::change_differences(&e.dir, &a.dir))
        .flatten();
    let tree_diff = (config.compare_tree && !foreign).then(|| {
        unified(
            &tree::state_text(e.state.as_ref(), rules, foreign),
            &tree::state_text(a.state.as_ref(), rules, foreign),
            &format!("expected/{}", file_label(&e.dir)),
            &format!("actual/{}", file_label(&a.dir)),
        )
    });
    let mut reasons = Vec::new();
    if let Some(first) = action_diff.first() {
        reasons.push(format!("action: {first}{}", more(action_diff.len())));
    }
    let tree_diff = tree_diff.flatten().or_else(|| change.clone());
    if let Some(d) = &change {
        reasons.push(format!("tree: {}", d.lines().next().unwrap_or("")));
    } else if let Some(d) = &tree_diff {
        reasons.push(tree_reason(d));
    }
    let (settled_e, settled_a) = (e.settle(), a.settle());
    // A run that settles every turn and never held still cannot be compared. An agent's
    // recording that did not is one moment of a window that kept changing: compared as it
    // is, and said.
    let mut unsettled = Vec::new();
    let mut notes = Vec::new();
    for (side, settle) in [("golden", settled_e.as_ref()), ("run", settled_a.as_ref())] {
        let Some(s) = settle.filter(|s| s.status == crate::trajectory::SettleStatus::Unsettled)
        else {
            continue;
        };
        let changing = match s.changing.is_empty() {
            true => "unknown".to_string(),
            false => s.changing.join("; "),
        };
        match s.by {
            crate::trajectory::SettledBy::Run => unsettled.push(format!(
                "unsettled: the {side}'s window never held still (still changing: {changing}); its state cannot be compared"
            )),
            crate::trajectory::SettledBy::Agent => notes.push(format!(
                "unsettled: the {} recording's window never held still (still changing: {changing}); compared as recorded",
                match side {
                    "golden" => "expected",
                    _ => "actual",
                }
            )),
        }
    }
    let status = match unsettled.is_empty() {
        true => TurnStatus::Passed,
        false => TurnStatus::Unsettled,
    };
    reasons.splice(0..0, unsettled);
    TurnDiff {
        turn: a.number,
        tool: tool_of(a),
        status,
        reasons,
        notes,
        action_diff,
        tree_diff,
        pixels: None,
        // An agent's recording measures no latency: it stops reading when the next call comes.
        expected_latency_ms: settled_e.filter(by_run).map(|s| s.latency_ms),
        actual_latency_ms: settled_a.filter(by_run).map(|s| s.latency_ms),
        expected_dir: Some(e.dir.clone()),
        actual_dir: Some(a.dir.clone()),
        diff_png: None,
    }
}

fn by_run(s: &crate::trajectory::Settle) -> bool {
    s.by == crate::trajectory::SettledBy::Run
}

/// A turn only one run has: `Missing` from the actual run, or `Extra` in it.
fn one_sided(t: &LoadedTurn, status: TurnStatus) -> TurnDiff {
    let missing = status == TurnStatus::Missing;
    TurnDiff {
        turn: t.number,
        tool: tool_of(t),
        status,
        reasons: vec![match missing {
            true => "missing: the actual run has no such turn".into(),
            false => "extra: the expected run has no such turn".into(),
        }],
        notes: Vec::new(),
        action_diff: Vec::new(),
        tree_diff: None,
        pixels: None,
        expected_latency_ms: None,
        actual_latency_ms: None,
        expected_dir: missing.then(|| t.dir.clone()),
        actual_dir: (!missing).then(|| t.dir.clone()),
        diff_png: None,
    }
}

/// Every paired turn's screenshots compared. Decoding dominates, so turns are spread over
/// the cores, one thread each; a comparison that panics is that turn's error, never a
/// turn silently left uncompared.
fn compare_all_screenshots(
    expected: &[LoadedTurn],
    actual: &[LoadedTurn],
    config: &DiffConfig,
) -> Vec<(usize, ScreenshotComparison)> {
    let paired = expected.len().min(actual.len());
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(paired.max(1));
    let next = AtomicUsize::new(0);
    let compare = |i: usize| {
        std::panic::catch_unwind(|| compare_screenshots(&expected[i], &actual[i], config, 1))
            .unwrap_or_else(|panic| {
                Err(vec![format!(
                    "turn {}: comparing the screenshots crashed: {}",
                    actual[i].number,
                    panic_message(&panic)
                )])
            })
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= paired {
                            break mine;
                        }
                        mine.push((i, compare(i)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Why a turn's pixels fail: what moved, when the trees can say (another driver's states
/// place elements in other coordinates), then the pixel count or the size.
fn pixel_reasons(
    e: &LoadedTurn,
    a: &LoadedTurn,
    summary: &PixelSummary,
    config: &DiffConfig,
) -> Vec<String> {
    let mut reasons = Vec::new();
    if !is_foreign(e, a) {
        reasons.extend(layout::reason(e.state.as_ref(), a.state.as_ref()));
    }
    reasons.push(match &summary.size_mismatch {
        Some(m) => format!("pixels: size differs ({m})"),
        None => format!(
            "pixels: {} px differ ({:.3}%), max {}{}",
            summary.diff_pixels,
            summary.diff_ratio * 100.0,
            config.max_diff_pixels,
            config
                .max_diff_pixel_ratio
                .map(|r| format!(" or {:.3}%", r * 100.0))
                .unwrap_or_default()
        ),
    });
    reasons
}

/// The text a panic carried.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_name_the_field_and_line() {
        let e =
            DiffConfig::from_toml("threshold = 0.2\nmax_diff_pixls = 3\n", "x.toml").unwrap_err();
        assert!(
            e.contains("x.toml") && e.contains("line 2") && e.contains("max_diff_pixls"),
            "{e}"
        );
        let e = DiffConfig::from_toml("threshold = \"high\"\n", "x.toml").unwrap_err();
        assert!(e.contains("threshold") && e.contains("line 1"), "{e}");
        let e = DiffConfig::from_toml("threshold = 3.0\n", "x.toml").unwrap_err();
        assert!(e.contains("`threshold` must be within 0..1"), "{e}");
        let e = DiffConfig::from_toml("[[mask]]\nx = 1\nrole = \"label\"\n", "x.toml").unwrap_err();
        assert!(e.contains("mask[0]"), "{e}");
        let e = DiffConfig::from_toml("[[redact]]\npattern = \"(\"\n", "x.toml").unwrap_err();
        assert!(e.contains("redact[0].pattern"), "{e}");
        let ok = DiffConfig::from_toml(
            "max_diff_pixel_ratio = 0.01\n[[mask]]\nrole = \"progress_bar\"\n[[mask]]\nx = 0\ny = 0\nwidth = 10\nheight = 5\n[[redact]]\npattern = '\\d\\d:\\d\\d'\nreplacement = \"<time>\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(ok.mask.len(), 2);
        assert_eq!(ok.threshold, 0.1);
    }

    #[test]
    fn a_late_effect_is_the_goldens_confirmed_only_when_the_settled_window_changed() {
        let rules = tree::builtin_redactions();
        let click = |effect: &str, changed: Option<bool>| {
            let mut a = serde_json::json!({"tool": "click", "arguments": {}, "result_error": null, "result": {"effect": effect}});
            if let Some(c) = changed {
                a["settle"] =
                    serde_json::json!({"status": "stable", "latency_ms": 1600, "changed": c});
            }
            serde_json::from_value::<Action>(a).unwrap()
        };
        let diff = |e: &Action, a: &Action| {
            action_differences(e, a, NONE, &mut Rebinding::default(), &rules, false)
        };
        let golden = click("confirmed", Some(true));
        assert!(diff(&golden, &click("no_change", Some(true))).is_empty());
        assert!(diff(&click("no_change", Some(true)), &golden).is_empty());
        // The window did not change, or the run did not settle: the effect differs.
        assert_eq!(diff(&golden, &click("no_change", Some(false))).len(), 1);
        assert_eq!(diff(&golden, &click("no_change", None)).len(), 1);
        assert_eq!(diff(&golden, &click("suspected_noop", Some(true))).len(), 1);
    }

    #[test]
    fn an_agents_unsettled_turn_is_a_note_and_a_settling_runs_a_failure() {
        let turn = |settle: serde_json::Value| {
            let mut a = serde_json::json!({"tool": "click", "arguments": {}, "result_error": null, "result": {"effect": "confirmed"}});
            if !settle.is_null() {
                a["settle"] = settle;
            }
            LoadedTurn {
                number: 2,
                dir: PathBuf::from("t/turn-00002"),
                action: serde_json::from_value::<Action>(a).unwrap(),
                state: Some(
                    serde_json::json!({"title": "Ticker", "tree_markdown": "- paragraph \"Ticks: 5\""}),
                ),
                designated: Designated::default(),
                target_lineage: Vec::new(),
                busy_frames: Vec::new(),
            }
        };
        let unsettled = |by: &str| {
            let mut s = serde_json::json!({"status": "unsettled", "latency_ms": 800, "changed": true, "changing": ["tree: + paragraph \"Ticks: 6\""]});
            if !by.is_empty() {
                s["by"] = serde_json::json!(by);
            }
            s
        };
        let config = DiffConfig::default();
        let rules = tree::builtin_redactions();
        let compare = |e: &LoadedTurn, a: &LoadedTurn| {
            compare_pair(e, a, &config, &rules, &mut Rebinding::default())
        };
        let stable = serde_json::json!({"status": "stable", "latency_ms": 90, "changed": true});
        // An agent's recording that never held still, against a settled replay of it: noted,
        // compared as recorded (the same tree passes), its latency not taken for the app's.
        let noted = compare(&turn(unsettled("agent")), &turn(stable.clone()));
        assert_eq!(noted.status, TurnStatus::Passed, "{:?}", noted.reasons);
        assert!(noted.reasons.is_empty(), "{:?}", noted.reasons);
        assert!(
            noted.notes[0].starts_with("unsettled: the expected recording's window never held still (still changing: tree: + paragraph \"Ticks: 6\")"),
            "{:?}",
            noted.notes
        );
        assert_eq!(noted.expected_latency_ms, None);
        assert_eq!(noted.actual_latency_ms, Some(90));
        // A run that settles every turn and did not hold still cannot be compared, on
        // either side (a file without `by` was written by such a run).
        for (e, a) in [
            (turn(stable.clone()), turn(unsettled(""))),
            (turn(unsettled("run")), turn(stable.clone())),
        ] {
            let failed = compare(&e, &a);
            assert_eq!(failed.status, TurnStatus::Unsettled);
            assert!(
                failed.reasons[0].contains("its state cannot be compared"),
                "{:?}",
                failed.reasons
            );
            assert!(failed.notes.is_empty());
        }
        // Noted, it still fails on a real difference.
        let mut other = turn(stable);
        other.state = Some(
            serde_json::json!({"title": "Ticker", "tree_markdown": "- paragraph \"Ticks: 9\""}),
        );
        let failed = compare(&turn(unsettled("agent")), &other);
        assert_eq!(failed.notes.len(), 1);
        assert!(!failed.reasons.is_empty());
    }

    const NONE: [&Designated; 2] = [&NOTHING, &NOTHING];
    const NOTHING: Designated = Designated {
        element: None,
        places: Vec::new(),
    };

    #[test]
    fn actions_compare_ids_through_the_rebinding_and_indices_through_the_target() {
        let rules = tree::builtin_redactions();
        let target = |name: &str| serde_json::json!({"role": "push_button", "name": name, "path": [{"role": "frame", "name": "", "index": 0}, {"role": "push_button", "name": name, "index": 3}], "states": [], "element_index": 3});
        let click = |pid: u64, index: u64, name: &str| -> Action {
            serde_json::from_value(serde_json::json!({"tool": "click", "pid": pid, "arguments": {"pid": pid, "element_index": index}, "result_error": null, "target": target(name)})).unwrap()
        };
        let mut rb = Rebinding::default();
        // Other pid and index, same element: equal.
        assert!(
            action_differences(
                &click(10, 4, "7"),
                &click(99, 8, "7"),
                NONE,
                &mut rb,
                &rules,
                false
            )
            .is_empty()
        );
        // Another element.
        let d = action_differences(
            &click(10, 4, "7"),
            &click(99, 4, "8"),
            NONE,
            &mut rb,
            &rules,
            false,
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("target: push_button \"7\""), "{d:?}");
        // The same recorded pid now maps to another live pid: a different app.
        let d = action_differences(
            &click(10, 4, "7"),
            &click(98, 4, "7"),
            NONE,
            &mut rb,
            &rules,
            false,
        );
        assert!(d.iter().any(|l| l.starts_with("pid:")), "{d:?}");
        // A turn without a locator (another driver's): its before-state line says what its
        // index stood for, compared by role (across vocabularies) and name.
        let mut theirs = click(10, 5, "7");
        theirs.target = None;
        let line = Designated {
            element: Some(element_words("push button", "7")),
            places: Vec::new(),
        };
        let mut rb = Rebinding::default();
        let same = action_differences(
            &theirs,
            &click(99, 4, "7"),
            [&line, &NOTHING],
            &mut rb,
            &rules,
            false,
        );
        assert!(same.is_empty(), "{same:?}");
        let other = action_differences(
            &theirs,
            &click(99, 4, "8"),
            [&line, &NOTHING],
            &mut rb,
            &rules,
            false,
        );
        assert_eq!(other, ["target: button \"7\" → button \"8\""]);
    }
}
