//! `set_recording` (and cua-driver's `start_recording` / `stop_recording`) and
//! `get_recording_state`: the trajectory recorder of this session.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{NoArgs, ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;
use crate::recording::video::VideoSource;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetRecordingArgs {
    /// True to record every following action tool call; false to stop.
    pub enabled: bool,
    /// Folder for the turn folders (required when enabling; ~ is expanded; created with parents).
    pub output_dir: Option<String>,
    /// Continue after the turns already in output_dir instead of refusing. Default false.
    pub append: Option<bool>,
    /// Also record the whole display as H.264 video (output_dir/recording.mp4, 30 fps). Default false.
    pub video_experimental: Option<bool>,
}

pub struct SetRecording;

#[async_trait]
impl ToolSpec for SetRecording {
    type Args = SetRecordingArgs;
    const NAME: &'static str = "set_recording";
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;
    const DESCRIPTION: &'static str = "Start or stop trajectory recording: while on, every action call (also failed or refused) writes turn-NNNNN/ under output_dir (action, states and screenshots before and after). A folder that holds turns is refused unless append.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract =
        Contract::idempotent(Risk::R3, &["recording.start", "recording.stop"]);

    async fn run(&self, ctx: &ToolContext, a: SetRecordingArgs) -> Result<ToolOutput, ToolError> {
        if !a.enabled {
            return Ok(stop(ctx).await);
        }
        let dir = a
            .output_dir
            .ok_or_else(|| ToolError::invalid("`output_dir`: required when enabled is true"))?;
        start(
            ctx,
            &dir,
            a.append.unwrap_or(false),
            a.video_experimental == Some(true),
            "video_experimental",
        )
        .await
    }
}

/// The screen the platform drives, for a video: its Wayland output when it speaks Wayland
/// (a sway session with XWayland names both), else its X display.
fn video_source(
    ctx: &ToolContext,
    platform: &str,
    video_field: &str,
) -> Result<VideoSource, ToolError> {
    let desktop = ctx.desktop();
    if platform.contains("wayland") {
        if let Some(socket) = desktop.wayland_socket() {
            return Ok(VideoSource::Wayland { socket });
        }
    }
    desktop
        .display
        .clone()
        .map(|display| VideoSource::X11 { display })
        .ok_or_else(|| {
            ToolError::NoDesktop(format!(
                "no desktop for `{video_field}`: neither DISPLAY nor WAYLAND_DISPLAY is set; start one with `eval \"$(cua sandbox start)\"`"
            ))
        })
}

/// Starts this session's recorder into `dir` (`video_field` names the caller's video flag
/// in errors).
async fn start(
    ctx: &ToolContext,
    dir: &str,
    append: bool,
    video: bool,
    video_field: &str,
) -> Result<ToolOutput, ToolError> {
    if dir.trim().is_empty() {
        return Err(ToolError::invalid("`output_dir`: must not be empty"));
    }
    let path = ctx.output_path("output_dir", dir, true)?;
    let (screen, platform) = match ctx.platform().await {
        Ok(p) => (p.screen_size().await.ok(), p.name().to_string()),
        Err(_) => (None, "unknown".to_string()),
    };
    let video_source = match video {
        true => Some(video_source(ctx, &platform, video_field)?),
        false => None,
    };
    let state = ctx
        .recorder
        .start(&path, append, screen, &platform, video_source.as_ref())?;
    Ok(ToolOutput::new(
        format!(
            "recording into {} from turn {}",
            path.display(),
            state.next_turn
        ),
        json!(state),
    ))
}

/// Stops this session's recorder once its queued turns are written.
async fn stop(ctx: &ToolContext) -> ToolOutput {
    match ctx.recorder.stop_when_done().await {
        Some(state) => ToolOutput::new(
            format!(
                "recording stopped; turns up to {} in {}",
                state.next_turn.saturating_sub(1),
                state
                    .output_dir
                    .as_ref()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default()
            ),
            json!(state),
        ),
        None => ToolOutput::new(
            "recording was not enabled; nothing to stop",
            json!(ctx.recorder.state()),
        ),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRecordingArgs {
    /// Folder for the turn folders (~ is expanded; created with parents). A folder that already holds turns is refused.
    pub output_dir: String,
    /// Also record the whole display as H.264 video (output_dir/recording.mp4). Default false.
    pub record_video: Option<bool>,
}

pub struct StartRecording;

#[async_trait]
impl ToolSpec for StartRecording {
    type Args = StartRecordingArgs;
    const NAME: &'static str = "start_recording";
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;
    const DESCRIPTION: &'static str = "Start recording this session's trajectory (set_recording with enabled true, under cua-driver's name): every following action call writes turn-NNNNN/ under output_dir, which `cua replay` re-drives and `cua diff` compares.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R2, &["recording.start"]);

    async fn run(&self, ctx: &ToolContext, a: StartRecordingArgs) -> Result<ToolOutput, ToolError> {
        start(
            ctx,
            &a.output_dir,
            false,
            a.record_video == Some(true),
            "record_video",
        )
        .await
    }
}

pub struct StopRecording;

#[async_trait]
impl ToolSpec for StopRecording {
    type Args = NoArgs;
    const NAME: &'static str = "stop_recording";
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;
    const DESCRIPTION: &'static str = "Stop this session's recording once its queued turns are written (the video, if any, is finalized). Stopping when not recording changes nothing.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R3, &["recording.stop"]);

    async fn run(&self, ctx: &ToolContext, _a: NoArgs) -> Result<ToolOutput, ToolError> {
        Ok(stop(ctx).await)
    }
}

pub struct GetRecordingState;

#[async_trait]
impl ToolSpec for GetRecordingState {
    type Args = NoArgs;
    const NAME: &'static str = "get_recording_state";
    const DESCRIPTION: &'static str = "Report the recorder: enabled, output_dir, next_turn (the number the next turn folder gets), video, and last_error (a failed turn write, which never fails the action itself).";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["recording.state"]);

    async fn run(&self, ctx: &ToolContext, _a: NoArgs) -> Result<ToolOutput, ToolError> {
        let state = ctx.recorder.state();
        let summary = if state.enabled {
            format!(
                "recording into {}, next turn {}{}",
                state
                    .output_dir
                    .as_ref()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
                state.next_turn,
                state
                    .last_error
                    .as_ref()
                    .map(|e| format!("; last error: {e}"))
                    .unwrap_or_default()
            )
        } else {
            "not recording".to_string()
        };
        Ok(ToolOutput::new(summary, json!(state)))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallFfmpegArgs {
    /// Accepted for cua-driver's callers; nothing is downloaded either way.
    #[allow(dead_code)] // cua installs nothing, so there is nothing to confirm
    pub confirm: Option<bool>,
}

pub struct InstallFfmpeg;

#[async_trait]
impl ToolSpec for InstallFfmpeg {
    type Args = InstallFfmpegArgs;
    const NAME: &'static str = "install_ffmpeg";
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;
    const DESCRIPTION: &'static str = "Say whether video recording (start_recording record_video) is ready. cua downloads nothing: its cua-video helper links FFmpeg's libraries, installed with cua; this finds the helper or says why video cannot be recorded.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R3, &["recording.install_dependency"]);

    async fn run(
        &self,
        _ctx: &ToolContext,
        _a: InstallFfmpegArgs,
    ) -> Result<ToolOutput, ToolError> {
        let helper = crate::recording::video::helper_path().map_err(ToolError::failed)?;
        Ok(ToolOutput::new(
            format!(
                "video recording is ready: {} links FFmpeg's libraries; nothing to install",
                helper.display()
            ),
            json!({ "installed": true, "already_installed": true, "helper": helper }),
        ))
    }
}
