//! The sandbox guard: several desktops at once, and teardown on drop even when the owner
//! panics.

use cua::desktop::process_start_time;
use cua::sandbox::{Sandbox, SandboxOptions};

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

fn owned_pids(sandbox: &Sandbox) -> Vec<u32> {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.dir().join("state.json")).unwrap())
            .unwrap();
    state["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn two_sandboxes_run_side_by_side_and_a_panicking_owner_still_tears_down() {
    let first = Sandbox::start(SandboxOptions {
        width: 640,
        height: 480,
        ..Default::default()
    })
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let owner = std::thread::spawn(move || {
        let mut second = Sandbox::start(SandboxOptions {
            width: 800,
            height: 600,
            ..Default::default()
        })
        .unwrap();
        let app = second.spawn_app("sleep", &["600"]).ok();
        let mut pids = owned_pids(&second);
        pids.extend(app);
        tx.send((second.display(), pids, second.dir().to_path_buf()))
            .unwrap();
        panic!("owner fails mid-test");
    });
    let (display, pids, dir) = rx.recv().unwrap();
    assert_ne!(
        display,
        first.display(),
        "each sandbox gets its own display"
    );
    assert!(owner.join().is_err(), "the owner thread panicked");
    std::thread::sleep(std::time::Duration::from_millis(300));
    for pid in &pids {
        assert!(
            !alive(*pid),
            "pid {pid} of the panicked sandbox is still running"
        );
    }
    assert!(
        !dir.exists(),
        "state directory {} left behind",
        dir.display()
    );
    // The first one is untouched.
    for pid in owned_pids(&first) {
        assert!(
            alive(pid) && process_start_time(pid).is_some(),
            "first sandbox lost pid {pid}"
        );
    }
}

/// Sandboxes started and stopped concurrently, in a loop, on the displays the previous
/// round just freed: every new sandbox keeps its own folder, bus sockets and accessibility
/// bus while others tear down. (A folder named by display number alone let a stopping
/// sandbox delete the folder a new sandbox had just made under the same number: "cannot
/// reach the accessibility bus: No such file or directory".)
#[test]
fn sandboxes_started_and_stopped_concurrently_never_touch_each_other() {
    const ROUNDS: usize = 6;
    const AT_ONCE: usize = 3;
    // An at-spi-bus-launcher activated by a sandbox's session bus with the user's own
    // environment put every sandbox's accessibility bus at this one shared path.
    let shared_bus =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/at-spi"));
    let existed = shared_bus.as_ref().is_some_and(|p| p.exists());
    let workers: Vec<_> = (0..AT_ONCE)
        .map(|w| {
            std::thread::spawn(move || {
                let rt = cua::tools::runtime().unwrap();
                let mut seen = Vec::new();
                for round in 0..ROUNDS {
                    let sb = Sandbox::start(SandboxOptions {
                        width: 640,
                        height: 480,
                        ..Default::default()
                    })
                    .unwrap_or_else(|e| panic!("worker {w} round {round}: {e}"));
                    let dir = sb.dir().to_path_buf();
                    // The accessibility bus answers, and the folder is whole, even while
                    // the other workers' sandboxes stop.
                    let env = sb.desktop();
                    let platform = cua::platform::connect(&env).unwrap();
                    let checks = rt.block_on(platform.check_permissions());
                    assert!(
                        checks.iter().all(|c| c.ok),
                        "worker {w} round {round} ({}): {checks:?}",
                        dir.display()
                    );
                    for f in ["state.json", "bus", "home", "app-runtime"] {
                        assert!(
                            dir.join(f).exists(),
                            "worker {w} round {round}: {} lost {f}",
                            dir.display()
                        );
                    }
                    seen.push((sb.display(), dir.clone()));
                    drop(sb);
                    assert!(!dir.exists(), "{} left behind", dir.display());
                }
                seen
            })
        })
        .collect();
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.join().expect("a worker failed"));
    }
    if let Some(p) = shared_bus.filter(|_| !existed) {
        assert!(
            !p.exists(),
            "{} was created outside the sandboxes",
            p.display()
        );
    }
    let dirs: std::collections::HashSet<_> = all.iter().map(|(_, d)| d.clone()).collect();
    assert_eq!(
        dirs.len(),
        all.len(),
        "every sandbox had a folder of its own"
    );
    let displays: std::collections::HashSet<_> = all.iter().map(|(d, _)| *d).collect();
    println!(
        "{} sandboxes on {} distinct displays, {} at once",
        all.len(),
        displays.len(),
        AT_ONCE
    );
}

#[test]
fn apps_in_a_sandbox_write_only_inside_it() {
    let mut sb = Sandbox::start(SandboxOptions {
        width: 640,
        height: 480,
        ..Default::default()
    })
    .unwrap();
    let marker = format!("cua-hermetic-{}", std::process::id());
    let script = format!(
        "mkdir -p \"$XDG_DATA_HOME/{marker}\" \"$XDG_STATE_HOME/{marker}\" \"$XDG_CACHE_HOME/{marker}\" && \
         echo draft > \"$HOME/{marker}.txt\" && env > \"$HOME/env.txt\""
    );
    sb.spawn_app("sh", &["-c", &script]).unwrap();
    let home = sb.dir().join("home");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !home.join("env.txt").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let env = std::fs::read_to_string(home.join("env.txt")).expect("the app wrote its env");
    for (k, v) in [
        ("TZ", "UTC"),
        ("LANG", "C.UTF-8"),
        ("GSETTINGS_BACKEND", "memory"),
    ] {
        assert!(env.contains(&format!("{k}={v}\n")), "{k} in {env}");
    }
    assert!(home.join(format!("{marker}.txt")).exists());
    for sub in [".local/share", ".local/state", ".cache"] {
        assert!(home.join(sub).join(&marker).is_dir(), "{sub}");
    }
    // Nothing reached the real home.
    if let Some(real) = std::env::var_os("HOME") {
        let real = std::path::PathBuf::from(real);
        for p in [
            real.join(format!("{marker}.txt")),
            real.join(".local/share").join(&marker),
            real.join(".local/state").join(&marker),
            real.join(".cache").join(&marker),
        ] {
            assert!(
                !p.exists(),
                "{} was written outside the sandbox",
                p.display()
            );
        }
    }
}

/// The pointer rests in the bottom-right corner, away from where windows open: a hovered
/// widget shows a tooltip after a load-dependent delay, and a golden must not depend on it.
#[test]
fn a_new_sandbox_parks_the_pointer_in_the_bottom_right_corner() {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::ConnectionExt;
    let sandbox = Sandbox::start(SandboxOptions {
        width: 800,
        height: 600,
        ..Default::default()
    })
    .unwrap();
    let (conn, screen) = x11rb::connect(Some(&sandbox.display_name())).unwrap();
    let root = conn.setup().roots[screen].root;
    let at = conn.query_pointer(root).unwrap().reply().unwrap();
    assert_eq!((at.root_x, at.root_y), (799, 599));
}

/// Wayland sandboxes started at the same moment each get a compositor, a number and a
/// socket of their own; dropping one (its owner panicking) ends its processes and removes
/// its folders, the one outside its state folder too (sway's runtime folder under root),
/// and leaves the other running.
#[test]
fn wayland_sandboxes_start_side_by_side_and_a_panicking_owner_still_tears_down() {
    sandboxes_start_side_by_side_and_tear_down(cua::sandbox::Backend::Wayland);
}

/// The same for GNOME Shell sandboxes, whose shell starts helpers of its own: none of
/// them may outlive the sandbox either.
#[test]
fn gnome_sandboxes_start_side_by_side_and_a_panicking_owner_still_tears_down() {
    sandboxes_start_side_by_side_and_tear_down(cua::sandbox::Backend::Gnome);
}

/// The same for KWin sandboxes, each running its own copy of kwin_wayland.
#[test]
fn kde_sandboxes_start_side_by_side_and_a_panicking_owner_still_tears_down() {
    sandboxes_start_side_by_side_and_tear_down(cua::sandbox::Backend::Kde);
}

fn sandboxes_start_side_by_side_and_tear_down(backend: cua::sandbox::Backend) {
    let options = SandboxOptions {
        width: 640,
        height: 480,
        backend,
    };
    // A marker left by a sandbox that was killed, on the number both would take: both
    // see it stale at once, and only one may take it over (CI once gave both 1000).
    let stale = plant_stale_wayland_marker();
    // A sandbox's processes die with the thread that started it: each starts on the
    // thread that owns it, both at once.
    let (tx, rx) = std::sync::mpsc::channel();
    let owner = std::thread::spawn(move || {
        let second = Sandbox::start(options).unwrap();
        let state: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(second.dir().join("state.json")).unwrap(),
        )
        .unwrap();
        tx.send((
            second.display(),
            second.display_name(),
            owned_pids(&second),
            second.dir().to_path_buf(),
            state["outside_dirs"].clone(),
        ))
        .unwrap();
        panic!("owner fails mid-test");
    });
    let first = Sandbox::start(options).unwrap();
    let (number, socket, pids, dir, outside) = rx.recv().unwrap();
    assert_ne!(number, first.display(), "each sandbox gets its own number");
    assert_ne!(
        socket,
        first.display_name(),
        "each sandbox gets its own socket"
    );
    assert!(owner.join().is_err());
    std::thread::sleep(std::time::Duration::from_millis(300));
    for pid in &pids {
        assert!(!alive(*pid), "pid {pid} of the dropped sandbox still runs");
    }
    assert!(!dir.exists(), "{} left behind", dir.display());
    for o in outside.as_array().unwrap() {
        let o = std::path::Path::new(o.as_str().unwrap());
        assert!(!o.exists(), "{} left behind", o.display());
    }
    assert!(!std::path::Path::new(&socket).exists());
    assert!(
        !processes_of(first.dir()).is_empty(),
        "the running sandbox's processes are found by their environment"
    );
    let left = processes_of(&dir);
    assert!(
        left.is_empty(),
        "processes of the dropped sandbox still run: {left:?}"
    );
    // The first one still answers on its socket.
    assert!(std::os::unix::net::UnixStream::connect(first.display_name()).is_ok());
    for pid in owned_pids(&first) {
        assert!(alive(pid), "first sandbox lost pid {pid}");
    }
    let _ = std::fs::remove_dir(stale);
}

/// Makes the lowest free Wayland sandbox marker as a killed sandbox leaves it: there, and
/// older than any start could take.
fn plant_stale_wayland_marker() -> std::path::PathBuf {
    let root = cua::sandbox::state_root();
    std::fs::create_dir_all(&root).unwrap();
    let marker = (1000..2000)
        .map(|n| root.join(format!(".wayland-{n}")))
        .find(|m| std::fs::create_dir(m).is_ok())
        .unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::open(&marker)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    marker
}

/// Live processes whose environment puts them in the sandbox at `dir` (helpers a display
/// server started, which the sandbox never listed).
fn processes_of(dir: &std::path::Path) -> Vec<String> {
    let wanted = format!("CUA_SANDBOX_DIR={}", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
        })
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            format!("{pid} {}", String::from_utf8_lossy(&cmd).replace('\0', " "))
        })
        .collect()
}
