//! `cua record --live`: recording by doing. The app is launched with recording on, and a
//! page on the loopback shows the desktop live; what a person does on that picture is
//! made the tool call an agent would make ([`input`]) and recorded as an ordinary turn,
//! and the page lists each turn as it is written.
//!
//! This module owns the serving: the page (over HTTP) and its one WebSocket (frames out,
//! events and turns), both on 127.0.0.1 under a one-time token ([`crate::loopback`]); a
//! second page is refused while one is connected. The connected page has threads of its
//! own ([`link`]), so frames keep coming while a call runs; a frame is pushed when the
//! screen changed ([`frames`]). What the page asks is answered in [`answer`] (a turn's
//! line, "Undo last", "Save as scenario") and [`inspect`] (the inspector). The recording
//! ends on Ctrl-C or when the app exits; every turn is written whole by the recorder, so a
//! page closed or a process stopped mid-way leaves a valid trajectory.

mod answer;
mod frames;
pub mod input;
mod inspect;
mod link;
mod scenario;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::WebSocket;

use crate::dispatch::{ToolContext, ToolRegistry};

/// How often the screen is looked at for a new frame (the page's frame rate at most).
const FRAME_EVERY: Duration = Duration::from_millis(80);
/// How long a read of the page's socket waits before the loop looks at the screen again.
const READ_WAIT: Duration = Duration::from_millis(15);
/// How often the app is checked for having exited.
const ALIVE_EVERY: Duration = Duration::from_millis(500);
/// How long a connection gets to finish its WebSocket handshake.
const HANDSHAKE_WAIT: Duration = Duration::from_secs(5);

const PAGE: &str = include_str!("page.html");

/// A live recording: the context its calls run in, and where "Save as scenario" writes.
pub struct Live {
    pub ctx: Arc<ToolContext>,
    pub registry: ToolRegistry,
    pub runtime: tokio::runtime::Handle,
    /// The folder of scenario files (`cua test --harness`).
    pub harness: PathBuf,
    /// Leave the recorded app running when the recording ends (`--keep-app`); else it is
    /// stopped, so the next replay on the same desktop starts it afresh.
    pub keep_app: bool,
}

impl Live {
    fn call(&self, tool: &str, args: Value) -> Result<Value, String> {
        self.runtime
            .block_on(self.registry.call(&self.ctx, tool, args))
            .map(|o| o.structured)
            .map_err(|e| format!("{tool}: {e}"))
    }

    /// Starts recording into `dir` and launches `app` (the first turn); serves the page
    /// until an interrupt or the app's exit, then stops the recording. `ready` gets the
    /// page's URL once both servers listen.
    pub fn record(&self, dir: &Path, app: &str, ready: impl FnOnce(&str)) -> Result<(), String> {
        let app = scenario::App::from_arg(app)?;
        crate::loopback::stop_on_interrupt()?;
        self.call(
            "set_recording",
            json!({ "enabled": true, "output_dir": dir }),
        )?;
        let mut launched = None;
        let served = self.launch_and_serve(dir, app, &mut launched, ready);
        let stopped = self.call("set_recording", json!({ "enabled": false }));
        // After the recording ends, so stopping the app is no turn of it.
        let quit = match launched.filter(|_| !self.keep_app) {
            Some(pid) => self.stop_app(pid),
            None => Ok(()),
        };
        served.and(stopped.map(|_| ())).and(quit)
    }

    /// Stops the recorded app, unless it has exited already.
    fn stop_app(&self, pid: u64) -> Result<(), String> {
        let platform = self
            .runtime
            .block_on(self.ctx.platform())
            .map_err(|e| e.to_string())?;
        if !self.runtime.block_on(platform.process_running(pid as u32)) {
            return Ok(());
        }
        // kill_app returns once the app and its windows are gone: a replay started right
        // after cannot find them.
        self.call("kill_app", json!({ "pid": pid }))
            .map(|_| ())
            .map_err(|e| format!("stopping the recorded app (pid {pid}): {e}"))
    }

    /// Launches the app (its pid into `launched`) and serves the page until Ctrl-C or the
    /// app's exit.
    fn launch_and_serve(
        &self,
        dir: &Path,
        app: scenario::App,
        launched_pid: &mut Option<u64>,
        ready: impl FnOnce(&str),
    ) -> Result<(), String> {
        // A fresh recording: the launch is its first turn.
        let launch_turn = self.ctx.recorder.state().next_turn;
        let launched = self.call("launch_app", app.launch_args())?;
        let pid = launched["pid"]
            .as_u64()
            .ok_or_else(|| format!("launch_app gave no pid: {launched}"))?;
        *launched_pid = Some(pid);
        let window = &launched["windows"][0];
        let platform = self
            .runtime
            .block_on(self.ctx.platform())
            .map_err(|e| e.to_string())?;
        let screen = self
            .runtime
            .block_on(platform.screen_size())
            .unwrap_or((0, 0));
        let recorded = scenario::Recorded {
            dir: dir.to_path_buf(),
            harness: self.harness.clone(),
            app,
            window_title: window["title"].as_str().unwrap_or_default().to_string(),
            window_id: window["window_id"].as_u64().unwrap_or(0),
            screen,
        };
        let recording = answer::Recording {
            scenario: recorded,
            launch_turn,
            next_turn: std::cell::Cell::new(launch_turn + 1),
        };
        let token = crate::loopback::one_time_token()?;
        let sockets = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("listening: {e}"))?;
        let ws_port = sockets.local_addr().map_err(|e| e.to_string())?.port();
        sockets
            .set_nonblocking(true)
            .map_err(|e| format!("listening: {e}"))?;
        let done = Arc::new(AtomicBool::new(false));
        let page = serve_page(&token, ws_port, done.clone())?;
        ready(&page.url);
        let listening = Listening {
            sockets,
            token,
            port: ws_port,
        };
        let result = self.serve_sockets(&listening, platform, pid as u32, &recording);
        done.store(true, Ordering::SeqCst);
        let _ = page.thread.join();
        result
    }

    /// The page's sockets, one at a time, until an interrupt or the app's exit.
    fn serve_sockets(
        &self,
        listening: &Listening,
        platform: Arc<dyn crate::platform::Platform>,
        pid: u32,
        recording: &answer::Recording,
    ) -> Result<(), String> {
        let mut page: Option<link::PageLink> = None;
        let mut checked = Instant::now();
        loop {
            let ended = if crate::loopback::interrupted() {
                Some("recording stopped (interrupted)".to_string())
            } else if checked.elapsed() >= ALIVE_EVERY && !app_alive(pid) {
                Some(format!("the app (pid {pid}) exited: recording stopped"))
            } else {
                None
            };
            if let Some(reason) = ended {
                eprintln!("{reason}");
                if let Some(p) = &page {
                    p.say(json!({ "kind": "ended", "reason": reason }));
                }
                return Ok(());
            }
            if checked.elapsed() >= ALIVE_EVERY {
                checked = Instant::now();
            }
            if let Ok((stream, _)) = listening.sockets.accept() {
                match handshake(stream, &listening.token, listening.port, page.is_some()) {
                    Ok(ws) => {
                        let runtime = self.runtime.clone();
                        page = Some(link::PageLink::start(
                            ws,
                            platform.clone(),
                            runtime,
                            FRAME_EVERY,
                        ));
                    }
                    Err(why) => eprintln!("a page's connection refused: {why}"),
                }
            }
            let Some(p) = page.as_mut() else {
                std::thread::sleep(READ_WAIT);
                continue;
            };
            match p.next_event(READ_WAIT) {
                link::Next::Event(text) => {
                    let reply = self.message(&text, &mut p.last_window, recording);
                    p.say(reply);
                }
                link::Next::Nothing => {}
                link::Next::Gone => page = None,
            }
        }
    }
}

/// The page's WebSocket listener, its token and port.
struct Listening {
    sockets: TcpListener,
    token: String,
    port: u16,
}

/// Whether process `pid` still runs (a zombie, exited but not yet reaped, does not).
fn app_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) if Path::new("/proc/self").exists() => false,
        Err(_) => nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok(),
    }
}

/// The WebSocket handshake of a new connection: only at `/<token>/ws` (else 403), for `Host`
/// `127.0.0.1:<port>`, and only while no other page is connected.
fn handshake(
    stream: TcpStream,
    token: &str,
    port: u16,
    busy: bool,
) -> Result<WebSocket<TcpStream>, String> {
    use tungstenite::handshake::server::{ErrorResponse, Request, Response};
    stream.set_nonblocking(false).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(HANDSHAKE_WAIT))
        .map_err(|e| e.to_string())?;
    let host = format!("127.0.0.1:{port}");
    let refuse = |status: u16, why: &str| {
        let mut r = ErrorResponse::new(Some(why.to_string()));
        *r.status_mut() = tungstenite::http::StatusCode::from_u16(status).unwrap_or_default();
        r
    };
    // tungstenite's handshake callback returns its own (large) error response.
    #[allow(clippy::result_large_err)]
    let check = |req: &Request, resp: Response| {
        let host_ok = req
            .headers()
            .get("host")
            .is_some_and(|h| h.as_bytes() == host.as_bytes());
        if req.uri().path() != format!("/{token}/ws") {
            return Err(refuse(403, "forbidden: wrong token"));
        }
        if !host_ok {
            return Err(refuse(403, "forbidden: unexpected Host"));
        }
        if busy {
            return Err(refuse(409, "another page is recording already"));
        }
        Ok(resp)
    };
    let ws = tungstenite::accept_hdr(stream, check).map_err(|e| e.to_string())?;
    ws.get_ref()
        .set_read_timeout(Some(READ_WAIT))
        .map_err(|e| e.to_string())?;
    Ok(ws)
}

/// The page's HTTP server, running until `done`.
struct PageServer {
    url: String,
    thread: std::thread::JoinHandle<()>,
}

fn serve_page(token: &str, ws_port: u16, done: Arc<AtomicBool>) -> Result<PageServer, String> {
    let server = tiny_http::Server::http("127.0.0.1:0").map_err(|e| format!("listening: {e}"))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or("the page server has no TCP port")?;
    let host = format!("127.0.0.1:{port}");
    let url = format!("http://{host}/{token}/");
    let html = PAGE
        .replace("__WS_PORT__", &ws_port.to_string())
        .replace("__TOKEN__", token);
    let page_path = format!("/{token}/");
    let thread = std::thread::spawn(move || {
        while !done.load(Ordering::SeqCst) {
            let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(100)) else {
                continue;
            };
            let host_ok = request
                .headers()
                .iter()
                .any(|h| h.field.equiv("Host") && h.value.as_str() == host);
            let (status, body, kind) = match (host_ok, request.url() == page_path) {
                (false, _) => (403, "forbidden: unexpected Host".to_string(), "text/plain"),
                (true, false) => (403, "forbidden: wrong token".to_string(), "text/plain"),
                (true, true) => (200, html.clone(), "text/html; charset=utf-8"),
            };
            let header = tiny_http::Header::from_bytes("Content-Type", kind).expect("a header");
            let response = tiny_http::Response::from_string(body)
                .with_status_code(status)
                .with_header(header);
            let _ = request.respond(response);
        }
    });
    Ok(PageServer { url, thread })
}
