//! Firefox: WebDriver BiDi on a port Firefox picks on 127.0.0.1 (it has no pipe for it).
//! Firefox takes one session at a time: the relay opens it as soon as the port is up and
//! holds it for the browser's life, so another user who dials the port cannot open one
//! (Firefox answers "session not created"). Clients take turns on that session, one
//! connection at a time, each command answered before the next is read; a client's
//! `session.new` and `session.end` are answered by the relay, whose session it is.

use std::io::BufReader;
use std::net::TcpStream;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

use super::{read_message, write_message};

/// How long Firefox may take to open its port after it starts.
const PORT_WAIT: Duration = Duration::from_secs(60);
/// How long Firefox may take to answer one command (a page call's own bound is 10 s).
const ANSWER_WAIT: Duration = Duration::from_secs(15);
/// A client that sends nothing for this long gives its turn up (a call takes at most 10 s).
const CLIENT_IDLE: Duration = Duration::from_secs(15);

/// Starts Firefox (`program` with `args`, which name its `--profile`), opens its one BiDi
/// session and serves it on `listener` until Firefox exits; its exit code. When another
/// process took the session first, Firefox is closed and that is the error.
pub(super) fn serve(listener: UnixListener, program: &str, args: &[String]) -> Result<i32, String> {
    let profile = args
        .iter()
        .position(|a| a == "--profile" || a == "-profile")
        .and_then(|i| args.get(i + 1))
        .ok_or("Firefox needs a --profile the relay can read its port from")?;
    let server_file = Path::new(profile).join("WebDriverBiDiServer.json");
    let _ = std::fs::remove_file(&server_file);
    let mut child = Command::new(program)
        .args(args)
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    let session = match open_session(&server_file, &mut child) {
        Ok(session) => session,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    std::thread::spawn(move || take_turns(listener, session));
    let status = child.wait().map_err(|e| e.to_string())?;
    Ok(status.code().unwrap_or(1))
}

/// The session: Firefox's port from its profile once it listens, and `session.new` on it.
fn open_session(
    server_file: &Path,
    child: &mut std::process::Child,
) -> Result<WebSocket<TcpStream>, String> {
    let deadline = Instant::now() + PORT_WAIT;
    let (host, port) = loop {
        let server: Value = std::fs::read_to_string(server_file)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        if let (Some(host), Some(port)) = (server["ws_host"].as_str(), server["ws_port"].as_u64()) {
            break (host.to_string(), port as u16);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("Firefox ended ({status}) before opening its port"));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "Firefox wrote no {} within {} s",
                server_file.display(),
                PORT_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let url = format!("ws://{host}:{port}/session");
    let stream = TcpStream::connect((host.as_str(), port)).map_err(|e| format!("{url}: {e}"))?;
    let (mut ws, _) = tungstenite::client(&url, stream).map_err(|e| format!("{url}: {e}"))?;
    let reply = exchange(
        &mut ws,
        json!({ "id": 0, "method": "session.new", "params": { "capabilities": {} } }),
    )?;
    if reply["type"] != "success" {
        return Err(format!(
            "another process took Firefox's only WebDriver BiDi session before cua could ({}: {}); Firefox was closed",
            reply["error"].as_str().unwrap_or("error"),
            reply["message"].as_str().unwrap_or_default()
        ));
    }
    Ok(ws)
}

/// Sends one command and reads until its reply (events are dropped: no client subscribes).
fn exchange(ws: &mut WebSocket<TcpStream>, command: Value) -> Result<Value, String> {
    let id = command["id"].clone();
    ws.send(Message::text(command.to_string()))
        .map_err(|e| format!("Firefox: {e}"))?;
    let deadline = Instant::now() + ANSWER_WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "Firefox did not answer within {} s",
                ANSWER_WAIT.as_secs()
            ));
        }
        let _ = ws.get_ref().set_read_timeout(Some(left));
        match ws.read() {
            Ok(Message::Text(text)) => {
                let reply: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                if reply.get("id") == Some(&id) {
                    return Ok(reply);
                }
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(format!("Firefox: {e}")),
        }
    }
}

/// Serves clients one at a time on the held session.
fn take_turns(listener: UnixListener, mut session: WebSocket<TcpStream>) {
    let mut next_id: u64 = 1;
    for stream in listener.incoming().flatten() {
        let _ = stream.set_read_timeout(Some(CLIENT_IDLE));
        let Ok(mut writer) = stream.try_clone() else {
            continue;
        };
        let mut reader = BufReader::new(stream);
        while let Ok(Some(message)) = read_message(&mut reader) {
            let Ok(mut command) = serde_json::from_slice::<Value>(&message) else {
                break;
            };
            let id = command["id"].clone();
            let reply = match command["method"].as_str().unwrap_or_default() {
                "session.new" => {
                    json!({ "type": "success", "id": id, "result": { "sessionId": "cua-page-relay", "capabilities": {} } })
                }
                "session.end" => json!({ "type": "success", "id": id, "result": {} }),
                _ => {
                    command["id"] = json!(next_id);
                    next_id += 1;
                    match exchange(&mut session, command) {
                        Ok(mut reply) => {
                            reply["id"] = id;
                            reply
                        }
                        Err(e) => {
                            json!({ "type": "error", "id": id, "error": "unknown error", "message": e })
                        }
                    }
                }
            };
            if write_message(&mut writer, &reply.to_string()).is_err() {
                break;
            }
        }
        let _ = UnixStream::shutdown(&writer, std::net::Shutdown::Both);
    }
}
