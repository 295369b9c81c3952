//! The `page` tool in real browsers, Chromium then Firefox (one at a time, in a binary of
//! its own): get_text and query_dom read the project's test page, execute_javascript
//! changes it and the change is read back through the page's accessibility tree, a thrown
//! exception is an error with its message, and only execute_javascript is a recorded turn.
//! Both browsers are started by the page relay, which serves their endpoint on a socket no
//! other user can open: Chromium's a pipe (no TCP port; clients kept apart on it),
//! Firefox's the one WebDriver BiDi session its port allows, held by the relay.

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

    // Where the endpoint is: behind the relay's socket. Chromium's a pipe; Firefox's a
    // loopback port (it has no pipe for WebDriver BiDi), which also shows the port scan
    // finds one, whose one session the relay holds.
    let ports = listening_tcp_ports_of_group(app.pid);
    let socket = relay_serves_this_user_alone(app.pid);
    if browser == "chromium" {
        assert!(ports.is_empty(), "Chromium listens on TCP: {ports:?}");
        clients_share_the_pipe(&socket);
    } else {
        assert!(
            !ports.is_empty(),
            "{browser}: the scan found no listening port"
        );
        the_port_opens_no_second_session(app.pid);
    }

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
    // The tab chosen by its URL instead of the window's title.
    let by_url = page(json!({ "action": "get_text", "target_url_contains": "apps/page.html" }))
        .unwrap_or_else(|e| panic!("{browser}: {e}"));
    assert_eq!(by_url.structured["text"], text.as_str(), "{browser}");
    let none = page(json!({ "action": "get_text", "target_url_contains": "nowhere" }));
    assert!(
        matches!(&none, Err(e) if e.to_string().contains("0 tabs")),
        "{browser}: {none:?}"
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
    let tree = tree_showing(&session, &app, browser, "the script's change", |t| {
        t.contains("set by script")
    });
    assert!(!tree.contains("not clicked"), "{browser}: {tree}");

    // click_element clicks by selector and insert_text types where the page's focus is,
    // both read back through the browser's own tree.
    let clicked = page(json!({ "action": "click_element", "selector": "#go" }))
        .unwrap_or_else(|e| panic!("{browser} click_element: {e}"));
    assert_eq!(clicked.structured["element"]["tag"], "button", "{browser}");
    let missing = page(json!({ "action": "click_element", "selector": "#nope" })).unwrap_err();
    assert!(
        missing.to_string().contains("no element matches"),
        "{browser}: {missing}"
    );
    page(json!({ "action": "execute_javascript",
                 "javascript": "const n = document.getElementById('name'); n.focus(); n.select(); true" }))
    .unwrap();
    let inserted = page(json!({ "action": "insert_text", "text": "Grace" }))
        .unwrap_or_else(|e| panic!("{browser} insert_text: {e}"));
    assert_eq!(
        inserted.structured["element"]["value"], "Grace",
        "{browser}"
    );
    tree_showing(&session, &app, browser, "the click and the text", |t| {
        t.contains("\"clicked\"") && t.contains("Grace")
    });
    let keys = page(json!({ "action": "type_keystrokes", "text": "x" })).unwrap_err();
    assert!(keys.to_string().contains("type_text"), "{browser}: {keys}");

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

/// The window's tree once it shows what `shows` accepts (read through get_window_state,
/// at most 15 s); `what` names it when it never does.
fn tree_showing(
    session: &common::Session,
    app: &common::App,
    browser: &str,
    what: &str,
    shows: impl Fn(&str) -> bool,
) -> String {
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
            .unwrap_or_default()
            .to_string();
        if shows(&tree) {
            return tree;
        }
        assert!(
            Instant::now() < deadline,
            "{browser}: the tree never showed {what}:\n{tree}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
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

/// TCP ports on which some process of `pid`'s process group listens (from /proc: the
/// group's socket inodes against the kernel's LISTEN sockets).
fn listening_tcp_ports_of_group(pid: u64) -> Vec<u16> {
    let group_of = |p: &str| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        stat[stat.rfind(')')? + 2..]
            .split_whitespace()
            .nth(2)?
            .parse()
            .ok()
    };
    let group = group_of(&pid.to_string()).expect("the browser's process group");
    let mut inodes = std::collections::HashSet::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = entry.file_name().to_string_lossy().into_owned();
        if group_of(&p) != Some(group) {
            continue;
        }
        for fd in std::fs::read_dir(format!("/proc/{p}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let link = std::fs::read_link(fd.path()).unwrap_or_default();
            let link = link.to_string_lossy();
            if let Some(inode) = link
                .strip_prefix("socket:[")
                .and_then(|l| l.strip_suffix(']'))
            {
                inodes.insert(inode.to_string());
            }
        }
    }
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table)
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address, state 0A (LISTEN), inode.
            if f.len() > 9 && f[3] == "0A" && inodes.contains(f[9]) {
                let port = f[1].rsplit(':').next().unwrap();
                ports.push(u16::from_str_radix(port, 16).unwrap());
            }
        }
    }
    ports
}

/// The browser's parent is the relay, whose socket is this user's, 0600 in a 0700
/// folder, and refused to another user. The socket.
fn relay_serves_this_user_alone(browser: u64) -> std::path::PathBuf {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    let stat = std::fs::read_to_string(format!("/proc/{browser}/stat")).unwrap();
    let relay: u32 = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let exe = std::fs::read_link(format!("/proc/{relay}/exe")).unwrap();
    assert!(
        exe.ends_with("cua-page-relay"),
        "the browser's parent is {exe:?}"
    );
    let socket = cua::web::relay::socket_path(&cua::web::relay::socket_dir(), relay);
    let meta = std::fs::metadata(&socket).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{socket:?}");
    assert_eq!(meta.uid(), nix_uid(), "{socket:?}");
    let dir = std::fs::metadata(socket.parent().unwrap()).unwrap();
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);

    // Another user (nobody) cannot connect; this one can, with the same probe.
    let probe = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({:?})\n    print('connected')\nexcept OSError as e:\n    print('refused', e)",
        socket.display().to_string()
    );
    let ours = std::process::Command::new("/usr/bin/python3")
        .args(["-c", &probe])
        .output()
        .expect("python3 runs");
    assert_eq!(String::from_utf8_lossy(&ours.stdout).trim(), "connected");
    let other = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            &probe,
        ])
        .output();
    match other {
        Ok(out) if out.status.success() => {
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(said.starts_with("refused"), "another user: {said}");
        }
        // Not root: this user cannot become another one to try.
        _ => eprintln!("skipped: another user's connect needs root (setpriv)"),
    }
    socket
}

/// Two clients using the same command ids at once each get their own replies; a client
/// that leaves attached is detached.
fn clients_share_the_pipe(socket: &std::path::Path) {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;

    let connect = || {
        let stream = UnixStream::connect(socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
    };
    let send = |stream: &mut UnixStream, message: Value| {
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        stream.write_all(&bytes).unwrap();
    };
    let reply = |stream: &UnixStream, id: u64| -> Value {
        let mut reader = BufReader::new(stream);
        loop {
            let mut bytes = Vec::new();
            reader.read_until(0, &mut bytes).unwrap();
            assert_eq!(bytes.pop(), Some(0), "the relay closed the connection");
            let message: Value = serde_json::from_slice(&bytes).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    };
    // Both clients send id 1 before either reads: each gets its own reply.
    let (mut a, mut b) = (connect(), connect());
    send(&mut a, json!({ "id": 1, "method": "Target.getTargets" }));
    send(&mut b, json!({ "id": 1, "method": "Browser.getVersion" }));
    assert!(reply(&b, 1)["result"]["product"].is_string());
    let targets = reply(&a, 1)["result"]["targetInfos"].clone();
    let page = targets
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page")
        .unwrap()["targetId"]
        .clone();
    // A client that attaches and leaves without detaching is detached for it.
    send(
        &mut a,
        json!({ "id": 2, "method": "Target.attachToTarget", "params": { "targetId": page, "flatten": true } }),
    );
    assert!(reply(&a, 2)["result"]["sessionId"].is_string());
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(5);
    for id in 2.. {
        send(&mut b, json!({ "id": id, "method": "Target.getTargets" }));
        let infos = reply(&b, id)["result"]["targetInfos"].clone();
        let attached = infos
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["targetId"] == page && t["attached"] == true);
        if !attached {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the left session stayed attached"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Firefox's port is still open on the loopback, but the relay holds the one session it
/// allows: a client that dials it (as another user would) cannot open one.
fn the_port_opens_no_second_session(browser: u64) {
    let cmdline = std::fs::read(format!("/proc/{browser}/cmdline")).unwrap();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let profile = args
        .iter()
        .position(|a| a == "--profile")
        .map(|i| &args[i + 1])
        .expect("a profile of cua's own");
    let server: Value = serde_json::from_str(
        &std::fs::read_to_string(std::path::Path::new(profile).join("WebDriverBiDiServer.json"))
            .unwrap(),
    )
    .unwrap();
    let url = format!(
        "ws://{}:{}/session",
        server["ws_host"].as_str().unwrap(),
        server["ws_port"]
    );
    let (mut ws, _) = tungstenite::connect(&url).expect("the port answers");
    ws.send(tungstenite::Message::text(
        json!({ "id": 1, "method": "session.new", "params": { "capabilities": {} } }).to_string(),
    ))
    .unwrap();
    let reply: Value = loop {
        if let tungstenite::Message::Text(text) = ws.read().unwrap() {
            let reply: Value = serde_json::from_str(text.as_str()).unwrap();
            if reply["id"] == 1 {
                break reply;
            }
        }
    };
    assert_eq!(reply["type"], "error", "a second session opened: {reply}");
    assert_eq!(reply["error"], "session not created", "{reply}");
}

fn nix_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid()
        })
        .unwrap()
}

/// `target_url_contains` picks a tab by URL (exactly one must match), and `cdp_port` uses a
/// loopback DevTools port the caller names, refused when that port's browser is another
/// process than `pid`.
#[test]
fn page_takes_a_url_filter_and_a_cdp_port_in_chromium() {
    let session = common::Session::private();
    let apps = concat!("file://", env!("CARGO_MANIFEST_DIR"), "/harness/apps/");
    let (page_url, browser_url) = (format!("{apps}page.html"), format!("{apps}browser.html"));
    let launched = session
        .call(
            "launch_app",
            json!({ "name": "chromium", "urls": [page_url, browser_url] }),
        )
        .expect("chromium launches");
    let relayed = common::App::launched(&launched);
    let text_of = |args: Value| -> Result<String, String> {
        session
            .call("page", args)
            .map(|o| {
                o.structured["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .map_err(|e| e.to_string())
    };
    let of = |app: &common::App, extra: Value| {
        let mut args = json!({ "action": "get_text", "pid": app.pid, "window_id": app.window_id });
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    // Both tabs load after the window maps.
    let deadline = Instant::now() + Duration::from_secs(30);
    let text = loop {
        let got = text_of(of(
            &relayed,
            json!({ "target_url_contains": "browser.html" }),
        ));
        if let Ok(text) = &got {
            if text.contains("cua browser page") {
                break text.clone();
            }
        }
        assert!(
            Instant::now() < deadline,
            "the second tab never loaded: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(!text.contains("not clicked"), "{text}");
    let shown = text_of(of(&relayed, json!({ "target_url_contains": "page.html" }))).unwrap();
    assert!(shown.contains("not clicked"), "{shown}");
    let both = text_of(of(&relayed, json!({ "target_url_contains": ".html" }))).unwrap_err();
    assert!(both.contains("2 tabs"), "{both}");

    // A second Chromium on a port of the test's choosing.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let launched = session
        .call(
            "launch_app",
            json!({ "name": "chromium", "urls": [page_url],
                    "additional_arguments": [format!("--remote-debugging-port={port}")],
                    "creates_new_application_instance": true }),
        )
        .expect("a second chromium launches");
    let ported = common::App::launched(&launched);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = text_of(of(&ported, json!({ "cdp_port": port })));
        if got.as_ref().is_ok_and(|t| t.contains("not clicked")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the port never answered: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let foreign = text_of(of(&relayed, json!({ "cdp_port": port }))).unwrap_err();
    assert!(
        foreign.contains(&format!("is pid {}, not {}", ported.pid, relayed.pid)),
        "{foreign}"
    );
}
