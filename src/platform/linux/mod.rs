//! The Linux backend: AT-SPI (atspi/zbus) for accessibility trees and element actions,
//! `/proc` and desktop entries for apps, and a display server for windows, capture and
//! input: X11 (x11rb) or, with the `wayland` feature, a wlroots Wayland compositor.
//! [`LinuxPlatform`] joins them behind [`Platform`].

pub mod apps;
pub mod atspi;
#[cfg(feature = "wayland")]
mod bus_client;
mod clipboard;
mod damage;
mod display;
mod events;
mod families;
#[cfg(feature = "wayland")]
pub mod gnome;
mod input;
mod overlay;
mod popups;
mod process;
mod quirks;
pub mod screen_grab;
#[cfg(feature = "wayland")]
mod wayland;
#[cfg(feature = "wayland")]
pub use wayland::{hold_seat, seat_has_devices};
pub mod x11;
mod x11_desktop;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use crate::platform::{
    AppQuirks, AxTree, Capture, Concern, Delivery, DesktopEnv, ElementReading, FocusState,
    InputEvent, InstalledApp, LaunchRequest, LaunchedApp, PermissionCheck, Platform, PlatformError,
    PlatformResult, Repaint, RunningApp, ValueRange, WindowInfo, WindowList,
};
use display::{DisplayServer, ServerWindow};

/// How long the list of desktop entries is reused.
const ENTRIES_TTL: Duration = Duration::from_secs(5);
/// How long launch waits for the first window of a new process.
const FIRST_WINDOW_WAIT: Duration = Duration::from_secs(15);
/// How long a new window's geometry must hold still before launch returns, and the most
/// launch waits for that.
const GEOMETRY_STABLE_FOR: Duration = Duration::from_millis(200);
const GEOMETRY_SETTLE_WAIT: Duration = Duration::from_secs(2);
/// How long, in a sandbox, launch waits for an app that carries an accessibility bridge to
/// join the accessibility bus before starting it once more. GTK and Qt apps join as they
/// start, before their first window shows, so the wait usually costs one registry read;
/// the bound is the first window's.
const ACCESSIBILITY_JOIN_WAIT: Duration = Duration::from_secs(15);

/// A process launch started, once its first window showed.
struct Started {
    /// The process started.
    pid: u32,
    /// The first window's owner: `pid`, or a process it led to (a launcher's child).
    owner: u32,
    home: Option<crate::desktop::AppHome>,
}

/// Stops a launch's process group (SIGKILL) and waits, bounded, until it is gone: a
/// single-instance app started again while the first lives would hand over to it.
async fn stop_launch(pid: u32) {
    let group = nix::unistd::Pid::from_raw(-(pid as i32));
    let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(10);
    while process::group_alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub struct LinuxPlatform {
    /// Desktop entries, re-read at most every few seconds (they name apps in window lists).
    entries: std::sync::Mutex<Option<(Instant, Arc<Vec<apps::DesktopEntry>>)>>,
    desktop: DesktopEnv,
    /// Shared with the blocking threads input and capture run on.
    display: Arc<dyn DisplayServer>,
    /// Why the Wayland compositor the desktop names was passed over, when it was (a GNOME
    /// or KDE session that has not let cua in): the first check then says so.
    passed_over: Option<PermissionCheck>,
    atspi: OnceCell<atspi::Atspi>,
}

impl LinuxPlatform {
    /// Connects to the desktop's Wayland compositor when it names one (and the build has
    /// the `wayland` feature), else to its X display.
    pub fn connect(desktop: &DesktopEnv) -> PlatformResult<LinuxPlatform> {
        let (display, passed_over) = connect_display(desktop)?;
        Ok(LinuxPlatform {
            entries: std::sync::Mutex::new(None),
            desktop: desktop.clone(),
            display,
            passed_over,
            atspi: OnceCell::new(),
        })
    }

    /// Starts `plan`'s process and waits (bounded) for its first window to show and its
    /// geometry to hold still.
    async fn start(
        &self,
        plan: &apps::LaunchPlan,
        request: &LaunchRequest,
    ) -> PlatformResult<Started> {
        let (pid, home) = apps::spawn(plan, &self.desktop, request.shared_home)?;
        let deadline = Instant::now() + FIRST_WINDOW_WAIT;
        let (first, owner) = loop {
            let windows = self.server_windows().await?;
            // The window may belong to a child of a launcher script, or to what a forking
            // launcher left behind: the launched process's own window wins.
            let ours = |w: &&ServerWindow| w.is_on_screen && w.pid == Some(pid);
            let launched = |w: &&ServerWindow| {
                w.is_on_screen && w.pid.is_some_and(|p| process::in_launch(p, pid))
            };
            if let Some(w) = windows
                .iter()
                .find(ours)
                .or_else(|| windows.iter().find(launched))
            {
                break (w.id, w.pid.unwrap_or(pid));
            }
            // One scan of /proc can miss a forking launcher's child: listed before the fork,
            // the launcher gone by the time its entry is read. Empty twice is gone.
            if !process::group_alive(pid) && {
                tokio::time::sleep(Duration::from_millis(25)).await;
                !process::group_alive(pid)
            } {
                return Err(PlatformError::Launch(launch_died(
                    &plan.program,
                    pid,
                    &self.desktop,
                )));
            }
            if Instant::now() >= deadline {
                return Err(PlatformError::Launch(format!(
                    "`{}` (pid {pid}) showed no window within {} s",
                    plan.program,
                    FIRST_WINDOW_WAIT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        // Toolkits often resize a window right after mapping it, once their first frame is
        // laid out (GTK 4: ~100 ms after the map, ~1 s when its GL renderer first starts on
        // a display). Hand it over once it has painted and its geometry has held still, so
        // the first screenshot matches later ones.
        let settle_deadline = Instant::now() + GEOMETRY_SETTLE_WAIT;
        let mut last = self.display.window_bounds(first).ok();
        let mut stable_since = Instant::now();
        let mut painted = self.painted(first);
        while Instant::now() < settle_deadline
            && !(painted && stable_since.elapsed() >= GEOMETRY_STABLE_FOR)
        {
            tokio::time::sleep(Duration::from_millis(25)).await;
            let now = self.display.window_bounds(first).ok();
            if now != last {
                last = now;
                stable_since = Instant::now();
            }
            painted = painted || self.painted(first);
        }
        Ok(Started { pid, owner, home })
    }

    /// Whether `pid` is on the accessibility bus cua reads (registered, or found among the
    /// bus's connections) within ACCESSIBILITY_JOIN_WAIT. True when that cannot be judged:
    /// no accessibility bus, or the process is gone.
    async fn joins_accessibility_bus(&self, pid: u32) -> bool {
        let Ok(atspi) = self.atspi().await else {
            return true;
        };
        let deadline = Instant::now() + ACCESSIBILITY_JOIN_WAIT;
        loop {
            if !process::process_running(pid) {
                return true;
            }
            match atspi.app_bus_for_pid(pid).await {
                Ok(Some(_)) | Err(_) => return true,
                Ok(None) => {}
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn atspi(&self) -> PlatformResult<&atspi::Atspi> {
        self.atspi
            .get_or_try_init(|| atspi::Atspi::connect(self.desktop.dbus_address.as_deref()))
            .await
    }

    /// Runs a blocking display call on a blocking thread, so other clients' calls keep
    /// their workers (input sleeps between its steps: a drag lasts up to 10 s).
    async fn on_display<T: Send + 'static>(
        &self,
        what: &str,
        f: impl FnOnce(&dyn DisplayServer) -> PlatformResult<T> + Send + 'static,
    ) -> PlatformResult<T> {
        let display = self.display.clone();
        tokio::task::spawn_blocking(move || f(display.as_ref()))
            .await
            .map_err(|e| PlatformError::Other(format!("{what}: {e}")))?
    }

    /// Whether a window shows anything yet: a mapped window the app has not drawn into is
    /// one flat colour. (A window that cannot be captured counts as painted: nothing to
    /// wait for.)
    fn painted(&self, window: u64) -> bool {
        let Ok(capture) = self.display.capture(window) else {
            return true;
        };
        let mut pixels = capture.rgba.chunks_exact(4);
        let first = pixels.next();
        pixels.any(|p| Some(p) != first)
    }

    fn entries(&self) -> Arc<Vec<apps::DesktopEntry>> {
        let mut guard = self.entries.lock().unwrap();
        match &*guard {
            Some((at, list)) if at.elapsed() < ENTRIES_TTL => list.clone(),
            _ => {
                let list = Arc::new(apps::desktop_entries());
                *guard = Some((Instant::now(), list.clone()));
                list
            }
        }
    }

    /// The display server's windows, each with its pid: where the display cannot tell one
    /// (a Wayland compositor without IPC), the app on the accessibility bus that has a
    /// top-level of the window's title.
    async fn server_windows(&self) -> PlatformResult<Vec<ServerWindow>> {
        let mut windows = self.display.windows()?;
        if windows.iter().all(|w| w.pid.is_some()) {
            return Ok(windows);
        }
        let Ok(atspi) = self.atspi().await else {
            return Ok(windows);
        };
        let apps = atspi.applications().await.unwrap_or_default();
        let named = futures::future::join_all(
            apps.iter()
                .map(|(bus, pid)| async move { (*pid, atspi.toplevel_names(bus).await) }),
        )
        .await;
        for w in windows.iter_mut().filter(|w| w.pid.is_none()) {
            w.pid = named
                .iter()
                .find(|(_, names)| names.contains(&w.title))
                .map(|(pid, _)| *pid);
        }
        Ok(windows)
    }

    async fn windows_now(&self) -> PlatformResult<Vec<WindowInfo>> {
        let entries = self.entries();
        let current = self.display.current_desktop();
        Ok(self
            .server_windows()
            .await?
            .into_iter()
            .map(|w| WindowInfo {
                window_id: w.id,
                pid: w.pid,
                app_name: w
                    .pid
                    .map(|p| apps::display_name(p, &w.class, &entries))
                    .unwrap_or_else(|| w.class.clone()),
                title: w.title,
                bounds: w.bounds,
                z_index: w.z_index,
                is_on_screen: w.is_on_screen,
                space_id: w.desktop.or(current),
            })
            .collect())
    }
}

/// The display server `desktop` names: GNOME Shell through cua's extension when chosen
/// (or when the compositor is mutter and the extension answers), the Wayland compositor
/// when it has the protocols cua needs or Wayland was chosen (then its checks say what is
/// missing); else X11, with a check saying why the compositor was passed over.
fn connect_display(
    desktop: &DesktopEnv,
) -> PlatformResult<(Arc<dyn DisplayServer>, Option<PermissionCheck>)> {
    #[cfg(feature = "wayland")]
    if desktop.backend == Some(crate::desktop::Backend::Gnome) {
        let address = desktop.dbus_address.as_deref().ok_or_else(|| {
            PlatformError::NoDesktop(
                "GNOME is reached over the session bus, and DBUS_SESSION_BUS_ADDRESS is not set"
                    .into(),
            )
        })?;
        return Ok((Arc::new(gnome::GnomeShell::connect(address)?), None));
    }
    #[allow(unused_mut)]
    let mut passed_over: Option<PermissionCheck> = None;
    #[cfg(feature = "wayland")]
    if let Some(socket) = desktop.wayland_socket() {
        let named = matches!(
            desktop.backend,
            Some(crate::desktop::Backend::Wayland | crate::desktop::Backend::Kde)
        );
        let chosen = named || desktop.wayland_only();
        let connected = wayland::Wayland::connect(&socket, desktop.sway_socket.as_deref())
            .map(|w| w.with_session_bus(desktop.dbus_address.as_deref()));
        match connected {
            Ok(w) if named || w.usable() => return Ok((Arc::new(w), None)),
            Err(e) if chosen => return Err(e),
            Err(_) => {}
            Ok(w) => {
                // A person's GNOME session with cua's extension enabled.
                let mut refused = None;
                if let (wayland::Compositor::Mutter, Some(address)) =
                    (w.compositor(), desktop.dbus_address.as_deref())
                {
                    match gnome::GnomeShell::connect(address) {
                        Ok(shell) => return Ok((Arc::new(shell), None)),
                        Err(e) => refused = Some(e.to_string()),
                    }
                }
                // Nothing else to reach: its checks say what is missing, and how to let
                // cua in.
                if chosen {
                    return Ok((Arc::new(w), None));
                }
                // A GNOME or KDE session that has not let cua in: its XWayland apps are
                // reachable through X11.
                let mut check = wayland::passed_over(&socket, w.compositor());
                if let Some(why) = refused {
                    check.detail = format!("{} ({why})", check.detail);
                }
                passed_over = Some(check);
            }
        }
    }
    let x11 =
        x11_desktop::X11Desktop::connect(desktop.display.as_deref()).map_err(
            |e| match &passed_over {
                Some(why) => PlatformError::NoDesktop(format!(
                    "{e}; {}: {}",
                    why.detail,
                    why.fix.as_deref().unwrap_or_default()
                )),
                None => e,
            },
        )?;
    Ok((Arc::new(x11), passed_over))
}

#[async_trait::async_trait]
impl Platform for LinuxPlatform {
    fn name(&self) -> &'static str {
        self.display.name()
    }

    fn display_backend(&self) -> Option<crate::desktop::Backend> {
        Some(self.display.backend())
    }

    async fn check_permissions(&self) -> Vec<PermissionCheck> {
        let mut checks: Vec<_> = self.passed_over.iter().cloned().collect();
        checks.extend(self.display.checks());
        match self.atspi().await {
            Ok(a) => {
                let apps = a.applications().await;
                checks.push(PermissionCheck {
                    concern: Concern::Accessibility,
                    name: "atspi_bus".into(),
                    ok: apps.is_ok(),
                    detail: match &apps {
                        Ok(list) => format!("accessibility bus reachable, {} apps registered", list.len()),
                        Err(e) => e.to_string(),
                    },
                    fix: apps.is_err().then(|| {
                        "start the registry: /usr/libexec/at-spi-bus-launcher --launch-immediately".into()
                    }),
                });
            }
            Err(e) => checks.push(PermissionCheck {
                concern: Concern::Accessibility,
                name: "atspi_bus".into(),
                ok: false,
                detail: e.to_string(),
                fix: Some(
                    "install at-spi2-core and run /usr/libexec/at-spi-bus-launcher --launch-immediately on the session bus"
                        .into(),
                ),
            }),
        }
        let enabled = match self.atspi().await {
            Ok(a) => a.accessibility_enabled().await,
            Err(e) => Err(e),
        };
        checks.push(PermissionCheck {
            concern: Concern::Accessibility,
            name: "accessibility_enabled".into(),
            ok: matches!(enabled, Ok(true)),
            detail: match &enabled {
                Ok(true) => "org.a11y.Status IsEnabled is true".into(),
                Ok(false) => "org.a11y.Status IsEnabled is false: toolkits will not export trees".into(),
                Err(e) => e.to_string(),
            },
            fix: (!matches!(enabled, Ok(true))).then(|| {
                "gsettings set org.gnome.desktop.interface toolkit-accessibility true, or set org.a11y.Status IsEnabled=true (cua sandbox start does), then restart the apps".into()
            }),
        });
        checks
    }
}

#[async_trait::async_trait]
impl crate::platform::Observation for LinuxPlatform {
    async fn screen_size(&self) -> PlatformResult<(u32, u32)> {
        Ok(self.display.screen_size())
    }

    async fn cursor_position(&self) -> PlatformResult<(i32, i32)> {
        self.display.cursor_position()
    }

    async fn pointer_over(&self, window_id: u64) -> bool {
        self.display.pointer_over(window_id)
    }

    async fn capture_window(&self, window_id: u64) -> PlatformResult<Capture> {
        self.on_display("capture", move |d| d.capture(window_id))
            .await
    }

    async fn popups(&self, window_id: u64) -> Option<Vec<(u64, crate::platform::Rect)>> {
        self.on_display("popups", move |d| Ok(d.popups(window_id)))
            .await
            .ok()?
    }

    async fn last_repaint(&self, window_id: u64) -> Option<Repaint> {
        // It waits (bounded) for the reader thread to catch up: off the async threads.
        self.on_display("repaints", move |d| Ok(d.last_repaint(window_id)))
            .await
            .ok()?
    }

    async fn accessibility_tree(&self, pid: u32, window: &WindowInfo) -> PlatformResult<AxTree> {
        let frames = self.display.frame_origin(window.window_id);
        self.atspi()
            .await?
            .window_tree(pid, window, frames, false)
            .await
    }

    async fn accessibility_tree_with_hidden(
        &self,
        pid: u32,
        window: &WindowInfo,
    ) -> PlatformResult<AxTree> {
        let frames = self.display.frame_origin(window.window_id);
        self.atspi()
            .await?
            .window_tree(pid, window, frames, true)
            .await
    }

    async fn app_quirks(&self, pid: u32) -> AppQuirks {
        let toolkit = match self.atspi().await {
            Ok(atspi) => atspi.toolkit_of(pid).await,
            Err(_) => None,
        };
        let mut quirks = toolkit.map(|t| quirks::of_toolkit(&t)).unwrap_or_default();
        if let Some(why) = self.display.background_input_caveat() {
            quirks.ignores_background_keys = Some(why);
            quirks.ignores_background_pointer = Some(crate::platform::PointerCaveat::Always(why));
        }
        quirks
    }

    async fn value_range(&self, handle: &str) -> PlatformResult<ValueRange> {
        self.atspi().await?.value_range(handle).await
    }

    async fn option_names(&self, handle: &str) -> PlatformResult<Vec<String>> {
        self.atspi().await?.option_names(handle).await
    }

    async fn read_element(&self, handle: &str) -> PlatformResult<ElementReading> {
        self.atspi().await?.read_element(handle).await
    }

    async fn selected_options(&self, handle: &str) -> PlatformResult<Vec<String>> {
        self.atspi().await?.selected_options(handle).await
    }

    async fn focus_state(&self) -> PlatformResult<FocusState> {
        self.display.focus_state()
    }

    async fn capture_screen(&self) -> PlatformResult<Capture> {
        self.on_display("screen capture", |d| d.capture_screen())
            .await
    }

    async fn app_activity(&self, pid: u32) -> Option<crate::platform::AppActivity> {
        self.atspi().await.ok()?.app_activity(pid).await
    }
}

#[async_trait::async_trait]
impl crate::platform::Input for LinuxPlatform {
    async fn do_action(&self, handle: &str, action: &str) -> PlatformResult<()> {
        self.atspi().await?.do_action(handle, action).await
    }

    async fn insert_text(
        &self,
        handle: &str,
        text: &str,
    ) -> PlatformResult<crate::platform::TextEdit> {
        self.atspi().await?.insert_text(handle, text).await
    }

    async fn set_text(&self, handle: &str, text: &str) -> PlatformResult<()> {
        self.atspi().await?.set_text(handle, text).await
    }

    async fn set_value(&self, handle: &str, value: f64) -> PlatformResult<()> {
        self.atspi().await?.set_value(handle, value).await
    }

    async fn select_option(&self, handle: &str, index: usize) -> PlatformResult<()> {
        self.atspi().await?.select_option(handle, index).await
    }

    async fn reveal_sibling(
        &self,
        handle: &str,
        forward: bool,
        count: usize,
    ) -> PlatformResult<Option<String>> {
        self.atspi()
            .await?
            .reveal_sibling(handle, forward, count)
            .await
    }

    async fn focus_element(&self, handle: &str) -> PlatformResult<()> {
        self.atspi().await?.grab_focus(handle).await
    }

    async fn clipboard_read(
        &self,
        include_text: bool,
    ) -> PlatformResult<crate::platform::ClipboardContents> {
        let (types, text) = self
            .on_display("clipboard read", move |d| d.clipboard_read(include_text))
            .await?;
        Ok(crate::platform::ClipboardContents { types, text })
    }

    async fn clipboard_write(&self, offer: Vec<(String, Vec<u8>)>) -> PlatformResult<()> {
        self.on_display("clipboard write", move |d| d.clipboard_write(offer))
            .await
    }

    async fn send_input(
        &self,
        window: &WindowInfo,
        events: &[InputEvent],
        delivery: Delivery,
    ) -> PlatformResult<()> {
        if delivery == Delivery::Background && self.display.background_input_caveat().is_some() {
            // Nothing can be sent: every app's quirks say so (`background_input_caveat`),
            // and the tools answer with an escalation to foreground.
            return Ok(());
        }
        let (window, events) = (window.clone(), events.to_vec());
        self.on_display("input", move |d| d.send_input(&window, &events, delivery))
            .await
    }

    async fn warp_pointer(&self, x: i32, y: i32) -> PlatformResult<()> {
        self.on_display("pointer", move |d| d.warp(x, y)).await
    }

    async fn show_overlay(&self, image: &Capture, x: i32, y: i32) -> PlatformResult<()> {
        self.display.show_overlay(image, x, y)
    }

    async fn hide_overlay(&self) {
        self.display.hide_overlay()
    }
}

#[async_trait::async_trait]
impl crate::platform::Windows for LinuxPlatform {
    async fn list_windows(&self) -> PlatformResult<WindowList> {
        Ok(WindowList {
            windows: self.windows_now().await?,
            current_space_id: self.display.current_desktop(),
        })
    }

    async fn active_pid(&self) -> PlatformResult<Option<u32>> {
        let Some(active) = self.display.active_window() else {
            return Ok(None);
        };
        Ok(self
            .server_windows()
            .await?
            .into_iter()
            .find(|w| w.id == active)
            .and_then(|w| w.pid))
    }

    async fn desktop_alive(&self) -> bool {
        self.on_display("alive", |d| Ok(d.alive()))
            .await
            .unwrap_or(false)
    }

    async fn resize_window(&self, window_id: u64, width: u32, height: u32) -> PlatformResult<()> {
        self.on_display("resize", move |d| d.resize(window_id, width, height))
            .await
    }

    async fn set_window_frame(
        &self,
        window_id: u64,
        frame: crate::platform::Rect,
    ) -> PlatformResult<()> {
        self.on_display("move", move |d| d.set_frame(window_id, frame))
            .await
    }

    async fn activate_window(&self, window_id: u64) -> PlatformResult<()> {
        self.on_display("activate", move |d| d.activate(window_id))
            .await
    }
}

#[async_trait::async_trait]
impl crate::platform::Launching for LinuxPlatform {
    async fn installed_apps(&self) -> PlatformResult<Vec<InstalledApp>> {
        Ok(apps::installed_apps())
    }

    async fn running_apps(&self) -> PlatformResult<Vec<crate::platform::RunningApp>> {
        let windows = self.server_windows().await?;
        let mut pids: Vec<u32> = windows.iter().filter_map(|w| w.pid).collect();
        if let Ok(a) = self.atspi().await {
            if let Ok(list) = a.applications().await {
                pids.extend(list.into_iter().map(|(_, p)| p));
            }
        }
        pids.sort_unstable();
        pids.dedup();
        let entries = self.entries();
        Ok(pids
            .into_iter()
            .filter(|p| *p != std::process::id())
            .map(|pid| {
                let class = windows
                    .iter()
                    .find(|w| w.pid == Some(pid))
                    .map(|w| w.class.clone())
                    .unwrap_or_default();
                RunningApp {
                    pid,
                    name: apps::display_name(pid, &class, &entries),
                    executable: process::process_executable(pid).unwrap_or_default(),
                }
            })
            .collect())
    }

    async fn launch(&self, request: &LaunchRequest) -> PlatformResult<LaunchedApp> {
        let scratch = self
            .desktop
            .sandbox_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        let plan = apps::plan_launch(request, &scratch, self.display.backend())?;
        if !request.creates_new_application_instance {
            let program = std::path::Path::new(&plan.program)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let existing = self.running_apps().await?.into_iter().find(|a| {
                a.executable == program
                    || process::process_command_name(a.pid).as_deref() == Some(&program)
            });
            if let Some(app) = existing {
                return Ok(LaunchedApp {
                    pid: app.pid,
                    name: plan.name,
                    executable: app.executable,
                    newly_started: false,
                    launcher_pid: None,
                    home: None,
                    accessibility_note: None,
                });
            }
        }
        let mut started = self.start(&plan, request).await?;
        let mut accessibility_note = None;
        // In a sandbox, an app that carries an accessibility bridge but never joins the
        // bus is read by its pixels alone for the rest of its life: seen on clean-clone CI
        // runs, GNOME Calculator (GTK 4) showed its window and no tree in 30 s, and never
        // when run again. A sandbox's app is fresh anyway, so it is started once more;
        // outside one a person's app is left as it is.
        if self.desktop.sandbox_dir.is_some()
            && process::carries_accessibility_bridge(started.owner)
            && !self.joins_accessibility_bus(started.owner).await
        {
            stop_launch(started.pid).await;
            started = self.start(&plan, request).await?;
            let wait = ACCESSIBILITY_JOIN_WAIT.as_secs();
            accessibility_note = Some(if self.joins_accessibility_bus(started.owner).await {
                format!(
                    "the first start did not join the accessibility bus within {wait} s; it was stopped and started again, and joined"
                )
            } else {
                format!(
                    "it did not join the accessibility bus within {wait} s, on two starts: its windows are read by their pixels (OCR) only"
                )
            });
        }
        Ok(LaunchedApp {
            pid: started.owner,
            name: plan.name,
            executable: process::process_executable(started.owner).unwrap_or_default(),
            newly_started: true,
            launcher_pid: (started.owner != started.pid).then_some(started.pid),
            home: started.home.map(|h| h.home),
            accessibility_note,
        })
    }

    async fn process_age(&self, pid: u32) -> Option<Duration> {
        process::process_age(pid)
    }

    async fn kill_process(&self, pid: u32) -> PlatformResult<()> {
        let target = nix::unistd::Pid::from_raw(pid as i32);
        match nix::sys::signal::kill(target, nix::sys::signal::Signal::SIGKILL) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(e) => Err(PlatformError::Other(format!("cannot kill pid {pid}: {e}"))),
        }
    }

    async fn process_running(&self, pid: u32) -> bool {
        process::process_running(pid)
    }

    async fn page_endpoint(&self, pid: u32) -> PlatformResult<crate::platform::PageEndpoint> {
        families::page_endpoint(pid)
    }

    fn process_executable(&self, pid: u32) -> Option<String> {
        process::process_executable(pid)
    }

    fn process_command_name(&self, pid: u32) -> Option<String> {
        process::process_command_name(pid)
    }
}

/// Why a launch left no process: how the launched process ended and, in a sandbox, the last
/// lines it printed.
fn launch_died(program: &str, pid: u32, desktop: &DesktopEnv) -> String {
    // Its process group is empty, so it was reaped: the reaper notes how a moment later.
    let ended =
        apps::how_it_ended(pid, Duration::from_millis(500)).unwrap_or_else(|| "exited".into());
    let mut message = format!(
        "`{program}` (pid {pid}) {ended} before showing a window, and left no process behind"
    );
    let output = desktop
        .sandbox_dir
        .as_deref()
        .and_then(|dir| apps::output_tail(dir, program, pid));
    if let Some((tail, path)) = output {
        message.push_str(&format!(
            "; its output ends {tail:?} (all of it: {})",
            path.display()
        ));
    }
    message
}
