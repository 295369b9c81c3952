//! The Wayland sandbox: a headless sway (wlroots' headless backend, software rendering, one
//! output of the sandbox's size), with the session bus and accessibility bus every sandbox
//! has. Apps started in it are native Wayland clients (see `DesktopEnv::app_env`).
//!
//! sway refuses to run as root: under root it runs as `nobody` (setpriv), in a runtime
//! folder that user can enter, made outside the sandbox folder (which sits in root's
//! private state folder) and removed with the sandbox. Root's apps reach its socket all the
//! same.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{START_TIMEOUT, Sandbox, SandboxError, list_running};

/// Wayland sandboxes are numbered from here (`--display` picks them), apart from X's.
const WAYLAND_NUMBERS: u32 = 1000;
/// The unprivileged user sway runs as when cua runs as root.
const NOBODY: u32 = 65534;

impl Sandbox {
    pub(super) fn boot_wayland(
        &mut self,
        root: &Path,
        unique: &str,
        owned: bool,
    ) -> Result<(), SandboxError> {
        self.claim_wayland_number(root, unique)?;
        self.start_session_bus(owned)?;

        let as_root = nix::unistd::getuid().is_root();
        let runtime = if as_root {
            // World-enterable and kept across reboots' cleaners alike on Debian; /tmp may
            // be private to root.
            let dir = PathBuf::from("/var/tmp").join(format!("cua-wayland-{unique}"));
            self.state.outside_dirs.push(dir.clone());
            dir
        } else {
            self.dir.join("compositor-runtime")
        };
        private_dir(&runtime)?;
        let config = runtime.join("sway.config");
        std::fs::write(&config, sway_config(self.state.width, self.state.height))?;
        if as_root {
            let nobody = Some(nix::unistd::Uid::from_raw(NOBODY));
            for path in [&runtime, &config] {
                nix::unistd::chown(path.as_path(), nobody, None)
                    .map_err(|e| SandboxError::Start(format!("chown {}: {e}", path.display())))?;
            }
        }

        let mut sway = if as_root {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={NOBODY}"))
                .arg(format!("--regid={NOBODY}"))
                .arg("--clear-groups")
                // Changing user clears the parent-death signal; setpriv sets it again.
                .args(["--pdeathsig", if owned { "TERM" } else { "clear" }])
                .arg("sway");
            c
        } else {
            Command::new("sway")
        };
        sway.arg("--config")
            .arg(&config)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("HOME", &runtime)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1");
        let pid = self.spawn("sway", sway, owned)?;
        let (socket, ipc) = wait_for_sockets(&runtime, pid, &self.dir)?;
        self.state.wayland_socket = Some(socket.clone());
        self.state.sway_socket = Some(ipc.clone());
        self.hold_seat(&socket, &ipc, owned)?;
        self.save_state()?;
        Ok(())
    }

    /// Takes a Wayland sandbox number (its marker removed with the sandbox) and names the
    /// folder after it: every compositor's sandbox starts so.
    pub(super) fn claim_wayland_number(
        &mut self,
        root: &Path,
        unique: &str,
    ) -> Result<(), SandboxError> {
        self.state.display = claim_number(root)?;
        self.state
            .outside_dirs
            .push(claim_path(root, self.state.display));
        self.name_folder(root, unique)
    }

    /// Gives the seat a pointer and a keyboard that stay while the sandbox runs (see
    /// `hold_seat`): a thread of this process for an owned sandbox, a process of its own
    /// for a detached one; ready once sway lists both devices.
    fn hold_seat(&mut self, socket: &Path, ipc: &Path, owned: bool) -> Result<(), SandboxError> {
        let socket = socket.to_path_buf();
        self.start_holder("seat-holder", "hold-seat", owned, move || {
            crate::platform::hold_wayland_seat(&socket);
        })?;
        let deadline = Instant::now() + START_TIMEOUT;
        while !crate::platform::wayland_seat_ready(ipc) {
            if Instant::now() >= deadline {
                return Err(SandboxError::Start(format!(
                    "the seat holder gave sway no pointer and keyboard within {} s",
                    START_TIMEOUT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

/// One output of the sandbox's size at the origin; windows float at their own size, as
/// under X11's window manager (the harness sizes them), never decorated, never focused by
/// the pointer passing over them.
fn sway_config(width: u32, height: u32) -> String {
    format!(
        "output HEADLESS-1 resolution {width}x{height} position 0 0\n\
         xwayland disable\n\
         default_border none\n\
         default_floating_border none\n\
         focus_follows_mouse no\n\
         for_window [app_id=\".*\"] floating enable\n"
    )
}

/// The marker that holds a Wayland sandbox number while its sandbox runs.
fn claim_path(root: &Path, number: u32) -> PathBuf {
    root.join(format!(".wayland-{number}"))
}

/// Claims the lowest free Wayland sandbox number: its marker folder is made atomically, so
/// sandboxes started at the same moment get numbers of their own (as Xvfb's lock files give
/// X displays). A marker whose sandbox no longer runs is taken over.
///
/// Claims are made one at a time under a lock on the root: taking a stale marker over is a
/// remove then a create, and two claimers that both saw it stale would otherwise each
/// remove the other's fresh marker and both get its number (seen in CI).
fn claim_number(root: &Path) -> Result<u32, SandboxError> {
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join(".wayland-numbers.lock"))?;
    let _held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, errno)| std::io::Error::from(errno))?;
    let running: Vec<u32> = list_running().iter().map(|(s, _)| s.display).collect();
    for number in WAYLAND_NUMBERS..WAYLAND_NUMBERS + 1000 {
        let marker = claim_path(root, number);
        match std::fs::create_dir(&marker) {
            Ok(()) => return Ok(number),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = !running.contains(&number)
                    && std::fs::metadata(&marker)
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t.elapsed().unwrap_or_default() > START_TIMEOUT);
                if stale
                    && std::fs::remove_dir(&marker).is_ok()
                    && std::fs::create_dir(&marker).is_ok()
                {
                    return Ok(number);
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(SandboxError::Start(
        "no free Wayland sandbox number (1000 are in use)".into(),
    ))
}

/// Waits until sway listens: its Wayland socket and its IPC socket in `runtime`.
fn wait_for_sockets(
    runtime: &Path,
    pid: u32,
    dir: &Path,
) -> Result<(PathBuf, PathBuf), SandboxError> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let found = |wanted: &dyn Fn(&str) -> bool| {
            std::fs::read_dir(runtime).ok()?.flatten().find_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                wanted(&name).then(|| e.path())
            })
        };
        let socket = found(&|n| n.starts_with("wayland-") && !n.ends_with(".lock"));
        let ipc = found(&|n| n.starts_with("sway-ipc.") && n.ends_with(".sock"));
        let log = || std::fs::read_to_string(dir.join("sway.log")).unwrap_or_default();
        if let (Some(socket), Some(ipc)) = (socket, ipc) {
            // A line sway did not take would leave it running, unlike the sandbox cua
            // means (and shows a bar over the windows saying so).
            if let Some(error) = log().lines().find(|l| l.contains("[sway/config.c")) {
                return Err(SandboxError::Start(format!(
                    "sway rejected its config: {error}"
                )));
            }
            return Ok((socket, ipc));
        }
        let exited = super::is_zombie(pid);
        if exited || Instant::now() >= deadline {
            return Err(start_failed("sway", dir, exited, "listen"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Makes `dir` (and its parents), readable by its owner alone: a compositor's runtime
/// folder.
pub(super) fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
}

/// Waits until compositor `name` (pid `pid`) listens on `socket` and `ready` says it
/// answers; else why not (see [`start_failed`], `what` it did not do).
pub(super) fn wait_for_listener(
    name: &str,
    socket: PathBuf,
    pid: u32,
    dir: &Path,
    what: &str,
    ready: impl Fn(&Path) -> bool,
) -> Result<PathBuf, SandboxError> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if socket.exists() && ready(&socket) {
            return Ok(socket);
        }
        let exited = super::is_zombie(pid);
        if exited || Instant::now() >= deadline {
            return Err(start_failed(name, dir, exited, what));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Why a compositor did not come up: it exited, or did not do `what` within the start
/// bound; with the last lines of its log (`<name>.log` in the sandbox folder `dir`).
pub(super) fn start_failed(name: &str, dir: &Path, exited: bool, what: &str) -> SandboxError {
    let log = std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(5).collect();
    SandboxError::Start(format!(
        "{name} {} (log: {:?})",
        if exited {
            "exited at start".to_string()
        } else {
            format!("did not {what} within {} s", START_TIMEOUT.as_secs())
        },
        tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
    ))
}
