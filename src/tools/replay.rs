//! `replay_trajectory`: re-drives a recorded trajectory through this registry.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolOutput, ToolRegistry, ToolSpec};
use crate::errors::ToolError;
use crate::replay::{ReplayOptions, replay};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayArgs {
    /// Trajectory folder written by set_recording (or the reference driver). ~ is expanded.
    pub dir: String,
    /// At least this many milliseconds between turn starts, for a person watching. Each turn
    /// already waits for its recorded change to show, so 0 is correct too. Default 500.
    pub delay_ms: Option<u64>,
    /// Stop at the first failed turn. Default true.
    pub stop_on_error: Option<bool>,
    /// Also run the trajectory's set_config and set_recording turns, which change the
    /// driver itself; refused by default (a trajectory is input from elsewhere).
    /// replay_trajectory turns are refused either way. Default false.
    pub allow_config: Option<bool>,
    /// Start each recorded app that has no live window, before the first turn in the order
    /// the turns first use them (from its recorded executable, app name, or a desktop
    /// entry named like its window title).
    /// Default false.
    pub launch: Option<bool>,
    /// Recorded apps to start from another build: each names the recorded app (app name,
    /// executable, or window title or a part of it) and the build's path and arguments.
    pub apps: Option<Vec<crate::replay::AppOverride>>,
}

pub struct ReplayTrajectory;

#[async_trait]
impl ToolSpec for ReplayTrajectory {
    type Args = ReplayArgs;
    const NAME: &'static str = "replay_trajectory";
    const DESCRIPTION: &'static str = "Replay a recorded trajectory: each turn's tool call is re-dispatched in order, with recorded pids and windows rebound to live ones (a recorded launch_app launches the app again) and element-indexed turns resolved through their recorded locator in a fresh snapshot (exact path, then role + name, then nearest frame). Waits up to 5 s per turn for the window and element, and after each turn up to 3 s for the turn's recorded change (before-state to after-state) to show in the live window, so the next turn never runs ahead of the app (a turn whose change never shows fails, naming what is missing). While recording is on, the replay is itself recorded. Returns attempted, succeeded, failed, first_failure and per-turn results (rebinding, locator_match, duration_ms).";
    const READ_ONLY: bool = false;
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, a: ReplayArgs) -> Result<ToolOutput, ToolError> {
        let dir = crate::platform::linux::apps::expand_home(&a.dir);
        let opts = ReplayOptions {
            delay_ms: a.delay_ms.unwrap_or(500),
            stop_on_error: a.stop_on_error.unwrap_or(true),
            bound_app: None,
            allow_driver_changes: a.allow_config.unwrap_or(false),
            launch: a.launch.unwrap_or(false),
            apps: a.apps.unwrap_or_default(),
        };
        if opts.delay_ms > 60_000 {
            return Err(ToolError::invalid(format!(
                "`delay_ms`: at most 60000, got {}",
                opts.delay_ms
            )));
        }
        let registry = ToolRegistry::new();
        let report = replay(ctx, &registry, &dir, &opts, |_| {}).await?;
        let summary = format!(
            "replayed {} of {} turns from {}: {} succeeded, {} failed{}",
            report.attempted,
            crate::replay::turn_dirs(&dir).map(|t| t.len()).unwrap_or(0),
            dir.display(),
            report.succeeded,
            report.failed,
            report
                .first_failure
                .map(|n| format!(" (first failure: turn {n})"))
                .unwrap_or_default()
        );
        Ok(ToolOutput::new(summary, json!(report)))
    }
}
