//! Chromium on `--remote-debugging-pipe`: CDP on the browser's fds 3 (in) and 4 (out),
//! NUL-delimited JSON. Several clients share the one pipe: the relay renumbers each
//! client's command ids, hands every reply back to its sender and a session's events to
//! the client that attached it, and detaches the sessions a client leaves. Browser-level
//! events go to no one (no client subscribes).

use std::collections::HashMap;
use std::io::BufReader;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::{read_message, write_message};

/// A client that does not take a reply within this long is dropped, so one stuck client
/// never holds up the others.
const CLIENT_WRITE_TIMEOUT: Duration = Duration::from_secs(2);

/// Starts `program` with `args` on the pipes and serves them on `listener` until it exits;
/// its exit code.
pub(super) fn serve(listener: UnixListener, program: &str, args: &[String]) -> Result<i32, String> {
    let pipe = || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| e.to_string());
    let (to_browser_read, to_browser) = pipe()?;
    let (from_browser, from_browser_write) = pipe()?;
    let mut command = Command::new(program);
    command.args(args);
    let (child_in, child_out) = (to_browser_read.as_raw_fd(), from_browser_write.as_raw_fd());
    // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec. The pipe
    // ends are copied above fd 9 first, so placing one on 3 never overwrites the other.
    unsafe {
        command.pre_exec(move || {
            let high_in = libc::fcntl(child_in, libc::F_DUPFD_CLOEXEC, 10);
            let high_out = libc::fcntl(child_out, libc::F_DUPFD_CLOEXEC, 10);
            if high_in < 0
                || high_out < 0
                || libc::dup2(high_in, 3) < 0
                || libc::dup2(high_out, 4) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    // The browser's ends live in the browser now; the relay keeps its own.
    drop((to_browser_read, from_browser_write));

    let hub = Arc::new(Hub::new(to_browser));
    let from_browser_hub = hub.clone();
    std::thread::spawn(move || from_browser_hub.read_browser(from_browser));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let hub = hub.clone();
            std::thread::spawn(move || hub.serve_client(stream));
        }
    });
    let status = child.wait().map_err(|e| e.to_string())?;
    Ok(status.code().unwrap_or(1))
}

/// The relay itself, as the sender of a command (its replies go to no client).
const RELAY: u64 = 0;

/// A command on its way to the browser: who sent it, under which id, what it was.
struct Pending {
    client: u64,
    id: Value,
    method: String,
}

/// The one pipe and the clients sharing it.
struct Hub {
    browser: Mutex<std::fs::File>,
    next_id: AtomicU64,
    next_client: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
    /// CDP session id → the client that attached it.
    sessions: Mutex<HashMap<String, u64>>,
    /// Each client's socket, for replies and events.
    clients: Mutex<HashMap<u64, UnixStream>>,
}

impl Hub {
    fn new(to_browser: OwnedFd) -> Hub {
        Hub {
            browser: Mutex::new(std::fs::File::from(to_browser)),
            next_id: AtomicU64::new(1),
            next_client: AtomicU64::new(RELAY + 1),
            pending: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Sends a command to the browser under a fresh id, remembered for its reply.
    fn to_browser(&self, client: u64, mut message: Value) -> std::io::Result<()> {
        let global = self.next_id.fetch_add(1, Ordering::Relaxed);
        let pending = Pending {
            client,
            id: message.get("id").cloned().unwrap_or(Value::Null),
            method: message["method"].as_str().unwrap_or_default().to_string(),
        };
        self.pending.lock().unwrap().insert(global, pending);
        message["id"] = json!(global);
        write_message(&mut *self.browser.lock().unwrap(), &message.to_string())
    }

    fn to_client(&self, client: u64, message: &Value) {
        let mut clients = self.clients.lock().unwrap();
        let Some(stream) = clients.get_mut(&client) else {
            return;
        };
        if write_message(stream, &message.to_string()).is_err() {
            // Its reader sees the socket close and cleans up after it.
            let _ = stream.shutdown(std::net::Shutdown::Both);
            clients.remove(&client);
        }
    }

    /// Reads the browser's messages until the pipe closes: replies to their senders,
    /// session events to the session's client.
    fn read_browser(&self, from_browser: OwnedFd) {
        let mut reader = BufReader::new(std::fs::File::from(from_browser));
        while let Ok(Some(message)) = read_message(&mut reader) {
            let Ok(mut message) = serde_json::from_slice::<Value>(&message) else {
                continue;
            };
            if let Some(global) = message.get("id").and_then(Value::as_u64) {
                let Some(pending) = self.pending.lock().unwrap().remove(&global) else {
                    continue;
                };
                if pending.method == "Target.attachToTarget" {
                    if let Some(session) =
                        message.pointer("/result/sessionId").and_then(Value::as_str)
                    {
                        self.sessions
                            .lock()
                            .unwrap()
                            .insert(session.to_string(), pending.client);
                    }
                }
                message["id"] = pending.id;
                self.to_client(pending.client, &message);
                continue;
            }
            if message["method"] == "Target.detachedFromTarget" {
                if let Some(session) = message.pointer("/params/sessionId").and_then(Value::as_str)
                {
                    self.sessions.lock().unwrap().remove(session);
                }
            }
            let owner = message
                .get("sessionId")
                .and_then(Value::as_str)
                .and_then(|s| self.sessions.lock().unwrap().get(s).copied());
            if let Some(client) = owner {
                self.to_client(client, &message);
            }
        }
    }

    /// Forwards one client's commands until it goes, then forgets it and detaches the
    /// sessions it left attached.
    fn serve_client(&self, stream: UnixStream) {
        let client = self.next_client.fetch_add(1, Ordering::Relaxed);
        let Ok(writer) = stream.try_clone() else {
            return;
        };
        let _ = writer.set_write_timeout(Some(CLIENT_WRITE_TIMEOUT));
        self.clients.lock().unwrap().insert(client, writer);
        let mut reader = BufReader::new(stream);
        while let Ok(Some(message)) = read_message(&mut reader) {
            let command = serde_json::from_slice::<Value>(&message)
                .ok()
                .filter(|m| m.get("id").is_some() && m["method"].is_string());
            let Some(command) = command else {
                let error = json!({ "error": { "message": "the relay takes CDP commands: JSON objects with an id and a method" } });
                self.to_client(client, &error);
                break;
            };
            if self.to_browser(client, command).is_err() {
                break;
            }
        }
        self.clients.lock().unwrap().remove(&client);
        self.pending
            .lock()
            .unwrap()
            .retain(|_, p| p.client != client);
        let left: Vec<String> = {
            let mut sessions = self.sessions.lock().unwrap();
            let left = sessions
                .iter()
                .filter(|(_, c)| **c == client)
                .map(|(s, _)| s.clone())
                .collect::<Vec<_>>();
            sessions.retain(|_, c| *c != client);
            left
        };
        for session in left {
            let detach =
                json!({ "method": "Target.detachFromTarget", "params": { "sessionId": session } });
            let _ = self.to_browser(RELAY, detach);
        }
    }
}
