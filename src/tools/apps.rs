//! `list_apps` (installed and running applications), `launch_app` and `kill_app`.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;
use crate::platform::LaunchRequest;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAppsArgs {}

pub struct ListApps;

#[async_trait]
impl ToolSpec for ListApps {
    type Args = ListAppsArgs;
    const NAME: &'static str = "list_apps";
    const DESCRIPTION: &'static str = "List applications, installed (desktop entries) and running, each with running, active (owns the focused window) and pid (0 when not running).";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R2, &["app.list"]);

    async fn run(&self, ctx: &ToolContext, _args: ListAppsArgs) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let installed = platform.installed_apps().await?;
        let running = platform.running_apps().await?;
        let active = platform.active_pid().await?;
        // A running app belongs to one entry: the one named like it, else the one that runs
        // its program plainly (`mousepad %U`), never a settings entry of the same program
        // (`mousepad --preferences`).
        let mut matched = vec![false; running.len()];
        let mut owner: Vec<Option<usize>> = vec![None; installed.len()];
        for (e, app) in installed.iter().enumerate() {
            if let Some(i) =
                (0..running.len()).find(|&i| !matched[i] && running[i].name == app.name)
            {
                matched[i] = true;
                owner[e] = Some(i);
            }
        }
        for (e, app) in installed.iter().enumerate() {
            let mut words = app.exec.split_whitespace();
            let program = words.next().unwrap_or("");
            let program = program.rsplit('/').next().unwrap_or(program);
            let plain = words.all(|w| w.starts_with('%'));
            if owner[e].is_some() || !plain || program.is_empty() {
                continue;
            }
            let runs_it = |i: &usize| {
                !matched[*i]
                    && (running[*i].executable == program
                        || platform.process_command_name(running[*i].pid).as_deref()
                            == Some(program))
            };
            if let Some(i) = (0..running.len()).find(runs_it) {
                matched[i] = true;
                owner[e] = Some(i);
            }
        }
        let mut apps = Vec::new();
        for (app, run_idx) in installed.iter().zip(&owner) {
            let pid = run_idx.map(|i| running[i].pid).unwrap_or(0);
            apps.push(json!({
                "name": app.name,
                "desktop_id": app.desktop_id,
                "running": pid != 0,
                "active": pid != 0 && active == Some(pid),
                "pid": pid,
            }));
        }
        for (r, _) in running.iter().zip(&matched).filter(|(_, m)| !**m) {
            apps.push(json!({
                "name": r.name,
                "desktop_id": null,
                "running": true,
                "active": active == Some(r.pid),
                "pid": r.pid,
            }));
        }
        let running_lines: Vec<String> = apps
            .iter()
            .filter(|a| a["running"] == true)
            .map(|a| {
                format!(
                    "{} (pid {}){}",
                    a["name"].as_str().unwrap_or(""),
                    a["pid"],
                    if a["active"] == true { " active" } else { "" }
                )
            })
            .collect();
        let summary = format!(
            "{} apps, {} running{}{}",
            apps.len(),
            running_lines.len(),
            if running_lines.is_empty() { "" } else { ": " },
            running_lines.join(", ")
        );
        Ok(ToolOutput::new(summary, json!({ "apps": apps })))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchAppArgs {
    /// App display name (desktop entry Name, e.g. "Calculator"), desktop id, or program name.
    pub name: Option<String>,
    /// XDG desktop entry id, e.g. "org.gnome.Calculator".
    pub desktop_id: Option<String>,
    /// Path of an executable to run.
    pub path: Option<String>,
    /// cua-driver's name for desktop_id on Linux (an XDG desktop entry id).
    pub bundle_id: Option<String>,
    /// A command line as list_apps' launch_path gives it: the program, then its arguments split at spaces (no shell).
    pub launch_path: Option<String>,
    /// URLs or file paths handed to the app as arguments.
    pub urls: Option<Vec<String>>,
    /// Extra argv entries, passed as they are (no shell expansion).
    pub additional_arguments: Option<Vec<String>>,
    /// Start a new process even if the app already runs. Default false.
    pub creates_new_application_instance: Option<bool>,
    /// Inside a cua sandbox: start the app in a home of its own for this launch (HOME and XDG folders under the sandbox's homes/N, toolkit settings copied in), so a relaunch starts fresh, with no restored session or recent files. false: the sandbox's shared home, which persists between launches. Default true.
    pub fresh_home: Option<bool>,
}

pub struct LaunchApp;

#[async_trait]
impl ToolSpec for LaunchApp {
    type Args = LaunchAppArgs;
    const NAME: &'static str = "launch_app";
    const DESCRIPTION: &'static str = "Launch an app by name, desktop_id or path and wait (bounded) for its first window. Returns pid, name and windows (as list_windows). An app already running is reused unless creates_new_application_instance. A window of a process the launched one started counts (pid: the window's owner, launcher_pid: the process started). Browsers get the flags their accessibility tree needs and a fresh private profile. In a cua sandbox each launch gets a home of its own (home: its path) unless fresh_home is false, and an app that carries an accessibility bridge (GTK, Qt, Java's ATK wrapper) but does not join the accessibility bus within 15 s is stopped and started once more (accessibility_note says so, and whether the second start joined).";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["app.launch"],
        risk: Risk::R1,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    async fn run(&self, ctx: &ToolContext, args: LaunchAppArgs) -> Result<ToolOutput, ToolError> {
        let given = [
            args.name.is_some(),
            args.desktop_id.is_some(),
            args.bundle_id.is_some(),
            args.path.is_some(),
            args.launch_path.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if given != 1 {
            return Err(ToolError::invalid(
                "give exactly one of `name`, `desktop_id` (or `bundle_id`), `path` or `launch_path`",
            ));
        }
        let mut additional_arguments = args.additional_arguments.unwrap_or_default();
        let path = match args.launch_path {
            Some(line) => {
                let mut words = line.split_whitespace().map(String::from);
                let program = words.next().ok_or_else(|| {
                    ToolError::invalid("`launch_path`: empty (give a program to run)")
                })?;
                let mut argv: Vec<String> = words.collect();
                argv.append(&mut additional_arguments);
                additional_arguments = argv;
                Some(program)
            }
            None => args.path,
        };
        let request = LaunchRequest {
            name: args.name,
            desktop_id: args.desktop_id.or(args.bundle_id),
            path,
            urls: args.urls.unwrap_or_default(),
            additional_arguments,
            creates_new_application_instance: args
                .creates_new_application_instance
                .unwrap_or(false),
            shared_home: !args.fresh_home.unwrap_or(true),
        };
        let platform = ctx.platform().await?;
        let launched = platform.launch(&request).await?;
        let windows = windows_of(platform.as_ref(), launched.pid).await?;
        let summary = format!(
            "{} {} (pid {}{}), {} window{}{}",
            if launched.newly_started {
                "launched"
            } else {
                "already running:"
            },
            launched.name,
            launched.pid,
            launched
                .launcher_pid
                .map(|l| format!(", started through pid {l}"))
                .unwrap_or_default(),
            windows.len(),
            if windows.len() == 1 { "" } else { "s" },
            windows
                .first()
                .map(|w| format!(", first: {} \"{}\"", w.window_id, w.title))
                .unwrap_or_default()
        );
        let summary = match &launched.accessibility_note {
            Some(note) => format!("{summary}; accessibility: {note}"),
            None => summary,
        };
        Ok(ToolOutput::new(
            summary,
            json!({
                "pid": launched.pid,
                "name": launched.name,
                "executable": launched.executable,
                "newly_started": launched.newly_started,
                "launcher_pid": launched.launcher_pid,
                "home": launched.home,
                "accessibility_note": launched.accessibility_note,
                "windows": super::windows::records(&windows),
            }),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillAppArgs {
    /// Process to terminate: an app with a window on this desktop, or one list_apps shows running.
    pub pid: u32,
}

pub struct KillApp;

/// How long kill_app waits for the process to be gone. Its window outlives the process's
/// first thread: the display server closes it when the last thread has exited, measured at
/// up to 3.5 s for GNOME Calculator (GTK 4) on a 2-core machine under `stress-ng --cpu 2`.
const KILL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

#[async_trait]
impl ToolSpec for KillApp {
    type Args = KillAppArgs;
    const NAME: &'static str = "kill_app";
    const DESCRIPTION: &'static str = "Force-terminate an app (SIGKILL): unsaved work is lost, so prefer closing it through its own UI. Only a process that owns a window on this desktop or that list_apps shows running; returns once it is gone, its windows too (read back, bounded 10 s).";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["app.kill"],
        risk: Risk::R3,
        destructive: true,
        idempotent: true,
        open_world: false,
    };

    async fn run(&self, ctx: &ToolContext, a: KillAppArgs) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let windows = platform.list_windows().await?.windows;
        let running = platform.running_apps().await?;
        let name = windows
            .iter()
            .find(|w| w.pid == Some(a.pid))
            .map(|w| w.app_name.clone())
            .or_else(|| running.iter().find(|r| r.pid == a.pid).map(|r| r.name.clone()))
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "`pid`: {} is not an app on this desktop (no window, not in list_apps); kill_app ends only those",
                    a.pid
                ))
            })?;
        platform.kill_process(a.pid).await?;
        // Gone means the process and its windows: they leave the window list once the
        // display server has seen the process close, a moment after it died, and a caller
        // listing windows right after must not find them.
        let deadline = std::time::Instant::now() + KILL_WAIT;
        let still = loop {
            let still = match platform.process_running(a.pid).await {
                true => Some("still runs"),
                false => platform
                    .list_windows()
                    .await
                    .is_ok_and(|l| l.windows.iter().any(|w| w.pid == Some(a.pid)))
                    .then_some("is gone, but its window is still listed"),
            };
            if still.is_none() || std::time::Instant::now() >= deadline {
                break still;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        };
        if let Some(still) = still {
            return Err(ToolError::failed(format!(
                "{name} (pid {}) was sent SIGKILL but {still} after {} s",
                a.pid,
                KILL_WAIT.as_secs()
            )));
        }
        Ok(ToolOutput::new(
            format!("killed {name} (pid {})", a.pid),
            json!({ "pid": a.pid, "name": name, "killed": true, "effect": "confirmed" }),
        ))
    }
}

/// The windows process `pid` shows (a process launch_app or browser_prepare just started).
pub(crate) async fn windows_of(
    platform: &dyn crate::platform::Platform,
    pid: u32,
) -> Result<Vec<crate::platform::WindowInfo>, ToolError> {
    Ok(platform
        .list_windows()
        .await?
        .windows
        .into_iter()
        .filter(|w| w.pid == Some(pid))
        .collect())
}
