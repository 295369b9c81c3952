//! Comparing one pair of turns: the action (through the window rebinding, points by where
//! they fell), the screenshots (masks, tolerances, layout reasons) and the tree reason line.

use super::*;

/// Recorded ids of the expected run → the actual run's, learnt turn by turn: the same
/// recorded pid must keep mapping to the same live pid.
#[derive(Default)]
pub(super) struct Rebinding {
    pub(super) pids: HashMap<u64, u64>,
    pub(super) windows: HashMap<u64, u64>,
}

impl Rebinding {
    fn check(map: &mut HashMap<u64, u64>, expected: Option<u64>, actual: Option<u64>) -> bool {
        match (expected, actual) {
            (Some(e), Some(a)) => *map.entry(e).or_insert(a) == a,
            (None, None) => true,
            _ => false,
        }
    }

    /// What the action's ids say against the rebinding: a recorded pid or window that an
    /// earlier turn bound to another one in this run.
    fn differences(&mut self, expected: &Action, actual: &Action) -> Vec<String> {
        let ((expected_pid, e), (actual_pid, a)) = (expected.recorded_ids(), actual.recorded_ids());
        let mut out = Vec::new();
        if !Self::check(&mut self.pids, expected_pid, actual_pid) {
            out.push(
                "pid: acts on another app than the same recorded pid did in an earlier turn".into(),
            );
        }
        if !Self::check(&mut self.windows, e, a) {
            out.push("window_id: acts on another window than the same recorded window did in an earlier turn".into());
        }
        out
    }
}

pub(super) fn short(v: &Value) -> String {
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
/// Each step of the path says its role, its name when it has one and its place, so a press
/// on a look-alike (another "Add", in another panel or another place) shows as a change.
pub(super) fn target_identity(action: &Action) -> Option<String> {
    let t = action.target.as_ref()?;
    let path: Vec<String> = t
        .path
        .iter()
        .map(|s| match s.name.as_str() {
            "" => format!("{}[{}]", s.role, s.index),
            name => format!("{} {name:?}[{}]", s.role, s.index),
        })
        .collect();
    Some(format!("{} {:?} at {}", t.role, t.name, path.join("/")))
}

/// Adds `name: expected → actual` when the two differ.
pub(super) fn changed(out: &mut Vec<String>, name: &str, expected: String, actual: String) {
    if expected != actual {
        out.push(format!("{name}: {expected} → {actual}"));
    }
}

pub(super) fn action_differences(
    expected: &Action,
    actual: &Action,
    designated: [&Designated; 2],
    rebinding: &mut Rebinding,
    rules: &[Redaction],
    foreign: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    changed(
        &mut out,
        "tool",
        format!("{:?}", expected.tool),
        format!("{:?}", actual.tool),
    );
    // Ids are compared through the rebinding, element indices through the element they
    // designated, points through where they fell; everything else literally.
    let mut designating = vec!["pid", "window_id", "element_index"];
    for p in designated.iter().flat_map(|d| &d.places) {
        designating.extend([p.keys.0, p.keys.1]);
    }
    let args = |v: &Action| -> serde_json::Map<String, Value> {
        v.arguments
            .iter()
            .filter(|(k, _)| !designating.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
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
    if let Some((e, a)) = targets(expected, actual, designated) {
        if !(foreign && same_foreign_target(&e, &a)) {
            changed(&mut out, "target", e, a);
        }
    }
    out.extend(points::differences(
        &designated[0].places,
        &designated[1].places,
    ));
    out.extend(rebinding.differences(expected, actual));
    let text = |v: Option<&str>| -> String {
        match v {
            None => "none".into(),
            Some(s) => format!("{:?}", redact(s, rules)),
        }
    };
    changed(
        &mut out,
        "result_error",
        text(expected.result_error.as_deref()),
        text(actual.result_error.as_deref()),
    );
    let effect = |v: &Action| text(v.result.effect.as_deref());
    // A recording that could not tell (`unverifiable`: another driver, or a cua before
    // clicks read their effect back) says nothing against the run's effect; the turn's
    // change is compared all the same. Any other change of effect still counts.
    let (expected_effect, actual_effect) = (effect(expected), effect(actual));
    if expected_effect != "\"unverifiable\"" && !late_effect(expected, actual) {
        changed(&mut out, "effect", expected_effect, actual_effect);
    }
    out
}

/// The element each turn acts on, where either names one by index: the whole path when
/// both were located, else what both can say (role and name).
fn targets(
    expected: &Action,
    actual: &Action,
    designated: [&Designated; 2],
) -> Option<(String, String)> {
    let has = |v: &Action| v.arguments.contains_key("element_index");
    if !has(expected) && !has(actual) {
        return None;
    }
    if let (Some(e), Some(a)) = (target_identity(expected), target_identity(actual)) {
        return Some((e, a));
    }
    let words = |v: &Action, from_markdown: Option<&str>| {
        v.target
            .as_ref()
            .map(|t| element_words(&t.role, &t.name))
            .or(from_markdown.map(str::to_string))
            .unwrap_or_else(|| {
                let index = v.arguments.get("element_index").unwrap_or(&Value::Null);
                format!("element {index}")
            })
    };
    Some((
        words(expected, designated[0].element.as_deref()),
        words(actual, designated[1].element.as_deref()),
    ))
}

/// Whether two effects differ only in when the change showed: one side `confirmed`, the
/// other `no_change` (its read-back gave up before a slow app showed the change) while its
/// settled window did change. The change itself is compared in the tree and pixels.
fn late_effect(expected: &Action, actual: &Action) -> bool {
    fn effect(v: &Action) -> Option<&str> {
        v.result.effect.as_deref()
    }
    let changed_late =
        |v: &Action| effect(v) == Some("no_change") && v.settle.as_ref().is_some_and(|s| s.changed);
    (effect(expected) == Some("confirmed") && changed_late(actual))
        || (effect(actual) == Some("confirmed") && changed_late(expected))
}

/// Whether two targets, one written by another driver, are one element: the same role and
/// name in one vocabulary (its doubled GTK 4 labels undone), or, where one side has no
/// name, the same role (cua-driver names an unnamed element by its text).
fn same_foreign_target(expected: &str, actual: &str) -> bool {
    use crate::snapshot::markdown::{parse, role_key};
    let line = |s: &str| parse(&format!("- {s}")).into_iter().next();
    match (line(expected), line(actual)) {
        (Some(e), Some(a)) => {
            role_key(&e.role) == role_key(&a.role)
                && (crate::replay::locate::same_name(&e.name, &a.name)
                    || e.name.is_empty()
                    || a.name.is_empty())
        }
        _ => false,
    }
}

/// Frames of the elements a mask rule names, from a state's elements.
pub(super) fn element_masks(rule: &MaskRule, state: Option<&Value>) -> Vec<Rect> {
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
pub(super) type ScreenshotComparison = Result<Option<(PixelSummary, Option<Vec<u8>>)>, Vec<String>>;

/// The share of a screenshot another driver took that may differ from cua's (0.5%).
pub const FOREIGN_PIXEL_RATIO: f64 = 0.005;

pub(super) fn compare_screenshots(
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
    let mut masks = masks_of(config, expected, actual);
    if config.mask_carets && (ew, eh) == (aw, ah) {
        let mut zones = crate::caret::editable_frames(expected.state.as_ref());
        zones.extend(crate::caret::editable_frames(actual.state.as_ref()));
        masks.extend(crate::caret::carets(ew, eh, &erg, &arg, &zones));
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
    // Another driver's screenshot is taken on its own schedule (a caret mid-blink, a
    // focus ring drawn a frame later): unless the config says, up to FOREIGN_PIXEL_RATIO
    // of it may differ. The turn's change is compared in its tree.
    let foreign = is_foreign(expected, actual);
    let max_ratio = config
        .max_diff_pixel_ratio
        .or(foreign.then_some(FOREIGN_PIXEL_RATIO));
    // Nor is a window another driver's run sized otherwise compared pixel by pixel (GTK 4's
    // calculator settles 12 px taller in one run in five): the report still shows both
    // sizes, and the tree carries the verdict.
    let within = (d.size_mismatch.is_none()
        && (d.diff_pixels <= config.max_diff_pixels || max_ratio.is_some_and(|r| ratio <= r)))
        || (foreign && d.size_mismatch.is_some());
    let png = match d.diff_pixels > 0 || d.size_mismatch.is_some() {
        true => diff_png(&d),
        false => None,
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

/// What the pixel diff leaves aside: the config's rectangles and the elements its rules
/// name (in either run), and both runs' busy widgets.
fn masks_of(config: &DiffConfig, expected: &LoadedTurn, actual: &LoadedTurn) -> Vec<Rect> {
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
    masks.extend(expected.busy_frames.iter().chain(&actual.busy_frames));
    masks
}

/// The diff image as a PNG, where the diff drew one.
fn diff_png(d: &pixels::PixelDiff) -> Option<Vec<u8>> {
    let rgba = d.diff_image.as_ref()?;
    crate::images::encode_png(&crate::platform::Capture {
        width: d.width,
        height: d.height,
        rgba: rgba.clone(),
    })
    .ok()
}

pub(super) fn tool_of(t: &LoadedTurn) -> String {
    t.action.tool.clone()
}

/// `tree: 1 line(s) removed, 1 added, first: - label "Count: 1" / + label "Total: 1"`.
pub(super) fn tree_reason(unified: &str) -> String {
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

pub(super) fn file_label(turn_dir: &Path) -> String {
    format!(
        "{}/app_state.json",
        turn_dir.file_name().unwrap_or_default().to_string_lossy()
    )
}

pub(super) fn more(n: usize) -> String {
    if n > 1 {
        format!(" (+{} more)", n - 1)
    } else {
        String::new()
    }
}
