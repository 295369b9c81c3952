//! `check_permissions`: can this process see and drive the desktop, and how to fix it if not.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;
use crate::platform::PermissionCheck;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckPermissionsArgs {
    /// Accepted for compatibility with the macOS driver; Linux has no permission prompts.
    #[allow(dead_code)] // accepted so callers written for other drivers keep working
    pub prompt: Option<bool>,
}

pub struct CheckPermissions;

#[async_trait]
impl ToolSpec for CheckPermissions {
    type Args = CheckPermissionsArgs;
    const NAME: &'static str = "check_permissions";
    const DESCRIPTION: &'static str = "Report whether the desktop can be observed and driven (display, input and capture extensions, window manager, accessibility bus); every failed check carries a fix hint.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(
        Risk::R2,
        &[
            "system.permissions.tcc",
            "system.permissions.tcc.accessibility",
            "system.permissions.tcc.screen_recording",
        ],
    );

    async fn run(&self, ctx: &ToolContext, _args: Self::Args) -> Result<ToolOutput, ToolError> {
        let checks = match ctx.platform().await {
            Ok(p) => p.check_permissions().await,
            Err(e) => vec![PermissionCheck {
                name: "x11_display".into(),
                ok: false,
                detail: e.to_string(),
                fix: Some("start a desktop: eval \"$(cua sandbox start)\"".into()),
            }],
        };
        let all_ok = checks.iter().all(|c| c.ok);
        let mut summary = String::from(if all_ok {
            "all checks passed\n"
        } else {
            "some checks failed\n"
        });
        for c in &checks {
            summary.push_str(&format!(
                "{} {}: {}",
                if c.ok { "ok  " } else { "FAIL" },
                c.name,
                c.detail
            ));
            if let Some(fix) = &c.fix {
                summary.push_str(&format!(" (fix: {fix})"));
            }
            summary.push('\n');
        }
        Ok(ToolOutput::new(
            summary.trim_end(),
            json!({ "ok": all_ok, "checks": checks }),
        ))
    }
}
