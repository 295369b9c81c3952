//! Logs of cua's long-lived processes, through `tracing`: the daemon writes its log beside
//! its socket (`daemon-:0.log` next to `daemon-:0.sock`), the MCP server to stderr (stdout
//! carries the protocol). `RUST_LOG` filters as usual (`RUST_LOG=cua=debug` logs every
//! call with its duration and outcome); the default is `cua=info` for the daemon and
//! `cua=warn` for the MCP server. One-shot CLI commands print to the terminal, not here.

use std::path::Path;

use tracing_subscriber::EnvFilter;

fn filter(default: &str) -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default))
}

/// Logs to `path` (appended to, created 0600 beside the socket). A second call in one
/// process is ignored.
pub fn to_file(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot open the log {}: {e}", path.display()))?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter("cua=info"))
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
    Ok(())
}

/// Logs to stderr.
pub fn to_stderr() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter("cua=warn"))
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
}

/// One call in the log: debug when it succeeded, info with its error otherwise.
pub fn call(
    tool: &str,
    session: &str,
    started: std::time::Instant,
    result: &Result<crate::tools::ToolOutput, crate::errors::ToolError>,
) {
    let ms = started.elapsed().as_millis() as u64;
    match result {
        Ok(_) => tracing::debug!(tool, session, ms, "call"),
        Err(e) => tracing::info!(tool, session, ms, kind = e.kind(), error = %e, "call failed"),
    }
}

/// The log file of the daemon on `socket`.
pub fn daemon_log(socket: &Path) -> std::path::PathBuf {
    socket.with_extension("log")
}
