//! The Wayland side of the Linux backend: a wlroots compositor's protocols spoken
//! in-process (wayland-client), no helper programs.
//!
//! - windows: `wlr-foreign-toplevel-management` (title, app id, activated), each toplevel
//!   numbered by this connection; pid and position come from the compositor's own IPC where
//!   it has one (sway's, in [`sway`]), since no Wayland protocol tells a client either;
//! - capture: `wlr-screencopy` of the window's region of the output ([`capture`]);
//! - the clipboard: `wlr-data-control`, on connections of its own ([`clipboard`]);
//! - the agent cursor: a `wlr-layer-shell` overlay surface ([`overlay`]);
//! - input: `wlr-virtual-pointer` and `virtual-keyboard` with a keymap of its own
//!   ([`input`]): the seat's real pointer and keyboard, a foreground route. Wayland has no
//!   way to address events to one window, so background input sends nothing and every
//!   app's quirks say so (the tools escalate), never faked.
//!
//! KWin offers none of the wlroots window, capture and input protocols but its own, which
//! take their place ([`plasma`] for the window list with pids and places, [`kwin`] for
//! fake input and its ScreenShot2 D-Bus interface); the clipboard and the overlay are the
//! same wlroots protocols there.
//!
//! One connection, one event queue, behind one lock: every call takes the lock, sends its
//! requests and reads until its answer came (bounded: a compositor that stops answering
//! makes calls fail, not hang).

mod capture;
mod clipboard;
mod input;
mod keymap;
mod kwin;
mod overlay;
mod plasma;
mod sway;
mod toplevels;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wayland_client::globals::{GlobalList, GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_output, wl_registry, wl_seat, wl_shm};
use wayland_client::{Connection, Dispatch, EventQueue, QueueHandle};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1;
use wayland_protocols_plasma::fake_input::client::org_kde_kwin_fake_input::OrgKdeKwinFakeInput;
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1;

use crate::platform::{
    Capture, Concern, Delivery, FocusState, InputEvent, PermissionCheck, PlatformError,
    PlatformResult, Rect, WindowInfo,
};

/// How long one request may wait for the compositor's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// A connection to a Wayland compositor.
pub struct Wayland {
    socket: PathBuf,
    session: Mutex<Session>,
    sway: Option<sway::Ipc>,
    /// KWin's D-Bus interfaces (its screenshots), where the compositor is KWin.
    kwin: Option<kwin::KwinBus>,
    clipboard: clipboard::Clipboard,
}

/// The event queue and what it has learned, used under the lock.
struct Session {
    conn: Connection,
    queue: EventQueue<State>,
    state: State,
}

/// The protocol objects this client holds and the compositor's latest word on them.
struct State {
    qh: QueueHandle<State>,
    shm: Option<wl_shm::WlShm>,
    seat: Option<wl_seat::WlSeat>,
    output: Option<wl_output::WlOutput>,
    /// The output's current mode, in pixels.
    output_size: (u32, u32),
    toplevels: toplevels::Toplevels,
    /// KWin's window list, where the compositor is KWin.
    plasma: plasma::PlasmaWindows,
    /// KWin's input injection, where the compositor is KWin.
    fake_input: Option<OrgKdeKwinFakeInput>,
    screencopy: Option<ZwlrScreencopyManagerV1>,
    pointer_manager: Option<ZwlrVirtualPointerManagerV1>,
    keyboard_manager: Option<ZwpVirtualKeyboardManagerV1>,
    /// The compositor offers wlr-data-control (the clipboard, used on connections of its
    /// own).
    data_control: bool,
    devices: input::Devices,
    frame: capture::FrameState,
    overlay: overlay::Overlay,
    /// Set when the compositor ended the connection or refused a request.
    broken: Option<String>,
    /// Whose compositor this is, told by the globals only it offers.
    compositor: Compositor,
}

/// The compositor families cua knows a route into, told apart by their own globals:
/// their checks then name the route, and how to open it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositor {
    /// sway, labwc, wayfire…: the wlroots protocols.
    Wlroots,
    /// KDE's KWin: its own protocols, given to programs a .desktop file trusts.
    Kwin,
    /// GNOME Shell's mutter: none, reached through cua's Shell extension.
    Mutter,
    Other,
}

/// The check that says the compositor at `socket` was passed over for X11, and how to let
/// cua in.
pub fn passed_over(socket: &Path, compositor: Compositor) -> PermissionCheck {
    PermissionCheck {
        concern: Concern::Session,
        name: "wayland_compositor".into(),
        ok: false,
        detail: format!(
            "the Wayland compositor at {} does not let cua list, capture or drive its windows: only X11 (XWayland) apps are reachable",
            socket.display()
        ),
        fix: Some(compositor.route().into()),
    }
}

impl Compositor {
    fn of(globals: &GlobalList) -> Compositor {
        globals.contents().with_list(|list| {
            let has = |prefix: &str| list.iter().any(|g| g.interface.starts_with(prefix));
            // KWin's own globals, offered to every client (sway offers KDE's decoration
            // protocol too, and KWin some wlroots ones).
            if has("org_kde_plasma_") || has("kde_output_device") {
                Compositor::Kwin
            } else if has("gtk_shell1") {
                Compositor::Mutter
            } else if has("zwlr_") {
                Compositor::Wlroots
            } else {
                Compositor::Other
            }
        })
    }

    /// How to reach this compositor's windows, capture and input, for a check's fix.
    pub fn route(self) -> &'static str {
        match self {
            Compositor::Kwin => {
                "this is KDE's KWin: it gives its window list, fake input and screenshots only to programs a .desktop file trusts. `cua permissions grant kde` writes one for this cua (~/.local/share/applications/cua.desktop); KWin reads it within seconds, no new login needed"
            }
            Compositor::Mutter => {
                "this is GNOME Shell (mutter): cua reaches it through a Shell extension of its own. `cua permissions grant gnome` installs and enables it; log out and in once, and cua then finds it (CUA_BACKEND=gnome insists on it)"
            }
            Compositor::Wlroots | Compositor::Other => {
                "run a wlroots compositor (sway, labwc, wayfire: `cua sandbox start --backend wayland` starts sway), GNOME Shell (`cua permissions grant gnome`) or KDE's KWin (`cua permissions grant kde`)"
            }
        }
    }
}

impl Wayland {
    /// Connects to the compositor whose socket is `socket` (an absolute path), and to its
    /// IPC when `sway_socket` names one.
    pub fn connect(socket: &Path, sway_socket: Option<&Path>) -> PlatformResult<Wayland> {
        let stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| {
            PlatformError::NoDesktop(format!(
                "cannot reach the Wayland compositor at {}: {e}",
                socket.display()
            ))
        })?;
        let conn = Connection::from_socket(stream)
            .map_err(|e| PlatformError::NoDesktop(format!("Wayland connection: {e}")))?;
        let (globals, mut queue) = registry_queue_init::<State>(&conn)
            .map_err(|e| PlatformError::NoDesktop(format!("Wayland registry: {e}")))?;
        let qh = queue.handle();
        let mut state = State::bind(&globals, &qh);
        // Two round trips: the first brings the output's mode and the toplevel list, the
        // second each toplevel's title and app id.
        for _ in 0..2 {
            queue
                .roundtrip(&mut state)
                .map_err(|e| PlatformError::NoDesktop(format!("Wayland: {e}")))?;
        }
        Ok(Wayland {
            socket: socket.to_path_buf(),
            session: Mutex::new(Session { conn, queue, state }),
            sway: sway_socket.map(sway::Ipc::new),
            kwin: None,
            clipboard: clipboard::Clipboard::new(socket),
        })
    }

    /// Reaches KWin's D-Bus interfaces on the session bus at `address`, where the
    /// compositor is KWin (its window list is offered).
    pub fn with_session_bus(mut self, address: Option<&str>) -> Wayland {
        if self.is_kwin() {
            self.kwin = address.and_then(kwin::KwinBus::connect);
        }
        self
    }

    /// Whose compositor this is.
    pub fn compositor(&self) -> Compositor {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.state.compositor
    }

    /// Whether the compositor is KWin: it offers its own window list.
    fn is_kwin(&self) -> bool {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.state.plasma.manager.is_some()
    }

    /// Runs `f` on the session after bringing its state up to date.
    fn with_session<T>(
        &self,
        f: impl FnOnce(&mut Session) -> PlatformResult<T>,
    ) -> PlatformResult<T> {
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.roundtrip()?;
        f(&mut session)
    }

    /// What this compositor offers of what cua uses, one check a protocol.
    pub fn checks(&self) -> Vec<PermissionCheck> {
        // KWin's checks also where it offers cua nothing yet: they name its route in.
        if self.compositor() == Compositor::Kwin {
            return self.kwin_checks();
        }
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let s = &session.state;
        let check =
            |concern: Concern, name: &str, ok: bool, what: &str, without: &str| PermissionCheck {
                concern,
                name: name.into(),
                ok,
                detail: if ok {
                    format!("{what}: offered")
                } else {
                    format!("{what}: not offered by this compositor; {without}")
                },
                fix: (!ok).then(|| s.compositor.route().into()),
            };
        let mut checks = vec![
            PermissionCheck {
                concern: Concern::Session,
                name: "wayland_display".into(),
                ok: s.broken.is_none(),
                detail: match &s.broken {
                    None => format!("Wayland compositor at {} reachable", self.socket.display()),
                    Some(why) => why.clone(),
                },
                fix: None,
            },
            check(
                Concern::Session,
                "foreign_toplevel",
                s.toplevels.manager.is_some(),
                "zwlr_foreign_toplevel_manager_v1 (the window list)",
                "list_windows and every window tool fail, saying so; accessibility trees of known pids still work",
            ),
            check(
                Concern::Capture,
                "screencopy",
                s.screencopy.is_some(),
                "zwlr_screencopy_manager_v1 (screenshots)",
                "screenshots fail; trees and element actions still work",
            ),
            check(
                Concern::Input,
                "virtual_pointer",
                s.pointer_manager.is_some(),
                "zwlr_virtual_pointer_manager_v1 (pointer input)",
                "clicks, scrolls and drags at a point fail; element actions (AT-SPI) still work",
            ),
            check(
                Concern::Input,
                "virtual_keyboard",
                s.keyboard_manager.is_some(),
                "zwp_virtual_keyboard_manager_v1 (key input)",
                "press_key and hotkey fail; type_text into elements (AT-SPI) still works",
            ),
            check(
                Concern::Other,
                "layer_shell",
                s.overlay.offered(),
                "zwlr_layer_shell_v1 (the agent cursor overlay)",
                "the live agent cursor cannot show; a recording's video still draws it",
            ),
            check(
                Concern::Other,
                "data_control",
                s.data_control,
                "zwlr_data_control_manager_v1 (the clipboard)",
                "clipboard_read and clipboard_write fail, saying so",
            ),
        ];
        checks.push(super::display::no_background_input());
        checks.push(PermissionCheck {
            concern: Concern::Other,
            name: "compositor_ipc".into(),
            ok: self.sway.is_some(),
            detail: match &self.sway {
                Some(ipc) => format!("sway IPC at {} (window pids and positions)", ipc.path().display()),
                None => "no compositor IPC: a window's pid is that of the app on the accessibility bus with a top-level of its title, and the window is taken to fill the output (its position is unknown; it cannot be moved or sized)".into(),
            },
            fix: None,
        });
        checks
    }

    /// Whether the connection still answers.
    pub fn alive(&self) -> bool {
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.roundtrip().is_ok()
    }

    /// The output's size in pixels.
    pub fn screen_size(&self) -> (u32, u32) {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.state.output_size
    }

    /// The whole output now, as BGRX rows (the video helper's frames).
    pub fn capture_output_bgrx(&self) -> PlatformResult<(u32, u32, Vec<u8>)> {
        let output = self.output_rect();
        self.with_session(|s| s.capture_region_bgrx(output))
    }

    /// The whole output, in its own pixels.
    fn output_rect(&self) -> Rect {
        let (w, h) = self.screen_size();
        Rect::new(0, 0, w as i32, h as i32)
    }
}

impl Session {
    /// Sends what is queued and reads every answer to it.
    fn roundtrip(&mut self) -> PlatformResult<()> {
        if let Some(why) = &self.state.broken {
            return Err(PlatformError::NoDesktop(why.clone()));
        }
        self.queue
            .roundtrip(&mut self.state)
            .map(drop)
            .map_err(|e| {
                let why = format!("the Wayland compositor stopped answering: {e}");
                self.state.broken = Some(why.clone());
                PlatformError::NoDesktop(why)
            })
    }

    /// Reads events until `done` says the answer came, or `within` passed.
    fn read_until(
        &mut self,
        what: &str,
        within: Duration,
        done: impl Fn(&State) -> bool,
    ) -> PlatformResult<()> {
        let deadline = Instant::now() + within;
        loop {
            self.queue
                .dispatch_pending(&mut self.state)
                .map_err(|e| PlatformError::Other(format!("Wayland: {e}")))?;
            if done(&self.state) {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(PlatformError::Other(format!(
                    "the Wayland compositor did not answer {what} within {} ms",
                    within.as_millis()
                )));
            }
            self.conn
                .flush()
                .map_err(|e| PlatformError::Other(format!("Wayland: {e}")))?;
            let Some(guard) = self.queue.prepare_read() else {
                continue;
            };
            if readable_within(guard.connection_fd(), left) {
                guard
                    .read()
                    .map_err(|e| PlatformError::Other(format!("Wayland: {e}")))?;
            }
        }
    }
}

/// Whether `fd` has something to read within `left` (a poll, capped at its 65 s bound).
fn readable_within(fd: std::os::fd::BorrowedFd<'_>, left: Duration) -> bool {
    let mut fds = [nix::poll::PollFd::new(fd, nix::poll::PollFlags::POLLIN)];
    let ms = left.as_millis().min(u16::MAX as u128) as u16;
    nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(ms)).unwrap_or(0) > 0
}

impl State {
    /// Binds the globals cua uses; the ones missing stay None (the checks say so).
    fn bind(globals: &GlobalList, qh: &QueueHandle<State>) -> State {
        State {
            qh: qh.clone(),
            shm: globals.bind(qh, 1..=1, ()).ok(),
            seat: globals.bind(qh, 1..=7, ()).ok(),
            output: globals.bind(qh, 1..=4, ()).ok(),
            output_size: (0, 0),
            toplevels: toplevels::Toplevels::new(globals.bind(qh, 1..=3, ()).ok()),
            plasma: plasma::PlasmaWindows::new(globals.bind(qh, 13..=16, ()).ok()),
            fake_input: globals.bind(qh, 4..=5, ()).ok(),
            screencopy: globals.bind(qh, 1..=3, ()).ok(),
            pointer_manager: globals.bind(qh, 1..=2, ()).ok(),
            keyboard_manager: globals.bind(qh, 1..=1, ()).ok(),
            data_control: globals.contents().with_list(|list| {
                list.iter()
                    .any(|g| g.interface == "zwlr_data_control_manager_v1")
            }),
            devices: input::Devices::default(),
            frame: capture::FrameState::default(),
            overlay: overlay::Overlay::new(
                globals.bind(qh, 1..=4, ()).ok(),
                globals.bind(qh, 1..=4, ()).ok(),
            ),
            broken: None,
            compositor: Compositor::of(globals),
        }
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // Globals that come and go later (a second output, a new seat) are not followed:
        // the sandbox's compositor has one of each.
    }
}

impl Dispatch<wl_output::WlOutput, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_output::WlOutput,
        event: wl_output::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_output::Event::Mode {
            flags: wayland_client::WEnum::Value(flags),
            width,
            height,
            ..
        } = event
        {
            if flags.contains(wl_output::Mode::Current) {
                state.output_size = (width.max(0) as u32, height.max(0) as u32);
            }
        }
    }
}

wayland_client::delegate_noop!(State: ignore wl_shm::WlShm);
wayland_client::delegate_noop!(State: ignore wl_seat::WlSeat);
wayland_client::delegate_noop!(State: ZwlrScreencopyManagerV1);
wayland_client::delegate_noop!(State: ZwlrVirtualPointerManagerV1);
wayland_client::delegate_noop!(State: ZwpVirtualKeyboardManagerV1);

impl Wayland {
    /// Whether the compositor offers what a desktop backend cannot do without: the window
    /// list and screenshots.
    pub fn usable(&self) -> bool {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let s = &session.state;
        (s.toplevels.manager.is_some() && s.screencopy.is_some())
            || (s.plasma.manager.is_some() && self.kwin.is_some())
    }

    /// The windows the compositor announced, bottom to top where it says (KWin), else in
    /// creation order, each joined to its IPC's view where it has one (sway's).
    fn joined(&self) -> PlatformResult<Vec<Joined>> {
        /// What the compositor's list gave: KWin's is whole (pids, places); a wlroots one
        /// is joined to sway's IPC once the session's lock is let go.
        enum Listed {
            Kwin(Vec<Joined>),
            Toplevels(Vec<toplevels::Toplevel>),
        }
        let listed = self.with_session(|s| {
            if s.state.toplevels.manager.is_some() {
                Ok(Listed::Toplevels(
                    s.state.toplevels.complete().cloned().collect(),
                ))
            } else if s.state.plasma.manager.is_some() {
                let windows = s.state.plasma.stacked();
                Ok(Listed::Kwin(
                    windows.into_iter().map(Joined::from_plasma).collect(),
                ))
            } else {
                Err(PlatformError::Unsupported(NO_WINDOW_LIST.into()))
            }
        })?;
        match listed {
            Listed::Kwin(windows) => Ok(windows),
            Listed::Toplevels(toplevels) => self.joined_toplevels(toplevels),
        }
    }

    /// Each wlroots toplevel joined to the first unclaimed IPC window of the same app id
    /// and title (then of the same app id), both lists in creation order.
    fn joined_toplevels(&self, toplevels: Vec<toplevels::Toplevel>) -> PlatformResult<Vec<Joined>> {
        let mut placed = match &self.sway {
            Some(ipc) => ipc.windows()?,
            None => Vec::new(),
        };
        placed.sort_by_key(|w| w.con_id);
        let mut claimed = vec![false; placed.len()];
        let mut claim = |same: &dyn Fn(&sway::SwayWindow) -> bool| {
            let at = (0..placed.len()).find(|i| !claimed[*i] && same(&placed[*i]))?;
            claimed[at] = true;
            Some(placed[at].clone())
        };
        let mut out = Vec::with_capacity(toplevels.len());
        for t in toplevels {
            let placed = claim(&|w| w.app_id == t.app_id && w.title == t.title)
                .or_else(|| claim(&|w| w.app_id == t.app_id));
            out.push(Joined {
                id: placed.as_ref().map_or(t.id, |p| SWAY_WINDOW_IDS + p.con_id),
                handle: t.id,
                pid: placed.as_ref().and_then(|p| p.pid),
                place: placed.as_ref().map(|p| p.rect),
                visible: !t.minimized && placed.as_ref().is_none_or(|p| p.visible),
                activated: t.activated,
                title: t.title,
                app_id: t.app_id,
                sway: placed,
            });
        }
        Ok(out)
    }

    /// The window with this id.
    fn window(&self, id: u64) -> PlatformResult<Joined> {
        self.joined()?
            .into_iter()
            .find(|j| j.id == id)
            .ok_or(PlatformError::NoSuchWindow(id))
    }

    /// Sizes window `id` to `frame`, and moves it there when `moved`, through KWin's
    /// scripting, where the compositor is KWin; None elsewhere.
    fn kwin_place(&self, id: u64, frame: Rect, moved: bool) -> Option<PlatformResult<()>> {
        // Set only where the compositor is KWin (with_session_bus).
        let kwin = self.kwin.as_ref()?;
        let window = self.with_session(|s| {
            s.state
                .plasma
                .by_id(id)
                .cloned()
                .ok_or(PlatformError::NoSuchWindow(id))
        });
        Some(window.and_then(|w| kwin.place(&w.uuid, frame, moved)))
    }

    fn sway_command(&self, id: u64, command: &str) -> PlatformResult<()> {
        let Some(ipc) = &self.sway else {
            return Err(PlatformError::Unsupported(
                "placing windows needs the compositor's IPC (sway's); Wayland gives clients no way to move or size another's window".into(),
            ));
        };
        let placed = self
            .window(id)?
            .sway
            .ok_or_else(|| PlatformError::Other(format!("window {id} is not in sway's tree")))?;
        ipc.command(placed.con_id, command)
    }
}

impl super::display::DisplayServer for Wayland {
    fn name(&self) -> &'static str {
        "linux-wayland-atspi"
    }

    fn backend(&self) -> crate::desktop::Backend {
        if self.is_kwin() {
            crate::desktop::Backend::Kde
        } else {
            crate::desktop::Backend::Wayland
        }
    }

    fn checks(&self) -> Vec<PermissionCheck> {
        Wayland::checks(self)
    }

    fn windows(&self) -> PlatformResult<Vec<super::display::ServerWindow>> {
        let output = self.output_rect();
        let joined = self.joined()?;
        let count = joined.len();
        Ok(joined
            .into_iter()
            .enumerate()
            .map(|(i, j)| super::display::ServerWindow {
                id: j.id,
                pid: j.pid,
                bounds: j.bounds(output),
                // The active window is the front one; the rest keep their order.
                z_index: if j.activated { count as u32 } else { i as u32 },
                is_on_screen: j.visible,
                desktop: None,
                title: j.title,
                class: j.app_id,
            })
            .collect())
    }

    fn active_window(&self) -> Option<u64> {
        let joined = self.joined().ok()?;
        joined.into_iter().find(|j| j.activated).map(|j| j.id)
    }

    fn window_bounds(&self, id: u64) -> PlatformResult<Rect> {
        Ok(self.window(id)?.bounds(self.output_rect()))
    }

    fn screen_size(&self) -> (u32, u32) {
        Wayland::screen_size(self)
    }

    fn cursor_position(&self) -> PlatformResult<(i32, i32)> {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.state.devices.pointer_at.ok_or_else(|| {
            PlatformError::Unsupported(
                "Wayland tells no client where the pointer is, and cua has not moved it yet".into(),
            )
        })
    }

    fn capture(&self, id: u64) -> PlatformResult<Capture> {
        let bounds = self.window_bounds(id)?;
        let region = bounds.intersection(&self.output_rect()).ok_or_else(|| {
            PlatformError::Capture(format!("window {id} is off the output ({bounds:?})"))
        })?;
        if let Some(kwin) = &self.kwin {
            return self
                .with_session(|s| s.capture_without_overlay(region, |_| kwin.capture(region)));
        }
        self.with_session(|s| s.capture_without_overlay(region, |s| s.capture_region(region)))
    }

    fn frame_origin(&self, _id: u64) -> super::atspi::FrameOrigin {
        super::atspi::FrameOrigin::WindowRelative { surface: None }
    }

    fn background_input_caveat(&self) -> Option<&'static str> {
        Some(BACKGROUND_INPUT)
    }

    fn alive(&self) -> bool {
        Wayland::alive(self)
    }

    fn send_input(
        &self,
        window: &WindowInfo,
        events: &[InputEvent],
        _delivery: Delivery,
    ) -> PlatformResult<()> {
        // Always foreground: the platform sends nothing in the background where
        // `background_input_caveat` says so.
        let handle = self.window(window.window_id)?.handle;
        self.with_session(|s| s.send_foreground(window, events, handle))
    }

    fn warp(&self, x: i32, y: i32) -> PlatformResult<()> {
        self.with_session(|s| s.warp(x, y))
    }

    fn focus_state(&self) -> PlatformResult<FocusState> {
        let joined = self.joined()?;
        let active = joined.iter().find(|j| j.activated).map(|j| j.id);
        let pointer = self.with_session(|s| Ok(s.state.devices.pointer_at))?;
        Ok(FocusState {
            active_window: active,
            input_focus: active.unwrap_or(0),
            stacking: joined.iter().map(|j| j.id).collect(),
            pointer: pointer.unwrap_or((0, 0)),
        })
    }

    fn resize(&self, id: u64, width: u32, height: u32) -> PlatformResult<()> {
        let size = Rect {
            x: 0,
            y: 0,
            width: width as i32,
            height: height as i32,
        };
        if let Some(placed) = self.kwin_place(id, size, false) {
            return placed;
        }
        self.sway_command(
            id,
            &format!("floating enable, resize set width {width} px height {height} px"),
        )
    }

    fn set_frame(&self, id: u64, frame: Rect) -> PlatformResult<()> {
        if let Some(placed) = self.kwin_place(id, frame, true) {
            return placed;
        }
        self.sway_command(
            id,
            &format!(
                "floating enable, resize set width {} px height {} px, move position {} px {} px",
                frame.width, frame.height, frame.x, frame.y
            ),
        )
    }

    fn activate(&self, id: u64) -> PlatformResult<()> {
        let handle = self.window(id)?.handle;
        self.with_session(|s| s.activate(handle))
    }

    fn show_overlay(&self, image: &Capture, x: i32, y: i32) -> PlatformResult<()> {
        self.with_session(|s| s.show_overlay(image, x, y))
    }

    fn hide_overlay(&self) {
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        session.hide_overlay();
    }

    fn clipboard_read(&self, include_text: bool) -> PlatformResult<(Vec<String>, Option<String>)> {
        self.clipboard.read(include_text)
    }

    fn clipboard_write(&self, offer: Vec<(String, Vec<u8>)>) -> PlatformResult<()> {
        self.clipboard.write(offer)
    }

    fn capture_screen(&self) -> PlatformResult<Capture> {
        let output = self.output_rect();
        if let Some(kwin) = &self.kwin {
            // KWin's screenshot comes over D-Bus, beside this connection: the round trip
            // (in with_session) first, so what cua committed (the overlay) is in it.
            return self.with_session(|_| kwin.capture(output));
        }
        self.with_session(|s| s.capture_region(output))
    }
}

/// What every window tool says on a compositor without the window list.
const NO_WINDOW_LIST: &str = "this Wayland compositor offers cua no window list (zwlr_foreign_toplevel_manager_v1, or KWin's org_kde_plasma_window_management): windows cannot be listed, captured or given input here; on your own GNOME or KDE session run `cua permissions grant gnome` or `cua permissions grant kde` (`cua permissions` says which this is), or run a wlroots compositor such as sway (`cua sandbox start --backend wayland`), or X11";

/// A window as the compositor's list gives it, with its place where known.
struct Joined {
    /// The window's id: from the compositor's own number for it where it gives one (sway's
    /// IPC, KWin's uuid: the same in every cua process), else this connection's.
    id: u64,
    /// What this connection activates it by: the toplevel's or KWin window's number.
    handle: u64,
    pid: Option<u32>,
    /// Its frame on the output, where the compositor says.
    place: Option<Rect>,
    visible: bool,
    activated: bool,
    title: String,
    app_id: String,
    /// Its node in sway's tree (placing it goes through sway's IPC).
    sway: Option<sway::SwayWindow>,
}

impl Joined {
    fn from_plasma(w: plasma::PlasmaWindow) -> Joined {
        Joined {
            id: w.id,
            handle: w.id,
            pid: w.pid,
            place: w.geometry,
            visible: !w.minimized(),
            activated: w.active(),
            title: w.title,
            app_id: w.app_id,
            sway: None,
        }
    }

    /// Where the window is on the output: the compositor's word, else (no IPC) the whole
    /// output.
    fn bounds(&self, output: Rect) -> Rect {
        self.place.unwrap_or(output)
    }
}

/// Window ids from sway's container numbers start here (this connection's own numbers,
/// from `toplevels::FIRST_ID`, sit below).
const SWAY_WINDOW_IDS: u64 = 1 << 41;

/// Why background input does nothing on Wayland (it follows the toolkit's name in an
/// escalation's reason).
const BACKGROUND_INPUT: &str =
    "gets no events addressed to its window on Wayland, which has no way to send them";

/// Holds a virtual pointer and keyboard on the compositor at `socket` for as long as it
/// runs (a headless compositor's seat has no devices of its own). A seat that gains its
/// first pointer or keyboard tells every client, which then asks for it: events sent
/// before that reach no client, so without a device that stays, the first click and key of
/// every cua process were lost. Returns when the compositor goes away.
pub fn hold_seat(socket: &Path) -> Option<()> {
    let wayland = Wayland::connect(socket, None).ok()?;
    {
        let mut session = wayland.session.lock().ok()?;
        session.pointer().ok()?;
        session
            .map_keys(&[InputEvent::Key {
                keysym: keymap::SHIFT_L,
                down: false,
            }])
            .ok()?;
        session.roundtrip().ok()?;
    }
    while wayland.alive() {
        std::thread::sleep(Duration::from_millis(500));
    }
    None
}

/// Whether the seat of the sway at `ipc` has a pointer and a keyboard.
pub fn seat_has_devices(ipc: &Path) -> bool {
    sway::Ipc::new(ipc).input_kinds().is_ok_and(|kinds| {
        ["pointer", "keyboard"]
            .iter()
            .all(|k| kinds.iter().any(|i| i == k))
    })
}
