//! Whole-desktop reads: `get_desktop_state` (the full screen's pixels) and
//! `get_accessibility_tree` (running apps and their windows in one read; a window's own
//! tree is get_window_state's).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::capture::encode_png;
use super::{ImageBlock, NoArgs, ToolContext, ToolOutput, ToolSpec, write_out_file};
use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetDesktopStateArgs {
    /// Write the PNG to this path instead of returning it inline. The directory must exist.
    pub screenshot_out_file: Option<String>,
}

pub struct GetDesktopState;

#[async_trait]
impl ToolSpec for GetDesktopState {
    type Args = GetDesktopStateArgs;
    const NAME: &'static str = "get_desktop_state";
    const DESCRIPTION: &'static str = "Capture the whole screen at its own size (no downscale): every window as a person sees it, for work that spans windows or targets the desktop itself. No accessibility walk. Returns the PNG and screen_width, screen_height, screenshot_width, screenshot_height (equal: screen pixels), scale_factor 1.";
    const READ_ONLY: bool = true;
    // Not idempotent: each call shows the screen as it is then.
    const CONTRACT: Contract = Contract {
        idempotent: false,
        ..Contract::reads(Risk::R3, &["screen.capture", "screen.dimensions"])
    };

    async fn run(
        &self,
        ctx: &ToolContext,
        a: GetDesktopStateArgs,
    ) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let capture = platform.capture_screen().await?;
        let (width, height) = (capture.width, capture.height);
        let png = encode_png(&capture)?;
        let mut structured = json!({
            "platform": "linux",
            "display": ctx.desktop().display.clone().unwrap_or_default(),
            "screen_width": width,
            "screen_height": height,
            "screenshot_width": width,
            "screenshot_height": height,
            "scale_factor": 1.0,
            "screenshot_mime_type": "image/png",
        });
        let mut summary = format!("screen {width}x{height}");
        let image = match &a.screenshot_out_file {
            Some(path) => {
                let written = write_out_file(ctx, "screenshot_out_file", path, &png)?;
                summary.push_str(&format!(" written to {}", written.display()));
                structured["screenshot_file_path"] = json!(written);
                None
            }
            None => Some(ImageBlock {
                mime: "image/png",
                data: png,
            }),
        };
        Ok(ToolOutput {
            summary,
            structured,
            image,
        })
    }
}

pub struct GetAccessibilityTree;

#[async_trait]
impl ToolSpec for GetAccessibilityTree {
    type Args = NoArgs;
    const NAME: &'static str = "get_accessibility_tree";
    const DESCRIPTION: &'static str = "A quick map of the desktop in one read: running apps (pid, name) and their windows on screen (window_id, pid, title, bounds, z_index). For one window's elements, call get_window_state.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(
        Risk::R2,
        &["accessibility.tree", "accessibility.tree.structured"],
    );

    async fn run(&self, ctx: &ToolContext, _a: NoArgs) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let windows: Vec<_> = platform
            .list_windows()
            .await?
            .windows
            .into_iter()
            .filter(|w| w.is_on_screen)
            .collect();
        let apps = platform.running_apps().await?;
        let mut summary = format!("{} apps, {} windows on screen", apps.len(), windows.len());
        for app in &apps {
            summary.push_str(&format!("\n{} (pid {})", app.name, app.pid));
            for w in windows.iter().filter(|w| w.pid == Some(app.pid)) {
                summary.push_str(&format!(
                    "\n  window {} \"{}\" {}x{}+{}+{}",
                    w.window_id, w.title, w.bounds.width, w.bounds.height, w.bounds.x, w.bounds.y
                ));
            }
        }
        let apps: Vec<_> = apps
            .iter()
            .map(|a| json!({ "pid": a.pid, "name": a.name, "executable": a.executable }))
            .collect();
        Ok(ToolOutput::new(
            summary,
            json!({ "apps": apps, "windows": super::windows::records(&windows) }),
        ))
    }
}
