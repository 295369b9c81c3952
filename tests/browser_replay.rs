//! A browser flow recorded through the browser tools (navigate, type, click, a confirm
//! dialog answered, a download) and replayed on a fresh Chromium: each turn's tab is found
//! by its recorded URL and its element by role and label, and the page's own journal (#log,
//! read through the browser's accessibility tree, not CDP) shows every effect again. On a
//! page whose button moved and was renamed `Go` → `Go now` the click heals and says so; on
//! one where it became `Stop`, the click fails by name and nothing is pressed. Of two
//! `Delete` buttons, the one in the section `Row 2` is clicked, and its replay clicks it
//! again by its recorded ancestors' names, also with the rows in the other order.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The page, with its Go button as `go` says and, when `moved`, after the journal and the
/// rows of Delete buttons in the other order.
fn page(go: &str, moved: bool) -> String {
    let button = format!("<button onclick=\"log('clicked go')\">{go}</button>");
    let (before, after) = if moved {
        (String::new(), button)
    } else {
        (button, String::new())
    };
    let row = |n: u32| {
        format!(
            "<section aria-label=\"Row {n}\">Row {n} <button onclick=\"log('deleted row {n}')\">Delete</button></section>"
        )
    };
    let rows = match moved {
        false => format!("{}{}", row(1), row(2)),
        true => format!("{}{}", row(2), row(1)),
    };
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>cua replay page</title>
<script>function log(l) {{ const li = document.createElement('li'); li.textContent = l; document.getElementById('log').appendChild(li); }}</script>
</head><body><h1>cua replay page</h1>
{before}
<label>Name <input id="name" value="" oninput="log('name is ' + this.value)"></label>
<button onclick="log('confirm said ' + confirm('Sure?'))">Confirm</button>
<a href="data:text/plain,hello%20cua" download="note.txt">Save note</a>
{rows}
<ol id="log"></ol>
{after}
</body></html>"#
    )
}

/// Serves `dir/page.html` (read anew for each request, so a test can change the page) at
/// every path but the favicon, on a loopback port: its address.
fn serve(dir: &Path) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let page = dir.join("page.html");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let n = stream.read(&mut request).unwrap_or(0);
            let line = String::from_utf8_lossy(&request[..n]);
            let (status, body) = match line.starts_with("GET /favicon") {
                true => ("404 Not Found", String::new()),
                false => ("200 OK", std::fs::read_to_string(&page).unwrap_or_default()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    address
}

struct Flow {
    session: common::Session,
    dir: PathBuf,
    address: String,
}

impl Flow {
    fn ok(&self, tool: &str, args: Value) -> Value {
        self.session
            .call(tool, args.clone())
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
            .structured
    }

    fn page_url(&self) -> String {
        format!("{}/page.html", self.address)
    }

    /// The running Chromium's window, bound: (pid, window_id, target_id, tab_id).
    fn bound(&self, url: &str) -> (u64, u64, String, String) {
        let windows = self.ok("list_windows", json!({}));
        let window = windows["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| {
                w["title"]
                    .as_str()
                    .is_some_and(|t| t.contains("cua replay page"))
            })
            .cloned();
        let deadline = Instant::now() + Duration::from_secs(30);
        let (pid, window_id) = match window {
            Some(w) => (w["pid"].as_u64().unwrap(), w["window_id"].as_u64().unwrap()),
            None => panic!("no Chromium window: {windows}"),
        };
        loop {
            let state = self.session.call(
                "get_browser_state",
                json!({ "pid": pid, "window_id": window_id }),
            );
            if let Ok(out) = &state {
                let s = &out.structured;
                let tab = s["tabs"]
                    .as_array()
                    .and_then(|tabs| tabs.iter().find(|t| t["url"] == url).cloned());
                if let (true, Some(tab)) = (s["binding_quality"] == "exact", tab) {
                    let id = |v: &Value| v.as_str().unwrap().to_string();
                    return (pid, window_id, id(&s["target_id"]), id(&tab["tab_id"]));
                }
            }
            assert!(Instant::now() < deadline, "never bound at {url}: {state:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn reference(&self, tab: &Value, label: &str) -> String {
        self.nth_reference(tab, label, 0)
    }

    /// The ref of the `n`th control labelled `label`, in the page's order.
    fn nth_reference(&self, tab: &Value, label: &str, n: usize) -> String {
        let snap = self.ok("get_browser_state", tab.clone());
        snap["refs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["label"] == label)
            .nth(n)
            .unwrap_or_else(|| panic!("no ref {label:?} number {n}: {snap}"))["ref"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The page's journal lines, as the browser's accessibility tree shows them.
    fn journal(&self, pid: u64, window_id: u64) -> String {
        self.ok(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
        )["tree_markdown"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Waits (bounded) until the live page's journal shows every line of `lines`.
    fn shows(&self, lines: &[&str]) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (pid, window_id, _, _) = self.bound(&format!("{}?step=2", self.page_url()));
            let tree = self.journal(pid, window_id);
            if lines.iter().all(|l| tree.contains(l)) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the page never showed {lines:?}:\n{tree}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Kills the browser and waits (bounded) until its window is gone from the list.
    fn close_browser(&self) {
        let (pid, ..) = self.bound(&format!("{}?step=2", self.page_url()));
        self.ok("kill_app", json!({ "pid": pid }));
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.ok("list_windows", json!({}))["windows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| {
                w["title"]
                    .as_str()
                    .is_some_and(|t| t.contains("cua replay page"))
            })
        {
            assert!(Instant::now() < deadline, "the browser's window stayed");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn replay(&self, recording: &Path) -> Value {
        let downloads = self.dir.join("downloads");
        let _ = std::fs::remove_dir_all(&downloads);
        std::fs::create_dir_all(&downloads).unwrap();
        // A replay with a failed step is an error that carries its report.
        let args = json!({ "dir": recording, "delay_ms": 0 });
        match self.session.call("replay_trajectory", args) {
            Ok(out) => out.structured,
            Err(cua::errors::ToolError::Reported { report, .. }) => report,
            Err(e) => panic!("replay_trajectory: {e}"),
        }
    }
}

/// Records the flow; returns the trajectory's folder.
fn record(f: &Flow) -> PathBuf {
    let recording = f.dir.join("recording");
    let downloads = f.dir.join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    f.ok(
        "set_recording",
        json!({ "enabled": true, "output_dir": recording }),
    );
    f.ok(
        "launch_app",
        json!({ "name": "chromium", "urls": [f.page_url()] }),
    );
    let (_, _, target_id, tab_id) = f.bound(&f.page_url());
    let tab = json!({ "target_id": target_id, "tab_id": tab_id });
    let step2 = format!("{}?step=2", f.page_url());
    f.ok("browser_navigate", with(&tab, json!({ "url": step2 })));
    let (_, _, target_id, tab_id) = f.bound(&step2);
    let tab = json!({ "target_id": target_id, "tab_id": tab_id });
    f.ok(
        "browser_type",
        with(
            &tab,
            json!({ "ref": f.reference(&tab, "Name"), "text": "Grace" }),
        ),
    );
    f.ok(
        "browser_click",
        with(&tab, json!({ "ref": f.reference(&tab, "Go") })),
    );
    let confirm = f.ok(
        "browser_click",
        with(&tab, json!({ "ref": f.reference(&tab, "Confirm") })),
    );
    assert_eq!(confirm["dialog_opened"], true, "{confirm}");
    let open = f.ok("browser_dialog", with(&tab, json!({ "action": "inspect" })));
    f.ok(
        "browser_dialog",
        with(
            &tab,
            json!({ "action": "accept", "dialog_id": open["dialog_id"] }),
        ),
    );
    let root = std::fs::canonicalize(&downloads).unwrap();
    f.ok(
        "browser_download",
        with(
            &tab,
            json!({ "ref": f.reference(&tab, "Save note"), "destination_root": root }),
        ),
    );
    f.ok(
        "browser_click",
        with(&tab, json!({ "ref": f.nth_reference(&tab, "Delete", 1) })),
    );
    f.ok("set_recording", json!({ "enabled": false }));
    f.shows(&[
        "name is Grace",
        "clicked go",
        "confirm said true",
        "deleted row 2",
    ]);
    recording
}

/// The replayed Delete turn chose Row 2's button by its ancestors, and the page's journal
/// has row 2 deleted and row 1 not.
fn delete_row_2_alone(f: &Flow, turn: &Value) {
    assert_eq!(turn["ok"], true, "{turn}");
    assert!(
        turn["look_alikes"]
            .as_str()
            .is_some_and(|l| l.contains("ancestors") && l.contains("Row 2")),
        "{turn}"
    );
    let (pid, window_id, ..) = f.bound(&format!("{}?step=2", f.page_url()));
    let journal = f.journal(pid, window_id);
    assert!(!journal.contains("deleted row 1"), "{journal}");
}

/// A browser call's arguments: the tab's ids and `extra`.
fn with(tab: &Value, extra: Value) -> Value {
    let mut args = tab.clone();
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    args
}

fn downloaded(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("downloads"))
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect()
}

#[test]
fn a_recorded_chromium_flow_replays_on_a_fresh_browser_and_heals_or_fails_by_name() {
    let dir = std::env::temp_dir().join(format!("cua-browser-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("page.html"), page("Go", false)).unwrap();
    let f = Flow {
        session: common::Session::private(),
        address: serve(&dir),
        dir: dir.clone(),
    };
    let recording = record(&f);
    let turns = cua::replay::turn_dirs(&recording).unwrap();
    assert_eq!(turns.len(), 8, "{turns:?}");
    assert_eq!(downloaded(&dir), ["hello cua"]);

    // A fresh Chromium (the recorded launch_app starts it): every turn, every effect.
    f.close_browser();
    let replayed = f.replay(&recording);
    assert_eq!(replayed["failed"], 0, "{replayed}");
    f.shows(&[
        "name is Grace",
        "clicked go",
        "confirm said true",
        "deleted row 2",
    ]);
    delete_row_2_alone(&f, &replayed["turns"][7]);
    assert_eq!(
        downloaded(&dir),
        ["hello cua"],
        "the download was not saved again"
    );

    // The button moved and was renamed: the click heals, and says so.
    f.close_browser();
    std::fs::write(dir.join("page.html"), page("Go now", true)).unwrap();
    let replayed = f.replay(&recording);
    assert_eq!(replayed["failed"], 0, "{replayed}");
    let click = &replayed["turns"][3];
    assert!(
        click["heal"]
            .as_str()
            .is_some_and(|h| h.contains("\"Go now\"")),
        "{click}"
    );
    f.shows(&["clicked go", "deleted row 2"]);
    delete_row_2_alone(&f, &replayed["turns"][7]);

    // Renamed to something else: the click fails by name, nothing pressed.
    f.close_browser();
    std::fs::write(dir.join("page.html"), page("Stop", false)).unwrap();
    let replayed = f.replay(&recording);
    let click = &replayed["turns"][3];
    assert_eq!(click["ok"], false, "{replayed}");
    assert_eq!(click["dispatched"], false, "{click}");
    assert!(
        click["result_summary"]
            .as_str()
            .is_some_and(|s| s.contains("no button \"Go\"")),
        "{click}"
    );
    let (pid, window_id, ..) = f.bound(&format!("{}?step=2", f.page_url()));
    assert!(!f.journal(pid, window_id).contains("clicked go"));
    f.close_browser();
    let _ = std::fs::remove_dir_all(&dir);
}
