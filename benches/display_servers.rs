//! Benchmark: what observing and acting cost on each display server cua drives, side by
//! side in one run: X11 (Xvfb), sway, GNOME Shell and KWin, each a headless sandbox of its
//! own, one at a time, with the same GTK 3 fixture as a native client.
//!
//! Each back to back over MCP, p50 after warm-up:
//! - a screenshot of the window (PNG): XGetImage, wlroots screencopy, cua's Shell
//!   extension, KWin's ScreenShot2;
//! - a click by point on Increment, until the fixture's journal has it: XTest, the wlroots
//!   virtual pointer, the Shell extension's Clutter virtual devices, KWin's fake input;
//! - a key into the focused Name field, until the journal has it.
//!
//! Everything is foreground (the seat's pointer and keyboard), the one route every display
//! server has. A click or key that never arrives is counted as lost. The tree reads and
//! element actions are AT-SPI on every display server; their loop is in benches/agent_loop.rs.
//!
//! `cargo bench --bench display_servers` (CUA_BENCH_BACKENDS=x11,kde runs only those).

#[path = "../tests/support/mcp_client.rs"]
#[allow(dead_code)]
mod mcp_client;
#[path = "support/stats.rs"]
mod stats;

use std::path::Path;
use std::time::{Duration, Instant};

use cua::sandbox::{Backend, Sandbox, SandboxOptions};
use mcp_client::McpClient;
use serde_json::{Value, json};

const RUNS: usize = 30;
const WARMUP: usize = 3;
/// A click or key whose journal line has not come this long after it was sent is lost.
const ARRIVE_WAIT: Duration = Duration::from_secs(3);

const BACKENDS: &[(Backend, &str)] = &[
    (Backend::X11, "X11 (Xvfb)"),
    (Backend::Wayland, "sway"),
    (Backend::Gnome, "GNOME Shell"),
    (Backend::Kde, "KWin"),
];

/// A measured action: its p50 in ms and how many of the runs never arrived.
type Timing = (f64, usize);

/// What is measured on each display server, in the order of a column's timings.
const ACTIONS: [&str; 3] = [
    "screenshot of the window (PNG)",
    "a click by point, until the app has it",
    "a key into the focused field, until the app has it",
];

/// One display server's timings, in the order of [`ACTIONS`].
type Column = [Timing; 3];

/// How many journal lines `path` holds that contain every one of `needles`.
fn journal_count(path: &Path, needles: &[&str]) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| {
        t.lines()
            .filter(|l| needles.iter().all(|n| l.contains(n)))
            .count()
    })
}

/// Median of `RUNS` timings of `f` after `WARMUP` untimed ones; how many returned false.
fn measure(f: impl FnMut() -> bool) -> (f64, usize) {
    stats::measure(RUNS, WARMUP, f)
}

/// Sends with `send`, then waits (bounded) until the journal holds one more line with
/// `needles`: the app has the input.
fn until_journaled(journal: &Path, needles: &[&str], send: &mut dyn FnMut()) -> bool {
    let before = journal_count(journal, needles);
    send();
    let deadline = Instant::now() + ARRIVE_WAIT;
    while journal_count(journal, needles) == before {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

fn element<'a>(state: &'a Value, name: &str) -> &'a Value {
    state["structuredContent"]["elements"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["name"] == name))
        .unwrap_or_else(|| panic!("no {name:?} in the fixture's tree"))
}

fn measure_on(backend: Backend) -> Result<Column, String> {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        backend,
    })
    .map_err(|e| e.to_string())?;
    let journal = sandbox.dir().join("journal.jsonl");
    let mut envs = sandbox.env();
    envs.push((
        "CUA_FIXTURE_JOURNAL".into(),
        journal.to_string_lossy().into_owned(),
    ));
    let mut cua = McpClient::start(&envs, &[]);
    let launched = cua.call(
        "launch_app",
        json!({ "path": format!("{}/harness/apps/fixture_gtk3.py", env!("CARGO_MANIFEST_DIR")) }),
    );
    let launched = &launched["structuredContent"];
    let pid = launched["pid"].as_u64().ok_or("launch_app gave no pid")?;
    let window_id = launched["windows"][0]["window_id"]
        .as_u64()
        .ok_or("launch_app gave no window")?;
    let at = json!({ "pid": pid, "window_id": window_id, "delivery_mode": "foreground" });
    let state = cua.call(
        "get_window_state",
        json!({ "pid": pid, "window_id": window_id }),
    );
    let with = |extra: Value| {
        let mut args = at.clone();
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    let f = &element(&state, "Increment")["pixel_frame"];
    let (x, y) = (
        f["x"].as_i64().unwrap() + f["w"].as_i64().unwrap() / 2,
        f["y"].as_i64().unwrap() + f["h"].as_i64().unwrap() / 2,
    );
    let name_field = element(&state, "Name")["element_index"].clone();
    let click = with(json!({ "x": x, "y": y }));
    let key = with(json!({ "key": "a" }));

    let screenshot = measure(|| {
        let out: Value = cua.call("screenshot", json!({ "window_id": window_id }));
        out["isError"] != true
    });
    let click = measure(|| {
        until_journaled(&journal, &["\"clicked\"", "Increment"], &mut || {
            cua.call("click", click.clone());
        })
    });
    cua.call("click", with(json!({ "element_index": name_field })));
    let key = measure(|| {
        until_journaled(&journal, &["\"changed\"", "Name"], &mut || {
            cua.call("press_key", key.clone());
        })
    });
    drop(cua);
    drop(sandbox);
    Ok([screenshot, click, key])
}

fn shown((ms, lost): Timing, base: Option<f64>) -> String {
    let ratio = base.map_or(String::new(), |b| format!(" ({:.1}×)", ms / b));
    if lost == 0 {
        format!("{ms:.1} ms{ratio}")
    } else {
        format!("{ms:.1} ms{ratio}, {lost} lost")
    }
}

fn main() {
    let only = std::env::var("CUA_BENCH_BACKENDS").ok();
    let chosen: Vec<_> = BACKENDS
        .iter()
        .filter(|(b, _)| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|w| w.trim() == b.name()))
        })
        .collect();
    let columns: Vec<_> = chosen
        .iter()
        .map(|(backend, label)| {
            eprintln!("measuring on {label}…");
            (label, measure_on(*backend))
        })
        .collect();
    let x11 = columns
        .iter()
        .find(|(l, _)| **l == BACKENDS[0].1)
        .and_then(|(_, c)| c.as_ref().ok());

    print!("| GTK 3 fixture, {RUNS} back to back, p50 (× X11)");
    for (label, _) in &columns {
        print!(" | {label}");
    }
    println!(" |");
    println!("|---{}|", "|---".repeat(columns.len()));
    for (row, what) in ACTIONS.iter().enumerate() {
        print!("| {what}");
        for (label, column) in &columns {
            match column {
                Ok(c) => {
                    let base = x11.filter(|_| **label != BACKENDS[0].1).map(|b| b[row].0);
                    print!(" | {}", shown(c[row], base));
                }
                Err(e) => print!(" | not run: {}", e.lines().next().unwrap_or_default()),
            }
        }
        println!(" |");
    }
}
