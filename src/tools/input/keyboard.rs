//! The key tools: press_key and hotkey, one [`ComboAct`] each on the input pipeline (a
//! combination run as its widget action where the toolkit would ignore the keys), and the
//! keyboard focus they and type_text (typing.rs) share.

use super::pipeline::{At, Check, Deliver, InputAct, Plan};
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

/// One key combination to a window, an element (an editable one takes the focus first) or
/// after a click at a point.
pub(super) struct ComboAct {
    combo: Result<Combo, ToolError>,
    /// The combination as the result names it: `ctrl+a`.
    label: String,
}

impl ComboAct {
    fn new(combo: Result<Combo, ToolError>, key: &str) -> Self {
        let label = match &combo {
            Ok(c) => combo_label(&c.mods, key),
            Err(_) => String::new(),
        };
        ComboAct { combo, label }
    }

    fn combo(&self) -> Result<&Combo, ToolError> {
        self.combo.as_ref().map_err(Clone::clone)
    }

    /// The clicks that put the focus where the keys go: an editable element without it
    /// takes it through the accessibility API in the background (synthetic clicks miss
    /// where the pointer is not over the window), else by a click into it; other elements
    /// are not clicked (that could press them). A point is clicked.
    async fn focus(&self, at: &At<'_>) -> Vec<InputEvent> {
        match &at.target {
            Target::Element { node, .. } => {
                let focused_already = node.states.iter().any(|s| s == "focused");
                let focused_now = !focused_already
                    && is_editable(node)
                    && at.mode == Delivery::Background
                    && focus_unless_focused(at.p(), node).await;
                match at.target.visible_part() {
                    Some(part) if is_editable(node) && !focused_already && !focused_now => {
                        let (cx, cy) = part.center();
                        click_events(cx, cy, 1, 1, &[])
                    }
                    _ => Vec::new(),
                }
            }
            Target::Pixel { x, y, .. } => click_events(*x, *y, 1, 1, &[]),
            Target::Window { .. } => Vec::new(),
        }
    }

    /// The combination as the widget action it stands for (`ctrl+a` →
    /// `selection.select-all`) when the addressed element, or the window's focused one,
    /// exports that action: the background route for toolkits that ignore synthetic keys.
    async fn as_widget_action(&self, at: &At<'_>, combo: &Combo) -> Option<Plan<()>> {
        let action = crate::keys::widget_action(&combo.mods, combo.keysym)?;
        let node = match &at.target {
            Target::Element { node, .. } => Some(AxNode::clone(node)),
            Target::Window { window } => {
                let tree = at.p().accessibility_tree(at.pid, window).await.ok()?;
                tree.nodes
                    .into_iter()
                    .find(|n| n.states.iter().any(|s| s == "focused"))
            }
            Target::Pixel { .. } => None,
        };
        let node = node.filter(|n| n.actions.iter().any(|a| a == action))?;
        let outcome = Outcome::new(
            format!("pressed {} as {action} on {}", self.label, describe(&node)),
            Route::ElementAction,
        )
        .with("keys", json!(self.label))
        .with("action", json!(action));
        let send = Deliver::Action {
            handle: node.handle,
            action: action.to_string(),
            times: 1,
        };
        Some(Plan::new(
            outcome,
            send,
            Check::Known(Effect::Unverifiable),
            (),
        ))
    }
}

#[async_trait]
impl InputAct for ComboAct {
    type Memo = ();

    fn check(&self, _address: &Address) -> Result<(), ToolError> {
        self.combo().map(|_| ())
    }

    async fn plan(&self, at: &At<'_>) -> Result<Plan<()>, ToolError> {
        let combo = self.combo()?;
        let mut events = self.focus(at).await;
        if at.mode == Delivery::Background {
            if let Some(plan) = self.as_widget_action(at, combo).await {
                return Ok(plan);
            }
        }
        events.extend(mods_down(&combo.mods));
        events.push(InputEvent::Key {
            keysym: combo.keysym,
            down: true,
        });
        events.push(InputEvent::Key {
            keysym: combo.keysym,
            down: false,
        });
        events.extend(mods_up(&combo.mods));
        let expect = at.window_change(at.settle_ms()).await;
        let mut outcome = Outcome::new(format!("pressed {}", self.label), event_path(at.mode))
            .with("keys", json!(self.label));
        if let Target::Element { node, index, .. } = &at.target {
            outcome = outcome.with("element", element_brief(Some(*index), node));
        }
        let send = Deliver::Events {
            events,
            kind: Synthetic::Keys,
        };
        let check = Check::ReadBack {
            expect,
            wait: at.settle_ms(),
            escalate_to: "foreground",
        };
        Ok(Plan::new(outcome, send, check, ()))
    }
}

pub(super) fn combo_label(mods: &[Modifier], key: &str) -> String {
    let mut parts: Vec<String> = mods.iter().map(|m| m.name().to_string()).collect();
    parts.push(key.to_string());
    parts.join("+")
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PressKeyArgs {
    #[serde(flatten, deserialize_with = "crate::dispatch::with_field_names")]
    pub at: Address,
    /// Key: return, tab, escape, arrows (up…), space, delete (backspace), forwarddelete, home, end, pageup, pagedown, f1-f12, a letter, digit or X keysym name.
    pub key: String,
    /// Modifiers held while the key is pressed: cmd/super, ctrl, shift, alt/option.
    pub modifiers: Option<Vec<String>>,
}

pub struct PressKey;

#[async_trait]
impl ToolSpec for PressKey {
    type Args = PressKeyArgs;
    const NAME: &'static str = "press_key";
    const DESCRIPTION: &'static str = "Press and release one key (with optional modifiers), delivered to the window without activating it (background) or through the real keyboard (foreground); to an element (an editable one is focused first), or after clicking a point (x, y).";
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
        pipeline::check(&a.at, &press(a))
    }

    async fn run(&self, ctx: &ToolContext, a: PressKeyArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.at, &press(&a)).await
    }
}

fn press(a: &PressKeyArgs) -> ComboAct {
    let modifiers = a.modifiers.as_deref().unwrap_or_default();
    ComboAct::new(Combo::from_parts(&a.key, modifiers), &a.key)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct HotkeyArgs {
    #[serde(flatten, deserialize_with = "crate::dispatch::with_field_names")]
    pub at: Address,
    /// Modifiers first, then one key, e.g. ["ctrl", "a"].
    pub keys: Vec<String>,
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
        pipeline::check(&a.at, &hotkey(a))
    }

    async fn run(&self, ctx: &ToolContext, a: HotkeyArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.at, &hotkey(&a)).await
    }
}

fn hotkey(a: &HotkeyArgs) -> ComboAct {
    let key = a.keys.last().map(String::as_str).unwrap_or_default();
    ComboAct::new(Combo::from_keys(&a.keys), key)
}
