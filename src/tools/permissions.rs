//! `check_permissions`: can this process see and drive the desktop, and how to fix it if
//! not; `health_report`: the same, in cua-driver's health shape.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;
use crate::platform::{Concern, PermissionCheck};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckPermissionsArgs {
    /// Accepted for compatibility with the macOS driver; Linux has no permission prompts.
    /// Under a permission mode, true is refused (os_permission_prompt_requires_trusted_host).
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
                concern: Concern::Session,
                name: "display".into(),
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthReportArgs {
    /// Run only these checks (canonical names); wins over skip.
    pub include: Option<Vec<String>>,
    /// Skip these checks.
    pub skip: Option<Vec<String>>,
}

pub struct HealthReport;

/// cua-driver's canonical checks on Linux, and whether a failure makes cua unusable.
const HEALTH_CHECKS: &[(&str, bool)] = &[
    ("binary_version", true),
    ("platform_supported", true),
    ("session_active", true),
    ("ax_capability", false),
    ("screen_capture_capability", false),
];

#[async_trait]
impl ToolSpec for HealthReport {
    type Args = HealthReportArgs;
    const NAME: &'static str = "health_report";
    const DESCRIPTION: &'static str = "One call that says whether cua can work here, in cua-driver's health shape: checks binary_version, platform_supported, session_active (the display server and its window list), ax_capability (the AT-SPI bus, accessibility on), screen_capture_capability (X11: Composite, MIT-SHM; Wayland: screencopy), each pass, fail (with a hint) or skip; overall ok, degraded (a non-core check failed) or failed (a core one did). include / skip pick checks by name.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &[]);

    async fn run(&self, ctx: &ToolContext, a: HealthReportArgs) -> Result<ToolOutput, ToolError> {
        for name in a.include.iter().chain(&a.skip).flatten() {
            if !HEALTH_CHECKS.iter().any(|(n, _)| n == name) {
                let known = HEALTH_CHECKS.iter().map(|(n, _)| *n);
                let hint = crate::suggest::did_you_mean(name, known.clone());
                return Err(ToolError::invalid(format!(
                    "unknown check `{name}`{hint} (checks: {})",
                    known.collect::<Vec<_>>().join(", ")
                )));
            }
        }
        let platform = ctx.platform().await;
        let platform_checks = match &platform {
            Ok(p) => p.check_permissions().await,
            Err(_) => Vec::new(),
        };
        let found = |concern: Concern| -> Vec<&PermissionCheck> {
            platform_checks
                .iter()
                .filter(|c| c.concern == concern)
                .collect()
        };
        let from = |checks: Vec<&PermissionCheck>, what: &str| {
            let failed: Vec<&&PermissionCheck> = checks.iter().filter(|c| !c.ok).collect();
            match (checks.is_empty(), failed.first()) {
                (true, _) => ("fail", format!("{what}: not checked (no desktop)"), None),
                (false, None) => ("pass", format!("{what}: {}", checks[0].detail), None),
                (false, Some(c)) => ("fail", format!("{what}: {}", c.detail), c.fix.clone()),
            }
        };
        let mut checks = Vec::new();
        let mut overall = "ok";
        for (name, core) in HEALTH_CHECKS {
            let wanted = match (&a.include, &a.skip) {
                (Some(only), _) => only.iter().any(|n| n == name),
                (None, Some(skip)) => !skip.iter().any(|n| n == name),
                (None, None) => true,
            };
            if !wanted {
                checks.push(json!({ "name": name, "status": "skip", "message": "skipped" }));
                continue;
            }
            let (status, message, hint) = match *name {
                "binary_version" => ("pass", format!("cua {}", env!("CARGO_PKG_VERSION")), None),
                "platform_supported" => match &platform {
                    Ok(p) => ("pass", format!("backend {}", p.name()), None),
                    Err(e) => (
                        "fail",
                        e.to_string(),
                        Some("cua drives X11 and Wayland (wlroots) desktops on Linux".into()),
                    ),
                },
                "session_active" => match &platform {
                    Ok(_) => from(found(Concern::Session), "display"),
                    Err(e) => (
                        "fail",
                        e.to_string(),
                        Some("start a desktop: eval \"$(cua sandbox start)\"".into()),
                    ),
                },
                "ax_capability" => from(found(Concern::Accessibility), "AT-SPI"),
                _ => from(found(Concern::Capture), "capture"),
            };
            if status == "fail" {
                overall = if *core {
                    "failed"
                } else if overall == "ok" {
                    "degraded"
                } else {
                    overall
                };
            }
            let mut check = json!({ "name": name, "status": status, "message": message });
            if let Some(h) = hint {
                check["hint"] = json!(h);
            }
            checks.push(check);
        }
        let mut summary = format!("overall {overall}");
        for c in &checks {
            summary.push_str(&format!(
                "\n{} {}: {}",
                c["status"], c["name"], c["message"]
            ));
        }
        Ok(ToolOutput::new(
            summary,
            json!({
                "schema_version": "1",
                "platform": "linux",
                "driver_version": env!("CARGO_PKG_VERSION"),
                "overall": overall,
                "checks": checks,
            }),
        ))
    }
}
