//! A pointer gesture over several calls (cua-driver's mouse_button_down, mouse_drag,
//! mouse_button_up): a button pressed in one call stays held while later calls move it,
//! until one releases it. The session keeps what it holds ([`crate::tools::HeldButton`]);
//! the platform keeps the button held between calls (its events carry the button, and a
//! foreground gesture restores the user's pointer only once released). A session that
//! ends holding a button releases it.

use super::*;
use crate::dispatch::{Contract, HeldButton};

/// The gesture's delivery, as cua-driver's gesture tools have it: background (synthetic
/// events to the window), no `delivery_mode` argument. A session whose desktop is unlocked
/// (start_session {capture_scope: desktop}, or escalate_session) has accepted the real
/// pointer: its gestures go in the foreground (for toolkits that ignore synthetic events,
/// GTK 4), and the person's pointer comes back once the button is released.
fn gesture_delivery(ctx: &ToolContext) -> Delivery {
    let unlocked = ctx
        .capture_scope
        .lock()
        .unwrap()
        .as_ref()
        .is_some_and(|s| s.desktop_unlocked());
    if unlocked {
        Delivery::Foreground
    } else {
        Delivery::Background
    }
}

/// A window-local screenshot point as event pixels of `window`, refused outside it.
fn event_point(
    ctx: &ToolContext,
    window: &WindowInfo,
    x: f64,
    y: f64,
) -> Result<(i32, i32), ToolError> {
    let scale = screenshot_scale(ctx, window);
    for (name, v, limit) in [
        ("x", x, window.bounds.width),
        ("y", y, window.bounds.height),
    ] {
        let limit = (limit as f64 * scale).round();
        if !v.is_finite() || v < 0.0 || v >= limit {
            return Err(ToolError::invalid(format!(
                "`{name}`: {v} is outside the window (0 to {limit} px)"
            )));
        }
    }
    Ok(((x / scale).round() as i32, (y / scale).round() as i32))
}

/// The held button, checked against the pid and window a call names.
fn held(
    ctx: &ToolContext,
    pid: Option<u32>,
    window_id: Option<u64>,
) -> Result<HeldButton, ToolError> {
    let held = ctx.held_button.lock().unwrap().clone().ok_or_else(|| {
        ToolError::invalid("no button is held in this session: call mouse_button_down first")
    })?;
    if pid.is_some_and(|p| p != held.pid) {
        return Err(ToolError::invalid(format!(
            "`pid`: the held button is in pid {}",
            held.pid
        )));
    }
    if window_id.is_some_and(|w| w != held.window.window_id) {
        return Err(ToolError::invalid(format!(
            "`window_id`: the held button is in window {}",
            held.window.window_id
        )));
    }
    Ok(held)
}

/// What a gesture tool answers: its outcome and the held-button state after it.
fn answer(
    mut outcome: Outcome,
    held: Option<&HeldButton>,
    pid: u32,
    window: &WindowInfo,
) -> ToolOutput {
    let state = match held {
        Some(h) => json!({ "held": true, "button": h.button, "x": h.at.0, "y": h.at.1 }),
        None => json!({ "held": false }),
    };
    outcome = outcome.with("held_button", state);
    outcome.into_output(Some(pid), Some(window))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MouseButtonDownArgs {
    /// Target process id.
    pub pid: u32,
    /// Window the point belongs to; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// Where to press, window-local screenshot pixels.
    pub x: f64,
    /// Where to press, window-local screenshot pixels.
    pub y: f64,
    /// Mouse button. Default left.
    pub button: Option<MouseButton>,
}

pub struct MouseButtonDown;

#[async_trait]
impl ToolSpec for MouseButtonDown {
    type Args = MouseButtonDownArgs;
    const NAME: &'static str = "mouse_button_down";
    const DESCRIPTION: &'static str = "Press a mouse button at a window-local point and keep it held: mouse_drag moves it, mouse_button_up releases it (a session that ends holding it releases it). One held button per session. Synthetic events to the window; in a session whose desktop is unlocked (capture_scope desktop, or escalate_session) the real pointer does the gesture and comes back on release. Returns held_button.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&["input.pointer.button"]);

    async fn run(
        &self,
        ctx: &ToolContext,
        a: MouseButtonDownArgs,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(h) = ctx.held_button.lock().unwrap().as_ref() {
            return Err(ToolError::invalid(format!(
                "button {} is already held in window {}: release it with mouse_button_up first",
                h.button, h.window.window_id
            )));
        }
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let window = target_window(p, a.pid, a.window_id).await?;
        let at = event_point(ctx, &window, a.x, a.y)?;
        let mode = gesture_delivery(ctx);
        let button = a.button.unwrap_or(MouseButton::Left).number();
        let events = [
            InputEvent::Move { x: at.0, y: at.1 },
            InputEvent::Button {
                x: at.0,
                y: at.1,
                button,
                down: true,
            },
        ];
        p.send_input(&window, &events, mode).await?;
        let held = HeldButton {
            pid: a.pid,
            window: window.clone(),
            button,
            at,
            mode,
        };
        *ctx.held_button.lock().unwrap() = Some(held.clone());
        let outcome = Outcome::new(
            format!(
                "pressed button {button} at ({}, {}) and holds it",
                at.0, at.1
            ),
            event_path(mode),
        );
        Ok(answer(outcome, Some(&held), a.pid, &window))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MouseDragArgs {
    /// The held button's process (checked).
    pub pid: Option<u32>,
    /// The held button's window (checked).
    pub window_id: Option<u64>,
    /// Where to move the held button, window-local screenshot pixels.
    pub x: f64,
    /// Where to move the held button, window-local screenshot pixels.
    pub y: f64,
    /// Time the move takes in milliseconds (0-10000). Default 500.
    pub duration_ms: Option<u64>,
    /// Intermediate motion events (1-200). Default 20.
    pub steps: Option<u32>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct MouseDrag;

#[async_trait]
impl ToolSpec for MouseDrag {
    type Args = MouseDragArgs;
    const NAME: &'static str = "mouse_drag";
    const DESCRIPTION: &'static str = "Move the button mouse_button_down holds to a window-local point, in steps over duration_ms, without releasing it. Returns held_button.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&["input.pointer.drag"]);

    async fn run(&self, ctx: &ToolContext, a: MouseDragArgs) -> Result<ToolOutput, ToolError> {
        let settle_ms = check_settle(a.settle_ms)?;
        let (duration, steps) = gesture_timing(a.duration_ms, a.steps)?;
        let mut h = held(ctx, a.pid, a.window_id)?;
        let to = event_point(ctx, &h.window, a.x, a.y)?;
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let pause = Duration::from_millis(duration / steps as u64);
        let mut events = Vec::new();
        for i in 1..=steps {
            let t = i as f64 / steps as f64;
            let x = h.at.0 as f64 + (to.0 - h.at.0) as f64 * t;
            let y = h.at.1 as f64 + (to.1 - h.at.1) as f64 * t;
            events.push(InputEvent::Pause(pause));
            events.push(InputEvent::Move {
                x: x.round() as i32,
                y: y.round() as i32,
            });
        }
        let expect = expect_window_change(p, h.pid, &h.window, settle_ms).await;
        p.send_input(&h.window, &events, h.mode).await?;
        let from = h.at;
        h.at = to;
        *ctx.held_button.lock().unwrap() = Some(h.clone());
        let mut outcome = Outcome::new(
            format!(
                "moved held button {} from ({}, {}) to ({}, {})",
                h.button, from.0, from.1, to.0, to.1
            ),
            event_path(h.mode),
        );
        settle(p, &expect, settle_ms, &mut outcome, "foreground").await;
        Ok(answer(outcome, Some(&h), h.pid, &h.window))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MouseButtonUpArgs {
    /// The held button's process (checked).
    pub pid: Option<u32>,
    /// The held button's window (checked).
    pub window_id: Option<u64>,
    /// Where to release, window-local screenshot pixels (with y); default where it is held.
    pub x: Option<f64>,
    /// Where to release (with x).
    pub y: Option<f64>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct MouseButtonUp;

#[async_trait]
impl ToolSpec for MouseButtonUp {
    type Args = MouseButtonUpArgs;
    const NAME: &'static str = "mouse_button_up";
    const DESCRIPTION: &'static str = "Release the button mouse_button_down holds, where it is held or at a window-local point (x, y). Returns held_button (held: false).";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&["input.pointer.button"]);

    async fn run(&self, ctx: &ToolContext, a: MouseButtonUpArgs) -> Result<ToolOutput, ToolError> {
        let settle_ms = check_settle(a.settle_ms)?;
        let h = held(ctx, a.pid, a.window_id)?;
        let at = match (a.x, a.y) {
            (Some(x), Some(y)) => event_point(ctx, &h.window, x, y)?,
            (None, None) => h.at,
            _ => return Err(ToolError::invalid("`x` and `y`: give both, or neither")),
        };
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let expect = expect_window_change(p, h.pid, &h.window, settle_ms).await;
        let events = [
            InputEvent::Move { x: at.0, y: at.1 },
            InputEvent::Button {
                x: at.0,
                y: at.1,
                button: h.button,
                down: false,
            },
        ];
        let sent = p.send_input(&h.window, &events, h.mode).await;
        // Released or not, the session no longer claims the button; a failed release says so.
        *ctx.held_button.lock().unwrap() = None;
        sent?;
        let mut outcome = Outcome::new(
            format!("released button {} at ({}, {})", h.button, at.0, at.1),
            event_path(h.mode),
        );
        settle(p, &expect, settle_ms, &mut outcome, "foreground").await;
        Ok(answer(outcome, None, h.pid, &h.window))
    }
}
