//! The input tools: click, double_click, right_click, drag, scroll, type_text, press_key,
//! hotkey, set_value, move_cursor, and a gesture over several calls (mouse_button_down,
//! mouse_drag, mouse_button_up).
//!
//! Addressing: `element_index` + `window_id` resolves against the last get_window_state
//! snapshot and acts through the accessibility API (background-safe); `x, y` are
//! window-local screenshot pixels. In background mode a pixel click on an element is run
//! as that element's action; elsewhere synthetic events go to the window only.
//! `delivery_mode: foreground` activates the window and uses real input, then restores.
//!
//! Every action returns `path` (the route that ran), `verified`, `effect`
//! (confirmed | unverifiable | suspected_noop | no_change) and, when a background attempt
//! did not land, `escalation {recommended, reason}`. `settle_ms` waits, bounded, for the
//! effect; a click without it reads its effect back within the toolkit's latency.
//!
//! This file owns what every input tool shares: the argument enums, the action vocabularies
//! and the result (`Outcome`, `ActionResult`). The rooms: `target` (addressing resolved to
//! an element, a pixel or a window), `effect` (what would show the action landed, and
//! waiting for it), `delivery` (routes, synthetic-event caveats, event sequences),
//! `address` (the addressing arguments every input tool flattens into its own), `pipeline`
//! (the steps every addressed input tool runs: resolve → plan → deliver → settle → check),
//! and the tools by family: `click`, `pointer`, `held`, `keyboard`, `typing`, `value`,
//! `scroll`. The children reach these shared items through `use super::*`.

mod address;
mod click;
mod delivery;
mod effect;
mod held;
mod keyboard;
mod pipeline;
mod pointer;
mod scroll;
mod target;
#[cfg(test)]
mod tests;
mod typing;
mod value;

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

use address::*;
use click::ClickKind;
use delivery::*;
use effect::*;
use keyboard::*;
use target::*;

pub use click::{Click, DoubleClick, RightClick};
pub use held::{MouseButtonDown, MouseButtonUp, MouseDrag};
pub use keyboard::{Hotkey, PressKey};
pub use pointer::{Drag, MoveCursor};
pub use scroll::Scroll;
pub use typing::TypeText;
pub use value::SetValue;

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
// In cua-driver's order (its schema check compares the enum as listed).
pub enum MouseButton {
    Left,
    Right,
    Middle,
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

/// The route an action took, in words no platform owns: each backend maps its own
/// mechanism onto them (element routes: AT-SPI on Linux, AXUIElement on macOS; events:
/// X11 SendEvent or XTest, CGEventPostToPid or a HID-level CGEvent). Plain comments on
/// the variants: a doc comment would turn the schema's `enum` into a `oneOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Route {
    // The element's own accessibility action (press, toggle, activate...).
    ElementAction,
    // The element's editable text, written directly.
    ElementText,
    // The element's numeric value, set directly.
    ElementValue,
    // The element's selection (a list or combo box item chosen).
    ElementSelection,
    // The element scrolled into view by its own request.
    ElementScrollTo,
    // The element given the keyboard focus (a click on a text field).
    ElementFocus,
    // Input events addressed to the window: the real pointer and focus stay where they are.
    BackgroundEvent,
    // The real pointer and keyboard, as a person's input (the window comes to the front).
    ForegroundEvent,
    // The real pointer moved, nothing pressed.
    PointerWarp,
}

impl Route {
    fn as_str(self) -> &'static str {
        match self {
            Route::ElementAction => "element_action",
            Route::ElementText => "element_text",
            Route::ElementValue => "element_value",
            Route::ElementSelection => "element_selection",
            Route::ElementScrollTo => "element_scroll_to",
            Route::ElementFocus => "element_focus",
            Route::BackgroundEvent => "background_event",
            Route::ForegroundEvent => "foreground_event",
            Route::PointerWarp => "pointer_warp",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Effect {
    Confirmed,
    Unverifiable,
    SuspectedNoop,
    // The window showed no change within the toolkit's latency (a click read back without
    // `settle_ms`): it did nothing the tree shows. (A doc comment here would turn the
    // schema's `enum` into a `oneOf`.)
    NoChange,
}

impl Effect {
    fn as_str(self) -> &'static str {
        match self {
            Effect::Confirmed => "confirmed",
            Effect::Unverifiable => "unverifiable",
            Effect::SuspectedNoop => "suspected_noop",
            Effect::NoChange => "no_change",
        }
    }
}

struct Outcome {
    what: String,
    path: Route,
    effect: Effect,
    escalation: Option<(&'static str, String)>,
    fields: serde_json::Map<String, Value>,
}

impl Outcome {
    fn new(what: impl Into<String>, path: Route) -> Self {
        Outcome {
            what: what.into(),
            path,
            effect: Effect::Unverifiable,
            escalation: None,
            fields: Default::default(),
        }
    }

    /// The same outcome, saying `what` was done.
    fn saying(mut self, what: impl Into<String>) -> Self {
        self.what = what.into();
        self
    }

    /// The same outcome, by route `path`.
    fn routed(mut self, path: Route) -> Self {
        self.path = path;
        self
    }

    fn with(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.to_string(), value);
        self
    }

    fn into_output(mut self, pid: Option<u32>, window: Option<&WindowInfo>) -> ToolOutput {
        if let Some(window) = window {
            for key in ["element", "scroll_bar"] {
                if let Some(element) = self.fields.get_mut(key) {
                    place_frame(element, window);
                }
            }
        }
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
            self.path.as_str(),
            self.effect.as_str()
        );
        if let Some((recommended, reason)) = &self.escalation {
            summary.push_str(&format!(" (escalate to {recommended}: {reason})"));
        }
        ToolOutput::new(summary, s)
    }
}

/// An element's frame in an action's answer in the space get_window_state's `frame` uses,
/// screen points, with the window-local one beside it as `window_frame` (it was window-local
/// under the same name, #56).
fn place_frame(element: &mut Value, window: &WindowInfo) {
    let Some(local) = element.get("frame").filter(|f| f.is_object()).cloned() else {
        return;
    };
    let at = |k: &str| local[k].as_i64().unwrap_or(0);
    element["frame"] = json!({
        "x": at("x") + i64::from(window.bounds.x),
        "y": at("y") + i64::from(window.bounds.y),
        "w": at("w"),
        "h": at("h"),
    });
    element["window_frame"] = local;
}

/// What every action returns: the one source of its structured result and of the output
/// schema the MCP server declares for it.
#[derive(serde::Serialize, JsonSchema)]
pub struct ActionResult {
    /// The route that ran.
    path: Route,
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
    /// What this action adds: `click_point`, `element` ({element_index, role, name, frame
    /// in screen points, window_frame in window pixels}), `end_point`, and `opened` /
    /// `closed` ([{window_id, title}]) where the app's windows came or went by the time
    /// the answer was given (an effect: `confirmed`)...
    #[serde(flatten)]
    details: serde_json::Map<String, Value>,
}

#[derive(serde::Serialize, JsonSchema)]
struct Escalation {
    recommended: &'static str,
    reason: String,
}
