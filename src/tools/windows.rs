//! `list_windows`: top-level windows with owner pid, title, bounds and stacking.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;
use crate::platform::WindowInfo;

/// Window records as every tool answers them: cua's fields plus cua-driver's flat
/// `x`, `y`, `width`, `height` (its clients read those, not `bounds`).
pub fn records(windows: &[WindowInfo]) -> Vec<Value> {
    windows
        .iter()
        .map(|w| {
            let mut record = json!(w);
            let b = &w.bounds;
            for (key, value) in [
                ("x", b.x),
                ("y", b.y),
                ("width", b.width),
                ("height", b.height),
            ] {
                record[key] = json!(value);
            }
            record
        })
        .collect()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListWindowsArgs {
    /// Only this process's windows.
    pub pid: Option<u32>,
    /// Drop windows that are not visible on the current desktop (minimized, unmapped, other desktop). Default false.
    pub on_screen_only: Option<bool>,
}

pub struct ListWindows;

#[async_trait]
impl ToolSpec for ListWindows {
    type Args = ListWindowsArgs;
    const NAME: &'static str = "list_windows";
    const DESCRIPTION: &'static str = "List top-level windows: window_id, pid, app_name, title, bounds (screen points; also flat as x, y, width, height), z_index (higher is nearer the front), is_on_screen, space_id; and current_space_id.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R2, &["window.list"]);

    async fn run(&self, ctx: &ToolContext, args: ListWindowsArgs) -> Result<ToolOutput, ToolError> {
        let list = ctx.platform().await?.list_windows().await?;
        let windows: Vec<_> = list
            .windows
            .into_iter()
            .filter(|w| args.pid.is_none() || w.pid == args.pid)
            .filter(|w| !args.on_screen_only.unwrap_or(false) || w.is_on_screen)
            .collect();
        let mut summary = format!("{} windows", windows.len());
        for w in windows.iter().rev() {
            summary.push_str(&format!(
                "\n{} pid {} {} \"{}\" {}x{}+{}+{}{}",
                w.window_id,
                w.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                w.app_name,
                w.title,
                w.bounds.width,
                w.bounds.height,
                w.bounds.x,
                w.bounds.y,
                if w.is_on_screen { "" } else { " (off screen)" }
            ));
        }
        Ok(ToolOutput::new(
            summary,
            json!({ "windows": records(&windows), "current_space_id": list.current_space_id }),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BringToFrontArgs {
    /// Process whose window to activate.
    pub pid: u32,
    /// The window (must belong to pid). Default: the pid's frontmost window.
    pub window_id: Option<u64>,
}

pub struct BringToFront;

#[async_trait]
impl ToolSpec for BringToFront {
    type Args = BringToFrontArgs;
    const NAME: &'static str = "bring_to_front";
    const DESCRIPTION: &'static str = "Activate a window and leave it active (raised, with the keyboard focus), for work that needs one window in front across calls. Ordinary input never needs it: background input leaves focus alone and delivery_mode foreground activates, acts and restores by itself. Returns the window and whether it is now the active one (read back).";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R1, &["window.activate"]);

    async fn run(&self, ctx: &ToolContext, a: BringToFrontArgs) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let window = super::window_or_frontmost(platform.as_ref(), a.pid, a.window_id).await?;
        platform.activate_window(window.window_id).await?;
        let active = platform.focus_state().await?.active_window == Some(window.window_id);
        Ok(ToolOutput::new(
            format!(
                "{} \"{}\" (window {}) {}",
                window.app_name,
                window.title,
                window.window_id,
                if active {
                    "is active"
                } else {
                    "did not become active"
                }
            ),
            json!({ "pid": a.pid, "window_id": window.window_id, "active": active,
                    "effect": if active { "confirmed" } else { "no_change" } }),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetWindowFrameArgs {
    /// Process that owns the window.
    pub pid: u32,
    /// The window to move and size (must belong to pid).
    pub window_id: u64,
    /// Left edge of the window's content, screen pixels (a fraction is rounded).
    pub x: f64,
    /// Top edge of the window's content, screen pixels.
    pub y: f64,
    /// Content width in pixels.
    #[schemars(range(min = 1))]
    pub width: f64,
    /// Content height in pixels.
    #[schemars(range(min = 1))]
    pub height: f64,
}

pub struct SetWindowFrame;

/// How long set_window_frame waits for the window manager to apply the frame.
const FRAME_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

#[async_trait]
impl ToolSpec for SetWindowFrame {
    type Args = SetWindowFrameArgs;
    const NAME: &'static str = "set_window_frame";
    const DESCRIPTION: &'static str = "Move and size a window's content area (screen pixels). The window manager and the app may adjust the request (minimum sizes, screen edges): the result reads the bounds back, list_windows' shape, and says effect confirmed only when they match the request.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R1, &["window.frame.set"]);

    async fn run(&self, ctx: &ToolContext, a: SetWindowFrameArgs) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        super::window_of(platform.as_ref(), Some(a.pid), a.window_id).await?;
        // X11 geometry is 16-bit: sizes 1-32767, positions ±32767.
        let to_i32 = |field: &str, v: f64, min: f64| {
            let v = v.round();
            (min..=32767.0)
                .contains(&v)
                .then_some(v as i32)
                .ok_or_else(|| ToolError::invalid(format!("`{field}`: {min} to 32767, got {v}")))
        };
        let wanted = crate::platform::Rect::new(
            to_i32("x", a.x, -32767.0)?,
            to_i32("y", a.y, -32767.0)?,
            to_i32("width", a.width, 1.0)?,
            to_i32("height", a.height, 1.0)?,
        );
        let mut bounds = settle_frame(&*platform, &a, wanted, wanted).await?;
        // A window manager that places the frame where the content was asked for (the
        // usual gravity) leaves the content offset by its decorations: ask once more,
        // that far back.
        let (dx, dy) = (bounds.x - wanted.x, bounds.y - wanted.y);
        if (dx, dy) != (0, 0) && (bounds.width, bounds.height) == (wanted.width, wanted.height) {
            let corrected = crate::platform::Rect::new(
                wanted.x - dx,
                wanted.y - dy,
                wanted.width,
                wanted.height,
            );
            bounds = settle_frame(&*platform, &a, corrected, wanted).await?;
        }
        let matched = bounds == wanted;
        Ok(ToolOutput::new(
            format!(
                "window {} is now {}x{}+{}+{}{}",
                a.window_id,
                bounds.width,
                bounds.height,
                bounds.x,
                bounds.y,
                if matched {
                    ""
                } else {
                    " (the window manager adjusted the request)"
                }
            ),
            json!({ "pid": a.pid, "window_id": a.window_id, "bounds": bounds, "requested": wanted,
                    "effect": if matched { "confirmed" } else { "adjusted" } }),
        ))
    }
}

/// Asks for `request` and reads the window's bounds back until they are `wanted` or stop
/// changing (bounded: the window manager applies a request when it gets to it).
async fn settle_frame(
    platform: &dyn crate::platform::Platform,
    a: &SetWindowFrameArgs,
    request: crate::platform::Rect,
    wanted: crate::platform::Rect,
) -> Result<crate::platform::Rect, ToolError> {
    platform.set_window_frame(a.window_id, request).await?;
    let deadline = std::time::Instant::now() + FRAME_WAIT;
    let mut last = None;
    let mut same = 0;
    loop {
        let now = super::window_of(platform, Some(a.pid), a.window_id)
            .await?
            .bounds;
        same = if Some(now) == last { same + 1 } else { 0 };
        // Twenty reads 20 ms apart alike: the request was applied (or refused) in full.
        if now == wanted || same >= 20 || std::time::Instant::now() >= deadline {
            return Ok(now);
        }
        last = Some(now);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
