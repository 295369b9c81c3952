//! `browser_prepare`: a Chromium whose DevTools endpoint cua can reach. A browser that has
//! one is reported as ready, with nothing done; a browser without one cannot be given one
//! while it runs, so only a launch (allow_launch, an isolated new profile) makes one.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;
use crate::platform::{LaunchRequest, PageProtocol, PlatformError};
use crate::tools::{ToolContext, ToolOutput, ToolSpec};
use crate::web::browser::Refusal;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProfileMode {
    IsolatedNew,
    IsolatedNamed,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// isolated_new: a fresh profile of its own (the only mode cua offers; isolated_named is refused).
    pub mode: ProfileMode,
    /// isolated_named only (refused).
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    ExistingProfile,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Strategy {
    /// existing_profile (refused: cua does not attach to a running browser's own profile).
    pub kind: StrategyKind,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
// No field is required alone: one of the alternatives is (cua-driver's clients read both).
#[schemars(extend("required" = []))]
#[schemars(extend("anyOf" = [
    { "required": ["pid"] },
    {
        "required": ["allow_launch", "profile"],
        "properties": {
            "allow_launch": { "const": true },
            "profile": { "properties": { "mode": { "enum": ["isolated_new"] } }, "required": ["mode"] }
        }
    }
]))]
pub struct BrowserPrepareArgs {
    /// The browser to check (or, with allow_launch, whose program to start anew). Optional for a launch.
    pub pid: Option<u32>,
    /// A window of pid (checked to be its).
    pub window_id: Option<u64>,
    /// Start a separate Chromium with a fresh isolated profile and an endpoint only this user can reach. Default false.
    pub allow_launch: Option<bool>,
    /// The launched browser's profile: {mode: isolated_new}.
    pub profile: Option<Profile>,
    /// {kind: existing_profile} is refused.
    pub strategy: Option<Strategy>,
}

pub struct BrowserPrepare;

/// The Chromium programs a launch without pid looks for, in this order.
const CHROMIUM_PROGRAMS: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

#[async_trait]
impl ToolSpec for BrowserPrepare {
    type Args = BrowserPrepareArgs;
    const NAME: &'static str = "browser_prepare";
    const DESCRIPTION: &'static str = "Make sure a Chromium has a DevTools endpoint the browser tools can use. With pid: reports ready when it has one (a browser launch_app started has one on a pipe only this user can reach); nothing is changed. A running browser cannot be given one: with allow_launch true and profile {mode: isolated_new}, a separate Chromium (pid's program, or chromium on PATH without pid) is started with a fresh profile of its own and an endpoint; the user's profile is never touched. Returns the launched pid and its windows, to bind with get_browser_state.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["browser.prepare"],
        risk: Risk::R2,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    fn acts(a: &BrowserPrepareArgs) -> bool {
        a.allow_launch == Some(true)
    }

    fn check(a: &BrowserPrepareArgs) -> Result<(), ToolError> {
        if let Some(Strategy {
            kind: StrategyKind::ExistingProfile,
        }) = a.strategy
        {
            return Err(ToolError::invalid(
                "`strategy`: existing_profile is not offered by cua: it never attaches to a browser's own profile; prepare with allow_launch and profile isolated_new",
            ));
        }
        if let Some(p) = &a.profile {
            if p.mode == ProfileMode::IsolatedNamed || p.name.is_some() {
                return Err(ToolError::invalid(
                    "`profile`: isolated_named is not offered by cua; isolated_new is (a fresh profile per launch)",
                ));
            }
        }
        let launch = a.allow_launch == Some(true);
        if launch && a.profile.is_none() {
            return Err(ToolError::invalid(
                "`profile` is required with allow_launch: {\"mode\": \"isolated_new\"}",
            ));
        }
        if !launch && a.profile.is_some() {
            return Err(ToolError::invalid("`profile` goes with allow_launch true"));
        }
        if a.pid.is_none() && !launch {
            return Err(ToolError::invalid(
                "`pid` is required unless allow_launch is true with profile isolated_new",
            ));
        }
        if a.window_id.is_some() && a.pid.is_none() {
            return Err(ToolError::invalid("`window_id` goes with `pid`"));
        }
        Ok(())
    }

    async fn run(&self, ctx: &ToolContext, a: BrowserPrepareArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let platform = ctx.platform().await?;
        if let (Some(pid), Some(window_id)) = (a.pid, a.window_id) {
            crate::tools::window_of(platform.as_ref(), Some(pid), window_id).await?;
        }
        let launch = a.allow_launch == Some(true);
        let mut program = None;
        if let Some(pid) = a.pid {
            match platform.page_endpoint(pid).await {
                Ok(endpoint) if endpoint.protocol == PageProtocol::Cdp => {
                    return Ok(ToolOutput::new(
                        format!("pid {pid} already has a DevTools endpoint; nothing was changed"),
                        json!({
                            "status": "ok",
                            "endpoint_state": "ready",
                            "prepared": false,
                            "launched": false,
                            "pid": pid,
                            "endpoint_transport": crate::web::browser::transport(&endpoint),
                            "visible_effects": [],
                        }),
                    ));
                }
                Ok(_) => return Err(crate::web::browser::firefox_refused(pid)),
                Err(PlatformError::Unsupported(why)) if !launch => {
                    return Err(Refusal::RequiresSetup.because(format!(
                        "{why}. A running browser cannot be given an endpoint; pass allow_launch true with profile {{\"mode\": \"isolated_new\"}} to start a separate one"
                    )));
                }
                Err(PlatformError::Unsupported(_)) => {
                    program = std::fs::read_link(format!("/proc/{pid}/exe"))
                        .ok()
                        .map(|p| p.to_string_lossy().into_owned());
                }
                Err(e) => return Err(Refusal::RouteUnavailable.because(e.to_string())),
            }
        }
        let program = match program {
            Some(p) => p,
            None => CHROMIUM_PROGRAMS
                .iter()
                .find_map(|name| which(name))
                .ok_or_else(|| {
                    Refusal::RouteUnavailable.because(format!(
                        "no Chromium to launch: none of {CHROMIUM_PROGRAMS:?} is on PATH"
                    ))
                })?,
        };
        let launched = platform
            .launch(&LaunchRequest {
                name: None,
                desktop_id: None,
                path: Some(program.clone()),
                urls: vec![],
                additional_arguments: vec![],
                creates_new_application_instance: true,
                shared_home: false,
            })
            .await?;
        let windows = crate::tools::apps::windows_of(platform.as_ref(), launched.pid).await?;
        Ok(ToolOutput::new(
            format!(
                "launched {} (pid {}) with a fresh profile and a DevTools endpoint; {} window(s): bind one with get_browser_state",
                launched.name,
                launched.pid,
                windows.len()
            ),
            json!({
                "status": "ok",
                "endpoint_state": "ready",
                "prepared": true,
                "launched": true,
                "pid": launched.pid,
                "profile": { "mode": "isolated_new" },
                "windows": crate::tools::windows::records(&windows),
                "visible_effects": ["a new browser window opened"],
            }),
        ))
    }
}

/// The program `name` on PATH.
fn which(name: &str) -> Option<String> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
            .map(|p| p.to_string_lossy().into_owned())
    })
}
