//! A person's own GNOME or KDE session, let in by `cua permissions grant`: the compositor runs
//! as a person's session does (KWin without its test switches, GNOME Shell in its user mode
//! with no extension of cua's), in folders of the test's own, and cua (the built binary, as
//! a person runs it, with no CUA_BACKEND) is refused, told how to get in, let in, and then
//! lists, captures and drives a GTK 3 fixture whose journal shows the effects. Revoking
//! shuts it out again.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{KillOnDrop, journal};
use serde_json::{Value, json};

/// A person's desktop session in folders of its own: its home data, config and cache,
/// its runtime folder and its session bus.
struct Person {
    root: PathBuf,
    bus: Option<KillOnDrop>,
    address: String,
    children: Vec<KillOnDrop>,
}

impl Person {
    fn new(name: &str) -> Person {
        let root =
            std::env::temp_dir().join(format!("cua-own-session-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["data", "config", "cache", "runtime"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join("runtime"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        let mut person = Person {
            address: format!("unix:path={}", root.join("bus").display()),
            root,
            bus: None,
            children: Vec::new(),
        };
        person.bus = Some(person.start_bus("bus"));
        person
    }

    /// A dbus-daemon at `name` in the session's folder, with the session's environment
    /// (the services it starts write into the session's folders).
    fn start_bus(&self, name: &str) -> KillOnDrop {
        let socket = self.root.join(name);
        let mut bus = Command::new("dbus-daemon");
        bus.args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address=unix:path={}", socket.display()));
        bus.stderr(Stdio::null());
        let bus = KillOnDrop(self.env(&mut bus).spawn().expect("dbus-daemon"));
        wait_until("the bus listens", || {
            std::os::unix::net::UnixStream::connect(&socket).is_ok()
        });
        bus
    }

    /// `cmd` in this session: its folders, its bus, its Wayland display, no X display and
    /// no backend chosen.
    fn env<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env("XDG_DATA_HOME", self.root.join("data"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("XDG_RUNTIME_DIR", self.root.join("runtime"))
            .env("HOME", &self.root)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env("WAYLAND_DISPLAY", "wayland-0")
            .env("GSETTINGS_BACKEND", "keyfile")
            .env_remove("DISPLAY")
            .env_remove("CUA_BACKEND")
            .env_remove("CUA_SANDBOX_DIR")
            .env_remove("SWAYSOCK")
    }

    fn socket(&self) -> PathBuf {
        self.root.join("runtime/wayland-0")
    }

    /// Runs the cua binary with `args` in this session.
    fn cua(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cua"));
        self.env(&mut cmd)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("cua runs")
    }

    /// A tool's JSON answer, or its error text.
    fn tool(&self, tool: &str, args: Value) -> Result<Value, String> {
        let out = self.cua(&["call", tool, &args.to_string(), "--json"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(format!("{text}{}", String::from_utf8_lossy(&out.stderr)));
        }
        serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
    }

    /// `cua permissions --json`: what the desktop lets cua do (check_permissions).
    fn checks(&self) -> Value {
        let out = self.cua(&["permissions", "--json"]);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said(&out)))
    }

    /// Checks that cua is not let in yet (the check named `failing` names the command
    /// that grants `desktop`, and no window is listed), then grants it: what the grant
    /// said.
    fn refused_then_granted(&self, failing: &str, desktop: &str) -> String {
        let checks = self.checks();
        let refused = check(&checks, failing);
        assert_eq!(refused["ok"], false, "{checks}");
        let command = format!("cua permissions grant {desktop}");
        assert!(
            refused["fix"].as_str().unwrap().contains(&command),
            "{checks}"
        );
        assert!(self.tool("list_windows", json!({})).is_err());
        let granted = self.cua(&["permissions", "grant", desktop]);
        let text = said(&granted);
        assert!(granted.status.success(), "{text}");
        text
    }

    /// The GTK 3 fixture as a native Wayland client of this session, journaling to
    /// `journal.jsonl`; its window once listed by cua.
    fn launch_fixture(&mut self) -> (PathBuf, Value) {
        let journal = self.root.join("journal.jsonl");
        let mut app = Command::new("/usr/bin/python3");
        app.arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/harness/apps/fixture_gtk3.py"
        ))
        .env("CUA_FIXTURE_JOURNAL", &journal)
        .env("GDK_BACKEND", "wayland")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        self.children
            .push(KillOnDrop(self.env(&mut app).spawn().expect("the fixture")));
        let mut window = Value::Null;
        wait_until("cua lists the fixture's window", || {
            let listed = self.tool("list_windows", json!({})).unwrap_or_default();
            window = listed["windows"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|w| w["title"] == "cua fixture gtk3")
                .cloned()
                .unwrap_or_default();
            !window.is_null()
        });
        (journal, window)
    }
}

impl Drop for Person {
    fn drop(&mut self) {
        self.children.clear();
        self.bus = None;
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 30 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn check<'a>(checks: &'a Value, name: &str) -> &'a Value {
    checks["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {checks}"))
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The fixture captured, clicked where its tree says Increment is drawn and typed into,
/// each effect read from its journal.
fn drive(person: &Person, log: &Path, window: &Value) {
    let at = json!({ "pid": window["pid"], "window_id": window["window_id"] });
    assert!(window["pid"].as_u64().is_some(), "a pid: {window}");
    let mut increment = Value::Null;
    wait_until("the fixture's tree shows Increment", || {
        let state = person
            .tool("get_window_state", at.clone())
            .unwrap_or_default();
        increment = state["elements"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == "Increment")
            .cloned()
            .unwrap_or_default();
        !increment.is_null()
    });
    // Drawn by now: the screenshot is the window's size as listed now (its first listing
    // can precede GTK's first resize).
    let shot = person
        .tool("screenshot", json!({ "window_id": window["window_id"] }))
        .expect("a screenshot");
    let listed = person.tool("list_windows", json!({})).unwrap();
    let now = listed["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["window_id"] == window["window_id"])
        .unwrap_or_else(|| panic!("the window is gone: {listed}"));
    assert_eq!(shot["width"], now["bounds"]["width"], "{shot} {now}");
    assert_eq!(shot["height"], now["bounds"]["height"], "{shot} {now}");
    let f = &increment["pixel_frame"];
    let centre = |k: &str, size: &str| f[k].as_i64().unwrap() + f[size].as_i64().unwrap() / 2;
    let mut click = at.clone();
    click["x"] = json!(centre("x", "w"));
    click["y"] = json!(centre("y", "h"));
    click["delivery_mode"] = json!("foreground");
    person.tool("click", click).expect("a click by point");
    wait_until("the fixture journals the click", || {
        journal(log)
            .iter()
            .any(|e| e["event"] == "clicked" && e["widget"] == "Increment")
    });

    let mut key = at.clone();
    key["key"] = json!("x");
    key["delivery_mode"] = json!("foreground");
    person.tool("press_key", key).expect("a key");
    wait_until("the fixture journals the key", || {
        journal(log)
            .iter()
            .any(|e| e["event"] == "key-press" && e["key"] == "x")
    });
}

/// Spawns `cmd`, again while exec says the just-copied program is busy (ETXTBSY: the other
/// test's thread forked while the copy was open for writing), bounded.
fn spawn_retrying_busy(cmd: &mut Command) -> std::process::Child {
    for _ in 0..50 {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(26) => std::thread::sleep(Duration::from_millis(20)),
            spawned => return spawned.expect("kwin_wayland starts"),
        }
    }
    panic!("kwin_wayland stayed busy for 1 s")
}

/// A copy of the packaged kwin_wayland (whose file capabilities a container refuses to
/// exec), named as KWin must be to load its own Qt platform.
fn kwin_copy(person: &Person) -> PathBuf {
    let packaged = ["/usr/bin/kwin_wayland"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("kwin_wayland (scripts/setup installs kwin-wayland)");
    let dir = person.root.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("kwin_wayland");
    std::fs::copy(packaged, &copy).unwrap();
    copy
}

#[test]
fn a_persons_kwin_lets_cua_in_once_enabled_and_shuts_it_out_when_disabled() {
    let mut person = Person::new("kde");
    let mut kwin = Command::new(kwin_copy(&person));
    person
        .env(&mut kwin)
        .env_remove("WAYLAND_DISPLAY")
        .env("QT_QPA_PLATFORM", "offscreen")
        .args(["--virtual", "--no-lockscreen", "--no-global-shortcuts"])
        .args([
            "--width",
            "1024",
            "--height",
            "768",
            "--socket",
            "wayland-0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    person
        .children
        .push(KillOnDrop(spawn_retrying_busy(&mut kwin)));
    let socket = person.socket();
    wait_until("KWin listens", || {
        std::os::unix::net::UnixStream::connect(&socket).is_ok()
    });

    // Not let in: the checks name KWin's route and the command that opens it.
    let text = person.refused_then_granted("plasma_window_management", "kde");
    assert!(
        text.contains("cua reaches this session's KWin now"),
        "{text}"
    );
    let file = person.root.join("data/applications/cua.desktop");
    let entry = std::fs::read_to_string(&file).unwrap();
    let exe = Path::new(env!("CARGO_BIN_EXE_cua")).canonicalize().unwrap();
    assert!(
        entry.contains(&format!("Exec={}\n", exe.display())),
        "{entry}"
    );

    let (log, window) = person.launch_fixture();
    drive(&person, &log, &window);

    let disabled = person.cua(&["permissions", "revoke", "kde"]);
    assert!(disabled.status.success(), "{}", said(&disabled));
    assert!(!file.exists());
    wait_until("KWin shuts cua out again", || {
        person.tool("list_windows", json!({})).is_err()
    });
}

/// GNOME Shell as at a person's login: its user mode, the session's settings, the session's
/// extensions; a stand-in for the system bus (the shell asks logind there).
fn gnome_login(person: &Person, system_bus: &Path) -> KillOnDrop {
    let mut shell = Command::new("gnome-shell");
    person
        .env(&mut shell)
        .env_remove("WAYLAND_DISPLAY")
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            format!("unix:path={}", system_bus.display()),
        )
        .args([
            "--headless",
            "--wayland",
            "--no-x11",
            "--virtual-monitor",
            "1024x768",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let shell = KillOnDrop(shell.spawn().expect("gnome-shell"));
    let socket = person.socket();
    wait_until("GNOME Shell listens", || {
        std::os::unix::net::UnixStream::connect(&socket).is_ok()
    });
    shell
}

#[test]
fn a_persons_gnome_shell_lets_cua_in_after_enable_and_a_new_login() {
    let mut person = Person::new("gnome");
    let _system = person.start_bus("system-bus");
    // The person has seen GNOME's welcome before; banners (a root login's warning) would
    // cover windows.
    let keyfile = person.root.join("config/glib-2.0/settings/keyfile");
    std::fs::create_dir_all(keyfile.parent().unwrap()).unwrap();
    std::fs::write(
        &keyfile,
        "[org/gnome/shell]\nwelcome-dialog-last-shown-version='99'\n\n[org/gnome/desktop/notifications]\nshow-banners=false\n",
    )
    .unwrap();
    let system_bus = person.root.join("system-bus");
    let shell = gnome_login(&person, &system_bus);

    // Not let in: the checks name GNOME's route and the command that opens it.
    let text = person.refused_then_granted("foreign_toplevel", "gnome");
    assert!(text.contains("log out and in once"), "{text}");
    let extension = person
        .root
        .join("data/gnome-shell/extensions/cua-shell@cua.dev");
    let exe = Path::new(env!("CARGO_BIN_EXE_cua")).canonicalize().unwrap();
    assert_eq!(
        std::fs::read_to_string(extension.join("allowed-callers")).unwrap(),
        format!("{}\n", exe.display())
    );
    assert!(
        std::fs::read_to_string(&keyfile)
            .unwrap()
            .contains("cua-shell@cua.dev"),
        "enabled in the session's settings"
    );

    // A new login loads it; cua finds it with no backend named.
    drop(shell);
    let _shell = gnome_login(&person, &system_bus);
    let (log, window) = person.launch_fixture();
    let checks = person.checks();
    assert_eq!(check(&checks, "gnome_shell")["ok"], true, "{checks}");
    drive(&person, &log, &window);

    // Any other program of the session is refused.
    let other = Command::new("gdbus")
        .args(["call", "--session", "--dest", "org.cua.Shell"])
        .args([
            "--object-path",
            "/org/cua/Shell",
            "--method",
            "org.cua.Shell.Windows",
        ])
        .env("DBUS_SESSION_BUS_ADDRESS", &person.address)
        .output()
        .expect("gdbus");
    let refusal = said(&other);
    assert!(!other.status.success(), "{refusal}");
    assert!(refusal.contains("AccessDenied"), "{refusal}");
    assert!(refusal.contains("cua permissions grant gnome"), "{refusal}");

    let disabled = person.cua(&["permissions", "revoke", "gnome"]);
    assert!(disabled.status.success(), "{}", said(&disabled));
    assert!(!extension.exists());
    wait_until("GNOME Shell shuts cua out again", || {
        person.tool("list_windows", json!({})).is_err()
    });
}
