//! The `cua` binary as a user runs it: exit codes, error lines that name the field, the
//! sandbox lifecycle, generated docs, and the demo.

mod common;

use std::process::{Command, Output};

fn cua(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cua"));
    cmd.args(args);
    cmd
}

fn run_without_desktop(args: &[&str]) -> Output {
    cua(args)
        .env_remove("DISPLAY")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("CUA_SANDBOX_DIR")
        .output()
        .unwrap()
}

/// `cua sandbox start --size SIZE`; returns a lookup of the variables it exports.
fn start_sandbox(size: &str) -> impl Fn(&str) -> String {
    let out = cua(&["sandbox", "start", "--size", size]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let exports = String::from_utf8(out.stdout).unwrap();
    move |name: &str| {
        exports
            .lines()
            .find_map(|l| l.strip_prefix(&format!("export {name}=")))
            .map(|v| v.trim_matches('\'').to_string())
            .unwrap_or_else(|| panic!("{name} not exported in {exports}"))
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_json_wrong_type_missing_field_and_unknown_tool_exit_2_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (&["get_window_state", "{not json"], "not valid JSON"),
        (
            &["get_window_state", r#"{"pid": "abc", "window_id": 1}"#],
            "`pid`",
        ),
        (
            &["get_window_state", r#"{"pid": 1}"#],
            "missing field `window_id`",
        ),
        (
            &[
                "get_window_state",
                r#"{"pid": 1, "window_id": 2, "colour": 1}"#,
            ],
            "unknown argument `colour`",
        ),
        (
            &["call", "list_windows", r#"{"on_screen_only": "yes"}"#],
            "`on_screen_only`",
        ),
        (&["no_such_tool", "{}"], "unknown tool `no_such_tool`"),
        (&["screenshot", "[1, 2]"], "must be a JSON object"),
    ];
    for (args, expected) in cases {
        // No desktop in the environment: a tool that ran would fail differently (exit 1).
        let out = run_without_desktop(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(expected),
            "{args:?}: expected `{expected}` in: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line, got: {err}");
    }
}

#[test]
fn replay_of_a_corrupt_trajectory_exits_2_naming_every_bad_turn_before_driving_any() {
    let dir = std::env::temp_dir().join(format!("cua-corrupt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let turns = [
        r#"{"schema_version": 1, "tool": "list_windows", "arguments": {}}"#,
        r#"{"tool": 5"#,
        r#"{"schema_version": 1, "tool": "clikc", "arguments": {}}"#,
    ];
    for (i, action) in turns.iter().enumerate() {
        let turn = dir.join(format!("turn-{:05}", i + 1));
        std::fs::create_dir_all(&turn).unwrap();
        std::fs::write(turn.join("action.json"), action).unwrap();
    }
    // No desktop: a turn that was driven would fail with exit 1 instead.
    let out = run_without_desktop(&["replay", dir.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("2 of 3 turns cannot be read")
            && err.contains("turn 2: ")
            && err.contains("corrupt JSON")
            && err.contains("turn 3: unknown tool `clikc`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tool_without_a_desktop_says_so_in_one_line_and_points_at_the_sandbox() {
    let out = run_without_desktop(&["list_windows"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cua sandbox"), "{err}");
}

#[test]
fn list_tools_and_describe_come_from_the_schemas() {
    let out = cua(&["list-tools"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // Every tool of the cua-driver reference (../shared/reference/cua-driver-mcp-tools.txt).
    for tool in [
        "check_permissions",
        "click",
        "double_click",
        "drag",
        "get_agent_cursor_state",
        "get_config",
        "get_cursor_position",
        "get_recording_state",
        "get_screen_size",
        "get_window_state",
        "hotkey",
        "launch_app",
        "list_apps",
        "list_windows",
        "move_cursor",
        "page",
        "press_key",
        "replay_trajectory",
        "right_click",
        "screenshot",
        "scroll",
        "set_agent_cursor_enabled",
        "set_agent_cursor_motion",
        "set_agent_cursor_style",
        "set_config",
        "set_recording",
        "set_value",
        "type_text",
        "zoom",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(tool)),
            "{tool} missing from list-tools"
        );
    }
    let out = cua(&["describe", "get_window_state"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let required: Vec<&str> = doc["input_schema"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["pid", "window_id"]);
    assert!(
        doc["input_schema"]["properties"]["query"]["description"]
            .as_str()
            .unwrap()
            .contains("substring")
    );
    let out = cua(&["describe", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn docs_tools_md_is_generated_from_the_current_schemas() {
    let out = cua(&["docs"]).output().unwrap();
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md")).unwrap();
    assert!(
        generated.trim() == committed.trim(),
        "docs/tools.md is stale: regenerate with `cargo run -q -- docs > docs/tools.md`"
    );
}

#[test]
fn docs_roles_md_is_generated_from_the_role_vocabulary() {
    let out = cua(&["docs", "--roles"]).output().unwrap();
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/roles.md")).unwrap();
    assert!(generated.contains("- `check_box`"), "{generated}");
    assert!(
        generated.trim() == committed.trim(),
        "docs/roles.md is stale: regenerate with `cargo run -q -- docs --roles > docs/roles.md`"
    );
}

#[test]
fn sandbox_start_status_exec_stop() {
    let var = start_sandbox("800x600");
    let display = var("DISPLAY");
    let number: u32 = display.trim_start_matches(':').parse().unwrap();
    let dir = var("CUA_SANDBOX_DIR");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/state.json")).unwrap())
            .unwrap();
    let pids: Vec<u64> = state["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_u64().unwrap())
        .collect();
    assert!(pids.len() >= 4, "{state}");

    let status = String::from_utf8(cua(&["sandbox", "status"]).output().unwrap().stdout).unwrap();
    assert!(status.contains(&format!("display {display} ")), "{status}");

    // A command run inside sees the desktop: xdpyinfo reports the screen size.
    let out = cua(&[
        "sandbox",
        "exec",
        "--display",
        &number.to_string(),
        "--",
        "xdpyinfo",
    ])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("800x600 pixels"));

    // Tools see it too once the environment is exported.
    let out = cua(&["get_screen_size", "--json"])
        .env("DISPLAY", &display)
        .env("DBUS_SESSION_BUS_ADDRESS", var("DBUS_SESSION_BUS_ADDRESS"))
        .output()
        .unwrap();
    let size: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(size["width"], 800);
    // A one-shot call by element index without a daemon says how indices carry over.
    let out = cua(&["click", r#"{"pid": 1, "window_id": 1, "element_index": 0}"#])
        .env("DISPLAY", &display)
        .env("DBUS_SESSION_BUS_ADDRESS", var("DBUS_SESSION_BUS_ADDRESS"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`element_index`") && stderr(&out).contains("run `cua serve`"),
        "{}",
        stderr(&out)
    );

    let out = cua(&["sandbox", "stop", "--display", &number.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::thread::sleep(std::time::Duration::from_millis(200));
    for pid in pids {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false);
        assert!(!alive, "pid {pid} still running after stop");
    }
    assert!(
        !std::path::Path::new(&dir).exists(),
        "state dir left behind"
    );
    let out = cua(&["sandbox", "stop", "--display", &number.to_string()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "stopping twice reports no such sandbox"
    );
}

#[test]
fn the_demo_runs_the_loop_and_leaves_trees_screenshots_trajectories_and_reports() {
    let dir = std::env::temp_dir().join(format!("cua-demo-test-{}", std::process::id()));
    let out = cua(&["demo", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "demo failed: {}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(dir.to_str().unwrap()),
        "demo prints its folder"
    );
    let tree = std::fs::read_to_string(dir.join("calculator-tree.md")).unwrap();
    assert!(tree.contains("button \"7"), "{tree}");
    for png in [
        "calculator-screenshot.png",
        "widget-factory-screenshot.png",
        "calculator-covered.png",
    ] {
        let img = image::open(dir.join(png)).unwrap_or_else(|e| panic!("{png}: {e}"));
        assert!(img.width() > 100 && img.height() > 100, "{png} too small");
    }
    // The loop: recorded, replayed (recorded again), diffed into a passing report, and a
    // regression caught in the fixture app.
    for turn in ["recording/turn-00004", "replay/turn-00004"] {
        assert!(dir.join(turn).join("action.json").is_file(), "{turn}");
    }
    let junit = std::fs::read_to_string(dir.join("report/junit.xml")).unwrap();
    assert!(
        junit.contains("tests=\"4\"") && junit.contains("failures=\"0\""),
        "{junit}"
    );
    assert!(dir.join("report/index.html").is_file());
    let junit = std::fs::read_to_string(dir.join("regression-report/junit.xml")).unwrap();
    assert!(junit.contains("failures=\"5\""), "{junit}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn docs_schema_matches_the_trajectory_types() {
    let dir = std::env::temp_dir().join(format!("cua-schema-test-{}", std::process::id()));
    let out = cua(&["docs", "--schemas", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for name in [
        "action.schema.json",
        "session.schema.json",
        "window-state.schema.json",
    ] {
        let generated = std::fs::read_to_string(dir.join(name)).unwrap();
        let committed =
            std::fs::read_to_string(format!("{}/docs/schema/{name}", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        assert!(
            generated == committed,
            "docs/schema/{name} is stale: regenerate with `cargo run -q -- docs --schemas docs/schema`"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_to_the_daemon_finalizes_its_recording() {
    let base = std::env::temp_dir().join(format!("cua-daemon-term-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let socket = base.join("d.sock");
    let mut command = cua(&[]);
    command.env_remove("DISPLAY").env("RUST_LOG", "cua=debug");
    let mut daemon = common::Daemon::spawn(command, &socket);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&base).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let dir = base.join("rec");
    let started = cua::daemon::call(
        &socket,
        "set_recording",
        &serde_json::json!({ "enabled": true, "output_dir": dir }),
    )
    .unwrap();
    assert!(started.is_ok(), "{:?}", started.err());
    let session: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
    assert!(session["stopped_at"].is_null());
    assert!(daemon.terminate().success());
    let session: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
    assert!(
        session["stopped_at"].is_string(),
        "session finalized: {session}"
    );
    assert!(!socket.exists(), "socket removed");
    // Its log, beside the socket, has each step at the level RUST_LOG asked for.
    let log = std::fs::read_to_string(base.join("d.log")).unwrap();
    for line in [
        "INFO cua::daemon: listening",
        "DEBUG cua::logs: call tool=\"set_recording\"",
        "INFO cua::daemon: SIGTERM; stopping",
        "INFO cua::daemon: stopped; recordings finalized",
    ] {
        assert!(log.contains(line), "no {line:?} in\n{log}");
    }
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_daemon_stops_with_its_desktop_so_a_new_one_on_the_same_display_is_not_answered_by_it() {
    let var = start_sandbox("640x480");
    let (display, bus) = (var("DISPLAY"), var("DBUS_SESSION_BUS_ADDRESS"));
    let socket = std::env::temp_dir().join(format!("cua-daemon-watch-{}.sock", std::process::id()));
    let mut command = cua(&[]);
    command
        .env("DISPLAY", &display)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus);
    let mut daemon = common::Daemon::spawn(command, &socket);
    let number = display.trim_start_matches(':');
    let out = cua(&["sandbox", "stop", "--display", number])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // It notices within its 1 s check and exits, removing its socket.
    let status = daemon
        .exited_within(std::time::Duration::from_secs(5))
        .expect("the daemon outlived its desktop");
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists(), "socket left behind");
}

#[test]
fn replay_refuses_turns_that_change_the_driver_and_a_trajectory_replaying_itself() {
    let dir = std::env::temp_dir().join(format!("cua-replay-refuse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let home = dir.join("home");
    let trajectory = dir.join("trajectory");
    let turns = [
        serde_json::json!({"tool": "set_config", "arguments": {"key": "max_image_dimension", "value": 640}}),
        serde_json::json!({"tool": "set_recording", "arguments": {"enabled": false}}),
        // Its own folder: before the refusal, this overflowed replay's stack (exit 134).
        serde_json::json!({"tool": "replay_trajectory", "arguments": {"dir": trajectory, "delay_ms": 0}}),
    ];
    for (i, action) in turns.iter().enumerate() {
        let turn = trajectory.join(format!("turn-{:05}", i + 1));
        std::fs::create_dir_all(&turn).unwrap();
        std::fs::write(turn.join("action.json"), action.to_string()).unwrap();
    }
    let replay = |extra: &[&str]| {
        let mut args = vec!["replay", trajectory.to_str().unwrap(), "--no-stop-on-error"];
        args.extend(extra);
        args.extend(["--delay-ms", "0", "--json"]);
        let out = cua(&args)
            .env("XDG_CONFIG_HOME", &home)
            .env_remove("DISPLAY")
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {} {}", stderr(&out), out.status));
        (out.status.code(), report)
    };
    let ok = |r: &serde_json::Value, i: usize| r["turns"][i]["ok"].as_bool().unwrap();
    let why = |r: &serde_json::Value, i: usize| r["turns"][i]["result_summary"].to_string();

    let (code, r) = replay(&[]);
    assert_eq!(code, Some(1), "{r}");
    for i in 0..3 {
        assert!(!ok(&r, i), "turn {i} ran: {r}");
        assert!(why(&r, i).contains("refused"), "{}", why(&r, i));
    }
    assert!(why(&r, 0).contains("--allow-config"), "{}", why(&r, 0));
    // Nothing of the trajectory reached the config.
    assert!(!home.join("cua/config.json").exists());

    let (code, r) = replay(&["--allow-config"]);
    assert_eq!(code, Some(1), "{r}");
    assert!(ok(&r, 0) && ok(&r, 1), "{r}");
    // The file keeps what was set and no default: a written `agent_cursor.enabled: true`
    // would turn the overlay on inside every sandbox afterwards.
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("cua/config.json")).unwrap()).unwrap();
    assert_eq!(config["max_image_dimension"], 640, "{config}");
    assert!(config.get("agent_cursor").is_none(), "{config}");
    assert!(why(&r, 2).contains("never replayed"), "{}", why(&r, 2));
    let _ = std::fs::remove_dir_all(&dir);
}
