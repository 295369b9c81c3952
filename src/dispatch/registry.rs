//! The one call path every front end uses: [`ToolRegistry::call`] finds the tool, records
//! the call as a turn when it acts and a recording is on, and runs it (which checks the
//! policy first). The list of tools is filled in by the tools module, which sits above.

use std::sync::Arc;

use serde_json::Value;

use super::{Tool, ToolContext};
use crate::errors::ToolError;
use crate::output::ToolOutput;
use crate::snapshot::Snapshot;

/// The tools a process serves, in the order docs list them.
pub struct ToolRegistry {
    tools: Vec<Box<dyn Tool>>,
}

impl ToolRegistry {
    /// A registry of these tools (every tool: `ToolRegistry::new`, in the tools module).
    pub fn of(tools: Vec<Box<dyn Tool>>) -> Self {
        ToolRegistry { tools }
    }

    pub fn tools(&self) -> impl Iterator<Item = &dyn Tool> {
        self.tools.iter().map(|t| t.as_ref())
    }

    pub fn get(&self, name: &str) -> Result<&dyn Tool, ToolError> {
        self.tools().find(|t| t.name() == name).ok_or_else(|| {
            let hint = crate::suggest::did_you_mean(name, self.tools().map(|t| t.name()));
            ToolError::UnknownTool(format!(
                "unknown tool `{name}`{hint} (run `cua list-tools`)"
            ))
        })
    }

    /// A fresh tree read of one window (no screenshot): its get_window_state result and
    /// the snapshot it left in `ctx`, which element indices resolve against.
    pub async fn read_window(
        &self,
        ctx: &ToolContext,
        pid: u32,
        window_id: u64,
    ) -> Result<(ToolOutput, Arc<Snapshot>), ToolError> {
        let args =
            serde_json::json!({ "pid": pid, "window_id": window_id, "include_screenshot": false });
        let out = self.call(ctx, "get_window_state", args).await?;
        let snapshot = ctx.snapshot(pid, window_id).ok_or_else(|| {
            ToolError::failed(format!(
                "no snapshot of pid {pid} window {window_id} after reading it"
            ))
        })?;
        Ok((out, snapshot))
    }

    /// Runs a tool; while recording, action tools are recorded as turns.
    pub async fn call(
        &self,
        ctx: &ToolContext,
        name: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self.get(name)?;
        ctx.activity.touch();
        Self::call_tool(ctx, tool, args).await
    }

    /// Runs a tool that need not be registered (replay's bound launch_app), recorded when
    /// recording is on, like [`ToolRegistry::call`]. Input to an app that shows effects
    /// late waits for the previous input's effect first ([`ToolContext::await_pending_effect`]).
    pub async fn call_tool(
        ctx: &ToolContext,
        tool: &dyn Tool,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        crate::policy::authority::check(tool.name(), &args)?;
        // What dispatch resolves for the tool (element_token, cursor_id, from_zoom, scope,
        // target) is what its schema lists: read once here.
        let schema = tool.input_schema();
        let args = if schema["properties"].get("element_token").is_some() {
            super::tokens::expand(ctx, args)?
        } else {
            args
        };
        let desktop = super::addressing::is_desktop(&args, &schema);
        {
            let policy = ctx.capture_scope.lock().unwrap().clone();
            let needs = super::scope::needs(tool.name(), &args, desktop);
            let session = ctx.session().unwrap_or("default");
            super::scope::check(policy.as_ref(), session, tool.name(), needs)?;
        }
        let args = super::addressing::expand(ctx, args, &schema).await?;
        let out = Self::call_paced(ctx, tool, args).await;
        if desktop {
            return out.map(super::addressing::noted_as_desktop);
        }
        out
    }

    /// The call, after the previous input to the same app showed its effect (or its wait
    /// ran out); an unconfirmed effect makes the next input wait in turn.
    async fn call_paced(
        ctx: &ToolContext,
        tool: &dyn Tool,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        let acting_on = (tool.acts(&args) && !tool.changes_driver())
            .then(|| args.get("pid").and_then(Value::as_u64))
            .flatten()
            .map(|p| p as u32);
        let Some(pid) = acting_on else {
            return Self::call_recorded(ctx, tool, args).await;
        };
        ctx.await_pending_effect(pid).await;
        let sent = std::time::Instant::now();
        let out = Self::call_recorded(ctx, tool, args).await;
        // Read back (seen, or waited for past the toolkit's latency): nothing is pending.
        let read_back = out.as_ref().is_ok_and(|o| {
            o.structured["effect"] == "confirmed" || o.structured["effect"] == "no_change"
        });
        if out.is_ok() && !read_back {
            let window = out
                .as_ref()
                .ok()
                .and_then(|o| o.structured["window_id"].as_u64());
            ctx.effect_pending(pid, sent, window).await;
        }
        out
    }

    async fn call_recorded(
        ctx: &ToolContext,
        tool: &dyn Tool,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        if !tool.recorded() || !tool.acts(&args) || !ctx.recorder.is_recording() {
            return tool.call(ctx, args).await;
        }
        let call = crate::recording::Call {
            tool: tool.name(),
            platform: ctx.platform().await.ok(),
            target: ctx.element_locator(&args),
            browser: browser_target(ctx, &args).await,
            redaction: crate::recording::redact::Rules::of(&ctx.config_snapshot().0),
            args: args.clone(),
        };
        crate::recording::record_call(&ctx.recorder, call, tool.call(ctx, args)).await
    }
}

/// A browser tool's window and tab, read for its turn (the URL off the async threads:
/// CDP is blocking); None for any other call.
async fn browser_target(
    ctx: &ToolContext,
    args: &Value,
) -> Option<(u32, u64, crate::trajectory::BrowserTarget)> {
    use crate::web::browser::record;
    let (tab, mut target) = record::named(&ctx.browser, args)?;
    let (pid, window_id) = (tab.target.pid, tab.target.window_id);
    target.tab_url = tokio::task::spawn_blocking(move || record::tab_url(&tab))
        .await
        .ok()
        .flatten()?;
    Some((pid, window_id, target))
}
