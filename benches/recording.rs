//! Benchmark: what recording costs an agent that acts back to back. Each call is issued as
//! soon as the previous one returns; a recorded call first ends the previous turn (its
//! after-state is the window as this call finds it, when it had not settled yet). Per app,
//! the same element action N times with recording off, then N times with recording on, in
//! one run; printed per action, side by side, with the process's CPU use while it ran.
//! (benches/agent_loop.rs measures the whole agent step, observation included.)
//! `cargo bench --bench recording`.

#[path = "support/stats.rs"]
mod stats;

use std::path::Path;
use std::time::{Duration, Instant};

use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

const ACTIONS: usize = 20;

/// Wall time and process CPU time of `f`.
fn timed(f: impl FnOnce()) -> (Duration, Duration) {
    let cpu = || {
        let u = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).unwrap();
        let t = |v: nix::sys::time::TimeVal| {
            Duration::from_micros((v.tv_sec() * 1_000_000 + v.tv_usec()) as u64)
        };
        t(u.user_time()) + t(u.system_time())
    };
    let (wall, used) = (Instant::now(), cpu());
    f();
    (wall.elapsed(), cpu() - used)
}

struct Case {
    label: &'static str,
    launch: Value,
    role: &'static str,
    name: &'static str,
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = [
        Case {
            label: "GTK 3 fixture: click Increment (effect shows at once)",
            launch: json!({ "path": root.join("harness/apps/fixture.py") }),
            role: "button",
            name: "Increment",
        },
        Case {
            label: "GTK 3 fixture: toggle check box (effect confirmed by read-back)",
            launch: json!({ "path": root.join("harness/apps/fixture.py") }),
            role: "check_box",
            name: "Enable feature",
        },
        Case {
            label: "GTK 4 calculator: click 7 (effect ~250 ms later)",
            launch: json!({ "name": "gnome-calculator" }),
            role: "button",
            name: "7",
        },
    ];
    println!(
        "| {ACTIONS} element actions back to back | recording off, per action | recording on, per action | added per action | recorded actions / s | CPU while recording (share of one core) |"
    );
    println!("|---|---|---|---|---|---|");
    for case in &cases {
        let sandbox = Sandbox::start(SandboxOptions {
            width: 1280,
            height: 800,
            ..Default::default()
        })
        .expect("sandbox");
        let rt = cua::tools::runtime().unwrap();
        let registry = ToolRegistry::new();
        let ctx = ToolContext::for_desktop(sandbox.desktop());
        let run = |tool: &str, args: Value| {
            rt.block_on(registry.call(&ctx, tool, args))
                .unwrap_or_else(|e| panic!("{tool}: {e}"))
        };
        let launched = run("launch_app", case.launch.clone()).structured;
        let (pid, window) = (
            launched["pid"].as_u64().unwrap(),
            launched["windows"][0]["window_id"].as_u64().unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        let index = loop {
            let state = run(
                "get_window_state",
                json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
            );
            let found = state.structured["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["role"] == case.role && e["name"] == case.name)
                .map(|e| e["element_index"].clone());
            if let Some(i) = found {
                break i;
            }
            assert!(
                Instant::now() < deadline,
                "{}: no {} {}",
                case.label,
                case.role,
                case.name
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        let click = json!({ "pid": pid, "window_id": window, "element_index": index });
        let dir = std::env::temp_dir().join(format!("cua-bench-recording-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for _ in 0..3 {
            run("click", click.clone());
        }
        let (off, _) = timed(|| {
            for _ in 0..ACTIONS {
                run("click", click.clone());
            }
        });
        // Let the last unrecorded effects show before the recorded run starts.
        std::thread::sleep(Duration::from_millis(500));
        run(
            "set_recording",
            json!({ "enabled": true, "output_dir": dir }),
        );
        let (on, cpu) = timed(|| {
            for _ in 0..ACTIONS {
                run("click", click.clone());
            }
            rt.block_on(ctx.recorder.finish_pending());
        });
        run("set_recording", json!({ "enabled": false }));
        let turns = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("turn-")
            })
            .count();
        assert_eq!(turns, ACTIONS, "every recorded action wrote a turn");
        let per = |d: Duration| d.as_secs_f64() * 1000.0 / ACTIONS as f64;
        println!(
            "| {} | {:.1} ms | {:.1} ms | {:+.1} ms | {:.1} | {:.0}% |",
            case.label,
            per(off),
            per(on),
            per(on) - per(off),
            ACTIONS as f64 / on.as_secs_f64(),
            cpu.as_secs_f64() / on.as_secs_f64() * 100.0
        );
        let _ = std::fs::remove_dir_all(&dir);
        drop(sandbox);
    }
}
