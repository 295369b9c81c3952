//! Benchmark: an agent's loop, back to back, on every toolkit of the conformance matrix,
//! with recording off and on, and cua-driver's loop beside it in the same run. A step is
//! what an agent does: read the window's tree (get_window_state, no screenshot), click the
//! fixture's "Increment" button by element index, then read the tree until its counter
//! shows the click (bounded: a click that never shows counts as lost). Each driver runs
//! its own MCP stdio server on one sandbox per toolkit; the blocks alternate (cua off,
//! cua-driver off, cua recorded, cua-driver recorded), each after warm-up steps.
//!
//! cua-driver runs where it is built: `CUA_DRIVER_BIN=/path/to/cua-driver cargo bench
//! --bench agent_loop` (docs/performance.md says how to build it); without it, its
//! columns say so. `cargo bench --bench agent_loop`.

#[path = "../tests/support/mcp_client.rs"]
#[allow(dead_code)]
mod mcp_client;
#[path = "support/stats.rs"]
mod stats;

use std::time::{Duration, Instant};

use cua::sandbox::{Sandbox, SandboxOptions};
use mcp_client::McpClient;
use serde_json::{Value, json};

const STEPS: usize = 15;
const WARMUP: usize = 2;
/// A click whose effect has not shown this long after it is lost.
const SHOW_WAIT: Duration = Duration::from_secs(3);

struct Toolkit {
    label: &'static str,
    launch: fn() -> Value,
}

fn fixture(script: &str) -> String {
    format!("{}/harness/apps/{script}", env!("CARGO_MANIFEST_DIR"))
}

fn script(name: &str, args: &[&str]) -> Value {
    json!({ "path": fixture(name), "additional_arguments": args, "creates_new_application_instance": true })
}

fn browser(name: &str) -> Value {
    json!({ "name": name, "urls": [format!("file://{}", fixture("fixture.html"))], "creates_new_application_instance": true })
}

const TOOLKITS: &[Toolkit] = &[
    Toolkit {
        label: "GTK 3",
        launch: || script("fixture_gtk3.py", &[]),
    },
    Toolkit {
        label: "GTK 4",
        launch: || script("fixture_gtk4.py", &[]),
    },
    Toolkit {
        label: "Qt 5",
        launch: || script("fixture_qt.py", &["5"]),
    },
    Toolkit {
        label: "Chromium",
        launch: || browser("chromium"),
    },
    Toolkit {
        label: "Firefox",
        launch: || browser("firefox-esr"),
    },
];

/// The counter's value in a get_window_state result ("Count: N" anywhere in it).
fn count(state: &Value) -> Option<u64> {
    let text = state.to_string();
    let at = text.find("Count: ")? + "Count: ".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The Increment button's index and the snapshot it is from.
fn increment(state: &Value) -> Option<(Value, Value)> {
    let found = state["elements"].as_array()?.iter().find(|e| {
        (e["name"] == "Increment" || e["label"] == "Increment")
            && e["role"].as_str().is_some_and(|r| r.contains("button"))
    })?;
    Some((found["element_index"].clone(), state["snapshot_id"].clone()))
}

struct Driver {
    name: &'static str,
    client: McpClient,
}

impl Driver {
    fn observe(&mut self, pid: u64, window_id: u64) -> Value {
        self.client.call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
        )["structuredContent"]
            .clone()
    }

    /// One agent step; its time, or None when the click never showed.
    fn step(&mut self, pid: u64, window_id: u64) -> Option<Duration> {
        let started = Instant::now();
        let state = self.observe(pid, window_id);
        let before = count(&state)?;
        let (index, snapshot) = increment(&state)?;
        let mut click = json!({ "pid": pid, "window_id": window_id, "element_index": index });
        if !snapshot.is_null() {
            click["snapshot_id"] = snapshot;
        }
        let out = self.client.call("click", click);
        if out["isError"] == true {
            eprintln!("{}: click failed: {out}", self.name);
            return None;
        }
        let clicked = Instant::now();
        loop {
            if count(&self.observe(pid, window_id)).is_some_and(|n| n > before) {
                return Some(started.elapsed());
            }
            if clicked.elapsed() > SHOW_WAIT {
                return None;
            }
        }
    }

    /// WARMUP steps, then STEPS measured: the median step, and how many clicks were lost.
    fn block(&mut self, pid: u64, window_id: u64) -> (Option<f64>, usize) {
        for _ in 0..WARMUP {
            self.step(pid, window_id);
        }
        let mut times = Vec::new();
        let mut lost = 0;
        for _ in 0..STEPS {
            match self.step(pid, window_id) {
                Some(t) => times.push(t.as_secs_f64() * 1000.0),
                None => lost += 1,
            }
        }
        if times.is_empty() {
            return (None, lost);
        }
        (Some(stats::median_p95(times).0), lost)
    }

    fn recording(&mut self, dir: Option<&std::path::Path>) {
        let out = match dir {
            Some(d) => self
                .client
                .call("start_recording", json!({ "output_dir": d })),
            None => self.client.call("stop_recording", json!({})),
        };
        assert_ne!(out["isError"], true, "{}: {out}", self.name);
    }
}

/// "412.0 ms", or what stood in the way.
fn shown(median: Option<f64>, lost: usize) -> String {
    match (median, lost) {
        (Some(m), 0) => format!("{m:.1} ms"),
        (Some(m), lost) => format!("{m:.1} ms ({lost} lost)"),
        (None, _) => "every click lost".into(),
    }
}

fn main() {
    let driver_bin = std::env::var("CUA_DRIVER_BIN")
        .ok()
        .filter(|p| std::path::Path::new(p).exists());
    println!(
        "| {STEPS} agent steps back to back, p50 per step | cua, recording off | cua, recorded | added by recording | cua-driver, recording off | cua-driver, recorded | cua-driver recorded / cua recorded |"
    );
    println!("|---|---|---|---|---|---|---|");
    for toolkit in TOOLKITS {
        let sandbox = Sandbox::start(SandboxOptions {
            width: 1280,
            height: 800,
        })
        .expect("sandbox");
        let envs = sandbox.env();
        let mut cua = Driver {
            name: "cua",
            client: McpClient::start(&envs, &[]),
        };
        let launched = cua.client.call("launch_app", (toolkit.launch)());
        let launched = &launched["structuredContent"];
        let (pid, window_id) = (
            launched["pid"].as_u64().expect("pid"),
            launched["windows"][0]["window_id"]
                .as_u64()
                .expect("window"),
        );
        // A page's tree is built after its window maps.
        let deadline = Instant::now() + Duration::from_secs(30);
        while increment(&cua.observe(pid, window_id)).is_none() {
            assert!(
                Instant::now() < deadline,
                "{}: no Increment button",
                toolkit.label
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let mut peer = driver_bin.as_deref().map(|bin| Driver {
            name: "cua-driver",
            client: McpClient::start_server(bin, &envs, &[]),
        });
        let dir = |who: &str| {
            std::env::temp_dir().join(format!(
                "cua-bench-loop-{}-{who}-{}",
                std::process::id(),
                toolkit.label.replace(' ', "")
            ))
        };
        let (cua_off, cua_off_lost) = cua.block(pid, window_id);
        let peer_off = peer.as_mut().map(|p| p.block(pid, window_id));
        cua.recording(Some(&dir("cua")));
        let (cua_on, cua_on_lost) = cua.block(pid, window_id);
        cua.recording(None);
        let peer_on = peer.as_mut().map(|p| {
            p.recording(Some(&dir("driver")));
            let on = p.block(pid, window_id);
            p.recording(None);
            on
        });
        let added = match (cua_on, cua_off) {
            (Some(on), Some(off)) => format!("{:+.1} ms", on - off),
            _ => "-".into(),
        };
        let not_built = || "not built (CUA_DRIVER_BIN)".to_string();
        let ratio = match (peer_on, cua_on) {
            (Some((Some(p), _)), Some(c)) => format!("{:.1}×", p / c),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            toolkit.label,
            shown(cua_off, cua_off_lost),
            shown(cua_on, cua_on_lost),
            added,
            peer_off.map(|(m, l)| shown(m, l)).unwrap_or_else(not_built),
            peer_on.map(|(m, l)| shown(m, l)).unwrap_or_else(not_built),
            ratio
        );
        for who in ["cua", "driver"] {
            let _ = std::fs::remove_dir_all(dir(who));
        }
        drop(peer);
        drop(cua);
        drop(sandbox);
    }
}
