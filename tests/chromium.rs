//! Chromium web content in the sandbox: the page's accessibility tree is read and its
//! frames land on the rendered elements; a click whose effect lands out of view is still
//! seen. One browser at a time.

mod common;

use std::time::{Duration, Instant};

use common::{Image, frame, runtime};
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::json;

/// Two Chromiums side by side on two cores would slow each other past their bounds.
static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn chromium_page_elements_have_frames_on_the_rendered_widgets() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        ..Default::default()
    })
    .expect("sandbox");
    let rt = runtime();
    let ctx = ToolContext::for_desktop(sandbox.desktop());
    let registry = ToolRegistry::new();
    let page = concat!(
        "file://",
        env!("CARGO_MANIFEST_DIR"),
        "/harness/apps/page.html"
    );
    let launched = rt
        .block_on(registry.call(
            &ctx,
            "launch_app",
            json!({ "name": "chromium", "urls": [page] }),
        ))
        .expect("chromium launches");
    let pid = launched.structured["pid"].as_u64().unwrap();
    let window = launched.structured["windows"][0]["window_id"]
        .as_u64()
        .unwrap();

    // The page loads after the window maps, and paints a moment after its tree exists:
    // poll until a snapshot shows Go in its tree and its frame on Go's red pixels. A wrong
    // frame mapping never gets there.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let state = rt
            .block_on(registry.call(
                &ctx,
                "get_window_state",
                json!({ "pid": pid, "window_id": window }),
            ))
            .expect("get_window_state");
        let go = state.structured["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == "button" && e["name"] == "Go")
            .cloned();
        let verdict = match &go {
            None => Err("no Go button in the tree yet".to_string()),
            Some(go) => check_go(&Image::decode(&state.image.as_ref().unwrap().data), go),
        };
        match verdict {
            Ok(()) => {
                let md = state.structured["tree_markdown"].as_str().unwrap();
                assert!(md.contains("entry \"Name\" value=\"Ada\""), "{md}");
                return;
            }
            Err(why) if Instant::now() >= deadline => {
                panic!("{why}\n{}", state.structured["tree_markdown"]);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// A click whose only effect is a line appended below the fold of a long list (the page's
/// journal, 80 lines long) is confirmed: the line is in the tree, marked `(offscreen)`
/// (a walk once left out what was not showing, and the click was answered `no_change`).
/// Checked through the page's own DOM, not cua's reply alone.
#[test]
fn a_click_whose_line_lands_below_a_long_lists_fold_is_not_no_change() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let session = common::Session::private();
    let app = session.chromium_on("browser.html");
    let script = |javascript: &str| {
        session
            .call(
                "page",
                json!({ "action": "execute_javascript", "pid": app.pid,
                        "window_id": app.window_id, "javascript": javascript }),
            )
            .map(|r| r.structured["result"].clone())
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while script("typeof log").ok() != Some(json!("function")) {
        assert!(Instant::now() < deadline, "the page never loaded");
        std::thread::sleep(Duration::from_millis(200));
    }
    script("for (let i = 1; i <= 80; i++) log('line ' + i)").expect("the journal fills");
    // Wait until the tree shows the list's first line, and its last as scrolled out of
    // view: it overflows.
    let deadline = Instant::now() + Duration::from_secs(15);
    let go = loop {
        let state = session
            .call(
                "get_window_state",
                json!({ "pid": app.pid, "window_id": app.window_id, "include_screenshot": false }),
            )
            .expect("get_window_state");
        let md = state.structured["tree_markdown"].as_str().unwrap_or("");
        let go = common::elements(&state)
            .into_iter()
            .find(|e| e["role"] == "button" && e["name"] == "Go");
        let last_offscreen = md
            .lines()
            .any(|l| l.contains("line 80\"") && l.contains("(offscreen)"));
        if let (true, true, Some(go)) = (md.contains("line 1\""), last_offscreen, go) {
            break go;
        }
        assert!(
            Instant::now() < deadline,
            "the list never overflowed:\n{md}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let clicked = session
        .call(
            "click",
            json!({ "pid": app.pid, "window_id": app.window_id,
                    "element_index": go["element_index"] }),
        )
        .expect("click Go");
    let journal = script("[...document.querySelectorAll('#log li')].map(l => l.textContent)")
        .expect("the journal reads");
    let lines = journal.as_array().expect("a list of lines");
    assert_eq!(lines.len(), 81, "{journal}");
    assert_eq!(lines[80], "clicked go", "{journal}");
    assert_eq!(
        clicked.structured["effect"], "confirmed",
        "{}",
        clicked.summary
    );
}

/// #go is painted solid red (#e01b24): its frame must sit on it, not beside it.
fn check_go(shot: &Image, go: &serde_json::Value) -> Result<(), String> {
    let (x, y, w, h) = frame(go);
    for (px, py) in [
        (x + w / 2, y + h / 2),
        (x + 3, y + 3),
        (x + w - 4, y + h - 4),
    ] {
        let [r, g, b] = shot.pixel(px, py);
        if !(r > 200 && g < 60 && b < 70) {
            return Err(format!(
                "pixel ({px}, {py}) in Go's frame is {:?}",
                (r, g, b)
            ));
        }
    }
    let [r, g, b] = shot.pixel(x + w + 6, y + h / 2);
    if !(r > 200 && g > 200 && b > 200) {
        return Err(format!(
            "right of Go's frame should be page background, is {:?}",
            (r, g, b)
        ));
    }
    Ok(())
}
