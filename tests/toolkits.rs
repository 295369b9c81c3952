//! The cross-toolkit conformance matrix. The same small form, written once per toolkit as
//! a fixture under `harness/apps/` (GTK 3: fixture_gtk3.py; GTK 4: fixture_gtk4.py; Qt 5 and
//! Qt 6: fixture_qt.py; Chromium and Firefox: fixture.html, served by fixture_web.py),
//! journals every event it receives. Every input tool is driven on every fixture in
//! background mode and its effect is read from the fixture's own journal, never from
//! cua's reply. Each cell is then one of:
//!
//! - `works`: cua said `confirmed`, and the journal shows the effect;
//! - `works, unverified`: the journal shows the effect, cua did not claim it;
//! - `escalates`: no effect, and cua said so (an error, `suspected_noop`, an escalation);
//! - `n/a`: the fixture has no such widget.
//!
//! A cell where cua said `confirmed` and the journal shows nothing fails the test, and so
//! does one where nothing happened and cua did not say so: a harness must never take a
//! no-op for a pass. The matrix is printed and must equal the
//! one in docs/toolkits.md (`CUA_UPDATE_DOCS=1 cargo test --test toolkits` rewrites it),
//! so the docs come from this test's output. Observation is also checked never to crash
//! an app (Qt crashed on `Properties.GetAll` of its root).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::journal;
use cua::sandbox::{Backend, Sandbox, SandboxOptions};
use cua::tools::ToolOutput;
use serde_json::{Value, json};

struct Fixture {
    toolkit: &'static str,
    launch: Launch,
    /// The display server it runs on (a sandbox of each kind drives the matrix).
    backend: Backend,
}

/// How a fixture starts: a toolkit fixture script, or a browser on the web fixture
/// (harness/apps/fixture.html) served by fixture_web.py, which journals what the page
/// posts.
enum Launch {
    Script(&'static str, &'static [&'static str]),
    Browser(&'static str),
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        toolkit: "GTK 3",
        launch: Launch::Script("harness/apps/fixture_gtk3.py", &[]),
        backend: Backend::X11,
    },
    Fixture {
        toolkit: "GTK 4",
        launch: Launch::Script("harness/apps/fixture_gtk4.py", &[]),
        backend: Backend::X11,
    },
    Fixture {
        toolkit: "Qt 5",
        launch: Launch::Script("harness/apps/fixture_qt.py", &["5"]),
        backend: Backend::X11,
    },
    Fixture {
        toolkit: "Qt 6",
        launch: Launch::Script("harness/apps/fixture_qt.py", &["6"]),
        backend: Backend::X11,
    },
    Fixture {
        toolkit: "Chromium",
        launch: Launch::Browser("chromium"),
        backend: Backend::X11,
    },
    Fixture {
        toolkit: "Firefox",
        launch: Launch::Browser("firefox-esr"),
        backend: Backend::X11,
    },
];

/// The same fixtures as native Wayland clients, in a headless sway.
const WAYLAND_FIXTURES: &[Fixture] = &[
    Fixture {
        toolkit: "GTK 3 (Wayland)",
        launch: Launch::Script("harness/apps/fixture_gtk3.py", &[]),
        backend: Backend::Wayland,
    },
    Fixture {
        toolkit: "GTK 4 (Wayland)",
        launch: Launch::Script("harness/apps/fixture_gtk4.py", &[]),
        backend: Backend::Wayland,
    },
    Fixture {
        toolkit: "Qt 6 (Wayland)",
        launch: Launch::Script("harness/apps/fixture_qt.py", &["6"]),
        backend: Backend::Wayland,
    },
];

/// The same fixtures on GNOME Shell (mutter), through cua's Shell extension.
const GNOME_FIXTURES: &[Fixture] = &[
    Fixture {
        toolkit: "GTK 3 (GNOME)",
        launch: Launch::Script("harness/apps/fixture_gtk3.py", &[]),
        backend: Backend::Gnome,
    },
    Fixture {
        toolkit: "GTK 4 (GNOME)",
        launch: Launch::Script("harness/apps/fixture_gtk4.py", &[]),
        backend: Backend::Gnome,
    },
    Fixture {
        toolkit: "Qt 6 (GNOME)",
        launch: Launch::Script("harness/apps/fixture_qt.py", &["6"]),
        backend: Backend::Gnome,
    },
];

/// The same fixtures on KDE's KWin, through its window list, fake input and screenshots.
const KDE_FIXTURES: &[Fixture] = &[
    Fixture {
        toolkit: "GTK 3 (KDE)",
        launch: Launch::Script("harness/apps/fixture_gtk3.py", &[]),
        backend: Backend::Kde,
    },
    Fixture {
        toolkit: "GTK 4 (KDE)",
        launch: Launch::Script("harness/apps/fixture_gtk4.py", &[]),
        backend: Backend::Kde,
    },
    Fixture {
        toolkit: "Qt 6 (KDE)",
        launch: Launch::Script("harness/apps/fixture_qt.py", &["6"]),
        backend: Backend::Kde,
    },
];

/// One row of the matrix: a tool call on an element found by role (and name), and the
/// journal event that shows its effect.
struct Case {
    label: &'static str,
    tool: &'static str,
    /// One role, or alternatives separated by `|`.
    role: &'static str,
    /// Names to try in order, separated by `|`; an empty one (or none): the first element
    /// of that role.
    name: &'static str,
    /// Arguments besides pid, window_id and element_index, given the element found (its
    /// entry in get_window_state's `elements`; null when `role` is empty).
    args: fn(&Value) -> Value,
    /// Whether to address the element by index (false: the window, as press_key / hotkey
    /// do, or pixels computed by `args`, as drag does).
    by_element: bool,
    /// An element (role, name) to click first, as a person opens a menu before choosing
    /// an item, with the same delivery; the window is then read again.
    opens: Option<(&'static str, &'static str)>,
    /// The journal event that shows the effect.
    shows: fn(&Value) -> bool,
}

fn event_is(e: &Value, event: &str, widget: &str) -> bool {
    e["event"] == event && e["widget"] == widget
}

const CASES: &[Case] = &[
    Case {
        label: "click a button",
        tool: "click",
        role: "button",
        name: "Increment",
        args: |_| json!({}),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "clicked", "Increment"),
    },
    Case {
        label: "click a check box",
        tool: "click",
        role: "check_box",
        name: "Enable feature",
        args: |_| json!({}),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "toggled", "Enable feature") && e["active"] == true,
    },
    Case {
        label: "click a radio button",
        tool: "click",
        // GTK 4.8 reports grouped check buttons (its radio buttons) as check boxes.
        role: "radio_button|check_box",
        name: "Large",
        args: |_| json!({}),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "toggled", "Large") && e["active"] == true,
    },
    Case {
        label: "type_text into an entry",
        tool: "type_text",
        // Web inputs are entries; toolkit ones are text.
        role: "text|entry",
        name: "Name",
        args: |_| json!({ "text": "héllo ✓" }),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "changed", "Name") && e["text"] == "héllo ✓",
    },
    Case {
        label: "set_value on a slider",
        tool: "set_value",
        role: "slider",
        name: "Level",
        args: |_| json!({ "value": "40" }),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "value-changed", "Level") && e["value"].as_f64() == Some(40.0),
    },
    Case {
        label: "set_value on a spin button",
        tool: "set_value",
        role: "spin_button",
        name: "Amount",
        args: |_| json!({ "value": "7" }),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "value-changed", "Amount") && e["value"].as_f64() == Some(7.0),
    },
    Case {
        label: "set_value on a combo box",
        tool: "set_value",
        role: "combo_box",
        // A browser's address bar is a combo box too.
        name: "Size|",
        args: |_| json!({ "value": "Right" }),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "selected", "Size") && e["text"] == "Right",
    },
    Case {
        label: "scroll a long list",
        tool: "scroll",
        role: "list_item",
        // The list's first row (not a combo box's option); GTK 4 rows carry their text in
        // a child label, not a name: there, the first row.
        name: "Item 1|",
        args: |_| json!({ "direction": "down", "amount": 5 }),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "scrolled", "Items"),
    },
    Case {
        label: "type_text into a multi-line area",
        tool: "type_text",
        role: "text|entry",
        name: "Notes",
        args: |_| json!({ "text": "two\nlines" }),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "changed", "Notes") && e["text"] == "two\nlines",
    },
    Case {
        label: "double_click a list row",
        tool: "double_click",
        role: "list_item",
        name: "Item 2|",
        args: |_| json!({}),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "activated", "Items"),
    },
    Case {
        label: "right_click a button",
        tool: "right_click",
        role: "button|push_button",
        name: "Options",
        args: |_| json!({}),
        by_element: true,
        opens: None,
        shows: |e| event_is(e, "context-menu", "Options"),
    },
    Case {
        label: "drag a slider",
        tool: "drag",
        role: "slider",
        name: "Level",
        // From the handle (at 0, the left end) to the middle of the track.
        args: |slider| {
            let f = &slider["pixel_frame"];
            let (x, y, w, h) = (
                f["x"].as_f64().unwrap(),
                f["y"].as_f64().unwrap(),
                f["w"].as_f64().unwrap(),
                f["h"].as_f64().unwrap(),
            );
            json!({ "from_x": x + 6.0, "from_y": y + h / 2.0, "to_x": x + w / 2.0, "to_y": y + h / 2.0 })
        },
        by_element: false,
        opens: None,
        shows: |e| event_is(e, "value-changed", "Level") && e["value"].as_f64() > Some(0.0),
    },
    Case {
        label: "click a menu item",
        tool: "click",
        role: "menu_item",
        name: "Say hello",
        args: |_| json!({}),
        by_element: true,
        opens: Some(("menu|menu_item|toggle_button|button|push_button", "File")),
        shows: |e| event_is(e, "activated", "Say hello"),
    },
    Case {
        label: "press_key to the window",
        tool: "press_key",
        role: "",
        name: "",
        args: |_| json!({ "key": "x" }),
        by_element: false,
        opens: None,
        shows: |e| e["event"] == "key-press" && e["key"] == "x",
    },
    Case {
        label: "hotkey to the window",
        tool: "hotkey",
        role: "",
        name: "",
        args: |_| json!({ "keys": ["shift", "y"] }),
        by_element: false,
        opens: None,
        shows: |e| {
            e["event"] == "key-press" && (e["key"] == "Y" || e["key"] == "y" || e["key"] == "89")
        },
    },
];

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Waits (bounded) for an event after the first `seen` ones that satisfies `shows`.
fn journal_shows(path: &Path, seen: usize, shows: fn(&Value) -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        if journal(path).iter().skip(seen).any(shows) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

struct Harness {
    session: common::Session,
    /// The web fixture's address, served by `_server` (ended on drop).
    web_fixture: String,
    _server: WebFixtureServer,
}

/// fixture_web.py, journaling to the sandbox's journal; killed when dropped.
struct WebFixtureServer(std::process::Child);

impl WebFixtureServer {
    fn start(journal: &Path) -> (WebFixtureServer, String) {
        use std::io::BufRead;
        let mut child = std::process::Command::new("/usr/bin/python3")
            .arg(project().join("harness/apps/fixture_web.py"))
            .env("CUA_FIXTURE_JOURNAL", journal)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("fixture_web.py starts");
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .expect("fixture_web.py prints its address");
        assert!(first.starts_with("http://127.0.0.1:"), "{first:?}");
        (WebFixtureServer(child), first.trim().to_string())
    }
}

impl Drop for WebFixtureServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Harness {
    fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, cua::errors::ToolError> {
        self.session.call(tool, args)
    }
}

/// The element of `role` (and `name`, when given) in a window state: its entry in
/// `elements`.
fn find_element(state: &ToolOutput, role: &str, names: &str) -> Option<Value> {
    let elements = state.structured["elements"].as_array()?;
    names.split('|').find_map(|name| {
        elements
            .iter()
            .find(|e| {
                role.split('|').any(|r| e["role"] == r) && (name.is_empty() || e["name"] == name)
            })
            .cloned()
    })
}

/// The element of `role` (and `name`, when given) in a window state, as its index.
fn find(state: &ToolOutput, role: &str, names: &str) -> Option<u64> {
    find_element(state, role, names).and_then(|e| e["element_index"].as_u64())
}

/// What one delivery of a case did.
struct Attempt {
    reply: Result<ToolOutput, cua::errors::ToolError>,
    /// The fixture's journal shows the effect.
    shown: bool,
    /// cua said `confirmed` (which must never come without the effect).
    claimed: bool,
}

impl Attempt {
    /// The escalation cua recommended, if any.
    fn recommended(&self) -> Option<String> {
        let reply = self.reply.as_ref().ok()?;
        reply.structured["escalation"]["recommended"]
            .as_str()
            .map(str::to_string)
    }

    /// No effect, and cua said so: an error, `suspected_noop`, `no_change`, or an escalation.
    /// (`unverifiable` with no escalation would let a harness take a no-op for a pass.)
    fn said_so(&self) -> bool {
        self.reply.as_ref().map_or(true, |o| {
            o.structured["effect"] == "suspected_noop"
                || o.structured["effect"] == "no_change"
                || !o.structured["escalation"].is_null()
        })
    }
}

/// Calls the case's tool and reads the fixture's journal. `how` names the delivery in a
/// failure message.
fn attempt(
    h: &Harness,
    fx: &Fixture,
    journal_path: &Path,
    case: &Case,
    args: Value,
    how: &str,
) -> Attempt {
    let seen = journal(journal_path).len();
    let reply = h.call(case.tool, args);
    let shown = journal_shows(journal_path, seen, case.shows);
    let claimed = reply
        .as_ref()
        .is_ok_and(|o| o.structured["effect"] == "confirmed");
    assert!(
        shown || !claimed,
        "{} / {}{how}: cua said `confirmed` but the fixture's journal shows no effect.\nreply: {:?}\njournal: {:?}",
        fx.toolkit,
        case.label,
        reply.as_ref().map(|o| &o.structured),
        journal(journal_path)
    );
    Attempt {
        reply,
        shown,
        claimed,
    }
}

/// Where a case stands before its call: the arguments to send, or why it cannot be sent.
enum Setup {
    Ready(Value),
    /// The fixture has no such widget.
    Missing,
    /// The opener's click did not open what holds the element: its reply.
    NotOpened(Attempt),
}

/// Reads the window (after clicking the case's opener, with `delivery`, if it has one)
/// and builds the case's arguments.
fn setup(
    h: &Harness,
    fx: &Fixture,
    case: &Case,
    pid: u64,
    window_id: u64,
    delivery: &str,
) -> Setup {
    let at = json!({ "pid": pid, "window_id": window_id });
    let read = || {
        h.call("get_window_state", at.clone())
            .unwrap_or_else(|e| panic!("{}: get_window_state: {e}", fx.toolkit))
    };
    let mut state = read();
    if let Some((role, name)) = case.opens {
        let Some(opener) = find(&state, role, name) else {
            return Setup::Missing;
        };
        let mut click = at.clone();
        click["element_index"] = json!(opener);
        click["delivery_mode"] = json!(delivery);
        // As an agent would: wait for the menu to show (GTK 4 opens it ~250 ms later).
        click["settle_ms"] = json!(1500);
        // The opener's effect is not journaled: its reply stands as it is.
        let reply = h.call("click", click);
        let claimed = reply
            .as_ref()
            .is_ok_and(|o| o.structured["effect"] == "confirmed");
        let opened = Attempt {
            reply,
            shown: false,
            claimed,
        };
        state = read();
        if case.role.is_empty() || find(&state, case.role, case.name).is_none() {
            return Setup::NotOpened(opened);
        }
    }
    let element = if case.role.is_empty() {
        Value::Null
    } else {
        match find_element(&state, case.role, case.name) {
            Some(e) => e,
            // The web fixture has every widget: missing means the page was misread.
            None if matches!(fx.launch, Launch::Browser(_)) => panic!(
                "{} / {}: no {} {:?} in the first read of the page:\n{}",
                fx.toolkit,
                case.label,
                case.role,
                case.name,
                state.structured["tree_markdown"].as_str().unwrap_or("")
            ),
            None => return Setup::Missing,
        }
    };
    let mut args = (case.args)(&element);
    args["pid"] = json!(pid);
    args["window_id"] = json!(window_id);
    if case.by_element {
        args["element_index"] = element["element_index"].clone();
    }
    if delivery != "background" {
        args["delivery_mode"] = json!(delivery);
    }
    Setup::Ready(args)
}

/// The case with one delivery: its setup and its call.
fn deliver(
    h: &Harness,
    fx: &Fixture,
    journal_path: &Path,
    case: &Case,
    pid: u64,
    window_id: u64,
    delivery: &str,
) -> Option<Attempt> {
    let how = if delivery == "background" {
        String::new()
    } else {
        format!(" in the {delivery}")
    };
    match setup(h, fx, case, pid, window_id, delivery) {
        Setup::Ready(args) => Some(attempt(h, fx, journal_path, case, args, &how)),
        Setup::Missing => None,
        Setup::NotOpened(opened) => Some(opened),
    }
}

/// Starts a fresh instance of a fixture: its pid and window.
fn launch(h: &Harness, fx: &Fixture) -> (u64, u64) {
    let request = match fx.launch {
        Launch::Script(script, args) => json!({
            "path": project().join(script).to_string_lossy(),
            "additional_arguments": args,
            "creates_new_application_instance": true,
        }),
        Launch::Browser(name) => json!({
            "name": name,
            "urls": [&h.web_fixture],
            "creates_new_application_instance": true,
        }),
    };
    let launched = h
        .call("launch_app", request)
        .unwrap_or_else(|e| panic!("{}: launch: {e}", fx.toolkit));
    let pid = launched.structured["pid"].as_u64().unwrap();
    let window_id = launched.structured["windows"][0]["window_id"]
        .as_u64()
        .unwrap();
    (pid, window_id)
}

fn cell(h: &Harness, fx: &Fixture, journal_path: &Path, case: &Case) -> String {
    let (pid, window_id) = launch(h, fx);
    let result = (|| {
        let Some(background) = deliver(h, fx, journal_path, case, pid, window_id, "background")
        else {
            return "n/a".to_string();
        };
        // Observation must never take the app down.
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "{}: the app died during {}",
            fx.toolkit,
            case.label
        );
        assert!(
            background.shown || background.said_so(),
            "{} / {}: nothing happened and cua did not say so.\nreply: {:?}",
            fx.toolkit,
            case.label,
            background.reply.map(|o| o.structured)
        );
        // A route that worked must not be called one that cannot: `cua test` would then
        // take the foreground for nothing.
        assert!(
            !background.shown || background.recommended().is_none(),
            "{} / {}: the background call worked, yet cua recommended {:?}.\nreply: {:?}",
            fx.toolkit,
            case.label,
            background.recommended(),
            background.reply.map(|o| o.structured)
        );
        match (background.shown, background.claimed) {
            (true, true) => "works".into(),
            (true, false) => "works, unverified".into(),
            // In a sandbox no person's focus can be stolen: take the escalation as `cua
            // test` does, and show whether that route works.
            (false, _) if background.recommended().as_deref() == Some("foreground") => {
                match deliver(h, fx, journal_path, case, pid, window_id, "foreground") {
                    Some(Attempt {
                        shown: true,
                        claimed: true,
                        ..
                    }) => "escalates; foreground works".into(),
                    Some(Attempt { shown: true, .. }) => {
                        "escalates; foreground works, unverified".into()
                    }
                    _ => "escalates; foreground fails too".into(),
                }
            }
            (false, _) => "escalates".into(),
        }
    })();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    result
}

fn matrix_markdown(columns: &[&Fixture], rows: &[(String, Vec<String>)]) -> String {
    let mut md = String::from("| tool × toolkit |");
    for fx in columns {
        md.push_str(&format!(" {} |", fx.toolkit));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(columns.len()));
    md.push('\n');
    for (label, cells) in rows {
        md.push_str(&format!("| {label} |"));
        for c in cells {
            md.push_str(&format!(" {c} |"));
        }
        md.push('\n');
    }
    md
}

const BEGIN: &str = "<!-- matrix: generated by tests/toolkits.rs -->\n";
const END: &str = "<!-- end of matrix -->";

/// A sandbox whose fixtures journal to `journal.jsonl` in it, and tools to drive them.
fn sandboxed() -> (Sandbox, PathBuf, Harness) {
    sandboxed_on(Backend::X11)
}

fn sandboxed_on(backend: Backend) -> (Sandbox, PathBuf, Harness) {
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        backend,
    })
    .expect("sandbox starts");
    let journal_path = sandbox.dir().join("journal.jsonl");
    let mut env = sandbox.desktop();
    env.app_env = vec![(
        "CUA_FIXTURE_JOURNAL".into(),
        journal_path.to_string_lossy().into_owned(),
    )];
    let (server, web_fixture) = WebFixtureServer::start(&journal_path);
    let h = Harness {
        session: common::Session::for_desktop(env),
        web_fixture,
        _server: server,
    };
    (sandbox, journal_path, h)
}

#[test]
fn gtk4_shortcuts_run_as_widget_actions_and_check_boxes_get_an_index() {
    // GTK 4 ignores synthetic key events; its text widgets export the shortcuts as
    // actions. ctrl+a must select all, so that typing replaces the text.
    let (_sandbox, journal_path, h) = sandboxed();
    let launched = h
        .call(
            "launch_app",
            json!({ "path": project().join("harness/apps/fixture_gtk4.py").to_string_lossy() }),
        )
        .unwrap();
    let pid = launched.structured["pid"].as_u64().unwrap();
    let window_id = launched.structured["windows"][0]["window_id"]
        .as_u64()
        .unwrap();
    let state = h
        .call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id }),
        )
        .unwrap();
    let notes = find(&state, "text", "Notes").expect("the Notes text view");
    let at = json!({ "pid": pid, "window_id": window_id, "element_index": notes });
    let mut typed = at.clone();
    typed["text"] = json!("first line");
    h.call("type_text", typed).unwrap();
    let mut keys = at.clone();
    keys["key"] = json!("a");
    keys["modifiers"] = json!(["ctrl"]);
    let pressed = h.call("press_key", keys).unwrap();
    assert_eq!(
        pressed.structured["path"], "element_action",
        "{}",
        pressed.structured
    );
    assert_eq!(pressed.structured["action"], "selection.select-all");
    assert!(
        pressed
            .structured
            .get("escalation")
            .is_none_or(Value::is_null)
    );
    let mut over = at.clone();
    over["text"] = json!("replaced");
    let reply = h.call("type_text", over).unwrap();
    assert_eq!(
        reply.structured["effect"], "confirmed",
        "{}",
        reply.structured
    );
    let last = journal(&journal_path)
        .into_iter()
        .rfind(|e| event_is(e, "changed", "Notes"))
        .expect("Notes changed");
    assert_eq!(last["text"], "replaced", "{last}");

    // A GTK 4 check box exposes no action: it has an index all the same, and a click
    // says it needs the foreground (GTK 4 ignores synthetic pointer events).
    let feature = find(&state, "check_box", "Enable feature").expect("an index for the check box");
    let click = json!({ "pid": pid, "window_id": window_id, "element_index": feature });
    let seen = journal(&journal_path).len();
    let background = h.call("click", click).unwrap();
    assert_eq!(
        background.structured["escalation"]["recommended"], "foreground",
        "{}",
        background.structured
    );
    assert_ne!(background.structured["effect"], "confirmed");
    assert!(!journal_shows(&journal_path, seen, |e| event_is(
        e,
        "toggled",
        "Enable feature"
    )));
}

/// A foreground action aims where it acts (issue #33). type_text by element goes to its
/// field even while a button holds the focus: keys sent to the focus would press the
/// button, and "ab c" holds a space. scroll by element, on a row its list (90 px tall)
/// clips whole, scrolls that list or is refused: the wheel goes where the row shows or
/// where its list does, never past them (GTK 4 reports such a row's frame below the list,
/// where a wheel scrolls nothing; a wheel on the desktop once switched openbox's desktops
/// and iconified the window). On GTK 3, GTK 4 and Qt 5, each effect read from the
/// fixture's journal.
#[test]
fn foreground_element_actions_land_on_their_element() {
    let (_sandbox, journal_path, h) = sandboxed();
    for fx in &FIXTURES[..3] {
        let (pid, window_id) = launch(&h, fx);
        let at = json!({ "pid": pid, "window_id": window_id });
        let read = || {
            h.call("get_window_state", at.clone())
                .unwrap_or_else(|e| panic!("{}: get_window_state: {e}", fx.toolkit))
        };
        let on = |index: u64, extra: Value| {
            let mut args = at.clone();
            args["element_index"] = json!(index);
            args["delivery_mode"] = json!("foreground");
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            args
        };

        // The focus on a button, as a person's click leaves it.
        let button = find(&read(), "button|push_button", "Increment").expect("Increment");
        let seen = journal(&journal_path).len();
        h.call("click", on(button, json!({}))).unwrap();
        assert!(
            journal_shows(&journal_path, seen, |e| event_is(e, "clicked", "Increment")),
            "{}: the foreground click on Increment did not land",
            fx.toolkit
        );

        let field = find(&read(), "text|entry", "Name").expect("Name");
        let seen = journal(&journal_path).len();
        let typed = h.call("type_text", on(field, json!({ "text": "ab c" })));
        let landed = journal_shows(&journal_path, seen, |e| {
            event_is(e, "changed", "Name") && e["text"].as_str().is_some_and(|t| t.contains("ab c"))
        });
        let pressed = journal(&journal_path)
            .iter()
            .skip(seen)
            .any(|e| event_is(e, "clicked", "Increment"));
        assert!(
            !pressed,
            "{}: the keys went to the focused button: {:?}",
            fx.toolkit,
            typed.as_ref().map(|o| &o.structured)
        );
        assert!(
            landed || typed.is_err(),
            "{}: the text is not in its field, and cua did not say so: {:?}",
            fx.toolkit,
            typed.as_ref().map(|o| &o.structured)
        );

        // The eighth row, below what the list shows.
        let state = read();
        let row = state.structured["elements"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["role"] == "list_item")
            .nth(7)
            .and_then(|e| e["element_index"].as_u64())
            .expect("an eighth row");
        let seen = journal(&journal_path).len();
        let scrolled = h.call(
            "scroll",
            on(row, json!({ "direction": "down", "amount": 5 })),
        );
        let moved = journal_shows(&journal_path, seen, |e| event_is(e, "scrolled", "Items"));
        let claimed = scrolled
            .as_ref()
            .is_ok_and(|o| o.structured["effect"] == "confirmed");
        assert!(
            moved || scrolled.is_err(),
            "{}: the list did not scroll, and cua did not say so: {:?}",
            fx.toolkit,
            scrolled.as_ref().map(|o| &o.structured)
        );
        assert!(
            moved || !claimed,
            "{}: confirmed without the effect",
            fx.toolkit
        );
        // Still on screen and readable: nothing wheeled the desktop.
        read();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

#[test]
fn every_input_tool_on_every_toolkit_fixture_tells_the_truth() {
    let (_x11, x11_journal, x11) = sandboxed();
    let (_wayland, wayland_journal, wayland) = sandboxed_on(Backend::Wayland);
    let (_gnome, gnome_journal, gnome) = sandboxed_on(Backend::Gnome);
    let (_kde, kde_journal, kde) = sandboxed_on(Backend::Kde);
    let on = |fx: &Fixture| match fx.backend {
        Backend::X11 => (&x11, &x11_journal),
        Backend::Wayland => (&wayland, &wayland_journal),
        Backend::Gnome => (&gnome, &gnome_journal),
        Backend::Kde => (&kde, &kde_journal),
    };
    // CUA_MATRIX_COLUMNS=Wayland runs only the columns whose name contains one of those
    // words (the docs are then neither checked nor written).
    let columns_wanted = std::env::var("CUA_MATRIX_COLUMNS").ok();
    let columns: Vec<&Fixture> = FIXTURES
        .iter()
        .chain(WAYLAND_FIXTURES)
        .chain(GNOME_FIXTURES)
        .chain(KDE_FIXTURES)
        .filter(|fx| {
            columns_wanted
                .as_deref()
                .is_none_or(|w| w.split(',').any(|w| fx.toolkit.contains(w)))
        })
        .collect();

    // CUA_MATRIX_ROWS=drag,menu runs only the rows whose label contains one of those
    // words (while working on them); the docs are then neither checked nor written.
    let only = std::env::var("CUA_MATRIX_ROWS").ok();
    let wanted = |case: &Case| {
        only.as_deref()
            .is_none_or(|w| w.split(',').any(|w| case.label.contains(w)))
    };
    let mut rows = Vec::new();
    for case in CASES.iter().filter(|c| wanted(c)) {
        let cells: Vec<String> = columns
            .iter()
            .map(|fx| {
                let (h, journal_path) = on(fx);
                cell(h, fx, journal_path, case)
            })
            .collect();
        rows.push((format!("{} (`{}`)", case.label, case.tool), cells));
    }
    let matrix = matrix_markdown(&columns, &rows);
    println!("{matrix}");
    if only.is_some() || columns_wanted.is_some() {
        return;
    }

    let docs = project().join("docs/toolkits.md");
    let text = std::fs::read_to_string(&docs).unwrap_or_default();
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        panic!("docs/toolkits.md has no matrix markers");
    };
    let current = &text[b + BEGIN.len()..e];
    if std::env::var_os("CUA_UPDATE_DOCS").is_some() {
        let updated = format!("{}{BEGIN}{matrix}{}", &text[..b], &text[e..]);
        std::fs::write(&docs, updated).unwrap();
    } else {
        assert_eq!(
            current, matrix,
            "docs/toolkits.md's matrix differs from what the fixtures showed; rerun with CUA_UPDATE_DOCS=1 after checking the change"
        );
    }
}

/// Two runs of one build diff clean because nothing on screen blinks: in a sandbox a
/// focused text field's caret is steady on every toolkit (GTK and the browsers through
/// GTK's settings.ini, or its GSettings on Wayland; Qt through its KDE theme's
/// kdeglobals), on X11 and on Wayland. The field is focused with a
/// real click and drawn (two shots in a row agree), then shot every 200 ms for 2.4 s, two
/// blink periods or more everywhere (the sampling over time is what is measured, so it is
/// paced, not waited on): every shot must be the same.
#[test]
fn a_focused_text_field_draws_the_same_pixels_through_two_blink_periods() {
    let (_x11, _journal, x11) = sandboxed();
    let (_wayland, _wayland_journal, wayland) = sandboxed_on(Backend::Wayland);
    let (_gnome, _gnome_journal, gnome) = sandboxed_on(Backend::Gnome);
    let (_kde, _kde_journal, kde) = sandboxed_on(Backend::Kde);
    let mut blinking = Vec::new();
    for fx in FIXTURES
        .iter()
        .chain(WAYLAND_FIXTURES)
        .chain(GNOME_FIXTURES)
        .chain(KDE_FIXTURES)
    {
        let h = match fx.backend {
            Backend::X11 => &x11,
            Backend::Wayland => &wayland,
            Backend::Gnome => &gnome,
            Backend::Kde => &kde,
        };
        let (pid, window_id) = launch(h, fx);
        let at = json!({ "pid": pid, "window_id": window_id });
        let state = |screenshot: bool| {
            let mut args = at.clone();
            args["include_screenshot"] = json!(screenshot);
            h.call("get_window_state", args)
                .unwrap_or_else(|e| panic!("{}: get_window_state: {e}", fx.toolkit))
        };
        let name = find(&state(false), "text|entry", "Name")
            .unwrap_or_else(|| panic!("{}: no Name field", fx.toolkit));
        let mut click = at.clone();
        click["element_index"] = json!(name);
        click["delivery_mode"] = json!("foreground");
        h.call("click", click)
            .unwrap_or_else(|e| panic!("{}: click: {e}", fx.toolkit));
        let deadline = Instant::now() + Duration::from_secs(5);
        while !find_element(&state(false), "text|entry", "Name").is_some_and(|e| {
            e["states"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s == "focused"))
        }) {
            assert!(
                Instant::now() < deadline,
                "{}: Name never took the focus",
                fx.toolkit
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // The field draws its focus a little after the tree says focused (later under
        // load): start once two shots 200 ms apart agree, then sample.
        let shot = || state(true).image.expect("a screenshot").data;
        let mut last = shot();
        let settle = Instant::now() + Duration::from_secs(3);
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let next = shot();
            if next == last || Instant::now() >= settle {
                break;
            }
            last = next;
        }
        let mut shots = Vec::new();
        for _ in 0..12 {
            let shot = shot();
            if !shots.contains(&shot) {
                shots.push(shot);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        if shots.len() > 1 {
            blinking.push(format!("{} ({} different frames)", fx.toolkit, shots.len()));
        }
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    assert!(
        blinking.is_empty(),
        "a focused field still changes: {blinking:?}"
    );
}
