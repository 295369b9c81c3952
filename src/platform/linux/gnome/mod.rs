//! GNOME Shell (mutter) on Wayland. Mutter offers none of the wlroots protocols, and its
//! own window list and screenshots (org.gnome.Shell.Introspect, .Screenshot) refuse callers
//! outside the shell. So cua runs code inside it: a Shell extension of its own
//! (`extension/`, written into the GNOME sandbox by `cua sandbox start --backend gnome`)
//! that serves org.cua.Shell on the session bus:
//!
//! - windows: mutter's own list, bottom to top, with pids, frames, focus and popups;
//! - capture: the shell's screenshot of a region of the stage, as PNG;
//! - input: Clutter virtual devices, the seat's pointer and keyboard (a foreground route:
//!   mutter gives events to the window under the pointer and the focused one);
//! - placing and activating windows.
//!
//! Calls go over a [`BusClient`], so they work from async code and blocking threads alike,
//! each bounded.

use serde::Deserialize;

use super::bus_client::BusClient;
use super::display::{DisplayServer, ServerWindow};
use crate::platform::{
    Capture, Concern, Delivery, FocusState, InputEvent, PermissionCheck, PlatformError,
    PlatformResult, Rect, WindowInfo,
};

/// The extension's files, written into the sandbox's shell data folder.
pub const EXTENSION_UUID: &str = "cua-shell@cua.dev";
pub const EXTENSION_METADATA: &str = include_str!("extension/metadata.json");
pub const EXTENSION_JS: &str = include_str!("extension/extension.js");

const BUS_NAME: &str = "org.cua.Shell";
const OBJECT_PATH: &str = "/org/cua/Shell";

/// Mutter's window types that are popups of another window (menus, drop-downs, tooltips);
/// the rest are windows of their own.
const POPUP_KINDS: &[&str] = &[
    "DROPDOWN_MENU",
    "POPUP_MENU",
    "TOOLTIP",
    "COMBO",
    "MENU",
    "NOTIFICATION",
    "DND",
];

/// Why background input does nothing here (it follows the toolkit's name in an
/// escalation's reason).
const BACKGROUND_INPUT: &str =
    "gets no events addressed to its window on Wayland (GNOME), which has no way to send them";

/// The bridge inside a running GNOME Shell.
pub struct GnomeShell {
    bus: BusClient,
    address: String,
}

/// What the extension's `Windows` answers.
#[derive(Deserialize)]
struct Snapshot {
    screen: (u32, u32),
    pointer: (i32, i32),
    windows: Vec<ShellWindow>,
}

#[derive(Deserialize)]
struct ShellWindow {
    id: u64,
    pid: i64,
    title: String,
    app_id: String,
    kind: String,
    parent: Option<u64>,
    /// The window as the desktop shows it (client-side shadows excluded).
    frame: ShellRect,
    /// The app's whole surface, shadows included.
    buffer: ShellRect,
    focused: bool,
    minimized: bool,
    hidden: bool,
}

#[derive(Deserialize, Clone, Copy)]
struct ShellRect {
    x: i32,
    y: i32,
    width: i32,
    height: i32,
}

impl ShellWindow {
    fn bounds(&self) -> Rect {
        Rect::new(
            self.frame.x,
            self.frame.y,
            self.frame.width,
            self.frame.height,
        )
    }

    fn is_popup(&self) -> bool {
        POPUP_KINDS.contains(&self.kind.as_str())
    }
}

impl GnomeShell {
    /// Connects to the session bus at `address` and checks that cua's extension answers
    /// there.
    pub fn connect(address: &str) -> PlatformResult<GnomeShell> {
        let bus = BusClient::connect(address, "cua-gnome-bus")
            .map_err(|e| PlatformError::NoDesktop(format!("the session bus at {address}: {e}")))?;
        let shell = GnomeShell {
            bus,
            address: address.to_string(),
        };
        shell.snapshot().map_err(|e| {
            PlatformError::NoDesktop(format!(
                "GNOME Shell with cua's extension ({EXTENSION_UUID}) does not answer on the session bus: {e}"
            ))
        })?;
        Ok(shell)
    }

    /// Calls the extension's `method` with `body`; its answer deserialized.
    fn call<B, R>(&self, method: &'static str, body: B) -> PlatformResult<R>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType + Send + Sync + 'static,
        R: for<'d> Deserialize<'d> + zbus::zvariant::Type + Send + 'static,
    {
        self.bus
            .call(|conn| async move {
                let reply = conn
                    .call_method(Some(BUS_NAME), OBJECT_PATH, Some(BUS_NAME), method, &body)
                    .await?;
                reply.body().deserialize::<R>()
            })
            .map_err(|e| PlatformError::Other(format!("GNOME Shell ({method}): {e}")))
    }

    fn snapshot(&self) -> PlatformResult<Snapshot> {
        let json: String = self.call("Windows", ())?;
        serde_json::from_str(&json)
            .map_err(|e| PlatformError::Other(format!("GNOME Shell's window list: {e}")))
    }

    fn window(&self, id: u64) -> PlatformResult<ShellWindow> {
        self.snapshot()?
            .windows
            .into_iter()
            .find(|w| w.id == id)
            .ok_or(PlatformError::NoSuchWindow(id))
    }

    /// The screen's pixels in `region`, decoded from the shell's PNG.
    fn capture_region(&self, region: Rect) -> PlatformResult<Capture> {
        let png: Vec<u8> =
            self.call("Capture", (region.x, region.y, region.width, region.height))?;
        let image = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
            .map_err(|e| PlatformError::Capture(format!("GNOME Shell's screenshot: {e}")))?
            .to_rgba8();
        Ok(Capture {
            width: image.width(),
            height: image.height(),
            rgba: image.into_raw(),
        })
    }

    /// Sends `events` (screen pixels) through the seat; pauses are kept here, between
    /// batches, so the shell never blocks.
    fn send_screen_events(&self, events: &[InputEvent], origin: (i32, i32)) -> PlatformResult<()> {
        let mut batch = Vec::new();
        for event in events {
            match event {
                InputEvent::Pause(d) => {
                    self.flush_batch(&mut batch)?;
                    std::thread::sleep(*d);
                }
                InputEvent::Move { x, y } => {
                    let at = (origin.0 + x, origin.1 + y);
                    batch.push(serde_json::json!({ "move": [at.0, at.1] }));
                }
                InputEvent::Button { x, y, button, down } => {
                    let at = (origin.0 + x, origin.1 + y);
                    batch.push(serde_json::json!({ "move": [at.0, at.1] }));
                    batch.push(serde_json::json!({ "button": button, "down": down }));
                }
                InputEvent::Key { keysym, down } => {
                    batch.push(serde_json::json!({ "keysym": keysym, "down": down }));
                }
            }
        }
        self.flush_batch(&mut batch)
    }

    fn flush_batch(&self, batch: &mut Vec<serde_json::Value>) -> PlatformResult<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let json = serde_json::Value::Array(std::mem::take(batch)).to_string();
        self.call::<_, ()>("Input", (json,))
    }
}

impl DisplayServer for GnomeShell {
    fn name(&self) -> &'static str {
        "linux-gnome-atspi"
    }

    fn backend(&self) -> crate::desktop::Backend {
        crate::desktop::Backend::Gnome
    }

    fn checks(&self) -> Vec<PermissionCheck> {
        let answer = self.snapshot();
        let reached = answer.is_ok();
        let bridge = |concern: Concern, name: &str, what: &str| {
            PermissionCheck {
            concern,
            name: name.into(),
            ok: reached,
            detail: match &answer {
                Ok(_) => format!("{what}: through cua's Shell extension ({EXTENSION_UUID})"),
                Err(e) => format!("{what}: {e}"),
            },
            fix: (!reached).then(|| {
                format!("run GNOME Shell with cua's extension {EXTENSION_UUID} enabled: `cua sandbox start --backend gnome` does")
            }),
        }
        };
        vec![
            PermissionCheck {
                concern: Concern::Session,
                name: "gnome_shell".into(),
                ok: reached,
                detail: match &answer {
                    Ok(s) => format!(
                        "GNOME Shell answers on the session bus {} ({} windows)",
                        self.address,
                        s.windows.len()
                    ),
                    Err(e) => e.to_string(),
                },
                fix: None,
            },
            bridge(Concern::Session, "window_list", "the window list with pids"),
            bridge(Concern::Capture, "screenshots", "screenshots"),
            bridge(Concern::Input, "seat_input", "pointer and key input"),
            super::display::no_background_input(),
        ]
    }

    fn windows(&self) -> PlatformResult<Vec<ServerWindow>> {
        let snapshot = self.snapshot()?;
        let count = snapshot.windows.len() as u32;
        Ok(snapshot
            .windows
            .into_iter()
            .filter(|w| !w.is_popup())
            .enumerate()
            .map(|(i, w)| ServerWindow {
                id: w.id,
                pid: u32::try_from(w.pid).ok().filter(|p| *p > 0),
                bounds: w.bounds(),
                // The focused window is the front one, as on sway.
                z_index: if w.focused { count } else { i as u32 },
                is_on_screen: !w.minimized && !w.hidden,
                desktop: None,
                title: w.title,
                class: w.app_id,
            })
            .collect())
    }

    fn active_window(&self) -> Option<u64> {
        let snapshot = self.snapshot().ok()?;
        snapshot.windows.iter().find(|w| w.focused).map(|w| w.id)
    }

    fn window_bounds(&self, id: u64) -> PlatformResult<Rect> {
        Ok(self.window(id)?.bounds())
    }

    fn screen_size(&self) -> (u32, u32) {
        self.snapshot().map(|s| s.screen).unwrap_or((0, 0))
    }

    fn cursor_position(&self) -> PlatformResult<(i32, i32)> {
        Ok(self.snapshot()?.pointer)
    }

    fn capture(&self, id: u64) -> PlatformResult<Capture> {
        let snapshot = self.snapshot()?;
        let window = snapshot
            .windows
            .iter()
            .find(|w| w.id == id)
            .ok_or(PlatformError::NoSuchWindow(id))?;
        let (w, h) = snapshot.screen;
        let screen = Rect::new(0, 0, w as i32, h as i32);
        let bounds = window.bounds();
        let region = bounds.intersection(&screen).ok_or_else(|| {
            PlatformError::Capture(format!("window {id} is off the screen ({bounds:?})"))
        })?;
        self.capture_region(region)
    }

    fn popups(&self, id: u64) -> Option<Vec<(u64, Rect)>> {
        let snapshot = self.snapshot().ok()?;
        Some(
            snapshot
                .windows
                .iter()
                .filter(|w| w.is_popup() && w.parent == Some(id))
                .map(|w| (w.id, w.bounds()))
                .collect(),
        )
    }

    fn frame_origin(&self, id: u64) -> super::atspi::FrameOrigin {
        let surface = self
            .window(id)
            .ok()
            .map(|w| (w.buffer.x - w.frame.x, w.buffer.y - w.frame.y));
        super::atspi::FrameOrigin::WindowRelative { surface }
    }

    fn background_input_caveat(&self) -> Option<&'static str> {
        Some(BACKGROUND_INPUT)
    }

    fn alive(&self) -> bool {
        self.snapshot().is_ok()
    }

    fn send_input(
        &self,
        window: &WindowInfo,
        events: &[InputEvent],
        _delivery: Delivery,
    ) -> PlatformResult<()> {
        // Always foreground: the platform sends nothing in the background where
        // `background_input_caveat` says so.
        let before = self.active_window();
        if before != Some(window.window_id) {
            self.activate(window.window_id)?;
        }
        let origin = (window.bounds.x, window.bounds.y);
        self.send_screen_events(events, origin)?;
        // Give the person's foreground back: the window that was active.
        if let Some(previous) = before.filter(|b| *b != window.window_id) {
            let _ = self.activate(previous);
        }
        Ok(())
    }

    fn warp(&self, x: i32, y: i32) -> PlatformResult<()> {
        self.send_screen_events(&[InputEvent::Move { x, y }], (0, 0))
    }

    fn focus_state(&self) -> PlatformResult<FocusState> {
        let snapshot = self.snapshot()?;
        let active = snapshot.windows.iter().find(|w| w.focused).map(|w| w.id);
        Ok(FocusState {
            active_window: active,
            input_focus: active.unwrap_or(0),
            stacking: snapshot.windows.iter().map(|w| w.id).collect(),
            pointer: snapshot.pointer,
        })
    }

    fn resize(&self, id: u64, width: u32, height: u32) -> PlatformResult<()> {
        self.call::<_, ()>(
            "Place",
            (id, false, 0i32, 0i32, width as i32, height as i32),
        )
    }

    fn set_frame(&self, id: u64, frame: Rect) -> PlatformResult<()> {
        self.call::<_, ()>(
            "Place",
            (id, true, frame.x, frame.y, frame.width, frame.height),
        )
    }

    fn activate(&self, id: u64) -> PlatformResult<()> {
        self.call::<_, ()>("Activate", (id,))
    }

    fn capture_screen(&self) -> PlatformResult<Capture> {
        let (w, h) = self.snapshot()?.screen;
        self.capture_region(Rect::new(0, 0, w as i32, h as i32))
    }
}
