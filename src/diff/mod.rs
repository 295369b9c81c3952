//! Diffing trajectories: an expected (golden) and an actual run compared turn by turn on
//! the action, the post-action accessibility tree (after redaction, as a unified diff) and
//! the post-action screenshot (the perceptual [`pixels`] diff, with tolerances and masks).
//! Missing and extra turns are differences too.
//!
//! Everything here reads; nothing is written. Bad input (a missing folder, corrupt JSON, an
//! unreadable PNG, a bad config) comes back as [`DiffError::BadInput`] with every problem
//! named, so callers can exit 2 without having written a report.

mod layout;
pub mod pixels;
mod points;
pub mod tree;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::platform::Rect;
use pixels::{ImageRef, PixelDiffOptions};
use tree::{Redaction, redact, unified};

/// What counts as a difference. Read from TOML (`cua diff --config`, or a scenario's
/// `[diff]` table); every field is optional.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DiffConfig {
    /// 0..1: how different two pixels' colours must be to count (YIQ distance). Default 0.1.
    pub threshold: f64,
    /// A screenshot passes with at most this many differing pixels. Default 0.
    pub max_diff_pixels: u64,
    /// ... or with at most this fraction (0..1) of its pixels differing.
    pub max_diff_pixel_ratio: Option<f64>,
    /// Count anti-aliased pixels as differences. Default false.
    pub include_anti_aliased: bool,
    /// Compare screenshots. Default true.
    pub compare_screenshots: bool,
    /// Compare the post-action accessibility tree. Default true.
    pub compare_tree: bool,
    /// Regions ignored in screenshots.
    pub mask: Vec<MaskRule>,
    /// Volatile text replaced before comparing trees and action results.
    pub redact: Vec<RedactRule>,
}

impl Default for DiffConfig {
    fn default() -> Self {
        DiffConfig {
            threshold: 0.1,
            max_diff_pixels: 0,
            max_diff_pixel_ratio: None,
            include_anti_aliased: false,
            compare_screenshots: true,
            compare_tree: true,
            mask: Vec::new(),
            redact: Vec::new(),
        }
    }
}

/// A screenshot region to ignore: a rectangle in window pixels (`x, y, width, height`), or
/// the frames of the elements with this `role` and/or `name` (in either run's tree).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaskRule {
    pub x: Option<i32>,
    pub y: Option<i32>,
    pub width: Option<i32>,
    pub height: Option<i32>,
    pub role: Option<String>,
    pub name: Option<String>,
}

/// Every match of the regex `pattern` becomes `replacement` (default `<redacted>`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedactRule {
    pub pattern: String,
    pub replacement: Option<String>,
}

impl DiffConfig {
    /// Parses a TOML config; errors name the file, line and field.
    pub fn from_toml(text: &str, source: &str) -> Result<DiffConfig, String> {
        let config: DiffConfig = toml::from_str(text).map_err(|e| format!("{source}: {e}"))?;
        config.validate().map_err(|e| format!("{source}: {e}"))?;
        Ok(config)
    }

    /// Checks ranges and shapes serde cannot; names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(format!(
                "`threshold` must be within 0..1, got {}",
                self.threshold
            ));
        }
        if let Some(r) = self.max_diff_pixel_ratio {
            if !(0.0..=1.0).contains(&r) {
                return Err(format!(
                    "`max_diff_pixel_ratio` must be within 0..1, got {r}"
                ));
            }
        }
        for (i, m) in self.mask.iter().enumerate() {
            let rect = [m.x, m.y, m.width, m.height];
            let by_rect = rect.iter().all(Option::is_some);
            let some_rect = rect.iter().any(Option::is_some);
            let by_element = m.role.is_some() || m.name.is_some();
            if by_rect == by_element || (some_rect && !by_rect) {
                return Err(format!(
                    "`mask[{i}]`: give either all of x, y, width, height or role and/or name"
                ));
            }
            if by_rect && (m.width.unwrap_or(0) <= 0 || m.height.unwrap_or(0) <= 0) {
                return Err(format!("`mask[{i}]`: width and height must be positive"));
            }
        }
        self.redactions().map(|_| ())
    }

    /// The built-in redactions followed by the configured ones, compiled.
    pub fn redactions(&self) -> Result<Vec<Redaction>, String> {
        let mut rules = tree::builtin_redactions();
        for (i, r) in self.redact.iter().enumerate() {
            let pattern =
                regex::Regex::new(&r.pattern).map_err(|e| format!("`redact[{i}].pattern`: {e}"))?;
            rules.push(Redaction {
                pattern,
                replacement: r.replacement.clone().unwrap_or_else(|| "<redacted>".into()),
            });
        }
        Ok(rules)
    }
}

/// Why a diff could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("bad input:\n  {}", .0.join("\n  "))]
    BadInput(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    Passed,
    Failed,
    /// In the expected trajectory only.
    Missing,
    /// In the actual trajectory only.
    Extra,
}

/// The screenshot comparison of one turn.
#[derive(Debug, Clone, Serialize)]
pub struct PixelSummary {
    pub diff_pixels: u64,
    pub diff_ratio: f64,
    pub masked_pixels: u64,
    /// `expected WxH, actual WxH` when the sizes differ.
    pub size_mismatch: Option<String>,
    pub within_tolerance: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TurnDiff {
    pub turn: u32,
    pub tool: String,
    pub status: TurnStatus,
    /// One line per difference, e.g. `pixels: 312 px differ (0.4%), max 0`.
    pub reasons: Vec<String>,
    /// `field: expected → actual` lines.
    pub action_diff: Vec<String>,
    /// Unified diff of the redacted post-action tree.
    pub tree_diff: Option<String>,
    pub pixels: Option<PixelSummary>,
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

#[derive(Debug, Clone, Serialize)]
pub struct TrajectoryDiff {
    pub expected: PathBuf,
    pub actual: PathBuf,
    pub passed: bool,
    pub turns: Vec<TurnDiff>,
}

impl TrajectoryDiff {
    pub fn failed_turns(&self) -> impl Iterator<Item = &TurnDiff> {
        self.turns.iter().filter(|t| !t.passed())
    }
}

/// One turn folder, read.
struct LoadedTurn {
    number: u32,
    dir: PathBuf,
    action: Value,
    /// The post-action window state (`app_state.json`, or the reference driver's
    /// `after_state.json`).
    state: Option<Value>,
    designated: Designated,
}

/// What a turn's action designated beyond its literal arguments.
#[derive(Debug, Default)]
struct Designated {
    /// For an element turn without a locator: `role "name"` of its line in the
    /// before-state's tree_markdown (what its index stood for).
    element: Option<String>,
    /// Where its points fell.
    places: Vec<points::Place>,
}

/// Reads a trajectory's turns through [`crate::trajectory::read`]; every problem goes to
/// `problems`, named by trajectory and file.
fn load(dir: &Path, label: &str, problems: &mut Vec<String>) -> Vec<LoadedTurn> {
    use crate::trajectory::read;
    let turns = match read::turn_folders(dir) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("{label} {e}"));
            return Vec::new();
        }
    };
    turns
        .into_iter()
        .filter_map(|t| {
            let action = read::action(&t.dir)
                .map_err(|e| problems.push(format!("{label} {e}")))
                .ok()?;
            let state = read::state(&t.dir, read::State::After)
                .map_err(|e| problems.push(format!("{label} {e}")))
                .ok()
                .flatten();
            let designated = Designated {
                element: markdown_element(&t.dir, &action),
                places: points::places(&t.dir, &action, element_words),
            };
            Some(LoadedTurn {
                number: t.number,
                dir: t.dir,
                action,
                state,
                designated,
            })
        })
        .collect()
}

/// `role "name"` of an element turn's line in its before-state, when it has no locator.
fn markdown_element(turn_dir: &Path, action: &Value) -> Option<String> {
    use crate::trajectory::{markdown, read};
    if action.get("target").is_some_and(|t| !t.is_null()) {
        return None;
    }
    let index = action.pointer("/arguments/element_index")?.as_u64()? as usize;
    let md = read::state_markdown(turn_dir, read::State::Before)?;
    let lines = markdown::parse(&md);
    let (line, _) = markdown::element_with_ancestors(&lines, index)?;
    Some(element_words(&line.role, &line.name))
}

/// An element as both drivers can say it: the role in one vocabulary, and the name.
fn element_words(role: &str, name: &str) -> String {
    format!("{} {name:?}", crate::trajectory::markdown::role_key(role))
}

/// Recorded ids of the expected run → the actual run's, learnt turn by turn: the same
/// recorded pid must keep mapping to the same live pid.
#[derive(Default)]
struct Rebinding {
    pids: HashMap<u64, u64>,
    windows: HashMap<u64, u64>,
}

impl Rebinding {
    fn check(map: &mut HashMap<u64, u64>, expected: Option<u64>, actual: Option<u64>) -> bool {
        match (expected, actual) {
            (Some(e), Some(a)) => *map.entry(e).or_insert(a) == a,
            (None, None) => true,
            _ => false,
        }
    }
}

fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "none".into(),
        other => other.to_string(),
    };
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

/// `role "name" @ path` of a recorded target, the identity an element index stands for.
fn target_identity(action: &Value) -> Option<String> {
    let t = action.get("target").filter(|t| !t.is_null())?;
    let path: Vec<String> = t["path"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|s| format!("{}[{}]", s["role"].as_str().unwrap_or(""), s["index"]))
                .collect()
        })
        .unwrap_or_default();
    Some(format!(
        "{} {:?} at {}",
        t["role"].as_str().unwrap_or(""),
        t["name"].as_str().unwrap_or(""),
        path.join("/")
    ))
}

/// Adds `name: expected → actual` when the two differ.
fn changed(out: &mut Vec<String>, name: &str, expected: String, actual: String) {
    if expected != actual {
        out.push(format!("{name}: {expected} → {actual}"));
    }
}

fn action_differences(
    expected: &Value,
    actual: &Value,
    designated: [&Designated; 2],
    rebinding: &mut Rebinding,
    rules: &[Redaction],
) -> Vec<String> {
    let mut out = Vec::new();
    changed(
        &mut out,
        "tool",
        short(&expected["tool"]),
        short(&actual["tool"]),
    );
    // Ids are compared through the rebinding, element indices through the element they
    // designated, points through where they fell; everything else literally.
    let mut designating = vec!["pid", "window_id", "element_index"];
    for p in designated.iter().flat_map(|d| &d.places) {
        designating.extend([p.keys.0, p.keys.1]);
    }
    let args = |v: &Value| -> serde_json::Map<String, Value> {
        v["arguments"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| !designating.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ea, aa) = (args(expected), args(actual));
    let mut keys: Vec<&String> = ea.keys().chain(aa.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        changed(
            &mut out,
            &format!("arguments.{k}"),
            ea.get(k).map(short).unwrap_or_else(|| "absent".into()),
            aa.get(k).map(short).unwrap_or_else(|| "absent".into()),
        );
    }
    let has = |v: &Value, k: &str| v["arguments"].get(k).is_some();
    if has(expected, "element_index") || has(actual, "element_index") {
        // Both located: the whole path. Otherwise what both can say: role and name.
        let (e, a) = match (target_identity(expected), target_identity(actual)) {
            (Some(e), Some(a)) => (e, a),
            _ => {
                let words = |v: &Value, from_markdown: Option<&str>| {
                    v.get("target")
                        .filter(|t| !t.is_null())
                        .map(|t| {
                            element_words(
                                t["role"].as_str().unwrap_or(""),
                                t["name"].as_str().unwrap_or(""),
                            )
                        })
                        .or(from_markdown.map(str::to_string))
                        .unwrap_or_else(|| format!("element {}", v["arguments"]["element_index"]))
                };
                (
                    words(expected, designated[0].element.as_deref()),
                    words(actual, designated[1].element.as_deref()),
                )
            }
        };
        changed(&mut out, "target", e, a);
    }
    out.extend(points::differences(
        &designated[0].places,
        &designated[1].places,
    ));
    let id = |v: &Value, k: &str| {
        v["arguments"]
            .get(k)
            .or_else(|| v.get(k))
            .and_then(Value::as_u64)
    };
    if !Rebinding::check(&mut rebinding.pids, id(expected, "pid"), id(actual, "pid")) {
        out.push(
            "pid: acts on another app than the same recorded pid did in an earlier turn".into(),
        );
    }
    if !Rebinding::check(
        &mut rebinding.windows,
        id(expected, "window_id"),
        id(actual, "window_id"),
    ) {
        out.push("window_id: acts on another window than the same recorded window did in an earlier turn".into());
    }
    let text = |v: &Value| -> String {
        match v {
            Value::Null => "none".into(),
            Value::String(s) => format!("{:?}", redact(s, rules)),
            other => redact(&other.to_string(), rules),
        }
    };
    changed(
        &mut out,
        "result_error",
        text(&expected["result_error"]),
        text(&actual["result_error"]),
    );
    changed(
        &mut out,
        "effect",
        text(expected.pointer("/result/effect").unwrap_or(&Value::Null)),
        text(actual.pointer("/result/effect").unwrap_or(&Value::Null)),
    );
    out
}

fn decode_png(path: &Path) -> Result<(u32, u32, Vec<u8>), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .map_err(|e| format!("{}: unreadable PNG: {e}", path.display()))?;
    let rgba = img.to_rgba8();
    Ok((rgba.width(), rgba.height(), rgba.into_raw()))
}

/// Frames of the elements a mask rule names, from a state's elements.
fn element_masks(rule: &MaskRule, state: Option<&Value>) -> Vec<Rect> {
    let Some(elements) = state.and_then(|s| s["elements"].as_array()) else {
        return Vec::new();
    };
    elements
        .iter()
        .filter(|e| rule.role.as_deref().is_none_or(|r| e["role"] == r))
        .filter(|e| rule.name.as_deref().is_none_or(|n| e["name"] == n))
        .filter_map(|e| serde_json::from_value::<Rect>(e["frame"].clone()).ok())
        .collect()
}

/// A turn's screenshot summary and diff PNG; None when neither run has a screenshot; the
/// errors when a PNG cannot be read.
type ScreenshotComparison = Result<Option<(PixelSummary, Option<Vec<u8>>)>, Vec<String>>;

fn compare_screenshots(
    expected: &LoadedTurn,
    actual: &LoadedTurn,
    config: &DiffConfig,
    threads: usize,
) -> ScreenshotComparison {
    let (ep, ap) = (
        expected.dir.join("screenshot.png"),
        actual.dir.join("screenshot.png"),
    );
    match (ep.exists(), ap.exists()) {
        (false, false) => return Ok(None),
        (true, false) | (false, true) => {
            let missing = if ep.exists() { &ap } else { &ep };
            return Ok(Some((
                PixelSummary {
                    diff_pixels: 0,
                    diff_ratio: 1.0,
                    masked_pixels: 0,
                    size_mismatch: Some(format!("{} is missing", missing.display())),
                    within_tolerance: false,
                },
                None,
            )));
        }
        _ => {}
    }
    let (e, a) = (decode_png(&ep), decode_png(&ap));
    let ((ew, eh, erg), (aw, ah, arg)) = match (e, a) {
        (Ok(e), Ok(a)) => (e, a),
        (e, a) => return Err([e.err(), a.err()].into_iter().flatten().collect()),
    };
    let mut masks = Vec::new();
    for rule in &config.mask {
        match (rule.x, rule.y, rule.width, rule.height) {
            (Some(x), Some(y), Some(width), Some(height)) => masks.push(Rect {
                x,
                y,
                width,
                height,
            }),
            _ => {
                masks.extend(element_masks(rule, expected.state.as_ref()));
                masks.extend(element_masks(rule, actual.state.as_ref()));
            }
        }
    }
    let opts = PixelDiffOptions {
        threshold: config.threshold,
        include_anti_aliased: config.include_anti_aliased,
        masks,
        diff_image: true,
        threads,
    };
    let d = pixels::diff(
        ImageRef {
            width: ew,
            height: eh,
            rgba: &erg,
        },
        ImageRef {
            width: aw,
            height: ah,
            rgba: &arg,
        },
        &opts,
    );
    let ratio = d.ratio();
    let within = d.size_mismatch.is_none()
        && (d.diff_pixels <= config.max_diff_pixels
            || config.max_diff_pixel_ratio.is_some_and(|r| ratio <= r));
    let png = match (
        &d.diff_image,
        d.diff_pixels > 0 || d.size_mismatch.is_some(),
    ) {
        (Some(rgba), true) => crate::tools::encode_png(&crate::platform::Capture {
            width: d.width,
            height: d.height,
            rgba: rgba.clone(),
        })
        .ok(),
        _ => None,
    };
    Ok(Some((
        PixelSummary {
            diff_pixels: d.diff_pixels,
            diff_ratio: ratio,
            masked_pixels: d.masked_pixels,
            size_mismatch: d
                .size_mismatch
                .map(|((ew, eh), (aw, ah))| format!("expected {ew}x{eh}, actual {aw}x{ah}")),
            within_tolerance: within,
        },
        png,
    )))
}

fn tool_of(t: &LoadedTurn) -> String {
    t.action["tool"].as_str().unwrap_or("").to_string()
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
    let expected = load(expected_dir, "expected", &mut problems);
    let actual = load(actual_dir, "actual", &mut problems);
    if !problems.is_empty() {
        return Err(DiffError::BadInput(problems));
    }

    // Pair turns by position: a missing turn in the middle shows as a changed turn there and
    // a missing one at the end, which is what a reader of the two runs side by side sees.
    let pairs = expected.len().max(actual.len());
    let mut rebinding = Rebinding::default();
    let mut turns: Vec<TurnDiff> = (0..pairs)
        .map(|i| match (expected.get(i), actual.get(i)) {
            (Some(e), Some(a)) => {
                let action_diff = action_differences(
                    &e.action,
                    &a.action,
                    [&e.designated, &a.designated],
                    &mut rebinding,
                    &rules,
                );
                // A turn another driver recorded numbers its elements its own way.
                let foreign = [e, a]
                    .iter()
                    .any(|t| t.action["recorded_by"] == crate::trajectory::cua_driver::RECORDED_BY);
                let tree_diff = config.compare_tree.then(|| {
                    unified(
                        &tree::state_text(e.state.as_ref(), &rules, foreign),
                        &tree::state_text(a.state.as_ref(), &rules, foreign),
                        &format!("expected/{}", file_label(&e.dir)),
                        &format!("actual/{}", file_label(&a.dir)),
                    )
                });
                let mut reasons = Vec::new();
                if let Some(first) = action_diff.first() {
                    reasons.push(format!("action: {first}{}", more(action_diff.len())));
                }
                let tree_diff = tree_diff.flatten();
                if let Some(d) = &tree_diff {
                    reasons.push(tree_reason(d));
                }
                TurnDiff {
                    turn: a.number,
                    tool: tool_of(a),
                    status: TurnStatus::Passed,
                    reasons,
                    action_diff,
                    tree_diff,
                    pixels: None,
                    expected_dir: Some(e.dir.clone()),
                    actual_dir: Some(a.dir.clone()),
                    diff_png: None,
                }
            }
            (Some(e), None) => TurnDiff {
                turn: e.number,
                tool: tool_of(e),
                status: TurnStatus::Missing,
                reasons: vec!["missing: the actual run has no such turn".into()],
                action_diff: Vec::new(),
                tree_diff: None,
                pixels: None,
                expected_dir: Some(e.dir.clone()),
                actual_dir: None,
                diff_png: None,
            },
            (None, Some(a)) => TurnDiff {
                turn: a.number,
                tool: tool_of(a),
                status: TurnStatus::Extra,
                reasons: vec!["extra: the expected run has no such turn".into()],
                action_diff: Vec::new(),
                tree_diff: None,
                pixels: None,
                expected_dir: None,
                actual_dir: Some(a.dir.clone()),
                diff_png: None,
            },
            (None, None) => unreachable!("i < max(len)"),
        })
        .collect();

    // Screenshots: decoding dominates, so turns are spread over the cores, one thread each.
    if config.compare_screenshots {
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(pairs.max(1));
        let next = AtomicUsize::new(0);
        let paired = expected.len().min(actual.len());
        let results: Vec<Vec<(usize, ScreenshotComparison)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= paired {
                                break mine;
                            }
                            // A comparison that panics is that turn's error, never a
                            // turn silently left uncompared.
                            let compared = std::panic::catch_unwind(|| {
                                compare_screenshots(&expected[i], &actual[i], config, 1)
                            })
                            .unwrap_or_else(|panic| {
                                Err(vec![format!(
                                    "turn {}: comparing the screenshots crashed: {}",
                                    actual[i].number,
                                    panic_message(&panic)
                                )])
                            });
                            mine.push((i, compared));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        for (i, result) in results.into_iter().flatten() {
            match result {
                Ok(Some((summary, png))) => {
                    let t = &mut turns[i];
                    if !summary.within_tolerance {
                        // What moved, when the trees can say (before the pixel count).
                        let states = (expected[i].state.as_ref(), actual[i].state.as_ref());
                        t.reasons.extend(layout::reason(states.0, states.1));
                        t.reasons.push(match &summary.size_mismatch {
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
    })
}

/// The text a panic carried.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// `tree: 1 line(s) removed, 1 added, first: - label "Count: 1" / + label "Total: 1"`.
fn tree_reason(unified: &str) -> String {
    let body = || {
        unified
            .lines()
            .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
    };
    let removed: Vec<&str> = body().filter(|l| l.starts_with('-')).collect();
    let added: Vec<&str> = body().filter(|l| l.starts_with('+')).collect();
    let first = |lines: &[&str]| {
        lines.first().map(|l| {
            let line = l[1..].trim().trim_start_matches("- ");
            match line.char_indices().nth(80) {
                Some((cut, _)) => format!("{}…", &line[..cut]),
                None => line.to_string(),
            }
        })
    };
    let mut reason = format!(
        "tree: {} line(s) removed, {} added",
        removed.len(),
        added.len()
    );
    match (first(&removed), first(&added)) {
        (Some(r), Some(a)) => reason.push_str(&format!(" ({r} → {a})")),
        (Some(r), None) => reason.push_str(&format!(" ({r} gone)")),
        (None, Some(a)) => reason.push_str(&format!(" ({a} new)")),
        (None, None) => {}
    }
    reason
}

fn file_label(turn_dir: &Path) -> String {
    format!(
        "{}/app_state.json",
        turn_dir.file_name().unwrap_or_default().to_string_lossy()
    )
}

fn more(n: usize) -> String {
    if n > 1 {
        format!(" (+{} more)", n - 1)
    } else {
        String::new()
    }
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

    const NONE: [&Designated; 2] = [&NOTHING, &NOTHING];
    const NOTHING: Designated = Designated {
        element: None,
        places: Vec::new(),
    };

    #[test]
    fn actions_compare_ids_through_the_rebinding_and_indices_through_the_target() {
        let rules = tree::builtin_redactions();
        let target = |name: &str| serde_json::json!({"role": "push_button", "name": name, "path": [{"role": "frame", "name": "", "index": 0}, {"role": "push_button", "name": name, "index": 3}]});
        let click = |pid: u64, index: u64, name: &str| serde_json::json!({"tool": "click", "pid": pid, "arguments": {"pid": pid, "element_index": index}, "result_error": null, "target": target(name)});
        let mut rb = Rebinding::default();
        // Other pid and index, same element: equal.
        assert!(
            action_differences(
                &click(10, 4, "7"),
                &click(99, 8, "7"),
                NONE,
                &mut rb,
                &rules
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
        );
        assert!(d.iter().any(|l| l.starts_with("pid:")), "{d:?}");
        // A turn without a locator (another driver's): its before-state line says what its
        // index stood for, compared by role (across vocabularies) and name.
        let mut theirs = click(10, 5, "7");
        theirs.as_object_mut().unwrap().remove("target");
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
        );
        assert!(same.is_empty(), "{same:?}");
        let other = action_differences(
            &theirs,
            &click(99, 4, "8"),
            [&line, &NOTHING],
            &mut rb,
            &rules,
        );
        assert_eq!(other, ["target: button \"7\" → button \"8\""]);
    }
}
