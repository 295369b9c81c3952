//! The platform boundary: everything `cua` needs from a desktop, behind one trait.
//!
//! [`Platform`] is implemented by [`linux::LinuxPlatform`] (X11 through x11rb, accessibility
//! through AT-SPI over D-Bus). Nothing above this module knows about X11 or D-Bus: tools
//! speak in [`WindowInfo`], [`AxTree`] and [`Capture`]. A macOS backend (AX tree,
//! ScreenCaptureKit, CGEvent) would implement the same trait.
//!
//! Coordinates: window bounds are in screen points; element frames in an [`AxTree`] are
//! already mapped to window-local pixels, the space of the window's screenshot.

#[cfg(all(target_os = "linux", feature = "linux"))]
pub mod linux;
#[cfg(test)]
pub mod memory;
pub mod page_relay;
/// What the Wayland sandbox needs of the protocol code: a seat that keeps its devices, and
/// the check that it has them.
#[cfg(all(target_os = "linux", feature = "wayland"))]
pub use linux::{hold_seat as hold_wayland_seat, seat_has_devices as wayland_seat_ready};
/// What the GNOME sandbox needs: cua's Shell extension to load, and the check that it
/// answers.
#[cfg(all(target_os = "linux", feature = "wayland"))]
pub mod gnome_shell {
    pub use super::linux::gnome::{EXTENSION_JS, EXTENSION_METADATA, EXTENSION_UUID, GnomeShell};
}
mod quirks;

pub use quirks::{AppQuirks, PointerCaveat};

use serde::Serialize;

/// A rectangle; for element frames, in window-local screenshot pixels.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    /// `w` where an element's frame is written (get_window_state's elements, in
    /// cua-driver's shape); both spellings read.
    #[serde(alias = "w")]
    pub width: i32,
    #[serde(alias = "h")]
    pub height: i32,
}

/// Rectangles come from apps and from trajectory files, which may hold any extents: the
/// arithmetic below is done in i64 so that none overflows.
impl Rect {
    pub const fn new(x: i32, y: i32, width: i32, height: i32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    pub fn center(&self) -> (i32, i32) {
        let mid = |a: i32, len: i32| {
            (a as i64 + len as i64 / 2).clamp(i32::MIN as i64, i32::MAX as i64) as i32
        };
        (mid(self.x, self.width), mid(self.y, self.height))
    }

    /// The first column right of the rectangle.
    pub fn right(&self) -> i64 {
        self.x as i64 + self.width as i64
    }

    /// The first row below the rectangle.
    pub fn bottom(&self) -> i64 {
        self.y as i64 + self.height as i64
    }

    pub fn is_empty(&self) -> bool {
        self.width <= 0 || self.height <= 0
    }

    /// True when the point lies inside the rectangle.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.x && y >= self.y && (x as i64) < self.right() && (y as i64) < self.bottom()
    }

    /// The part of the rectangle inside `other`, if any.
    pub fn intersection(&self, other: &Rect) -> Option<Rect> {
        if !self.intersects(other) {
            return None;
        }
        let (x, y) = (self.x.max(other.x), self.y.max(other.y));
        let right = self.right().min(other.right());
        let bottom = self.bottom().min(other.bottom());
        Some(Rect::new(
            x,
            y,
            (right - x as i64) as i32,
            (bottom - y as i64) as i32,
        ))
    }

    /// True when the two rectangles share at least one pixel.
    pub fn intersects(&self, other: &Rect) -> bool {
        (self.x as i64) < other.right()
            && (other.x as i64) < self.right()
            && (self.y as i64) < other.bottom()
            && (other.y as i64) < self.bottom()
    }
}

/// A top-level window as the window manager sees it.
#[derive(Debug, Clone, Serialize)]
pub struct WindowInfo {
    pub window_id: u64,
    pub pid: Option<u32>,
    pub app_name: String,
    pub title: String,
    /// Client area in screen points (without window-manager decorations).
    pub bounds: Rect,
    /// Stacking order; higher is closer to the front.
    pub z_index: u32,
    pub is_on_screen: bool,
    /// The virtual desktop the window is on (None: sticky / all desktops).
    pub space_id: Option<u32>,
}

/// The list of windows plus the current virtual desktop.
#[derive(Debug, Clone, Serialize)]
pub struct WindowList {
    pub windows: Vec<WindowInfo>,
    pub current_space_id: Option<u32>,
}

/// An installed application (an XDG desktop entry on Linux).
#[derive(Debug, Clone, Serialize)]
pub struct InstalledApp {
    pub name: String,
    pub desktop_id: String,
    pub exec: String,
}

/// A running process that owns at least one window or is on the accessibility bus.
#[derive(Debug, Clone, Serialize)]
pub struct RunningApp {
    pub pid: u32,
    pub name: String,
    pub executable: String,
}

/// What to launch and how.
#[derive(Debug, Clone, Default)]
pub struct LaunchRequest {
    pub name: Option<String>,
    pub desktop_id: Option<String>,
    pub path: Option<String>,
    pub urls: Vec<String>,
    pub additional_arguments: Vec<String>,
    pub creates_new_application_instance: bool,
    /// Inside a sandbox, start the app in the sandbox's shared home (which persists between
    /// launches) instead of a home of its own for this launch (the default).
    pub shared_home: bool,
}

/// The process that came out of a launch.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchedApp {
    pub pid: u32,
    pub name: String,
    pub executable: String,
    /// False when an already running instance was reused.
    pub newly_started: bool,
    /// The process cua started, when the window belongs to another one it led to (a
    /// launcher script's child); `pid` is the window's owner.
    pub launcher_pid: Option<u32>,
    /// Inside a sandbox, the HOME the app was started with (its own for this launch, or the
    /// sandbox's shared one); None outside a sandbox or for an app already running.
    pub home: Option<std::path::PathBuf>,
    /// What went wrong with the app's accessibility, when something did: in a sandbox, an
    /// app that carries an accessibility bridge but did not join the bus is started once
    /// more, and this says so (and whether the second start joined).
    pub accessibility_note: Option<String>,
}

/// Pixels of a window, RGBA, top-left origin.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// One node of a window's accessibility tree.
#[derive(Debug, Clone, Serialize)]
pub struct AxNode {
    /// Role in snake_case (`push_button`, `check_box`, `slider`, ...).
    pub role: String,
    pub name: String,
    /// Text content (editable text) or current numeric value (sliders, spin buttons).
    pub value: Option<String>,
    /// The node has a value the toolkit does not expose (a GTK 4.8 entry reads "" whatever
    /// it shows): `value` is None and reads as unknown (`value=?`), never as empty.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub value_unknown: bool,
    pub states: Vec<String>,
    pub actions: Vec<String>,
    /// Frame in window-local screenshot pixels, when the node has one on screen.
    pub frame: Option<Rect>,
    /// Something an agent can act on (press, toggle, type into, set a value of).
    pub actionable: bool,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// How many children the app reports, shown or not, where it says. A walk keeps only
    /// the children that show, so a line added below a long list's fold changes this and
    /// nothing else of the tree: the effect check hashes it for that reason.
    #[serde(skip)]
    pub reported_children: Option<u32>,
    /// Backend handle used to act on the node later (opaque above the platform); empty
    /// for text read off the pixels, which is acted on at its frame.
    #[serde(skip)]
    pub handle: String,
    /// How sure the reading is (0-100), for text read off the pixels (OCR); None for a
    /// node the app itself reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
}

/// The state of a node that does not show, in a tree read with what does not show
/// ([`Platform::accessibility_tree_with_hidden`]).
pub const HIDDEN: &str = "hidden";

/// The role of text read off a window's pixels (a word or a line of them), in a window
/// with no accessibility tree to read: `snapshot::text` makes such nodes.
pub const OCR_TEXT_ROLE: &str = "ocr_text";

/// A window's accessibility tree; node 0 is the window itself.
#[derive(Debug, Clone, Default)]
pub struct AxTree {
    pub nodes: Vec<AxNode>,
    /// Why the tree may be incomplete (bridge missing, app not registered, ...).
    pub warning: Option<String>,
    /// What a bound of the read left out, element by element (get_window_state's
    /// `truncated`): nothing is dropped without saying so.
    pub left_out: Vec<LeftOut>,
    /// Why there is no tree, where the backend can tell (None: there is one, or the app
    /// exported one without anything to act on).
    pub absence: Option<Absence>,
}

/// Why an app has no accessibility tree to read: what a window's OCR reading stands in
/// for (get_window_state's `tree_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absence {
    /// The app is not on the accessibility bus: no bridge (Tk, Xt, SDL), NO_AT_BRIDGE, or
    /// started before accessibility was on.
    NoBridge,
    /// The app is connected to the accessibility bus but exports no object, `after_ms`
    /// after it started (or after the read's own wait, when its age is unknown).
    NothingExported { after_ms: u64 },
}

/// What a bound left out under one element: of its `total` children (a table's cells),
/// `returned` were read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// The element as its tree line names it: `table "Sheet1"`.
    pub element: String,
    pub returned: u64,
    pub total: u64,
    /// The bound, in words: `only the cells in view of a table too big to list`.
    pub why: String,
}

/// One line of `check_permissions`.
#[derive(Debug, Clone, Serialize)]
pub struct PermissionCheck {
    /// What the check is about: health_report gathers checks by it, never by name.
    pub concern: Concern,
    pub name: String,
    pub ok: bool,
    pub detail: String,
    /// How to fix it when not ok.
    pub fix: Option<String>,
}

/// What a permission check is about. Each backend names its checks its own way (an X
/// extension, a Wayland protocol); health_report's checks rest on these, so a backend
/// cannot miss one by naming it differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Concern {
    /// A desktop to work in: the display server reachable, its windows listed and managed.
    Session,
    /// The accessibility bus, and toolkits exporting their trees on it.
    Accessibility,
    /// Screenshots and window capture.
    Capture,
    /// Pointer and key input.
    Input,
    /// What the backend reports besides, which no health check rests on (a compositor's
    /// IPC for window positions).
    Other,
}

/// How input reaches an app: `background` must not change focus, the active window, the
/// stacking order or the pointer; `foreground` may activate the window and use real input
/// devices, and restores the previous active window and pointer afterwards.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    Background,
    Foreground,
}

/// A low-level input event; coordinates are window-local pixels, keys are keysyms.
#[derive(Debug, Clone, PartialEq)]
pub enum InputEvent {
    Move {
        x: i32,
        y: i32,
    },
    Button {
        x: i32,
        y: i32,
        button: u8,
        down: bool,
    },
    Key {
        keysym: u32,
        down: bool,
    },
    Pause(std::time::Duration),
}

impl InputEvent {
    /// The keysyms of the key events among `events`, in order (what a keymap must hold
    /// before they are sent).
    pub fn keysyms(events: &[InputEvent]) -> Vec<u32> {
        events
            .iter()
            .filter_map(|e| match e {
                InputEvent::Key { keysym, .. } => Some(*keysym),
                _ => None,
            })
            .collect()
    }
}

/// Text longer than this is cut in snapshots and readings (documents can be huge). A
/// backend reads one character more, so that a reading can say it was cut
/// (`value_truncated`).
pub const MAX_TEXT_CHARS: usize = 4000;

/// What the clipboard offers: its types (`UTF8_STRING`, `image/png`, …) and, when asked
/// for and offered, its text.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClipboardContents {
    pub types: Vec<String>,
    pub text: Option<String>,
}

/// An element's state read back after an action, to verify its effect.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ElementReading {
    pub name: String,
    pub states: Vec<String>,
    pub text: Option<String>,
    pub value: Option<f64>,
}

/// A window's latest repaint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repaint {
    pub at: std::time::Instant,
    /// The time since the repaint before it, when the two were close enough to be frames
    /// of one animation (`REPAINT_CADENCE_MAX`): how long a pause in it may last.
    pub cadence: Option<std::time::Duration>,
}

/// Repaints further apart than this are not frames of one animation.
pub const REPAINT_CADENCE_MAX: std::time::Duration = std::time::Duration::from_millis(250);

/// What an app has told the accessibility bus so far: how many change events, and when
/// the last one came (recording and replay wait for it to go quiet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppActivity {
    pub events: u64,
    pub last: Option<std::time::Instant>,
}

/// Waits until `pid`'s app sends a change event after `since`, or until `until`; says
/// whether one came. The feed's counters are memory, looked at every few milliseconds.
pub async fn event_after(
    platform: &dyn Platform,
    pid: u32,
    since: std::time::Instant,
    until: std::time::Instant,
) -> bool {
    let sleep = |t: std::time::Instant| async move {
        tokio::time::sleep_until(t.into()).await;
        false
    };
    event_after_unless(platform, pid, since, until, sleep)
        .await
        .unwrap_or(false)
}

/// [`event_after`] with its own wait between looks: `wait(t)` sleeps until `t` and says
/// whether to give up (then None). The feed is never left half-read: a caller that must
/// stop early (a recording's settle, cut by the next action) stops only in `wait`.
pub async fn event_after_unless<W, F>(
    platform: &dyn Platform,
    pid: u32,
    since: std::time::Instant,
    until: std::time::Instant,
    wait: W,
) -> Option<bool>
where
    W: Fn(std::time::Instant) -> F,
    F: std::future::Future<Output = bool>,
{
    const CHECK: std::time::Duration = std::time::Duration::from_millis(4);
    loop {
        let last = platform.app_activity(pid).await.and_then(|a| a.last);
        if last.is_some_and(|t| t > since) {
            return Some(true);
        }
        let now = std::time::Instant::now();
        if now >= until {
            return Some(false);
        }
        if wait((now + CHECK).min(until)).await {
            return None;
        }
    }
}

/// Waits until window `window_id` repaints after `since` (which may lie ahead), or until
/// `until`; says whether it did (false at once where the platform reports no repaints:
/// there is nothing to wait on). What shows an effect in an app that sends no events.
pub async fn repaint_after(
    platform: &dyn Platform,
    window_id: u64,
    since: std::time::Instant,
    until: std::time::Instant,
) -> bool {
    let sleep = |t: std::time::Instant| async move {
        tokio::time::sleep_until(t.into()).await;
        false
    };
    repaint_after_unless(platform, window_id, since, until, sleep)
        .await
        .unwrap_or(false)
}

/// [`repaint_after`] with its own wait between looks, as [`event_after_unless`]: `wait(t)`
/// sleeps until `t` and says whether to give up (then None).
pub async fn repaint_after_unless<W, F>(
    platform: &dyn Platform,
    window_id: u64,
    since: std::time::Instant,
    until: std::time::Instant,
    wait: W,
) -> Option<bool>
where
    W: Fn(std::time::Instant) -> F,
    F: std::future::Future<Output = bool>,
{
    const CHECK: std::time::Duration = std::time::Duration::from_millis(5);
    loop {
        match platform.last_repaint(window_id).await {
            None => return Some(false),
            Some(r) if r.at > since => return Some(true),
            Some(_) => {}
        }
        let now = std::time::Instant::now();
        if now >= until {
            return Some(false);
        }
        if wait((now + CHECK).min(until)).await {
            return None;
        }
    }
}

/// Where [`Platform::insert_text`] put its text, in characters: `replaced` characters
/// from `offset` on (a selection) gave way to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TextEdit {
    pub offset: usize,
    pub replaced: usize,
}

/// A numeric element's range (sliders, spin buttons, scroll bars).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ValueRange {
    pub current: f64,
    pub minimum: f64,
    pub maximum: f64,
    pub step: f64,
}

/// What "the user's foreground" is at one instant: checked around background actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FocusState {
    pub active_window: Option<u64>,
    pub input_focus: u64,
    pub stacking: Vec<u64>,
    pub pointer: (i32, i32),
}

/// Errors from the platform layer.
#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    #[error("{0}")]
    NoDesktop(String),
    #[error("window {0} not found (it may have closed; run list_windows)")]
    NoSuchWindow(u64),
    #[error("{0}")]
    Accessibility(String),
    #[error("{0}")]
    Capture(String),
    #[error("{0}")]
    Launch(String),
    /// The element cannot do this (no such action, not editable, not a value).
    #[error("{0}")]
    Unsupported(String),
    /// The caller's input cannot be delivered as given (bad value, out of range).
    #[error("{0}")]
    InvalidInput(String),
    #[error("{0}")]
    Other(String),
}

pub type PlatformResult<T> = Result<T, PlatformError>;

/// The protocol a browser's debugging endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageProtocol {
    /// Chrome DevTools Protocol (Chromium and its kin).
    Cdp,
    /// WebDriver BiDi (Firefox).
    Bidi,
}

/// Where a browser that cua launched answers its debugging protocol: a WebSocket URL on
/// the loopback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageEndpoint {
    pub protocol: PageProtocol,
    pub url: String,
}

/// Everything the tools need from a desktop, by concern: what shows on it
/// ([`Observation`]), acting on it ([`Input`]), its windows ([`Windows`]), and its apps and
/// processes ([`Launching`]). A backend implements each; callers of `dyn Platform` reach them
/// all.
#[async_trait::async_trait]
pub trait Platform: Observation + Input + Windows + Launching + Send + Sync {
    /// Short backend name for reports (`linux-x11-atspi`).
    fn name(&self) -> &'static str;
    /// Which Linux display server it drives, where it drives one.
    fn display_backend(&self) -> Option<crate::desktop::Backend> {
        None
    }
    async fn check_permissions(&self) -> Vec<PermissionCheck>;
}

/// What shows on a desktop: windows' trees and elements read live, pixels, the
/// pointer and the keyboard focus, what an app's toolkit does differently, and its events.
#[async_trait::async_trait]
pub trait Observation: Send + Sync {
    async fn screen_size(&self) -> PlatformResult<(u32, u32)>;
    async fn cursor_position(&self) -> PlatformResult<(i32, i32)>;
    /// Whether the real pointer is over this window, uncovered (GTK 3 takes synthetic
    /// pointer events only then).
    async fn pointer_over(&self, _window_id: u64) -> bool {
        false
    }
    /// The window's client area, correct even when other windows cover it.
    async fn capture_window(&self, window_id: u64) -> PlatformResult<Capture>;
    /// The window's open popups (menus, context menus, popovers, drop-down lists, where
    /// the display makes them windows of their own), each an id and its bounds on the
    /// screen, bottom to top: what a person sees open over the window that its tree does
    /// not hold. None where the platform cannot tell.
    async fn popups(&self, _window_id: u64) -> Option<Vec<(u64, Rect)>> {
        None
    }
    /// The accessibility tree of `pid` scoped to `window`: what shows (a hidden widget, a
    /// closed menu's items are left out; what a view scrolled out of sight is kept).
    async fn accessibility_tree(&self, pid: u32, window: &WindowInfo) -> PlatformResult<AxTree>;
    /// The same tree with what does not show too, each such node with the state
    /// [`HIDDEN`] (get_window_state's `include_hidden`). A backend that reads only what
    /// shows gives its usual tree.
    async fn accessibility_tree_with_hidden(
        &self,
        pid: u32,
        window: &WindowInfo,
    ) -> PlatformResult<AxTree> {
        self.accessibility_tree(pid, window).await
    }
    /// What the app's toolkit is known to do differently (none when it is unknown, or the
    /// app has no accessibility at all).
    async fn app_quirks(&self, pid: u32) -> AppQuirks;
    async fn value_range(&self, handle: &str) -> PlatformResult<ValueRange>;
    /// Names of the options a combo box or list offers, in order.
    async fn option_names(&self, handle: &str) -> PlatformResult<Vec<String>>;
    /// Names of a combo box's or list's options that are selected now.
    async fn selected_options(&self, _handle: &str) -> PlatformResult<Vec<String>> {
        Ok(Vec::new())
    }
    async fn read_element(&self, handle: &str) -> PlatformResult<ElementReading>;
    /// When the window last changed on screen, as the backend saw it since the window's
    /// first capture (watching starts there); None when it cannot tell.
    async fn last_repaint(&self, _window_id: u64) -> Option<Repaint> {
        None
    }
    async fn focus_state(&self) -> PlatformResult<FocusState>;
    /// The whole screen as it shows now, in screen pixels.
    async fn capture_screen(&self) -> PlatformResult<Capture> {
        Err(PlatformError::Unsupported(
            "capturing the screen is not supported by this backend".into(),
        ))
    }
    /// The app's change events so far, from an event feed started on first call; None
    /// when the backend has none (then settling compares tree reads instead).
    async fn app_activity(&self, _pid: u32) -> Option<AppActivity> {
        None
    }
}

/// Acting on a desktop: an element through its accessibility interfaces, input events
/// to a window or the seat, the clipboard, and the agent cursor's overlay.
#[async_trait::async_trait]
pub trait Input: Send + Sync {
    // Acting on elements (handles come from an AxTree); none of these moves the pointer or
    // changes focus.
    /// Runs the element's action with this name (case-insensitive).
    async fn do_action(&self, handle: &str, action: &str) -> PlatformResult<()>;
    /// Types text as a person would: replaces the selection when there is one, else
    /// inserts at the caret; leaves the caret after the text. Says where it went.
    async fn insert_text(&self, handle: &str, text: &str) -> PlatformResult<TextEdit>;
    /// Replaces the element's whole text.
    async fn set_text(&self, handle: &str, text: &str) -> PlatformResult<()>;
    async fn set_value(&self, handle: &str, value: f64) -> PlatformResult<()>;
    /// Selects option `index` of a combo box or list without opening a popup.
    async fn select_option(&self, handle: &str, index: usize) -> PlatformResult<()>;
    /// Scrolls the view holding `handle` by `count` of its sibling rows, forward or back,
    /// without input events; returns the handle of the row brought into view (None: the
    /// view is at that end already).
    async fn reveal_sibling(
        &self,
        _handle: &str,
        _forward: bool,
        _count: usize,
    ) -> PlatformResult<Option<String>> {
        Err(PlatformError::Unsupported(
            "scrolling rows into view is not supported by this backend".into(),
        ))
    }
    /// Gives the element the keyboard focus inside its window (the one route here that
    /// changes focus: key events need a target when a toolkit ignores the text interface).
    async fn focus_element(&self, _handle: &str) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(
            "focusing an element is not supported by this backend".into(),
        ))
    }
    // The clipboard.
    /// What the clipboard offers (its text only when `include_text`).
    async fn clipboard_read(&self, _include_text: bool) -> PlatformResult<ClipboardContents> {
        Err(PlatformError::Unsupported(
            "the clipboard is not supported by this backend".into(),
        ))
    }
    /// Puts content on the clipboard, each type with its bytes, owned by this process for
    /// as long as it runs (or until another app takes the clipboard).
    async fn clipboard_write(&self, _offer: Vec<(String, Vec<u8>)>) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(
            "the clipboard is not supported by this backend".into(),
        ))
    }
    // Raw input.
    /// Sends events to a window: background as synthetic events to the window only,
    /// foreground through the real input devices with the window activated.
    async fn send_input(
        &self,
        window: &WindowInfo,
        events: &[InputEvent],
        delivery: Delivery,
    ) -> PlatformResult<()>;
    /// Moves the real pointer to a screen point.
    async fn warp_pointer(&self, x: i32, y: i32) -> PlatformResult<()>;
    /// Shows the agent cursor's overlay: `image` with its top-left corner at (`x`, `y`) on
    /// the screen, above every window, in a window of its own that never takes input or
    /// focus and is in no window's capture. Moves it when it already shows.
    async fn show_overlay(&self, _image: &Capture, _x: i32, _y: i32) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(
            "this backend has no agent cursor overlay".into(),
        ))
    }
    /// Hides the overlay (nothing when none shows).
    async fn hide_overlay(&self) {}
}

/// A desktop's windows: listed, the active one, moved, sized and raised.
#[async_trait::async_trait]
pub trait Windows: Send + Sync {
    async fn list_windows(&self) -> PlatformResult<WindowList>;
    /// The pid of the window that has the user's focus, if any.
    async fn active_pid(&self) -> PlatformResult<Option<u32>>;
    /// Whether the desktop this platform connected to still answers (false once its
    /// display server is gone, even if a new one took its place).
    async fn desktop_alive(&self) -> bool {
        true
    }
    /// Asks for a window size, in pixels of its screenshot (the harness pins window sizes
    /// so screenshots compare).
    async fn resize_window(&self, window_id: u64, width: u32, height: u32) -> PlatformResult<()>;
    /// Moves and sizes a window (its client area, in screen pixels); the window manager
    /// may adjust it, so callers read the result back.
    async fn set_window_frame(&self, _window_id: u64, _frame: Rect) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(
            "moving windows is not supported by this backend".into(),
        ))
    }
    /// Makes a window the active one and leaves it so (bring_to_front).
    async fn activate_window(&self, _window_id: u64) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(
            "activating windows is not supported by this backend".into(),
        ))
    }
}

/// The apps and processes on a desktop: installed and running apps, launching, a
/// process's identity, life and end, and a launched browser's debugging endpoint.
#[async_trait::async_trait]
pub trait Launching: Send + Sync {
    async fn installed_apps(&self) -> PlatformResult<Vec<InstalledApp>>;
    async fn running_apps(&self) -> PlatformResult<Vec<RunningApp>>;
    async fn launch(&self, request: &LaunchRequest) -> PlatformResult<LaunchedApp>;
    /// How long ago the process started (None when the backend cannot tell).
    async fn process_age(&self, _pid: u32) -> Option<std::time::Duration> {
        None
    }
    /// Force-terminates a process (kill_app checks first that it is an app of this desktop).
    async fn kill_process(&self, _pid: u32) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(
            "terminating processes is not supported by this backend".into(),
        ))
    }
    /// Whether a process still runs (a zombie waiting for its parent does not).
    async fn process_running(&self, _pid: u32) -> bool {
        false
    }
    /// The debugging endpoint of the browser process `pid`: an error that says how to get
    /// one when the browser was not started with it, or `pid` is no browser.
    async fn page_endpoint(&self, _pid: u32) -> PlatformResult<PageEndpoint> {
        Err(PlatformError::Unsupported(
            "browser pages are not supported by this backend".into(),
        ))
    }
    /// The file name of process `pid`'s executable (an app's identity in recordings and
    /// the policy); None when the backend cannot tell.
    fn process_executable(&self, _pid: u32) -> Option<String> {
        None
    }
    /// The program name process `pid` was started as (its first command-line word), which
    /// a launcher script's process shows where its executable is the interpreter.
    fn process_command_name(&self, _pid: u32) -> Option<String> {
        None
    }
}

pub use crate::desktop::DesktopEnv;

/// The platform for this machine, connected to `desktop`.
pub fn connect(desktop: &DesktopEnv) -> PlatformResult<std::sync::Arc<dyn Platform>> {
    #[cfg(all(target_os = "linux", feature = "linux"))]
    return Ok(std::sync::Arc::new(linux::LinuxPlatform::connect(desktop)?));
    #[cfg(not(all(target_os = "linux", feature = "linux")))]
    {
        let _ = desktop;
        Err(PlatformError::NoDesktop(NO_BACKEND.into()))
    }
}

/// What a build without a desktop backend says when asked for a desktop.
pub const NO_BACKEND: &str = "this build of cua has no desktop backend: build it on Linux with the `linux` feature (on by default)";

/// Every role name an element can have in this platform's trees (what a scenario's
/// `target.role` is checked against, and docs/roles.md lists).
pub fn role_vocabulary() -> Vec<String> {
    #[cfg(all(target_os = "linux", feature = "linux"))]
    let mut roles = linux::atspi::role_vocabulary();
    #[cfg(not(all(target_os = "linux", feature = "linux")))]
    let mut roles = Vec::new();
    roles.push(OCR_TEXT_ROLE.to_string());
    roles
}
