//! The keyboard tools: type_text, press_key and hotkey, with the focused editable
//! element, text splicing and combos run as widget actions where keys would be ignored.

use super::*;
use crate::dispatch::Contract;

/// The focused editable element of a window, if its tree reports one.
pub(super) async fn focused_editable(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> Option<AxNode> {
    let tree = platform.accessibility_tree(pid, window).await.ok()?;
    tree.nodes.into_iter().find(|n| {
        n.states.iter().any(|s| s == "focused") && n.states.iter().any(|s| s == "editable")
    })
}

pub(super) fn is_editable(n: &AxNode) -> bool {
    n.states.iter().any(|s| s == "editable")
}

/// Roles that take typed text even when they do not say `editable` (terminals read keys).
pub(super) const TEXT_ROLES: &[&str] =
    &["entry", "text", "password_text", "terminal", "spin_button"];

/// Whether typing into this element means something.
pub(super) fn takes_text(n: &AxNode) -> bool {
    is_editable(n) || TEXT_ROLES.contains(&n.role.as_str())
}

/// The text an insert leaves, when the text before was read whole (not cut at the
/// snapshot's length limit): `before` with the edit's span replaced by `typed`.
pub(super) fn spliced(before: &str, edit: TextEdit, typed: &str) -> Option<String> {
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
    const CONTRACT: Contract = Contract::input(&[
        "input.keyboard.type",
        "accessibility.element_tokens",
        "input.delivery_mode",
    ]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
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
                        let mut outcome = Outcome::new(what, Route::ElementText)
                            .with("element", element_brief(index, node))
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
            if !focus_unless_focused(p, node).await {
                // In the foreground a real click gives it the focus; in the background
                // nothing may, so no key is sent rather than sent elsewhere.
                match target
                    .visible_part()
                    .filter(|_| mode == Delivery::Foreground)
                {
                    Some(part) => {
                        let (x, y) = part.center();
                        events.extend(click_events(x, y, 1, 1, &[]));
                    }
                    None => {
                        return Err(ToolError::failed(format!(
                            "{} would not take the keyboard focus, so no key was sent (the keys would have gone elsewhere); click it first, or use delivery_mode foreground",
                            describe(node)
                        )));
                    }
                }
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
            outcome = outcome.with("element", element_brief(index, node));
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
pub(super) const FOCUS_WAIT: Duration = Duration::from_millis(1000);

/// Gives `node` the keyboard focus when a live read says it does not have it (asking only
/// then: GTK 3 raises the window of an element that grabs the focus), and waits (bounded)
/// until it says it has it, so that keys sent next land there. Says whether it has it.
pub(super) async fn focus_unless_focused(p: &dyn Platform, node: &AxNode) -> bool {
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
pub(super) fn text_key_events(text: &str, delay_ms: u64) -> Vec<InputEvent> {
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
pub(super) struct KeysInto<'a> {
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
        let ignores_keys = p
            .app_quirks(self.pid)
            .await
            .ignores_background_keys
            .is_some();
        if before.is_none() || now != *before || ignores_keys {
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
        .with("element", element_brief(self.index, self.node))
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
pub(super) async fn send_combo(
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
        // Focus an editable element that does not have focus: in the background through
        // the accessibility API (synthetic clicks miss where the pointer is not over the
        // window), else by clicking into it; other elements are not clicked (that could
        // press them).
        Target::Element { node, index, .. } => {
            let focused_already = node.states.iter().any(|s| s == "focused");
            let focused_now = !focused_already
                && is_editable(node)
                && mode == Delivery::Background
                && focus_unless_focused(p, node).await;
            if is_editable(node) && !focused_already && !focused_now {
                if let Some((cx, cy)) = target.visible_part().map(|f| f.center()) {
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
        outcome = outcome.with("element", element_brief(*index, node));
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
pub(super) async fn combo_as_widget_action(
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
        Route::ElementAction,
    )
    .with("keys", json!(label))
    .with("action", json!(action));
    Ok(Some(outcome.into_output(Some(pid), Some(window))))
}

pub(super) fn combo_label(mods: &[Modifier], key: &str) -> String {
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
    const CONTRACT: Contract = Contract::input(&[
        "input.keyboard.press",
        "accessibility.element_tokens",
        "input.delivery_mode",
    ]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
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
    /// Element from the last get_window_state to deliver to (an editable element is focused first).
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// Click this window-local point first to focus what is there (with y), e.g. to paste into a field.
    pub x: Option<f64>,
    /// Click this window-local point first (with x).
    pub y: Option<f64>,
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
    const DESCRIPTION: &'static str = "Press a key combination, e.g. [\"ctrl\", \"a\"]: modifiers first, one non-modifier key last; to the window's focus, or to an element (element_index or element_token; an editable one is focused first), or after clicking a point (x, y).";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&[
        "input.keyboard.hotkey",
        "accessibility.element_tokens",
        "input.delivery_mode",
    ]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    fn check(a: &HotkeyArgs) -> Result<(), ToolError> {
        check_addressing(a.element_index, a.window_id, a.x, a.y)?;
        check_settle(a.settle_ms)?;
        Combo::from_keys(&a.keys).map(|_| ())
    }

    async fn run(&self, ctx: &ToolContext, a: HotkeyArgs) -> Result<ToolOutput, ToolError> {
        check_addressing(a.element_index, a.window_id, a.x, a.y)?;
        let settle_ms = check_settle(a.settle_ms)?;
        let combo = Combo::from_keys(&a.keys)?;
        let key = a.keys.last().map(String::as_str).unwrap_or_default();
        send_combo(
            ctx,
            a.pid,
            a.window_id,
            element_ref(a.element_index, a.snapshot_id.as_deref())?,
            a.x,
            a.y,
            &combo.mods,
            combo.keysym,
            combo_label(&combo.mods, key),
            delivery(a.delivery_mode),
            settle_ms,
        )
        .await
    }
}
