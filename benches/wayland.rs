//! Benchmark: what observing and acting cost on Wayland, cua's in-process protocols beside
//! the helper programs a Wayland agent shells out to today (wcore-cua calls grim for
//! screenshots and wtype/ydotool for keys), in the same sandbox and the same run.
//!
//! On the GTK 3 fixture as a native Wayland client in a headless sway, each back to back:
//! - a screenshot of the window: cua's `screenshot` tool over MCP (screencopy of the
//!   window's region, PNG) vs `grim -g` of the same region to a PNG on stdout;
//! - a key typed into the focused Name field: cua's `press_key` (foreground, the virtual
//!   keyboard) vs `wtype`, each read back from the fixture's journal (a key that never
//!   arrives is lost).
//!
//! `cargo bench --bench wayland`.

#[path = "../tests/support/mcp_client.rs"]
#[allow(dead_code)]
mod mcp_client;
#[path = "support/stats.rs"]
mod stats;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cua::sandbox::{Backend, Sandbox, SandboxOptions};
use mcp_client::McpClient;
use serde_json::{Value, json};

const RUNS: usize = 30;
const WARMUP: usize = 3;
/// A key whose journal line has not come this long after it was sent is lost.
const ARRIVE_WAIT: Duration = Duration::from_secs(3);

fn journal_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Median of `RUNS` timings of `f` after `WARMUP` untimed ones; how many returned false.
fn measure(f: impl FnMut() -> bool) -> (f64, usize) {
    stats::measure(RUNS, WARMUP, f)
}

fn shown((ms, lost): (f64, usize)) -> String {
    if lost == 0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.1} ms ({lost} lost)")
    }
}

fn main() {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        backend: Backend::Wayland,
    })
    .expect("a Wayland sandbox");
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
    let pid = launched["pid"].as_u64().expect("pid");
    let window = &launched["windows"][0];
    let window_id = window["window_id"].as_u64().expect("window");
    let bounds = &window["bounds"];
    let region = format!(
        "{},{} {}x{}",
        bounds["x"], bounds["y"], bounds["width"], bounds["height"]
    );
    let at = json!({ "pid": pid, "window_id": window_id });

    // The Name field takes the keys.
    let state = cua.call("get_window_state", at.clone());
    let name = state["structuredContent"]["elements"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["name"] == "Name"))
        .map(|e| e["element_index"].clone())
        .expect("the Name field");
    let mut focus = at.clone();
    focus["element_index"] = name;
    focus["delivery_mode"] = json!("foreground");
    cua.call("click", focus);

    let wayland_env: Vec<(String, String)> = envs
        .iter()
        .filter(|(k, _)| k == "WAYLAND_DISPLAY" || k == "XDG_RUNTIME_DIR")
        .cloned()
        .collect();
    let run = |program: &str, args: &[&str]| -> bool {
        Command::new(program)
            .args(args)
            .envs(wayland_env.iter().cloned())
            .output()
            .is_ok_and(|o| o.status.success() && (program == "wtype" || !o.stdout.is_empty()))
    };
    let has = |program: &str| Command::new(program).arg("-h").output().is_ok();

    println!(
        "| on Wayland, {RUNS} back to back, p50 | cua (in-process protocols) | helper program (a process each) | helper / cua |"
    );
    println!("|---|---|---|---|");

    let shot = measure(|| {
        let out: Value = cua.call("screenshot", json!({ "window_id": window_id }));
        out["isError"] != true
    });
    let grim = has("grim").then(|| measure(|| run("grim", &["-g", &region, "-"])));
    println!(
        "| screenshot of the window (PNG) | {} | {} | {} |",
        shown(shot),
        grim.map_or("grim not installed".into(), shown),
        grim.map_or("-".into(), |g| format!("{:.1}×", g.0 / shot.0))
    );

    let typed = |send: &mut dyn FnMut()| -> bool {
        let before = journal_lines(&journal);
        send();
        let deadline = Instant::now() + ARRIVE_WAIT;
        while journal_lines(&journal) == before {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    };
    let mut key = at.clone();
    key["key"] = json!("a");
    key["delivery_mode"] = json!("foreground");
    let cua_key = measure(|| {
        typed(&mut || {
            cua.call("press_key", key.clone());
        })
    });
    let wtype = has("wtype").then(|| {
        measure(|| {
            typed(&mut || {
                run("wtype", &["a"]);
            })
        })
    });
    println!(
        "| a key into the focused field, until the app has it | {} | {} | {} |",
        shown(cua_key),
        wtype.map_or("wtype not installed".into(), shown),
        wtype.map_or("-".into(), |w| format!("{:.1}×", w.0 / cua_key.0))
    );
    drop(cua);
    drop(sandbox);
}
