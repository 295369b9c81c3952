//! `list_windows`: top-level windows with owner pid, title, bounds and stacking.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;

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
    const DESCRIPTION: &'static str = "List top-level windows: window_id, pid, app_name, title, bounds (screen points), z_index (higher is nearer the front), is_on_screen, space_id; and current_space_id.";
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
            json!({ "windows": windows, "current_space_id": list.current_space_id }),
        ))
    }
}
