//! The input tools: click, double_click, right_click, drag, scroll, type_text, press_key,
//! hotkey, set_value, move_cursor.
//!
//! Addressing: `element_index` + `window_id` resolves against the last get_window_state
//! snapshot and acts through the accessibility API (background-safe); `x, y` are
//! window-local screenshot pixels. In background mode a pixel click on an element is run
//! as that element's action; elsewhere synthetic events go to the window only.
//! `delivery_mode: foreground` activates the window and uses real input, then restores.
//!
//! Every action returns `path` (the route that ran), `verified`, `effect`
//! (confirmed | unverifiable | suspected_noop) and, when a background attempt did not
//! land, `escalation {recommended, reason}`. `settle_ms` waits, bounded, for the effect.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::cursor::{Gesture, on_screen, point_at};
use super::{ToolContext, ToolOutput, ToolSpec, window_of};
use crate::errors::ToolError;
use crate::keys::{Combo, Modifier, char_keysym, check_text, parse_key, parse_modifiers};
use crate::platform::{
    AxNode, Delivery, ElementReading, InputEvent, Platform, PlatformError, TextEdit, WindowInfo,
};

const MAX_SETTLE_MS: u64 = 10_000;
/// type_text's `delay_ms` between keys, at most.
const MAX_TYPE_DELAY_MS: u64 = 200;
const POLL: Duration = Duration::from_millis(20);
/// Action names tried, in order, when a click names none.
const CLICK_ACTIONS: &[&str] = &[
    "click",
    "press",
    "activate",
    "toggle",
    // Chromium and Firefox name a check box's action for what it will do.
    "check",
    "uncheck",
    "jump",
    "open",
    "select",
    "expand or contract",
    // Chromium's generic action on list items and other web nodes.
    "dodefault",
];
const DOUBLE_CLICK_ACTIONS: &[&str] = &["activate", "open"];
const MENU_ACTIONS: &[&str] = &[
    "showmenu",
    "menu",
    "showcontextmenu",
    "menu.popup",
    "popup",
    "context menu",
];
const TOGGLE_ROLES: &[&str] = &[
    "check_box",
    "toggle_button",
    "radio_button",
    "check_menu_item",
    "radio_menu_item",
    "switch",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    Left,
    Middle,
    Right,
}

impl MouseButton {
    fn number(self) -> u8 {
        match self {
            MouseButton::Left => 1,
            MouseButton::Middle => 2,
            MouseButton::Right => 3,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScrollUnit {
    Line,
    Page,
}

// ---------------------------------------------------------------------------------------
// Outcome: what every action returns.

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Effect {
    Confirmed,
    Unverifiable,
    SuspectedNoop,
}

impl Effect {
    fn as_str(self) -> &'static str {
        match self {
            Effect::Confirmed => "confirmed",
            Effect::Unverifiable => "unverifiable",
            Effect::SuspectedNoop => "suspected_noop",
        }
    }
}

struct Outcome {
    what: String,
    path: &'static str,
    effect: Effect,
    escalation: Option<(&'static str, String)>,
    fields: serde_json::Map<String, Value>,
}

impl Outcome {
    fn new(what: impl Into<String>, path: &'static str) -> Self {
        Outcome {
            what: what.into(),
            path,
            effect: Effect::Unverifiable,
            escalation: None,
            fields: Default::default(),
        }
    }

    fn with(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.to_string(), value);
        self
    }

    fn into_output(self, pid: Option<u32>, window: Option<&WindowInfo>) -> ToolOutput {
        let result = ActionResult {
            path: self.path,
            verified: self.effect == Effect::Confirmed,
            effect: self.effect,
            pid,
            window_id: window.map(|w| w.window_id),
            escalation: self
                .escalation
                .as_ref()
                .map(|(recommended, reason)| Escalation {
                    recommended,
                    reason: reason.clone(),
                }),
            details: self.fields,
        };
        let s = serde_json::to_value(&result).unwrap_or_default();
        let mut summary = format!(
            "{} via {}: effect {}",
            self.what,
            self.path,
            self.effect.as_str()
        );
        if let Some((recommended, reason)) = &self.escalation {
            summary.push_str(&format!(" (escalate to {recommended}: {reason})"));
        }
        ToolOutput::new(summary, s)
    }
}

/// What every action returns: the one source of its structured result and of the output
/// schema the MCP server declares for it.
#[derive(serde::Serialize, JsonSchema)]
pub struct ActionResult {
    /// The route that ran.
    path: &'static str,
    /// `effect` is `confirmed`.
    verified: bool,
    effect: Effect,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window_id: Option<u64>,
    /// A background attempt did not land: what to try instead, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    escalation: Option<Escalation>,
    /// What this action adds: `click_point`, `element`, `end_point`...
    #[serde(flatten)]
    details: serde_json::Map<String, Value>,
}

#[derive(serde::Serialize, JsonSchema)]
struct Escalation {
    recommended: &'static str,
    reason: String,
}

/// What would show that an action landed.
enum Expect {
    /// A state (checked) of this element differs from `before`.
    StateChange {
        handle: String,
        state: &'static str,
        before: bool,
    },
    /// The element's text contains this.
    TextContains { handle: String, text: String },
    /// The element's text is exactly this.
    TextIs { handle: String, text: String },
    /// The element's numeric value is this.
    ValueIs { handle: String, value: f64 },
    /// The option is chosen: the combo box shows it as its name. A box whose name is none
    /// of its options (a web page's `<select>` keeps its label) is read through the option
    /// that says it is selected; where the name is an option, it is the truth (Qt's popup
    /// list marks an option selected without changing the box).
    OptionChosen {
        handle: String,
        name: String,
        options: Vec<String>,
    },
    /// Something in the window's tree changed (a fingerprint taken before the action).
    WindowChange {
        pid: u32,
        window: WindowInfo,
        before: u64,
    },
    /// Nothing to read back.
    Nothing,
}

impl Expect {
    /// How long to read the effect back: an element's own change (a state, its text, its
    /// value or name) is what the action implies, so it gets at least [`READ_BACK_MS`]
    /// (returning as soon as it shows); a window-wide change keeps the caller's wait.
    fn read_back_ms(&self, settle_ms: u64) -> u64 {
        match self {
            Expect::WindowChange { .. } | Expect::Nothing => settle_ms,
            _ => settle_ms.max(READ_BACK_MS),
        }
    }
}

async fn met(platform: &dyn Platform, expect: &Expect) -> bool {
    match expect {
        Expect::StateChange {
            handle,
            state,
            before,
        } => platform
            .read_element(handle)
            .await
            .is_ok_and(|r| r.states.iter().any(|s| s == state) != *before),
        Expect::TextContains { handle, text } => platform
            .read_element(handle)
            .await
            .is_ok_and(|r| r.text.is_some_and(|t| t.contains(text.as_str()))),
        Expect::TextIs { handle, text } => platform
            .read_element(handle)
            .await
            .is_ok_and(|r| r.text.as_deref() == Some(text.as_str())),
        Expect::ValueIs { handle, value } => platform.read_element(handle).await.is_ok_and(|r| {
            r.value
                .is_some_and(|v| (v - value).abs() < 1e-6 * value.abs().max(1.0))
        }),
        Expect::OptionChosen {
            handle,
            name,
            options,
        } => {
            let Ok(shown) = platform.read_element(handle).await.map(|r| r.name) else {
                return false;
            };
            if shown.eq_ignore_ascii_case(name) {
                return true;
            }
            !options.iter().any(|o| o.eq_ignore_ascii_case(&shown))
                && platform
                    .selected_options(handle)
                    .await
                    .is_ok_and(|o| o.len() == 1 && o[0].eq_ignore_ascii_case(name))
        }
        Expect::WindowChange {
            pid,
            window,
            before,
        } => fingerprint(platform, *pid, window)
            .await
            .is_some_and(|f| f != *before),
        Expect::Nothing => false,
    }
}

/// A hash of everything a person could see change in the window's tree.
async fn fingerprint(platform: &dyn Platform, pid: u32, window: &WindowInfo) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let tree = platform.accessibility_tree(pid, window).await.ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for n in &tree.nodes {
        (&n.role, &n.name, &n.value, &n.states).hash(&mut h);
    }
    Some(h.finish())
}

/// Reads the effect back: once right away, or polling until `settle_ms` runs out.
async fn settle(
    platform: &dyn Platform,
    expect: &Expect,
    settle_ms: u64,
    outcome: &mut Outcome,
    escalate_to: &'static str,
) {
    if matches!(expect, Expect::Nothing)
        || (settle_ms == 0 && matches!(expect, Expect::WindowChange { .. }))
    {
        outcome.effect = Effect::Unverifiable;
        return;
    }
    let deadline = Instant::now() + Duration::from_millis(settle_ms);
    loop {
        if met(platform, expect).await {
            outcome.effect = Effect::Confirmed;
            return;
        }
        if settle_ms == 0 {
            outcome.effect = Effect::Unverifiable;
            return;
        }
        if Instant::now() >= deadline {
            outcome.effect = Effect::SuspectedNoop;
            if outcome.escalation.is_none() && outcome.path != "xtest_fg" {
                outcome.escalation = Some((
                    escalate_to,
                    format!("no effect was read back within {settle_ms} ms"),
                ));
            }
            return;
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn expect_window_change(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    settle_ms: u64,
) -> Expect {
    if settle_ms == 0 {
        return Expect::Nothing;
    }
    match fingerprint(platform, pid, window).await {
        Some(before) => Expect::WindowChange {
            pid,
            window: window.clone(),
            before,
        },
        None => Expect::Nothing,
    }
}

/// How long an action whose implied change is known (a toggled state, the typed text, a
/// value) waits for it before calling it a no-op. Returns as soon as the change shows; a
/// browser's tree follows its page asynchronously, and on a loaded 2-core machine 500 ms
/// was seen to be too short for Chromium's text.
const READ_BACK_MS: u64 = 1000;

/// Reads the element live before acting on it, and refuses it if it must not be acted on
/// now: it is gone, disabled, or no longer shown (a closed menu's item, a page switched
/// away). Such an action is refused, never retried by pixel. The reading it returns is the
/// element's state just before the action (a toggle's expectation starts from it).
async fn live_element(platform: &dyn Platform, node: &AxNode) -> Result<ElementReading, ToolError> {
    let live = platform
        .read_element(&node.handle)
        .await
        .ok()
        .filter(|r| !r.states.iter().any(|s| s == "defunct"));
    let Some(live) = live else {
        return Err(ToolError::failed(format!(
            "{} is gone from the app; call get_window_state again",
            describe(node)
        )));
    };
    let has = |s: &str| live.states.iter().any(|x| x == s);
    let had = |s: &str| node.states.iter().any(|x| x == s);
    if (had("showing") && !has("showing")) || (had("visible") && !has("visible")) {
        return Err(ToolError::Refused(format!(
            "{} is no longer showing (its menu, popup or page closed since the snapshot); call get_window_state again",
            describe(node)
        )));
    }
    if has("visible") && !has("sensitive") && !has("enabled") {
        return Err(ToolError::Refused(format!(
            "{} is disabled (not sensitive): a person could not operate it either",
            describe(node)
        )));
    }
    Ok(live)
}

/// Adds the element's value after the action (its text, or its number) to the result.
/// A plain click on a check box, radio or toggle button: it implies the checked state flips.
fn is_toggle_click(node: &AxNode, kind: ClickKind) -> bool {
    kind == ClickKind::Click && TOGGLE_ROLES.contains(&node.role.as_str())
}

fn is_checked(states: &[String]) -> bool {
    states.iter().any(|s| s == "checked")
}

/// The checked state must flip from what it is now (`live`, read just before the action:
/// the snapshot may be old).
fn toggle_expectation(node: &AxNode, live: &ElementReading) -> Expect {
    Expect::StateChange {
        handle: node.handle.clone(),
        state: "checked",
        before: is_checked(&live.states),
    }
}

/// Adds the toggle's checked state after the click: the flipped one when the read-back
/// confirmed the flip (no second read), else what the element reads now.
async fn with_checked(p: &dyn Platform, outcome: Outcome, expect: &Expect) -> Outcome {
    let Expect::StateChange { handle, before, .. } = expect else {
        return outcome;
    };
    if outcome.effect == Effect::Confirmed {
        return outcome.with("checked", json!(!before));
    }
    match p.read_element(handle).await {
        Ok(e) => outcome.with("checked", json!(is_checked(&e.states))),
        Err(_) => outcome,
    }
}

/// GTK 4 (4.8) entries take text through EditableText but read back as empty through
/// Text: an insert that reads back as nothing there is not a no-op cua can name, and
/// repeating it in the foreground would type it twice. It is reported unverifiable, with
/// no escalation.
async fn blind_text(
    p: &dyn Platform,
    pid: u32,
    node: &AxNode,
    before_empty: bool,
    mut outcome: Outcome,
) -> Outcome {
    if outcome.effect != Effect::SuspectedNoop || !before_empty {
        return outcome;
    }
    let after_empty = p
        .read_element(&node.handle)
        .await
        .ok()
        .and_then(|r| r.text)
        .is_none_or(|t| t.is_empty());
    let gtk4 = p.toolkit(pid).await.is_some_and(|t| t.starts_with("GTK 4"));
    if after_empty && gtk4 {
        outcome.effect = Effect::Unverifiable;
        outcome.escalation = None;
        outcome = outcome.with(
            "note",
            json!("GTK 4 entries do not expose their text: the insert was accepted, its result cannot be read back"),
        );
    }
    outcome
}

/// Firefox sets a web number input through the Value interface, and a `<select>`'s option
/// through Selection, without firing the page's `input` / `change` events, so the page's
/// own script never learns of it (the conformance fixture's journal showed nothing).
/// There the value is typed in with keys instead, as a person would.
const SILENT_VALUE_TOOLKITS: &[&str] = &["Gecko"];
const SILENT_VALUE_NOTE: &str = "this toolkit changes a value set through the accessibility API without telling the page's scripts; the value was entered with key events instead";

async fn value_set_is_silent(p: &dyn Platform, pid: u32) -> bool {
    p.toolkit(pid)
        .await
        .is_some_and(|t| SILENT_VALUE_TOOLKITS.iter().any(|s| t.starts_with(s)))
}

/// Roles whose value is the option chosen among their children.
const CHOICE_ROLES: &[&str] = &[
    "combo_box",
    "list",
    "list_box",
    "table",
    "tree_table",
    "tree",
    "page_tab_list",
    "menu",
];

/// The element's value after the action: its number, its text, or for a combo box or
/// list the selected option. Text made only of U+FFFC (the placeholder for embedded
/// objects, what a web `<select>` reports) is no value.
async fn with_new_value(platform: &dyn Platform, outcome: Outcome, node: &AxNode) -> Outcome {
    let Ok(r) = platform.read_element(&node.handle).await else {
        return outcome;
    };
    let text = r
        .text
        .filter(|t| !t.chars().all(|c| c == '\u{fffc}' || c.is_whitespace()));
    match (r.value, text) {
        (Some(v), _) => outcome.with("value", json!(v)),
        (None, Some(t)) => outcome.with("value", json!(t)),
        (None, None) if CHOICE_ROLES.contains(&node.role.as_str()) => {
            // The option the box shows as its name is the truth where it shows one (Qt
            // marks a popup row selected without choosing it).
            let options = platform
                .option_names(&node.handle)
                .await
                .unwrap_or_default();
            if options.contains(&r.name) {
                return outcome.with("value", json!(r.name));
            }
            match platform.selected_options(&node.handle).await {
                Ok(chosen) if chosen.len() == 1 => outcome.with("value", json!(chosen[0])),
                _ => outcome,
            }
        }
        (None, None) => outcome,
    }
}

// ---------------------------------------------------------------------------------------
// Addressing.

/// The target an action resolved to.
enum Target {
    Element {
        window: WindowInfo,
        index: usize,
        node: Box<AxNode>,
        /// The snapshot the index was resolved in (a concurrent get_window_state may have
        /// replaced the window's latest one since).
        snapshot: std::sync::Arc<super::Snapshot>,
    },
    Pixel {
        window: WindowInfo,
        x: i32,
        y: i32,
    },
    Window {
        window: WindowInfo,
    },
}

impl Target {
    fn window(&self) -> &WindowInfo {
        match self {
            Target::Element { window, .. }
            | Target::Pixel { window, .. }
            | Target::Window { window } => window,
        }
    }
}

/// Checks that need no desktop: exclusive and paired arguments.
fn check_addressing(
    element_index: Option<usize>,
    window_id: Option<u64>,
    x: Option<f64>,
    y: Option<f64>,
) -> Result<(), ToolError> {
    if element_index.is_some() && (x.is_some() || y.is_some()) {
        return Err(ToolError::invalid(
            "give either `element_index` or `x`/`y`, not both",
        ));
    }
    match (x, y) {
        (Some(_), None) => return Err(ToolError::invalid("`y`: missing (x and y go together)")),
        (None, Some(_)) => return Err(ToolError::invalid("`x`: missing (x and y go together)")),
        _ => {}
    }
    for (name, v) in [("x", x), ("y", y)] {
        if let Some(v) = v {
            if !v.is_finite() || v < 0.0 {
                return Err(ToolError::invalid(format!(
                    "`{name}`: must be a non-negative number, got {v}"
                )));
            }
        }
    }
    if element_index.is_some() && window_id.is_none() {
        return Err(ToolError::invalid(
            "`window_id`: required with `element_index` (indices belong to one window's snapshot)",
        ));
    }
    Ok(())
}

fn check_settle(settle_ms: Option<u64>) -> Result<u64, ToolError> {
    let s = settle_ms.unwrap_or(0);
    if s > MAX_SETTLE_MS {
        return Err(ToolError::invalid(format!(
            "`settle_ms`: at most {MAX_SETTLE_MS}, got {s}"
        )));
    }
    Ok(s)
}

/// The pid's window: the given one (checked to belong to it), else its frontmost on-screen one.
async fn target_window(
    platform: &dyn Platform,
    pid: u32,
    window_id: Option<u64>,
) -> Result<WindowInfo, ToolError> {
    if let Some(id) = window_id {
        return window_of(platform, Some(pid), id).await;
    }
    platform
        .list_windows()
        .await?
        .windows
        .into_iter()
        .filter(|w| w.pid == Some(pid) && w.is_on_screen)
        .max_by_key(|w| w.z_index)
        .ok_or_else(|| {
            ToolError::failed(format!(
                "pid {pid} has no window on screen (run list_windows)"
            ))
        })
}

/// An element index, and the snapshot it was read from when the caller says.
#[derive(Clone, Copy)]
struct ElementRef<'a> {
    index: usize,
    snapshot_id: Option<&'a str>,
}

/// The element an action's `element_index` and `snapshot_id` name (a snapshot id alone is
/// a mistake).
fn element_ref(
    index: Option<usize>,
    snapshot_id: Option<&str>,
) -> Result<Option<ElementRef<'_>>, ToolError> {
    match (index, snapshot_id) {
        (None, Some(_)) => Err(ToolError::invalid(
            "`snapshot_id`: only goes with `element_index` (it says which snapshot the index is from)",
        )),
        (index, snapshot_id) => Ok(index.map(|index| ElementRef { index, snapshot_id })),
    }
}

/// Why there is no snapshot to take an index from: the window was read under another pid
/// (a pid/window mix-up), or not read at all in this process.
fn no_snapshot(ctx: &ToolContext, pid: u32, window_id: u64) -> ToolError {
    let keys = ctx.snapshot_keys();
    if let Some((owner, _)) = keys.iter().find(|(_, w)| *w == window_id) {
        return ToolError::invalid(format!(
            "`pid`: window {window_id} was read with pid {owner}, not {pid}; pass the pid that owns the window (list_windows shows it)"
        ));
    }
    let read: Vec<String> = keys
        .iter()
        .filter(|(p, _)| *p == pid)
        .map(|(_, w)| w.to_string())
        .collect();
    if !read.is_empty() {
        return ToolError::invalid(format!(
            "`window_id`: window {window_id} of pid {pid} was never read; this session read its window(s) {} (call get_window_state on the one you mean)",
            read.join(", ")
        ));
    }
    ToolError::invalid(format!(
        "`element_index`: no snapshot of pid {pid} window {window_id}; call get_window_state first (element indices live in one process: from the CLI, run `cua serve` so calls share them)"
    ))
}

/// The node an index names: in the snapshot the caller named, else in the window's
/// latest one. Also says whether that snapshot is older than the window's latest, and
/// gives the snapshot itself.
fn snapshot_element(
    ctx: &ToolContext,
    pid: u32,
    window_id: u64,
    element: ElementRef<'_>,
) -> Result<(AxNode, bool, std::sync::Arc<super::Snapshot>), ToolError> {
    let latest = ctx.snapshot(pid, window_id);
    let snap = match element.snapshot_id {
        None => latest
            .clone()
            .ok_or_else(|| no_snapshot(ctx, pid, window_id))?,
        Some(id) => {
            let snap = ctx.snapshot_by_id(id).ok_or_else(|| {
                ToolError::invalid(format!(
                    "`snapshot_id`: {id} is not one of the last {} snapshots this session took; call get_window_state again",
                    super::RECENT_SNAPSHOTS
                ))
            })?;
            if (snap.pid, snap.window_id) != (pid, window_id) {
                return Err(ToolError::invalid(format!(
                    "`snapshot_id`: {id} is a snapshot of pid {} window {}, not of pid {pid} window {window_id}",
                    snap.pid, snap.window_id
                )));
            }
            snap
        }
    };
    let index = element.index;
    let node = snap
        .elements
        .get(index)
        .map(|n| snap.tree.nodes[*n].clone())
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "`element_index`: {index} is out of range (snapshot {} has {} elements, 0-{})",
                snap.snapshot_id,
                snap.elements.len(),
                snap.elements.len().saturating_sub(1)
            ))
        })?;
    let older = latest.is_some_and(|l| l.snapshot_id != snap.snapshot_id);
    Ok((node, older, snap))
}

/// Refuses an element read from an older snapshot that is gone or reads differently now:
/// the index was the caller's, the element may not be.
async fn still_the_same(
    p: &dyn Platform,
    node: &AxNode,
    element: ElementRef<'_>,
) -> Result<(), ToolError> {
    let id = element.snapshot_id.unwrap_or_default();
    let index = element.index;
    // A destroyed GTK 3 widget's object still answers: no name, not visible.
    let gone = |now: &ElementReading| {
        now.states.iter().any(|s| s == "defunct") || !now.states.iter().any(|s| s == "visible")
    };
    match p.read_element(&node.handle).await {
        Ok(now) if !gone(&now) && now.name != node.name => Err(ToolError::failed(format!(
            "element {index} of snapshot {id} ({}) now reads {:?}; call get_window_state again",
            describe(node),
            now.name
        ))),
        Ok(now) if !gone(&now) => Ok(()),
        _ => Err(ToolError::failed(format!(
            "element {index} of snapshot {id} ({}) is gone from the window; call get_window_state again",
            describe(node)
        ))),
    }
}

async fn resolve(
    ctx: &ToolContext,
    platform: &dyn Platform,
    pid: u32,
    window_id: Option<u64>,
    element: Option<ElementRef<'_>>,
    x: Option<f64>,
    y: Option<f64>,
) -> Result<Target, ToolError> {
    if let Some(element) = element {
        let window_id = window_id.expect("checked by check_addressing");
        let (node, older, snapshot) = snapshot_element(ctx, pid, window_id, element)?;
        let window = window_of(platform, Some(pid), window_id).await?;
        if older {
            still_the_same(platform, &node, element).await?;
        }
        return Ok(Target::Element {
            window,
            index: element.index,
            node: Box::new(node),
            snapshot,
        });
    }
    let window = target_window(platform, pid, window_id).await?;
    if let (Some(x), Some(y)) = (x, y) {
        // x, y are in the screenshot's pixels, which max_image_dimension may have scaled.
        let scale = screenshot_scale(ctx, &window);
        let (w, h) = (
            window.bounds.width as f64 * scale,
            window.bounds.height as f64 * scale,
        );
        if x >= w || y >= h {
            return Err(ToolError::invalid(format!(
                "({x}, {y}) is outside the window's {}x{} screenshot",
                w.round(),
                h.round()
            )));
        }
        return Ok(Target::Pixel {
            window,
            x: (x / scale) as i32,
            y: (y / scale) as i32,
        });
    }
    Ok(Target::Window { window })
}

/// The factor between the window's screenshot (as get_window_state returns it) and the
/// window itself.
fn screenshot_scale(ctx: &ToolContext, window: &WindowInfo) -> f64 {
    ctx.image_scale(
        window.bounds.width.max(0) as u32,
        window.bounds.height.max(0) as u32,
        None,
    )
}

/// The window's last snapshot tree (what the caller saw), or a fresh walk when there is none.
async fn tree_for(
    ctx: &ToolContext,
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> Result<crate::platform::AxTree, PlatformError> {
    match ctx.snapshot(pid, window.window_id) {
        Some(s) => Ok(s.tree.clone()),
        None => platform.accessibility_tree(pid, window).await,
    }
}

/// The smallest node whose frame holds a window-local point (actionable ones only, if asked).
fn node_at(tree: &crate::platform::AxTree, x: i32, y: i32, actionable_only: bool) -> Option<usize> {
    (0..tree.nodes.len())
        .filter(|i| !actionable_only || tree.nodes[*i].actionable)
        .filter(|i| tree.nodes[*i].frame.is_some_and(|f| f.contains(x, y)))
        .min_by_key(|i| {
            tree.nodes[*i]
                .frame
                .map(|f| f.width as i64 * f.height as i64)
                .unwrap_or(i64::MAX)
        })
}

/// The smallest actionable element under a window-local point.
async fn element_at(
    ctx: &ToolContext,
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    x: i32,
    y: i32,
) -> Option<AxNode> {
    let mut tree = tree_for(ctx, platform, pid, window).await.ok()?;
    let i = node_at(&tree, x, y, true)?;
    Some(tree.nodes.swap_remove(i))
}

fn element_json(index: Option<usize>, n: &AxNode) -> Value {
    json!({ "index": index, "role": n.role, "name": n.name, "frame": n.frame })
}

fn describe(n: &AxNode) -> String {
    if n.name.is_empty() {
        n.role.clone()
    } else {
        format!("{} \"{}\"", n.role, n.name)
    }
}

fn pick_action(
    node: &AxNode,
    requested: Option<&str>,
    preferred: &[&str],
) -> Result<Option<String>, ToolError> {
    if let Some(a) = requested {
        return node
            .actions
            .iter()
            .find(|n| n.eq_ignore_ascii_case(a))
            .cloned()
            .map(Some)
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "`action`: {} has no action `{a}` (it has: {})",
                    describe(node),
                    if node.actions.is_empty() {
                        "none".into()
                    } else {
                        node.actions.join(", ")
                    }
                ))
            });
    }
    Ok(preferred.iter().find_map(|p| {
        node.actions
            .iter()
            .find(|a| a.eq_ignore_ascii_case(p))
            .cloned()
    }))
}

/// The route name of raw input events in this delivery mode.
fn event_path(mode: Delivery) -> &'static str {
    match mode {
        Delivery::Foreground => "xtest_fg",
        Delivery::Background => "x11_event",
    }
}

fn delivery(mode: Option<Delivery>) -> Delivery {
    mode.unwrap_or(Delivery::Background)
}

/// What a background (synthetic, XSendEvent) input consists of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Synthetic {
    /// Pointer events to this window.
    Pointer(u64),
    Keys,
}

/// Why a toolkit ignores synthetic events of that kind, if it does; measured in
/// tests/toolkits.rs (whose matrix fails when a route that does nothing is not called out,
/// and when one that worked was) and tests/foreground.rs:
/// - GTK 4 reads keys and pointer through XInput2 and ignores both.
/// - GTK 3 (with the core device events `launch_app` asks for) takes synthetic keys, and
///   synthetic pointer events only while the real pointer is over its window: with the
///   pointer elsewhere a background click at a point with no element, a drag or a wheel
///   scroll did nothing. `pointer_over` is asked only then (an X round trip per window
///   level under the pointer).
/// - Qt, Chromium and Firefox take both, wherever the pointer is.
///
/// `toolkit` is the app's AT-SPI toolkit name and version: "gtk 3.24.38" (GTK 3 spells it
/// in lower case), "GTK 4.8.3", "Qt 5.15.8", "Chromium 1.0", "Gecko 153.7.0".
async fn ignores_synthetic(
    toolkit: &str,
    kind: Synthetic,
    pointer_over: impl std::future::Future<Output = bool>,
) -> Option<&'static str> {
    let toolkit = toolkit.to_ascii_lowercase();
    let gtk = |major: &str| toolkit.starts_with(&format!("gtk {major}."));
    match kind {
        Synthetic::Keys if gtk("4") => Some("ignores synthetic key events (it reads XInput2)"),
        Synthetic::Pointer(_) if gtk("4") => {
            Some("ignores synthetic pointer events (it reads XInput2)")
        }
        Synthetic::Pointer(_) if gtk("3") && !pointer_over.await => {
            Some("ignores synthetic pointer events while the real pointer is not over its window")
        }
        _ => None,
    }
}

/// The escalation a background input of `kind` needs on this app: foreground, when its
/// toolkit ignores synthetic events of that kind; none for other toolkits and for apps
/// with no accessibility at all (X clients that read core events).
async fn synthetic_caveat(
    platform: &dyn Platform,
    pid: u32,
    kind: Synthetic,
) -> Option<(&'static str, String)> {
    let toolkit = platform.toolkit(pid).await?;
    let pointer_over = async {
        match kind {
            Synthetic::Pointer(window) => platform.pointer_over(window).await,
            Synthetic::Keys => false,
        }
    };
    let why = ignores_synthetic(&toolkit, kind, pointer_over).await?;
    Some((
        "foreground",
        format!("{toolkit} {why}; address an element, or use delivery_mode foreground"),
    ))
}

fn mods_down(mods: &[Modifier]) -> Vec<InputEvent> {
    mods.iter()
        .map(|m| InputEvent::Key {
            keysym: m.keysym(),
            down: true,
        })
        .collect()
}

fn mods_up(mods: &[Modifier]) -> Vec<InputEvent> {
    mods.iter()
        .rev()
        .map(|m| InputEvent::Key {
            keysym: m.keysym(),
            down: false,
        })
        .collect()
}

/// How long a click holds its button down, as a person's does: GTK 4 dropped half the
/// foreground clicks on a check box whose press and release reached it together (xdotool
/// with no delay between them did the same; with 12 ms, none).
const BUTTON_HOLD: Duration = Duration::from_millis(30);

fn click_events(x: i32, y: i32, button: u8, count: u8, mods: &[Modifier]) -> Vec<InputEvent> {
    let mut ev = vec![InputEvent::Move { x, y }];
    ev.extend(mods_down(mods));
    for i in 0..count {
        if i > 0 {
            ev.push(InputEvent::Pause(Duration::from_millis(60)));
        }
        ev.push(InputEvent::Button {
            x,
            y,
            button,
            down: true,
        });
        ev.push(InputEvent::Pause(BUTTON_HOLD));
        ev.push(InputEvent::Button {
            x,
            y,
            button,
            down: false,
        });
    }
    ev.extend(mods_up(mods));
    ev
}

// ---------------------------------------------------------------------------------------
// The click family.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClickKind {
    Click,
    Double,
    Right,
}

struct ClickRequest {
    kind: ClickKind,
    pid: u32,
    window_id: Option<u64>,
    element_index: Option<usize>,
    snapshot_id: Option<String>,
    x: Option<f64>,
    y: Option<f64>,
    action: Option<String>,
    count: u8,
    modifier: Vec<String>,
    button: u8,
    delivery_mode: Option<Delivery>,
    settle_ms: Option<u64>,
}

async fn run_click(ctx: &ToolContext, r: ClickRequest) -> Result<ToolOutput, ToolError> {
    check_addressing(r.element_index, r.window_id, r.x, r.y)?;
    let settle_ms = check_settle(r.settle_ms)?;
    let mods = parse_modifiers(&r.modifier, "modifier")?;
    if !(1..=3).contains(&r.count) {
        return Err(ToolError::invalid(format!(
            "`count`: must be 1, 2 or 3, got {}",
            r.count
        )));
    }
    if r.action.is_some() && r.element_index.is_none() {
        return Err(ToolError::invalid("`action`: only with `element_index`"));
    }
    if r.element_index.is_none() && r.x.is_none() {
        return Err(ToolError::invalid(
            "give `element_index` (with `window_id`) or `x` and `y`",
        ));
    }
    let platform = ctx.platform().await?;
    let p = platform.as_ref();
    let element = element_ref(r.element_index, r.snapshot_id.as_deref())?;
    let target = resolve(ctx, p, r.pid, r.window_id, element, r.x, r.y).await?;
    let mode = delivery(r.delivery_mode);
    let preferred: &[&str] = match r.kind {
        ClickKind::Click => CLICK_ACTIONS,
        ClickKind::Double => DOUBLE_CLICK_ACTIONS,
        ClickKind::Right => MENU_ACTIONS,
    };
    let verb = match r.kind {
        ClickKind::Click => "clicked",
        ClickKind::Double => "double-clicked",
        ClickKind::Right => "right-clicked",
    };

    // Background with no modifiers: act on the element (given, or under the pixel).
    let act_on_element = mode == Delivery::Background
        && mods.is_empty()
        && (r.button == 1 || r.kind == ClickKind::Right);
    let (element, index) = match &target {
        Target::Element { node, index, .. } => (Some(AxNode::clone(node)), Some(*index)),
        Target::Pixel { window, x, y } if act_on_element => {
            (element_at(ctx, p, r.pid, window, *x, *y).await, None)
        }
        _ => (None, None),
    };
    let window = target.window().clone();
    let live = match &element {
        Some(node) => Some(live_element(p, node).await?),
        None => None,
    };
    if act_on_element {
        if let Some(node) = &element {
            let requested = if index.is_some() {
                r.action.as_deref()
            } else {
                None
            };
            if let Some(action) = pick_action(node, requested, preferred)? {
                let toggled = is_toggle_click(node, r.kind);
                let expect = match &live {
                    Some(live) if toggled => toggle_expectation(node, live),
                    _ => expect_window_change(p, r.pid, &window, settle_ms).await,
                };
                let times = if r.kind == ClickKind::Click {
                    r.count
                } else {
                    1
                };
                let point = match &target {
                    Target::Pixel { x, y, .. } => Some((*x, *y)),
                    _ => node.frame.map(|f| f.center()),
                };
                let pointing = match point {
                    Some(at) => {
                        Some(point_at(ctx, p, on_screen(&window, at), Gesture::Click).await)
                    }
                    None => None,
                };
                for _ in 0..times {
                    p.do_action(&node.handle, &action)
                        .await
                        .map_err(ToolError::from)?;
                }
                let mut outcome =
                    Outcome::new(format!("{verb} {}", describe(node)), "atspi_action")
                        .with("action", json!(action))
                        .with("element", element_json(index, node));
                if let Some(f) = node.frame {
                    let (cx, cy) = f.center();
                    outcome = outcome.with("click_point", json!({ "x": cx, "y": cy }));
                }
                if let Target::Pixel { x, y, .. } = target {
                    outcome = outcome
                        .with("click_point", json!({ "x": x, "y": y }))
                        .with("resolved_from_pixel", json!(true));
                }
                settle(
                    p,
                    &expect,
                    expect.read_back_ms(settle_ms),
                    &mut outcome,
                    "px",
                )
                .await;
                if toggled {
                    outcome = with_checked(p, outcome, &expect).await;
                }
                if let Some(pointing) = pointing {
                    pointing.landed(ctx, platform.clone()).await;
                }
                return Ok(outcome.into_output(Some(r.pid), Some(&window)));
            }
        }
    }

    // Pixel route: at the given point, or at the element's centre.
    let (x, y) = match &target {
        Target::Pixel { x, y, .. } => (*x, *y),
        Target::Element { node, .. } => node.frame.map(|f| f.center()).ok_or_else(|| {
            ToolError::failed(format!(
                "{} has no action for this and no frame on screen to click",
                describe(node)
            ))
        })?,
        Target::Window { .. } => unreachable!("checked above"),
    };
    let button = if r.kind == ClickKind::Right {
        3
    } else {
        r.button
    };
    let count = if r.kind == ClickKind::Double {
        2
    } else {
        r.count
    };
    // A toggle clicked by pointer (GTK 4 check boxes expose no action) implies its
    // checked state flips, read back like the action route's.
    let toggled = element.as_ref().filter(|n| is_toggle_click(n, r.kind));
    let expect = match (toggled, &live) {
        (Some(node), Some(live)) => toggle_expectation(node, live),
        _ => expect_window_change(p, r.pid, &window, settle_ms).await,
    };
    let pointing = point_at(ctx, p, on_screen(&window, (x, y)), Gesture::Click).await;
    p.send_input(&window, &click_events(x, y, button, count, &mods), mode)
        .await?;
    let path = event_path(mode);
    let mut outcome = Outcome::new(format!("{verb} at ({x}, {y})"), path)
        .with("click_point", json!({ "x": x, "y": y }));
    if let Some(node) = &element {
        outcome = outcome.with("element", element_json(index, node));
    }
    if mode == Delivery::Background {
        outcome.escalation = synthetic_caveat(p, r.pid, Synthetic::Pointer(window.window_id)).await;
    }
    settle(
        p,
        &expect,
        expect.read_back_ms(settle_ms),
        &mut outcome,
        "foreground",
    )
    .await;
    if toggled.is_some() {
        outcome = with_checked(p, outcome, &expect).await;
    }
    pointing.landed(ctx, platform.clone()).await;
    Ok(outcome.into_output(Some(r.pid), Some(&window)))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    /// Target process id.
    pub pid: u32,
    /// Window of element_index (required with it) or of x/y (default: the pid's frontmost).
    pub window_id: Option<u64>,
    /// Element index from the last get_window_state of (pid, window_id): acts through the accessibility API.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// X in window-local screenshot pixels (with y).
    pub x: Option<f64>,
    /// Y in window-local screenshot pixels (with x).
    pub y: Option<f64>,
    /// Accessibility action to run (element_index only), e.g. toggle. Default: the element's primary one.
    pub action: Option<String>,
    /// Clicks: 1-3 (pixel route). Default 1.
    #[schemars(range(min = 1, max = 3))]
    pub count: Option<u8>,
    /// Modifiers held during the click: cmd/super, ctrl, shift, alt/option (pixel route).
    pub modifier: Option<Vec<String>>,
    /// Mouse button (pixel route). Default left.
    pub button: Option<MouseButton>,
    /// background (default): never changes focus, stacking or the pointer; foreground: real input, then restores.
    pub delivery_mode: Option<Delivery>,
    /// Wait up to this many milliseconds for the effect to show before returning. Default 0 (read back once).
    pub settle_ms: Option<u64>,
}

pub struct Click;

#[async_trait]
impl ToolSpec for Click {
    type Args = ClickArgs;
    const NAME: &'static str = "click";
    const DESCRIPTION: &'static str = "Click an element or a point. element_index + window_id runs the element's accessibility action (press/click/activate/toggle, or `action`): no pointer move, no focus change. x, y (window-local pixels) + pid: in background a point on an actionable element runs its action, elsewhere synthetic button events go to the window; foreground clicks with the real pointer, then restores. Returns path, verified, effect and escalation.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: ClickArgs) -> Result<ToolOutput, ToolError> {
        run_click(
            ctx,
            ClickRequest {
                kind: ClickKind::Click,
                pid: a.pid,
                window_id: a.window_id,
                element_index: a.element_index,
                snapshot_id: a.snapshot_id,
                x: a.x,
                y: a.y,
                action: a.action,
                count: a.count.unwrap_or(1),
                modifier: a.modifier.unwrap_or_default(),
                button: a.button.unwrap_or(MouseButton::Left).number(),
                delivery_mode: a.delivery_mode,
                settle_ms: a.settle_ms,
            },
        )
        .await
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoubleClickArgs {
    /// Target process id.
    pub pid: u32,
    /// Window of the element_index or pixel coordinates.
    pub window_id: Option<u64>,
    /// Runs the element's activate/open action when it has one, else double-clicks its centre.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// X in window-local screenshot pixels (with y).
    pub x: Option<f64>,
    /// Y in window-local screenshot pixels (with x).
    pub y: Option<f64>,
    /// Modifiers held (pixel route): cmd/super, ctrl, shift, alt/option.
    pub modifier: Option<Vec<String>>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct DoubleClick;

#[async_trait]
impl ToolSpec for DoubleClick {
    type Args = DoubleClickArgs;
    const NAME: &'static str = "double_click";
    const DESCRIPTION: &'static str = "Double-click an element (its activate/open action when it has one, else a double click at its centre) or a window-local point.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: DoubleClickArgs) -> Result<ToolOutput, ToolError> {
        run_click(
            ctx,
            ClickRequest {
                kind: ClickKind::Double,
                pid: a.pid,
                window_id: a.window_id,
                element_index: a.element_index,
                snapshot_id: a.snapshot_id,
                x: a.x,
                y: a.y,
                action: None,
                count: 2,
                modifier: a.modifier.unwrap_or_default(),
                button: 1,
                delivery_mode: a.delivery_mode,
                settle_ms: a.settle_ms,
            },
        )
        .await
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RightClickArgs {
    /// Target process id.
    pub pid: u32,
    /// Window of the element_index or pixel coordinates.
    pub window_id: Option<u64>,
    /// Runs the element's context-menu action when it has one, else right-clicks its centre.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// X in window-local screenshot pixels (with y).
    pub x: Option<f64>,
    /// Y in window-local screenshot pixels (with x).
    pub y: Option<f64>,
    /// Accessibility action to run instead of the menu action (element_index only).
    pub action: Option<String>,
    /// Modifiers held (pixel route).
    pub modifier: Option<Vec<String>>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct RightClick;

#[async_trait]
impl ToolSpec for RightClick {
    type Args = RightClickArgs;
    const NAME: &'static str = "right_click";
    const DESCRIPTION: &'static str = "Right-click an element (its context-menu action, or `action`) or a window-local point (button 3).";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: RightClickArgs) -> Result<ToolOutput, ToolError> {
        run_click(
            ctx,
            ClickRequest {
                kind: ClickKind::Right,
                pid: a.pid,
                window_id: a.window_id,
                element_index: a.element_index,
                snapshot_id: a.snapshot_id,
                x: a.x,
                y: a.y,
                action: a.action,
                count: 1,
                modifier: a.modifier.unwrap_or_default(),
                button: 3,
                delivery_mode: a.delivery_mode,
                settle_ms: a.settle_ms,
            },
        )
        .await
    }
}

// ---------------------------------------------------------------------------------------
// Keyboard: type_text, press_key, hotkey.

/// The focused editable element of a window, if its tree reports one.
async fn focused_editable(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> Option<AxNode> {
    let tree = platform.accessibility_tree(pid, window).await.ok()?;
    tree.nodes.into_iter().find(|n| {
        n.states.iter().any(|s| s == "focused") && n.states.iter().any(|s| s == "editable")
    })
}

fn is_editable(n: &AxNode) -> bool {
    n.states.iter().any(|s| s == "editable")
}

/// Roles that take typed text even when they do not say `editable` (terminals read keys).
const TEXT_ROLES: &[&str] = &["entry", "text", "password_text", "terminal", "spin_button"];

/// Whether typing into this element means something.
fn takes_text(n: &AxNode) -> bool {
    is_editable(n) || TEXT_ROLES.contains(&n.role.as_str())
}

/// The text an insert leaves, when the text before was read whole (not cut at the
/// snapshot's length limit): `before` with the edit's span replaced by `typed`.
fn spliced(before: &str, edit: TextEdit, typed: &str) -> Option<String> {
    let chars: Vec<char> = before.chars().collect();
    if chars.len() >= crate::platform::MAX_TEXT_CHARS || edit.offset + edit.replaced > chars.len() {
        return None;
    }
    let mut out: String = chars[..edit.offset].iter().collect();
    out.push_str(typed);
    out.extend(&chars[edit.offset + edit.replaced..]);
    Some(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeTextArgs {
    /// Target process id.
    pub pid: u32,
    /// Text to insert (at most 100,000 characters; 10,000 when typed key by key); newlines and tabs are allowed, other control characters are refused.
    pub text: String,
    /// Window of the element_index or pixel coordinates; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// Editable element from the last get_window_state: the text is inserted at its caret through the accessibility API.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// Type into the element at this window-local point (with y).
    pub x: Option<f64>,
    /// Type into the element at this window-local point (with x).
    pub y: Option<f64>,
    /// Milliseconds between characters when typing key by key (0-200). Default 30.
    pub delay_ms: Option<u64>,
    /// Send the text as key events to whatever has focus, even with no editable element targeted (terminals, canvases). Default false: that is an error.
    pub as_keys: Option<bool>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct TypeText;

#[async_trait]
impl ToolSpec for TypeText {
    type Args = TypeTextArgs;
    const NAME: &'static str = "type_text";
    const DESCRIPTION: &'static str = "Insert text (any Unicode) at the caret of an editable element (element_index, the one at x/y, or the focused one) through the accessibility API, else as key events. Special keys belong to press_key / hotkey.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    fn check(a: &TypeTextArgs) -> Result<(), ToolError> {
        check_addressing(a.element_index, a.window_id, a.x, a.y)?;
        check_text(&a.text, "text")?;
        check_settle(a.settle_ms)?;
        match a.delay_ms {
            Some(ms) if ms > MAX_TYPE_DELAY_MS => Err(ToolError::invalid(format!(
                "`delay_ms`: at most {MAX_TYPE_DELAY_MS}, got {ms}"
            ))),
            _ => Ok(()),
        }
    }

    async fn run(&self, ctx: &ToolContext, a: TypeTextArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let settle_ms = check_settle(a.settle_ms)?;
        let delay_ms = a.delay_ms.unwrap_or(30);
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let element = element_ref(a.element_index, a.snapshot_id.as_deref())?;
        let target = resolve(ctx, p, a.pid, a.window_id, element, a.x, a.y).await?;
        let window = target.window().clone();
        let mode = delivery(a.delivery_mode);
        let (element, index) = match &target {
            Target::Element { node, index, .. } => (Some(AxNode::clone(node)), Some(*index)),
            Target::Pixel { x, y, .. } => (
                element_at(ctx, p, a.pid, &window, *x, *y)
                    .await
                    .filter(is_editable),
                None,
            ),
            Target::Window { .. } => (focused_editable(p, a.pid, &window).await, None),
        };
        let as_keys = a.as_keys.unwrap_or(false);
        // Typing needs somewhere to go: an editable element, or key events asked for.
        match &element {
            Some(node) if !takes_text(node) && !as_keys => {
                return Err(ToolError::failed(format!(
                    "{} is not editable; address a text field, or pass as_keys: true to send key events to it anyway",
                    describe(node)
                )));
            }
            None if !as_keys => {
                return Err(ToolError::failed(match target {
                    Target::Pixel { x, y, .. } => format!(
                        "nothing editable at ({x}, {y}) in window {}; address a text field, or pass as_keys: true to send key events there anyway",
                        window.window_id
                    ),
                    _ => format!(
                        "nothing editable has the keyboard focus in window {}; give the element_index of a text field, or pass as_keys: true to send key events to the window anyway",
                        window.window_id
                    ),
                }));
            }
            _ => {}
        }
        // The live reading's text is the field's text before typing.
        let text_before = match &element {
            Some(node) => live_element(p, node).await?.text,
            None => None,
        };
        let chars = a.text.chars().count();
        if mode == Delivery::Background && !as_keys {
            if let Some(node) = &element {
                let before = text_before;
                let before_empty = before.as_deref().is_none_or(str::is_empty);
                match p.insert_text(&node.handle, &a.text).await {
                    Ok(edit) => {
                        let what = if edit.replaced > 0 {
                            format!(
                                "typed {chars} characters into {} over a selection of {}",
                                describe(node),
                                edit.replaced
                            )
                        } else {
                            format!("typed {chars} characters into {}", describe(node))
                        };
                        let mut outcome = Outcome::new(what, "atspi_text")
                            .with("element", element_json(index, node))
                            .with("replaced_chars", json!(edit.replaced));
                        let expect = match before.as_deref().and_then(|b| spliced(b, edit, &a.text))
                        {
                            Some(text) => Expect::TextIs {
                                handle: node.handle.clone(),
                                text,
                            },
                            None => Expect::TextContains {
                                handle: node.handle.clone(),
                                text: a.text.clone(),
                            },
                        };
                        let wait = expect.read_back_ms(settle_ms);
                        settle(p, &expect, wait, &mut outcome, "foreground").await;
                        outcome = blind_text(p, a.pid, node, before_empty, outcome).await;
                        if outcome.effect == Effect::SuspectedNoop {
                            let retyped = KeysInto {
                                pid: a.pid,
                                window: &window,
                                node,
                                index,
                                text: &a.text,
                                delay_ms,
                                settle_ms,
                            };
                            if let Some(o) = retyped.after_ignored_insert(p, &before).await? {
                                outcome = o;
                            }
                        }
                        outcome = with_new_value(p, outcome, node).await;
                        return Ok(outcome.into_output(Some(a.pid), Some(&window)));
                    }
                    Err(PlatformError::Unsupported(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        if chars > crate::keys::MAX_KEYED_CHARS {
            return Err(ToolError::invalid(format!(
                "`text`: {chars} characters is too many to type key by key (at most {}); insert it through element_index on an element with editable text",
                crate::keys::MAX_KEYED_CHARS
            )));
        }
        // Key by key, to whatever has the window's keyboard focus: an addressed element
        // takes it first (an element without the text interface, such as a Chromium
        // input), so the keys land there and not on whatever had it.
        let mut events = Vec::new();
        if let Target::Pixel { x, y, .. } = target {
            events.extend(click_events(x, y, 1, 1, &[]));
        }
        if let (Target::Element { .. }, Some(node)) = (&target, &element) {
            if mode == Delivery::Background && !focus_unless_focused(p, node).await {
                return Err(ToolError::failed(format!(
                    "{} would not take the keyboard focus, so no key was sent (the keys would have gone elsewhere); click it first, or use delivery_mode foreground",
                    describe(node)
                )));
            }
        }
        events.extend(text_key_events(&a.text, delay_ms));
        let expect = match &element {
            Some(node) => Expect::TextContains {
                handle: node.handle.clone(),
                text: a.text.clone(),
            },
            None => expect_window_change(p, a.pid, &window, settle_ms).await,
        };
        let settle_ms = expect.read_back_ms(settle_ms);
        p.send_input(&window, &events, mode).await?;
        let path = event_path(mode);
        let mut outcome = Outcome::new(format!("typed {chars} characters as key events"), path);
        if let Some(node) = &element {
            outcome = outcome.with("element", element_json(index, node));
        }
        if mode == Delivery::Background {
            outcome.escalation = synthetic_caveat(p, a.pid, Synthetic::Keys).await;
        }
        settle(p, &expect, settle_ms, &mut outcome, "foreground").await;
        Ok(outcome.into_output(Some(a.pid), Some(&window)))
    }
}

/// How long keys wait for an element that was asked to take the focus to say it has it
/// (Chromium moves the focus in its renderer, a moment after answering).
const FOCUS_WAIT: Duration = Duration::from_millis(1000);

/// Gives `node` the keyboard focus when a live read says it does not have it (asking only
/// then: GTK 3 raises the window of an element that grabs the focus), and waits (bounded)
/// until it says it has it, so that keys sent next land there. Says whether it has it.
async fn focus_unless_focused(p: &dyn Platform, node: &AxNode) -> bool {
    let focused = || async {
        p.read_element(&node.handle)
            .await
            .is_ok_and(|r| r.states.iter().any(|s| s == "focused"))
    };
    if focused().await {
        return true;
    }
    if p.focus_element(&node.handle).await.is_err() {
        return false;
    }
    let deadline = Instant::now() + FOCUS_WAIT;
    loop {
        if focused().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The key presses that type `text`, with `delay_ms` between characters.
fn text_key_events(text: &str, delay_ms: u64) -> Vec<InputEvent> {
    let mut events = Vec::new();
    for c in text.chars() {
        let keysym = char_keysym(c);
        events.push(InputEvent::Key { keysym, down: true });
        events.push(InputEvent::Key {
            keysym,
            down: false,
        });
        if delay_ms > 0 {
            events.push(InputEvent::Pause(Duration::from_millis(delay_ms)));
        }
    }
    events
}

/// A text typed key by key into one element, after its app ignored the text interface.
struct KeysInto<'a> {
    pid: u32,
    window: &'a WindowInfo,
    node: &'a AxNode,
    index: Option<usize>,
    text: &'a str,
    delay_ms: u64,
    settle_ms: u64,
}

impl KeysInto<'_> {
    /// Some apps take an EditableText insert, answer true and change nothing (Firefox's
    /// web content does). When the element's text is exactly what it was before the
    /// insert, nothing was typed, so typing again cannot double it: the element takes the
    /// focus and the text goes in as key events, still background (synthetic events to
    /// that window only). GTK 4 ignores synthetic keys, so it keeps its escalation.
    async fn after_ignored_insert(
        &self,
        p: &dyn Platform,
        before: &Option<String>,
    ) -> Result<Option<Outcome>, ToolError> {
        let now = p
            .read_element(&self.node.handle)
            .await
            .ok()
            .and_then(|r| r.text);
        let gtk4 = p
            .toolkit(self.pid)
            .await
            .is_some_and(|t| t.starts_with("GTK 4"));
        if before.is_none() || now != *before || gtk4 {
            return Ok(None);
        }
        if !focus_unless_focused(p, self.node).await {
            return Ok(None);
        }
        p.send_input(
            self.window,
            &text_key_events(self.text, self.delay_ms),
            Delivery::Background,
        )
        .await?;
        let mut outcome = Outcome::new(
            format!(
                "typed {} characters into {} as key events (the app ignored the accessibility insert)",
                self.text.chars().count(),
                describe(self.node)
            ),
            event_path(Delivery::Background),
        )
        .with("element", element_json(self.index, self.node))
        .with(
            "note",
            json!("the app answered the accessibility text insert without changing the text; the element was focused and the text typed as key events"),
        );
        let expect = Expect::TextContains {
            handle: self.node.handle.clone(),
            text: self.text.to_string(),
        };
        settle(
            p,
            &expect,
            expect.read_back_ms(self.settle_ms),
            &mut outcome,
            "foreground",
        )
        .await;
        Ok(Some(outcome))
    }
}

/// Sends one key combination to a window (optionally at an element / point first).
#[allow(clippy::too_many_arguments)]
async fn send_combo(
    ctx: &ToolContext,
    pid: u32,
    window_id: Option<u64>,
    element: Option<ElementRef<'_>>,
    x: Option<f64>,
    y: Option<f64>,
    mods: &[Modifier],
    keysym: u32,
    label: String,
    mode: Delivery,
    settle_ms: u64,
) -> Result<ToolOutput, ToolError> {
    let platform = ctx.platform().await?;
    let p = platform.as_ref();
    let target = resolve(ctx, p, pid, window_id, element, x, y).await?;
    let window = target.window().clone();
    let mut events = Vec::new();
    let mut element = None;
    match &target {
        // Focus an editable element that does not have focus by clicking into it; other
        // elements are not clicked (that could press them).
        Target::Element { node, index, .. } => {
            if is_editable(node) && !node.states.iter().any(|s| s == "focused") {
                if let Some((cx, cy)) = node.frame.map(|f| f.center()) {
                    events.extend(click_events(cx, cy, 1, 1, &[]));
                }
            }
            element = Some((AxNode::clone(node), Some(*index)));
        }
        Target::Pixel { x, y, .. } => events.extend(click_events(*x, *y, 1, 1, &[])),
        Target::Window { .. } => {}
    }
    if mode == Delivery::Background {
        if let Some(out) =
            combo_as_widget_action(p, pid, &window, &target, mods, keysym, &label).await?
        {
            return Ok(out);
        }
    }
    events.extend(mods_down(mods));
    events.push(InputEvent::Key { keysym, down: true });
    events.push(InputEvent::Key {
        keysym,
        down: false,
    });
    events.extend(mods_up(mods));
    let expect = expect_window_change(p, pid, &window, settle_ms).await;
    p.send_input(&window, &events, mode).await?;
    let path = event_path(mode);
    let mut outcome = Outcome::new(format!("pressed {label}"), path).with("keys", json!(label));
    if let Some((node, index)) = &element {
        outcome = outcome.with("element", element_json(*index, node));
    }
    if mode == Delivery::Background {
        outcome.escalation = synthetic_caveat(p, pid, Synthetic::Keys).await;
    }
    settle(p, &expect, settle_ms, &mut outcome, "foreground").await;
    Ok(outcome.into_output(Some(pid), Some(&window)))
}

/// Runs a key combination as the widget action it stands for (`ctrl+a` →
/// `selection.select-all`) when the addressed element, or the window's focused one,
/// exports that action: the background route for toolkits that ignore synthetic keys.
async fn combo_as_widget_action(
    p: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    target: &Target,
    mods: &[Modifier],
    keysym: u32,
    label: &str,
) -> Result<Option<ToolOutput>, ToolError> {
    let Some(action) = crate::keys::widget_action(mods, keysym) else {
        return Ok(None);
    };
    let node = match target {
        Target::Element { node, .. } => Some(AxNode::clone(node)),
        Target::Window { .. } => p.accessibility_tree(pid, window).await.ok().and_then(|t| {
            t.nodes
                .into_iter()
                .find(|n| n.states.iter().any(|s| s == "focused"))
        }),
        Target::Pixel { .. } => None,
    };
    let Some(node) = node.filter(|n| n.actions.iter().any(|a| a == action)) else {
        return Ok(None);
    };
    p.do_action(&node.handle, action).await?;
    let outcome = Outcome::new(
        format!("pressed {label} as {action} on {}", describe(&node)),
        "atspi_action",
    )
    .with("keys", json!(label))
    .with("action", json!(action));
    Ok(Some(outcome.into_output(Some(pid), Some(window))))
}

fn combo_label(mods: &[Modifier], key: &str) -> String {
    let mut parts: Vec<String> = mods.iter().map(|m| m.name().to_string()).collect();
    parts.push(key.to_string());
    parts.join("+")
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PressKeyArgs {
    /// Target process id.
    pub pid: u32,
    /// Key: return, tab, escape, arrows (up…), space, delete (backspace), forwarddelete, home, end, pageup, pagedown, f1-f12, a letter, digit or X keysym name.
    pub key: String,
    /// Modifiers held while the key is pressed: cmd/super, ctrl, shift, alt/option.
    pub modifiers: Option<Vec<String>>,
    /// Window to deliver to; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// Element from the last get_window_state to deliver to (an editable element is focused first).
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// Click this window-local point first to focus what is there (with y).
    pub x: Option<f64>,
    /// Click this window-local point first (with x).
    pub y: Option<f64>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct PressKey;

#[async_trait]
impl ToolSpec for PressKey {
    type Args = PressKeyArgs;
    const NAME: &'static str = "press_key";
    const DESCRIPTION: &'static str = "Press and release one key (with optional modifiers), delivered to the window without activating it (background) or through the real keyboard (foreground).";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    fn check(a: &PressKeyArgs) -> Result<(), ToolError> {
        check_addressing(a.element_index, a.window_id, a.x, a.y)?;
        check_settle(a.settle_ms)?;
        Combo::from_parts(&a.key, a.modifiers.as_deref().unwrap_or_default()).map(|_| ())
    }

    async fn run(&self, ctx: &ToolContext, a: PressKeyArgs) -> Result<ToolOutput, ToolError> {
        check_addressing(a.element_index, a.window_id, a.x, a.y)?;
        let settle_ms = check_settle(a.settle_ms)?;
        let combo = Combo::from_parts(&a.key, &a.modifiers.unwrap_or_default())?;
        send_combo(
            ctx,
            a.pid,
            a.window_id,
            element_ref(a.element_index, a.snapshot_id.as_deref())?,
            a.x,
            a.y,
            &combo.mods,
            combo.keysym,
            combo_label(&combo.mods, &a.key),
            delivery(a.delivery_mode),
            settle_ms,
        )
        .await
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HotkeyArgs {
    /// Target process id.
    pub pid: u32,
    /// Modifiers first, then one key, e.g. ["ctrl", "a"].
    pub keys: Vec<String>,
    /// Window to deliver to; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct Hotkey;

#[async_trait]
impl ToolSpec for Hotkey {
    type Args = HotkeyArgs;
    const NAME: &'static str = "hotkey";
    const DESCRIPTION: &'static str = "Press a key combination, e.g. [\"ctrl\", \"a\"]: modifiers first, one non-modifier key last.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    fn check(a: &HotkeyArgs) -> Result<(), ToolError> {
        check_settle(a.settle_ms)?;
        Combo::from_keys(&a.keys).map(|_| ())
    }

    async fn run(&self, ctx: &ToolContext, a: HotkeyArgs) -> Result<ToolOutput, ToolError> {
        let settle_ms = check_settle(a.settle_ms)?;
        let combo = Combo::from_keys(&a.keys)?;
        let key = a.keys.last().map(String::as_str).unwrap_or_default();
        send_combo(
            ctx,
            a.pid,
            a.window_id,
            None,
            None,
            None,
            &combo.mods,
            combo.keysym,
            combo_label(&combo.mods, key),
            delivery(a.delivery_mode),
            settle_ms,
        )
        .await
    }
}

// ---------------------------------------------------------------------------------------
// set_value, scroll, drag, move_cursor.

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetValueArgs {
    /// Target process id.
    pub pid: u32,
    /// Window whose get_window_state produced element_index.
    pub window_id: u64,
    /// Element from the last get_window_state.
    pub element_index: usize,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// A number (sliders, spin buttons), an option's label (combo boxes, lists), or the text (text fields).
    pub value: String,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct SetValue;

#[async_trait]
impl ToolSpec for SetValue {
    type Args = SetValueArgs;
    const NAME: &'static str = "set_value";
    const DESCRIPTION: &'static str = "Set an element's value through the accessibility API, without opening popups or moving focus: the numeric value of sliders and spin buttons, the selected option of combo boxes and lists (by label, case-insensitive), or the whole text of a text field.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: SetValueArgs) -> Result<ToolOutput, ToolError> {
        let settle_ms = check_settle(a.settle_ms)?;
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let element = element_ref(Some(a.element_index), a.snapshot_id.as_deref())?;
        let target = resolve(ctx, p, a.pid, Some(a.window_id), element, None, None).await?;
        let Target::Element {
            window,
            node,
            index,
            ..
        } = target
        else {
            unreachable!()
        };
        live_element(p, &node).await?;
        let label = describe(&node);
        let base = |what: String, path| {
            Outcome::new(what, path).with("element", element_json(Some(index), &node))
        };

        let (mut outcome, expect) = if CHOICE_ROLES.contains(&node.role.as_str()) {
            let options = p.option_names(&node.handle).await?;
            let pos = options
                .iter()
                .position(|o| o.eq_ignore_ascii_case(a.value.trim()))
                .ok_or_else(|| {
                    ToolError::invalid(format!(
                        "`value`: {label} has no option `{}` (options: {})",
                        a.value,
                        options.join(", ")
                    ))
                })?;
            let chosen = options[pos].clone();
            let outcome = if node.role == "combo_box" && value_set_is_silent(p, a.pid).await {
                if !step_combo_with_keys(p, &window, &node, &options, pos).await? {
                    return Err(ToolError::failed(format!(
                        "{label} would not take the keyboard focus, so no key was sent to choose `{chosen}`"
                    )));
                }
                base(
                    format!("selected `{chosen}` in {label} with arrow keys"),
                    event_path(Delivery::Background),
                )
                .with("note", json!(SILENT_VALUE_NOTE))
            } else {
                p.select_option(&node.handle, pos).await?;
                base(format!("selected `{chosen}` in {label}"), "atspi_selection")
            };
            (
                outcome.with("option_index", json!(pos)),
                if node.role == "combo_box" {
                    Expect::OptionChosen {
                        handle: node.handle.clone(),
                        name: chosen,
                        options,
                    }
                } else {
                    expect_window_change(p, a.pid, &window, settle_ms.max(1)).await
                },
            )
        } else if let Ok(range) = p.value_range(&node.handle).await {
            let v: f64 = a.value.trim().parse().map_err(|_| {
                ToolError::invalid(format!(
                    "`value`: {label} takes a number, got `{}`",
                    a.value
                ))
            })?;
            if v < range.minimum || v > range.maximum {
                return Err(ToolError::invalid(format!(
                    "`value`: {v} is outside {label}'s range {}..{}",
                    range.minimum, range.maximum
                )));
            }
            let expect = Expect::ValueIs {
                handle: node.handle.clone(),
                value: v,
            };
            if is_editable(&node) && value_set_is_silent(p, a.pid).await {
                let typed = if v.fract() == 0.0 {
                    format!("{}", v as i64)
                } else {
                    v.to_string()
                };
                if !focus_unless_focused(p, &node).await {
                    return Err(ToolError::failed(format!(
                        "{label} would not take the keyboard focus, so no key was sent to type {typed}"
                    )));
                }
                let mut events = mods_down(&[Modifier::Ctrl]);
                events.push(InputEvent::Key {
                    keysym: char_keysym('a'),
                    down: true,
                });
                events.push(InputEvent::Key {
                    keysym: char_keysym('a'),
                    down: false,
                });
                events.extend(mods_up(&[Modifier::Ctrl]));
                events.extend(text_key_events(&typed, 0));
                p.send_input(&window, &events, Delivery::Background).await?;
                (
                    base(
                        format!("typed {typed} over the value of {label}"),
                        event_path(Delivery::Background),
                    )
                    .with("note", json!(SILENT_VALUE_NOTE)),
                    expect,
                )
            } else {
                p.set_value(&node.handle, v).await?;
                (base(format!("set {label} to {v}"), "atspi_value"), expect)
            }
        } else if is_editable(&node) {
            check_text(&a.value, "value")?;
            p.set_text(&node.handle, &a.value).await?;
            (
                base(format!("set the text of {label}"), "atspi_text"),
                Expect::TextIs {
                    handle: node.handle.clone(),
                    text: a.value.clone(),
                },
            )
        } else {
            return Err(ToolError::failed(format!(
                "{label} has no value to set (not a slider, spin button, combo box, list or text field)"
            )));
        };
        settle(
            p,
            &expect,
            expect.read_back_ms(settle_ms),
            &mut outcome,
            "px",
        )
        .await;
        // Qt's combo boxes take a selection in their popup list and keep showing the old
        // option: nothing was chosen, so stepping to it with keys cannot choose twice.
        if outcome.effect == Effect::SuspectedNoop
            && node.role == "combo_box"
            && outcome.path == "atspi_selection"
            && !takes_no_synthetic_keys(p, a.pid).await
        {
            if let Expect::OptionChosen { options, .. } = &expect {
                let pos = outcome.fields["option_index"].as_u64().unwrap_or(0) as usize;
                if step_combo_with_keys(p, &window, &node, options, pos).await? {
                    outcome.path = event_path(Delivery::Background);
                    outcome.escalation = None;
                    outcome = outcome.with("note", json!("the option was marked selected without being chosen; the combo box was stepped to it with arrow keys"));
                    let wait = expect.read_back_ms(settle_ms);
                    settle(p, &expect, wait, &mut outcome, "foreground").await;
                }
            }
        }
        outcome = with_new_value(p, outcome, &node).await;
        Ok(outcome.into_output(Some(a.pid), Some(&window)))
    }
}

/// Whether the app ignores synthetic key events (GTK 4 reads XInput2 only).
async fn takes_no_synthetic_keys(p: &dyn Platform, pid: u32) -> bool {
    synthetic_caveat(p, pid, Synthetic::Keys).await.is_some()
}

/// Chooses option `pos` of a closed combo box as a person's keys would: the box takes the
/// focus, then one arrow key per option between the one it shows and `pos` (each step tells
/// the app, as a `<select>`'s `change` events do). False, with nothing sent, when the box
/// would not take the focus.
async fn step_combo_with_keys(
    p: &dyn Platform,
    window: &WindowInfo,
    node: &AxNode,
    options: &[String],
    pos: usize,
) -> Result<bool, ToolError> {
    // The option shown: the box's name when it is one (Qt, GTK), else the option that
    // says it is selected (a web `<select>` keeps its label).
    let shown = p.read_element(&node.handle).await.ok().map(|r| r.name);
    let selected = p.selected_options(&node.handle).await.unwrap_or_default();
    let from = shown
        .and_then(|n| options.iter().position(|o| *o == n))
        .or_else(|| {
            selected
                .first()
                .and_then(|c| options.iter().position(|o| o == c))
        })
        .unwrap_or(0);
    let key = parse_key(if pos >= from { "Down" } else { "Up" }, "value")?;
    let mut events = Vec::new();
    for _ in 0..pos.abs_diff(from) {
        events.push(InputEvent::Key {
            keysym: key,
            down: true,
        });
        events.push(InputEvent::Key {
            keysym: key,
            down: false,
        });
    }
    // Arrow keys anywhere else would move something else: only into the focused box.
    if !focus_unless_focused(p, node).await {
        return Ok(false);
    }
    p.send_input(window, &events, Delivery::Background).await?;
    Ok(true)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollArgs {
    /// Target process id.
    pub pid: u32,
    /// up, down, left or right.
    pub direction: Direction,
    /// How many lines or pages (1-50). Default 3.
    pub amount: Option<u32>,
    /// line (default) or page.
    pub by: Option<ScrollUnit>,
    /// Window to scroll; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// Scrollable element (or one inside it): its scroll bar moves through the accessibility API.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// Scroll at this window-local point (with y).
    pub x: Option<f64>,
    /// Scroll at this window-local point (with x).
    pub y: Option<f64>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct Scroll;

/// The scroll bar that scrolls `node` in `direction`: itself, a descendant, or a sibling.
fn scroll_bar_for(
    tree: &crate::platform::AxTree,
    node_index: usize,
    vertical: bool,
) -> Option<usize> {
    let orientation = if vertical { "vertical" } else { "horizontal" };
    let is_bar = |i: usize| {
        let n = &tree.nodes[i];
        n.role == "scroll_bar"
            && (n.states.iter().any(|s| s == orientation)
                || !n
                    .states
                    .iter()
                    .any(|s| s == "vertical" || s == "horizontal"))
    };
    let mut scope = vec![node_index];
    let mut at = Some(node_index);
    for _ in 0..4 {
        let Some(i) = at else { break };
        // Breadth-first through this node's subtree.
        let mut queue = std::collections::VecDeque::from([i]);
        while let Some(k) = queue.pop_front() {
            if is_bar(k) {
                return Some(k);
            }
            queue.extend(tree.nodes[k].children.iter().copied());
        }
        at = tree.nodes[i].parent;
        scope.push(i);
    }
    None
}

#[async_trait]
impl ToolSpec for Scroll {
    type Args = ScrollArgs;
    const NAME: &'static str = "scroll";
    const DESCRIPTION: &'static str = "Scroll a view. With an element (element_index or at x/y) its scroll bar moves through the accessibility API, or its rows are scrolled into view (background-safe, verified); otherwise wheel events (line) or Page Up/Down (page) go to the window.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: ScrollArgs) -> Result<ToolOutput, ToolError> {
        check_addressing(a.element_index, a.window_id, a.x, a.y)?;
        let settle_ms = check_settle(a.settle_ms)?;
        let amount = a.amount.unwrap_or(3);
        if !(1..=50).contains(&amount) {
            return Err(ToolError::invalid(format!(
                "`amount`: must be 1-50, got {amount}"
            )));
        }
        let by = a.by.unwrap_or(ScrollUnit::Line);
        let mode = delivery(a.delivery_mode);
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let element = element_ref(a.element_index, a.snapshot_id.as_deref())?;
        let target = resolve(ctx, p, a.pid, a.window_id, element, a.x, a.y).await?;
        let window = target.window().clone();
        let vertical = matches!(a.direction, Direction::Up | Direction::Down);
        let sign = if matches!(a.direction, Direction::Up | Direction::Left) {
            -1.0
        } else {
            1.0
        };

        // The element's scroll bar, moved through its value.
        let tree_and_node = match &target {
            Target::Element {
                snapshot, index, ..
            } => Some((snapshot.tree.clone(), snapshot.elements[*index])),
            Target::Pixel { x, y, .. } => {
                let tree = tree_for(ctx, p, a.pid, &window).await?;
                node_at(&tree, *x, *y, false).map(|n| (tree, n))
            }
            Target::Window { .. } => None,
        };
        if mode == Delivery::Background {
            if let Some(bar) = tree_and_node
                .as_ref()
                .and_then(|(t, n)| scroll_bar_for(t, *n, vertical).map(|b| t.nodes[b].clone()))
            {
                if let Ok(range) = p.value_range(&bar.handle).await {
                    let span = (range.maximum - range.minimum).max(0.0);
                    let line = if range.step > 0.0 {
                        range.step
                    } else {
                        (span / 20.0).max(1.0)
                    };
                    let unit = if by == ScrollUnit::Page {
                        (span / 4.0).max(line)
                    } else {
                        line
                    };
                    let target_value = (range.current + sign * unit * amount as f64)
                        .clamp(range.minimum, range.maximum);
                    p.set_value(&bar.handle, target_value).await?;
                    let mut outcome = Outcome::new(
                        format!(
                            "scrolled {:?} {amount} {:?}s ({} → {target_value})",
                            a.direction, by, range.current
                        )
                        .to_lowercase(),
                        "atspi_value",
                    )
                    .with("scroll_bar", element_json(None, &bar))
                    .with("value", json!(target_value));
                    let expect = Expect::ValueIs {
                        handle: bar.handle.clone(),
                        value: target_value,
                    };
                    if target_value == range.current {
                        outcome.effect = Effect::SuspectedNoop;
                        outcome.what.push_str(" (already at the end)");
                    } else {
                        let wait = expect.read_back_ms(settle_ms);
                        settle(p, &expect, wait, &mut outcome, "foreground").await;
                    }
                    return Ok(outcome.into_output(Some(a.pid), Some(&window)));
                }
            }
        }
        // No scroll bar: rows of the view are scrolled into view (web lists, whose
        // scroll bars are not in the tree). Lines count as rows here.
        if let (Delivery::Background, true, Target::Element { node, .. }) =
            (mode, vertical, &target)
        {
            let rows = if by == ScrollUnit::Page {
                amount * 4
            } else {
                amount
            } as usize;
            match p.reveal_sibling(&node.handle, sign > 0.0, rows).await {
                Ok(Some(row)) => {
                    let mut outcome = Outcome::new(
                        format!("scrolled {:?} {rows} rows into view", a.direction).to_lowercase(),
                        "atspi_scroll_to",
                    );
                    let expect = Expect::StateChange {
                        handle: row,
                        state: "showing",
                        before: false,
                    };
                    let wait = expect.read_back_ms(settle_ms);
                    settle(p, &expect, wait, &mut outcome, "foreground").await;
                    return Ok(outcome.into_output(Some(a.pid), Some(&window)));
                }
                Ok(None) => {
                    let mut outcome = Outcome::new(
                        format!(
                            "no rows to scroll {:?}: the view is at its end",
                            a.direction
                        )
                        .to_lowercase(),
                        "atspi_scroll_to",
                    );
                    outcome.effect = Effect::SuspectedNoop;
                    return Ok(outcome.into_output(Some(a.pid), Some(&window)));
                }
                Err(_) => {}
            }
        }
        // Wheel or page keys at a point.
        let (x, y) = match (&target, &tree_and_node) {
            (Target::Pixel { x, y, .. }, _) => (*x, *y),
            (_, Some((t, n))) if t.nodes[*n].frame.is_some() => t.nodes[*n].frame.unwrap().center(),
            _ => (window.bounds.width / 2, window.bounds.height / 2),
        };
        let mut events = vec![InputEvent::Move { x, y }];
        for _ in 0..amount {
            match by {
                ScrollUnit::Line => {
                    let button = match a.direction {
                        Direction::Up => 4,
                        Direction::Down => 5,
                        Direction::Left => 6,
                        Direction::Right => 7,
                    };
                    events.push(InputEvent::Button {
                        x,
                        y,
                        button,
                        down: true,
                    });
                    events.push(InputEvent::Button {
                        x,
                        y,
                        button,
                        down: false,
                    });
                }
                ScrollUnit::Page => {
                    let keysym = if sign < 0.0 { 0xff55 } else { 0xff56 };
                    events.push(InputEvent::Key { keysym, down: true });
                    events.push(InputEvent::Key {
                        keysym,
                        down: false,
                    });
                }
            }
        }
        // A scroll shows in the tree (other rows showing), so it is always read back: a
        // toolkit that ignores synthetic wheel events (Qt) is then named, not guessed.
        let wait = settle_ms.max(READ_BACK_MS);
        let expect = expect_window_change(p, a.pid, &window, wait).await;
        let pointing = point_at(ctx, p, on_screen(&window, (x, y)), Gesture::Move).await;
        p.send_input(&window, &events, mode).await?;
        let path = event_path(mode);
        let mut outcome = Outcome::new(
            format!(
                "scrolled {:?} {amount} {:?}s at ({x}, {y})",
                a.direction, by
            )
            .to_lowercase(),
            path,
        );
        if mode == Delivery::Background {
            outcome.escalation =
                synthetic_caveat(p, a.pid, Synthetic::Pointer(window.window_id)).await;
        }
        settle(p, &expect, wait, &mut outcome, "foreground").await;
        pointing.landed(ctx, platform.clone()).await;
        Ok(outcome.into_output(Some(a.pid), Some(&window)))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragArgs {
    /// Target process id.
    pub pid: u32,
    /// Drag start, window-local screenshot pixels.
    pub from_x: f64,
    /// Drag start, window-local screenshot pixels.
    pub from_y: f64,
    /// Drag end, window-local screenshot pixels.
    pub to_x: f64,
    /// Drag end, window-local screenshot pixels.
    pub to_y: f64,
    /// Time between press and release in milliseconds (0-10000). Default 500.
    pub duration_ms: Option<u64>,
    /// Intermediate motion events (1-200). Default 20.
    pub steps: Option<u32>,
    /// Modifiers held across the gesture.
    pub modifier: Option<Vec<String>>,
    /// Mouse button. Default left.
    pub button: Option<MouseButton>,
    /// Window the coordinates belong to; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct Drag;

#[async_trait]
impl ToolSpec for Drag {
    type Args = DragArgs;
    const NAME: &'static str = "drag";
    const DESCRIPTION: &'static str = "Press, move in steps and release between two window-local points (sliders, selections, drag and drop). Background sends synthetic pointer events, which some toolkits ignore (GTK 4): the result then recommends foreground, which moves the real pointer and restores it.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: DragArgs) -> Result<ToolOutput, ToolError> {
        for (name, v) in [
            ("from_x", a.from_x),
            ("from_y", a.from_y),
            ("to_x", a.to_x),
            ("to_y", a.to_y),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(ToolError::invalid(format!(
                    "`{name}`: must be a non-negative number, got {v}"
                )));
            }
        }
        let settle_ms = check_settle(a.settle_ms)?;
        let duration = a.duration_ms.unwrap_or(500);
        if duration > 10_000 {
            return Err(ToolError::invalid(format!(
                "`duration_ms`: at most 10000, got {duration}"
            )));
        }
        let steps = a.steps.unwrap_or(20);
        if !(1..=200).contains(&steps) {
            return Err(ToolError::invalid(format!(
                "`steps`: must be 1-200, got {steps}"
            )));
        }
        let mods = parse_modifiers(&a.modifier.unwrap_or_default(), "modifier")?;
        let mode = delivery(a.delivery_mode);
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let window = target_window(p, a.pid, a.window_id).await?;
        // Coordinates are in the screenshot's pixels (max_image_dimension may scale them).
        let scale = screenshot_scale(ctx, &window);
        for (name, v, limit) in [
            ("from_x", a.from_x, window.bounds.width),
            ("to_x", a.to_x, window.bounds.width),
            ("from_y", a.from_y, window.bounds.height),
            ("to_y", a.to_y, window.bounds.height),
        ] {
            let limit = (limit as f64 * scale).round();
            if v >= limit {
                return Err(ToolError::invalid(format!(
                    "`{name}`: {v} is outside the window ({limit} px)"
                )));
            }
        }
        let (from_x, from_y, to_x, to_y) = (
            a.from_x / scale,
            a.from_y / scale,
            a.to_x / scale,
            a.to_y / scale,
        );
        let button = a.button.unwrap_or(MouseButton::Left).number();
        let (fx, fy, tx, ty) = (from_x as i32, from_y as i32, to_x as i32, to_y as i32);
        let mut events = vec![InputEvent::Move { x: fx, y: fy }];
        events.extend(mods_down(&mods));
        events.push(InputEvent::Button {
            x: fx,
            y: fy,
            button,
            down: true,
        });
        let pause = Duration::from_millis(duration / steps as u64);
        for i in 1..=steps {
            let t = i as f64 / steps as f64;
            let x = (from_x + (to_x - from_x) * t).round() as i32;
            let y = (from_y + (to_y - from_y) * t).round() as i32;
            events.push(InputEvent::Pause(pause));
            events.push(InputEvent::Move { x, y });
        }
        events.push(InputEvent::Button {
            x: tx,
            y: ty,
            button,
            down: false,
        });
        events.extend(mods_up(&mods));
        let expect = expect_window_change(p, a.pid, &window, settle_ms).await;
        let pointing = point_at(ctx, p, on_screen(&window, (fx, fy)), Gesture::Press).await;
        let (sent, ()) = tokio::join!(
            p.send_input(&window, &events, mode),
            pointing.drag_to(
                ctx,
                p,
                on_screen(&window, (tx, ty)),
                Duration::from_millis(duration)
            )
        );
        sent?;
        let path = event_path(mode);
        let mut outcome = Outcome::new(format!("dragged ({fx}, {fy}) → ({tx}, {ty})"), path)
            .with("click_point", json!({ "x": fx, "y": fy }))
            .with("end_point", json!({ "x": tx, "y": ty }));
        if mode == Delivery::Background {
            outcome.escalation =
                synthetic_caveat(p, a.pid, Synthetic::Pointer(window.window_id)).await;
        }
        settle(p, &expect, settle_ms, &mut outcome, "foreground").await;
        pointing.landed(ctx, platform.clone()).await;
        Ok(outcome.into_output(Some(a.pid), Some(&window)))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveCursorArgs {
    /// X in screen points.
    pub x: i32,
    /// Y in screen points.
    pub y: i32,
}

pub struct MoveCursor;

#[async_trait]
impl ToolSpec for MoveCursor {
    type Args = MoveCursorArgs;
    const NAME: &'static str = "move_cursor";
    const DESCRIPTION: &'static str = "Move the real mouse pointer to a screen point (screen points, origin top-left). This is the one tool that changes the pointer by design.";
    const READ_ONLY: bool = false;

    fn output_schema() -> Option<Value> {
        Some(super::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: MoveCursorArgs) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let (w, h) = platform.screen_size().await?;
        if a.x < 0 || a.y < 0 || a.x >= w as i32 || a.y >= h as i32 {
            return Err(ToolError::invalid(format!(
                "({}, {}) is outside the {w}x{h} screen",
                a.x, a.y
            )));
        }
        let pointing = point_at(ctx, platform.as_ref(), (a.x, a.y), Gesture::Move).await;
        platform.warp_pointer(a.x, a.y).await?;
        let mut outcome = Outcome::new(
            format!("moved the pointer to ({}, {})", a.x, a.y),
            "x11_warp",
        );
        outcome.effect = if platform.cursor_position().await? == (a.x, a.y) {
            Effect::Confirmed
        } else {
            Effect::SuspectedNoop
        };
        pointing.landed(ctx, platform).await;
        Ok(outcome.into_output(None, None))
    }
}

#[cfg(test)]
mod synthetic_tests {
    use super::{Synthetic, ignores_synthetic};

    #[test]
    fn gtk3_takes_synthetic_pointer_events_only_under_the_real_pointer() {
        let ignores =
            |toolkit: &str, kind, pointer_over: bool| {
                futures::executor::block_on(ignores_synthetic(toolkit, kind, async move {
                    pointer_over
                }))
                .is_some()
            };
        let pointer = Synthetic::Pointer(1);
        assert!(ignores("gtk 3.24.38", pointer, false));
        assert!(!ignores("gtk 3.24.38", pointer, true));
        assert!(!ignores("gtk 3.24.38", Synthetic::Keys, false));
        assert!(ignores("GTK 4.8.3", pointer, true));
        assert!(ignores("GTK 4.8.3", Synthetic::Keys, true));
        for other in ["Qt 5.15.8", "Qt 6.4.2", "Chromium 1.0", "Gecko 153.7.0"] {
            assert!(!ignores(other, pointer, false), "{other}");
            assert!(!ignores(other, Synthetic::Keys, false), "{other}");
        }
    }
}
