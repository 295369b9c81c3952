//! `cua golden review --web` in real browsers, Chromium then Firefox, in a binary of its
//! own, so that no other browser starts beside them on two cores.

mod common;

use std::time::{Duration, Instant};

use serde_json::json;

/// `cua golden review --web` in a real browser: the browser opens the served report, its
/// "Accept turn 4" button is clicked, and the golden on disk takes the new turn; "Reject
/// turn 5" keeps the golden's turn, the pending golden goes and the server stops. The
/// server answers nothing without its token, for another Host, or outside the report.
/// Then the same in Firefox, whose page tree is built lazily. One browser at a time.
#[test]
fn web_review_in_chromium_and_firefox_accepts_and_rejects_turns_into_the_golden_on_disk() {
    web_review_in("chromium");
    web_review_in("firefox-esr");
}

fn web_review_in(browser: &str) {
    let dir = std::env::temp_dir().join(format!("cua-web-review-{browser}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let goldens = dir.join("goldens");
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("goldens/fixture");
    common::copy_dir(&shipped, &goldens.join("fixture"));
    let pending = goldens.join("fixture.new");
    common::copy_dir(&shipped, &pending);
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

    let server = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .args(["golden", "review", "--web", "--goldens"])
        .arg(&goldens)
        .arg("--harness")
        .arg(dir.join("harness"))
        .env_remove("CI")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = common::KillOnDrop(server);
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.0.stdout.take().unwrap()),
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
    assert!(common::http_get(host, "/", host).starts_with("HTTP/1.1 404"));
    assert!(
        common::http_get(host, &format!("/{token_path}"), "evil.example")
            .starts_with("HTTP/1.1 403")
    );
    assert!(
        common::http_get(host, &format!("/{token_path}../../etc/passwd"), host)
            .starts_with("HTTP/1.1 404")
    );
    assert!(common::http_get(host, &format!("/{token_path}"), host).starts_with("HTTP/1.1 200"));

    let session = common::Session::private();
    // Chromium's first window has no fixed size: in 2 runs of 10 it was small enough that
    // the turns' buttons and links were outside it (and so outside the tree) for 30 s.
    let mut launch = json!({ "name": browser, "urls": [url] });
    if browser == "chromium" {
        launch["additional_arguments"] = json!(["--window-size=1280,800", "--window-position=0,0"]);
    }
    let launched = session
        .call("launch_app", launch)
        .unwrap_or_else(|e| panic!("{browser} launches: {e}"));
    let app = common::App::launched(&launched);
    // Clicks button `name` once the page shows no button `gone` (the reloaded page). A
    // button below the fold is not in the tree: as a reviewer would, follow the film
    // strip's link to the turn (`jump`), which scrolls its buttons into view.
    let click_button = |name: &str, gone: &str, jump: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut attempts: Vec<String> = Vec::new();
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
                                "element_index": b["element_index"] }),
                    )
                    .unwrap_or_else(|e| panic!("click {name}: {e}"));
                return;
            }
            let link = elements.iter().find(|e| {
                e["role"] == "link" && e["name"].as_str().is_some_and(|n| n.starts_with(jump))
            });
            match (link, button(gone)) {
                (Some(link), None) => {
                    session
                        .call(
                            "click",
                            json!({ "pid": app.pid, "window_id": app.window_id,
                                    "element_index": link["element_index"] }),
                        )
                        .unwrap_or_else(|e| panic!("follow {jump}: {e}"));
                }
                // Neither the button nor its link shows (once in a suite run the window
                // showed the film strip up to turn 2 only, once up to turn 1): scroll down,
                // as a reviewer would, with the wheel and then with End, and look again.
                // What each attempt answered goes into the failure message.
                (None, None) => {
                    let bounds = &session
                        .call("list_windows", json!({ "pid": app.pid }))
                        .expect("list_windows")
                        .structured["windows"][0]["bounds"];
                    let (w, h) = (
                        bounds["width"].as_i64().unwrap_or(800),
                        bounds["height"].as_i64().unwrap_or(600),
                    );
                    let (tool, args) = if attempts.len() % 2 == 0 {
                        (
                            "scroll",
                            json!({ "pid": app.pid, "window_id": app.window_id,
                            "x": w / 2, "y": h * 2 / 3, "direction": "down", "amount": 3 }),
                        )
                    } else {
                        (
                            "press_key",
                            json!({ "pid": app.pid, "window_id": app.window_id,
                            "key": "End" }),
                        )
                    };
                    let answer = match session.call(tool, args) {
                        Ok(r) => format!("{}", r.structured),
                        Err(e) => format!("error: {e}"),
                    };
                    attempts.push(format!("{tool} in a {w}x{h} window: {answer}"));
                }
                _ => {}
            }
            if Instant::now() >= deadline {
                let fresh = session
                    .fresh_call(
                        "get_window_state",
                        json!({ "pid": app.pid, "window_id": app.window_id }),
                    )
                    .map(|t| t.structured["tree_markdown"].to_string())
                    .unwrap_or_else(|e| e.to_string());
                let page = elements
                    .iter()
                    .find(|e| e["role"] == "document_web")
                    .map(|e| e["frame"].to_string());
                panic!(
                    "no button {name:?}:\n{}\nfresh context:\n{fresh}\nthe page's frame: {page:?}\nthe last attempts to scroll:\n{}",
                    tree.structured["tree_markdown"],
                    attempts[attempts.len().saturating_sub(4)..].join("\n")
                );
            }
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

    click_button("Accept turn 4", "none", "turn 4");
    wait_for("accepting turn 4 writes it into the golden", &|| {
        state("turn-00004", &goldens.join("fixture")).contains("Sum: 2")
    });
    assert!(pending.is_dir(), "turn 5 is still undecided");
    // The page reloads with what is left: only turn 5 has buttons now.
    click_button("Reject turn 5", "Accept turn 4", "turn 5");
    wait_for(
        "rejecting the last turn removes the pending golden",
        &|| !pending.exists(),
    );
    assert!(state("turn-00005", &goldens.join("fixture")).contains("Count: 2"));
    // The reloaded page says nothing is left, and the server stops by itself.
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the review server did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
