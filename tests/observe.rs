//! Observation tools against real apps in a headless desktop: trees, frames, screenshots.

mod common;

use common::{App, Image, Session, call, desktop, elements, frame, window_state};
use serde_json::{Value, json};

#[test]
fn calculator_gtk4_digit_buttons_exist_with_a_click_action() {
    let state = window_state(&desktop().calculator);
    assert_eq!(state.structured["tree_source"], "accessibility");
    let els = elements(&state);
    for digit in 0..=9 {
        let name = digit.to_string();
        let button = els
            .iter()
            .find(|e| e["role"] == "button" && e["name"] == name.as_str())
            .unwrap_or_else(|| {
                panic!(
                    "no button {digit} in\n{}",
                    state.structured["tree_markdown"]
                )
            });
        let actions: Vec<&str> = button["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(
            actions.contains(&"click"),
            "button {digit} actions {actions:?}"
        );
    }
    let md = state.structured["tree_markdown"].as_str().unwrap();
    assert!(
        md.contains("] button \"7"),
        "markdown tags the 7 button with an index:\n{md}"
    );
}

/// Names as a person reads them: GTK 4's doubled labels ("7 7") said once, widget class
/// names ("GtkMenuButton") replaced by the tooltip GTK 4 puts in the description (or by
/// nothing), and no name with spaces around it, in GTK 4 and in GTK 3's open menus.
#[test]
fn names_are_as_a_person_reads_them_in_gtk4_and_in_gtk3_menus() {
    let check = |state: &cua::tools::ToolOutput| {
        for e in elements(state) {
            let name = e["name"].as_str().unwrap();
            let md = &state.structured["tree_markdown"];
            assert_eq!(name, name.trim(), "untrimmed name in\n{md}");
            let halves = name.split_once(' ');
            assert!(
                halves.is_none_or(|(a, b)| a != b),
                "doubled name {name:?} in\n{md}"
            );
            assert!(
                !(name.starts_with("Gtk") || name.starts_with("Adw")) || name.contains(' '),
                "widget class name {name:?} in\n{md}"
            );
        }
    };
    let calculator = window_state(&desktop().calculator);
    check(&calculator);
    let md = calculator.structured["tree_markdown"].as_str().unwrap();
    assert!(md.contains("button \"Primary menu\""), "{md}");

    // GTK 3 menus: mousepad's items, read while each menu is open, on a desktop of its own
    // (an open menu in the shared one would take other tests' input).
    let s = Session::private();
    let app = App::launched(&s.call("launch_app", json!({ "name": "mousepad" })).unwrap());
    let at = json!({ "pid": app.pid, "window_id": app.window_id });
    for menu in ["File", "Edit", "View", "Document"] {
        let state = s.call("get_window_state", at.clone()).unwrap();
        let index = elements(&state)
            .into_iter()
            .find(|e| e["role"] == "menu" && e["name"] == menu)
            .unwrap_or_else(|| panic!("no menu {menu}"))["element_index"]
            .clone();
        let mut open = at.clone();
        open["element_index"] = index;
        open["settle_ms"] = json!(1000);
        s.call("click", open).unwrap();
        let opened = s.call("get_window_state", at.clone()).unwrap();
        let items = elements(&opened)
            .iter()
            .filter(|e| e["role"] == "menu_item")
            .count();
        assert!(items > 2, "menu {menu} did not open");
        check(&opened);
        s.call("press_key", json!({ "pid": app.pid, "key": "Escape" }))
            .unwrap();
    }
}

#[test]
fn calculator_gtk4_frames_land_on_the_widgets_in_the_screenshot() {
    let state = window_state(&desktop().calculator);
    let shot = Image::decode(&state.image.as_ref().expect("screenshot").data);
    let equals = elements(&state)
        .into_iter()
        .find(|e| e["role"] == "button" && e["name"].as_str().unwrap().starts_with('='))
        .expect("= button");
    let (x, y, w, h) = frame(&equals);
    // The = button is the calculator's one orange widget: its frame centre must be orange.
    let [r, g, b] = shot.pixel(x + w / 2, y + h / 2);
    assert!(
        r > 200 && (90..190).contains(&g) && b < 90,
        "pixel at = centre is {:?}",
        (r, g, b)
    );
    // And just outside the frame's left edge, at least 8 px away, it is not.
    let [r, g, b] = shot.pixel(x - 8, y + h / 2);
    assert!(
        !(r > 200 && (90..190).contains(&g) && b < 90),
        "frame too far right: {:?}",
        (r, g, b)
    );
}

#[test]
fn widget_factory_gtk3_has_check_buttons_and_sliders_with_correct_frames() {
    let state = window_state(&desktop().widget_factory);
    let els = elements(&state);
    let checked = els
        .iter()
        .find(|e| {
            e["role"] == "check_box"
                && e["states"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s == "checked")
                && e["states"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s == "sensitive")
        })
        .expect("a checked, sensitive check box");
    assert!(els.iter().any(|e| e["role"] == "slider"), "no slider");
    let shot = Image::decode(&state.image.as_ref().unwrap().data);
    // A checked GTK3 check box draws a blue square at the left of its frame.
    let (x, y, w, h) = frame(checked);
    let blue = (x..(x + 30).min(x + w))
        .flat_map(|px| (y..y + h).map(move |py| (px, py)))
        .filter(|(px, py)| {
            let [r, g, b] = shot.pixel(*px, *py);
            b > 180 && r < 120 && g > 90 && g < 180
        })
        .count();
    assert!(
        blue > 20,
        "no blue check mark inside the check box frame ({blue} blue pixels)"
    );
}

#[test]
fn mousepad_has_menus_and_an_editable_text_area() {
    let state = window_state(&desktop().mousepad);
    let els = elements(&state);
    assert!(
        els.iter()
            .any(|e| e["role"] == "menu" && e["name"] == "File"),
        "no File menu"
    );
    assert!(
        els.iter().any(|e| e["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "editable")),
        "no editable text"
    );
}

#[test]
fn screenshot_size_matches_the_window_and_is_not_blank() {
    let d = desktop();
    let windows = call("list_windows", json!({ "pid": d.mousepad.pid })).unwrap();
    let bounds = &windows.structured["windows"][0]["bounds"];
    let shot = call("screenshot", json!({ "window_id": d.mousepad.window_id })).unwrap();
    let img = Image::decode(&shot.image.unwrap().data);
    assert_eq!(img.width as u64, bounds["width"].as_u64().unwrap());
    assert_eq!(img.height as u64, bounds["height"].as_u64().unwrap());
    assert!(
        img.distinct_colors() > 20,
        "screenshot looks blank ({} colours)",
        img.distinct_colors()
    );
}

#[test]
fn covered_window_screenshot_is_not_black() {
    let d = desktop();
    let list = call("list_windows", json!({})).unwrap().structured;
    let find = |id: u64| {
        list["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["window_id"] == id)
            .unwrap()
            .clone()
    };
    let (calc, wf) = (
        find(d.calculator.window_id),
        find(d.widget_factory.window_id),
    );
    let rect = |w: &serde_json::Value| {
        let b = &w["bounds"];
        (
            b["x"].as_i64().unwrap(),
            b["y"].as_i64().unwrap(),
            b["width"].as_i64().unwrap(),
            b["height"].as_i64().unwrap(),
        )
    };
    let (cx, cy, cw, ch) = rect(&calc);
    let (wx, wy, ww, wh) = rect(&wf);
    assert!(
        wf["z_index"].as_u64() > calc["z_index"].as_u64()
            && cx < wx + ww
            && wx < cx + cw
            && cy < wy + wh
            && wy < cy + ch,
        "precondition: the widget factory must cover the calculator: {calc} / {wf}"
    );
    let state = window_state(&d.calculator);
    let img = Image::decode(&state.image.as_ref().unwrap().data);
    assert!(
        img.black_fraction() < 0.05,
        "covered window came out {:.0}% black",
        img.black_fraction() * 100.0
    );
    // What is captured is the calculator itself, not the window on top: its orange = key.
    let equals = elements(&state)
        .into_iter()
        .find(|e| e["name"].as_str().unwrap().starts_with('='))
        .unwrap();
    let (x, y, w, h) = frame(&equals);
    let [r, g, b] = img.pixel(x + w / 2, y + h / 2);
    assert!(
        r > 200 && b < 90 && g > 90,
        "= key not visible in covered capture: {:?}",
        (r, g, b)
    );
}

#[test]
fn window_of_another_pid_is_a_clear_error() {
    let d = desktop();
    let err = call(
        "get_window_state",
        json!({ "pid": d.calculator.pid, "window_id": d.widget_factory.window_id }),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("belongs to") && err.contains(&d.calculator.pid.to_string()),
        "{err}"
    );
    let err = call(
        "get_window_state",
        json!({ "pid": d.calculator.pid, "window_id": 1 }),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("window 1 not found"), "{err}");
}

#[test]
fn query_filters_markdown_but_keeps_indices() {
    let d = desktop();
    let full = window_state(&d.calculator);
    let filtered = call(
        "get_window_state",
        json!({ "pid": d.calculator.pid, "window_id": d.calculator.window_id, "query": "√", "include_screenshot": false }),
    )
    .unwrap();
    assert_eq!(
        full.structured["element_count"],
        filtered.structured["element_count"]
    );
    let md = filtered.structured["tree_markdown"].as_str().unwrap();
    assert!(md.lines().any(|l| l.contains('√')), "{md}");
    assert!(md.lines().count() < 6, "filter kept too much:\n{md}");
    assert!(filtered.image.is_none());
}

#[test]
fn list_apps_and_list_windows_report_the_running_apps() {
    let d = desktop();
    let apps = call("list_apps", json!({})).unwrap().structured;
    let calc = apps["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Calculator")
        .expect("Calculator listed");
    assert_eq!(calc["running"], true);
    assert_eq!(calc["pid"], d.calculator.pid);
    // One running app, one entry: the editor's settings entry runs the same program
    // (`mousepad --preferences`) but is not the running editor.
    let by_id = |id: &str| {
        apps["apps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["desktop_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} listed: {apps}"))
    };
    assert_eq!(by_id("org.xfce.mousepad")["pid"], d.mousepad.pid);
    assert_eq!(by_id("org.xfce.mousepad-settings")["pid"], 0);
    let windows = call("list_windows", json!({ "pid": d.calculator.pid }))
        .unwrap()
        .structured;
    let w = &windows["windows"][0];
    assert_eq!(w["window_id"], d.calculator.window_id);
    assert_eq!(w["title"], "Calculator");
    assert_eq!(w["is_on_screen"], true);
    assert!(windows["current_space_id"].is_u64());
    // Launching a running app reuses it.
    let again = call("launch_app", json!({ "name": "Calculator" }))
        .unwrap()
        .structured;
    assert_eq!(again["pid"], d.calculator.pid);
    assert_eq!(again["newly_started"], false);
}

#[test]
fn zoom_returns_the_padded_region() {
    let d = desktop();
    let out = call(
        "zoom",
        json!({ "pid": d.calculator.pid, "window_id": d.calculator.window_id, "x1": 100, "y1": 100, "x2": 200, "y2": 150 }),
    )
    .unwrap();
    assert_eq!(out.structured["x"], 80);
    assert_eq!(out.structured["y"], 90);
    assert_eq!(out.structured["width"], 140);
    assert_eq!(out.structured["height"], 70);
    let img = Image::decode(&out.image.unwrap().data);
    assert_eq!((img.width, img.height), (140, 70));
}

#[test]
fn check_permissions_passes_in_the_sandbox() {
    let out = call("check_permissions", json!({})).unwrap().structured;
    assert_eq!(out["ok"], true, "{out}");
    let names: Vec<&str> = out["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for expected in [
        "x11_display",
        "x11_extension_xtest",
        "x11_extension_mit_shm",
        "x11_extension_composite",
        "x11_extension_xfixes",
        "atspi_bus",
        "accessibility_enabled",
    ] {
        assert!(names.contains(&expected), "missing check {expected}");
    }
}

#[test]
fn screen_size_and_cursor_position() {
    let size = call("get_screen_size", json!({})).unwrap().structured;
    assert_eq!(
        (size["width"].as_u64(), size["height"].as_u64()),
        (Some(1280), Some(800))
    );
    let cursor = call("get_cursor_position", json!({})).unwrap().structured;
    assert!(cursor["x"].is_i64() && cursor["y"].is_i64());
}

#[test]
fn launch_app_follows_launchers_that_fork_or_wait_to_the_window_owner() {
    // Two launchers of the GTK 3 fixture: one forks it and exits at once (as LibreOffice's
    // does), one runs it as a child and waits. Either way the window is the fixture's, and
    // launch_app names its pid and the launcher's.
    let dir = std::env::temp_dir().join(format!("cua-launchers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/harness/apps/fixture.py");
    for (name, body) in [
        ("forks", format!("/usr/bin/python3 {fixture} &\nexit 0\n")),
        ("waits", format!("/usr/bin/python3 {fixture}\n")),
    ] {
        let script = dir.join(name);
        std::fs::write(&script, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let launched = call(
            "launch_app",
            json!({ "path": script.to_string_lossy(), "creates_new_application_instance": true }),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = &launched.structured;
        let pid = s["pid"].as_u64().unwrap();
        let launcher = s["launcher_pid"]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: no launcher_pid in {s}"));
        assert_ne!(pid, launcher, "{name}: {s}");
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
        assert!(
            cmdline.contains("fixture.py"),
            "{name}: pid {pid} runs {cmdline:?}"
        );
        let window = &s["windows"][0];
        assert_eq!(window["pid"], pid, "{name}: {s}");
        assert!(
            window["title"].as_str().unwrap().contains("cua fixture"),
            "{name}: {s}"
        );
        let state = call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window["window_id"], "include_screenshot": false }),
        )
        .unwrap();
        assert!(
            elements(&state).iter().any(|e| e["name"] == "Increment"),
            "{name}: {}",
            state.structured["tree_markdown"]
        );
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An app that dies before its first window: the error says how it ended and what it
/// printed last, and its whole output stays in the sandbox folder.
#[test]
fn a_launch_that_dies_says_how_it_ended_and_what_it_printed() {
    let dir = std::env::temp_dir().join(format!("cua-dies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("dies-on-start");
    std::fs::write(
        &script,
        "#!/bin/sh\necho starting\necho 'cannot open display: no such thing' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let err = call(
        "launch_app",
        json!({ "path": script.to_string_lossy(), "creates_new_application_instance": true }),
    )
    .expect_err("a program that exits shows no window")
    .to_string();
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(err.contains("cannot open display: no such thing"), "{err}");
    let log = err
        .rsplit_once("(all of it: ")
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .unwrap_or_else(|| panic!("no log path in {err}"));
    let sandbox = desktop().env.sandbox_dir.clone().unwrap();
    assert!(
        log.starts_with(&*sandbox.to_string_lossy()),
        "{log} is outside the sandbox"
    );
    assert!(
        std::fs::read_to_string(log).unwrap().contains("starting"),
        "{log} holds the whole output"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn libreoffice_calc_launches_through_its_launcher_and_shows_its_cells_by_index() {
    // `localc` is a script that starts soffice.bin and leaves; the sheet's table manages a
    // million rows, so only the cells in view are read, through the Table interface.
    let session = Session::new();
    let call = |tool: &str, args| session.call(tool, args);
    let launch = || {
        call(
            "launch_app",
            json!({ "name": "localc", "creates_new_application_instance": true }),
        )
    };
    // Once in ~15 runs (a clean clone's first, under the whole suite) soffice left no
    // process and no window: launch_app said so plainly, and now says how it ended and
    // what it printed (printed below when it happens). Still open (#11 notes); a second
    // launch must work.
    let launched = launch()
        .or_else(|e| {
            eprintln!("localc, first launch: {e}; launching again");
            launch()
        })
        .unwrap();
    let s = &launched.structured;
    let pid = s["pid"].as_u64().unwrap();
    assert!(s["launcher_pid"].is_u64(), "{s}");
    assert_eq!(s["executable"], "soffice.bin", "{s}");
    // The first start also shows a "Tip of the Day" dialog, which may map first: the sheet
    // is the Calc window (waited for, bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let window = loop {
        let windows = call("list_windows", json!({})).unwrap();
        let calc = windows.structured["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["pid"] == pid && w["title"].as_str().unwrap().contains("LibreOffice Calc"))
            .cloned();
        match calc {
            Some(w) => break w,
            None if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(100))
            }
            None => panic!("no Calc window in {}", windows.structured),
        }
    };
    let at = json!({ "pid": pid, "window_id": window["window_id"], "include_screenshot": false });
    let cell = |state: &cua::tools::ToolOutput, name: &str| {
        elements(state)
            .into_iter()
            .find(|e| e["role"] == "table_cell" && e["name"] == name)
            .unwrap_or_else(|| panic!("no cell {name} in\n{}", state.structured["tree_markdown"]))
    };
    let state = call("get_window_state", at.clone()).unwrap();
    let b3 = cell(&state, "B3");
    assert!(b3["element_index"].is_u64(), "{b3}");
    assert!(b3["frame"].is_object(), "{b3}");
    assert_eq!(b3["value"], "", "{b3}");
    let mut set = at.clone();
    set.as_object_mut().unwrap().remove("include_screenshot");
    set["element_index"] = b3["element_index"].clone();
    set["value"] = json!("42");
    call("set_value", set).unwrap();
    // Read back from the app's own tree, not from the reply.
    let after = call("get_window_state", at).unwrap();
    assert_eq!(cell(&after, "B3")["value"], "42");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// An open menu is a window of its own (override-redirect, over the app's window): the
/// screenshot shows it as a person sees it. Where the tree puts the open menu's item, the
/// screenshot changes when the menu opens, and the item's text (dark pixels) is there.
#[test]
fn an_open_menu_is_in_the_window_screenshot() {
    // Its own desktop: in the shared one, a window another test opened took the focus
    // and closed the menu (twice in a full run).
    let s = Session::private();
    let app = App::launched(
        &s.call(
            "launch_app",
            json!({
                "path": format!("{}/harness/apps/fixture_qt.py", env!("CARGO_MANIFEST_DIR")),
                "creates_new_application_instance": true,
            }),
        )
        .unwrap(),
    );
    let at = json!({ "pid": app.pid, "window_id": app.window_id });
    let read = || {
        let state = s.call("get_window_state", at.clone()).unwrap();
        let image = Image::decode(&state.image.as_ref().unwrap().data);
        (state, image)
    };
    let menu_item = |state: &cua::tools::ToolOutput, name: &str| {
        elements(state)
            .into_iter()
            .find(|e| e["role"] == "menu_item" && e["name"] == name)
    };
    let (state, closed) = read();
    let file = menu_item(&state, "File").expect("the File menu")["element_index"].clone();
    let mut open = at.clone();
    open["element_index"] = file;
    open["settle_ms"] = json!(1500);
    s.call("click", open).unwrap();
    let (state, opened) = read();
    let hello = menu_item(&state, "Say hello").expect("the open menu's item");
    let (x, y, w, h) = frame(&hello);
    let mut changed = 0;
    let mut dark = 0;
    for py in y..y + h {
        for px in x..x + w {
            let now = opened.pixel(px, py);
            changed += usize::from(now != closed.pixel(px, py));
            dark += usize::from(now.iter().all(|c| *c < 100));
        }
    }
    let area = (w * h) as usize;
    assert!(
        changed * 2 > area,
        "only {changed} of {area} pixels under the open menu's item changed"
    );
    assert!(
        dark > 20,
        "no text under the open menu's item ({dark} dark pixels)"
    );
}

/// screenshot_out_file is a path an agent chooses, from a read-only tool: it replaces
/// images only, is written whole, and stays inside policy.output_roots (links resolved).
#[test]
fn screenshot_out_file_replaces_images_only_and_stays_inside_output_roots() {
    use cua::tools::{ToolContext, ToolRegistry};
    let d = desktop();
    let ctx = ToolContext::for_session(d.env.clone(), "output-paths");
    let rt = common::runtime();
    let registry = ToolRegistry::new();
    let call = |tool: &str, args: serde_json::Value| rt.block_on(registry.call(&ctx, tool, args));
    let dir = std::env::temp_dir().join(format!("cua-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let inside = dir.join("inside");
    std::fs::create_dir_all(&inside).unwrap();
    let shot = |path: &std::path::Path| {
        call(
            "screenshot",
            json!({ "window_id": d.mousepad.window_id, "screenshot_out_file": path }),
        )
    };
    let is_png = |p: &std::path::Path| std::fs::read(p).unwrap().starts_with(b"\x89PNG");

    let doc = dir.join("notes.txt");
    std::fs::write(&doc, "keep me").unwrap();
    let e = shot(&doc).unwrap_err();
    assert!(matches!(e, cua::errors::ToolError::Refused(_)), "{e}");
    assert!(e.to_string().contains("not an image"), "{e}");
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), "keep me");
    let png = dir.join("a.png");
    shot(&png).unwrap();
    shot(&png).unwrap();
    assert!(is_png(&png));
    let e = shot(&dir.join("missing/b.png")).unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");

    call(
        "set_config",
        json!({ "key": "policy.output_roots", "value": [inside] }),
    )
    .unwrap();
    let e = shot(&dir.join("b.png")).unwrap_err();
    assert!(e.to_string().contains("outside policy.output_roots"), "{e}");
    shot(&inside.join("b.png")).unwrap();
    assert!(is_png(&inside.join("b.png")));
    // A link inside that leads out does not take the file out.
    std::os::unix::fs::symlink(&dir, inside.join("out")).unwrap();
    let e = shot(&inside.join("out/c.png")).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
    let e = shot(&inside.join("../d.png")).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
    assert!(!dir.join("c.png").exists() && !dir.join("d.png").exists());
    // A recording's folder too, even one that does not exist yet.
    let e = call(
        "set_recording",
        json!({ "enabled": true, "output_dir": inside.join("out/new/rec") }),
    )
    .unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
    assert!(!dir.join("new").exists());
    // Nothing half-written is left beside the files.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(&inside).unwrap())
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An action's answer gives its element's `frame` in the space get_window_state gives
/// it (screen points), and the window-local one as `window_frame` (#56: the same name
/// meant two spaces).
#[test]
fn an_actions_element_frame_is_in_the_space_get_window_state_uses() {
    let s = Session::private();
    let fixture = format!(
        "{}/harness/apps/fixture_gtk3.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let app = App::launched(
        &s.call(
            "launch_app",
            json!({ "path": fixture, "creates_new_application_instance": true }),
        )
        .unwrap(),
    );
    let (pid, window) = (json!(app.pid), json!(app.window_id));
    // Away from the screen's origin, where the two spaces would agree.
    s.ok(
        "set_window_frame",
        json!({ "pid": pid, "window_id": window, "x": 200, "y": 150, "width": 420, "height": 560 }),
    );
    let button = s.element(&pid, &window, |e| {
        e["role"] == "button" && e["frame"].is_object() && e["frame"]["x"].as_i64() >= Some(200)
    });
    let clicked = s.ok(
        "click",
        json!({ "pid": pid, "window_id": window, "element_index": button["element_index"] }),
    );
    let element = &clicked["element"];
    assert_eq!(element["frame"], button["frame"], "{clicked:#}");
    let windows = s.ok("list_windows", json!({}));
    let bounds = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["window_id"] == window)
        .map(|w| w["bounds"].clone())
        .unwrap();
    let at = |v: &Value, k: &str| v[k].as_i64().unwrap();
    assert!(at(&bounds, "x") >= 200, "the window did not move: {bounds}");
    assert_eq!(
        at(&element["window_frame"], "x"),
        at(&element["frame"], "x") - at(&bounds, "x"),
        "{clicked:#}"
    );
    assert_eq!(
        at(&element["window_frame"], "y"),
        at(&element["frame"], "y") - at(&bounds, "y"),
        "{clicked:#}"
    );
}

/// GTK 4.8's entries answer "" whatever they show: such a value reads as unknown
/// (`value=?`, `value: null` with `value_known: false`), never as empty, while the text
/// view beside it, which exposes its text, reads it. The fixture's journal says what each
/// really holds.
#[test]
fn a_value_the_toolkit_does_not_expose_reads_as_unknown_not_empty() {
    let s = Session::private();
    let journal = s.sandbox().dir().join("journal.jsonl");
    let s = s.with_app_env(&[(
        "CUA_FIXTURE_JOURNAL",
        journal.to_string_lossy().into_owned(),
    )]);
    let fixture = format!(
        "{}/harness/apps/fixture_gtk4.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let app = App::launched(&s.call("launch_app", json!({ "path": fixture })).unwrap());
    let (pid, window) = (json!(app.pid), json!(app.window_id));
    let index_of =
        |name: &str| s.element(&pid, &window, |e| e["name"] == name)["element_index"].clone();
    for (name, text) in [("Name", "final text.txt"), ("Notes", "two words")] {
        s.ok(
            "set_value",
            json!({ "pid": pid, "window_id": window, "element_index": index_of(name), "value": text }),
        );
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let holds = |widget: &str, text: &str| {
        common::journal(&journal)
            .iter()
            .any(|e| e["event"] == "changed" && e["widget"] == widget && e["text"] == text)
    };
    while !holds("Name", "final text.txt") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        holds("Name", "final text.txt"),
        "the entry never held the text: {:?}",
        common::journal(&journal)
    );
    let state = s.state(&pid, &window);
    let md = state["tree_markdown"].as_str().unwrap();
    let line = |name: &str| {
        md.lines()
            .find(|l| l.contains(&format!("\"{name}\"")))
            .unwrap_or_else(|| panic!("no {name} line:\n{md}"))
            .to_string()
    };
    assert!(line("Name").contains("value=?"), "{}", line("Name"));
    assert!(!line("Name").contains("value=\""), "{}", line("Name"));
    assert!(
        line("Notes").contains("value=\"two words\""),
        "{}",
        line("Notes")
    );
    let name = s.element(&pid, &window, |e| e["name"] == "Name");
    assert_eq!(name["value"], Value::Null, "{name:#}");
    assert_eq!(name["value_known"], json!(false), "{name:#}");
    let notes = s.element(&pid, &window, |e| e["name"] == "Notes");
    assert_eq!(notes["value"], json!("two words"), "{notes:#}");
    assert!(notes.get("value_known").is_none(), "{notes:#}");
}

/// An action that opens a window names it, and counts it as its effect: ctrl+s in a fresh
/// mousepad opens its Save As dialog (the X server lists it); Escape closes it, and that
/// answer names it as closed.
#[test]
fn a_window_an_action_opens_or_closes_is_named_in_its_answer() {
    let s = Session::private();
    let app = App::launched(&s.call("launch_app", json!({ "name": "mousepad" })).unwrap());
    let (pid, window) = (json!(app.pid), json!(app.window_id));
    let saved = s.ok(
        "press_key",
        json!({ "pid": pid, "window_id": window, "key": "s", "modifiers": ["ctrl"], "settle_ms": 3000 }),
    );
    assert_eq!(saved["effect"], "confirmed", "{saved:#}");
    let opened = saved["opened"].as_array().cloned().unwrap_or_default();
    assert_eq!(opened.len(), 1, "{saved:#}");
    let dialog = &opened[0];
    assert_ne!(dialog["window_id"], window, "{saved:#}");
    let listed = s.ok("list_windows", json!({ "pid": pid }));
    let shown = listed["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["window_id"] == dialog["window_id"])
        .unwrap_or_else(|| panic!("the opened window is not listed: {listed:#}"));
    assert_eq!(shown["title"], dialog["title"]);
    assert!(
        dialog["title"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("save"),
        "{saved:#}"
    );
    let escaped = s.ok(
        "press_key",
        json!({ "pid": pid, "window_id": dialog["window_id"], "key": "escape", "settle_ms": 3000 }),
    );
    assert_eq!(
        escaped["closed"][0]["window_id"], dialog["window_id"],
        "{escaped:#}"
    );
    assert!(escaped.get("opened").is_none(), "{escaped:#}");
    let listed = s.ok("list_windows", json!({ "pid": pid }));
    assert!(
        listed["windows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["window_id"] != dialog["window_id"]),
        "{listed:#}"
    );
}

/// GTK 4 marks a hidden widget `visible` and lays it out with no area: gnome-text-editor's
/// closed info bars ("Could Not Open File", "Document Restored") and its search bar are not
/// in the tree, as they are not on the screen; ctrl+f reveals the search bar, which then is.
#[test]
fn hidden_gtk4_widgets_are_left_out_until_they_show() {
    let s = Session::private();
    let app = App::launched(
        &s.call(
            "launch_app",
            json!({ "name": "gnome-text-editor", "creates_new_application_instance": true }),
        )
        .unwrap(),
    );
    let (pid, window) = (json!(app.pid), json!(app.window_id));
    let state = s.state(&pid, &window);
    let md = state["tree_markdown"].as_str().unwrap();
    assert!(md.contains("EditorSourceView"), "{md}");
    for hidden in [
        "Could Not Open File",
        "Document Restored",
        "Retry",
        "EditorSearchBar",
    ] {
        assert!(
            !md.contains(hidden),
            "{hidden} is hidden, yet listed:\n{md}"
        );
    }
    for e in state["elements"].as_array().unwrap() {
        let (_, _, w, h) = frame(e);
        assert!(w > 0 && h > 0, "an element without area: {e}");
    }
    // Asked for, they are listed, each marked hidden.
    let all = s.ok(
        "get_window_state",
        json!({ "pid": pid, "window_id": window, "include_screenshot": false, "include_hidden": true }),
    );
    let all_md = all["tree_markdown"].as_str().unwrap();
    let line = |text: &str| {
        all_md
            .lines()
            .find(|l| l.contains(text))
            .map(str::to_string)
    };
    for hidden in ["Could Not Open File", "Retry"] {
        let l =
            line(hidden).unwrap_or_else(|| panic!("no {hidden} with include_hidden:\n{all_md}"));
        assert!(l.contains("hidden"), "{l}");
    }
    let view = line("EditorSourceView").unwrap();
    assert!(!view.contains("hidden"), "{view}");
    s.ok(
        "press_key",
        json!({ "pid": pid, "window_id": window, "key": "f", "modifiers": ["ctrl"],
                "delivery_mode": "foreground", "settle_ms": 3000 }),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut md = String::new();
    while std::time::Instant::now() < deadline {
        md = s.state(&pid, &window)["tree_markdown"]
            .as_str()
            .unwrap()
            .to_string();
        if md.contains("Close search") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        md.contains("EditorSearchBar") && md.contains("Close search"),
        "{md}"
    );
    assert!(!md.contains("Could Not Open File"), "{md}");
}
