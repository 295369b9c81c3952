//! Real Debian apps nobody here wrote, each launched fresh by `launch_app` and read from its
//! accessibility tree, never from its pixels (#56 item 3): gtk4-widget-factory was read by
//! OCR in a fresh sandbox, its tree never exported (GTK 4's GL renderer on llvmpipe starved
//! the idle callback that registers it; the sandbox now gives GTK 4 cairo).
//!
//! Each round is a new sandbox in which every app is launched in turn (so each also starts
//! after another app), read until its tree holds what a person sees, and stopped.
//! CUA_FRESH_LAUNCH_ROUNDS sets the rounds (default 2, to keep the suite short); the
//! measurement of docs/performance.md ran 10.

mod common;

use common::{App, Session};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// One app: how launch_app starts it, and what its tree must hold (at least `min_elements`
/// elements, one of them `role` named `name` when given).
struct RealApp {
    launch: fn() -> Value,
    min_elements: usize,
    element: Option<(&'static str, &'static str)>,
}

fn by_name(name: &str) -> Value {
    json!({ "name": name, "creates_new_application_instance": true })
}

fn apps() -> Vec<(&'static str, RealApp)> {
    let app = |launch, min_elements, element| RealApp {
        launch,
        min_elements,
        element,
    };
    vec![
        (
            "gtk4-widget-factory",
            // Its first page: 78 elements (the other two pages are hidden, 282 with them).
            app(
                || by_name("gtk4-widget-factory"),
                60,
                Some(("check_box", "checkbutton")),
            ),
        ),
        (
            "gtk3-widget-factory",
            app(|| by_name("gtk3-widget-factory"), 80, None),
        ),
        (
            "gnome-calculator",
            app(|| by_name("gnome-calculator"), 20, Some(("button", "7"))),
        ),
        (
            "gnome-text-editor",
            app(|| by_name("gnome-text-editor"), 5, None),
        ),
        ("kcalc", app(|| by_name("kcalc"), 20, Some(("button", "7")))),
        (
            "libreoffice calc",
            app(|| by_name("localc"), 20, Some(("table_cell", "A1"))),
        ),
        (
            "firefox on a page",
            app(
                || {
                    let page = concat!(
                        "file://",
                        env!("CARGO_MANIFEST_DIR"),
                        "/harness/apps/page.html"
                    );
                    json!({ "name": "firefox-esr", "urls": [page] })
                },
                1,
                Some(("button", "Go")),
            ),
        ),
    ]
}

/// What a read of the app's window falls short of, or None when it is read from its tree
/// and holds what the app shows.
fn shortfall(state: &Value, app: &RealApp) -> Option<String> {
    let source = state["tree_source"].as_str().unwrap_or("?");
    if source != "accessibility" {
        return Some(format!("read by {source}"));
    }
    let elements = state["elements"].as_array().cloned().unwrap_or_default();
    if elements.len() < app.min_elements {
        return Some(format!(
            "{} elements, fewer than {}",
            elements.len(),
            app.min_elements
        ));
    }
    let (role, name) = app.element?;
    let holds = elements
        .iter()
        .any(|e| e["role"] == role && e["name"] == name);
    (!holds).then(|| format!("no {role} \"{name}\" among {} elements", elements.len()))
}

/// Launches one app in the session, reads it until its tree holds what it shows (bounded:
/// an app exports its tree a while after its window maps), and stops it. None when read
/// from its tree, else what the last read fell short of.
fn launch_and_read(s: &Session, app: &RealApp) -> Option<String> {
    let launched = match s.call("launch_app", (app.launch)()) {
        Ok(reply) => App::launched(&reply),
        Err(e) => return Some(format!("launch_app: {e}")),
    };
    let (pid, window) = (json!(launched.pid), json!(launched.window_id));
    let deadline = Instant::now() + Duration::from_secs(30);
    let short = loop {
        let state = s.call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
        );
        let short = match state {
            Ok(out) => shortfall(&out.structured, app),
            Err(e) => Some(format!("get_window_state: {e}")),
        };
        if short.is_none() || Instant::now() >= deadline {
            break short;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let _ = s.call("kill_app", json!({ "pid": pid }));
    short
}

#[test]
fn real_apps_launched_fresh_are_read_from_their_trees() {
    let rounds: usize = std::env::var("CUA_FRESH_LAUNCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let apps = apps();
    let mut failures: Vec<String> = Vec::new();
    for round in 1..=rounds {
        let s = Session::private();
        for (name, app) in &apps {
            let started = Instant::now();
            let short = launch_and_read(&s, app);
            eprintln!(
                "round {round}: {name}: {} ({} ms)",
                short.as_deref().unwrap_or("read from its tree"),
                started.elapsed().as_millis()
            );
            if let Some(short) = short {
                failures.push(format!("round {round}, {name}: {short}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fresh launches were not read from their trees:\n{}",
        failures.len(),
        rounds * apps.len(),
        failures.join("\n")
    );
}
