//! `cua sandbox start | exec | status | stop`: headless desktops for a shell or a command;
//! `cua permissions status | grant | revoke`: what the desktop lets cua do, and a person's
//! own GNOME or KDE session let in or out.

use super::*;

pub(super) fn run_permissions(
    action: PermissionsAction,
    desktop: Option<SessionDesktop>,
    json: bool,
) -> i32 {
    let desktop = match (action, desktop) {
        (PermissionsAction::Status, _) => {
            let flags = OutputFlags {
                json,
                screenshot_out_file: None,
            };
            return run_tool("check_permissions", None, &flags, None);
        }
        (_, Some(d)) => d,
        (_, None) => {
            return fail(
                2,
                "cua permissions grant|revoke: name the desktop, gnome or kde",
            );
        }
    };
    #[cfg(all(target_os = "linux", feature = "wayland"))]
    {
        use crate::session_access::{self, Desktop};
        let desktop = match desktop {
            SessionDesktop::Gnome => Desktop::Gnome,
            SessionDesktop::Kde => Desktop::Kde,
        };
        let done = if action == PermissionsAction::Grant {
            session_access::grant(desktop)
        } else {
            session_access::revoke(desktop)
        };
        match done {
            Ok(steps) if json => {
                out(&serde_json::json!({ "ok": true, "steps": steps }).to_string());
                0
            }
            Ok(steps) => {
                steps.iter().for_each(|s| out(s));
                0
            }
            Err(e) => fail(1, e),
        }
    }
    #[cfg(not(all(target_os = "linux", feature = "wayland")))]
    {
        let _ = (desktop, json);
        fail(
            1,
            "this build of cua has no Wayland backend (the `wayland` feature), which GNOME and KDE sessions need",
        )
    }
}

pub(super) fn run_sandbox(cmd: SandboxCommand) -> i32 {
    match cmd {
        SandboxCommand::Start { size, backend } => start(size, backend),
        SandboxCommand::Exec {
            display,
            size,
            backend,
            command,
        } => exec(display, size, backend, &command),
        SandboxCommand::Status => status(),
        SandboxCommand::Stop { display, all } => stop(display, all),
        SandboxCommand::HoldComposite => {
            let display = std::env::var("DISPLAY").unwrap_or_default();
            sandbox::hold_composite_redirect(&display);
            0
        }
        SandboxCommand::HoldSeat => {
            sandbox::hold_wayland_seat();
            0
        }
    }
}

/// `start`: a detached sandbox, its environment printed as `export` lines.
fn start(size: (u32, u32), backend: sandbox::Backend) -> i32 {
    let options = SandboxOptions {
        width: size.0,
        height: size.1,
        backend,
    };
    let sb = match Sandbox::start_detached(options) {
        Ok(sb) => sb,
        Err(e) => return fail(1, e),
    };
    for (k, v) in sb.env() {
        out(&format!("export {k}={}", shell_quote(&v)));
    }
    eprintln!(
        "cua sandbox ({}) on display {} ({}x{}); stop it with: cua sandbox stop --display {}",
        sb.backend().name(),
        sb.display_name(),
        size.0,
        size.1,
        sb.display()
    );
    0
}

/// `exec`: the command in a running sandbox (the one named, or the only one), else in a
/// new one that ends with it; its exit code.
fn exec(
    display: Option<u32>,
    size: (u32, u32),
    backend: sandbox::Backend,
    command: &[String],
) -> i32 {
    let sb = match sandbox_for(display, size, backend) {
        Ok(sb) => sb,
        Err(e) => return fail(1, e),
    };
    let mut child = sb.command(&command[0]);
    child.args(&command[1..]);
    match child.status() {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => fail(1, format!("cannot run `{}`: {e}", command[0])),
    }
}

/// The running sandbox named (or the only one running), else a new one that ends with
/// this process.
pub(super) fn sandbox_for(
    display: Option<u32>,
    size: (u32, u32),
    backend: sandbox::Backend,
) -> Result<Sandbox, String> {
    if display.is_some() || !sandbox::list_running().is_empty() {
        let (state, dir) = Sandbox::find(display).map_err(|e| e.to_string())?;
        return Ok(Sandbox::attach(state, dir));
    }
    Sandbox::start(SandboxOptions {
        width: size.0,
        height: size.1,
        backend,
    })
    .map_err(|e| e.to_string())
}

fn status() -> i32 {
    let running = sandbox::list_running();
    if running.is_empty() {
        out("no cua sandbox is running");
    }
    for (state, dir) in running {
        out(&format!(
            "display {}  {}  {}x{}  {} processes  started {}  state {}",
            state.display_label(),
            state.backend.name(),
            state.width,
            state.height,
            state.processes.len(),
            state.created,
            dir.display()
        ));
    }
    0
}

fn stop(display: Option<u32>, all: bool) -> i32 {
    let targets = if all {
        sandbox::list_running()
    } else {
        match Sandbox::find(display) {
            Ok(found) => vec![found],
            Err(e) => return fail(1, e),
        }
    };
    for (state, dir) in &targets {
        sandbox::stop_sandbox(state, dir);
        out(&format!(
            "stopped sandbox on display {}",
            state.display_label()
        ));
    }
    0
}

pub(super) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
