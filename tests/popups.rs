//! Popups read back (issue #44): a right click that opens a context menu, a window of its
//! own that the window's tree does not hold, answers `confirmed` on GTK 3, GTK 4 and Qt 6;
//! a right click that opens nothing (the fixtures' Options button only journals it) is
//! never confirmed. Whether a menu opened is read from the X server's own window list (a
//! mapped override-redirect window of the app's X client), never from cua's reply.

mod common;

use common::Session;
use serde_json::{Value, json};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, MapState};

/// The app's open popups, as the X server lists them: mapped override-redirect windows
/// made by the X client that made `window`.
fn open_popups(display: &str, window: u64) -> usize {
    let (conn, screen) = x11rb::connect(Some(display)).expect("X display");
    let root = conn.setup().roots[screen].root;
    let mask = conn.setup().resource_id_mask;
    let client = window as u32 & !mask;
    let tree = conn.query_tree(root).unwrap().reply().unwrap();
    tree.children
        .iter()
        .filter(|w| **w & !mask == client)
        .filter(|w| {
            conn.get_window_attributes(**w)
                .unwrap()
                .reply()
                .is_ok_and(|a| a.override_redirect && a.map_state == MapState::VIEWABLE)
        })
        .count()
}

/// Waits (bounded) until `check` holds.
fn within(what: &str, check: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !check() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The window's element named `name`, once its tree shows it (a GTK 4 app fills its
/// tree in after its window maps; bounded).
fn named(s: &Session, pid: &Value, window: &Value, name: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let state = s.state(pid, window);
        let found = state["elements"]
            .as_array()
            .and_then(|els| els.iter().find(|e| e["name"] == name).cloned());
        match found {
            Some(el) => return el,
            None if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(100))
            }
            None => panic!("no {name:?} in\n{}", state["tree_markdown"]),
        }
    }
}

/// A right click on `name`, in the background and, where cua recommends it, in the
/// foreground (as `cua test` takes an escalation): the last reply.
fn right_click(s: &Session, pid: &Value, window: &Value, name: &str) -> Value {
    let el = named(s, pid, window, name);
    let args = json!({ "pid": pid, "window_id": window, "element_index": el["element_index"] });
    let reply = s.ok("right_click", args.clone());
    if reply["effect"] == "confirmed"
        || reply["escalation"]["recommended"].as_str() != Some("foreground")
    {
        return reply;
    }
    let mut args = args;
    args["delivery_mode"] = json!("foreground");
    s.ok("right_click", args)
}

fn a_context_menu_is_confirmed_on(script: &str, extra: &[&str]) {
    let journal = std::env::temp_dir().join(format!(
        "cua-popups-{}-{}.jsonl",
        std::process::id(),
        script.replace('.', "-")
    ));
    let _ = std::fs::remove_file(&journal);
    let s =
        Session::private().with_app_env(&[("CUA_FIXTURE_JOURNAL", journal.display().to_string())]);
    let display = s.sandbox().desktop().display.expect("an X11 sandbox");
    let app = s.ok(
        "launch_app",
        json!({
            "path": format!("{}/harness/apps/{script}", env!("CARGO_MANIFEST_DIR")),
            "additional_arguments": extra,
            "creates_new_application_instance": true,
        }),
    );
    let (pid, window) = (app["pid"].clone(), app["windows"][0]["window_id"].clone());
    let window_id = window.as_u64().unwrap();
    assert_eq!(open_popups(&display, window_id), 0);

    // Options only journals a right click: nothing opens, and cua must not say it did.
    let quiet = right_click(&s, &pid, &window, "Options");
    within(
        &format!("{script}: the fixture journals the right click"),
        || {
            common::journal(&journal)
                .iter()
                .any(|e| e["event"] == "context-menu")
        },
    );
    assert_ne!(quiet["effect"], "confirmed", "{script}: {quiet}");
    assert_eq!(open_popups(&display, window_id), 0, "{script}");

    // A text field's right click opens its context menu.
    let opened = right_click(&s, &pid, &window, "Name");
    within(&format!("{script}: the context menu is open"), || {
        open_popups(&display, window_id) > 0
    });
    assert_eq!(opened["effect"], "confirmed", "{script}: {opened}");
    let _ = std::fs::remove_file(&journal);
}

#[test]
fn a_right_click_that_opens_a_context_menu_is_confirmed_on_gtk3() {
    a_context_menu_is_confirmed_on("fixture_gtk3.py", &[]);
}

#[test]
fn a_right_click_that_opens_a_context_menu_is_confirmed_on_gtk4() {
    a_context_menu_is_confirmed_on("fixture_gtk4.py", &[]);
}

#[test]
fn a_right_click_that_opens_a_context_menu_is_confirmed_on_qt6() {
    a_context_menu_is_confirmed_on("fixture_qt.py", &["6"]);
}
