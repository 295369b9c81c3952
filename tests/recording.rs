//! Recording real actions: every action writes a complete turn folder whose files agree
//! with the app; refused calls are recorded too; folders with turns are never overwritten.

mod common;

use common::{Image, desktop, elements, runtime};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_slice(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

#[test]
fn a_recorded_session_writes_complete_turns_that_match_the_app() {
    let d = desktop();
    let rt = runtime();
    let ctx = ToolContext::for_desktop(d.env.clone());
    let registry = ToolRegistry::new();
    let call = |tool: &str, args: Value| rt.block_on(registry.call(&ctx, tool, args));
    let dir = std::env::temp_dir().join(format!("cua-recording-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    // Bad starts: a file, and a missing output_dir.
    let file = std::env::temp_dir().join(format!("cua-recording-file-{}", std::process::id()));
    std::fs::write(&file, b"x").unwrap();
    let err = call(
        "set_recording",
        json!({ "enabled": true, "output_dir": file }),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("is a file"), "{err}");
    let err = call("set_recording", json!({ "enabled": true }))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`output_dir`"), "{err}");
    let out = call("set_recording", json!({ "enabled": false })).unwrap();
    assert!(out.summary.contains("not enabled"), "{}", out.summary);

    call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    )
    .unwrap();
    let calc = &d.calculator;
    let state = call(
        "get_window_state",
        json!({ "pid": calc.pid, "window_id": calc.window_id }),
    )
    .unwrap();
    let seven = elements(&state)
        .into_iter()
        .find(|e| e["name"].as_str().unwrap().starts_with("7 "))
        .unwrap();
    call(
        "click",
        json!({ "pid": calc.pid, "window_id": calc.window_id, "element_index": seven["index"] }),
    )
    .unwrap();
    let wf = &d.widget_factory;
    let wstate = call(
        "get_window_state",
        json!({ "pid": wf.pid, "window_id": wf.window_id, "include_screenshot": false }),
    )
    .unwrap();
    let entry = elements(&wstate)
        .into_iter()
        .find(|e| {
            e["role"] == "text"
                && e["value"] == "entry"
                && e["states"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|x| x == "sensitive"))
        })
        .unwrap();
    call("type_text", json!({ "pid": wf.pid, "window_id": wf.window_id, "element_index": entry["index"], "text": "!" })).unwrap();
    let toggle = elements(&wstate)
        .into_iter()
        .find(|e| e["role"] == "toggle_button" && e["name"] == "togglebutton")
        .unwrap();
    let f = &toggle["frame"];
    let (px, py) = (f["x"].as_i64().unwrap() + 5, f["y"].as_i64().unwrap() + 5);
    call(
        "click",
        json!({ "pid": wf.pid, "window_id": wf.window_id, "x": px, "y": py }),
    )
    .unwrap();
    // A refused call is a turn too.
    assert!(call("press_key", json!({ "pid": wf.pid, "key": "hyperjump" })).is_err());
    let state_now = call("get_recording_state", json!({})).unwrap().structured;
    assert_eq!(state_now["enabled"], true);
    let stopped = call("set_recording", json!({ "enabled": false }))
        .unwrap()
        .structured;
    assert_eq!(stopped["next_turn"], 5, "{stopped}");

    // Four turns, numbered without holes, nothing half-written left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "session.json",
            "turn-00001",
            "turn-00002",
            "turn-00003",
            "turn-00004"
        ]
    );
    let session = read_json(&dir.join("session.json"));
    serde_json::from_value::<cua::trajectory::Session>(session.clone())
        .expect("session.json has the documented shape");
    assert_eq!(session["schema_version"], 1);
    assert_eq!(session["turns_written"], 4);
    assert!(session["stopped_at"].is_string());

    let mut last_t = 0;
    for n in 1..=4 {
        let turn = dir.join(format!("turn-{n:05}"));
        let action = read_json(&turn.join("action.json"));
        // Every field has the type docs/schema/action.schema.json (generated from it) says.
        let typed: cua::trajectory::Action =
            serde_json::from_value(action.clone()).unwrap_or_else(|e| panic!("turn {n}: {e}"));
        assert_eq!(typed.tool, action["tool"]);
        assert_eq!(action["schema_version"], 1);
        assert_eq!(action["turn"], n);
        let t = action["t_ms"].as_u64().unwrap();
        assert!(
            t >= last_t,
            "t_ms goes forward: turn {n} at {t} ms after {last_t} ms"
        );
        last_t = t;
        assert!(
            chrono::DateTime::parse_from_rfc3339(action["timestamp"].as_str().unwrap()).is_ok()
        );
        let app_state = read_json(&turn.join("app_state.json"));
        assert!(
            app_state["tree_markdown"].as_str().unwrap().len() > 10,
            "turn {n} app_state"
        );
        read_json(&turn.join("before_state.json"));
        let shot = Image::decode(&std::fs::read(turn.join("screenshot.png")).unwrap());
        assert!(shot.distinct_colors() > 20);
    }
    // Turn 1: the element click, with its locator and a red dot at the frame centre.
    let a1 = read_json(&dir.join("turn-00001/action.json"));
    assert_eq!(a1["tool"], "click");
    assert_eq!(a1["pid"], calc.pid);
    assert_eq!(a1["app"]["window_title"], "Calculator");
    assert_eq!(a1["target"]["role"], "button");
    assert_eq!(a1["target"]["name"], seven["name"]);
    let path = a1["target"]["path"].as_array().unwrap();
    assert_eq!(path.last().unwrap()["name"], seven["name"]);
    assert_eq!(path.first().unwrap()["role"], "frame");
    assert_eq!(a1["result"]["path"], "atspi_action");
    let (fx, fy) = (
        seven["frame"]["x"].as_i64().unwrap(),
        seven["frame"]["y"].as_i64().unwrap(),
    );
    let (fw, fh) = (
        seven["frame"]["width"].as_i64().unwrap(),
        seven["frame"]["height"].as_i64().unwrap(),
    );
    assert_eq!(
        a1["click_point"],
        json!({ "x": fx + fw / 2, "y": fy + fh / 2 })
    );
    let click = Image::decode(&std::fs::read(dir.join("turn-00001/click.png")).unwrap());
    assert_eq!(click.pixel(fx + fw / 2, fy + fh / 2), [255, 0, 0]);
    let before = Image::decode(&std::fs::read(dir.join("turn-00001/before.png")).unwrap());
    assert_ne!(
        before.pixel(fx + fw / 2, fy + fh / 2),
        [255, 0, 0],
        "the dot is only in click.png"
    );
    // Turn 2: text typed; the after-state shows it, the before-state does not.
    let entry_value = |file: &str| {
        let st = read_json(&dir.join("turn-00002").join(file));
        st["elements"][entry["index"].as_u64().unwrap() as usize]["value"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(entry_value("before_state.json"), "entry");
    assert_eq!(entry_value("app_state.json").len(), "entry!".len());
    assert!(entry_value("app_state.json").contains('!'));
    // Turn 3: the pixel click, resolved to the toggle button, dot where it was asked.
    let a3 = read_json(&dir.join("turn-00003/action.json"));
    assert_eq!(a3["click_point"], json!({ "x": px, "y": py }));
    let click = Image::decode(&std::fs::read(dir.join("turn-00003/click.png")).unwrap());
    assert_eq!(click.pixel(px, py), [255, 0, 0]);
    // Turn 4: refused, with the reason.
    let a4 = read_json(&dir.join("turn-00004/action.json"));
    assert!(a4["result_error"].as_str().unwrap().contains("hyperjump"));
    assert_eq!(a4["result"]["refused"], true);

    // The folder now holds turns: refused without append, continued with it.
    let err = call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("already holds 4 turns"), "{err}");
    let resumed = call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir, "append": true }),
    )
    .unwrap();
    assert_eq!(resumed.structured["next_turn"], 5);
    call("press_key", json!({ "pid": wf.pid, "key": "tab" })).unwrap();
    call("set_recording", json!({ "enabled": false })).unwrap();
    assert!(dir.join("turn-00005/action.json").exists());
    assert_eq!(
        read_json(&dir.join("turn-00001/action.json")),
        a1,
        "earlier turns untouched"
    );
    // A write that fails (the folder vanished) never fails the action: last_error says why.
    call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir, "append": true }),
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let out = call("press_key", json!({ "pid": wf.pid, "key": "tab" }));
    assert!(out.is_ok(), "the action itself succeeds: {:?}", out.err());
    let stopped = call("set_recording", json!({ "enabled": false }))
        .unwrap()
        .structured;
    assert!(
        stopped["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("not written")),
        "{stopped}"
    );
    let _ = std::fs::remove_file(&file);
}

#[test]
fn video_is_h264_faststart_and_lasts_as_long_as_the_recording() {
    let d = desktop();
    let rt = runtime();
    let ctx = ToolContext::for_desktop(d.env.clone());
    let registry = ToolRegistry::new();
    let call = |tool: &str, args: Value| rt.block_on(registry.call(&ctx, tool, args)).unwrap();
    let dir = std::env::temp_dir().join(format!("cua-video-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let started = std::time::Instant::now();
    call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir, "video_experimental": true }),
    );
    // Something moves on screen meanwhile.
    let wf = &d.widget_factory;
    for _ in 0..10 {
        call(
            "press_key",
            json!({ "pid": wf.pid, "window_id": wf.window_id, "key": "tab" }),
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let stopped = call("set_recording", json!({ "enabled": false })).structured;
    let wall = started.elapsed().as_secs_f64();
    assert!(stopped["last_error"].is_null(), "{stopped}");
    let video = dir.join("recording.mp4");
    let probe = std::process::Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "stream=codec_name,pix_fmt,r_frame_rate:format=duration",
            "-of",
            "json",
        ])
        .arg(&video)
        .output()
        .expect("ffprobe runs");
    let info: Value = serde_json::from_slice(&probe.stdout).expect("ffprobe json");
    assert_eq!(info["streams"][0]["codec_name"], "h264", "{info}");
    assert_eq!(info["streams"][0]["pix_fmt"], "yuv420p");
    assert_eq!(info["streams"][0]["r_frame_rate"], "30/1");
    let duration: f64 = info["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (duration - wall).abs() <= wall * 0.1,
        "video {duration:.2} s vs wall {wall:.2} s"
    );
    // faststart: the index (moov) comes before the media data (mdat).
    let bytes = std::fs::read(&video).unwrap();
    let find = |tag: &[u8]| bytes.windows(4).position(|w| w == tag).unwrap();
    assert!(
        find(b"moov") < find(b"mdat"),
        "moov after mdat: not faststart"
    );
    let session = read_json(&dir.join("session.json"));
    assert_eq!(session["video"]["codec"], "h264");
    assert!(session["video"]["frames"].as_u64().unwrap() > 60);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A click whose effect keeps repainting after the tree is quiet (a colour fading over
/// 300 ms, no accessibility event while it does) is screenshot once the window stopped
/// repainting: every turn's screenshot shows the end colour, never one in between.
#[test]
fn a_turns_screenshot_waits_until_the_window_stops_repainting() {
    let s = common::Session::new();
    let app = common::App::launched(
        &s.call("launch_app", common::support_app("fade.py"))
            .unwrap(),
    );
    let (pid, window_id) = (app.pid, app.window_id);
    let dir = std::env::temp_dir().join(format!("cua-fade-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    s.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    )
    .unwrap();
    let state = s
        .call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
        )
        .unwrap();
    let fade = elements(&state)
        .into_iter()
        .find(|e| e["name"] == "Fade")
        .unwrap_or_else(|| panic!("no Fade button: {}", state.structured["tree_markdown"]));
    const CLICKS: u32 = 4;
    for _ in 0..CLICKS {
        s.call(
            "click",
            json!({ "pid": pid, "window_id": window_id, "element_index": fade["index"] }),
        )
        .unwrap();
    }
    s.call("set_recording", json!({ "enabled": false }))
        .unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    for n in 1..=CLICKS {
        let shot = dir.join(format!("turn-{n:05}/screenshot.png"));
        let image = Image::decode(&std::fs::read(&shot).unwrap());
        // The swatch fills the window below the button.
        let swatch = image.pixel(image.width as i64 / 2, image.height as i64 - 20);
        let end = if n % 2 == 1 { [0, 0, 255] } else { [255, 0, 0] };
        assert_eq!(
            swatch,
            end,
            "turn {n}: the swatch is still fading in {}",
            shot.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
