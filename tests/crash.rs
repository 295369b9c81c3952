//! Crash safety: the daemon is killed with SIGKILL at random points while recording 50
//! actions, 20 times. Every turn folder present must be complete and valid, and the
//! numbering must have no holes. Temporaries (`.turn-NNNNN.tmp`) are allowed: hidden.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{App, desktop};
use serde_json::{Value, json};

fn count_turns(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("turn-"))
                .count()
        })
        .unwrap_or(0)
}

fn check_trajectory(dir: &Path) -> usize {
    let mut turns = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name == "session.json" || (name.starts_with(".turn-") && name.ends_with(".tmp")) {
            continue;
        }
        let n: u32 = name
            .strip_prefix("turn-")
            .and_then(|d| d.parse().ok())
            .unwrap_or_else(|| panic!("unexpected entry {name}"));
        let turn = dir.join(&name);
        let action: Value =
            serde_json::from_slice(&std::fs::read(turn.join("action.json")).unwrap())
                .unwrap_or_else(|e| panic!("{name}/action.json: {e}"));
        assert_eq!(action["turn"], n, "{name}");
        for state in ["before_state.json", "app_state.json"] {
            let v: Value = serde_json::from_slice(
                &std::fs::read(turn.join(state)).unwrap_or_else(|e| panic!("{name}/{state}: {e}")),
            )
            .unwrap_or_else(|e| panic!("{name}/{state}: {e}"));
            assert!(v["tree_markdown"].is_string(), "{name}/{state}");
        }
        for png in ["before.png", "screenshot.png"] {
            image::open(turn.join(png)).unwrap_or_else(|e| panic!("{name}/{png}: {e}"));
        }
        turns.push(n);
    }
    turns.sort_unstable();
    let expected: Vec<u32> = (1..=turns.len() as u32).collect();
    assert_eq!(turns, expected, "numbering has holes in {}", dir.display());
    let session: Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
    assert_eq!(session["schema_version"], 1);
    turns.len()
}

#[test]
fn killing_the_daemon_mid_recording_never_leaves_a_half_written_turn() {
    let d = desktop();
    // The GTK 3 fixture's check box: every click shows its effect at once, and the window
    // is still between clicks (the widget factory's spinners never stop repainting, so
    // each of its turns waited out the screenshot's bound).
    let fixture = App::launched(
        &common::call(
            "launch_app",
            json!({ "path": format!("{}/harness/apps/fixture.py", env!("CARGO_MANIFEST_DIR")) }),
        )
        .expect("the GTK 3 fixture starts"),
    );
    let base = std::env::temp_dir().join(format!("cua-crash-{}", std::process::id()));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut total = 0;
    for round in 0..20 {
        let socket = base.join(format!("daemon-{round}.sock"));
        let dir = base.join(format!("rec-{round}"));
        let mut daemon = common::Daemon::start(&socket, &d.env.child_env());
        let started = cua::daemon::call(
            &socket,
            "set_recording",
            &json!({ "enabled": true, "output_dir": dir }),
        )
        .unwrap();
        assert!(started.is_ok(), "{:?}", started.err());
        // A check box: every click shows an effect, so turns come as fast as recording
        // allows (an action without one waits out the 400 ms effect wait).
        let state = cua::daemon::call(
            &socket,
            "get_window_state",
            &json!({ "pid": fixture.pid, "window_id": fixture.window_id, "include_screenshot": false }),
        )
        .unwrap()
        .unwrap();
        let toggle = state.structured["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == "check_box" && e["name"] == "Enable feature")
            .expect("the fixture's check box")["element_index"]
            .clone();
        let actor = {
            let socket = socket.clone();
            let fixture = fixture.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let r = cua::daemon::call(
                        &socket,
                        "click",
                        &json!({ "pid": fixture.pid, "window_id": fixture.window_id, "element_index": toggle }),
                    );
                    if !matches!(r, Some(Ok(_))) {
                        break;
                    }
                }
            })
        };
        // xorshift: a different kill point each round, the same sequence every run.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Kill once a random number of turns (0-49) exist, a random moment into the next.
        let kill_at = (seed % 50) as usize;
        let deadline = Instant::now() + Duration::from_secs(60);
        while count_turns(&dir) < kill_at && !actor.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis((seed >> 8) % 300));
        daemon.kill();
        actor.join().unwrap();
        total += check_trajectory(&dir);
    }
    assert!(
        total > 20,
        "the rounds recorded almost nothing ({total} turns): the test would prove little"
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// The video is made by a helper process that finalizes the file when its input closes,
/// so a daemon killed with SIGKILL mid-recording still leaves a playable MP4 as long as
/// the recording went on (ffprobe reads its duration), and no helper is left running.
#[test]
fn killing_the_daemon_mid_recording_still_leaves_a_playable_video() {
    let d = desktop();
    let base = std::env::temp_dir().join(format!("cua-crash-video-{}", std::process::id()));
    let socket = base.join("daemon.sock");
    let dir = base.join("rec");
    let mut daemon = common::Daemon::start(&socket, &d.env.child_env());
    let started = cua::daemon::call(
        &socket,
        "set_recording",
        &json!({ "enabled": true, "output_dir": dir, "video_experimental": true }),
    )
    .unwrap();
    assert!(started.is_ok(), "{:?}", started.err());
    let recorded_for = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    daemon.kill(); // SIGKILL: the helper's input closes with the daemon.
    let wall = recorded_for.elapsed().as_secs_f64();

    let video = dir.join("recording.mp4");
    let helper_gone = Instant::now() + Duration::from_secs(10);
    let duration = loop {
        let probe = Command::new("ffprobe")
            .args([
                "-v",
                "error",
                "-show_entries",
                "format=duration",
                "-of",
                "csv=p=0",
            ])
            .arg(&video)
            .output()
            .expect("ffprobe runs");
        let duration = String::from_utf8_lossy(&probe.stdout).trim().parse::<f64>();
        if let Ok(duration) = duration {
            break duration;
        }
        assert!(
            Instant::now() < helper_gone,
            "no playable video 10 s after the kill: {}",
            String::from_utf8_lossy(&probe.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        duration > 1.5 && duration <= wall + 0.5,
        "video {duration:.2} s for {wall:.2} s of recording"
    );
    // The helper exits once the file is finalized.
    loop {
        let helpers = Command::new("pgrep")
            .args(["-f", &format!("cua-video.*{}", video.display())])
            .output()
            .unwrap();
        if helpers.stdout.is_empty() {
            break;
        }
        assert!(
            Instant::now() < helper_gone,
            "a helper outlived its video: {}",
            String::from_utf8_lossy(&helpers.stdout)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = std::fs::remove_dir_all(&base);
}
