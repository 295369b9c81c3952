//! Benchmark: what a person recording by doing (`cua record --live`) pays, on the
//! calculator in a 1280×800 sandbox, the page's side of the WebSocket played by this bench:
//! - the frames the page gets while the person clicks (each click changes the display),
//!   and their size;
//! - a click on the picture of the calculator's "1" to the turn's answer in the page (the
//!   app had the click before cua answers: its effect is read back first), next to the
//!   same element click called directly with recording on, in the same run.
//!
//! - a click in the page to the app having it, by the app's own clock: the GTK 3 fixture
//!   journals each click with its wall-clock time (this bench sends the event; the page's
//!   own wait to tell a click from a double click, 250 ms, comes on top in a browser);
//! - the frame rate on a screen that changes all the time (benches/support/animate.py,
//!   a square crossing a canvas 60 times a second), for 5 s with nothing else to do.
//!
//! 20 clicks each after 3 warm-up clicks. `cargo bench --bench live`.

#[path = "support/stats.rs"]
mod stats;

use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tungstenite::Message;

const CLICKS: usize = 20;
const WARMUP: usize = 3;

type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let rt = cua::tools::runtime().expect("runtime");
    let dir = std::env::temp_dir().join(format!("cua-bench-live-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let live = cua::live::Live {
        ctx: Arc::new(ToolContext::for_desktop(sandbox.desktop())),
        registry: ToolRegistry::new(),
        runtime: rt.handle().clone(),
        harness: dir.join("harness"),
        keep_app: false,
    };
    let (url_tx, url_rx) = std::sync::mpsc::channel();
    let recording = dir.join("recording");
    let server = std::thread::spawn(move || {
        live.record(&recording, "Calculator", |url| {
            url_tx.send(url.to_string()).unwrap()
        })
    });
    let url = url_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the page's URL");
    let mut ws = connect(&url);

    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let registry = ToolRegistry::new();
    let call = |tool: &str, args: Value| {
        rt.block_on(registry.call(&ctx, tool, args))
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
            .structured
    };
    let windows = call("list_windows", json!({}));
    let calc = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| {
            w["title"]
                .as_str()
                .is_some_and(|t| t.contains("Calculator"))
        })
        .expect("the calculator's window")
        .clone();
    let at =
        json!({ "pid": calc["pid"], "window_id": calc["window_id"], "include_screenshot": false });
    let state = call("get_window_state", at.clone());
    let one = state["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == "button" && e["name"] == "1")
        .expect("the calculator's 1")
        .clone();
    let f = &one["frame"];
    let centre = |k: &str, d: &str| f[k].as_f64().unwrap() + f[d].as_f64().unwrap() / 2.0;
    let click = json!({ "kind": "click", "x": centre("x", "w"), "y": centre("y", "h") });
    let mut frames = Vec::new();
    let clicking = Instant::now();
    let page = measure(|| {
        ws.send(Message::text(click.to_string())).unwrap();
        let answer = next_text(&mut ws, &mut frames);
        assert_eq!(answer["kind"], "turn", "{answer}");
    });
    let fps = (
        frames.len() as f64 / clicking.elapsed().as_secs_f64(),
        stats::median(frames.clone()),
    );

    // The same click called directly, recording on in the same trajectory's context.
    let direct_dir = dir.join("direct");
    call(
        "set_recording",
        json!({ "enabled": true, "output_dir": direct_dir }),
    );
    let direct = measure(|| {
        let state = call("get_window_state", at.clone());
        let index = state["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == "button" && e["name"] == "1")
            .unwrap()["element_index"]
            .clone();
        call(
            "click",
            json!({ "pid": calc["pid"], "window_id": calc["window_id"], "element_index": index }),
        );
    });
    call("set_recording", json!({ "enabled": false }));

    let (pm, pp) = stats::median_p95(page);
    let (dm, dp) = stats::median_p95(direct);
    println!("| live page, 1280x800 calculator | value |");
    println!("|---|---|");
    println!(
        "| frames pushed while clicking (each click changes the display) | {:.1} fps ({:.0} kB median) |",
        fps.0, fps.1
    );
    println!("| click in the page → turn answered (p50 / p95) | {pm:.1} ms / {pp:.1} ms |");
    println!(
        "| the same click called directly: get_window_state → click (p50 / p95) | {dm:.1} ms / {dp:.1} ms |"
    );
    println!("| ratio page / direct (p50) | {:.2}x |", pm / dm);

    let app_clock = click_to_app(&sandbox, &mut ws, &dir);
    println!(
        "| click event in the page's socket → the app's handler ran (its journal; p50 / p95) | {:.1} ms / {:.1} ms |",
        app_clock.0, app_clock.1
    );
    let (moving_fps, moving_kb) = frame_rate_under_change(&mut ws, &call);
    println!(
        "| frames pushed on a screen that changes all the time (animate.py, 5 s) | {moving_fps:.1} fps ({moving_kb:.0} kB median) |"
    );

    drop(ws);
    call("kill_app", json!({ "pid": calc["pid"] }));
    let _ = server.join();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The GTK 3 fixture started beside the calculator (on top of it), journalling; each
/// click on the picture of its Increment button, from the event sent to the fixture's
/// handler (the journal's wall-clock time): p50 and p95 in milliseconds.
fn click_to_app(sandbox: &Sandbox, ws: &mut Socket, dir: &std::path::Path) -> (f64, f64) {
    let journal = dir.join("fixture-journal.jsonl");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/harness/apps/fixture.py");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["call", "launch_app"])
        .arg(json!({ "path": fixture }).to_string())
        .envs(sandbox.env())
        .env("CUA_FIXTURE_JOURNAL", &journal)
        .output()
        .expect("cua call launch_app");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let launched: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let rt = cua::tools::runtime().expect("runtime");
    let state = rt
        .block_on(ToolRegistry::new().call(
            &ctx,
            "get_window_state",
            json!({ "pid": launched["pid"], "window_id": launched["windows"][0]["window_id"],
                "include_screenshot": false }),
        ))
        .expect("the fixture's state")
        .structured;
    let button = state["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == "button" && e["name"] == "Increment")
        .expect("the fixture's Increment")
        .clone();
    let f = &button["frame"];
    let centre = |k: &str, d: &str| f[k].as_f64().unwrap() + f[d].as_f64().unwrap() / 2.0;
    let click = json!({ "kind": "click", "x": centre("x", "w"), "y": centre("y", "h") });
    let clicked = || {
        std::fs::read_to_string(&journal)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["event"] == "clicked")
            .map(|e| e["t"].as_f64().unwrap())
            .collect::<Vec<f64>>()
    };
    let mut frames = Vec::new();
    let latencies = measure_each(|| {
        let seen = clicked().len();
        let sent = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        ws.send(Message::text(click.to_string())).unwrap();
        let answer = next_text(ws, &mut frames);
        assert_eq!(answer["kind"], "turn", "{answer}");
        let times = clicked();
        assert_eq!(times.len(), seen + 1, "one click journalled per click");
        (times[seen] - sent) * 1000.0
    });
    stats::median_p95(latencies)
}

/// Frames a second (and their median size in kB) while the animation runs, the page doing
/// nothing else for 5 s.
fn frame_rate_under_change(ws: &mut Socket, call: &dyn Fn(&str, Value) -> Value) -> (f64, f64) {
    let animate = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/support/animate.py");
    let launched = call("launch_app", json!({ "path": animate }));
    // Reads time out, so a screen that stops changing ends the count, not the bench.
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
    }
    // Frames of the launch itself are not counted.
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_secs(1) {
        let _ = ws.read();
    }
    let mut sizes = Vec::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if let Ok(Message::Binary(jpeg)) = ws.read() {
            sizes.push(jpeg.len() as f64 / 1000.0);
        }
    }
    let fps = sizes.len() as f64 / started.elapsed().as_secs_f64();
    call("kill_app", json!({ "pid": launched["pid"] }));
    (fps, stats::median(sizes))
}

/// WARMUP then CLICKS runs of `f`, each giving its own measure.
fn measure_each(mut f: impl FnMut() -> f64) -> Vec<f64> {
    (0..WARMUP + CLICKS)
        .filter_map(|i| {
            let m = f();
            (i >= WARMUP).then_some(m)
        })
        .collect()
}

/// WARMUP then CLICKS runs of `f`, in milliseconds.
fn measure(mut f: impl FnMut()) -> Vec<f64> {
    (0..WARMUP + CLICKS)
        .filter_map(|i| {
            let started = Instant::now();
            f();
            (i >= WARMUP).then(|| started.elapsed().as_secs_f64() * 1000.0)
        })
        .collect()
}

/// The page's socket, found in the page as a browser would.
fn connect(url: &str) -> Socket {
    use std::io::{Read, Write};
    let (host, path) = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap();
    let mut s = TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    s.read_to_string(&mut page).unwrap();
    let ws_url = page
        .split("new WebSocket(`ws://${location.hostname}:")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .map(|rest| format!("ws://127.0.0.1:{rest}"))
        .expect("the page names its socket");
    let (ws, _) = tungstenite::connect(&ws_url).expect("the socket");
    ws
}

/// The next JSON message from the page's socket; the frames before it go to `frames`
/// (their sizes in kB).
fn next_text(ws: &mut Socket, frames: &mut Vec<f64>) -> Value {
    loop {
        match ws.read().expect("the socket") {
            Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            Message::Binary(jpeg) => frames.push(jpeg.len() as f64 / 1000.0),
            _ => {}
        }
    }
}
