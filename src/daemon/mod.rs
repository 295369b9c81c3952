//! `cua serve`: a long-lived process that owns tool state (element caches, the recorder)
//! and serves tool calls over a Unix socket, so one-shot CLI calls share it.
//!
//! Protocol: one JSON object per line each way. Request `{"tool": NAME, "args": {...}}`;
//! the reply line is `wire`'s (the result, with its error kind). A connection that
//! sends `{"lease_session": ID}` holds that session: when it closes (the client ended,
//! however it ended), the session's recording is finalized and the session dropped. The
//! socket lives in a 0700 directory and is 0600. `{"control": "status"}` answers the
//! daemon's pid, sessions and the tools its authority lists; `{"control": "shutdown"}` stops it as SIGTERM does
//! (`cua status`, `cua stop`).
//! SIGTERM and SIGINT finalize an active recording before the process exits.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::errors::ToolError;
use crate::tools::{Sessions, ToolContext, ToolOutput, ToolRegistry};

mod wire;

/// Environment variable that overrides the socket path for clients and the server.
pub const SOCKET_ENV: &str = "CUA_SOCKET";

/// The default socket for the desktop this process is on: one daemon per display.
/// How often the daemon checks that its desktop is still the one it started on.
const DESKTOP_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// The local X server socket of `$DISPLAY` (device and inode): a new X server on the same
/// display number makes a new one. None for a display without a local socket.
fn display_socket() -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let display = std::env::var("DISPLAY").ok()?;
    let number = display.strip_prefix(':')?.split('.').next()?;
    let m = std::fs::metadata(format!("/tmp/.X11-unix/X{number}")).ok()?;
    Some((m.dev(), m.ino()))
}

pub fn default_socket() -> PathBuf {
    if let Some(p) = std::env::var_os(SOCKET_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let base = crate::files::state_root();
    let display = std::env::var("DISPLAY").unwrap_or_default();
    let mut tag: String = display
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    // A Wayland desktop is named by its socket's path, too long for a socket name of
    // our own: a hash of it tells two Wayland sandboxes apart.
    if let (true, Some(wayland)) = (tag.is_empty(), std::env::var_os("WAYLAND_DISPLAY")) {
        let hash = wayland
            .as_encoded_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3)
            });
        tag = format!("wl{:08x}", hash as u32);
    }
    base.join(format!(
        "daemon-{}.sock",
        if tag.is_empty() { "none".into() } else { tag }
    ))
}

/// Serves until SIGTERM/SIGINT; then stops any recording and removes the socket.
pub async fn serve(socket: &Path) -> Result<(), String> {
    let dir = socket.parent().ok_or("socket path has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot secure {}: {e}", dir.display()))?;
    if socket.exists() {
        if tokio::net::UnixStream::connect(socket).await.is_ok() {
            return Err(format!("a daemon already listens on {}", socket.display()));
        }
        std::fs::remove_file(socket)
            .map_err(|e| format!("cannot remove stale {}: {e}", socket.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(socket)
        .map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    let log = crate::logs::daemon_log(socket);
    crate::logs::to_file(&log)?;
    eprintln!(
        "cua daemon listening on {} (log: {})",
        socket.display(),
        log.display()
    );
    tracing::info!(socket = %socket.display(), pid = std::process::id(), "listening");

    // Calls without a session share the default context (CLI calls: element indices carry
    // from one call to the next); each named session has its own.
    let default_ctx = Arc::new(ToolContext::new());
    let sessions = Arc::new(Sessions::new(default_ctx.clone()));
    let registry = Arc::new(ToolRegistry::new());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| e.to_string())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| e.to_string())?;
    // The daemon serves one desktop: when its X server goes away it stops, or a later
    // desktop on the same display number would be answered by a daemon of the old one
    // (seen: a new 800x600 sandbox reported as 1920x1080).
    let desktop = display_socket();
    // The platform's connection to the X server is bound to the server it was opened on,
    // so a round trip on it fails once that server is gone, even when a new one took its
    // display number and its socket took the old inode number (seen in CI).
    let platform = default_ctx.platform().await.ok();
    let mut watch = tokio::time::interval(DESKTOP_CHECK);
    let shutdown = Arc::new(tokio::sync::Notify::new());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let (sessions, registry, shutdown) = (sessions.clone(), registry.clone(), shutdown.clone());
                tokio::spawn(async move { handle(stream, sessions, registry, shutdown).await });
            }
            _ = shutdown.notified() => { tracing::info!("asked to stop"); break }
            _ = watch.tick() => {
                let replaced = desktop.is_some() && display_socket() != desktop;
                let gone = match &platform {
                    Some(p) => !p.desktop_alive().await,
                    None => false,
                };
                if replaced || gone {
                    tracing::warn!("its X display is gone; stopping");
                    break;
                }
            }
            _ = term.recv() => { tracing::info!("SIGTERM; stopping"); break }
            _ = int.recv() => { tracing::info!("SIGINT; stopping"); break }
        }
    }
    // Finalize: queued turns written, session.json stamped with its stop time.
    sessions.finalize_all().await;
    let _ = std::fs::remove_file(socket);
    tracing::info!("stopped; recordings finalized");
    Ok(())
}

async fn handle(
    stream: tokio::net::UnixStream,
    sessions: Arc<Sessions>,
    registry: Arc<ToolRegistry>,
    shutdown: Arc<tokio::sync::Notify>,
) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut leased: Option<String> = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(req) if req.get("control").is_some() => match req["control"].as_str() {
                Some("status") => json!({
                    "ok": true,
                    "pid": std::process::id(),
                    "version": env!("CARGO_PKG_VERSION"),
                    "sessions": sessions.count(),
                    // What the daemon's authority lets a client see (an MCP front lists these).
                    "listed_tools": crate::tools::ToolRegistry::new()
                        .tools()
                        .map(|t| t.name())
                        .filter(|n| crate::policy::authority::lists(n))
                        .collect::<Vec<_>>(),
                }),
                Some("shutdown") => {
                    shutdown.notify_one();
                    json!({ "ok": true })
                }
                _ => wire::encode_reply(Err(ToolError::invalid(
                    "`control`: \"status\" or \"shutdown\"",
                ))),
            },
            Ok(req) if req.get("lease_session").is_some() => match req["lease_session"].as_str() {
                Some(id) if !id.is_empty() && id.len() <= 128 && leased.is_none() => {
                    tracing::debug!(session = id, "session leased");
                    leased = Some(id.to_string());
                    json!({ "ok": true })
                }
                _ => wire::encode_reply(Err(ToolError::invalid(
                    "`lease_session`: one non-empty session id of at most 128 characters per connection",
                ))),
            },
            Ok(req) => match req.get("tool").and_then(Value::as_str) {
                Some(tool) => {
                    let args = req.get("args").cloned().unwrap_or(Value::Null);
                    let session = args["session"].as_str().unwrap_or("").to_string();
                    let started = std::time::Instant::now();
                    let result = match sessions.for_call(tool, &args) {
                        Ok(ctx) => registry.call(&ctx, tool, args).await,
                        Err(e) => Err(e),
                    };
                    crate::logs::call(tool, &session, started, &result);
                    wire::encode_reply(result)
                }
                None => wire::encode_reply(Err(ToolError::invalid("request needs a `tool` field"))),
            },
            Err(e) => {
                wire::encode_reply(Err(ToolError::invalid(format!("request is not JSON: {e}"))))
            }
        };
        let mut bytes = serde_json::to_vec(&reply).unwrap_or_default();
        bytes.push(b'\n');
        if write.write_all(&bytes).await.is_err() {
            break;
        }
    }
    if let Some(id) = leased {
        tracing::debug!(session = %id, "lease ended; its recording is finalized");
        sessions.end(&id).await;
    }
}

/// Holds `session` on the daemon at `socket` for as long as the returned connection is
/// open (see the module doc). None when no daemon answers the lease.
pub fn lease_session(socket: &Path, session: &str) -> Option<std::os::unix::net::UnixStream> {
    use std::io::{BufRead, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    let mut request = json!({ "lease_session": session }).to_string();
    request.push('\n');
    stream.write_all(request.as_bytes()).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(stream.try_clone().ok()?)
        .read_line(&mut line)
        .ok()?;
    let reply: Value = serde_json::from_str(&line).ok()?;
    (reply["ok"] == true).then_some(stream)
}

/// The tools the daemon at `socket` lets clients see (its authority's), if it answers.
pub fn listed_tools(socket: &Path) -> Option<std::collections::HashSet<String>> {
    let status = control(socket, "status")?;
    let names = status["listed_tools"].as_array()?;
    Some(
        names
            .iter()
            .filter_map(|n| n.as_str().map(String::from))
            .collect(),
    )
}

/// A blocking control request (`status`, `shutdown`) to the daemon at `socket`: its reply,
/// or None when no daemon answers.
pub fn control(socket: &Path, request: &str) -> Option<Value> {
    use std::io::{BufRead, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    let mut line = json!({ "control": request }).to_string();
    line.push('\n');
    stream.write_all(line.as_bytes()).ok()?;
    let mut reply = String::new();
    std::io::BufReader::new(stream).read_line(&mut reply).ok()?;
    serde_json::from_str(&reply).ok()
}

/// A blocking client for one call; None when no daemon listens on `socket`.
pub fn call(socket: &Path, tool: &str, args: &Value) -> Option<Result<ToolOutput, ToolError>> {
    use std::io::{BufRead, Write};
    let stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    let mut writer = stream.try_clone().ok()?;
    let mut request = serde_json::to_vec(&json!({ "tool": tool, "args": args })).ok()?;
    request.push(b'\n');
    if writer.write_all(&request).is_err() {
        return Some(Err(ToolError::failed(format!(
            "daemon at {} hung up",
            socket.display()
        ))));
    }
    let mut line = String::new();
    if std::io::BufReader::new(stream)
        .read_line(&mut line)
        .is_err()
        || line.is_empty()
    {
        return Some(Err(ToolError::failed(format!(
            "daemon at {} closed the connection",
            socket.display()
        ))));
    }
    let reply: Value = match serde_json::from_str(&line) {
        Ok(v) => v,
        Err(e) => {
            return Some(Err(ToolError::failed(format!(
                "bad reply from daemon: {e}"
            ))));
        }
    };
    Some(wire::decode_reply(&reply))
}

/// Starts `cua serve` in the background for this desktop and waits until it answers.
pub fn spawn_daemon(socket: &Path) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = socket.parent().ok_or("socket path has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    // The daemon logs there itself; what it prints before (or a panic) lands there too.
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(crate::logs::daemon_log(socket))
        .map_err(|e| e.to_string())?;
    let child = std::process::Command::new(exe)
        .args(["serve", "--socket"])
        .arg(socket)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the daemon: {e}"))?;
    if let Some(sandbox) = std::env::var_os(crate::desktop::SANDBOX_DIR_ENV) {
        crate::desktop::register_pid(Path::new(&sandbox), child.id());
    }
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(format!(
        "the daemon did not come up (log: {})",
        crate::logs::daemon_log(socket).display()
    ))
}
