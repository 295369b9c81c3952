//! `replay_trajectory`: re-drives a recorded trajectory through this registry.

use crate::dispatch::{Contract, Risk};
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
    /// Milliseconds at least between turn starts, for watching (each turn already waits for
    /// its change, so 0 is correct). Default 500.
    pub delay_ms: Option<u64>,
    /// Stop at the first failed turn. Default true.
    pub stop_on_error: Option<bool>,
    /// Also run set_config and set_recording turns (refused by default). Default false.
    pub allow_config: Option<bool>,
    /// Start each recorded app that is not running, before the first turn. Default false.
    pub launch: Option<bool>,
    /// Recorded apps to start from another build.
    pub apps: Option<Vec<crate::replay::AppOverride>>,
    /// Replay every turn as recorded: no turn recorded as failed is skipped, no attempt
    /// folded into its retry. Default false.
    pub raw: Option<bool>,
}

pub struct ReplayTrajectory;

#[async_trait]
impl ToolSpec for ReplayTrajectory {
    type Args = ReplayArgs;
    const NAME: &'static str = crate::replay::REPLAY_TOOL;
    const DESCRIPTION: &'static str = "Replay a recorded trajectory (ours or cua-driver's): each turn's call runs again in order on the live apps, pids and windows rebound, elements found again by their recorded locator (exact path, role + name, role + loose name, same name under another role; each heal reported; never an element of another name, a disabled one, or a guess between look-alikes), pixel points moved with their element. Each turn waits (up to 5 s) for its window and element, then (up to 3 s) for the app to make the turn's recorded change exactly, counted from just before the turn; a missing, doubled, contradicted or unrecorded change fails the turn, naming the element. Recorded too while recording is on. Returns attempted, succeeded, failed, first_failure and per-turn results.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["recording.replay"],
        risk: Risk::R3,
        destructive: true,
        idempotent: false,
        open_world: false,
    };
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, a: ReplayArgs) -> Result<ToolOutput, ToolError> {
        let dir = crate::files::expand_home(&a.dir);
        let opts = ReplayOptions {
            delay_ms: a.delay_ms.unwrap_or(500),
            stop_on_error: a.stop_on_error.unwrap_or(true),
            bound_app: None,
            allow_driver_changes: a.allow_config.unwrap_or(false),
            launch: a.launch.unwrap_or(false),
            apps: a.apps.unwrap_or_default(),
            volatile: Vec::new(),
            raw: a.raw.unwrap_or(false),
            incidental: Default::default(),
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
            "replayed {} steps of {} turns from {}: {} succeeded, {} failed, {} turns skipped, {} folded into a retry{}",
            report.attempted,
            report.turns_recorded,
            dir.display(),
            report.succeeded,
            report.failed,
            report.skipped,
            report.folded,
            report
                .first_failure
                .map(|n| format!(" (first failure: turn {n})"))
                .unwrap_or_default()
        );
        // A failed step fails the call (MCP isError, exit 1), as `cua replay` exits 1; the
        // report is its structured result all the same.
        if report.failed > 0 {
            return Err(ToolError::Reported {
                message: summary,
                report: json!(report),
            });
        }
        Ok(ToolOutput::new(summary, json!(report)))
    }
}
