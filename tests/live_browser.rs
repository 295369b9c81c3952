//! `cua record --live` driven as a person drives it: through the page in a real browser.
//! cua records the calculator in one sandbox; a headless Chromium in a second sandbox opens
//! the page. The project's own CDP tools (browser_click, browser_pointer, browser_type)
//! click and hover on the screen's picture and fill the page's form, and cua's type_text
//! types into the picture as keys, to record, use "Undo last", the inspector and "Save as
//! scenario". The calculator's own tree must show the product, the turn folders must
//! hold the flow without the undone turn, the inspector's step pasted into a scenario must
//! run, and `cua test` must pass against the golden the saved scenario makes. Then the GTK 3
//! fixture, given by its path, recorded the same way: its own journal must hold each
//! input, and its saved scenario must pass.
//!
//! With `CUA_DOCS_SHOTS=DIR` the page's screenshots for docs/harness.md are written there.

mod common;

use std::path::Path;

use common::live::{LiveRecorder, calculator_shows, calculator_window, centre};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The page in Chromium: its session (the second sandbox), window and bound tab.
struct Page {
    session: common::Session,
    app: common::App,
    target_id: String,
    tab_id: String,
}

impl Page {
    fn open(url: &str) -> Page {
        let session = common::Session::private();
        let launched = session
            .call(
                "launch_app",
                json!({ "name": "chromium", "urls": [url],
                "additional_arguments": ["--window-size=1280,800", "--window-position=0,0"] }),
            )
            .expect("chromium launches");
        let app = common::App::launched(&launched);
        let (target_id, tab_id) = common::bind_browser(&session, &app, "cua live recorder");
        Page {
            target_id,
            tab_id,
            session,
            app,
        }
    }

    /// A browser tool on the bound tab.
    fn act(&self, tool: &str, mut args: Value) -> Value {
        let o = args.as_object_mut().unwrap();
        o.insert("target_id".into(), json!(self.target_id));
        o.insert("tab_id".into(), json!(self.tab_id));
        self.session
            .call(tool, args.clone())
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
            .structured
    }

    /// A JavaScript expression's value in the page.
    fn eval(&self, javascript: &str) -> Value {
        let out = self
            .session
            .call(
                "page",
                json!({ "pid": self.app.pid, "window_id": self.app.window_id,
                    "action": "execute_javascript", "javascript": javascript }),
            )
            .unwrap_or_else(|e| panic!("{javascript}: {e}"));
        out.structured["result"].clone()
    }

    /// Waits (bounded) until `javascript` is true in the page.
    fn until(&self, what: &str, javascript: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.eval(javascript) != json!(true) {
            let side = self.eval("document.getElementById('side').innerText");
            assert!(Instant::now() < deadline, "{what}; the side panel:\n{side}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Where screen point (`x`, `y`) is in the page's viewport (CSS pixels).
    fn viewport_point(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let r = self.eval(
            "(() => { const s = document.getElementById('screen'); const r = s.getBoundingClientRect(); \
             return [r.left, r.top, r.width / s.naturalWidth, r.height / s.naturalHeight]; })()",
        );
        let n = |i: usize| r[i].as_f64().unwrap();
        (n(0) + x * n(2), n(1) + y * n(3))
    }

    /// A button of the side panel, clicked as a user clicks it.
    fn press(&self, label: &str) {
        let snap = self.act("get_browser_state", json!({}));
        let r = snap["refs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap_or_else(|| panic!("no {label:?} in the page: {snap}"))["ref"]
            .clone();
        self.act("browser_click", json!({ "ref": r }));
    }

    fn turns_listed(&self) -> u64 {
        self.eval("document.querySelectorAll('#turns li[data-turn]').length")
            .as_u64()
            .unwrap()
    }

    /// Clicks screen point `at` on the picture and waits for its turn in the side panel.
    fn click_screen(&self, at: (f64, f64)) {
        let before = self.turns_listed();
        let (x, y) = self.viewport_point(at);
        self.act("browser_click", json!({ "x": x, "y": y }));
        self.until(
            &format!("no turn listed for the click at {at:?}"),
            &format!("document.querySelectorAll('#turns li[data-turn]').length > {before}"),
        );
    }

    /// Types `text` as a person types it: keys to the browser window, whose focus is the
    /// picture (clicked last); waits for the burst's turn in the side panel.
    fn type_keys(&self, text: &str) {
        let listed = self.turns_listed();
        self.session.ok(
            "type_text",
            json!({ "pid": self.app.pid, "window_id": self.app.window_id, "text": text,
                "as_keys": true }),
        );
        self.until(
            &format!("typing {text:?} was never a turn"),
            &format!("document.querySelectorAll('#turns li[data-turn]').length > {listed}"),
        );
    }

    /// "Save as scenario" under `name`, typed into the form's field.
    fn save_as(&self, name: &str) {
        let field = self.act("get_browser_state", json!({}))["refs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "Scenario name")
            .map(|r| r["ref"].clone())
            .expect("the scenario name field");
        self.act("browser_type", json!({ "ref": field, "text": name }));
        self.press("Save as scenario");
        self.until(
            "Save as scenario said nothing",
            "document.getElementById('saved').textContent.startsWith('saved ')",
        );
    }

    /// The browser window's screenshot, into `dir/name` when docs' screenshots are asked.
    fn shot(&self, name: &str) {
        let Some(dir) = std::env::var_os("CUA_DOCS_SHOTS") else {
            return;
        };
        // The picture is current once no frame has come for half a second.
        self.until(
            "the page's picture never held still",
            "performance.now() - Number(document.getElementById('screen').dataset.shownAt) > 500",
        );
        let file = Path::new(&dir).join(name);
        self.session
            .call(
                "screenshot",
                json!({ "window_id": self.app.window_id, "screenshot_out_file": file }),
            )
            .expect("a screenshot of the page");
    }
}

/// One recording with its browser at a time: each has two sandboxes and a Chromium.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_person_records_7_times_6_in_the_live_page_in_chromium_and_cua_test_passes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let app_side = common::Session::private();
    let mut recorder = LiveRecorder::calculator(&app_side, "live-browser");
    let (pid, window, elements) = calculator_window(&app_side);

    let page = Page::open(&recorder.url);
    page.until(
        "the page never showed the screen",
        "document.getElementById('screen').naturalWidth === 1280",
    );
    // 7 × by clicks on the picture, 6 typed into it, = by a click.
    page.click_screen(centre(&elements, &["7"]));
    page.click_screen(centre(&elements, &["×", "Multiply"]));
    page.type_keys("6");
    page.click_screen(centre(&elements, &["=", "Calculate result"]));
    calculator_shows(&app_side, &pid, &window, "42");
    page.shot("live-recording.png");

    // A stray click, then "Undo last": its turn leaves the list and the trajectory.
    page.click_screen(centre(&elements, &["1"]));
    let listed = page.turns_listed();
    page.press("Undo last");
    page.until(
        "Undo last took no turn back",
        &format!(
            "document.querySelectorAll('#turns li[data-turn]').length === {}",
            listed - 1
        ),
    );

    // The inspector: hovering over 7 names it; a click gives the step.
    page.press("Inspect");
    let (x, y) = page.viewport_point(centre(&elements, &["7"]));
    page.act(
        "browser_pointer",
        json!({ "action": "hover", "x": x, "y": y }),
    );
    page.until(
        "hovering over 7 never named it",
        "document.getElementById('locator').textContent.startsWith('button \"7\"')",
    );
    page.shot("live-inspector.png");
    page.act("browser_click", json!({ "x": x, "y": y }));
    page.until(
        "a click in the inspector gave no step",
        "document.getElementById('copied').textContent !== ''",
    );
    let step = page.eval("document.getElementById('step').textContent");
    let step = step.as_str().unwrap().to_string();
    page.press("Inspect");

    // Save as scenario, by typing its name into the form.
    page.save_as("calc-live");

    // The page goes (its browser and sandbox stop); then Ctrl-C ends the recording, which
    // is complete on disk without the undone turn.
    drop(page);
    recorder.interrupt();
    let tools: Vec<String> = recorder
        .actions()
        .iter()
        .map(|a| format!("{} {}", a["tool"].as_str().unwrap(), a["target"]["name"]))
        .collect();
    assert_eq!(
        tools
            .iter()
            .map(|t| t.split(' ').next().unwrap())
            .collect::<Vec<_>>(),
        ["launch_app", "click", "click", "type_text", "click"],
        "{tools:?}"
    );
    assert!(!tools.iter().any(|t| t.contains("\"1\"")), "{tools:?}");
    let hidden: Vec<_> = std::fs::read_dir(&recorder.dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.file_name())
        .collect();
    assert!(hidden.is_empty(), "leftovers: {hidden:?}");

    // The saved scenario: its first run is the golden, its second passes against it.
    recorder.cua_test("calc-live", &["--update"]);
    recorder.cua_test("calc-live", &[]);

    // The inspector's step, pasted into a scenario, runs and presses 7.
    assert!(
        step.contains("target = { role = \"button\", name = \"7\" }"),
        "{step}"
    );
    let scenario = format!(
        "description = \"the inspector's step\"\n\n[app]\nname = \"Calculator\"\nwindow = \"Calculator\"\n\n{step}"
    );
    std::fs::write(recorder.root.join("harness/inspected.toml"), scenario).unwrap();
    recorder.cua_test("inspected", &["--update"]);
    let golden = cua::replay::turn_dirs(&recorder.root.join("goldens/inspected")).unwrap();
    let after = std::fs::read_to_string(golden.last().unwrap().1.join("app_state.json")).unwrap();
    assert!(after.contains("text value=\\\"7\\\""), "{after}");
    let _ = std::fs::remove_dir_all(&recorder.root);
}

/// The GTK 3 fixture (given by its path) recorded through the page in Chromium: a click on
/// Increment and a name typed into its field reach the fixture (its journal), the turn
/// folders hold them, and the saved scenario (its `[app] path`) passes `cua test`.
#[test]
fn a_fixture_recorded_in_the_page_in_chromium_journals_each_input_and_its_scenario_passes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let app_side = common::Session::private();
    let journal = std::env::temp_dir().join(format!(
        "cua-live-browser-journal-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&journal);
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/harness/apps/fixture.py");
    let mut recorder = LiveRecorder::start(
        &app_side,
        "live-browser-fixture",
        fixture,
        &[("CUA_FIXTURE_JOURNAL", journal.as_path())],
    );
    let (pid, window) = common::live::window_titled(&app_side, "cua fixture");
    let elements = app_side.state(&pid, &window)["elements"]
        .as_array()
        .unwrap()
        .clone();
    let centre_of = |role: &str, name: &str| {
        let e = elements
            .iter()
            .find(|e| e["role"] == role && e["name"] == name)
            .unwrap_or_else(|| panic!("no {role} {name:?}"));
        let f = &e["frame"];
        let n = |k: &str| f[k].as_f64().unwrap();
        (n("x") + n("w") / 2.0, n("y") + n("h") / 2.0)
    };

    let page = Page::open(&recorder.url);
    page.until(
        "the page never showed the screen",
        "document.getElementById('screen').naturalWidth === 1280",
    );
    page.click_screen(centre_of("button", "Increment"));
    page.click_screen(centre_of("text", "Name"));
    page.type_keys("cua");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let events = common::journal(&journal);
        let clicked = events.iter().filter(|e| e["event"] == "clicked").count();
        let typed = events
            .iter()
            .rev()
            .find(|e| e["event"] == "changed")
            .is_some_and(|e| e["text"] == "cua");
        if clicked == 1 && typed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the fixture's journal: {events:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    page.save_as("fixture-live");
    drop(page);
    recorder.interrupt();

    let tools = recorder.tools();
    assert_eq!(tools, ["launch_app", "click", "click", "type_text"]);
    let scenario =
        std::fs::read_to_string(recorder.root.join("harness/fixture-live.toml")).unwrap();
    assert!(
        scenario.contains(&format!("path = \"{fixture}\"")),
        "{scenario}"
    );
    recorder.cua_test("fixture-live", &["--update"]);
    recorder.cua_test("fixture-live", &[]);
    let _ = std::fs::remove_dir_all(&recorder.root);
    let _ = std::fs::remove_file(&journal);
}
