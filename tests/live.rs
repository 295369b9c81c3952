//! `cua record --live`: recording by doing. cua launches the calculator in a sandbox and
//! serves the live page; this test is the page's other end (its WebSocket): it gets the
//! screen's frames, clicks 7 × 6 = where the calculator's buttons are on the screen, and
//! each click comes back as a recorded turn addressed by element. The calculator's own tree
//! shows 42; the turn folders hold the flow. "Save as scenario" writes a scenario of it, and
//! `cua test` makes its golden and then passes against it. A second page, a wrong token,
//! another Host, a malformed event and a scenario name taken are refused by name.

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::Message;

type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

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

/// The centre, in screen points, of the calculator's button named one of `names`.
fn centre(elements: &[Value], names: &[&str], tree: &str) -> (f64, f64) {
    let e = elements
        .iter()
        .find(|e| e["role"] == "button" && names.iter().any(|n| e["name"] == *n))
        .unwrap_or_else(|| panic!("no button {names:?}:\n{tree}"));
    let f = &e["frame"];
    let at = |k: &str| f[k].as_f64().unwrap();
    (at("x") + at("w") / 2.0, at("y") + at("h") / 2.0)
}

#[test]
fn a_person_records_7_times_6_by_clicking_in_the_live_page() {
    let session = common::Session::private();
    let root = std::env::temp_dir().join(format!("cua-live-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("trajectories/calc");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["record", "--live"])
        .arg(&dir)
        .args(["--app", "Calculator", "--display"])
        .arg(session.sandbox().display().to_string())
        .arg("--harness")
        .arg(root.join("harness"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut recorder = common::KillOnDrop(child);
    let mut first = String::new();
    BufReader::new(recorder.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .trim()
        .strip_prefix("record by doing in the browser: ")
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    let (host, path) = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap();
    let path = format!("/{path}");
    // The page: only at its token's path, only for its own Host.
    assert!(common::http_get(host, "/", host).starts_with("HTTP/1.1 404"));
    assert!(common::http_get(host, &path, "evil.example").starts_with("HTTP/1.1 403"));
    let page = common::http_get(host, &path, host);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let ws_url = page
        .split("new WebSocket(`ws://${location.hostname}:")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .map(|rest| format!("ws://127.0.0.1:{rest}"))
        .expect("the page names its socket");

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
    assert!(refused.contains("404"), "{refused}");

    // Where the calculator's buttons are on the screen, read through this test's own
    // session (the app's tree, not the recorder's).
    let deadline = Instant::now() + Duration::from_secs(30);
    let (pid, window_id) = loop {
        let windows = session.ok("list_windows", json!({}));
        let calc = windows["windows"].as_array().unwrap().iter().find(|w| {
            w["title"]
                .as_str()
                .is_some_and(|t| t.contains("Calculator"))
        });
        if let Some(w) = calc {
            break (w["pid"].as_u64().unwrap(), w["window_id"].as_u64().unwrap());
        }
        assert!(Instant::now() < deadline, "no calculator window: {windows}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let state = session.ok(
        "get_window_state",
        json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
    );
    let elements = state["elements"].as_array().unwrap().clone();
    let tree = state["tree_markdown"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    // A malformed event is answered by name, and records nothing.
    ws.send(Message::text(r#"{"kind":"click","x":3}"#)).unwrap();
    let bad = next_message(&mut ws);
    assert_eq!(bad["kind"], "error", "{bad}");
    assert!(bad["message"].as_str().unwrap().contains("`y`"), "{bad}");

    for names in [
        &["7"][..],
        &["×", "Multiply"],
        &["6"],
        &["=", "Calculate result"],
    ] {
        let (x, y) = centre(&elements, names, &tree);
        ws.send(Message::text(
            json!({ "kind": "click", "x": x, "y": y }).to_string(),
        ))
        .unwrap();
        let turn = next_message(&mut ws);
        assert_eq!(turn["kind"], "turn", "{turn}");
        assert_eq!(turn["tool"], "click", "{turn}");
        assert!(
            turn["target"].as_str().unwrap().starts_with("element ["),
            "{turn}"
        );
    }
    // The calculator itself shows the product.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let md = session.ok(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
        )["tree_markdown"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        // The result field, not an element index [42].
        if md.contains("text value=\"42\"") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the calculator never showed 42:\n{md}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

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

    // The page goes; Ctrl-C ends the recording, which is complete on disk.
    drop(ws);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(recorder.0.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = recorder.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "cua record --live did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
    let turns = cua::replay::turn_dirs(&dir).unwrap();
    assert_eq!(turns.len(), 5, "{turns:?}");
    let action = |n: usize| -> Value {
        serde_json::from_slice(&std::fs::read(turns[n].1.join("action.json")).unwrap()).unwrap()
    };
    assert_eq!(action(0)["tool"], "launch_app");
    for n in 1..5 {
        let a = action(n);
        assert_eq!(a["tool"], "click", "{a}");
        assert!(a["arguments"]["element_index"].is_u64(), "{a}");
        assert_eq!(a["target"]["role"], "button", "{a}");
    }
    assert!(dir.join("session.json").is_file());

    // The saved scenario: its first run is the golden, its second passes against it.
    let cua_test = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
            .current_dir(&root)
            .args([
                "test",
                "calc-live",
                "--harness",
                "harness",
                "--goldens",
                "goldens",
            ])
            .args(extra)
            .env_remove("CI")
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "cua test {extra:?}:\n{said}");
    };
    cua_test(&["--update"]);
    assert!(root.join("goldens/calc-live").is_dir());
    cua_test(&[]);
    let _ = std::fs::remove_dir_all(&root);
}
