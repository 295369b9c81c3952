//! Benchmark: what a person recording by doing (`cua record --live`) pays, on the
//! calculator in a 1280×800 sandbox, the page's side of the WebSocket played by this bench:
//! - the frames the page gets while the person clicks (each click changes the display),
//!   and their size;
//! - a click on the picture of the calculator's "1" to the turn's answer in the page (the
//!   app had the click before cua answers: its effect is read back first), next to the
//!   same element click called directly with recording on, in the same run.
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

    drop(ws);
    call("kill_app", json!({ "pid": calc["pid"] }));
    let _ = server.join();
    let _ = std::fs::remove_dir_all(&dir);
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
