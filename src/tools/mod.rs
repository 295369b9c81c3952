//! Tools: the product's surface, one file per tool or family. Each tool is a type
//! implementing [`ToolSpec`] with a typed argument struct; the struct's JSON Schema
//! (schemars) is the single source of truth for validation, `cua describe`, docs/tools.md
//! and the MCP tool list.
//!
//! What a tool is, the context calls share and the call path live one layer down, in
//! [`crate::dispatch`] (re-exported here); this module lists every tool
//! ([`ToolRegistry::new`]) and holds what several tools share.

pub(crate) mod apps;
mod browser;
mod capture;
mod clipboard;
mod config;
mod cursor;
mod desktop;
mod input;
mod menu;
mod page;
mod permissions;
mod recording;
mod replay;
mod screen;
mod sessions;
mod verify;
mod window_state;
mod windows;

use crate::errors::ToolError;
use crate::platform::Platform;

pub use crate::dispatch::{
    CAPABILITY_VERSION, CONTRACT_SCHEMA_VERSION, Contract, HeldButton, RECENT_SNAPSHOTS, Risk,
    SESSION_ARGUMENT, Sessions, Tool, ToolContext, ToolRegistry, ToolSpec, output_schema_of,
    parse_args, runtime, schema_of,
};
pub use crate::output::{ImageBlock, ToolOutput};
pub use crate::snapshot::{Snapshot, render_markdown, window_state_json};
pub use apps::LaunchAppArgs;
pub use replay::ReplayTrajectory;

/// The arguments of a tool that takes none (besides `session`).
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

/// Every tool cua serves. The registry type sits in [`crate::dispatch`], below replay and
/// the recorder (which call through it); the list sits here, above every tool.
impl ToolRegistry {
    pub fn new() -> Self {
        ToolRegistry::of(vec![
            Box::new(permissions::CheckPermissions),
            Box::new(permissions::HealthReport),
            Box::new(apps::ListApps),
            Box::new(apps::LaunchApp),
            Box::new(apps::KillApp),
            Box::new(windows::ListWindows),
            Box::new(windows::BringToFront),
            Box::new(windows::SetWindowFrame),
            Box::new(desktop::GetAccessibilityTree),
            Box::new(desktop::GetDesktopState),
            Box::new(window_state::GetWindowState),
            Box::new(verify::VerifyState),
            Box::new(capture::Screenshot),
            Box::new(capture::Zoom),
            Box::new(screen::GetScreenSize),
            Box::new(screen::GetCursorPosition),
            Box::new(input::Click),
            Box::new(input::DoubleClick),
            Box::new(input::RightClick),
            Box::new(input::TypeText),
            Box::new(input::PressKey),
            Box::new(input::Hotkey),
            Box::new(input::SetValue),
            Box::new(input::Scroll),
            Box::new(input::Drag),
            Box::new(input::MouseButtonDown),
            Box::new(input::MouseDrag),
            Box::new(input::MouseButtonUp),
            Box::new(clipboard::ClipboardRead),
            Box::new(clipboard::ClipboardWrite),
            Box::new(input::MoveCursor),
            Box::new(menu::InvokeMenu),
            Box::new(page::Page),
            Box::new(browser::GetBrowserState),
            Box::new(browser::BrowserPrepare),
            Box::new(browser::BrowserNavigate),
            Box::new(browser::BrowserClick),
            Box::new(browser::BrowserType),
            Box::new(browser::BrowserPointer),
            Box::new(browser::BrowserDialog),
            Box::new(browser::BrowserSetInputFiles),
            Box::new(browser::BrowserDownload),
            Box::new(recording::SetRecording),
            Box::new(recording::StartRecording),
            Box::new(recording::StopRecording),
            Box::new(recording::InstallFfmpeg),
            Box::new(recording::GetRecordingState),
            Box::new(replay::ReplayTrajectory),
            Box::new(config::GetConfig),
            Box::new(config::SetConfig),
            Box::new(cursor::GetAgentCursorState),
            Box::new(cursor::SetAgentCursorEnabled),
            Box::new(cursor::SetAgentCursorMotion),
            Box::new(cursor::SetAgentCursorStyle),
            Box::new(sessions::StartSession),
            Box::new(sessions::EndSession),
            Box::new(sessions::GetSession),
            Box::new(sessions::ListSessions),
            Box::new(sessions::EscalateSession),
            Box::new(sessions::GetSessionState),
        ])
    }
}

/// Writes bytes to a path an agent gave in `field`, where the policy allows
/// ([`crate::policy::output_path`]), whole or not at all.
pub(crate) fn write_out_file(
    ctx: &ToolContext,
    field: &str,
    path: &str,
    bytes: &[u8],
) -> Result<std::path::PathBuf, ToolError> {
    let p = ctx.output_path(field, path, false)?;
    crate::files::write_atomic(&p, bytes)
        .map_err(|e| ToolError::failed(format!("cannot write `{}`: {e}", p.display())))?;
    Ok(p)
}

/// The pid's window: the given one (checked to belong to it), else its frontmost window
/// on screen.
pub(crate) async fn window_or_frontmost(
    platform: &dyn Platform,
    pid: u32,
    window_id: Option<u64>,
) -> Result<crate::platform::WindowInfo, ToolError> {
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

/// The pid that addresses a window by its id alone, when no process is known for it.
pub const UNKNOWN_PID: u32 = 0;

/// Finds a window by id and checks it belongs to `pid` (never falls back to another
/// window); pid [`UNKNOWN_PID`] takes a window whose process is unknown.
pub(crate) async fn window_of(
    platform: &dyn Platform,
    pid: Option<u32>,
    window_id: u64,
) -> Result<crate::platform::WindowInfo, ToolError> {
    let list = platform.list_windows().await?;
    let Some(window) = list.windows.into_iter().find(|w| w.window_id == window_id) else {
        // cua-driver's clients match "stale or no longer running" for a target that exited.
        let exited = match pid {
            Some(pid) => !platform.process_running(pid).await,
            None => false,
        };
        return Err(ToolError::failed(if exited {
            format!(
                "window {window_id} is stale or no longer running: pid {} has exited (run list_apps or launch_app)",
                pid.unwrap_or_default()
            )
        } else {
            format!("window {window_id} not found (run list_windows)")
        }));
    };
    // A window no process is known for (a remote X client, a server without X-Resource)
    // is addressed by its id alone, with pid 0.
    if pid == Some(UNKNOWN_PID) {
        return match window.pid {
            None => Ok(window),
            Some(owner) => Err(ToolError::invalid(format!(
                "`pid`: 0 addresses only a window whose process is unknown; window {window_id} belongs to pid {owner}"
            ))),
        };
    }
    if let Some(pid) = pid {
        if window.pid.is_none() {
            return Err(ToolError::failed(format!(
                "window {window_id} has no known process (it sets no _NET_WM_PID, and the X server does not say which client made it: a remote client, or no X-Resource); address it by window_id with pid 0"
            )));
        }
        if window.pid != Some(pid) {
            return Err(ToolError::failed(format!(
                "window {window_id} belongs to {} (pid {}), not pid {pid}; run list_windows with pid {pid}",
                window.app_name,
                window
                    .pid
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "unknown".into())
            )));
        }
    }
    Ok(window)
}

#[cfg(test)]
mod window_of_tests {
    use super::*;
    use crate::platform::memory::{MemoryPlatform, PID, WINDOW};

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn pid_0_addresses_only_a_window_whose_process_is_unknown() {
        let mut orphan = MemoryPlatform::new(Default::default(), Vec::new());
        orphan.window_pid = None;
        assert!(run(window_of(&orphan, Some(UNKNOWN_PID), WINDOW)).is_ok());
        let err = run(window_of(&orphan, Some(4242), WINDOW))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("has no known process") && err.contains("pid 0"),
            "{err}"
        );
        let owned = MemoryPlatform::new(Default::default(), Vec::new());
        let err = run(window_of(&owned, Some(UNKNOWN_PID), WINDOW))
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("belongs to pid {PID}")), "{err}");
        assert!(run(window_of(&owned, Some(PID), WINDOW)).is_ok());
    }
}
