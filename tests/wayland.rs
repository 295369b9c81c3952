//! The Wayland backend against real native Wayland apps in a headless sway (`cua sandbox
//! start --backend wayland`): the conformance fixtures of GTK 3, GTK 4 and Qt 6 listed,
//! captured and driven by point and by key, their effects read from each fixture's own
//! journal, and recorded into complete turns; background input refused with an
//! escalation, never sent for nothing; and a compositor without the wlroots protocols
//! (weston) named for what it lacks. (Every input tool on every fixture, by element and
//! escalated, is in tests/toolkits.rs's Wayland columns.)

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::journal;
use cua::sandbox::{Backend, SandboxOptions};
use serde_json::{Value, json};

const FIXTURES: &[(&str, &str, &[&str])] = &[
    ("GTK 3", "harness/apps/fixture_gtk3.py", &[]),
    ("GTK 4", "harness/apps/fixture_gtk4.py", &[]),
    ("Qt 6", "harness/apps/fixture_qt.py", &["6"]),
];

/// A session on a Wayland sandbox of its own, its fixtures journaling to `journal`.
struct Wayland {
    session: common::Session,
    journal: PathBuf,
}

impl std::ops::Deref for Wayland {
    type Target = common::Session;
    fn deref(&self) -> &common::Session {
        &self.session
    }
}

impl Wayland {
    fn start() -> Wayland {
        Wayland::start_on(Backend::Wayland)
    }

    /// On sway (`Backend::Wayland`), GNOME Shell (`Backend::Gnome`) or KWin (`Backend::Kde`).
    fn start_on(backend: Backend) -> Wayland {
        let session = common::Session::on(SandboxOptions {
            width: 1280,
            height: 800,
            backend,
        });
        let journal = session.sandbox().dir().join("journal.jsonl");
        let path = journal.to_string_lossy().into_owned();
        Wayland {
            session: session.with_app_env(&[("CUA_FIXTURE_JOURNAL", path)]),
            journal,
        }
    }

    /// Launches a fixture: its pid and window id.
    fn launch(&self, script: &str, args: &[&str]) -> (u64, u64) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
        let launched = self.ok(
            "launch_app",
            json!({
                "path": path.to_string_lossy(),
                "additional_arguments": args,
                "creates_new_application_instance": true,
            }),
        );
        (
            launched["pid"].as_u64().unwrap(),
            launched["windows"][0]["window_id"].as_u64().unwrap(),
        )
    }

    /// Waits (bounded) for a journal event after the first `seen` that `shows` accepts.
    fn journal_shows(&self, seen: usize, shows: impl Fn(&Value) -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if journal(&self.journal).iter().skip(seen).any(&shows) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn seen(&self) -> usize {
        journal(&self.journal).len()
    }
}

fn element<'a>(state: &'a Value, roles: &str, name: &str) -> &'a Value {
    state["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| roles.split('|').any(|r| e["role"] == r) && e["name"] == name)
        .unwrap_or_else(|| panic!("no {roles} {name:?} in {}", state["tree_markdown"]))
}

fn center(e: &Value) -> (i64, i64) {
    let f = &e["pixel_frame"];
    (
        f["x"].as_i64().unwrap() + f["w"].as_i64().unwrap() / 2,
        f["y"].as_i64().unwrap() + f["h"].as_i64().unwrap() / 2,
    )
}

/// The call's arguments at `at`, with `extra`, delivered in the foreground (the seat's
/// pointer and keyboard: Wayland has no background route).
fn foreground(at: &Value, extra: Value) -> Value {
    let mut args = at.clone();
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    args["delivery_mode"] = json!("foreground");
    args
}

/// Ends a fixture the test launched.
fn stop(pid: u64) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
}

/// The window's own screenshot, as get_window_state takes it.
fn window_image(w: &Wayland, at: &Value) -> image::RgbImage {
    let shot = w
        .call("get_window_state", at.clone())
        .unwrap()
        .image
        .expect("a screenshot");
    image::load_from_memory(&shot.data).unwrap().to_rgb8()
}

fn event_is(e: &Value, event: &str, widget: &str) -> bool {
    e["event"] == event && e["widget"] == widget
}

/// Each toolkit's window is listed with its pid and title, its screenshot is the window
/// (its size, not one flat colour), a click at the point where Increment is drawn clicks
/// it, keys reach the focused field and a hotkey its modifiers, with recording on: each
/// turn written whole (action, before and after states, screenshot).
#[test]
fn native_gtk3_gtk4_and_qt6_windows_are_listed_captured_driven_and_recorded() {
    fixtures_are_listed_captured_driven_and_recorded(Backend::Wayland);
}

/// The same on GNOME Shell (mutter), through cua's Shell extension.
#[test]
fn on_gnome_gtk3_gtk4_and_qt6_windows_are_listed_captured_driven_and_recorded() {
    fixtures_are_listed_captured_driven_and_recorded(Backend::Gnome);
}

/// The same on KDE's KWin, through its window list, fake input and screenshots.
#[test]
fn on_kde_gtk3_gtk4_and_qt6_windows_are_listed_captured_driven_and_recorded() {
    fixtures_are_listed_captured_driven_and_recorded(Backend::Kde);
}

/// KWin places windows through its scripting: each toolkit's window is moved and sized,
/// read back from KWin's window list and from the app's own drawing (its screenshot).
#[test]
fn on_kde_set_window_frame_moves_and_sizes_gtk3_gtk4_and_qt6_windows() {
    let w = Wayland::start_on(Backend::Kde);
    for (i, (toolkit, script, args)) in FIXTURES.iter().enumerate() {
        let (pid, window_id) = w.launch(script, args);
        let wanted = json!({ "x": 60 + 200 * i, "y": 40 + 30 * i, "width": 520, "height": 640 });
        let mut args = json!({ "pid": pid, "window_id": window_id });
        args.as_object_mut()
            .unwrap()
            .extend(wanted.as_object().unwrap().clone());
        let placed = w.ok("set_window_frame", args);
        assert_eq!(placed["effect"], "confirmed", "{toolkit}: {placed}");
        let listed = w.ok("list_windows", json!({ "pid": pid }));
        let bounds = &listed["windows"][0]["bounds"];
        assert_eq!(bounds, &wanted, "{toolkit}: {listed}");
        let state = w.ok(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id }),
        );
        assert_eq!(
            (&state["screenshot_width"], &state["screenshot_height"]),
            (&json!(520), &json!(640)),
            "{toolkit}"
        );
    }
}

fn fixtures_are_listed_captured_driven_and_recorded(backend: Backend) {
    let w = Wayland::start_on(backend);
    for (toolkit, script, args) in FIXTURES {
        let (pid, window_id) = w.launch(script, args);
        let at = json!({ "pid": pid, "window_id": window_id });

        let listed = w.ok("list_windows", json!({}));
        let window = listed["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["window_id"] == window_id)
            .unwrap_or_else(|| panic!("{toolkit}: window {window_id} not listed: {listed}"));
        assert_eq!(window["pid"], pid, "{toolkit}: {window}");
        assert!(
            window["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("cua fixture")),
            "{toolkit}: {window}"
        );

        let state = w.ok("get_window_state", at.clone());
        assert_eq!(
            state["screenshot_width"], window["bounds"]["width"],
            "{toolkit}"
        );
        assert_eq!(
            state["screenshot_height"], window["bounds"]["height"],
            "{toolkit}"
        );
        let pixels = window_image(&w, &at);
        let first = pixels.get_pixel(0, 0);
        assert!(
            pixels.pixels().any(|p| p != first),
            "{toolkit}: the screenshot is one flat colour"
        );

        let run = w
            .sandbox()
            .dir()
            .join(format!("run-{}", toolkit.replace(' ', "")));
        w.ok(
            "set_recording",
            json!({ "enabled": true, "output_dir": run }),
        );
        // A click where Increment is drawn (the seat's pointer: foreground).
        let (x, y) = center(element(&state, "button|push_button", "Increment"));
        let seen = w.seen();
        let click = foreground(&at, json!({ "x": x, "y": y }));
        let clicked = w.ok("click", click);
        assert!(
            w.journal_shows(seen, |e| event_is(e, "clicked", "Increment")),
            "{toolkit}: the click at ({x}, {y}) did not reach Increment: {clicked}"
        );

        // Keys to the Name field, focused by a click on it.
        let name = element(&state, "text|entry", "Name");
        let focus = foreground(
            &at,
            json!({ "element_index": name["element_index"].clone() }),
        );
        w.ok("click", focus);
        let seen = w.seen();
        let keys = foreground(&at, json!({ "text": "ok", "as_keys": true }));
        w.ok("type_text", keys);
        assert!(
            w.journal_shows(seen, |e| event_is(e, "changed", "Name")
                && e["text"].as_str().is_some_and(|t| t.ends_with("ok"))),
            "{toolkit}: typed keys did not reach Name: {:?}",
            journal(&w.journal)
        );
        // ctrl+a selects the field's text (the modifier arrived with the key), so the
        // next key replaces it.
        let hotkey = foreground(&at, json!({ "keys": ["ctrl", "a"] }));
        w.ok("hotkey", hotkey);
        let seen = w.seen();
        let replace = foreground(&at, json!({ "key": "z" }));
        w.ok("press_key", replace);
        assert!(
            w.journal_shows(seen, |e| event_is(e, "changed", "Name") && e["text"] == "z"),
            "{toolkit}: ctrl+a then z did not replace the text: {:?}",
            journal(&w.journal).iter().skip(seen).collect::<Vec<_>>()
        );
        w.ok("set_recording", json!({ "enabled": false }));

        let turns = cua::replay::turn_dirs(&run).expect("turns recorded");
        assert_eq!(turns.len(), 5, "{toolkit}: {turns:?}");
        for (_, turn) in &turns {
            for file in [
                "action.json",
                "app_state.json",
                "before_state.json",
                "screenshot.png",
            ] {
                assert!(
                    turn.join(file).is_file(),
                    "{toolkit}: {} has no {file}",
                    turn.display()
                );
            }
        }
        stop(pid);
    }
}

/// On a wlroots compositor without sway's IPC, no protocol gives a window's pid: the
/// window is joined to the app on the accessibility bus with a top-level of its title, so
/// list_windows still names the launched fixture's pid, and its tree reads.
#[test]
fn without_the_compositors_ipc_a_window_gets_its_pid_from_the_accessibility_bus() {
    let w = Wayland::start();
    let (pid, _) = w.launch(FIXTURES[0].1, FIXTURES[0].2);
    let mut env = w.sandbox().desktop();
    env.sway_socket = None;
    // A second session on the same desktop, blind to sway's IPC.
    let blind = common::Session::for_desktop(env);
    let listed = blind.ok("list_windows", json!({}));
    let window = listed["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| {
            x["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("cua fixture"))
        })
        .unwrap_or_else(|| panic!("the fixture's window is not listed: {listed}"))
        .clone();
    assert_eq!(window["pid"], pid, "{window}");
    let state = blind.ok(
        "get_window_state",
        json!({ "pid": pid, "window_id": window["window_id"] }),
    );
    element(&state, "push_button|button", "Increment");
    let checks = blind.ok("check_permissions", json!({}));
    assert!(checks.to_string().contains("no compositor IPC"), "{checks}");
}

/// Wayland cannot address events to one window: a background click at a point sends
/// nothing (the fixture's journal stays quiet), and says so with an escalation to the
/// foreground, never `confirmed`.
#[test]
fn background_input_on_wayland_escalates_and_sends_nothing() {
    background_input_escalates_and_sends_nothing(
        Backend::Wayland,
        &[
            "foreign_toplevel",
            "screencopy",
            "virtual_pointer",
            "virtual_keyboard",
        ],
    );
}

#[test]
fn background_input_on_gnome_escalates_and_sends_nothing() {
    background_input_escalates_and_sends_nothing(
        Backend::Gnome,
        &["gnome_shell", "window_list", "screenshots", "seat_input"],
    );
}

#[test]
fn background_input_on_kde_escalates_and_sends_nothing() {
    background_input_escalates_and_sends_nothing(
        Backend::Kde,
        &["plasma_window_management", "kwin_screenshot", "fake_input"],
    );
}

/// Background input is refused with an escalation and reaches nothing; the display's own
/// checks (`checks`) pass, and health_report calls the desktop healthy.
fn background_input_escalates_and_sends_nothing(backend: Backend, checks: &[&str]) {
    let w = Wayland::start_on(backend);
    let (pid, window_id) = w.launch(FIXTURES[0].1, FIXTURES[0].2);
    let at = json!({ "pid": pid, "window_id": window_id });
    let state = w.ok("get_window_state", at.clone());
    let (x, y) = center(element(&state, "push_button|button", "Options"));
    let seen = w.seen();
    let mut click = at.clone();
    click["x"] = json!(x);
    click["y"] = json!(y);
    click["button"] = json!("middle");
    let reply = w.ok("click", click);
    assert_eq!(reply["escalation"]["recommended"], "foreground", "{reply}");
    assert_ne!(reply["effect"], "confirmed", "{reply}");
    let mut keys = at.clone();
    keys["key"] = json!("x");
    let pressed = w.ok("press_key", keys);
    assert_eq!(
        pressed["escalation"]["recommended"], "foreground",
        "{pressed}"
    );
    assert!(
        !w.journal_shows(seen, |e| e["event"] == "key-press"
            || e["event"] == "middle-click"
            || e["event"] == "clicked"),
        "background input reached the app: {:?}",
        journal(&w.journal).iter().skip(seen).collect::<Vec<_>>()
    );
    let answered = w.ok("check_permissions", json!({}));
    for name in checks {
        let check = answered["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == *name)
            .unwrap_or_else(|| panic!("no {name} check: {answered}"));
        assert_eq!(check["ok"], true, "{check}");
    }
    // health_report reads the same checks by what they are about, not by X11 names: a
    // working sway desktop is healthy.
    let health = w.ok("health_report", json!({}));
    assert_eq!(health["overall"], "ok", "{health}");
    for c in health["checks"].as_array().unwrap() {
        assert_eq!(c["status"], "pass", "{c}");
    }
}

/// A compositor without the wlroots protocols (weston, as GNOME's and KDE's lack them):
/// check_permissions names each one missing, and list_windows says why it cannot list,
/// instead of an empty list.
#[test]
fn a_compositor_without_the_protocols_is_named_for_what_it_lacks() {
    let runtime =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("weston-{}", std::process::id()));
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let mut weston = std::process::Command::new("weston")
        .args([
            "--backend=headless-backend.so",
            "--socket=wayland-cua",
            "--idle-time=0",
        ])
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("weston runs (scripts/setup installs it)");
    let socket = runtime.join("wayland-cua");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "weston did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cua = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("SWAYSOCK")
            .env("WAYLAND_DISPLAY", &socket)
            .env("CUA_BACKEND", "wayland")
            .output()
            .unwrap()
    };
    let checks = cua(&["call", "check_permissions", "{}"]);
    let checks: Value = serde_json::from_slice(&checks.stdout).unwrap();
    let by_name = |name: &str| {
        checks["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} check: {checks}"))
    };
    assert_eq!(by_name("wayland_display")["ok"], true);
    for name in [
        "foreign_toplevel",
        "screencopy",
        "virtual_pointer",
        "virtual_keyboard",
    ] {
        let check = by_name(name);
        assert_eq!(check["ok"], false, "{check}");
        assert!(
            check["detail"]
                .as_str()
                .is_some_and(|d| d.contains("not offered") && d.contains("still work")
                    || d.contains("not offered") && name == "foreign_toplevel"),
            "{check}"
        );
    }
    let listed = cua(&["call", "list_windows", "{}"]);
    assert!(!listed.status.success());
    let said = String::from_utf8_lossy(&listed.stderr);
    assert!(
        said.contains("zwlr_foreign_toplevel_manager_v1"),
        "list_windows: {said}"
    );
    let _ = weston.kill();
    let _ = weston.wait();
    let _ = std::fs::remove_dir_all(&runtime);
}

/// The clipboard through wlr-data-control, both ways and through each toolkit: text cua
/// writes is what the app pastes (ctrl+v into its Name field, seen in its journal), text
/// the app copies (ctrl+a, ctrl+c) is what cua reads, and check_permissions names the
/// protocol.
#[test]
fn the_clipboard_carries_text_both_ways_through_native_wayland_apps() {
    let w = Wayland::start();
    let checks = w.ok("check_permissions", json!({}));
    assert!(
        checks["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "data_control" && c["ok"] == true),
        "{checks}"
    );
    for (toolkit, script, args) in FIXTURES {
        let (pid, window_id) = w.launch(script, args);
        let at = json!({ "pid": pid, "window_id": window_id });
        let pasted = format!("pasted by cua into {toolkit}");
        w.ok("clipboard_write", json!({ "text": pasted }));
        let read = w.ok("clipboard_read", json!({ "include_text": true }));
        assert_eq!(read["text"], pasted.as_str(), "{toolkit}: {read}");

        let state = w.ok("get_window_state", at.clone());
        let focus = foreground(
            &at,
            json!({ "element_index": element(&state, "text|entry", "Name")["element_index"].clone() }),
        );
        w.ok("click", focus);
        let seen = w.seen();
        for keys in [["ctrl", "a"], ["ctrl", "v"]] {
            let hotkey = foreground(&at, json!({ "keys": keys }));
            w.ok("hotkey", hotkey);
        }
        assert!(
            w.journal_shows(seen, |e| event_is(e, "changed", "Name")
                && e["text"] == pasted.as_str()),
            "{toolkit}: the app never pasted cua's text: {:?}",
            journal(&w.journal).iter().skip(seen).collect::<Vec<_>>()
        );

        // The app copies what a person typed: the field's text, selected and copied with
        // the app's own shortcuts.
        let copied = format!("copied by {toolkit}");
        let seen = w.seen();
        let typed = foreground(&at, json!({ "text": copied, "as_keys": true }));
        let select = foreground(&at, json!({ "keys": ["ctrl", "a"] }));
        w.ok("hotkey", select);
        w.ok("type_text", typed);
        assert!(
            w.journal_shows(seen, |e| event_is(e, "changed", "Name")
                && e["text"] == copied.as_str()),
            "{toolkit}: the typed text never reached Name"
        );
        for keys in [["ctrl", "a"], ["ctrl", "c"]] {
            let hotkey = foreground(&at, json!({ "keys": keys }));
            w.ok("hotkey", hotkey);
        }
        let deadline = Instant::now() + Duration::from_secs(4);
        loop {
            let read = w.ok("clipboard_read", json!({ "include_text": true }));
            if read["text"] == copied.as_str() {
                assert!(!read["types"].as_array().unwrap().is_empty(), "{read}");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{toolkit}: cua never read the app's copy: {read}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let types_only = w.ok("clipboard_read", json!({}));
        assert!(types_only["text"].is_null(), "{types_only}");
        stop(pid);
    }
}

/// Video on Wayland: screencopy frames of the output, encoded by cua-video as on X11. The
/// file is H.264 at 30 fps lasting as long as the recording, and its last frame shows the
/// fixture as its own screenshot does at the window's place (after a click that changed
/// it), not a black or stale screen.
#[test]
fn video_records_the_wayland_output() {
    let w = Wayland::start();
    let (pid, window_id) = w.launch(FIXTURES[0].1, FIXTURES[0].2);
    let at = json!({ "pid": pid, "window_id": window_id });
    let dir = w.sandbox().dir().join("video-run");
    let outer = Instant::now();
    w.ok(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir, "video_experimental": true }),
    );
    let inner = Instant::now();
    let state = w.ok("get_window_state", at.clone());
    let increment = element(&state, "button|push_button", "Increment");
    let click =
        json!({ "pid": pid, "window_id": window_id, "element_index": increment["element_index"] });
    let seen = w.seen();
    w.ok("click", click);
    assert!(w.journal_shows(seen, |e| event_is(e, "clicked", "Increment")));
    std::thread::sleep(Duration::from_millis(2000)); // video time after the change
    let inner = inner.elapsed().as_secs_f64();
    let stopped = w.ok("set_recording", json!({ "enabled": false }));
    let outer = outer.elapsed().as_secs_f64();
    assert!(stopped["last_error"].is_null(), "{stopped}");

    let video = dir.join("recording.mp4");
    let info = common::probe_video(&video);
    assert_eq!(info["streams"][0]["codec_name"], "h264", "{info}");
    assert_eq!(info["streams"][0]["r_frame_rate"], "30/1", "{info}");
    let duration: f64 = info["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        inner - 0.1 <= duration && duration <= outer + 0.1,
        "the video lasts {duration:.2} s; the recording {inner:.2} s to {outer:.2} s"
    );
    let session: Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
    let frames = session["video"]["frames"].as_f64().unwrap();
    eprintln!("{frames} frames grabbed in {duration:.2} s");
    assert!(
        frames >= duration * 10.0,
        "{frames} frames in {duration:.2} s: screencopy too slow"
    );

    let last = dir.join("last-frame.png");
    let extracted = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-sseof", "-0.3", "-i"])
        .arg(&video)
        .args(["-frames:v", "1", "-y"])
        .arg(&last)
        .status()
        .unwrap();
    assert!(extracted.success());
    let frame = image::open(&last).unwrap().to_rgb8();
    let shot = window_image(&w, &at);
    let listed = w.ok("list_windows", json!({ "pid": pid }));
    let bounds = &listed["windows"][0]["bounds"];
    let (x0, y0) = (
        bounds["x"].as_u64().unwrap() as u32,
        bounds["y"].as_u64().unwrap() as u32,
    );
    let (mut diff, mut n) = (0u64, 0u64);
    for (x, y, p) in shot.enumerate_pixels() {
        if let Some(v) = frame.get_pixel_checked(x0 + x, y0 + y) {
            diff += (0..3)
                .map(|c| (p[c] as i64 - v[c] as i64).unsigned_abs())
                .sum::<u64>()
                / 3;
            n += 1;
        }
    }
    assert!(
        n > (shot.width() * shot.height()) as u64 / 2,
        "the window is off the video's frame"
    );
    let mean = diff / n;
    assert!(
        mean < 12,
        "the video's last frame differs from the window by {mean} per pixel"
    );
    stop(pid);
}

/// The agent cursor as a layer-shell overlay: it glides to a click's point and shows there
/// on the output (a whole-screen screenshot has the arrow's green body where the click
/// was), lets a foreground click through to the window below (the fixture's journal has
/// the press), never shows in the window's own screenshot, and goes when idle or turned
/// off.
#[test]
fn the_agent_cursor_overlay_shows_on_the_output_and_stays_out_of_window_screenshots() {
    overlay_shows_and_stays_out_of_window_screenshots(Backend::Wayland);
}

/// The same on KWin, whose screenshots come over D-Bus (outside the Wayland connection
/// the overlay is taken off through).
#[test]
fn on_kde_the_agent_cursor_overlay_stays_out_of_window_screenshots() {
    overlay_shows_and_stays_out_of_window_screenshots(Backend::Kde);
}

fn overlay_shows_and_stays_out_of_window_screenshots(backend: Backend) {
    let greenish = |p: &image::Rgb<u8>| p[1] > 170 && p[0] < 110 && p[2] < 110;
    // The arrow's green pixels just below and right of a point (its hot spot); its
    // outline is not green.
    let green_at = |image: &image::RgbImage, (x, y): (u32, u32)| {
        (0..24)
            .flat_map(|dy| (0..24).map(move |dx| (x + dx, y + dy)))
            .filter(|&(x, y)| image.get_pixel_checked(x, y).is_some_and(greenish))
            .count()
    };
    let w = Wayland::start_on(backend);
    // The fixture that journals every button press on its window.
    let (pid, window_id) = w.launch("harness/apps/fixture.py", &[]);
    let at = json!({ "pid": pid, "window_id": window_id });
    if backend == Backend::Wayland {
        let checks = w.ok("check_permissions", json!({}));
        assert!(checks.to_string().contains("\"layer_shell\""), "{checks}");
    }
    w.ok(
        "set_agent_cursor_style",
        json!({ "gradient_colors": ["#00FF00"], "bloom_color": "#00FF00" }),
    );
    w.ok("set_agent_cursor_enabled", json!({ "enabled": true }));
    w.ok(
        "set_agent_cursor_motion",
        json!({ "glide_duration_ms": 200, "dwell_after_click_ms": 50, "idle_hide_ms": 4000 }),
    );
    let bounds = w.ok("list_windows", json!({ "pid": pid }))["windows"][0]["bounds"].clone();
    let (wx, wy) = (
        bounds["x"].as_u64().unwrap() as u32,
        bounds["y"].as_u64().unwrap() as u32,
    );
    let desktop = || {
        let shot = w
            .call("get_desktop_state", json!({}))
            .unwrap()
            .image
            .expect("an image");
        image::load_from_memory(&shot.data).unwrap().to_rgb8()
    };

    // A bare spot of the window, by the seat's pointer: the overlay glides there first.
    let spot = (30u32, bounds["height"].as_u64().unwrap() as u32 - 30);
    let seen = w.seen();
    let click = foreground(&at, json!({ "x": spot.0, "y": spot.1 }));
    w.ok("click", click);
    assert!(
        w.journal_shows(seen, |e| e["event"] == "button-press"),
        "the press did not reach the window under the overlay: {:?}",
        journal(&w.journal).iter().skip(seen).collect::<Vec<_>>()
    );
    let (sx, sy) = (wx + spot.0, wy + spot.1);
    let shown = green_at(&desktop(), (sx, sy));
    assert!(
        shown >= 8,
        "the output does not show the cursor at ({sx}, {sy}): {shown} green pixels"
    );
    let own = green_at(&window_image(&w, &at), spot);
    assert_eq!(
        own, 0,
        "the window's screenshot shows the cursor at {spot:?}"
    );
    // Shown again after that screenshot: the overlay is back where it was.
    let again = green_at(&desktop(), (sx, sy));
    assert!(
        again >= 8,
        "the overlay did not come back: {again} green pixels"
    );

    w.ok("set_agent_cursor_enabled", json!({ "enabled": false }));
    let deadline = Instant::now() + Duration::from_secs(3);
    while green_at(&desktop(), (sx, sy)) > 0 {
        assert!(
            Instant::now() < deadline,
            "the overlay stayed after it was turned off"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    stop(pid);
}

/// The seat's pointer is never in a window's screenshot: if the compositor drew it into
/// the frames screencopy copies, a screenshot would show it wherever the last pointer
/// action left it, and two runs of the same scenario would differ by pixels. After
/// foreground clicks at two bare spots of the window, each spot looks the same in both
/// screenshots.
#[test]
fn the_seats_pointer_is_not_in_window_screenshots() {
    let w = Wayland::start();
    let (pid, window_id) = w.launch("harness/apps/fixture.py", &[]);
    let at = json!({ "pid": pid, "window_id": window_id });
    let height = w.ok("list_windows", json!({ "pid": pid }))["windows"][0]["bounds"]["height"]
        .as_u64()
        .unwrap() as u32;
    let spots = [(30u32, height - 30), (200u32, height - 30)];
    let mut shots = Vec::new();
    for (x, y) in spots {
        let seen = w.seen();
        let click = foreground(&at, json!({ "x": x, "y": y }));
        w.ok("click", click);
        assert!(w.journal_shows(seen, |e| e["event"] == "button-press"));
        shots.push(window_image(&w, &at));
    }
    for (x, y) in spots {
        let differing = (0..24)
            .flat_map(|dy| (0..24).map(move |dx| (x + dx, y + dy)))
            .filter(|&(x, y)| shots[0].get_pixel_checked(x, y) != shots[1].get_pixel_checked(x, y))
            .count();
        assert_eq!(
            differing, 0,
            "the pointer shows in a screenshot near ({x}, {y})"
        );
    }
    stop(pid);
}
