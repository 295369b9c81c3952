//! Shared fixture for integration tests: one headless desktop per test binary with real
//! apps launched into it through `launch_app`, and helpers to call tools.
#![allow(dead_code)]

pub mod order_form;

use std::sync::OnceLock;

use cua::platform::DesktopEnv;
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolOutput, ToolRegistry};
use serde_json::{Value, json};

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

/// A context on the shared desktop that keeps snapshots between calls (element indices
/// from one get_window_state work in the next action).
pub struct Session {
    ctx: ToolContext,
    rt: tokio::runtime::Runtime,
    /// The desktop of a private session, stopped when the session ends.
    _sandbox: Option<Sandbox>,
}

impl Session {
    pub fn new() -> Session {
        Session {
            ctx: ToolContext::for_desktop(desktop().env.clone()),
            rt: runtime(),
            _sandbox: None,
        }
    }

    /// A session on a desktop of its own, for a test that other tests' windows would
    /// disturb (a window that takes the focus closes an open menu).
    pub fn private() -> Session {
        let sandbox = Sandbox::start(SandboxOptions {
            width: 1280,
            height: 800,
            ..Default::default()
        })
        .expect("sandbox starts");
        Session {
            ctx: ToolContext::for_desktop(sandbox.desktop()),
            rt: runtime(),
            _sandbox: Some(sandbox),
        }
    }

    pub fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, cua::errors::ToolError> {
        self.rt
            .block_on(ToolRegistry::new().call(&self.ctx, tool, args))
    }

    /// A call in a fresh context on the same desktop (a new platform connection, no
    /// caches): what a new cua process would see.
    pub fn fresh_call(
        &self,
        tool: &str,
        args: Value,
    ) -> Result<ToolOutput, cua::errors::ToolError> {
        let env = match &self._sandbox {
            Some(s) => s.desktop(),
            None => desktop().env.clone(),
        };
        self.rt
            .block_on(ToolRegistry::new().call(&ToolContext::for_desktop(env), tool, args))
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
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
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
