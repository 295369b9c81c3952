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
        .find(|e| e["name"] == "7")
        .unwrap();
    call(
        "click",
        json!({ "pid": calc.pid, "window_id": calc.window_id, "element_index": seven["element_index"] }),
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
    call("type_text", json!({ "pid": wf.pid, "window_id": wf.window_id, "element_index": entry["element_index"], "text": "!" })).unwrap();
    let toggle = elements(&wstate)
        .into_iter()
        .find(|e| e["role"] == "toggle_button" && e["name"] == "togglebutton")
        .unwrap();
    let f = &toggle["pixel_frame"];
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
    assert_eq!(a1["result"]["path"], "element_action");
    let (fx, fy) = (
        seven["pixel_frame"]["x"].as_i64().unwrap(),
        seven["pixel_frame"]["y"].as_i64().unwrap(),
    );
    let (fw, fh) = (
        seven["pixel_frame"]["w"].as_i64().unwrap(),
        seven["pixel_frame"]["h"].as_i64().unwrap(),
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
        st["elements"][entry["element_index"].as_u64().unwrap() as usize]["value"]
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
    let info = common::probe_video(&video);
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
/// 300 ms, no accessibility event while it does). The next recorded click never waits for
/// that: it cuts the turn short, whose after-state is then the window as the next click
/// found it, the fade still under way. The last turn, with no action after it, is
/// screenshot once the window stopped repainting: it shows the end colour, never one in
/// between.
#[test]
fn a_turns_screenshot_waits_until_the_window_stops_repainting_unless_the_next_action_comes() {
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
        // settle_ms 0: the click returns at once, and the next one follows mid-fade.
        s.call(
            "click",
            json!({ "pid": pid, "window_id": window_id, "element_index": fade["element_index"], "settle_ms": 0 }),
        )
        .unwrap();
    }
    s.call("set_recording", json!({ "enabled": false }))
        .unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let swatch = |n: u32, file: &str| {
        let shot = dir.join(format!("turn-{n:05}/{file}"));
        let image = Image::decode(&std::fs::read(&shot).unwrap());
        // The swatch fills the window below the button.
        image.pixel(image.width as i64 / 2, image.height as i64 - 20)
    };
    let (red, blue) = ([255, 0, 0], [0, 0, 255]);
    // Click n fades towards blue when n is odd, back towards red when even. A cut turn
    // shows any colour but that end: mid-fade, or (on a loaded machine, the first frame
    // not painted yet) where its fade began.
    let end = |n: u32| if n % 2 == 1 { blue } else { red };
    for n in 1..CLICKS {
        let cut = swatch(n, "screenshot.png");
        assert!(
            cut != end(n),
            "turn {n}: the next click waited for the fade to end ({cut:?})"
        );
        assert_eq!(
            cut,
            swatch(n + 1, "before.png"),
            "turn {n}: its after-state is not what the next click found"
        );
    }
    assert_eq!(
        swatch(CLICKS, "screenshot.png"),
        red,
        "the last turn's screenshot was taken while the swatch still faded"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A password field and an element `redaction.names` lists are painted black in every PNG
/// of a turn and in the video, and text typed into them is not kept anywhere in the
/// recording; a replay of such a turn asks for the text instead of typing the mask.
#[test]
fn password_fields_are_masked_in_screenshots_and_video_and_their_text_is_not_recorded() {
    let d = desktop();
    let rt = runtime();
    let ctx = ToolContext::for_session(d.env.clone(), "redaction");
    let registry = ToolRegistry::new();
    let call = |tool: &str, args: Value| {
        rt.block_on(registry.call(&ctx, tool, args))
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    };
    let app = common::App::launched(&call("launch_app", common::support_app("sign_in.py")));
    let dir = std::env::temp_dir().join(format!("cua-redaction-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    call(
        "set_config",
        json!({ "key": "redaction.names", "value": ["card number"] }),
    );
    call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir, "video_experimental": true }),
    );
    let state = call(
        "get_window_state",
        json!({ "pid": app.pid, "window_id": app.window_id }),
    );
    let field = |name: &str| {
        elements(&state)
            .into_iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {}", state.structured["tree_markdown"]))
    };
    let (password, card, user) = (field("Password"), field("Card number"), field("User"));
    assert_eq!(password["role"], "password_text");
    for (element, text) in [
        (&password, "hunter2"),
        (&card, "4111222233334444"),
        (&user, "ann"),
    ] {
        call(
            "type_text",
            json!({ "pid": app.pid, "window_id": app.window_id,
                    "element_index": element["element_index"], "text": text }),
        );
    }
    call("set_recording", json!({ "enabled": false }));
    // The app took the text (its own tree says so).
    let after = call(
        "get_window_state",
        json!({ "pid": app.pid, "window_id": app.window_id, "include_screenshot": false }),
    );
    let value = |name: &str| {
        elements(&after)
            .into_iter()
            .find(|e| e["name"] == name)
            .map(|e| e["value"].clone())
    };
    assert_eq!(value("User"), Some(json!("ann")));
    // The password went in once: seven bullets (a read-back that took the hidden text for
    // a no-op escalated, and a retry would have typed it twice).
    assert_eq!(value("Password"), Some(json!("●".repeat(7))));
    assert_eq!(value("Card number"), Some(json!("4111222233334444")));

    // action.json: the secrets are gone, the user name is kept.
    let action = |turn: u32| read_json(&dir.join(format!("turn-{turn:05}/action.json")));
    for turn in [1, 2] {
        assert_eq!(
            action(turn)["arguments"]["text"],
            "[redacted]",
            "turn {turn}"
        );
        assert_eq!(action(turn)["redacted"], json!(["text"]), "turn {turn}");
    }
    assert_eq!(action(3)["arguments"]["text"], "ann");
    // A password field shows no text to read back: unverifiable, no escalation.
    assert_eq!(
        action(1)["result"]["effect"],
        "unverifiable",
        "{}",
        action(1)
    );
    assert!(
        action(1)["result"].get("escalation").is_none(),
        "{}",
        action(1)
    );
    // No file of the recording holds either secret.
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let files: Vec<_> = if entry.path().is_dir() {
            std::fs::read_dir(entry.path())
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect()
        } else {
            vec![entry.path()]
        };
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            for secret in ["hunter2", "4111222233334444"] {
                assert!(
                    !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                    "{} holds {secret}",
                    f.display()
                );
            }
        }
    }
    // Every PNG of every turn: the secret fields are black, the user field is not.
    let rect = |e: &Value| {
        let (x, y, w, h) = common::frame(e);
        (x + 2, y + 2, x + w - 2, y + h - 2)
    };
    let black_in = |img: &Image, (x0, y0, x1, y1): (i64, i64, i64, i64)| {
        (y0..y1).all(|y| (x0..x1).all(|x| img.pixel(x, y) == [0, 0, 0]))
    };
    let mut pngs = 0;
    for turn in 1..=3 {
        for name in ["before.png", "screenshot.png", "click.png"] {
            let Ok(bytes) = std::fs::read(dir.join(format!("turn-{turn:05}/{name}"))) else {
                continue;
            };
            pngs += 1;
            let img = Image::decode(&bytes);
            assert!(
                black_in(&img, rect(&password)),
                "turn {turn} {name}: password shows"
            );
            assert!(
                black_in(&img, rect(&card)),
                "turn {turn} {name}: card number shows"
            );
            assert!(
                !black_in(&img, rect(&user)),
                "turn {turn} {name}: user is masked"
            );
        }
    }
    assert!(pngs >= 6, "{pngs} PNGs");

    // The video's last frame: the fields, at the window's place on screen.
    let bounds =
        call("list_windows", json!({ "pid": app.pid })).structured["windows"][0]["bounds"].clone();
    let (wx, wy) = (bounds["x"].as_i64().unwrap(), bounds["y"].as_i64().unwrap());
    let frame_png = dir.join("last-frame.png");
    let ffmpeg = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-sseof", "-0.5", "-i"])
        .arg(dir.join("recording.mp4"))
        .args(["-frames:v", "1", "-y"])
        .arg(&frame_png)
        .status()
        .unwrap();
    assert!(ffmpeg.success());
    let frame = Image::decode(&std::fs::read(&frame_png).unwrap());
    // H.264 blurs edges a little: look inside the fields, with a tolerance.
    let mean = |e: &Value| {
        let (x0, y0, x1, y1) = rect(e);
        let (mut sum, mut n) = (0u64, 0u64);
        for y in (wy + y0 + 2)..(wy + y1 - 2) {
            for x in (wx + x0 + 2)..(wx + x1 - 2) {
                sum += frame.pixel(x, y).iter().map(|&c| c as u64).sum::<u64>() / 3;
                n += 1;
            }
        }
        sum / n.max(1)
    };
    assert!(
        mean(&password) < 25,
        "video: password mean {}",
        mean(&password)
    );
    assert!(mean(&card) < 25, "video: card number mean {}", mean(&card));
    assert!(mean(&user) > 150, "video: user mean {}", mean(&user));

    // Replaying a redacted turn asks for its text.
    let opts = cua::replay::ReplayOptions {
        delay_ms: 0,
        stop_on_error: true,
        ..Default::default()
    };
    let report = rt
        .block_on(cua::replay::replay(&ctx, &registry, &dir, &opts, |_| {}))
        .unwrap();
    assert!(!report.turns[0].ok, "{:#?}", report.turns);
    assert!(
        report.turns[0].result_summary.contains("CUA_SECRET_TURN_1"),
        "{}",
        report.turns[0].result_summary
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recorded agent loop on the GTK 4 calculator (effects ~250 ms late): click, read the
/// window, click again. Each turn's after-state is what the app showed after that click and
/// before the next one: its display is the one the agent read, and the next turn starts
/// from it. (The next click no longer waits for the turn's window to settle.)
#[test]
fn a_recorded_agent_loop_keeps_what_each_click_showed() {
    let s = common::Session::private();
    let calc = common::App::launched(
        &s.call("launch_app", json!({ "name": "gnome-calculator" }))
            .unwrap(),
    );
    let dir = std::env::temp_dir().join(format!("cua-loop-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let observe = || {
        s.call(
            "get_window_state",
            json!({ "pid": calc.pid, "window_id": calc.window_id, "include_screenshot": false }),
        )
        .unwrap()
        .structured
    };
    // The calculator's display: its text elements' values, as a person reads them.
    let display = |state: &Value| -> Vec<String> {
        state["elements"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["role"] == "text")
            .filter_map(|e| e["value"].as_str().map(str::to_string))
            .collect()
    };
    let mut state = observe();
    s.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    )
    .unwrap();
    let keys = ["1", "2", "×", "3", "4", "=", "5", "6", "×", "7", "8", "="];
    let mut seen = Vec::new();
    for key in keys {
        let index = state["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == "button" && e["name"] == key)
            .unwrap_or_else(|| panic!("no button {key}"))["element_index"]
            .clone();
        let out = s
            .call(
                "click",
                json!({ "pid": calc.pid, "window_id": calc.window_id, "element_index": index }),
            )
            .unwrap();
        assert_eq!(
            out.structured["effect"], "confirmed",
            "{key}: {}",
            out.summary
        );
        state = observe();
        seen.push(display(&state));
    }
    s.call("set_recording", json!({ "enabled": false }))
        .unwrap();
    for (k, key) in keys.iter().enumerate() {
        let turn = dir.join(format!("turn-{:05}", k + 1));
        let after = read_json(&turn.join("app_state.json"));
        assert_eq!(
            display(&after),
            seen[k],
            "turn {} ({key}): its after-state is not what the agent read after it",
            k + 1
        );
        if k + 1 < keys.len() {
            let next = read_json(&dir.join(format!("turn-{:05}/before_state.json", k + 2)));
            assert_eq!(display(&next), seen[k], "turn {}: before-state", k + 2);
        }
    }
    assert!(
        seen.last()
            .unwrap()
            .iter()
            .any(|v| v.replace([',', '\u{2009}'], "").trim() == "4368"),
        "56×78 is not on the display: {:?}",
        seen.last()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
