//! Benchmark: an agent's loop, back to back, on every toolkit of the conformance matrix,
//! with recording off and on, and cua-driver's loop beside it in the same run. A step is
//! what an agent does: read the window's tree (get_window_state, no screenshot), click the
//! fixture's "Increment" button by element index, then read the tree until its counter
//! shows the click (bounded: a click that never shows counts as lost). Each driver runs
//! its own MCP stdio server on one sandbox per toolkit; the blocks alternate (cua off, cua
//! recorded, cua recorded with video, cua-driver off, cua-driver recorded), each after
//! warm-up steps, in two rounds.
//!
//! The SDL fixture (pygame) has no tree: each of its reads is OCR of the window.
//!
//! The GTK 3, GTK 4 and Qt 6 fixtures run again as native Wayland clients in a headless
//! sway, a headless GNOME Shell and a headless KWin: the same loop through the Wayland
//! and GNOME display servers (cua-driver has neither).
//!
//! cua-driver runs where it is built: `CUA_DRIVER_BIN=/path/to/cua-driver cargo bench
//! --bench agent_loop` (docs/performance.md says how to build it); without it, its
//! columns say so. `cargo bench --bench agent_loop` (CUA_BENCH_TOOLKITS=Wayland runs only the
//! rows whose label holds that word).

#[path = "../tests/support/mcp_client.rs"]
#[allow(dead_code)]
mod mcp_client;
#[path = "support/stats.rs"]
mod stats;

use std::time::{Duration, Instant};

use cua::sandbox::{Backend, Sandbox, SandboxOptions};
use mcp_client::McpClient;
use serde_json::{Value, json};

/// Each block: WARMUP steps, then STEPS measured; every block runs ROUNDS times.
const STEPS: usize = 10;
const WARMUP: usize = 2;
const ROUNDS: usize = 2;
/// A click whose effect has not shown this long after it is lost.
const SHOW_WAIT: Duration = Duration::from_secs(3);

struct Toolkit {
    label: &'static str,
    launch: fn() -> Value,
    backend: Backend,
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
        backend: Backend::X11,
    },
    Toolkit {
        label: "GTK 4",
        launch: || script("fixture_gtk4.py", &[]),
        backend: Backend::X11,
    },
    Toolkit {
        label: "Qt 5",
        launch: || script("fixture_qt.py", &["5"]),
        backend: Backend::X11,
    },
    Toolkit {
        label: "Qt 6",
        launch: || script("fixture_qt.py", &["6"]),
        backend: Backend::X11,
    },
    Toolkit {
        label: "Chromium",
        launch: || browser("chromium"),
        backend: Backend::X11,
    },
    Toolkit {
        label: "Firefox",
        launch: || browser("firefox-esr"),
        backend: Backend::X11,
    },
    // No accessibility tree: every read is OCR of the window (new pixels after each click).
    Toolkit {
        label: "SDL (OCR)",
        launch: || script("fixture_sdl.py", &[]),
        backend: Backend::X11,
    },
    // The same fixtures as native Wayland clients in a headless sway (cua-driver has no
    // Wayland backend: its columns say so).
    Toolkit {
        label: "GTK 3 (Wayland)",
        launch: || script("fixture_gtk3.py", &[]),
        backend: Backend::Wayland,
    },
    Toolkit {
        label: "GTK 4 (Wayland)",
        launch: || script("fixture_gtk4.py", &[]),
        backend: Backend::Wayland,
    },
    Toolkit {
        label: "Qt 6 (Wayland)",
        launch: || script("fixture_qt.py", &["6"]),
        backend: Backend::Wayland,
    },
    // And in a headless GNOME Shell, through cua's Shell extension.
    Toolkit {
        label: "GTK 3 (GNOME)",
        launch: || script("fixture_gtk3.py", &[]),
        backend: Backend::Gnome,
    },
    Toolkit {
        label: "GTK 4 (GNOME)",
        launch: || script("fixture_gtk4.py", &[]),
        backend: Backend::Gnome,
    },
    Toolkit {
        label: "Qt 6 (GNOME)",
        launch: || script("fixture_qt.py", &["6"]),
        backend: Backend::Gnome,
    },
    // And in a headless KWin, through its own protocols.
    Toolkit {
        label: "GTK 3 (KDE)",
        launch: || script("fixture_gtk3.py", &[]),
        backend: Backend::Kde,
    },
    Toolkit {
        label: "GTK 4 (KDE)",
        launch: || script("fixture_gtk4.py", &[]),
        backend: Backend::Kde,
    },
    Toolkit {
        label: "Qt 6 (KDE)",
        launch: || script("fixture_qt.py", &["6"]),
        backend: Backend::Kde,
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

/// The Increment button's index and the snapshot it is from (its text, where the window
/// is read by OCR).
fn increment(state: &Value) -> Option<(Value, Value)> {
    let found = state["elements"].as_array()?.iter().find(|e| {
        (e["name"] == "Increment" || e["label"] == "Increment")
            && e["role"]
                .as_str()
                .is_some_and(|r| r.contains("button") || r == cua::platform::OCR_TEXT_ROLE)
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

    /// WARMUP steps, then STEPS measured into `tally`.
    fn block(&mut self, pid: u64, window_id: u64, tally: &mut Tally) {
        for _ in 0..WARMUP {
            self.step(pid, window_id);
        }
        for _ in 0..STEPS {
            match self.step(pid, window_id) {
                Some(t) => tally.times.push(t.as_secs_f64() * 1000.0),
                None => tally.lost += 1,
            }
        }
    }

    /// A block with recording on (and the video with it, when `video`), into a new folder.
    fn recorded_block(
        &mut self,
        pid: u64,
        window_id: u64,
        dir: &std::path::Path,
        video: bool,
        tally: &mut Tally,
    ) {
        self.start_recording(dir, video);
        self.block(pid, window_id, tally);
        self.stop_recording();
        let _ = std::fs::remove_dir_all(dir);
    }

    fn start_recording(&mut self, dir: &std::path::Path, video: bool) {
        let out = self.client.call(
            "start_recording",
            json!({ "output_dir": dir, "record_video": video }),
        );
        assert_ne!(out["isError"], true, "{}: {out}", self.name);
    }

    fn stop_recording(&mut self) {
        let out = self.client.call("stop_recording", json!({}));
        assert_ne!(out["isError"], true, "{}: {out}", self.name);
    }
}

/// One way of running the loop, over all rounds: step times (ms) and lost clicks.
#[derive(Default)]
struct Tally {
    times: Vec<f64>,
    lost: usize,
}

impl Tally {
    fn median(&self) -> Option<f64> {
        (!self.times.is_empty()).then(|| stats::median_p95(self.times.clone()).0)
    }

    /// "412.0 ms", or what stood in the way.
    fn shown(&self) -> String {
        match (self.median(), self.lost) {
            (Some(m), 0) => format!("{m:.1} ms"),
            (Some(m), lost) => format!("{m:.1} ms ({lost} lost)"),
            (None, _) => "every click lost".into(),
        }
    }
}

fn main() {
    let driver_bin = std::env::var("CUA_DRIVER_BIN")
        .ok()
        .filter(|p| std::path::Path::new(p).exists());
    println!(
        "| {} agent steps back to back, p50 per step | cua, recording off | cua, recorded | added by recording | cua, recorded with video | cua-driver, recording off | cua-driver, recorded | cua-driver recorded / cua recorded |",
        STEPS * ROUNDS
    );
    println!("|---|---|---|---|---|---|---|---|");
    // CUA_BENCH_TOOLKITS=Wayland,Qt runs the rows whose label holds one of the words.
    let only = std::env::var("CUA_BENCH_TOOLKITS").ok();
    for toolkit in TOOLKITS.iter().filter(|t| {
        only.as_deref()
            .is_none_or(|w| w.split(',').any(|w| t.label.contains(w)))
    }) {
        let sandbox = Sandbox::start(SandboxOptions {
            width: 1280,
            height: 800,
            backend: toolkit.backend,
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
        let mut peer = driver_bin
            .as_deref()
            .filter(|_| toolkit.backend == Backend::X11)
            .map(|bin| Driver {
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
        let [
            mut cua_off,
            mut cua_on,
            mut cua_video,
            mut peer_off,
            mut peer_on,
        ] = std::array::from_fn(|_| Tally::default());
        // Rounds of every block, so a drift in the machine's load reaches all alike.
        for round in 0..ROUNDS {
            cua.block(pid, window_id, &mut cua_off);
            for (tag, video, tally) in
                [("cua", false, &mut cua_on), ("video", true, &mut cua_video)]
            {
                // Video grabs an X screen: not on Wayland yet.
                if video && toolkit.backend.is_wayland() {
                    continue;
                }
                let folder = dir(&format!("{tag}-{round}"));
                cua.recorded_block(pid, window_id, &folder, video, tally);
            }
            if let Some(p) = peer.as_mut() {
                p.block(pid, window_id, &mut peer_off);
                let folder = dir(&format!("peer-{round}"));
                p.recorded_block(pid, window_id, &folder, false, &mut peer_on);
            }
        }
        let added = match (cua_on.median(), cua_off.median()) {
            (Some(on), Some(off)) => format!("{:+.1} ms", on - off),
            _ => "-".into(),
        };
        let peer_shown = |t: &Tally| match peer {
            Some(_) => t.shown(),
            None if toolkit.backend.is_wayland() => "no Wayland backend".to_string(),
            None => "not built (CUA_DRIVER_BIN)".to_string(),
        };
        let ratio = match (peer_on.median(), cua_on.median()) {
            (Some(p), Some(c)) => format!("{:.1}×", p / c),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            toolkit.label,
            cua_off.shown(),
            cua_on.shown(),
            added,
            if toolkit.backend.is_wayland() {
                "not on Wayland yet".to_string()
            } else {
                cua_video.shown()
            },
            peer_shown(&peer_off),
            peer_shown(&peer_on),
            ratio
        );
        drop(peer);
        drop(cua);
        drop(sandbox);
    }
}
