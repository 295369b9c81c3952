//! Effect verification: what an action expects to change (`Expect`), waiting for it,
//! bounded (`settle`), reading an element back, and the notes a result carries when a
//! toolkit changes a value without telling its scripts.

use super::*;
use crate::snapshot::PASSING_STATES;

/// What would show that an action landed.
pub(super) enum Expect {
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
    /// Keys typed into an element: its text contains `text`, or the window's focused
    /// element shows `shown` (the typed text's longest line) where `before` it did not
    /// (`before` counts focused elements that showed it). Some apps edit in a widget of
    /// their own until the text is committed: LibreOffice Calc's cell keeps its old text
    /// while a focused edit line in its place shows what was typed. Text that shows
    /// anywhere else (keys that went to another field) is no such sign.
    TextShown {
        handle: String,
        text: String,
        shown: String,
        pid: u32,
        window: Box<WindowInfo>,
        before: usize,
    },
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
    /// Something in the window's tree, or the app's set of windows, changed (a
    /// fingerprint taken before the action).
    WindowChange {
        pid: u32,
        window: WindowInfo,
        before: u64,
        /// Read back within the toolkit's latency, in ms (the caller gave no settle_ms):
        /// no change by then says `no_change`, not a suspected no-op.
        latency: Option<u64>,
    },
    /// Nothing to read back.
    Nothing,
}

impl Expect {
    /// How long to read the effect back: an element's own change (a state, its text, its
    /// value or name) is what the action implies, so it gets at least [`READ_BACK_MS`]
    /// (returning as soon as it shows); a window-wide change keeps the caller's wait.
    pub(super) fn read_back_ms(&self, settle_ms: u64) -> u64 {
        match self {
            Expect::WindowChange {
                latency: Some(ms), ..
            } => *ms,
            Expect::WindowChange { .. } | Expect::Nothing => settle_ms,
            _ => settle_ms.max(READ_BACK_MS),
        }
    }
}

pub(super) async fn met(platform: &dyn Platform, expect: &Expect) -> bool {
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
        Expect::TextShown {
            handle,
            text,
            shown,
            pid,
            window,
            before,
        } => {
            platform
                .read_element(handle)
                .await
                .is_ok_and(|r| r.text.is_some_and(|t| t.contains(text.as_str())))
                || showing(platform, *pid, window, shown)
                    .await
                    .is_some_and(|n| n > *before)
        }
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
            ..
        } => fingerprint(platform, *pid, window)
            .await
            .is_some_and(|f| f != *before),
        Expect::Nothing => false,
    }
}

/// States a window takes when cua brings it forward for a foreground action, before the
/// action: not the action's effect. (A click a person's GNOME session sent into its
/// overview read as confirmed by the window becoming active.)
const RAISED_STATES: &[&str] = &["active"];

/// A hash of everything a person could see change in the window's tree (but the states a
/// click passes through, and those of being raised; with each node's reported child count, so an item added out of
/// view, which the walk leaves out, counts), of the app's windows (a click that opens a dialog or closes
/// its window changes those), and of the window's open popups (a right click that opens a
/// context menu, a menu item that ran and closed its menu: neither is in the window's tree).
pub(super) async fn fingerprint(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let windows = platform.list_windows().await.ok()?.windows;
    let mut open = false;
    for w in windows.iter().filter(|w| w.pid == Some(pid)) {
        (w.window_id, &w.title, w.is_on_screen).hash(&mut h);
        open |= w.window_id == window.window_id;
    }
    if let Some(popups) = platform.popups(window.window_id).await {
        for (id, at) in popups {
            (id, at.x, at.y, at.width, at.height).hash(&mut h);
        }
    }
    if open {
        let tree = crate::snapshot::text::window_tree(platform, pid, window)
            .await
            .ok()?;
        for n in &tree.nodes {
            let lasting = n.states.iter().filter(|s| {
                !PASSING_STATES.contains(&s.as_str()) && !RAISED_STATES.contains(&s.as_str())
            });
            (&n.role, &n.name, &n.value, n.reported_children).hash(&mut h);
            lasting.for_each(|s| s.hash(&mut h));
        }
    }
    Some(h.finish())
}

/// How many focused elements of the window show `text` in their name or value; None when
/// the window cannot be read.
pub(super) async fn showing(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    text: &str,
) -> Option<usize> {
    let tree = crate::snapshot::text::window_tree(platform, pid, window)
        .await
        .ok()?;
    let holds = |n: &AxNode| {
        n.states.iter().any(|s| s == "focused")
            && (n.name.contains(text) || n.value.as_deref().is_some_and(|v| v.contains(text)))
    };
    Some(tree.nodes.iter().filter(|n| holds(n)).count())
}

/// The longest line of a typed text, trimmed (None when all blank): what the window shows
/// of it where the field does not.
pub(super) fn shown_part(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .max_by_key(|l| l.chars().count())
}

/// Reads the effect back: once right away, or polling until `settle_ms` runs out.
pub(super) async fn settle(
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
            if let Expect::WindowChange {
                latency: Some(_), ..
            } = expect
            {
                outcome.effect = Effect::NoChange;
                return;
            }
            outcome.effect = Effect::SuspectedNoop;
            if outcome.escalation.is_none() && outcome.path != Route::ForegroundEvent {
                outcome.escalation = Some((
                    escalate_to,
                    format!("no effect was read back within {settle_ms} ms"),
                ));
            }
            return;
        }
        next_look(platform, expect, deadline).await;
    }
}

/// Waits before reading the effect again: for the app's next change event (at most
/// EVENT_RECHECK, not past `deadline`) where a window-wide change is awaited and the app
/// sends events (a whole tree read every POLL would load the machine), else POLL.
async fn next_look(platform: &dyn Platform, expect: &Expect, deadline: Instant) {
    const EVENT_RECHECK: Duration = Duration::from_millis(100);
    if let Expect::WindowChange { pid, .. } = expect {
        if platform
            .app_activity(*pid)
            .await
            .is_some_and(|a| a.events > 0)
        {
            let now = Instant::now();
            crate::platform::event_after(platform, *pid, now, (now + EVENT_RECHECK).min(deadline))
                .await;
            return;
        }
    }
    tokio::time::sleep(POLL).await;
}

pub(super) async fn expect_window_change(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    settle_ms: u64,
) -> Expect {
    if settle_ms == 0 {
        return Expect::Nothing;
    }
    window_change(platform, pid, window, None).await
}

/// Any change in the window from now on, read back within `latency` ms when given (else
/// the caller's settle_ms); nothing to read back when the window cannot be read.
async fn window_change(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    latency: Option<u64>,
) -> Expect {
    match fingerprint(platform, pid, window).await {
        Some(before) => Expect::WindowChange {
            pid,
            window: window.clone(),
            before,
            latency,
        },
        None => Expect::Nothing,
    }
}

/// What shows a click landed when the caller gave no settle_ms: any change in the window
/// (or the app's windows) within the toolkit's latency. Nothing to read back where that
/// latency is not known or the window cannot be read.
pub(super) async fn expect_within_latency(
    ctx: &ToolContext,
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> Expect {
    let Some(latency) = ctx.app_quirks(pid).await.effect_latency else {
        return Expect::Nothing;
    };
    // The event feed runs from here on: the wait for the effect follows the app's events.
    let _ = platform.app_activity(pid).await;
    window_change(platform, pid, window, Some(latency.as_millis() as u64)).await
}

/// How long an action whose implied change is known (a toggled state, the typed text, a
/// value) waits for it before calling it a no-op. Returns as soon as the change shows; a
/// browser's tree follows its page asynchronously, and on a loaded 2-core machine 500 ms
/// was seen to be too short for Chromium's text.
pub(super) const READ_BACK_MS: u64 = 1000;

/// Reads the element live before acting on it, and refuses it if it must not be acted on
/// now: it is gone, disabled, or no longer shown (a closed menu's item, a page switched
/// away). Such an action is refused, never retried by pixel. The reading it returns is the
/// element's state just before the action (a toggle's expectation starts from it).
pub(super) async fn live_element(
    platform: &dyn Platform,
    node: &AxNode,
) -> Result<ElementReading, ToolError> {
    if node.handle.is_empty() {
        // Text read off the pixels: nothing to ask the app; it is what the snapshot saw.
        return Ok(ElementReading {
            name: node.name.clone(),
            states: node.states.clone(),
            ..ElementReading::default()
        });
    }
    let live = platform
        .read_element(&node.handle)
        .await
        .ok()
        .filter(|r| !r.states.iter().any(|s| s == "defunct"));
    let Some(live) = live else {
        return Err(ToolError::failed(format!(
            "{} {}; call get_window_state again",
            describe(node),
            crate::errors::ELEMENT_GONE
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
pub(super) fn is_toggle_click(node: &AxNode, kind: ClickKind) -> bool {
    kind == ClickKind::Click && TOGGLE_ROLES.contains(&node.role.as_str())
}

pub(super) fn is_checked(states: &[String]) -> bool {
    states.iter().any(|s| s == "checked")
}

/// The checked state must flip from what it is now (`live`, read just before the action:
/// the snapshot may be old).
pub(super) fn toggle_expectation(node: &AxNode, live: &ElementReading) -> Expect {
    Expect::StateChange {
        handle: node.handle.clone(),
        state: "checked",
        before: is_checked(&live.states),
    }
}

/// Adds the toggle's checked state after the click: the flipped one when the read-back
/// confirmed the flip (no second read), else what the element reads now.
pub(super) async fn with_checked(p: &dyn Platform, outcome: Outcome, expect: &Expect) -> Outcome {
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

/// The neutral role of a text field whose text is hidden.
const PASSWORD_ROLE: &str = "password_text";

/// GTK 4 (4.8) entries take text through EditableText but read back as empty through
/// Text: an insert that reads back as nothing there is not a no-op cua can name, and
/// repeating it in the foreground would type it twice. It is reported unverifiable, with
/// no escalation.
pub(super) async fn blind_text(
    p: &dyn Platform,
    pid: u32,
    node: &AxNode,
    before_empty: bool,
    mut outcome: Outcome,
) -> Outcome {
    // A password field shows no text to read back (bullets, or nothing): an insert it
    // accepted reads as no change, and an escalation would type the secret twice.
    if outcome.effect == Effect::SuspectedNoop && node.role == PASSWORD_ROLE {
        outcome.effect = Effect::Unverifiable;
        outcome.escalation = None;
        return outcome.with(
            "note",
            json!("a password field does not show its text: the insert was accepted, its result cannot be read back"),
        );
    }
    if outcome.effect != Effect::SuspectedNoop || !before_empty {
        return outcome;
    }
    let after_empty = p
        .read_element(&node.handle)
        .await
        .ok()
        .and_then(|r| r.text)
        .is_none_or(|t| t.is_empty());
    let quirks = p.app_quirks(pid).await;
    if after_empty && quirks.hides_entry_text {
        outcome.effect = Effect::Unverifiable;
        outcome.escalation = None;
        outcome = outcome.with(
            "note",
            json!(format!(
                "{} entries do not expose their text: the insert was accepted, its result cannot be read back",
                quirks.toolkit_name()
            )),
        );
    }
    outcome
}

/// Where a value set through the accessibility interface is not announced to the app's
/// scripts (Firefox: a web number input, a `<select>`), the value is typed in with keys
/// instead, as a person would.
pub(super) const SILENT_VALUE_NOTE: &str = "this toolkit changes a value set through the accessibility API without telling the page's scripts; the value was entered with key events instead";

pub(super) async fn value_set_is_silent(p: &dyn Platform, pid: u32) -> bool {
    p.app_quirks(pid).await.silent_value_set
}

/// Roles whose value is the option chosen among their children.
pub(super) const CHOICE_ROLES: &[&str] = &[
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
pub(super) async fn with_new_value(
    platform: &dyn Platform,
    outcome: Outcome,
    node: &AxNode,
) -> Outcome {
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
