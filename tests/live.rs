//! `cua record --live`: recording by doing. cua launches the calculator in a sandbox and
//! serves the live page; this test is the page's other end (its WebSocket): it gets the
//! screen's frames, clicks 7 × 6 = where the calculator's buttons are on the screen, and
//! each click comes back as a recorded turn addressed by element. The calculator's own tree
//! shows 42; the turn folders hold the flow. "Save as scenario" writes a scenario of it, and
//! `cua test` makes its golden and then passes against it. The app exiting ends the
//! recording and the page is told. A second page, a wrong token,
//! another Host, a malformed event, an undo with nothing to undo and a scenario name taken
//! are refused by name.
//!
//! The second test records every kind of input the page sends (a right click, a double
//! click, a click and typing, a key with a modifier, the wheel, a drag) on the GTK 3
//! fixture given by its path, and reads each effect in the fixture's own journal.

mod common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::Message;

use common::live::{LiveRecorder, calculator_shows, calculator_window, centre};

type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

/// One live recorder at a time: each has a sandbox and its app, on two cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The WebSocket URL the page (an HTTP reply, checked to be 200) names, as a browser
/// finds it.
fn socket_url(page: &str) -> String {
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    page.split("new WebSocket(`ws://${location.hostname}:")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .map(|rest| format!("ws://127.0.0.1:{rest}"))
        .expect("the page names its socket")
}

/// The page's WebSocket, found in the page as a browser finds it; reads time out.
fn connect(url: &str) -> Socket {
    let (host, path) = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap();
    let page = common::http_get(host, &format!("/{path}"), host);
    let (ws, _) = tungstenite::connect(socket_url(&page)).expect("the page's socket");
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
    }
    ws
}

/// The next JSON message, skipping frames (bounded).
fn next_message(ws: &mut Socket) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            Instant::now() < deadline,
            "no message from the live page's socket"
        );
        match ws.read() {
            Ok(Message::Text(t)) => return serde_json::from_str(t.as_str()).unwrap(),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => panic!("the live socket failed: {e}"),
        }
    }
}

/// The first frame: a JPEG of the whole screen (bounded).
fn first_frame(ws: &mut Socket) -> image::DynamicImage {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            Instant::now() < deadline,
            "no frame from the live page's socket"
        );
        if let Ok(Message::Binary(jpeg)) = ws.read() {
            return image::load_from_memory(&jpeg).expect("a frame decodes");
        }
    }
}

#[test]
fn a_person_records_7_times_6_by_clicking_in_the_live_page() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let session = common::Session::private();
    let mut recorder = LiveRecorder::calculator(&session, "live");
    let url = recorder.url.clone();
    let (host, path) = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap();
    let path = format!("/{path}");
    // The page: only at its token's path, only for its own Host.
    assert!(common::http_get(host, "/", host).starts_with("HTTP/1.1 403"));
    assert!(common::http_get(host, &path, "evil.example").starts_with("HTTP/1.1 403"));
    let ws_url = socket_url(&common::http_get(host, &path, host));

    let (mut ws, _) = tungstenite::connect(&ws_url).expect("the page's socket");
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
    }
    let frame = first_frame(&mut ws);
    assert_eq!((frame.width(), frame.height()), (1280, 800));
    // A second page is refused while this one records; so is a wrong token.
    let second = tungstenite::connect(&ws_url).unwrap_err().to_string();
    assert!(second.contains("409"), "{second}");
    let wrong = ws_url.replace(&path[1..33], "0123456789abcdef0123456789abcdef");
    let refused = tungstenite::connect(&wrong).unwrap_err().to_string();
    assert!(refused.contains("403"), "{refused}");

    // Where the calculator's buttons are on the screen, read through this test's own
    // session (the app's tree, not the recorder's).
    let (pid, window_id, elements) = calculator_window(&session);

    // A malformed event is answered by name, and records nothing.
    ws.send(Message::text(r#"{"kind":"click","x":3}"#)).unwrap();
    let bad = next_message(&mut ws);
    assert_eq!(bad["kind"], "error", "{bad}");
    assert!(bad["message"].as_str().unwrap().contains("`y`"), "{bad}");

    // Nothing to undo yet: the app's launch stays.
    ws.send(Message::text(r#"{"kind":"undo"}"#)).unwrap();
    let nothing = next_message(&mut ws);
    assert_eq!(nothing["kind"], "error", "{nothing}");
    assert!(
        nothing["message"].as_str().unwrap().contains("launch"),
        "{nothing}"
    );
    ws.send(Message::text(r#"{"kind":"inspect","x":"a"}"#))
        .unwrap();
    let bad = next_message(&mut ws);
    assert!(bad["message"].as_str().unwrap().contains("`x`"), "{bad}");

    for names in [
        &["7"][..],
        &["×", "Multiply"],
        &["6"],
        &["=", "Calculate result"],
    ] {
        let (x, y) = centre(&elements, names);
        ws.send(Message::text(
            json!({ "kind": "click", "x": x, "y": y }).to_string(),
        ))
        .unwrap();
        let turn = next_message(&mut ws);
        assert_eq!(turn["kind"], "turn", "{turn}");
        assert_eq!(turn["tool"], "click", "{turn}");
        assert!(
            turn["target"].as_str().unwrap().starts_with("button \""),
            "{turn}"
        );
    }
    // The calculator itself shows the product.
    calculator_shows(&session, &pid, &window_id, "42");

    // Save as scenario; the name is then taken.
    let save = json!({ "kind": "save", "name": "calc-live" }).to_string();
    ws.send(Message::text(save.clone())).unwrap();
    let saved = next_message(&mut ws);
    assert_eq!(saved["kind"], "saved", "{saved}");
    ws.send(Message::text(save)).unwrap();
    let taken = next_message(&mut ws);
    assert!(
        taken["message"]
            .as_str()
            .unwrap()
            .contains("exists already"),
        "{taken}"
    );

    // The app exits: the page is told, and the recording ends, complete on disk.
    session.ok("kill_app", json!({ "pid": pid }));
    let ended = next_message(&mut ws);
    assert_eq!(ended["kind"], "ended", "{ended}");
    assert!(
        ended["reason"].as_str().unwrap().contains("exited"),
        "{ended}"
    );
    recorder.exits("when the app exited");
    let actions = recorder.actions();
    assert_eq!(actions.len(), 5, "{actions:?}");
    assert_eq!(actions[0]["tool"], "launch_app");
    for a in &actions[1..] {
        assert_eq!(a["tool"], "click", "{a}");
        assert!(a["arguments"]["element_index"].is_u64(), "{a}");
        assert_eq!(a["target"]["role"], "button", "{a}");
    }
    assert!(recorder.dir.join("session.json").is_file());

    // The saved scenario: its first run is the golden, its second passes against it.
    recorder.cua_test("calc-live", &["--update"]);
    assert!(recorder.root.join("goldens/calc-live").is_dir());
    recorder.cua_test("calc-live", &[]);
    let _ = std::fs::remove_dir_all(&recorder.root);
}

/// Sends `event` and waits for its turn's line, which must be `tool`'s.
fn turn(ws: &mut Socket, event: Value, tool: &str) -> Value {
    ws.send(Message::text(event.to_string())).unwrap();
    let line = next_message(ws);
    assert_eq!(line["kind"], "turn", "{event}: {line}");
    assert_eq!(line["tool"], tool, "{event}: {line}");
    line
}

#[test]
fn every_kind_of_page_input_reaches_the_gtk3_fixture_as_its_recorded_tool() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let session = common::Session::private();
    let journal =
        std::env::temp_dir().join(format!("cua-live-journal-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&journal);
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/harness/apps/fixture.py");
    let mut recorder = LiveRecorder::start(
        &session,
        "live-fixture",
        fixture,
        &[("CUA_FIXTURE_JOURNAL", journal.as_path())],
    );
    let mut ws = connect(&recorder.url);
    let (pid, window) = common::live::window_titled(&session, "cua fixture");
    let elements = session.state(&pid, &window)["elements"]
        .as_array()
        .unwrap()
        .clone();
    // The centre of an element (screen points), and its width and height.
    let at = |role: &str, name: &str| -> (f64, f64, f64, f64) {
        let e = elements
            .iter()
            .find(|e| e["role"] == role && e["name"].as_str().is_some_and(|n| n.starts_with(name)))
            .unwrap_or_else(|| panic!("no {role} {name:?}: {elements:?}"));
        let f = &e["frame"];
        let n = |k: &str| f[k].as_f64().unwrap();
        (n("x") + n("w") / 2.0, n("y") + n("h") / 2.0, n("w"), n("h"))
    };
    let events = |event: &str| -> Vec<Value> {
        common::journal(&journal)
            .into_iter()
            .filter(|e| e["event"] == event)
            .collect()
    };
    let journalled = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(
                Instant::now() < deadline,
                "the fixture never journalled {what}: {:?}",
                common::journal(&journal)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };

    // Above Increment, on the counter's label: no element, so by point.
    let (x, y, w, _) = at("button", "Increment");
    let (x, y) = (x - w / 2.0 + 10.0, y - 30.0);
    turn(
        &mut ws,
        json!({ "kind": "click", "x": x, "y": y, "button": "right" }),
        "right_click",
    );
    journalled("a right button press", &|| {
        events("button-press").iter().any(|e| e["button"] == 3)
    });

    let (x, y, _, _) = at("button", "Increment");
    turn(
        &mut ws,
        json!({ "kind": "click", "x": x, "y": y, "count": 2 }),
        "double_click",
    );
    journalled("two increments", &|| events("clicked").len() == 2);

    let (x, y, _, _) = at("text", "Name");
    turn(&mut ws, json!({ "kind": "click", "x": x, "y": y }), "click");
    turn(
        &mut ws,
        json!({ "kind": "type", "text": "cua" }),
        "type_text",
    );
    journalled("the typed name", &|| {
        events("changed").last().is_some_and(|e| e["text"] == "cua")
    });
    turn(
        &mut ws,
        json!({ "kind": "key", "key": "a", "modifiers": ["ctrl"] }),
        "press_key",
    );
    journalled("the key", &|| {
        events("key-press").iter().any(|e| e["key"] == "a")
    });

    // A drag from the slider's handle (at 0, the left end) to the middle, then the wheel.
    let (x, y, w, _) = at("slider", "Level");
    turn(
        &mut ws,
        json!({ "kind": "drag", "x": x - w / 2.0 + 6.0, "y": y, "to_x": x, "to_y": y }),
        "drag",
    );
    journalled("the drag's change", &|| {
        events("value-changed")
            .iter()
            .any(|e| e["value"].as_f64() > Some(0.0))
    });
    let moved = events("value-changed").len();
    turn(
        &mut ws,
        json!({ "kind": "scroll", "x": x, "y": y, "direction": "up", "amount": 2 }),
        "scroll",
    );
    journalled("the wheel's change", &|| {
        events("value-changed").len() > moved
    });

    drop(ws);
    recorder.interrupt();
    let tools = recorder.tools();
    assert_eq!(
        tools,
        [
            "launch_app",
            "right_click",
            "double_click",
            "click",
            "type_text",
            "press_key",
            "drag",
            "scroll"
        ]
    );
    let _ = std::fs::remove_dir_all(&recorder.root);
    let _ = std::fs::remove_file(&journal);
}

/// Whether a window titled Calculator is on `session`'s desktop now.
fn calculator_open(session: &common::Session) -> bool {
    let windows = session.ok("list_windows", json!({}));
    windows["windows"].as_array().unwrap().iter().any(|w| {
        w["title"]
            .as_str()
            .is_some_and(|t| t.contains("Calculator"))
    })
}

/// #55 item 7: Ctrl-C stops the app the recorder launched (a replay in the same sandbox
/// reattached to it), unless `--keep-app`; without `--display`, the recorder starts a
/// sandbox of its own even while others run (it refused with two running).
#[test]
fn ctrl_c_stops_the_recorded_app_and_without_display_the_recorder_has_its_own_sandbox() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let session = common::Session::private();
    let mut recorder = LiveRecorder::calculator(&session, "live-cleanup");
    calculator_window(&session);
    recorder.interrupt();
    assert_eq!(recorder.tools(), ["launch_app"]);
    assert!(
        !calculator_open(&session),
        "the recorded calculator is still open after Ctrl-C"
    );
    let _ = std::fs::remove_dir_all(&recorder.root);

    let display = session.sandbox().display().to_string();
    let mut recorder = LiveRecorder::with_flags(
        "live-keep",
        "Calculator",
        &[],
        &["--display", &display, "--keep-app"],
    );
    calculator_window(&session);
    recorder.interrupt();
    assert!(
        calculator_open(&session),
        "--keep-app stopped the calculator"
    );
    let _ = std::fs::remove_dir_all(&recorder.root);

    // Two sandboxes run (this session's and another); the recorder starts its own, and
    // nothing shows on the other two.
    let other = common::Session::private();
    let mut recorder = LiveRecorder::with_flags("live-own", "Calculator", &[], &[]);
    recorder.interrupt();
    assert_eq!(recorder.tools(), ["launch_app"]);
    assert!(
        !calculator_open(&other),
        "the recorder used another sandbox"
    );
    let _ = std::fs::remove_dir_all(&recorder.root);
}
