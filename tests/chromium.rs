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

/// `cua golden review --web` in a real browser: Chromium opens the served report, its
/// "Accept turn 4" button is clicked, and the golden on disk takes the new turn; "Reject
/// turn 5" keeps the golden's turn, the pending golden goes and the server stops. The
/// server answers nothing without its token, for another Host, or outside the report.
#[test]
fn web_review_in_chromium_accepts_and_rejects_turns_into_the_golden_on_disk() {
    let dir = std::env::temp_dir().join(format!("cua-web-review-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let goldens = dir.join("goldens");
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("goldens/fixture");
    copy_dir(&shipped, &goldens.join("fixture"));
    let pending = goldens.join("fixture.new");
    copy_dir(&shipped, &pending);
    for turn in ["turn-00004", "turn-00005"] {
        let path = pending.join(turn).join("app_state.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("Count: 2"), "{turn}");
        std::fs::write(&path, text.replace("Count: 2", "Sum: 2")).unwrap();
    }
    let state = |turn: &str, of: &std::path::Path| {
        std::fs::read_to_string(of.join(turn).join("app_state.json")).unwrap()
    };

    // Under CI the review is refused before anything listens.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["golden", "review", "--web", "--goldens"])
        .arg(&goldens)
        .env("CI", "true")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("CI is set"));

    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["golden", "review", "--web", "--goldens"])
        .arg(&goldens)
        .arg("--harness")
        .arg(dir.join("harness"))
        .env_remove("CI")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    let url = first
        .trim()
        .strip_prefix("review in the browser: ")
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    let (host, token_path) = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap();
    // Nothing without the token, for another Host, or outside the report.
    assert!(http_get(host, "/", host).starts_with("HTTP/1.1 404"));
    assert!(http_get(host, &format!("/{token_path}"), "evil.example").starts_with("HTTP/1.1 403"));
    assert!(
        http_get(host, &format!("/{token_path}../../etc/passwd"), host).starts_with("HTTP/1.1 404")
    );
    assert!(http_get(host, &format!("/{token_path}"), host).starts_with("HTTP/1.1 200"));

    let session = common::Session::private();
    let launched = session
        .call("launch_app", json!({ "name": "chromium", "urls": [url] }))
        .expect("chromium launches");
    let app = common::App::launched(&launched);
    // Clicks button `name` once the page shows no button `gone` (the reloaded page).
    let click_button = |name: &str, gone: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let tree = session
                .call(
                    "get_window_state",
                    json!({ "pid": app.pid, "window_id": app.window_id }),
                )
                .expect("get_window_state");
            let elements = common::elements(&tree);
            let button = |n: &str| {
                elements
                    .iter()
                    .find(|e| e["role"] == "button" && e["name"] == n)
            };
            if let (Some(b), None) = (button(name), button(gone)) {
                session
                    .call(
                        "click",
                        json!({ "pid": app.pid, "window_id": app.window_id,
                                "element_index": b["index"] }),
                    )
                    .unwrap_or_else(|e| panic!("click {name}: {e}"));
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no button {name:?}:\n{}",
                tree.structured["tree_markdown"]
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };

    click_button("Accept turn 4", "none");
    wait_for("accepting turn 4 writes it into the golden", &|| {
        state("turn-00004", &goldens.join("fixture")).contains("Sum: 2")
    });
    assert!(pending.is_dir(), "turn 5 is still undecided");
    // The page reloads with what is left: only turn 5 has buttons now.
    click_button("Reject turn 5", "Accept turn 4");
    wait_for(
        "rejecting the last turn removes the pending golden",
        &|| !pending.exists(),
    );
    assert!(state("turn-00005", &goldens.join("fixture")).contains("Count: 2"));
    // The reloaded page says nothing is left, and the server stops by itself.
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the review server did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A raw HTTP/1.1 GET with the given Host header; the whole reply.
fn http_get(addr: &str, path: &str, host: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}
