//! Benchmark: CPU cost of recording a 1080p display with a moving window, cua's video
//! recorder next to `ffmpeg -f x11grab -preset ultrafast` in the same run, 10 s each, and
//! cua's recorder on a headless sway (screencopy frames) with the same window moving.
//! CPU is user + system time of the recorder (the `cua-video` helper process / the ffmpeg
//! process) over the wall time, as a share of one core. `cargo bench --bench video`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use cua::recording::video::{VideoInfo, VideoRecorder, VideoSource};
use cua::sandbox::{Backend, Sandbox, SandboxOptions};

const SECONDS: u64 = 10;

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// utime + stime of a /proc stat file, in seconds (fields 14 and 15).
fn cpu_seconds(stat_path: &str) -> f64 {
    let stat = std::fs::read_to_string(stat_path).unwrap_or_default();
    let Some(end) = stat.rfind(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = stat[end + 2..].split_whitespace().collect();
    let utime: f64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    let stime: f64 = fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    (utime + stime) / ticks_per_second()
}

fn main() {
    let mut sandbox = Sandbox::start(SandboxOptions {
        width: 1920,
        height: 1080,
        ..Default::default()
    })
    .expect("sandbox");
    sandbox.spawn_app("gtk3-widget-factory", &[]).expect("app");
    std::thread::sleep(Duration::from_secs(2));
    let mover = start_mover(
        &sandbox,
        "W=$(xdotool search --name gtk3-widget-factory | head -1); while true; do for x in $(seq 0 40 500); do xdotool windowmove $W $x 100; sleep 0.03; done; done",
    );
    let dir = std::env::temp_dir().join(format!("cua-bench-video-{}", std::process::id()));
    let source = VideoSource::X11 {
        display: sandbox.display_name(),
    };
    let (cua_share, thread_share, info) = record_cua(&source, &dir);

    let mut ffmpeg = sandbox.command("ffmpeg");
    ffmpeg
        .args([
            "-y",
            "-loglevel",
            "error",
            "-f",
            "x11grab",
            "-framerate",
            "30",
            "-video_size",
            "1920x1080",
            "-i",
            &sandbox.display_name(),
        ])
        .args([
            "-t",
            &SECONDS.to_string(),
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
        ])
        .arg(dir.join("ffmpeg.mp4"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = ffmpeg.spawn().expect("ffmpeg");
    let stat = format!("/proc/{}/stat", child.id());
    let mut ffmpeg_cpu = 0.0;
    while child.try_wait().unwrap().is_none() {
        ffmpeg_cpu = cpu_seconds(&stat).max(ffmpeg_cpu);
        std::thread::sleep(Duration::from_millis(100));
    }
    let ffmpeg_wall = started.elapsed().as_secs_f64();
    let ffmpeg_share = ffmpeg_cpu / ffmpeg_wall * 100.0;
    stop_mover(mover);

    println!("| 1080p, moving window, {SECONDS} s | CPU (% of one core) | frames | notes |");
    println!("|---|---|---|---|");
    println!(
        "| cua video (the cua-video helper: MIT-SHM + libx264 ultrafast), whole process | {cua_share:.1}% | {} | {:.1} s of video; grab+convert thread alone {thread_share:.1}% |",
        info.frames, info.duration_s
    );
    println!("| ffmpeg -f x11grab -preset ultrafast | {ffmpeg_share:.1}% | - | same run |");
    println!(
        "| ratio ffmpeg / cua | {:.2}x | | |",
        ffmpeg_share / cua_share
    );
    let _ = std::fs::remove_dir_all(&dir);
    drop(sandbox);
    wayland_row();
}

/// cua's recorder on a headless sway at 1080p, the widget factory moved by sway's IPC as
/// xdotool moves it on X11 (no Wayland peer records a wlroots output in-process here).
fn wayland_row() {
    let mut sandbox = Sandbox::start(SandboxOptions {
        width: 1920,
        height: 1080,
        backend: Backend::Wayland,
    })
    .expect("wayland sandbox");
    sandbox.spawn_app("gtk3-widget-factory", &[]).expect("app");
    std::thread::sleep(Duration::from_secs(3));
    let mover = start_mover(
        &sandbox,
        "while true; do for x in $(seq 0 40 500); do swaymsg '[app_id=\".*\"] move position '$x' 100' >/dev/null; sleep 0.03; done; done",
    );
    let dir = std::env::temp_dir().join(format!("cua-bench-video-wl-{}", std::process::id()));
    let source = VideoSource::Wayland {
        socket: sandbox.display_name().into(),
    };
    let (process_share, thread_share, info) = record_cua(&source, &dir);
    stop_mover(mover);
    println!(
        "| cua video on sway (screencopy + libx264 ultrafast), whole process | {process_share:.1}% | {} | {:.1} s of video; grab thread alone {thread_share:.1}% |",
        info.frames, info.duration_s,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A shell loop inside the sandbox that keeps a window moving (a process group of its own,
/// with the sandbox's variables: DISPLAY, or SWAYSOCK for swaymsg).
fn start_mover(sandbox: &Sandbox, script: &str) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    sandbox
        .command("sh")
        .args(["-c", script])
        .envs(sandbox.env())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("mover")
}

fn stop_mover(mut mover: std::process::Child) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(mover.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = mover.wait();
}

/// cua's recorder on `source` into `dir` for SECONDS: the share of one core its helper
/// took (libx264 encodes on worker threads of its own), the share of its main thread alone
/// (which grabs and converts), and what it wrote.
fn record_cua(source: &VideoSource, dir: &std::path::Path) -> (f64, f64, VideoInfo) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let started = Instant::now();
    let recorder = VideoRecorder::start(source, &dir.join("cua.mp4")).expect("video starts");
    let helper = recorder.helper_pid();
    std::thread::sleep(Duration::from_secs(SECONDS));
    let process_cpu = cpu_seconds(&format!("/proc/{helper}/stat"));
    let thread_cpu = cpu_seconds(&format!("/proc/{helper}/task/{helper}/stat"));
    let wall = started.elapsed().as_secs_f64();
    let info = recorder.stop().expect("video finalizes");
    (process_cpu / wall * 100.0, thread_cpu / wall * 100.0, info)
}
