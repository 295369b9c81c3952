//! The page relay (the `cua-page-relay` helper): launch_app starts it in a browser's place;
//! it starts the browser, holds its debugging connection for the browser's life, and
//! serves it on a Unix socket in cua's state folder (the folder 0700, the socket 0600), so
//! only this user's processes drive the browser's pages. It ends with the browser, with
//! its exit code. Page calls connect per call, as they opened a WebSocket before; messages
//! on the socket are the protocol's JSON, each ended by a NUL.
//!
//! - [`pipe`]: Chromium on `--remote-debugging-pipe`: CDP on the browser's fds 3 and 4,
//!   which no other process can reach; several clients at once share the one pipe.
//! - [`bidi`]: Firefox, which has no pipe for WebDriver BiDi, only a port on 127.0.0.1, but
//!   takes one session at a time: the relay opens that session as the browser starts and
//!   holds it, so another user who dials the port cannot open one; clients take turns.

mod bidi;
mod pipe;

use std::io::{BufRead, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

pub use crate::platform::page_relay::{HELPER, HELPER_ENV, Mode, socket_dir, socket_path};

/// Runs the relay with `args` = MODE DIR PROGRAM [ARGS...]: serves in DIR, starts PROGRAM
/// with ARGS. The browser's exit code, or why the relay could not start or hold it.
pub fn run(args: &[String]) -> Result<i32, String> {
    let usage = || format!("usage: {HELPER} cdp-pipe|bidi-session SOCKET_DIR PROGRAM [ARGS...]");
    let [mode, dir, program, rest @ ..] = args else {
        return Err(usage());
    };
    let mode = Mode::parse(mode).ok_or_else(usage)?;
    let (listener, socket) = listen(Path::new(dir))?;
    let served = match mode {
        Mode::CdpPipe => pipe::serve(listener, program, rest),
        Mode::BidiSession => bidi::serve(listener, program, rest),
    };
    let _ = std::fs::remove_file(&socket);
    served
}

/// This relay's socket in `dir`: the folder made private first, and relays' sockets left
/// behind (killed with their desktop) removed.
fn listen(dir: &Path) -> Result<(UnixListener, PathBuf), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
    remove_stale_sockets(dir);
    let socket = socket_path(dir, std::process::id());
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).map_err(|e| format!("{}: {e}", socket.display()))?;
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: {e}", socket.display()))?;
    Ok((listener, socket))
}

/// Sockets of relays that died without removing theirs (killed with their desktop).
fn remove_stale_sockets(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_suffix(".sock")
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// One message of the socket's framing, without its NUL; None at the end of the stream
/// (or for a message the end cut). The relay and the page client both read with this.
pub fn read_message(reader: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut message = Vec::new();
    reader.read_until(0, &mut message)?;
    Ok((message.pop() == Some(0)).then_some(message))
}

/// Writes one message and the NUL that ends it.
pub fn write_message(writer: &mut impl Write, message: &str) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(message.len() + 1);
    bytes.extend_from_slice(message.as_bytes());
    bytes.push(0);
    writer.write_all(&bytes)
}
