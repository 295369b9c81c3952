//! Which desktop a process talks to, and what an app launched on it gets: the one value
//! every desktop provider hands out ([`DesktopEnv`]: the person's own session, read from the
//! process environment, or a cua sandbox, from `Sandbox::desktop`), and
//! a sandbox folder's contract with the apps launched into it (their hermetic homes, and
//! the pid list `cua sandbox stop` ends).
//!
//! A leaf: the platform's launch reads it, and the sandbox, which starts the desktop, writes
//! it; neither reaches into the other.

use std::path::{Path, PathBuf};

/// Environment variable naming the state directory of the sandbox a process runs in.
pub const SANDBOX_DIR_ENV: &str = "CUA_SANDBOX_DIR";
/// Environment variable choosing the display server: `x11`, `wayland` (a wlroots
/// compositor such as sway) or `gnome` (GNOME Shell, through cua's Shell extension).
pub const BACKEND_ENV: &str = "CUA_BACKEND";

/// A display server cua drives.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    #[default]
    X11,
    /// A wlroots compositor (sway).
    Wayland,
    /// GNOME Shell (mutter) on Wayland, through cua's Shell extension.
    Gnome,
    /// KDE's KWin on Wayland, through its own protocols and D-Bus interfaces.
    Kde,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::X11 => "x11",
            Backend::Wayland => "wayland",
            Backend::Gnome => "gnome",
            Backend::Kde => "kde",
        }
    }

    /// Whether apps on it are Wayland clients.
    pub fn is_wayland(self) -> bool {
        matches!(self, Backend::Wayland | Backend::Gnome | Backend::Kde)
    }

    pub fn parse(s: &str) -> Result<Backend, String> {
        match s.to_ascii_lowercase().as_str() {
            "x11" => Ok(Backend::X11),
            "wayland" => Ok(Backend::Wayland),
            "gnome" => Ok(Backend::Gnome),
            "kde" => Ok(Backend::Kde),
            other => Err(format!(
                "{BACKEND_ENV}={other:?} is not a backend (x11, wayland, gnome or kde)"
            )),
        }
    }
}

/// Which desktop to talk to: an X display or a Wayland compositor, and its D-Bus session
/// bus.
#[derive(Debug, Clone, Default)]
pub struct DesktopEnv {
    pub display: Option<String>,
    /// The Wayland compositor's socket, an absolute path (WAYLAND_DISPLAY, resolved
    /// against XDG_RUNTIME_DIR when relative).
    pub wayland_display: Option<PathBuf>,
    /// sway's IPC socket (SWAYSOCK), where the compositor is sway: window pids and places.
    pub sway_socket: Option<PathBuf>,
    /// The display server the person chose (CUA_BACKEND); otherwise Wayland is used when
    /// a compositor is named and offers what cua needs, X11 else.
    pub backend: Option<Backend>,
    pub dbus_address: Option<String>,
    /// State directory of the cua sandbox this desktop belongs to, if any.
    pub sandbox_dir: Option<std::path::PathBuf>,
    /// Extra variables for apps launched on this desktop (a harness scenario's `app.env`).
    pub app_env: Vec<(String, String)>,
}

impl DesktopEnv {
    /// Whether this desktop is a Wayland compositor alone (no X display beside it): its
    /// apps are Wayland clients, and only Wayland can reach them.
    pub fn wayland_only(&self) -> bool {
        self.display.is_none() && self.wayland_display.is_some()
    }

    /// The Wayland socket to use: the one named, unless the person chose X11.
    pub fn wayland_socket(&self) -> Option<PathBuf> {
        if self.backend == Some(Backend::X11) {
            return None;
        }
        self.wayland_display.clone()
    }

    /// The desktop named by DISPLAY, DBUS_SESSION_BUS_ADDRESS and CUA_SANDBOX_DIR.
    pub fn from_process_env() -> DesktopEnv {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let wayland_display = var("WAYLAND_DISPLAY").map(|name| {
            let path = PathBuf::from(&name);
            match var("XDG_RUNTIME_DIR") {
                Some(runtime) if path.is_relative() => Path::new(&runtime).join(path),
                _ => path,
            }
        });
        DesktopEnv {
            display: var("DISPLAY"),
            wayland_display,
            sway_socket: var("SWAYSOCK").map(Into::into),
            backend: var(BACKEND_ENV).and_then(|b| match Backend::parse(&b) {
                Ok(b) => Some(b),
                Err(e) => {
                    tracing::warn!("{e}; choosing by what the environment names");
                    None
                }
            }),
            dbus_address: var("DBUS_SESSION_BUS_ADDRESS"),
            sandbox_dir: var(SANDBOX_DIR_ENV).map(Into::into),
            app_env: Vec::new(),
        }
    }

    /// Variables that put a process on this desktop: the display (X11 or Wayland), the
    /// session bus and the sandbox folder.
    pub fn child_env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(d) = &self.display {
            env.push(("DISPLAY".into(), d.clone()));
        }
        let path = |p: &PathBuf| p.to_string_lossy().into_owned();
        if let Some(socket) = &self.wayland_display {
            env.push(("WAYLAND_DISPLAY".into(), path(socket)));
        }
        if let Some(socket) = &self.sway_socket {
            env.push(("SWAYSOCK".into(), path(socket)));
        }
        if let Some(backend) = self.backend {
            env.push((BACKEND_ENV.into(), backend.name().into()));
        }
        if let Some(a) = &self.dbus_address {
            env.push(("DBUS_SESSION_BUS_ADDRESS".into(), a.clone()));
        }
        if let Some(dir) = &self.sandbox_dir {
            env.push((SANDBOX_DIR_ENV.into(), dir.to_string_lossy().into_owned()));
        }
        env
    }

    /// Variables for an app started on this desktop: [`Self::child_env`], the
    /// accessibility bridge switched on, and inside a cua sandbox the hermetic homes,
    /// locale and settings of [`hermetic_env`]; a scenario's own `app.env`
    /// last, so it can override any of them.
    pub fn app_env(&self) -> Vec<(String, String)> {
        let shared = self.sandbox_dir.as_deref().map(AppHome::shared);
        self.app_env_at(shared.as_ref())
    }

    /// [`Self::app_env`] for an app that keeps its files in `home` (one launch's own, see
    /// [`AppHome::fresh`]) instead of the sandbox's shared home.
    pub fn app_env_at(&self, home: Option<&AppHome>) -> Vec<(String, String)> {
        let mut env = self.child_env();
        env.push(("GTK_A11Y".into(), "atspi".into()));
        // GTK3 then accepts the synthetic events background input sends (it ignores them
        // when it reads devices through XInput2).
        env.push(("GDK_CORE_DEVICE_EVENTS".into(), "1".into()));
        // Qt exports its tree only when it sees a screen reader, or when told to.
        env.push(("QT_LINUX_ACCESSIBILITY_ALWAYS_ON".into(), "1".into()));
        let existing = std::env::var("JAVA_TOOL_OPTIONS").ok();
        if let Some(options) = java_tool_options(existing, home.map(|h| h.home.as_path())) {
            env.push(("JAVA_TOOL_OPTIONS".into(), options));
        }
        if self.wayland_only() {
            // Toolkits that could also speak X11 speak Wayland here.
            for (k, v) in [
                ("GDK_BACKEND", "wayland"),
                ("QT_QPA_PLATFORM", "wayland"),
                ("MOZ_ENABLE_WAYLAND", "1"),
                ("SDL_VIDEODRIVER", "wayland"),
            ] {
                env.push((k.into(), v.into()));
            }
        }
        if self.sandbox_dir.is_some() {
            // A sandbox has no GPU: GTK 4's GL renderer runs on llvmpipe, and an app that
            // animates (gtk4-widget-factory's spinners) spends every main-loop turn on a
            // frame (100-150% CPU on 2 cores), so the idle callback that registers its
            // accessibility root never runs: on the bus, nothing exported (5 of 5 starts;
            // with cairo, exported on 4 of 4, at 12% CPU). Cairo draws the same widgets.
            env.push(("GSK_RENDERER".into(), "cairo".into()));
        }
        if let (Some(dir), Some(home)) = (&self.sandbox_dir, home) {
            env.extend(hermetic_env(dir, home));
            if self.wayland_only() {
                // GTK on Wayland reads its font, caret blink and animations from GSettings:
                // the sandbox's keyfile holds the values settings.ini gives it on X11.
                env.push(("GSETTINGS_BACKEND".into(), "keyfile".into()));
            }
            if self.backend == Some(Backend::Gnome) {
                // Mutter draws no title bars for Wayland clients: Qt then draws its own
                // inside its window, and reports element extents from below it, by an
                // offset no one tells. Without it Qt windows look as in the sway sandbox.
                env.push(("QT_WAYLAND_DISABLE_WINDOWDECORATION".into(), "1".into()));
            }
        }
        env.extend(self.app_env.iter().cloned());
        env
    }
}

/// The sandbox's own XDG config folder: the toolkit settings every app there reads, and
/// the template a launch's own home copies.
pub fn config_home(dir: &Path) -> PathBuf {
    dir.join("config")
}

/// Where an app launched into a sandbox keeps its files: its HOME (data, state and cache
/// are under it) and its XDG config folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppHome {
    pub home: PathBuf,
    pub config: PathBuf,
}

impl AppHome {
    /// The sandbox's shared home: what the sandbox itself starts, and a launch that asked
    /// for no home of its own (`fresh_home: false`), so files persist between launches.
    pub fn shared(dir: &Path) -> AppHome {
        AppHome {
            home: dir.join("home"),
            config: config_home(dir),
        }
    }

    /// A home of its own for one launch into the sandbox at `dir` (#55): `homes/N/`, its
    /// config folder a copy of the sandbox's. A relaunched app then starts as it first did:
    /// no restored session, recent file or profile from an earlier launch, while the
    /// toolkit settings that make runs draw alike still hold.
    pub fn fresh(dir: &Path) -> std::io::Result<AppHome> {
        let homes = dir.join("homes");
        std::fs::create_dir_all(&homes)?;
        let mut n = std::fs::read_dir(&homes)?.count() + 1;
        // create_dir claims the number: two launches at once never share a home.
        let home = loop {
            let home = homes.join(n.to_string());
            match std::fs::create_dir(&home) {
                Ok(()) => break home,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(e),
            }
        };
        let config = home.join(".config");
        crate::files::copy_dir(&config_home(dir), &config)?;
        let fresh = AppHome { home, config };
        fresh.create_folders(dir)?;
        Ok(fresh)
    }

    /// Creates the folders [`hermetic_env`] names for this home (idempotent).
    fn create_folders(&self, dir: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        for (_, folder) in hermetic_env(dir, self)
            .iter()
            .filter(|(k, _)| k.starts_with("XDG_") || k == "HOME")
        {
            std::fs::create_dir_all(folder)?;
        }
        std::fs::set_permissions(app_runtime(dir), std::fs::Permissions::from_mode(0o700))
    }
}

/// The runtime folder apps in the sandbox at `dir` get (private, 0700 as XDG requires).
fn app_runtime(dir: &Path) -> PathBuf {
    dir.join("app-runtime")
}

/// The variables that make an app in the sandbox at `dir` hermetic: its HOME and XDG
/// config, data, state and cache folders in `home` (so drafts, recent files and caches
/// never reach the user's home, and with a launch's own home never the next launch), the
/// sandbox's runtime folder, settings in memory, and a fixed time zone and locale (dates
/// and numbers draw the same in every run).
pub fn hermetic_env(dir: &Path, home: &AppHome) -> Vec<(String, String)> {
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    let base = &home.home;
    vec![
        ("HOME".into(), path(base.clone())),
        ("XDG_CONFIG_HOME".into(), path(home.config.clone())),
        ("XDG_DATA_HOME".into(), path(base.join(".local/share"))),
        ("XDG_STATE_HOME".into(), path(base.join(".local/state"))),
        ("XDG_CACHE_HOME".into(), path(base.join(".cache"))),
        ("XDG_RUNTIME_DIR".into(), path(app_runtime(dir))),
        ("GSETTINGS_BACKEND".into(), "memory".into()),
        ("TZ".into(), "UTC".into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("LC_ALL".into(), "C.UTF-8".into()),
        ("LANGUAGE".into(), String::new()),
        // Python apps (the fixtures, many real apps) would write bytecode caches beside
        // their sources, outside the sandbox.
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        // Qt's KDE theme (built into Qt), for the steady caret the sandbox's kdeglobals
        // sets; it needs to be told a KDE session version to load.
        ("QT_QPA_PLATFORMTHEME".into(), "kde".into()),
        ("KDE_SESSION_VERSION".into(), "5".into()),
    ]
}

/// Creates the sandbox's shared home and runtime folders (idempotent).
pub fn prepare_app_homes(dir: &Path) -> std::io::Result<()> {
    AppHome::shared(dir).create_folders(dir)
}

/// Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat).
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

/// Records a pid in a sandbox's state directory so that `cua sandbox stop` ends it too.
pub fn register_pid(dir: &Path, pid: u32) {
    let Some(start_time) = process_start_time(pid) else {
        return;
    };
    let line = format!("{pid} {start_time}\n");
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("pids"))
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Where Debian's Java accessibility bridge (libatk-wrapper-java) puts its classes.
pub const JAVA_ATK_BRIDGE_JAR: &str = "/usr/share/java/java-atk-wrapper.jar";

/// `JAVA_TOOL_OPTIONS` for a Java app cua starts, after the caller's own options (None
/// when there is nothing to add):
/// - Java's accessibility bridge switched on: Debian ships it switched off (its
///   accessibility.properties is all comments), and a Swing app's tree is then empty; not
///   when the bridge is not installed, or the caller already names an assistive technology;
/// - in a sandbox (`home`, the app's home there), the JVM kept inside it: Java takes its home
///   from the password file, not `$HOME`, and writes its font cache there (`~/.java`), and
///   it leaves a perf-data file in /tmp (`hsperfdata_<user>`) when it is killed.
pub fn java_tool_options(existing: Option<String>, home: Option<&Path>) -> Option<String> {
    let existing = existing.unwrap_or_default();
    let mut options = vec![existing.clone()];
    if !existing.contains("javax.accessibility.assistive_technologies")
        && Path::new(JAVA_ATK_BRIDGE_JAR).exists()
    {
        options.push(format!(
            "-Xbootclasspath/a:{JAVA_ATK_BRIDGE_JAR} -Djavax.accessibility.assistive_technologies=org.GNOME.Accessibility.AtkWrapper"
        ));
    }
    if let Some(home) = home {
        options.push(format!("-Duser.home={} -XX:-UsePerfData", home.display()));
    }
    let joined = options.join(" ").trim().to_string();
    (joined != existing.trim()).then_some(joined)
}
