//! Shared fixture for integration tests: one headless desktop per test binary with real
//! apps launched into it through `launch_app`, and helpers to call tools.
#![allow(dead_code)]

pub mod live;
pub mod order_form;

use std::sync::OnceLock;

use cua::platform::DesktopEnv;
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolOutput, ToolRegistry};
use serde_json::{Value, json};

/// The options of a desktop of a test's own: 1280×800, the rest as every sandbox.
pub fn private_desktop() -> SandboxOptions {
    SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    }
}

/// A sandbox of a test's own ([`private_desktop`]).
pub fn sandbox() -> Sandbox {
    Sandbox::start(private_desktop()).expect("sandbox")
}

/// A fresh, empty-to-be folder for a test's trajectory: `cua-PREFIX-NAME-PID` in the
/// temporary folder, anything left there by an earlier run removed.
pub fn scratch(prefix: &str, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cua-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `cua replay DIR --json [ARGS]` on `sandbox`'s desktop: its report (the process's own
/// output, shown when it is not JSON).
pub fn replay_json(sandbox: &Sandbox, dir: &std::path::Path, args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .arg("replay")
        .arg(dir)
        .arg("--json")
        .args(args)
        .envs(sandbox.env())
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "replay --json: {e}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `cua replay --plan DIR [ARGS]` (no desktop): what it prints; it must exit 0.
pub fn replay_plan(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["replay", "--plan"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An app launched into the shared desktop.
#[derive(Debug, Clone)]
pub struct App {
    pub pid: u64,
    pub window_id: u64,
}

impl App {
    /// The app a `launch_app` reply names (its first window).
    pub fn launched(reply: &ToolOutput) -> App {
        App {
            pid: reply.structured["pid"]
                .as_u64()
                .expect("launch_app gives a pid"),
            window_id: reply.structured["windows"][0]["window_id"]
                .as_u64()
                .expect("launch_app gives a window"),
        }
    }
}

/// `launch_app` arguments that start a fresh instance of a test app in tests/support.
pub fn support_app(script: &str) -> Value {
    json!({
        "path": format!("{}/tests/support/{script}", env!("CARGO_MANIFEST_DIR")),
        "creates_new_application_instance": true,
    })
}

pub struct Desktop {
    pub env: DesktopEnv,
    pub calculator: App,
    pub widget_factory: App,
    pub mousepad: App,
}

static DESKTOP: OnceLock<Desktop> = OnceLock::new();

/// The shared desktop, started on first use. Its processes die with the test binary: they
/// are started from a thread that lives as long as the process (parent-death signal).
pub fn desktop() -> &'static Desktop {
    DESKTOP.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let sandbox = Sandbox::start(SandboxOptions {
                width: 1280,
                height: 800,
                ..Default::default()
            })
            .expect("sandbox starts");
            let env = sandbox.desktop();
            tx.send(env).unwrap();
            // Keep the sandbox (and this thread) alive until the process exits.
            loop {
                std::thread::park();
            }
            #[allow(unreachable_code)]
            drop(sandbox);
        });
        let env = rx.recv().expect("sandbox env");
        let rt = runtime();
        let ctx = ToolContext::for_desktop(env.clone());
        let registry = ToolRegistry::new();
        let launch = |name: &str| {
            let out = rt
                .block_on(registry.call(&ctx, "launch_app", json!({ "name": name })))
                .unwrap_or_else(|e| panic!("launch {name}: {e}"));
            App::launched(&out)
        };
        // Order matters: the widget factory (larger than the screen) ends up covering the calculator.
        let calculator = launch("Calculator");
        let mousepad = launch("mousepad");
        let widget_factory = launch("gtk3-widget-factory");
        Desktop {
            env,
            calculator,
            widget_factory,
            mousepad,
        }
    })
}

pub fn runtime() -> tokio::runtime::Runtime {
    cua::tools::runtime().unwrap()
}

/// Calls a tool on the shared desktop in a fresh context.
pub fn call(tool: &str, args: Value) -> Result<ToolOutput, cua::errors::ToolError> {
    let d = desktop();
    let ctx = ToolContext::for_desktop(d.env.clone());
    runtime().block_on(ToolRegistry::new().call(&ctx, tool, args))
}

/// A context that keeps snapshots between calls (element indices from one
/// get_window_state work in the next action), on the shared desktop, a desktop of its own,
/// or a desktop the test started: what every integration test calls tools through.
pub struct Session {
    ctx: ToolContext,
    rt: tokio::runtime::Runtime,
    registry: ToolRegistry,
    env: DesktopEnv,
    /// The session id its calls carry (None: the connection's own).
    name: Option<String>,
    /// The desktop of a private session, stopped when the session ends.
    sandbox: Option<Sandbox>,
}

impl Session {
    /// On the shared desktop.
    pub fn new() -> Session {
        Session::for_desktop(desktop().env.clone())
    }

    /// On a desktop the test started (and stops).
    pub fn for_desktop(env: DesktopEnv) -> Session {
        Session {
            ctx: ToolContext::for_desktop(env.clone()),
            rt: runtime(),
            registry: ToolRegistry::new(),
            env,
            name: None,
            sandbox: None,
        }
    }

    /// A session on a desktop of its own, for a test that other tests' windows would
    /// disturb (a window that takes the focus closes an open menu).
    pub fn private() -> Session {
        Session::on(private_desktop())
    }

    /// A session on a sandbox of its own, started with `options`.
    pub fn on(options: SandboxOptions) -> Session {
        let sandbox = Sandbox::start(options).expect("sandbox starts");
        Session {
            ..Session::for_desktop(sandbox.desktop())
        }
        .owning(sandbox)
    }

    /// The same session, the apps it launches given `app_env` too (a fixture's journal).
    pub fn with_app_env(mut self, app_env: &[(&str, String)]) -> Session {
        self.env.app_env = app_env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        self.ctx = self.context();
        self
    }

    /// The same session under the session id `name` (a recording's session.json names it).
    pub fn named(mut self, name: &str) -> Session {
        self.name = Some(name.to_string());
        self.ctx = self.context();
        self
    }

    fn context(&self) -> ToolContext {
        match &self.name {
            Some(name) => ToolContext::for_session(self.env.clone(), name),
            None => ToolContext::for_desktop(self.env.clone()),
        }
    }

    fn owning(mut self, sandbox: Sandbox) -> Session {
        self.sandbox = Some(sandbox);
        self
    }

    /// The session's own sandbox, if it has one.
    pub fn own_sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_ref()
    }

    /// The session's own sandbox.
    pub fn sandbox(&self) -> &Sandbox {
        self.sandbox
            .as_ref()
            .expect("a session on a sandbox of its own")
    }

    pub fn ctx(&self) -> &ToolContext {
        &self.ctx
    }

    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Runs a future on the session's runtime (where its desktop connection lives).
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    pub fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, cua::errors::ToolError> {
        self.rt.block_on(self.registry.call(&self.ctx, tool, args))
    }

    /// Chromium launched by launch_app on the project's page `harness/apps/<page>`.
    pub fn chromium_on(&self, page: &str) -> App {
        let url = format!("file://{}/harness/apps/{page}", env!("CARGO_MANIFEST_DIR"));
        let launched = self
            .call("launch_app", json!({ "name": "chromium", "urls": [url] }))
            .expect("chromium launches");
        App::launched(&launched)
    }

    /// A call that must succeed: its structured result.
    pub fn ok(&self, tool: &str, args: Value) -> Value {
        self.call(tool, args.clone())
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
            .structured
    }

    /// The window's state, without a screenshot.
    pub fn state(&self, pid: &Value, window: &Value) -> Value {
        self.ok(
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
        )
    }

    /// The first element of the window that `pred` accepts, once it shows (bounded: a
    /// just-launched app's tree reaches the bus after its window, and a loaded machine
    /// read it empty); panics showing the tree.
    pub fn element(&self, pid: &Value, window: &Value, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        loop {
            let st = self.state(pid, window);
            let found = st["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| pred(e))
                .cloned();
            match found {
                Some(e) => return e,
                None if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(100))
                }
                None => panic!("no such element in\n{}", st["tree_markdown"]),
            }
        }
    }

    /// Replays a trajectory in this session.
    pub fn replay(
        &self,
        dir: &std::path::Path,
        opts: &cua::replay::ReplayOptions,
    ) -> cua::replay::ReplayReport {
        self.rt
            .block_on(cua::replay::replay(
                &self.ctx,
                &self.registry,
                dir,
                opts,
                |_| {},
            ))
            .unwrap_or_else(|e| panic!("replay {}: {e}", dir.display()))
    }

    /// A call in a fresh context on the same desktop (a new platform connection, no
    /// caches): what a new cua process would see.
    pub fn fresh_call(
        &self,
        tool: &str,
        args: Value,
    ) -> Result<ToolOutput, cua::errors::ToolError> {
        let ctx = ToolContext::for_desktop(self.env.clone());
        self.rt.block_on(self.registry.call(&ctx, tool, args))
    }
}

pub fn window_state(app: &App) -> ToolOutput {
    call(
        "get_window_state",
        json!({ "pid": app.pid, "window_id": app.window_id }),
    )
    .expect("get_window_state succeeds")
}

pub fn elements(state: &ToolOutput) -> Vec<Value> {
    state.structured["elements"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Decoded RGB screenshot of a tool output's PNG image.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Image {
    pub fn decode(png_bytes: &[u8]) -> Image {
        let img = image::load_from_memory(png_bytes)
            .expect("valid png")
            .to_rgb8();
        Image {
            width: img.width(),
            height: img.height(),
            rgb: img.into_raw(),
        }
    }

    pub fn pixel(&self, x: i64, y: i64) -> [u8; 3] {
        let i = ((y as u32 * self.width + x as u32) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    pub fn distinct_colors(&self) -> usize {
        let mut set = std::collections::HashSet::new();
        for px in self.rgb.chunks_exact(3) {
            set.insert([px[0], px[1], px[2]]);
        }
        set.len()
    }

    pub fn black_fraction(&self) -> f64 {
        let black = self
            .rgb
            .chunks_exact(3)
            .filter(|p| p.iter().all(|c| *c < 8))
            .count();
        black as f64 / (self.width * self.height) as f64
    }
}

pub fn frame(el: &Value) -> (i64, i64, i64, i64) {
    let f = &el["pixel_frame"];
    (
        f["x"].as_i64().unwrap(),
        f["y"].as_i64().unwrap(),
        f["w"].as_i64().unwrap(),
        f["h"].as_i64().unwrap(),
    )
}

/// The events a fixture app has journaled so far (`CUA_FIXTURE_JOURNAL`, JSON lines).
pub fn journal(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Copies a folder tree (goldens, fixtures) into `to`.
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    cua::files::copy_dir(from, to)
        .unwrap_or_else(|e| panic!("copy {} to {}: {e}", from.display(), to.display()));
}

/// Starts a fresh fixture app (harness/apps/fixture_<toolkit>.py) on a desktop, through
/// `cua call launch_app` so it journals to `journal`; its pid and window.
pub fn launch_fixture(
    env: Vec<(String, String)>,
    toolkit: &str,
    journal: &std::path::Path,
) -> (u64, u64) {
    let fixture = format!(
        "{}/harness/apps/fixture_{toolkit}.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["call", "launch_app"])
        .arg(json!({ "path": fixture, "creates_new_application_instance": true }).to_string())
        .envs(env)
        .env("CUA_FIXTURE_JOURNAL", journal)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "launch the fixture: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: Value = serde_json::from_slice(&out.stdout).expect("call prints JSON to a pipe");
    (
        reply["pid"].as_u64().unwrap(),
        reply["windows"][0]["window_id"].as_u64().unwrap(),
    )
}

/// `cua serve` on a socket, its environment given (a sandbox's, with a private config
/// home when asked), once it listens; stopped (SIGTERM, then waited for) when dropped.
pub struct Daemon {
    pub socket: std::path::PathBuf,
    child: std::process::Child,
    /// Waited for already: its pid may be another process's now.
    gone: bool,
}

impl Daemon {
    pub fn start(socket: &std::path::Path, envs: &[(String, String)]) -> Daemon {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cua"));
        command.envs(envs.iter().cloned());
        Daemon::spawn(command, socket)
    }

    /// `command` (a `cua` command with its environment) as `serve --socket SOCKET`.
    pub fn spawn(mut command: std::process::Command, socket: &std::path::Path) -> Daemon {
        let child = command
            .args(["serve", "--socket"])
            .arg(socket)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(socket).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the daemon did not listen on {}",
                socket.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Daemon {
            socket: socket.to_path_buf(),
            child,
            gone: false,
        }
    }

    /// SIGTERM, as `cua stop` or a service manager ends it; its exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        self.gone = true;
        self.child.wait().unwrap()
    }

    /// Its exit status once it has exited by itself, waiting at most `bound`.
    pub fn exited_within(
        &mut self,
        bound: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + bound;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.gone = true;
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// SIGKILL, as a crash would end it; returns once it is gone.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.gone = true;
    }

    /// `--socket PATH`, as a client takes it.
    pub fn socket_args(&self) -> [&str; 2] {
        ["--socket", self.socket.to_str().unwrap()]
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.gone {
            return;
        }
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

/// A sandbox of its own with a private config home (`XDG_CONFIG_HOME`), for a test that
/// runs cua processes (a daemon, its clients): the home is removed when dropped.
pub struct Home {
    pub sandbox: Sandbox,
    pub dir: std::path::PathBuf,
    /// The environment every cua process of the test gets.
    pub envs: Vec<(String, String)>,
}

impl Home {
    pub fn start(name: &str, (width, height): (u32, u32)) -> Home {
        let sandbox = Sandbox::start(SandboxOptions {
            width,
            height,
            ..Default::default()
        })
        .expect("sandbox");
        let dir = std::env::temp_dir().join(format!("cua-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut envs = sandbox.env();
        envs.push(("XDG_CONFIG_HOME".into(), dir.display().to_string()));
        Home { sandbox, dir, envs }
    }

    /// A daemon on `daemon.sock` in the home.
    pub fn daemon(&self) -> Daemon {
        Daemon::start(&self.dir.join("daemon.sock"), &self.envs)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The python of a venv under target/`name` with `package` (a pinned requirement)
/// installed: made, or made again when the pin changed since.
pub fn python_venv(name: &str, package: &str) -> std::path::PathBuf {
    use std::process::Command;
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(name);
    let ready = venv.join(".installed");
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(package) {
        let status = Command::new("/usr/bin/python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv)
            .status()
            .expect("python3 -m venv (apt: python3-venv)");
        assert!(status.success(), "python3 -m venv failed");
        let out = Command::new(venv.join("bin/pip"))
            .args(["install", "-q", package])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pip install {package}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(&ready, package).unwrap();
    }
    venv.join("bin/python")
}

/// What ffprobe says of a video's first stream (codec_name, pix_fmt, r_frame_rate) and
/// its format (duration, in seconds as a string).
pub fn probe_video(video: &std::path::Path) -> Value {
    let probe = std::process::Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "stream=codec_name,pix_fmt,r_frame_rate:format=duration",
            "-of",
            "json",
        ])
        .arg(video)
        .output()
        .expect("ffprobe runs");
    serde_json::from_slice(&probe.stdout).expect("ffprobe json")
}

/// A raw HTTP/1.1 GET with the given Host header (a test of a loopback page's Host check):
/// the whole reply, waited for 10 s at most.
pub fn http_get(addr: &str, path: &str, host: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}

/// Binds Chromium window `app` (get_browser_state's bind mode) once it shows the tab titled
/// `title` (the page loads after the window maps): the target's id and the active tab's.
pub fn bind_browser(session: &Session, app: &App, title: &str) -> (String, String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let bound = loop {
        let got = session.call(
            "get_browser_state",
            json!({ "pid": app.pid, "window_id": app.window_id }),
        );
        if let Ok(out) = &got {
            let tabs = out.structured["tabs"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if out.structured["binding_quality"] == "exact"
                && tabs.iter().any(|t| t["title"] == title)
            {
                break out.structured.clone();
            }
        }
        assert!(std::time::Instant::now() < deadline, "never bound: {got:?}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let tab = bound["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["active"] == true)
        .expect("an active tab");
    (
        bound["target_id"].as_str().unwrap().to_string(),
        tab["tab_id"].as_str().unwrap().to_string(),
    )
}

/// A child process (a server the test started), killed and reaped however the test ends.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
