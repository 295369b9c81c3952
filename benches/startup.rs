//! Benchmark: what one CLI call costs before and including its work, the way a shell
//! script or an agent's tool wrapper pays it (a new process each time). Side by side in
//! one sandbox: `cua --version` (start-up alone), a one-shot `cua get_screen_size`
//! through a running `cua serve` daemon, the same with no daemon (the process connects to
//! X11 itself), and xdotool's `getdisplaygeometry` as the peer. Wall time of each process,
//! 100 runs each after 5 warm-ups; peak memory from wait4. `cargo bench --bench startup`.
//!
//! Target (issue #16): a one-shot call through the daemon ≤ 5 ms median.

#[path = "support/stats.rs"]
mod stats;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cua::sandbox::{Sandbox, SandboxOptions};

const RUNS: usize = 100;
const WARMUP: usize = 5;

struct Row {
    what: &'static str,
    p50: f64,
    p95: f64,
    max_rss_kb: i64,
}

/// Runs `cmd` RUNS times; wall time per run (ms) and the largest peak RSS.
fn measure(what: &'static str, mut make: impl FnMut() -> Command) -> Row {
    let mut samples = Vec::with_capacity(RUNS);
    let mut max_rss_kb = 0;
    for i in 0..WARMUP + RUNS {
        let mut cmd = make();
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let started = Instant::now();
        // Reaped by wait4 below, which also reports the peak memory `Child::wait` hides.
        #[allow(clippy::zombie_processes)]
        let child = cmd.spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
        let (status, rss) = wait_with_rss(child.id() as i32);
        let took = started.elapsed().as_secs_f64() * 1000.0;
        assert!(status.success(), "{what} failed: {status}");
        if i >= WARMUP {
            samples.push(took);
            max_rss_kb = max_rss_kb.max(rss);
        }
    }
    let (p50, p95) = stats::median_p95(samples);
    Row {
        what,
        p50,
        p95,
        max_rss_kb,
    }
}

/// Waits for `pid`; its exit status and peak resident memory in KiB.
fn wait_with_rss(pid: i32) -> (std::process::ExitStatus, i64) {
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4: {}", std::io::Error::last_os_error());
    (
        std::process::ExitStatus::from_raw(status),
        usage.ru_maxrss as i64,
    )
}

fn main() {
    let cua = env!("CARGO_BIN_EXE_cua");
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1920,
        height: 1080,
        ..Default::default()
    })
    .expect("sandbox");
    let socket = sandbox.dir().join("bench-daemon.sock");
    let with_desktop = |program: &str| {
        let mut cmd = Command::new(program);
        cmd.envs(sandbox.env());
        cmd.env_remove(cua::daemon::SOCKET_ENV);
        cmd
    };

    let mut daemon = with_desktop(cua);
    daemon
        .args(["serve", "--socket"])
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut daemon = daemon.spawn().expect("cua serve");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "the daemon did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }

    let rows = [
        measure("cua --version", || {
            let mut cmd = Command::new(cua);
            cmd.arg("--version");
            cmd
        }),
        measure("cua get_screen_size, through the daemon", || {
            let mut cmd = with_desktop(cua);
            cmd.arg("get_screen_size")
                .env(cua::daemon::SOCKET_ENV, &socket);
            cmd
        }),
        measure("cua get_screen_size, no daemon", || {
            let mut cmd = with_desktop(cua);
            cmd.arg("get_screen_size").env(
                cua::daemon::SOCKET_ENV,
                sandbox.dir().join("no-daemon.sock"),
            );
            cmd
        }),
        measure("xdotool getdisplaygeometry", || {
            let mut cmd = with_desktop("xdotool");
            cmd.arg("getdisplaygeometry");
            cmd
        }),
    ];
    let _ = daemon.kill();
    let _ = daemon.wait();

    let peer = rows.last().unwrap().p50;
    println!(
        "| {RUNS} runs each, one process per call | p50 | p95 | peak RSS | vs xdotool (p50) |"
    );
    println!("|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {:.2} ms | {:.2} ms | {:.1} MiB | {:.2}x |",
            row.what,
            row.p50,
            row.p95,
            row.max_rss_kb as f64 / 1024.0,
            row.p50 / peer
        );
    }
    let through_daemon = rows[1].p50;
    println!(
        "\none-shot call through the daemon: {through_daemon:.2} ms median (target ≤ 5 ms: {})",
        if through_daemon <= 5.0 {
            "met"
        } else {
            "NOT met"
        }
    );
}
