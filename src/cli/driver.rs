//! What launchers written for cua-driver run besides tools: `cua manifest` (this binary
//! described in cua-driver's manifest schema, read from the clap definitions themselves so
//! it never lists a flag cua lacks), `cua serve`, `cua stop` and `cua status` (the
//! daemon's life), and `cua mcp` (the MCP server on stdio).

use super::*;
use clap::CommandFactory;

/// The manifest's shape, as cua-driver 0.21 numbers it.
const MANIFEST_SCHEMA_VERSION: &str = "1";

/// One subcommand's flags and positionals in the manifest's words (a command group's
/// subcommands as its `subcommand` argument).
fn args_of(command: &clap::Command) -> Vec<Value> {
    let group: Vec<&str> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| c.get_name())
        .collect();
    let subcommand = (!group.is_empty()).then(|| {
        serde_json::json!({ "name": "subcommand", "type": "string",
                            "description": format!("one of: {}", group.join(", ")) })
    });
    subcommand
        .into_iter()
        .chain(
            command
                .get_arguments()
                .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
                .map(|a| {
                    let name = match a.get_long() {
                        Some(long) => format!("--{long}"),
                        None => a.get_id().to_string().replace('_', "-"),
                    };
                    let kind = match a.get_action() {
                        clap::ArgAction::SetTrue | clap::ArgAction::SetFalse => "flag",
                        clap::ArgAction::Append => "repeatable-string",
                        _ => "string",
                    };
                    let description = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                    serde_json::json!({ "name": name, "type": kind, "description": description })
                }),
        )
        .collect()
}

/// This binary as cua-driver's manifest describes one.
pub(super) fn manifest() -> Value {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "cua".into());
    let subcommands: Vec<Value> = Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| {
            serde_json::json!({
                "name": c.get_name(),
                "description": c.get_about().map(|h| h.to_string()).unwrap_or_default(),
                "args": args_of(c),
            })
        })
        .collect();
    serde_json::json!({
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "binary_path": exe,
        "binary_version": env!("CARGO_PKG_VERSION"),
        "mcp_invocation": { "command": exe, "args": ["mcp"] },
        "subcommands": subcommands,
    })
}

pub(super) fn run_manifest(pretty: bool) -> i32 {
    let m = manifest();
    out(&if pretty {
        serde_json::to_string_pretty(&m).unwrap_or_default()
    } else {
        m.to_string()
    });
    0
}

/// How long `cua stop` waits for the daemon to finish its recordings and go.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

pub(super) fn run_stop(socket: Option<PathBuf>) -> i32 {
    let socket = socket.unwrap_or_else(crate::daemon::default_socket);
    if crate::daemon::control(&socket, "shutdown").is_none() {
        out(&format!(
            "no cua daemon was running on {}",
            socket.display()
        ));
        return 0;
    }
    let deadline = std::time::Instant::now() + STOP_WAIT;
    while std::time::Instant::now() < deadline {
        if std::os::unix::net::UnixStream::connect(&socket).is_err() {
            out(&format!("stopped the cua daemon on {}", socket.display()));
            return 0;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    fail(
        1,
        format!(
            "the daemon on {} was asked to stop but still answers after {} s",
            socket.display(),
            STOP_WAIT.as_secs()
        ),
    )
}

pub(super) fn run_status(socket: Option<PathBuf>) -> i32 {
    let socket = socket.unwrap_or_else(crate::daemon::default_socket);
    match crate::daemon::control(&socket, "status") {
        Some(reply) if reply["ok"] == true => {
            let status = serde_json::json!({
                "running": true,
                "socket": socket,
                "pid": reply["pid"],
                "version": reply["version"],
                "sessions": reply["sessions"],
            });
            out(&status.to_string());
            0
        }
        _ => {
            out(&serde_json::json!({ "running": false, "socket": socket }).to_string());
            1
        }
    }
}

/// cua-driver's launch configuration from this process's environment; exit code 2 (and
/// the reason, naming the variable) when it cannot be honoured.
fn launch_env() -> Result<crate::policy::authority::LaunchEnv, i32> {
    crate::policy::authority::launch_env(|k| std::env::var(k).ok()).map_err(|e| fail(2, e))
}

/// `cua serve`: the daemon, under the authority its flags and the policy file give.
pub(super) fn run_serve(a: ServeArgs) -> i32 {
    if a.no_overlay {
        crate::cursor::forbid_overlay();
    }
    let policy_file = policy_file_from_env();
    // The flags, when any is given; else cua-driver's environment form.
    let flagged = a.permission_mode.is_some()
        || a.dangerously_bypass_approvals
        || a.capability_manifest.is_some();
    let env = if flagged {
        Default::default()
    } else {
        match launch_env() {
            Ok(env) => env,
            Err(code) => return code,
        }
    };
    let flags = crate::policy::authority::LaunchFlags {
        mode: a.permission_mode.or(env.mode),
        bypass_approvals: a.dangerously_bypass_approvals || env.bypass_approvals,
        manifest: a.capability_manifest.as_deref().or(env.manifest.as_deref()),
        manifest_approved: a.approve_capability_manifest || env.manifest_approved,
        policy_file: policy_file.as_deref(),
        ..Default::default()
    };
    if let Err(code) = install_authority(flags) {
        return code;
    }
    let socket = a.socket.unwrap_or_else(crate::daemon::default_socket);
    let runtime = match runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    match runtime.block_on(crate::daemon::serve(&socket)) {
        Ok(()) => 0,
        Err(e) => fail(1, e),
    }
}

/// `cua mcp`: the MCP server on stdio, in this process or forwarding to a daemon.
pub(super) fn run_mcp(a: McpArgs) -> i32 {
    if a.no_overlay {
        crate::cursor::forbid_overlay();
    }
    if let Some(g) = a.grant.first() {
        return fail(
            2,
            format!(
                "`--grant {g}`: cua has no grantable boundary (it never attaches to a browser's existing profile); remove --grant"
            ),
        );
    }
    let known: Vec<&str> = ToolRegistry::new().tools().map(|t| t.name()).collect();
    let profile = std::env::var(crate::mcp::profile::TOOLS_ENV).ok();
    let listed = match crate::mcp::profile::listed(profile.as_deref(), &known) {
        Ok(listed) => listed,
        Err(e) => return fail(2, e),
    };
    let policy_file = policy_file_from_env();
    let env = match launch_env() {
        Ok(env) => env,
        Err(code) => return code,
    };
    let flags = crate::policy::authority::LaunchFlags {
        mode: env.mode,
        bypass_approvals: env.bypass_approvals,
        manifest: env.manifest.as_deref(),
        manifest_approved: env.manifest_approved,
        policy_file: policy_file.as_deref(),
        ..Default::default()
    };
    if let Err(code) = install_authority(flags) {
        return code;
    }
    let runtime = match runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    match runtime.block_on(crate::mcp::serve_stdio(a.socket, listed)) {
        Ok(()) => 0,
        Err(e) => fail(1, e),
    }
}
