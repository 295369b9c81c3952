//! Big windows are read whole: a window of 10,000 nodes, buttons in one container (GTK 3,
//! GTK 4, Qt 5, and a page in Chromium), gives every button, and a press on the last one
//! lands (the app's own journal, or the page's status line, says which button it got).
//! Where a bound does leave something out (a spreadsheet's billion cells), the answer says
//! what, where and how much (`truncated`).

mod common;

use common::{App, Session, journal, scratch};
use serde_json::{Value, json};

/// The tree nodes each window holds, at least.
const NODES: usize = 10_000;

/// Buttons for a window of [`NODES`] nodes: a GTK 4 button and a web page's hold their
/// label as a node of its own.
fn buttons_for(toolkit: &str) -> usize {
    match toolkit {
        "gtk4" | "chromium" => NODES / 2,
        _ => NODES,
    }
}

/// The grid app (harness/apps/button_grid.py) launched fresh in a session of its own,
/// journaling to `journal`.
fn grid_app(toolkit: &str, count: usize, journal: &std::path::Path) -> (Session, App) {
    let s = Session::private().with_app_env(&[(
        "CUA_FIXTURE_JOURNAL",
        journal.to_string_lossy().into_owned(),
    )]);
    let app = format!("{}/harness/apps/button_grid.py", env!("CARGO_MANIFEST_DIR"));
    let reply = s
        .call(
            "launch_app",
            json!({ "path": app, "additional_arguments": [toolkit, count.to_string()] }),
        )
        .expect("the grid launches");
    let app = App::launched(&reply);
    (s, app)
}

/// The window's state once its tree holds at least `count` buttons named "Button K", or
/// the last read after a bounded wait (an app exports a big tree a while after its window
/// shows).
fn read_whole(s: &Session, app: &App, count: usize) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let state = s.state(&json!(app.pid), &json!(app.window_id));
        if grid_buttons(&state).len() >= count || std::time::Instant::now() >= deadline {
            return state;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// The grid's buttons in an answer, by number.
fn grid_buttons(state: &Value) -> std::collections::BTreeMap<usize, Value> {
    state["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["role"] == "button")
        .filter_map(|e| {
            let n = e["name"].as_str()?.strip_prefix("Button ")?.parse().ok()?;
            Some((n, e.clone()))
        })
        .collect()
}

/// Every button is in the answer, each once, and nothing says it was cut; then a press on
/// the last (far out of view) is the app's.
fn every_button_and_the_last_one_presses(toolkit: &str) {
    let count = buttons_for(toolkit);
    let dir = scratch("big", toolkit);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("journal.jsonl");
    let (s, app) = grid_app(toolkit, count, &log);
    let state = read_whole(&s, &app, count);
    let buttons = grid_buttons(&state);
    let missing: Vec<usize> = (0..count).filter(|n| !buttons.contains_key(n)).collect();
    assert!(
        missing.is_empty(),
        "{toolkit}: {} of {count} buttons missing (first: {:?}); element_count {}, truncated {}",
        missing.len(),
        &missing[..missing.len().min(5)],
        state["element_count"],
        state["truncated"]
    );
    assert!(
        state.get("truncated").is_none(),
        "{toolkit}: nothing was left out, yet: {}",
        state["truncated"]
    );
    let last = &buttons[&(count - 1)];
    s.ok(
        "click",
        json!({ "pid": app.pid, "window_id": app.window_id, "element_index": last["element_index"] }),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let wanted = format!("Button {}", count - 1);
    loop {
        let pressed: Vec<Value> = journal(&log)
            .into_iter()
            .filter(|e| e["event"] == "clicked")
            .collect();
        if let Some(p) = pressed.first() {
            assert_eq!(p["button"], wanted.as_str(), "{toolkit}: {pressed:?}");
            assert_eq!(pressed.len(), 1, "{toolkit}: {pressed:?}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{toolkit}: the app journaled no press of {wanted}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_gtk3_window_of_10000_nodes_is_read_whole() {
    every_button_and_the_last_one_presses("gtk3");
}

#[test]
fn a_gtk4_window_of_10000_nodes_is_read_whole() {
    every_button_and_the_last_one_presses("gtk4");
}

#[test]
fn a_qt5_window_of_10000_nodes_is_read_whole() {
    every_button_and_the_last_one_presses("qt5");
}

#[test]
fn a_chromium_page_of_10000_nodes_is_read_whole() {
    let count = buttons_for("chromium");
    let s = Session::private();
    let page = format!("button_grid.html?n={count}");
    let app = s.chromium_on(&page);
    let state = read_whole(&s, &app, count);
    let buttons = grid_buttons(&state);
    let missing = (0..count).filter(|n| !buttons.contains_key(n)).count();
    assert_eq!(
        missing, 0,
        "chromium: buttons missing; element_count {}, truncated {}",
        state["element_count"], state["truncated"]
    );
    assert!(state.get("truncated").is_none(), "{}", state["truncated"]);
    let last = &buttons[&(count - 1)];
    s.ok(
        "click",
        json!({ "pid": app.pid, "window_id": app.window_id, "element_index": last["element_index"] }),
    );
    // The page's own status line says which button it got.
    let wanted = format!("Clicked Button {}", count - 1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let state = s.state(&json!(app.pid), &json!(app.window_id));
        let md = state["tree_markdown"].as_str().unwrap_or("");
        if md.contains(&format!("{wanted}\"")) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the page never said {wanted:?}: {}",
            md.lines()
                .find(|l| l.contains("Clicked"))
                .unwrap_or("no status line")
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A spreadsheet's grid is a table of a billion cells: cua reads the cells in view and says
/// so, with the table's own count of its cells (Calc's, read by pyatspi) as the total.
#[test]
fn a_spreadsheet_says_which_cells_it_left_out() {
    let s = Session::private();
    s.ok(
        "launch_app",
        json!({ "name": "localc", "creates_new_application_instance": true }),
    );
    let (pid, window) = common::live::window_titled(&s, "LibreOffice Calc");
    // Calc exports its sheet a moment after its window shows.
    let a1 = s.element(&pid, &window, |e| {
        e["role"] == "table_cell" && e["name"] == "A1"
    });
    assert_eq!(a1["role"], "table_cell");
    let state = s.state(&pid, &window);
    let cells = state["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "table_cell")
        .count() as u64;
    let cut = &state["truncated"];
    let sheet = cut["where"]
        .as_array()
        .unwrap_or_else(|| panic!("nothing said to be left out: {state:#}"))
        .iter()
        .find(|w| {
            w["element"]
                .as_str()
                .is_some_and(|e| e.starts_with("table"))
        })
        .unwrap_or_else(|| panic!("the sheet's table is not named: {cut:#}"))
        .clone();
    let returned = sheet["returned"].as_u64().unwrap();
    assert!(
        returned > 0 && returned <= 400 && returned == cells,
        "{cells} cells in the answer: {sheet:#}"
    );
    assert!(
        sheet["why"].as_str().unwrap().contains("cells in view"),
        "{sheet:#}"
    );

    // The total is Calc's own count of the table's cells.
    let script = r#"
import sys, pyatspi
def find(node, depth=0):
    if node.getRole() == pyatspi.ROLE_TABLE:
        return node
    if depth > 30:
        return None
    for child in node:
        if child is not None and child.getRole() != pyatspi.ROLE_TABLE_CELL:
            hit = find(child, depth + 1)
            if hit is not None:
                return hit
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and app.get_process_id() == int(sys.argv[1]):
        table = find(app)
        print(table.childCount)
        break
"#;
    let out = s
        .sandbox()
        .command("/usr/bin/python3")
        .args(["-c", script, &pid.to_string()])
        .output()
        .unwrap();
    let calcs: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("pyatspi: {out:?}"));
    assert_eq!(sheet["total"].as_u64(), Some(calcs), "{sheet:#}");
    let returned_nodes = cut["returned"].as_u64().unwrap();
    assert_eq!(
        cut["total"].as_u64(),
        Some(returned_nodes + calcs - returned),
        "{cut:#}"
    );
}
