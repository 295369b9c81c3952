//! `verify_state`: waits, bounded, until a window shows what the caller expects (the
//! window there or gone, at some bounds; an element of a role and label, enabled,
//! selected, holding a value), the same kind of read-back replay's postconditions make,
//! offered to agents. Each predicate comes back satisfied, unsatisfied or unknown (the
//! tree could not be read whole); only all satisfied, over `stable_samples` reads in a
//! row, is success.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ImageBlock, ToolContext, ToolOutput, ToolSpec};
use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;
use crate::platform::{AxTree, Platform, WindowInfo};
use crate::snapshot::markdown::role_key;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyStateArgs {
    /// Process that owns the window.
    pub pid: u32,
    /// The window to verify.
    pub window_id: u64,
    /// One to eight predicates, all of which must hold.
    pub expect: Vec<Expectation>,
    /// How long to wait for them, in ms (0: one read). Default 5000, at most 10000.
    pub timeout_ms: Option<u64>,
    /// Reads in a row that must satisfy every predicate. Default 2, 1-5.
    #[schemars(range(min = 1, max = 5))]
    pub stable_samples: Option<u32>,
    /// Also return the window's screenshot at the last read (for the caller to look at).
    pub include_screenshot: Option<bool>,
}

/// One predicate: about the window, or about an element in it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub window: Option<WindowExpectation>,
    pub element: Option<ElementExpectation>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowExpectation {
    /// The window is there (true) or gone (false).
    pub exists: Option<bool>,
    /// Its bounds, in screen pixels, within tolerance_px.
    pub bounds: Option<BoundsExpectation>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoundsExpectation {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    /// Allowed difference per edge, 0-100 pixels. Default 0.
    pub tolerance_px: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElementExpectation {
    /// Which elements: by role and by a substring of their label (both optional).
    pub selector: Selector,
    /// Only true: some element matches (absence is asked with window predicates).
    pub exists: Option<bool>,
    /// A matching element is enabled (true) or disabled (false).
    pub enabled: Option<bool>,
    /// A matching element is selected or checked (true), or not (false).
    pub selected: Option<bool>,
    /// A matching element's value is exactly this.
    pub value_equals: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    /// The element's role (any spelling: push_button, "push button", AXButton).
    pub role: Option<String>,
    /// A substring of its label (as get_window_state's elements say it: its name, else its value, else its text), any case.
    pub label_contains: Option<String>,
}

pub struct VerifyState;

const MAX_TIMEOUT_MS: u64 = 10_000;
/// After a satisfying read, how long a further read waits for the app to change.
const STABLE_WAIT: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Satisfied,
    Unsatisfied,
    Unknown,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Satisfied => "satisfied",
            Verdict::Unsatisfied => "unsatisfied",
            Verdict::Unknown => "unknown",
        }
    }
}

#[async_trait]
impl ToolSpec for VerifyState {
    type Args = VerifyStateArgs;
    const NAME: &'static str = "verify_state";
    const DESCRIPTION: &'static str = "Wait (bounded, on the app's own events) until a window shows what you expect, then say so: expect is 1-8 predicates, all of which must hold — window {exists, bounds {x, y, width, height, tolerance_px}} or element {selector {role, label_contains}, exists: true, enabled, selected, value_equals}. Each comes back satisfied, unsatisfied or unknown (the tree could not be read whole); status (and satisfied: true) says satisfied only when all held over stable_samples reads in a row; unknown never means success. Use it after an action to check its effect instead of trusting `effect`.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract {
        idempotent: false,
        ..Contract::reads(
            Risk::R2,
            &[
                "state.verify",
                "state.verify.window",
                "state.verify.element",
                "state.observe.visual_evidence",
            ],
        )
    };

    fn check(a: &VerifyStateArgs) -> Result<(), ToolError> {
        if a.expect.is_empty() || a.expect.len() > 8 {
            return Err(ToolError::invalid(format!(
                "`expect`: 1 to 8 predicates, got {}",
                a.expect.len()
            )));
        }
        for (i, e) in a.expect.iter().enumerate() {
            if e.window.is_some() == e.element.is_some() {
                return Err(ToolError::invalid(format!(
                    "`expect[{i}]`: give exactly one of `window` or `element`"
                )));
            }
            if let Some(el) = &e.element {
                if el.exists == Some(false) {
                    return Err(ToolError::invalid(format!(
                        "`expect[{i}].element.exists`: only true (ask for absence with a window predicate, or another element)"
                    )));
                }
            }
            if let Some(b) = e.window.as_ref().and_then(|w| w.bounds.as_ref()) {
                let t = b.tolerance_px.unwrap_or(0.0);
                if !(0.0..=100.0).contains(&t) {
                    return Err(ToolError::invalid(format!(
                        "`expect[{i}].window.bounds.tolerance_px`: 0 to 100, got {t}"
                    )));
                }
            }
        }
        if a.timeout_ms.is_some_and(|t| t > MAX_TIMEOUT_MS) {
            return Err(ToolError::invalid(format!(
                "`timeout_ms`: at most {MAX_TIMEOUT_MS}"
            )));
        }
        if a.stable_samples.is_some_and(|s| !(1..=5).contains(&s)) {
            return Err(ToolError::invalid("`stable_samples`: 1 to 5"));
        }
        Ok(())
    }

    async fn run(&self, ctx: &ToolContext, a: VerifyStateArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let deadline = Instant::now() + Duration::from_millis(a.timeout_ms.unwrap_or(5000));
        let needed = a.stable_samples.unwrap_or(2);
        let started = Instant::now();
        let (mut in_a_row, mut samples) = (0, 0);
        let verdicts = loop {
            let read_at = Instant::now();
            let verdicts = sample(p, a.pid, a.window_id, &a.expect).await?;
            samples += 1;
            let all = verdicts.iter().all(|(v, _)| *v == Verdict::Satisfied);
            in_a_row = if all { in_a_row + 1 } else { 0 };
            if in_a_row >= needed || Instant::now() >= deadline {
                break verdicts;
            }
            // Read again once the app shows something new (bounded); a satisfied state
            // is read again shortly, to see that it holds.
            let until = if all {
                (read_at + STABLE_WAIT).min(deadline)
            } else {
                deadline
            };
            crate::platform::event_after(p, a.pid, read_at, until).await;
        };
        let satisfied = in_a_row >= needed;
        // cua-driver's overall status: unknown when nothing failed outright but something
        // could not be read; a satisfied state that did not hold long enough is unknown too.
        let any = |want: Verdict| verdicts.iter().any(|(v, _)| *v == want);
        let status = if satisfied {
            "satisfied"
        } else if any(Verdict::Unsatisfied) {
            "unsatisfied"
        } else {
            "unknown"
        };
        let predicates: Vec<Value> = verdicts
            .iter()
            .enumerate()
            .map(|(i, (v, detail))| {
                let unknown_reason = match v {
                    Verdict::Unknown if in_a_row > 0 => Some("stability_unproven"),
                    Verdict::Unknown => Some("observation_unavailable"),
                    _ => None,
                };
                json!({ "index": i, "status": v.as_str(), "detail": detail,
                        "unknown_reason": unknown_reason, "observed_json": detail })
            })
            .collect();
        let mut summary = format!(
            "{} after {samples} read{}",
            if satisfied {
                "satisfied"
            } else {
                "not satisfied"
            },
            if samples == 1 { "" } else { "s" }
        );
        for (i, (v, detail)) in verdicts.iter().enumerate() {
            summary.push_str(&format!("\n[{i}] {}: {detail}", v.as_str()));
        }
        let mut image = None;
        if a.include_screenshot == Some(true) {
            if let Ok(capture) = p.capture_window(a.window_id).await {
                image = Some(ImageBlock {
                    mime: "image/png",
                    data: super::capture::encode_png(&capture)?,
                });
            }
        }
        Ok(ToolOutput {
            summary,
            structured: json!({
                "status": status,
                "stable": satisfied,
                "elapsed_ms": started.elapsed().as_millis() as u64,
                "satisfied": satisfied,
                "predicates": predicates,
                "samples": samples,
                "pid": a.pid,
                "window_id": a.window_id,
            }),
            image,
        })
    }
}

/// One read of the window and each predicate's verdict on it.
async fn sample(
    p: &dyn Platform,
    pid: u32,
    window_id: u64,
    expect: &[Expectation],
) -> Result<Vec<(Verdict, String)>, ToolError> {
    let window = p
        .list_windows()
        .await?
        .windows
        .into_iter()
        .find(|w| w.window_id == window_id && w.pid == Some(pid));
    let needs_tree = expect.iter().any(|e| e.element.is_some());
    let tree = match (&window, needs_tree) {
        (Some(w), true) => Some(p.accessibility_tree(pid, w).await),
        _ => None,
    };
    Ok(expect
        .iter()
        .map(|e| match (&e.window, &e.element) {
            (Some(w), _) => window_verdict(w, window.as_ref()),
            (_, Some(el)) => match (&window, &tree) {
                (None, _) => (
                    Verdict::Unsatisfied,
                    format!("window {window_id} of pid {pid} is gone"),
                ),
                (_, Some(Ok(tree))) => element_verdict(el, tree),
                (_, Some(Err(e))) => (Verdict::Unknown, format!("the tree could not be read: {e}")),
                (_, None) => (Verdict::Unknown, "no tree read".into()),
            },
            (None, None) => (Verdict::Unknown, "empty predicate".into()),
        })
        .collect())
}

fn window_verdict(w: &WindowExpectation, window: Option<&WindowInfo>) -> (Verdict, String) {
    let exists = w.exists.unwrap_or(true);
    match (exists, window) {
        (false, None) => (Verdict::Satisfied, "the window is gone".into()),
        (false, Some(_)) => (Verdict::Unsatisfied, "the window is still there".into()),
        (true, None) => (Verdict::Unsatisfied, "the window is not there".into()),
        (true, Some(win)) => match &w.bounds {
            None => (Verdict::Satisfied, "the window is there".into()),
            Some(b) => {
                let t = b.tolerance_px.unwrap_or(0.0);
                let r = win.bounds;
                let off = [
                    (r.x as f64 - b.x).abs(),
                    (r.y as f64 - b.y).abs(),
                    (r.width as f64 - b.width).abs(),
                    (r.height as f64 - b.height).abs(),
                ];
                let shown = format!("{}x{}+{}+{}", r.width, r.height, r.x, r.y);
                if off.iter().all(|d| *d <= t) {
                    (Verdict::Satisfied, format!("bounds {shown}"))
                } else {
                    (Verdict::Unsatisfied, format!("bounds are {shown}"))
                }
            }
        },
    }
}

/// What a reader calls a node: get_window_state's `label` of it.
fn label_of(tree: &AxTree, i: usize) -> String {
    crate::snapshot::label_of(tree, i).unwrap_or_default()
}

fn element_verdict(e: &ElementExpectation, tree: &AxTree) -> (Verdict, String) {
    let role = e.selector.role.as_deref().map(role_key);
    let needle = e.selector.label_contains.as_deref().map(str::to_lowercase);
    let matches: Vec<usize> = (0..tree.nodes.len())
        .filter(|&i| {
            role.as_ref()
                .is_none_or(|r| role_key(&tree.nodes[i].role) == *r)
        })
        .filter(|&i| {
            needle
                .as_ref()
                .is_none_or(|n| label_of(tree, i).to_lowercase().contains(n))
        })
        .collect();
    let wanted = describe_selector(&e.selector);
    if matches.is_empty() {
        // A tree read with a warning may be partial: absence is then not known.
        return match &tree.warning {
            Some(w) => (
                Verdict::Unknown,
                format!("no {wanted} in a partial tree ({w})"),
            ),
            None => (Verdict::Unsatisfied, format!("no {wanted}")),
        };
    }
    let has = |i: usize, states: &[&str]| {
        tree.nodes[i]
            .states
            .iter()
            .any(|s| states.contains(&s.as_str()))
    };
    let states_hold = |i: usize| {
        e.enabled
            .is_none_or(|want| has(i, &["enabled", "sensitive"]) == want)
            && e.selected
                .is_none_or(|want| has(i, &["selected", "checked"]) == want)
    };
    let holds = |i: usize| {
        states_hold(i)
            && e.value_equals
                .as_ref()
                .is_none_or(|v| tree.nodes[i].value.as_deref() == Some(v.as_str()))
    };
    match matches.iter().find(|&&i| holds(i)) {
        Some(&i) => (
            Verdict::Satisfied,
            format!("{} {:?}", tree.nodes[i].role, label_of(tree, i)),
        ),
        None => {
            let i = matches[0];
            let n = &tree.nodes[i];
            if e.value_equals.is_some() && n.value_unknown && states_hold(i) {
                return (
                    Verdict::Unknown,
                    format!(
                        "{} {:?}: its toolkit does not expose its value",
                        n.role,
                        label_of(tree, i)
                    ),
                );
            }
            (
                Verdict::Unsatisfied,
                format!(
                    "{} {:?} reads value {:?}, states [{}]",
                    n.role,
                    label_of(tree, i),
                    n.value,
                    n.states.join(", ")
                ),
            )
        }
    }
}

fn describe_selector(s: &Selector) -> String {
    match (&s.role, &s.label_contains) {
        (Some(r), Some(l)) => format!("{r} labelled like {l:?}"),
        (Some(r), None) => r.clone(),
        (None, Some(l)) => format!("element labelled like {l:?}"),
        (None, None) => "element".into(),
    }
}
