//! `cua record --live` as the live tests start and end it: the recorder on a sandbox's
//! display, its page's URL, the calculator's buttons, and `cua test` on what it saved.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{KillOnDrop, Session};

/// A running `cua record --live DIR --app Calculator`, and its page's URL.
pub struct LiveRecorder {
    pub process: KillOnDrop,
    pub url: String,
    /// The project root the test made: `trajectories/live` (`dir`), `harness/`, `goldens/`.
    pub root: PathBuf,
    pub dir: PathBuf,
}

impl LiveRecorder {
    /// Starts recording the calculator on `session`'s display, under a fresh `root`
    /// named after `name`; returns once the page's URL is printed.
    pub fn calculator(session: &Session, name: &str) -> LiveRecorder {
        LiveRecorder::start(session, name, "Calculator", &[])
    }

    /// Starts recording `app` (a name, or a program's path) on `session`'s display, the
    /// recorder (and so the app) with `envs` added, under a fresh `root` named after
    /// `name`; returns once the page's URL is printed.
    pub fn start(session: &Session, name: &str, app: &str, envs: &[(&str, &Path)]) -> LiveRecorder {
        let display = session.sandbox().display().to_string();
        LiveRecorder::with_flags(name, app, envs, &["--display", &display])
    }

    /// Starts `cua record --live` with `flags` (`--display N` picks a sandbox; without
    /// it the recorder starts one of its own).
    pub fn with_flags(
        name: &str,
        app: &str,
        envs: &[(&str, &Path)],
        flags: &[&str],
    ) -> LiveRecorder {
        let root = std::env::temp_dir().join(format!("cua-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let dir = root.join("trajectories/live");
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
            .args(["record", "--live"])
            .arg(&dir)
            .args(["--app", app])
            .args(flags)
            .arg("--harness")
            .arg(root.join("harness"))
            .envs(envs.iter().map(|(k, v)| (*k, *v)))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut process = KillOnDrop(child);
        let mut first = String::new();
        BufReader::new(process.0.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .trim()
            .strip_prefix("record by doing in the browser: ")
            .unwrap_or_else(|| panic!("{first}"))
            .to_string();
        LiveRecorder {
            process,
            url,
            root,
            dir,
        }
    }

    /// Waits (bounded) for the recorder to exit by itself (`why` says what should end it);
    /// it must exit 0.
    pub fn exits(&mut self, why: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.process.0.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "cua record --live did not stop {why}"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(status.success(), "{status}");
    }

    /// Ctrl-C, then [`LiveRecorder::exits`].
    pub fn interrupt(&mut self) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.process.0.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        )
        .unwrap();
        self.exits("on Ctrl-C");
    }

    /// Each turn's `action.json` in the recording, in turn order.
    pub fn actions(&self) -> Vec<Value> {
        cua::replay::turn_dirs(&self.dir)
            .unwrap()
            .iter()
            .map(|(_, d)| {
                serde_json::from_slice(&std::fs::read(d.join("action.json")).unwrap()).unwrap()
            })
            .collect()
    }

    /// Each turn's tool in the recording, in turn order.
    pub fn tools(&self) -> Vec<String> {
        self.actions()
            .iter()
            .map(|a| a["tool"].as_str().unwrap().to_string())
            .collect()
    }

    /// `cua test NAME` in the root (with `extra` flags); it must pass.
    pub fn cua_test(&self, name: &str, extra: &[&str]) {
        cua_test(&self.root, name, extra);
    }
}

fn cua_test(root: &Path, name: &str, extra: &[&str]) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cua"))
        .current_dir(root)
        .args(["test", name, "--harness", "harness", "--goldens", "goldens"])
        .args(extra)
        .env_remove("CI")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "cua test {name} {extra:?}:\n{said}");
}

/// The calculator's window (pid, window id) and its elements, through `session` (the
/// test's own reading, not the recorder's), once its buttons show (bounded): the window
/// is listed before its tree is on the bus, and a loaded CI machine read it empty.
pub fn calculator_window(session: &Session) -> (Value, Value, Vec<Value>) {
    let (pid, window) = window_titled(session, "Calculator");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let state = session.state(&pid, &window);
        let elements = state["elements"].as_array().cloned().unwrap_or_default();
        if elements
            .iter()
            .any(|e| e["role"] == "button" && e["name"] == "7")
        {
            return (pid, window, elements);
        }
        assert!(
            Instant::now() < deadline,
            "the calculator's buttons never showed: {}\n{}",
            state["tree_markdown"],
            why_no_tree(session, &pid)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What a failure to read an app's tree needs to be understood (seen twice on clean-clone
/// CI runs, never when run again): whether the app lives, the display and buses it was
/// given, the accessibility bus the X root window and the session bus each name, and the
/// end of the app's log in the sandbox.
fn why_no_tree(session: &Session, pid: &Value) -> String {
    let pid = pid.as_u64().unwrap_or_default();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    let given: Vec<String> = environ
        .split(|b| *b == 0)
        .map(|kv| String::from_utf8_lossy(kv).into_owned())
        .filter(|kv| {
            [
                "DISPLAY=",
                "DBUS_SESSION",
                "AT_SPI",
                "GTK_A11Y",
                "NO_AT_BRIDGE",
            ]
            .iter()
            .any(|k| kv.starts_with(k))
        })
        .collect();
    let run = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .map(|o| {
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                )
            })
            .unwrap_or_else(|e| format!("{program}: {e}"))
    };
    let Some(sandbox) = session.own_sandbox() else {
        return format!(
            "pid {pid} alive: {}; given {given:?}",
            Path::new(&format!("/proc/{pid}")).exists()
        );
    };
    let display = sandbox.display_name();
    let root_bus = run("xprop", &["-display", &display, "-root", "AT_SPI_BUS"]);
    let session_bus = run(
        "busctl",
        &[
            &format!("--address={}", sandbox.dbus_address()),
            "call",
            "org.a11y.Bus",
            "/org/a11y/bus",
            "org.a11y.Bus",
            "GetAddress",
        ],
    );
    let logs: Vec<String> = std::fs::read_dir(sandbox.dir().join("app-logs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            format!(
                "{}:\n{}",
                e.path().display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )
        })
        .collect();
    format!(
        "pid {pid} alive: {}; given {given:?}\nX root AT_SPI_BUS: {root_bus}session bus org.a11y.Bus: {session_bus}app logs:\n{}",
        Path::new(&format!("/proc/{pid}")).exists(),
        logs.join("\n")
    )
}

/// The pid and id of the window whose title contains `title`, once it shows (bounded).
pub fn window_titled(session: &Session, title: &str) -> (Value, Value) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let windows = session.ok("list_windows", json!({}));
        let found = windows["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["title"].as_str().is_some_and(|t| t.contains(title)));
        if let Some(w) = found {
            return (w["pid"].clone(), w["window_id"].clone());
        }
        assert!(Instant::now() < deadline, "no window {title:?}: {windows}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The centre, in screen points, of the calculator's button named one of `names`.
pub fn centre(elements: &[Value], names: &[&str]) -> (f64, f64) {
    let e = elements
        .iter()
        .find(|e| e["role"] == "button" && names.iter().any(|n| e["name"] == *n))
        .unwrap_or_else(|| panic!("no button {names:?}"));
    let f = &e["frame"];
    let at = |k: &str| f[k].as_f64().unwrap();
    (at("x") + at("w") / 2.0, at("y") + at("h") / 2.0)
}

/// Waits (bounded) until the calculator's result field shows `value` (the field, not an
/// element index like [42]).
pub fn calculator_shows(session: &Session, pid: &Value, window: &Value, value: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let md = session.state(pid, window)["tree_markdown"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if md.contains(&format!("text value=\"{value}\"")) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the calculator never showed {value}:\n{md}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
