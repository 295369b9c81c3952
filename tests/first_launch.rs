//! Every toolkit joins the accessibility bus when it is the first app of a fresh sandbox
//! (#43, item 6): a GTK 4 app started by `launch_app` as the first app stayed off the bus
//! for 12 s, 2 tries in 2. Each fixture (GTK 3, GTK 4, Qt 5, Qt 6, Swing) is launched as
//! the first app of a fresh sandbox, 10 times, and must show its button in its
//! accessibility tree (not read by OCR) within a bound. The JVM stays inside its sandbox:
//! its font cache is written to the sandbox's home, and it leaves no perf-data file in
//! /tmp.

mod common;

use std::time::{Duration, Instant};

use cua::sandbox::SandboxOptions;
use serde_json::{Value, json};

const TRIES: usize = 10;
/// A fresh app on a loaded 2-core machine is on the bus well within this.
const JOIN_BOUND: Duration = Duration::from_secs(8);

/// A fixture: its program, arguments, and the button its tree must show.
struct Fixture {
    name: &'static str,
    program: &'static str,
    args: &'static [&'static str],
    button: &'static str,
    /// What the app writes into its home as it starts (inside the sandbox's, not the
    /// user's), when it writes something.
    writes_at_home: Option<&'static str>,
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        name: "GTK 3",
        program: "fixture_gtk3.py",
        args: &[],
        button: "Increment",
        writes_at_home: None,
    },
    Fixture {
        name: "GTK 4",
        program: "fixture_gtk4.py",
        args: &[],
        button: "Increment",
        writes_at_home: None,
    },
    Fixture {
        name: "Qt 5",
        program: "fixture_qt.py",
        args: &["5"],
        button: "Increment",
        writes_at_home: None,
    },
    Fixture {
        name: "Qt 6",
        program: "fixture_qt.py",
        args: &["6"],
        button: "Increment",
        writes_at_home: None,
    },
    Fixture {
        name: "Swing",
        program: "order_swing",
        args: &[],
        button: "Add",
        // Java's font cache, in the home Java takes from its user.home.
        writes_at_home: Some(".java/fonts"),
    },
];

/// How long after launch_app returned the fixture's button showed in its tree; None when
/// it did not within JOIN_BOUND (the last state read is in the message).
fn first_launch(fixture: &Fixture) -> Result<Duration, String> {
    let session = common::Session::on(SandboxOptions {
        width: 1024,
        height: 768,
        ..Default::default()
    });
    let path = format!(
        "{}/harness/apps/{}",
        env!("CARGO_MANIFEST_DIR"),
        fixture.program
    );
    let launched = session.ok(
        "launch_app",
        json!({ "path": path, "additional_arguments": fixture.args,
                "creates_new_application_instance": true }),
    );
    let (pid, window) = (&launched["pid"], &launched["windows"][0]["window_id"]);
    let started = Instant::now();
    let mut last = Value::Null;
    while started.elapsed() < JOIN_BOUND {
        let state = session.ok(
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
        );
        let has_button = state["elements"].as_array().is_some_and(|es| {
            es.iter()
                .any(|e| e["role"] == "button" && e["name"] == fixture.button)
        });
        if has_button && state["text_source"].is_null() {
            return stayed_inside(&session, fixture, &launched).map(|_| started.elapsed());
        }
        last = state;
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "{}: no button {:?} in its tree {JOIN_BOUND:?} after launch: {}",
        fixture.name,
        fixture.button,
        last.get("degraded_reason")
            .unwrap_or(&last["tree_markdown"])
    ))
}

/// Whether the app wrote what it writes at home into the home launch_app gave it (its
/// own, inside the sandbox), and left no JVM perf-data file
/// (`/tmp/hsperfdata_<user>/<pid>`) outside it.
fn stayed_inside(
    session: &common::Session,
    fixture: &Fixture,
    launched: &Value,
) -> Result<(), String> {
    let Some(written) = fixture.writes_at_home else {
        return Ok(());
    };
    let dir = session
        .sandbox()
        .desktop()
        .sandbox_dir
        .expect("a sandbox folder");
    let home = std::path::PathBuf::from(launched["home"].as_str().expect("launch_app's home"));
    if !home.starts_with(&dir) {
        return Err(format!(
            "{}: home {} is outside the sandbox",
            fixture.name,
            home.display()
        ));
    }
    let inside = home.join(written);
    if !inside.exists() {
        return Err(format!("{}: nothing at {}", fixture.name, inside.display()));
    }
    let pid = launched["pid"].as_u64().unwrap_or_default().to_string();
    let perf_data = std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("hsperfdata_"))
        .map(|e| e.path().join(&pid))
        .find(|p| p.exists());
    match perf_data {
        Some(p) => Err(format!(
            "{}: wrote {} outside its sandbox",
            fixture.name,
            p.display()
        )),
        None => Ok(()),
    }
}

#[test]
fn each_toolkit_joins_the_bus_when_launched_first_in_a_fresh_sandbox() {
    let mut failures = Vec::new();
    for fixture in FIXTURES {
        let mut times = Vec::new();
        for _ in 0..TRIES {
            match first_launch(fixture) {
                Ok(t) => times.push(t.as_millis()),
                Err(e) => failures.push(e),
            }
        }
        times.sort();
        eprintln!(
            "{}: on the bus in {}/{TRIES}; ms after launch: {times:?}",
            fixture.name,
            times.len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The process's environment variable `name`, read from /proc (what the app really got).
fn env_of(pid: &Value, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{}/environ", pid.as_u64()?)).ok()?;
    environ
        .split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(String::from))
}

/// #55 item 4: in a sandbox every launch gets a home of its own, with the sandbox's
/// toolkit settings and nothing an earlier launch wrote; `fresh_home: false` shares the
/// sandbox's home, which persists. Read from the apps' own environments.
#[test]
fn every_launch_in_a_sandbox_gets_a_home_of_its_own() {
    let session = common::Session::private();
    let dir = session.sandbox().dir().to_path_buf();
    let path = format!(
        "{}/harness/apps/fixture_gtk3.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let launch = |fresh: bool| {
        session.ok(
            "launch_app",
            json!({ "path": path, "creates_new_application_instance": true, "fresh_home": fresh }),
        )
    };
    let first = launch(true);
    let home = |launched: &Value| {
        let home = std::path::PathBuf::from(env_of(&launched["pid"], "HOME").expect("HOME"));
        assert_eq!(
            launched["home"].as_str(),
            home.to_str(),
            "launch_app's home"
        );
        home
    };
    let first_home = home(&first);
    assert!(
        first_home.starts_with(dir.join("homes")),
        "{}",
        first_home.display()
    );
    let config = env_of(&first["pid"], "XDG_CONFIG_HOME").expect("XDG_CONFIG_HOME");
    assert!(config.starts_with(first_home.to_str().unwrap()), "{config}");
    let settings = std::fs::read_to_string(format!("{config}/gtk-3.0/settings.ini")).unwrap();
    assert!(settings.contains("gtk-cursor-blink = false"), "{settings}");
    // What the first launch leaves at home (a draft, a recent file) ...
    let data = env_of(&first["pid"], "XDG_DATA_HOME").unwrap();
    std::fs::write(format!("{data}/recently-used.xbel"), "<xbel/>").unwrap();
    // ... a relaunch does not see.
    let second = launch(true);
    let second_home = home(&second);
    assert_ne!(first_home, second_home);
    let data = env_of(&second["pid"], "XDG_DATA_HOME").unwrap();
    assert!(!std::path::Path::new(&format!("{data}/recently-used.xbel")).exists());
    // fresh_home: false shares the sandbox's home between launches.
    let shared = [launch(false), launch(false)].map(|l| home(&l));
    assert_eq!(shared[0], dir.join("home"));
    assert_eq!(shared[0], shared[1]);
}

/// An app whose registration the accessibility registry lost is still read through its
/// tree, not by OCR: GTK 4 registers once, as it starts, so a restarted registry (killed
/// here) never lists it again, but its tree is on the bus. Without the fallback to the
/// bus's own connections this read fell to OCR.
#[test]
fn an_app_the_registry_lost_is_still_read_through_its_tree() {
    let session = common::Session::private();
    let display = format!("DISPLAY={}", session.sandbox().display_name());
    let path = format!(
        "{}/harness/apps/fixture_gtk4.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let launched = session.ok("launch_app", json!({ "path": path }));
    let (pid, window) = (&launched["pid"], &launched["windows"][0]["window_id"]);
    let has_button = |state: &Value| {
        state["text_source"].is_null()
            && state["elements"].as_array().is_some_and(|es| {
                es.iter()
                    .any(|e| e["role"] == "button" && e["name"] == "Increment")
            })
    };
    let deadline = Instant::now() + JOIN_BOUND;
    while !has_button(&session.state(pid, window)) {
        assert!(Instant::now() < deadline, "the fixture's tree never showed");
        std::thread::sleep(Duration::from_millis(100));
    }
    // This sandbox's registry: the at-spi2-registryd on its display.
    let registry = processes_on(&display, "at-spi2-registryd")
        .first()
        .copied()
        .expect("the sandbox's at-spi2-registryd") as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(registry),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let args = json!({ "pid": pid, "window_id": window, "include_screenshot": false });
    let state = session
        .fresh_call("get_window_state", args)
        .unwrap()
        .structured;
    assert!(has_button(&state), "{}", state["tree_markdown"]);
}

/// A launcher script for the GTK 4 fixture that starts it without accessibility
/// (`GTK_A11Y=none`, as a start that lost its accessibility bus is) while `marker` is
/// missing, and creates the marker when `once`: so only the first start goes without.
fn fixture_without_accessibility(dir: &std::path::Path, once: bool) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let marker = dir.join("started-without");
    let _ = std::fs::remove_file(&marker);
    let script = dir.join("fixture-gtk4.sh");
    let create = if once {
        format!("touch '{}'; ", marker.display())
    } else {
        String::new()
    };
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ ! -e '{}' ]; then {create}export GTK_A11Y=none; fi\nexec '{}/harness/apps/fixture_gtk4.py'\n",
            marker.display(),
            env!("CARGO_MANIFEST_DIR")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script
}

/// The pids whose command line holds `program` and whose environment holds `display`
/// (`DISPLAY=:N`): a sandbox's processes, told apart from other sandboxes' by their display.
fn processes_on(display: &str, program: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let read = |f: &str| std::fs::read(format!("/proc/{p}/{f}")).unwrap_or_default();
            String::from_utf8_lossy(&read("cmdline")).contains(program)
                && read("environ")
                    .split(|b| *b == 0)
                    .any(|kv| kv == display.as_bytes())
        })
        .collect()
}

/// How many processes run the GTK 4 fixture on `session`'s display.
fn fixtures_running(session: &common::Session) -> usize {
    let display = format!("DISPLAY={}", session.sandbox().display_name());
    processes_on(&display, "fixture_gtk4.py").len()
}

/// In a sandbox, an app that carries an accessibility bridge but does not join the bus is
/// stopped and started once more (seen on clean-clone CI: GNOME Calculator's window, and no
/// tree in 30 s). Here the GTK 4 fixture's first start goes without accessibility: the
/// launch says so, the first process is gone, and the window it hands over is read through
/// its tree. An app that never joins is named too, and read by its pixels.
#[test]
fn an_app_that_does_not_join_the_accessibility_bus_is_started_once_more() {
    let session = common::Session::private();
    let dir = std::env::temp_dir().join(format!("cua-no-join-{}", std::process::id()));
    let script = fixture_without_accessibility(&dir, true);
    let launched = session.ok("launch_app", json!({ "path": script }));
    let note = launched["accessibility_note"].as_str().unwrap_or_default();
    assert!(note.contains("started again, and joined"), "{launched:#}");
    assert_eq!(fixtures_running(&session), 1, "the first start still runs");
    let (pid, window) = (&launched["pid"], &launched["windows"][0]["window_id"]);
    let state = session.state(pid, window);
    assert!(state["text_source"].is_null(), "{}", state["tree_markdown"]);
    assert!(
        state["elements"].as_array().is_some_and(|es| es
            .iter()
            .any(|e| e["role"] == "button" && e["name"] == "Increment")),
        "{}",
        state["tree_markdown"]
    );
    session.ok("kill_app", json!({ "pid": pid }));

    let script = fixture_without_accessibility(&dir, false);
    let launched = session.ok("launch_app", json!({ "path": script }));
    let note = launched["accessibility_note"].as_str().unwrap_or_default();
    assert!(note.contains("on two starts"), "{launched:#}");
    assert_eq!(fixtures_running(&session), 1, "the first start still runs");
    let _ = std::fs::remove_dir_all(&dir);
}
