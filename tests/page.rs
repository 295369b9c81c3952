//! The `page` tool in real browsers, Chromium then Firefox (one at a time, in a binary of
//! its own): get_text and query_dom read the project's test page, execute_javascript
//! changes it and the change is read back through the page's accessibility tree, a thrown
//! exception is an error with its message, and only execute_javascript is a recorded turn.

mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[test]
fn page_reads_and_runs_javascript_in_chromium_and_firefox() {
    for browser in ["chromium", "firefox-esr"] {
        page_in(browser);
    }
}

fn page_in(browser: &str) {
    let session = common::Session::private();
    let url = concat!(
        "file://",
        env!("CARGO_MANIFEST_DIR"),
        "/harness/apps/page.html"
    );
    let launched = session
        .call("launch_app", json!({ "name": browser, "urls": [url] }))
        .unwrap_or_else(|e| panic!("{browser} launches: {e}"));
    let app = common::App::launched(&launched);
    let page = |action: Value| {
        let mut args = json!({ "pid": app.pid, "window_id": app.window_id });
        args.as_object_mut()
            .unwrap()
            .extend(action.as_object().unwrap().clone());
        session.call("page", args)
    };

    // The page loads after the window maps: its text shows once it has.
    let deadline = Instant::now() + Duration::from_secs(30);
    let text = loop {
        let got = page(json!({ "action": "get_text" }));
        if let Ok(out) = &got {
            let text = out.structured["text"].as_str().unwrap_or_default();
            if text.contains("not clicked") {
                break text.to_string();
            }
        }
        assert!(
            Instant::now() < deadline,
            "{browser}: the test page's text never came: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        text.contains("cua test page") && text.contains("Name"),
        "{browser}: {text}"
    );

    let found = page(
        json!({ "action": "query_dom", "css_selector": "button, input",
                             "attributes": ["id", "value", "data-missing"] }),
    )
    .unwrap_or_else(|e| panic!("{browser} query_dom: {e}"));
    let elements = found.structured["elements"].as_array().unwrap();
    assert_eq!(elements.len(), 2, "{browser}: {}", found.structured);
    assert_eq!(elements[0]["tag"], "button");
    assert_eq!(elements[0]["text"], "Go");
    assert_eq!(elements[0]["attributes"]["id"], "go");
    assert_eq!(elements[0]["attributes"]["data-missing"], Value::Null);
    assert_eq!(elements[1]["tag"], "input");
    assert_eq!(elements[1]["attributes"]["value"], "Ada");

    let bad = page(json!({ "action": "query_dom", "css_selector": "[[[" })).unwrap_err();
    assert!(
        bad.to_string().contains("the script threw"),
        "{browser}: {bad}"
    );
    let thrown = page(json!({ "action": "execute_javascript",
                              "javascript": "throw new Error('boom ' + (6 * 7))" }))
    .unwrap_err();
    assert!(
        thrown.to_string().contains("boom 42"),
        "{browser}: {thrown}"
    );

    // Recorded: the script is a turn, the reads are not.
    let dir = std::env::temp_dir().join(format!("cua-page-{browser}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    session
        .call(
            "set_recording",
            json!({ "enabled": true, "output_dir": dir }),
        )
        .unwrap();
    page(json!({ "action": "get_text" })).unwrap();
    let ran = page(json!({
        "action": "execute_javascript",
        "javascript": "document.getElementById('out').textContent = 'set by script'; ({ sum: 6 * 7, list: [1, 'a', null] })"
    }))
    .unwrap_or_else(|e| panic!("{browser} execute_javascript: {e}"));
    session
        .call("set_recording", json!({ "enabled": false }))
        .unwrap();
    assert_eq!(
        ran.structured["result"],
        json!({ "sum": 42, "list": [1, "a", null] }),
        "{browser}"
    );
    let turns: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("turn-"))
        .collect();
    assert_eq!(turns, vec!["turn-00001"], "{browser}");
    let action: Value =
        serde_json::from_slice(&std::fs::read(dir.join("turn-00001/action.json")).unwrap())
            .unwrap();
    assert_eq!(action["tool"], "page", "{browser}");
    assert_eq!(
        action["arguments"]["action"], "execute_javascript",
        "{browser}"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // The change, through the browser's own accessibility tree.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let state = session
            .call(
                "get_window_state",
                json!({ "pid": app.pid, "window_id": app.window_id, "include_screenshot": false }),
            )
            .unwrap();
        let tree = state.structured["tree_markdown"]
            .as_str()
            .unwrap_or_default();
        if tree.contains("set by script") {
            assert!(!tree.contains("not clicked"), "{browser}: {tree}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{browser}: the tree never showed the script's change:\n{tree}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // A process that is no browser says so.
    let calc = session
        .call("launch_app", json!({ "name": "mousepad" }))
        .expect("mousepad launches");
    let calc = common::App::launched(&calc);
    let refused = session
        .call(
            "page",
            json!({ "action": "get_text", "pid": calc.pid, "window_id": calc.window_id }),
        )
        .unwrap_err();
    assert!(refused.to_string().contains("not a browser"), "{refused}");
}

/// A browser started without the endpoint (here: a debugging flag of the caller's own,
/// which launch_app leaves alone, and no port) gets an error
/// that says how to relaunch it.
#[test]
fn a_browser_without_an_endpoint_is_told_how_to_relaunch() {
    let session = common::Session::private();
    let launched = session
        .call(
            "launch_app",
            json!({ "name": "chromium", "urls": ["about:blank"],
                    "additional_arguments": ["--remote-debugging-address=127.0.0.1"] }),
        )
        .expect("chromium launches");
    let app = common::App::launched(&launched);
    let err = session
        .call(
            "page",
            json!({ "action": "get_text", "pid": app.pid, "window_id": app.window_id }),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("launch it through launch_app"),
        "{err}"
    );
}
