//! The agent cursor's four tools (`get_agent_cursor_state`, `set_agent_cursor_enabled`,
//! `set_agent_cursor_motion`, `set_agent_cursor_style`) and [`point_at`], which every
//! pointer tool calls before it acts: the overlay glides there (when enabled) and a
//! recording's video marks the point (always). The settings are config keys
//! (`agent_cursor.*`), so they are kept like every other setting: per session over MCP,
//! the global default from the CLI.

use crate::dispatch::{Contract, Risk};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::cursor::Settings;
use crate::cursor::sprite::{Sprite, Style};
use crate::errors::ToolError;
use crate::platform::{Platform, WindowInfo};
use crate::recording::video::PointerMark;

/// What a pointer action does where it points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Gesture {
    /// A click: a ripple, and the dwell afterwards.
    Click,
    /// A button goes down (a drag's start): a ripple, no dwell.
    Press,
    /// The pointer only moves there (a scroll, a drag's end, move_cursor).
    Move,
}

/// A pointer action on its way: [`Pointing::landed`] once it has acted.
pub(super) struct Pointing {
    settings: Settings,
    overlay: bool,
    gesture: Gesture,
}

/// Before a pointer action at `screen` (a point on the screen): the overlay glides there
/// when enabled and this process lives to show it; then the recording's video, if one
/// records, draws the cursor there from now on. An overlay the backend cannot show is
/// logged and skipped: the action itself goes on.
pub(super) async fn point_at(
    ctx: &ToolContext,
    platform: &dyn Platform,
    screen: (i32, i32),
    gesture: Gesture,
) -> Pointing {
    let settings = settings(ctx);
    let mut overlay = settings.enabled && !ctx.is_one_shot() && !crate::cursor::overlay_forbidden();
    if overlay {
        if let Err(e) = ctx.cursor.glide(platform, &settings, screen).await {
            tracing::warn!("agent cursor: {e}");
            overlay = false;
        }
    }
    let pointing = Pointing {
        settings,
        overlay,
        gesture,
    };
    pointing.mark(ctx, screen, gesture != Gesture::Move);
    pointing
}

/// A window-local point (as pointer events take them) on the screen.
pub(super) fn on_screen(window: &WindowInfo, (x, y): (i32, i32)) -> (i32, i32) {
    (window.bounds.x + x, window.bounds.y + y)
}

impl Pointing {
    /// The video draws the cursor at `screen` from now on.
    fn mark(&self, ctx: &ToolContext, screen: (i32, i32), click: bool) {
        if let Some(feed) = ctx.recorder.video_feed() {
            feed.point(PointerMark {
                x: screen.0,
                y: screen.1,
                click,
                style: self.settings.style.clone(),
            });
        }
    }

    /// A drag's way to `screen`, taking `duration` (run beside the drag's own events):
    /// the overlay follows in a straight line, and the video shows the end point.
    pub(super) async fn drag_to(
        &self,
        ctx: &ToolContext,
        platform: &dyn Platform,
        screen: (i32, i32),
        duration: std::time::Duration,
    ) {
        if self.overlay {
            let straight = Settings {
                motion: crate::cursor::Motion {
                    arc_size: 0.0,
                    ..self.settings.motion
                },
                glide: duration,
                ..self.settings.clone()
            };
            if let Err(e) = ctx.cursor.glide(platform, &straight, screen).await {
                tracing::warn!("agent cursor: {e}");
            }
        }
        self.mark(ctx, screen, false);
    }

    /// After the action: a click rests on its target for the dwell, and the overlay hides
    /// once no pointer action has come for the idle time.
    pub(super) async fn landed(self, ctx: &ToolContext, platform: Arc<dyn Platform>) {
        if !self.overlay {
            return;
        }
        if self.gesture == Gesture::Click {
            tokio::time::sleep(self.settings.dwell).await;
        }
        ctx.cursor.hide_later(platform, self.settings.idle_hide);
    }
}

/// The agent cursor's settings now (one read of the config).
fn settings(ctx: &ToolContext) -> Settings {
    let (values, _) = ctx.config_snapshot();
    Settings::from_config(|k| values.get(k).cloned().unwrap_or(Value::Null))
}

fn state(ctx: &ToolContext) -> ToolOutput {
    let settings = settings(ctx);
    let mut doc = settings.to_json();
    doc["session"] = json!(ctx.session().unwrap_or("default"));
    let shown = ctx.cursor.shown_at();
    doc["overlay"] = json!(if ctx.is_one_shot() {
        "none: a one-shot CLI call ends before it could show (start `cua serve` or use MCP)"
    } else if crate::cursor::overlay_forbidden() {
        "none: this server was started with --no-overlay"
    } else if shown.is_some() {
        "showing"
    } else {
        "hidden"
    });
    doc["position"] = json!(shown.map(|(x, y)| json!({ "x": x, "y": y })));
    let summary = format!(
        "agent cursor {}: glide {} ms, dwell {} ms, idle hide {} ms",
        if settings.enabled { "on" } else { "off" },
        settings.glide.as_millis(),
        settings.dwell.as_millis(),
        settings.idle_hide.as_millis()
    );
    ToolOutput::new(summary, doc)
}

/// The config key a set_agent_cursor_* argument is kept under.
fn key_of(field: &str) -> String {
    match field {
        "start_handle" | "end_handle" | "arc_size" | "arc_flow" | "spring" => {
            format!("agent_cursor.motion.{field}")
        }
        "gradient_colors" | "bloom_color" | "image_path" => format!("agent_cursor.style.{field}"),
        _ => format!("agent_cursor.{field}"),
    }
}

/// Sets the key of each argument given, after checking them all (nothing changes when one
/// is bad; the error names the argument).
fn set_fields(ctx: &ToolContext, args: &impl serde::Serialize) -> Result<(), ToolError> {
    let Ok(Value::Object(fields)) = serde_json::to_value(args) else {
        return Ok(());
    };
    let mut checked = Vec::new();
    for (field, value) in fields.iter().filter(|(_, v)| !v.is_null()) {
        let key = key_of(field);
        let value = crate::config::validate_field(&key, field, value)?;
        checked.push((key, value));
    }
    for (key, value) in checked {
        ctx.set_config(&key, &value)?;
    }
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAgentCursorStateArgs {}

pub struct GetAgentCursorState;

#[async_trait]
impl ToolSpec for GetAgentCursorState {
    type Args = GetAgentCursorStateArgs;
    const NAME: &'static str = "get_agent_cursor_state";
    const DESCRIPTION: &'static str = "Report the agent cursor: enabled, motion knobs (start_handle, end_handle, arc_size, arc_flow, spring), glide_duration_ms, dwell_after_click_ms, idle_hide_ms, style, whether the overlay shows and where. Read-only.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["agent_cursor.state"]);

    async fn run(&self, ctx: &ToolContext, _a: Self::Args) -> Result<ToolOutput, ToolError> {
        Ok(state(ctx))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAgentCursorEnabledArgs {
    /// True to show the overlay cursor before pointer actions; false to hide it.
    pub enabled: bool,
}

pub struct SetAgentCursorEnabled;

#[async_trait]
impl ToolSpec for SetAgentCursorEnabled {
    type Args = SetAgentCursorEnabledArgs;
    const NAME: &'static str = "set_agent_cursor_enabled";
    const DESCRIPTION: &'static str = "Turn the agent cursor overlay on or off. When on, each pointer action (click, double_click, right_click, drag, scroll, move_cursor) first glides an arrow to its point, then waits the dwell after a click: purely visual, the action is unchanged. Off hides it at once. Default: on on a person's desktop, off inside a cua sandbox (headless and CI runs). The overlay shows from the daemon and the MCP server, not from a one-shot CLI call. A recording's video shows where the agent pointed either way.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R1, &["agent_cursor.set_enabled"]);
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, a: Self::Args) -> Result<ToolOutput, ToolError> {
        ctx.set_config("agent_cursor.enabled", &json!(a.enabled))?;
        if !a.enabled {
            // Nothing to hide when no desktop was ever touched.
            if let Ok(platform) = ctx.platform().await {
                ctx.cursor.hide(platform.as_ref()).await;
            }
        }
        Ok(state(ctx))
    }
}

#[derive(Debug, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAgentCursorMotionArgs {
    /// Start-handle fraction in [0, 1]: how far along the line the first control point sits. Default 0.3.
    pub start_handle: Option<f64>,
    /// End-handle fraction in [0, 1], measured from the end point. Default 0.3.
    pub end_handle: Option<f64>,
    /// Arc deflection as a fraction of path length, [0, 1] (0: straight). Default 0.25.
    pub arc_size: Option<f64>,
    /// Asymmetry bias in [-1, 1] (positive: the bulge toward the destination). Default 0.
    pub arc_flow: Option<f64>,
    /// Settle damping in [0.3, 1]. Default 0.72. Kept for compatibility: this backend draws the arrow upright, so nothing settles.
    pub spring: Option<f64>,
    /// Flight duration per pointer action in ms (at most 10000). Default 750.
    pub glide_duration_ms: Option<u64>,
    /// Pause after a click in ms, with the cursor resting on the target (at most 10000). Default 400.
    pub dwell_after_click_ms: Option<u64>,
    /// How long the overlay stays after the last pointer action, in ms. Default 3000.
    pub idle_hide_ms: Option<u64>,
    /// Refused when given: cua's glide is a cubic Bézier (arc_size, arc_flow), with no turn radius.
    #[serde(skip_serializing)]
    pub turn_radius: Option<f64>,
}

pub struct SetAgentCursorMotion;

#[async_trait]
impl ToolSpec for SetAgentCursorMotion {
    type Args = SetAgentCursorMotionArgs;
    const NAME: &'static str = "set_agent_cursor_motion";
    const DESCRIPTION: &'static str = "Tune the agent cursor's glide: the cubic Bézier it follows between pointer actions (start_handle, end_handle, arc_size, arc_flow), spring, glide_duration_ms, dwell_after_click_ms and idle_hide_ms. Only the fields given change; a value out of range is refused and nothing changes.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R1, &["agent_cursor.set_motion"]);
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, a: Self::Args) -> Result<ToolOutput, ToolError> {
        if a.turn_radius.is_some() {
            return Err(ToolError::invalid(
                "`turn_radius`: cua's glide is a cubic Bézier (arc_size, arc_flow shape it); it has no turn radius",
            ));
        }
        set_fields(ctx, &a)?;
        Ok(state(ctx))
    }
}

#[derive(Debug, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAgentCursorStyleArgs {
    /// CSS hex colors (#RRGGBB or #RGB) for the arrow's fill, tip to tail. Empty array reverts to default.
    pub gradient_colors: Option<Vec<String>>,
    /// CSS hex color for the click ripple. Empty string reverts to default.
    pub bloom_color: Option<String>,
    /// Absolute or ~-rooted path to a PNG or JPEG drawn instead of the arrow (at most 32 px, hot spot top left). Empty string reverts to the arrow.
    pub image_path: Option<String>,
}

pub struct SetAgentCursorStyle;

#[async_trait]
impl ToolSpec for SetAgentCursorStyle {
    type Args = SetAgentCursorStyleArgs;
    const NAME: &'static str = "set_agent_cursor_style";
    const DESCRIPTION: &'static str = "Change how the agent cursor looks, in the overlay and in recording videos: gradient_colors (arrow fill, tip to tail), bloom_color (click ripple), image_path (a PNG or JPEG instead of the arrow). Only the fields given change; empty values revert to the default.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R1, &["agent_cursor.set_style"]);
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, a: Self::Args) -> Result<ToolOutput, ToolError> {
        if let Some(path) = a.image_path.as_deref().filter(|p| !p.is_empty()) {
            let style = Style {
                image_path: path.to_string(),
                ..Style::default()
            };
            Sprite::for_style(&style).map_err(|e| {
                ToolError::invalid(format!("`image_path`: {e} (PNG or JPEG on this platform)"))
            })?;
        }
        set_fields(ctx, &a)?;
        Ok(state(ctx))
    }
}
