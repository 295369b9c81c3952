//! Chromium web content in the sandbox: the page's accessibility tree is read and its
//! frames land on the rendered elements.

mod common;

use std::time::{Duration, Instant};

use common::{Image, frame, runtime};
use cua::sandbox::{Sandbox, SandboxOptions};
use cua::tools::{ToolContext, ToolRegistry};
use serde_json::json;

#[test]
fn chromium_page_elements_have_frames_on_the_rendered_widgets() {
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
