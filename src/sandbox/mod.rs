//! The headless desktop: a display server (Xvfb with openbox and a Composite redirect
//! holder, a headless sway: [`wayland`], or a headless GNOME Shell: [`gnome`]), a private
//! D-Bus session bus and the AT-SPI bus, started together and ended together.
//!
//! [`Sandbox::start`] returns a guard that tears the desktop down on drop (panics
//! included; its processes also die with the thread that started them). The CLI uses
//! [`Sandbox::start_detached`], which leaves the desktop running and records it in a state
//! directory so `cua sandbox status|exec|stop` can find it later. Every process the
//! sandbox starts, and every app launched into it, is listed in that directory by pid.

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

#[cfg(feature = "wayland")]
mod gnome;
#[cfg(feature = "wayland")]
mod kde;
#[cfg(feature = "wayland")]
mod wayland;

pub use crate::desktop::Backend;
use crate::desktop::{DesktopEnv, prepare_app_homes};
use crate::desktop::{SANDBOX_DIR_ENV, config_home, process_start_time};

/// A screen or window size, `WIDTHxHEIGHT`, 200-8192 per side.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not WIDTHxHEIGHT"))?;
    let w: u32 = w.parse().map_err(|_| format!("bad width in `{s}`"))?;
    let h: u32 = h.parse().map_err(|_| format!("bad height in `{s}`"))?;
    if !(200..=8192).contains(&w) || !(200..=8192).contains(&h) {
        return Err(format!("size `{s}` out of range (200-8192 per side)"));
    }
    Ok((w, h))
}

/// Toolkit settings for apps in the sandbox: no caret blink and no animations, so two runs
/// of the same steps draw the same pixels (goldens compare screenshots). GTK reads its
/// settings.ini (browsers on Linux follow GTK's caret setting). Qt takes a caret rate
/// only from a platform theme: the KDE one is built into Qt and reads `kdeglobals`
/// (selected by [`crate::desktop::hermetic_env`]); its colours are set to Qt's own Fusion
/// palette, so a Qt window draws exactly as under Qt's default theme, with a steady caret.
fn write_toolkit_settings(dir: &Path) -> std::io::Result<()> {
    for toolkit in ["gtk-3.0", "gtk-4.0"] {
        let folder = config_home(dir).join(toolkit);
        std::fs::create_dir_all(&folder)?;
        std::fs::write(
            folder.join("settings.ini"),
            "[Settings]\ngtk-cursor-blink = false\ngtk-enable-animations = false\n",
        )?;
    }
    std::fs::write(config_home(dir).join("kdeglobals"), KDE_GLOBALS)?;
    // On Wayland GTK takes these from GSettings, not settings.ini: the same values, and the
    // font and rendering GTK uses on X11 when no settings daemon runs (full hinting,
    // greyscale antialiasing: measured, 131 pixels of a GTK 3 window then differ by at most
    // 2 of 255 between the two), so a golden recorded on one passes on the other; and the
    // title-bar buttons GTK shows under X11 (GNOME's default on Wayland is a close button
    // alone, which changed the trees of client-side-decorated apps).
    let gsettings = config_home(dir).join("glib-2.0/settings");
    std::fs::create_dir_all(&gsettings)?;
    std::fs::write(gsettings.join("keyfile"), GSETTINGS_KEYFILE)?;
    Ok(())
}

/// GSettings for apps in a Wayland sandbox (`GSETTINGS_BACKEND=keyfile` there).
const GSETTINGS_KEYFILE: &str = "[org/gnome/desktop/interface]
font-name='Sans 10'
font-hinting='full'
font-antialiasing='grayscale'
cursor-blink=false
enable-animations=false
[org/gnome/desktop/wm/preferences]
button-layout=':minimize,maximize,close'
";

/// Qt's KDE theme settings: a caret that never blinks, in Fusion's colours.
const KDE_GLOBALS: &str = "[KDE]
CursorBlinkRate=0
[Colors:Button]
BackgroundNormal=239,239,239
ForegroundNormal=0,0,0
[Colors:Window]
BackgroundNormal=239,239,239
ForegroundNormal=0,0,0
[Colors:View]
BackgroundNormal=255,255,255
ForegroundNormal=0,0,0
BackgroundAlternate=247,247,247
[Colors:Selection]
BackgroundNormal=48,140,198
ForegroundNormal=255,255,255
";
/// How long the accessibility bus and the window manager may take to come up (usually
/// well under a second).
#[cfg_attr(not(feature = "linux"), allow(dead_code))]
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How many fresh desktops a start tries when openbox stalls: three times in one session's
/// full-suite runs on two cores, openbox was running but had not taken the screen after
/// 20 s (once not after 60 s), while four desktops started at once take 0.9 s. A new
/// desktop (new display, new openbox) is the bounded way past it; each stall is reported.
const START_ATTEMPTS: u32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("`{program}` is not installed ({package}); run scripts/setup")]
    Missing { program: String, package: String },
    #[error("sandbox: {0}")]
    Start(String),
    /// The window manager has not taken the screen in time: it stalled, or it exited (a
    /// fresh desktop is tried).
    #[error("sandbox: {0}")]
    WindowManagerStalled(String),
    #[error("sandbox: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    NotFound(String),
}

/// Screen size and display server of a new sandbox.
#[derive(Debug, Clone, Copy)]
pub struct SandboxOptions {
    pub width: u32,
    pub height: u32,
    pub backend: Backend,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            width: 1920,
            height: 1080,
            backend: Backend::X11,
        }
    }
}

/// A process the sandbox owns, with its start time so a recycled pid is never killed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OwnedProcess {
    pub pid: u32,
    pub name: String,
    pub start_time: u64,
}

/// What `state.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SandboxState {
    /// The X display number; a Wayland sandbox's number of its own (from
    /// `WAYLAND_NUMBERS`), which `--display` picks it by too.
    pub display: u32,
    #[serde(default)]
    pub backend: Backend,
    /// The compositor's socket and sway's IPC socket (Wayland sandboxes).
    #[serde(default)]
    pub wayland_socket: Option<PathBuf>,
    #[serde(default)]
    pub sway_socket: Option<PathBuf>,
    /// Folders the sandbox made outside its own (the compositor's runtime folder when it
    /// runs as another user), removed with it.
    #[serde(default)]
    pub outside_dirs: Vec<PathBuf>,
    pub dbus_address: String,
    pub width: u32,
    pub height: u32,
    pub processes: Vec<OwnedProcess>,
    pub created: String,
}

impl SandboxState {
    /// How `--display` names it: `:N` for an X display, `N` for a Wayland sandbox.
    pub fn display_label(&self) -> String {
        match self.backend {
            Backend::X11 => format!(":{}", self.display),
            Backend::Wayland | Backend::Gnome | Backend::Kde => self.display.to_string(),
        }
    }
}

/// A running headless desktop.
pub struct Sandbox {
    state: SandboxState,
    dir: PathBuf,
    /// Tear down on drop (guard mode) or leave running (detached CLI mode).
    owned: bool,
}

/// Where sandbox state directories live (one folder per sandbox, named uniquely).
pub fn state_root() -> PathBuf {
    crate::files::state_root().join("sandboxes")
}

fn require(program: &str, package: &str) -> Result<(), SandboxError> {
    let found = Path::new(program).is_absolute() && Path::new(program).exists()
        || find_program(program).is_some();
    if found {
        Ok(())
    } else {
        Err(SandboxError::Missing {
            program: program.into(),
            package: package.into(),
        })
    }
}

/// Where `program` is on the PATH.
fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|f| f.is_file())
}

fn alive_and_same(p: &OwnedProcess) -> bool {
    process_start_time(p.pid) == Some(p.start_time)
}

impl Sandbox {
    /// Starts a desktop owned by the caller: dropped, it ends every process it started.
    pub fn start(options: SandboxOptions) -> Result<Sandbox, SandboxError> {
        Self::start_retrying(options, true)
    }

    /// Starts a desktop that outlives this process (for `cua sandbox start`).
    pub fn start_detached(options: SandboxOptions) -> Result<Sandbox, SandboxError> {
        Self::start_retrying(options, false)
    }

    /// A start that tries a fresh desktop when the window manager stalls (the failed one
    /// is torn down first, as every failed start is).
    fn start_retrying(options: SandboxOptions, owned: bool) -> Result<Sandbox, SandboxError> {
        let mut attempt = 1;
        loop {
            match Self::start_inner(options, owned) {
                Err(SandboxError::WindowManagerStalled(why)) if attempt < START_ATTEMPTS => {
                    attempt += 1;
                    eprintln!(
                        "cua sandbox: {why}; starting a fresh desktop (attempt {attempt} of {START_ATTEMPTS})"
                    );
                }
                other => return other,
            }
        }
    }

    fn start_inner(options: SandboxOptions, owned: bool) -> Result<Sandbox, SandboxError> {
        match options.backend {
            Backend::X11 => {
                require("Xvfb", "xvfb")?;
                require("openbox", "openbox")?;
            }
            Backend::Wayland => require("sway", "sway")?,
            Backend::Gnome => require("gnome-shell", "gnome-shell")?,
            Backend::Kde => require("kwin_wayland", "kwin-wayland")?,
        }
        require("dbus-daemon", "dbus")?;
        require("/usr/libexec/at-spi-bus-launcher", "at-spi2-core")?;
        let root = state_root();
        std::fs::create_dir_all(&root)?;
        // Unique to this start: the folder is named `<display>-<unique>` once the display
        // is known, `.starting-<unique>` until then.
        let unique = format!(
            "{}-{}",
            std::process::id(),
            chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
        );
        let staging = root.join(format!(".starting-{unique}"));
        std::fs::create_dir_all(&staging)?;

        let mut sandbox = Sandbox {
            state: SandboxState {
                display: 0,
                backend: options.backend,
                wayland_socket: None,
                sway_socket: None,
                outside_dirs: Vec::new(),
                dbus_address: String::new(),
                width: options.width,
                height: options.height,
                processes: Vec::new(),
                created: chrono::Utc::now().to_rfc3339(),
            },
            dir: staging.clone(),
            // Until fully up, a failure must clean up whatever started.
            owned: true,
        };
        match options.backend {
            Backend::X11 => sandbox.boot(&root, &unique, owned)?,
            #[cfg(feature = "wayland")]
            Backend::Wayland => sandbox.boot_wayland(&root, &unique, owned)?,
            #[cfg(feature = "wayland")]
            Backend::Gnome => sandbox.boot_gnome(&root, &unique, owned)?,
            #[cfg(feature = "wayland")]
            Backend::Kde => sandbox.boot_kde(&root, &unique, owned)?,
            #[cfg(not(feature = "wayland"))]
            Backend::Wayland | Backend::Gnome | Backend::Kde => {
                return Err(SandboxError::Start(
                    "this build of cua has no Wayland backend (build it with the `wayland` feature, on by default)".into(),
                ));
            }
        }
        sandbox.owned = owned;
        Ok(sandbox)
    }

    fn boot(&mut self, root: &Path, unique: &str, owned: bool) -> Result<(), SandboxError> {
        // Xvfb picks a free display itself and writes its number to -displayfd.
        let (read_end, write_end) =
            nix::unistd::pipe().map_err(|e| SandboxError::Start(e.to_string()))?;
        // Both ends close on exec: sandboxes started on other threads at the same moment
        // must not inherit this pipe (a leaked write end kept our read from ever ending).
        // Only Xvfb gets the write end, made inheritable between its fork and exec.
        for end in [&read_end, &write_end] {
            nix::fcntl::fcntl(
                end,
                nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
            )
            .map_err(|e| SandboxError::Start(e.to_string()))?;
        }
        let mut xvfb = Command::new("Xvfb");
        let inherited = write_end.as_raw_fd();
        // SAFETY: the closure runs in the forked child before exec and only calls fcntl(2),
        // which is async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            xvfb.pre_exec(move || {
                if libc::fcntl(inherited, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        xvfb.args([
            "-displayfd",
            &write_end.as_raw_fd().to_string(),
            "-screen",
            "0",
            &format!("{}x{}x24", self.state.width, self.state.height),
            "-nolisten",
            "tcp",
            "-noreset",
            "+extension",
            "Composite",
            "+extension",
            "XTEST",
        ]);
        self.spawn("Xvfb", xvfb, owned)?;
        drop(write_end);
        // Xvfb writes the number and a newline once it listens; read that line only.
        let mut number = String::new();
        BufReader::new(std::fs::File::from(read_end)).read_line(&mut number)?;
        self.state.display = number.trim().parse().map_err(|_| {
            SandboxError::Start(format!(
                "Xvfb did not report a display (log: {})",
                self.dir.join("Xvfb.log").display()
            ))
        })?;

        self.name_folder(root, unique)?;

        let mut setxkb = self.command("setxkbmap");
        setxkb
            .args(["-layout", "us"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // The keymap matters for typed text; without setxkbmap Xvfb's default is already us.
        let _ = setxkb.status();

        self.start_session_bus(owned)?;

        let openbox = self.command("openbox");
        let openbox = self.spawn("openbox", openbox, owned)?;
        self.wait_for_window_manager(openbox)?;
        self.park_pointer()?;

        let display = self.display_name();
        self.start_holder("composite-holder", "hold-composite", owned, move || {
            let _ = hold_composite_redirect(&display);
        })?;
        // Content shows up in the redirected storage a moment after the redirect.
        std::thread::sleep(Duration::from_millis(300));
        self.save_state()?;
        Ok(())
    }

    /// Names the folder after its display for people, and after this start for
    /// uniqueness: a display number is reused as soon as its server exits, and a sandbox
    /// still tearing down must never remove a newer sandbox's folder. Then writes what the
    /// apps read there.
    fn name_folder(&mut self, root: &Path, unique: &str) -> Result<(), SandboxError> {
        let final_dir = root.join(format!("{}-{unique}", self.state.display));
        std::fs::rename(&self.dir, &final_dir).map_err(|e| within(&self.dir, e))?;
        self.dir = final_dir;
        write_toolkit_settings(&self.dir).map_err(|e| within(&self.dir, e))?;
        prepare_app_homes(&self.dir).map_err(|e| within(&self.dir, e))?;
        Ok(())
    }

    /// Starts something that holds the desktop in a state for as long as it runs (the
    /// Composite redirect, the Wayland seat's devices): a thread of this process for an
    /// owned sandbox, else `cua sandbox <subcommand>`, a process the sandbox lists and
    /// ends. Either way it exits when its display server goes away.
    fn start_holder(
        &mut self,
        name: &str,
        subcommand: &str,
        owned: bool,
        hold: impl FnOnce() + Send + 'static,
    ) -> Result<(), SandboxError> {
        if owned {
            std::thread::spawn(hold);
        } else {
            let exe = std::env::current_exe()?;
            let mut holder = self.command(exe.to_string_lossy().as_ref());
            holder.args(["sandbox", subcommand]);
            self.spawn(name, holder, owned)?;
        }
        Ok(())
    }

    /// Starts `dbus` (a dbus-daemon) as a private bus listening at `socket` in the
    /// sandbox folder, and returns its address.
    fn start_bus(
        &mut self,
        name: &str,
        mut dbus: Command,
        socket: &str,
        owned: bool,
    ) -> Result<String, SandboxError> {
        dbus.args([
            "--session",
            "--nofork",
            "--print-address=1",
            &format!("--address=unix:path={}", self.dir.join(socket).display()),
        ])
        .stdout(Stdio::piped());
        let mut child = self.spawn_child(name, dbus, owned)?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| SandboxError::Start(format!("{name}: no stdout")))?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        match line.trim() {
            "" => Err(SandboxError::Start(format!(
                "{name} did not print its address"
            ))),
            address => Ok(address.to_string()),
        }
    }

    /// The private session bus and the accessibility bus on it, switched on.
    fn start_session_bus(&mut self, owned: bool) -> Result<(), SandboxError> {
        // The session bus starts the services it activates with its own environment:
        // inside the sandbox it gets the apps' hermetic one, so nothing it activates
        // writes into the user's home or shares a socket with another sandbox.
        let dbus = self.command("dbus-daemon");
        self.state.dbus_address = self.start_bus("dbus-daemon", dbus, "bus", owned)?;

        // The accessibility bus socket is named after the display number under
        // XDG_RUNTIME_DIR; a private runtime dir keeps a dying sandbox that had the same
        // number from deleting this one's socket.
        let runtime = self.dir.join("runtime");
        std::fs::create_dir_all(&runtime)?;
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )?;
        let mut launcher = self.command("/usr/libexec/at-spi-bus-launcher");
        launcher
            .arg("--launch-immediately")
            .env("XDG_RUNTIME_DIR", &runtime);
        self.spawn("at-spi-bus-launcher", launcher, owned)?;
        self.enable_accessibility()
    }

    /// A command that runs inside this desktop.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.envs(self.desktop().app_env());
        cmd.env_remove("NO_AT_BRIDGE");
        cmd
    }

    /// The variables that put a shell on this desktop (what `cua sandbox start` prints):
    /// the display, the session bus and the sandbox folder, nothing that moves the
    /// user's own HOME or config.
    pub fn env(&self) -> Vec<(String, String)> {
        self.desktop().child_env()
    }

    /// How the platform layer addresses this desktop.
    pub fn desktop(&self) -> DesktopEnv {
        let wayland = self.state.backend.is_wayland();
        DesktopEnv {
            display: (!wayland).then(|| self.display_name()),
            wayland_display: self.state.wayland_socket.clone(),
            sway_socket: self.state.sway_socket.clone(),
            backend: Some(self.state.backend),
            dbus_address: Some(self.state.dbus_address.clone()),
            sandbox_dir: Some(self.dir.clone()),
            app_env: Vec::new(),
        }
    }

    /// The X display (`:N`), or the Wayland compositor's socket.
    pub fn display_name(&self) -> String {
        match &self.state.wayland_socket {
            Some(socket) => socket.to_string_lossy().into_owned(),
            None => format!(":{}", self.state.display),
        }
    }

    pub fn backend(&self) -> Backend {
        self.state.backend
    }

    pub fn display(&self) -> u32 {
        self.state.display
    }

    pub fn dbus_address(&self) -> &str {
        &self.state.dbus_address
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts an app inside the desktop and records its pid.
    pub fn spawn_app(&mut self, program: &str, args: &[&str]) -> Result<u32, SandboxError> {
        let mut cmd = self.command(program);
        cmd.args(args);
        self.spawn(program, cmd, self.owned)
    }

    fn spawn(&mut self, name: &str, cmd: Command, owned: bool) -> Result<u32, SandboxError> {
        let child = self.spawn_child(name, cmd, owned)?;
        let pid = child.id();
        std::thread::spawn(move || {
            let mut child = child;
            let _ = child.wait();
        });
        Ok(pid)
    }

    fn spawn_child(
        &mut self,
        name: &str,
        mut cmd: Command,
        owned: bool,
    ) -> Result<std::process::Child, SandboxError> {
        let log_path = self.dir.join(format!("{}.log", sanitize(name)));
        let log = std::fs::File::create(&log_path).map_err(|e| within(&log_path, e))?;
        cmd.stdin(Stdio::null()).stderr(log.try_clone()?);
        if !matches!(cmd.get_program().to_str(), Some("dbus-daemon")) {
            cmd.stdout(log);
        }
        cmd.process_group(0);
        if owned {
            // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    Ok(())
                });
            }
        }
        let child = spawn_retrying_busy(&mut cmd)
            .map_err(|e| SandboxError::Start(format!("cannot start {name}: {e}")))?;
        let pid = child.id();
        self.state.processes.push(OwnedProcess {
            pid,
            name: name.to_string(),
            start_time: process_start_time(pid).unwrap_or(0),
        });
        Ok(child)
    }

    /// Without the Linux backend (`--no-default-features`) a sandbox cannot come up.
    #[cfg(not(feature = "linux"))]
    fn enable_accessibility(&self) -> Result<(), SandboxError> {
        Err(SandboxError::Start(crate::platform::NO_BACKEND.into()))
    }

    #[cfg(not(feature = "linux"))]
    fn wait_for_window_manager(&self, _openbox: u32) -> Result<(), SandboxError> {
        Err(SandboxError::Start(crate::platform::NO_BACKEND.into()))
    }

    #[cfg(feature = "linux")]
    fn enable_accessibility(&self) -> Result<(), SandboxError> {
        let deadline = Instant::now() + START_TIMEOUT;
        let address = self.state.dbus_address.clone();
        loop {
            let attempt = (|| -> zbus::Result<()> {
                let conn =
                    zbus::blocking::connection::Builder::address(address.as_str())?.build()?;
                // Wait for our launcher to own org.a11y.Bus before calling it: a call to
                // an unowned name makes the session bus activate a second launcher of its
                // own, and two launchers racing over one bus left clients with a dead or
                // replaced bus ("No such file", "Server GUID mismatch"; found by the
                // sandbox stress test, 2 runs in 10).
                let owned = zbus::blocking::fdo::DBusProxy::new(&conn)?
                    .name_has_owner("org.a11y.Bus".try_into()?)?;
                if !owned {
                    return Err(zbus::Error::Failure(
                        "at-spi-bus-launcher does not own org.a11y.Bus yet".into(),
                    ));
                }
                let proxy = zbus::blocking::Proxy::new(
                    &conn,
                    "org.a11y.Bus",
                    "/org/a11y/bus",
                    "org.freedesktop.DBus.Properties",
                )?;
                proxy.call_method(
                    "Set",
                    &(
                        "org.a11y.Status",
                        "IsEnabled",
                        zbus::zvariant::Value::from(true),
                    ),
                )?;
                // The accessibility bus is up when the address it gives answers a handshake.
                let bus = zbus::blocking::Proxy::new(
                    &conn,
                    "org.a11y.Bus",
                    "/org/a11y/bus",
                    "org.a11y.Bus",
                )?;
                let a11y: String = bus.call("GetAddress", &())?;
                let a11y = zbus::blocking::connection::Builder::address(a11y.as_str())?.build()?;
                // The registry is started on its first call: make that call here, so an
                // app's registration as it starts never waits on (or races) the start.
                zbus::blocking::Proxy::new(
                    &a11y,
                    "org.a11y.atspi.Registry",
                    "/org/a11y/atspi/accessible/root",
                    "org.a11y.atspi.Accessible",
                )?
                .call_method("GetChildren", &())
                .map(drop)
            })();
            match attempt {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(SandboxError::Start(format!(
                        "accessibility bus did not come up: {e}"
                    )));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    #[cfg(feature = "linux")]
    fn wait_for_window_manager(&self, openbox: u32) -> Result<(), SandboxError> {
        use x11rb::connection::Connection;
        use x11rb::protocol::xproto::{AtomEnum, ConnectionExt};
        let deadline = Instant::now() + START_TIMEOUT;
        let display = self.display_name();
        loop {
            let ready = (|| -> Option<bool> {
                let (conn, screen) = x11rb::connect(Some(&display)).ok()?;
                let root = conn.setup().roots[screen].root;
                let atom = conn
                    .intern_atom(false, b"_NET_SUPPORTING_WM_CHECK")
                    .ok()?
                    .reply()
                    .ok()?
                    .atom;
                let reply = conn
                    .get_property(false, root, atom, AtomEnum::WINDOW, 0, 1)
                    .ok()?
                    .reply()
                    .ok()?;
                Some(reply.value_len > 0)
            })();
            if ready == Some(true) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                // The folder with the log goes with the failed start: say what it held.
                let log = std::fs::read_to_string(self.dir.join("openbox.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                let running = if is_zombie(openbox) {
                    "exited"
                } else {
                    "still running"
                };
                // Whether the X server itself still answers tells a stuck server from a
                // stuck window manager.
                let server = match x11rb::connect(Some(&display)) {
                    Ok((conn, _))
                        if conn
                            .get_input_focus()
                            .ok()
                            .and_then(|c| c.reply().ok())
                            .is_some() =>
                    {
                        "the X server answers"
                    }
                    _ => "the X server does not answer",
                };
                return Err(SandboxError::WindowManagerStalled(format!(
                    "openbox did not start within {} s on {display} ({running}, {server}; log: {:?})",
                    START_TIMEOUT.as_secs(),
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Moves the pointer to the bottom-right corner. Xvfb starts it at the screen centre,
    /// where a new window opens, so a widget there would be hovered and, after a delay that
    /// depends on load, show a tooltip (GTK 4 adds a tooltip window to the app's tree): a
    /// golden would then hold it on some runs and not others.
    #[cfg(not(feature = "linux"))]
    fn park_pointer(&self) -> Result<(), SandboxError> {
        Err(SandboxError::Start(crate::platform::NO_BACKEND.into()))
    }

    #[cfg(feature = "linux")]
    fn park_pointer(&self) -> Result<(), SandboxError> {
        use x11rb::connection::Connection;
        use x11rb::protocol::xproto::ConnectionExt;
        let display = self.display_name();
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            SandboxError::Start(format!("parking the pointer on {display}: {what}: {e}"))
        };
        let (conn, screen) = x11rb::connect(Some(&display)).map_err(|e| failed("connect", &e))?;
        let root = conn.setup().roots[screen].root;
        let corner = (self.state.width as i16 - 1, self.state.height as i16 - 1);
        conn.warp_pointer(x11rb::NONE, root, 0, 0, 0, 0, corner.0, corner.1)
            .map_err(|e| failed("warp", &e))?;
        let at = conn
            .query_pointer(root)
            .map_err(|e| failed("query", &e))?
            .reply()
            .map_err(|e| failed("query", &e))?;
        if (at.root_x, at.root_y) != corner {
            return Err(failed(
                "check",
                &format!(
                    "pointer at {},{} after warping to {},{}",
                    at.root_x, at.root_y, corner.0, corner.1
                ),
            ));
        }
        Ok(())
    }

    fn save_state(&self) -> Result<(), SandboxError> {
        let path = self.dir.join("state.json");
        let text = serde_json::to_vec_pretty(&self.state).map_err(std::io::Error::other)?;
        crate::files::write_atomic(&path, &text).map_err(|e| within(&path, e))
    }

    /// Ends every process this sandbox started or recorded, and removes its state.
    pub fn stop(&mut self) {
        stop_sandbox(&self.state, &self.dir);
        self.owned = false;
    }

    /// Finds a running sandbox: by display number, else the one this process runs in,
    /// else the only one.
    pub fn find(display: Option<u32>) -> Result<(SandboxState, PathBuf), SandboxError> {
        let running = list_running();
        if let Some(d) = display {
            return running
                .into_iter()
                .find(|(s, _)| s.display == d)
                .ok_or_else(|| {
                    SandboxError::NotFound(format!(
                        "no cua sandbox on display :{d} (see `cua sandbox status`)"
                    ))
                });
        }
        if let Some(dir) = std::env::var_os(SANDBOX_DIR_ENV) {
            if let Some(found) = running
                .iter()
                .find(|(_, p)| p.as_os_str() == dir.as_os_str())
            {
                return Ok(found.clone());
            }
        }
        match running.len() {
            0 => Err(SandboxError::NotFound(
                "no cua sandbox is running (start one with `cua sandbox start`)".into(),
            )),
            1 => Ok(running.into_iter().next().unwrap()),
            n => Err(SandboxError::NotFound(format!(
                "{n} sandboxes are running; pick one with --display (see `cua sandbox status`)"
            ))),
        }
    }

    /// A handle to an already running sandbox (not owned: dropping it changes nothing).
    pub fn attach(state: SandboxState, dir: PathBuf) -> Sandbox {
        Sandbox {
            state,
            dir,
            owned: false,
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if self.owned {
            self.stop();
        }
    }
}

/// Holds a Composite redirect on `display` until the display goes away, so windows keep
/// their pixels off-screen (covered windows capture right).
#[cfg(feature = "linux")]
pub fn hold_composite_redirect(display: &str) -> Option<()> {
    use x11rb::connection::Connection;
    use x11rb::protocol::composite::{ConnectionExt as _, Redirect};
    use x11rb::protocol::xproto::ConnectionExt as _;
    let (conn, screen) = x11rb::connect(Some(display)).ok()?;
    let root = conn.setup().roots[screen].root;
    conn.composite_query_version(0, 4).ok()?.reply().ok()?;
    conn.composite_redirect_subwindows(root, Redirect::AUTOMATIC)
        .ok()?
        .check()
        .ok()?;
    loop {
        std::thread::sleep(Duration::from_millis(500));
        conn.get_input_focus().ok()?.reply().ok()?;
    }
}

/// Without the Linux backend there is no X server to hold a redirect on.
#[cfg(not(feature = "linux"))]
pub fn hold_composite_redirect(_display: &str) -> Option<()> {
    None
}

/// Holds a pointer and a keyboard on the sandbox's Wayland seat until the compositor goes
/// away (see `platform::hold_wayland_seat`).
pub fn hold_wayland_seat() -> Option<()> {
    #[cfg(feature = "wayland")]
    return crate::platform::hold_wayland_seat(
        &crate::desktop::DesktopEnv::from_process_env().wayland_display?,
    );
    #[cfg(not(feature = "wayland"))]
    None
}

/// A file error during a start, naming the path: a start that failed with a bare "No such
/// file or directory" (once in CI, three sandboxes starting side by side) said nothing of
/// what had gone.
fn within(path: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::Start(format!("{}: {e}", path.display()))
}

/// Spawns `cmd`, again while exec says the program is busy (ETXTBSY, bounded to ~1 s): a
/// program the sandbox has just copied (KWin) is busy while a fork made by another thread
/// of this process still holds the copy's write end, until that child execs.
fn spawn_retrying_busy(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            done => return done,
        }
    }
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Processes from state.json plus every pid registered later, newest first.
fn all_processes(state: &SandboxState, dir: &Path) -> Vec<OwnedProcess> {
    let mut list = state.processes.clone();
    if let Ok(text) = std::fs::read_to_string(dir.join("pids")) {
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if let (Some(Ok(pid)), Some(Ok(start_time))) =
                (parts.next().map(str::parse), parts.next().map(str::parse))
            {
                list.push(OwnedProcess {
                    pid,
                    name: "app".into(),
                    start_time,
                });
            }
        }
    }
    list.reverse();
    list
}

fn stop_processes(list: &[OwnedProcess]) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let live: Vec<&OwnedProcess> = list.iter().filter(|p| alive_and_same(p)).collect();
    for p in &live {
        // Each child leads its own process group, so helpers it spawned go too.
        let _ = killpg(Pid::from_raw(p.pid as i32), Signal::SIGTERM);
        let _ = nix::sys::signal::kill(Pid::from_raw(p.pid as i32), Signal::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline && live.iter().any(|p| alive_and_same(p) && !is_zombie(p.pid)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for p in live.iter().filter(|p| alive_and_same(p)) {
        let _ = killpg(Pid::from_raw(p.pid as i32), Signal::SIGKILL);
        let _ = nix::sys::signal::kill(Pid::from_raw(p.pid as i32), Signal::SIGKILL);
    }
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rfind(')')
                .and_then(|i| s.get(i + 2..i + 3))
                .map(|c| c == "Z")
        })
        .unwrap_or(true)
}

/// The processes a sandbox runs while its display server does (by their listed names).
const DISPLAY_SERVERS: &[&str] = &["Xvfb", "sway", "gnome-shell", "kwin_wayland"];

/// Sandboxes whose display server still runs; stale state directories are removed.
pub fn list_running() -> Vec<(SandboxState, PathBuf)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(state_root()) else {
        return out;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let Ok(text) = std::fs::read_to_string(dir.join("state.json")) else {
            continue;
        };
        let Ok(state) = serde_json::from_str::<SandboxState>(&text) else {
            continue;
        };
        let server_alive = state
            .processes
            .iter()
            .any(|p| DISPLAY_SERVERS.contains(&p.name.as_str()) && alive_and_same(p));
        if server_alive {
            out.push((state, dir));
        } else {
            remove_folders(&state, &dir);
        }
    }
    out.sort_by_key(|(s, _)| s.display);
    out
}

/// Stops a sandbox found by [`Sandbox::find`].
pub fn stop_sandbox(state: &SandboxState, dir: &Path) {
    stop_processes(&all_processes(state, dir));
    remove_folders(state, dir);
}

/// The sandbox's folder and those it made elsewhere.
fn remove_folders(state: &SandboxState, dir: &Path) {
    for outside in &state.outside_dirs {
        let _ = std::fs::remove_dir_all(outside);
    }
    let _ = std::fs::remove_dir_all(dir);
}
