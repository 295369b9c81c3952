//! The X11 display server behind [`DisplayServer`]: EWMH windows, Composite capture with
//! Damage watching repaints, XTest and SendEvent input, the overlay and the clipboard.

use std::sync::{Arc, Mutex, OnceLock};

use super::atspi::FrameOrigin;
use super::display::{DisplayServer, ServerWindow};
use super::{clipboard, damage, overlay, x11};
use crate::platform::{
    Capture, Concern, Delivery, FocusState, InputEvent, PermissionCheck, PlatformResult, Rect,
    Repaint, WindowInfo,
};

pub struct X11Desktop {
    display: Option<String>,
    x11: x11::X11,
    /// Window repaints, watched from a window's first capture on (None: no Damage).
    repaints: OnceLock<Option<Arc<damage::Repaints>>>,
    /// The agent cursor's window, made when it first shows.
    overlay: Mutex<Option<overlay::Overlay>>,
    /// The clipboard, owned by a thread of its own once written.
    clipboard: clipboard::Clipboard,
}

impl X11Desktop {
    pub fn connect(display: Option<&str>) -> PlatformResult<X11Desktop> {
        Ok(X11Desktop {
            display: display.map(str::to_string),
            x11: x11::X11::connect(display)?,
            repaints: OnceLock::new(),
            overlay: Mutex::new(None),
            clipboard: clipboard::Clipboard::new(display.unwrap_or_default()),
        })
    }

    fn repaints(&self) -> Option<&Arc<damage::Repaints>> {
        self.repaints
            .get_or_init(|| damage::Repaints::connect(self.display.as_deref()?).map(Arc::new))
            .as_ref()
    }
}

impl DisplayServer for X11Desktop {
    fn name(&self) -> &'static str {
        "linux-x11-atspi"
    }

    fn backend(&self) -> crate::desktop::Backend {
        crate::desktop::Backend::X11
    }

    fn checks(&self) -> Vec<PermissionCheck> {
        let mut checks = vec![PermissionCheck {
            concern: Concern::Session,
            name: "x11_display".into(),
            ok: true,
            detail: format!(
                "X display {} reachable",
                self.display.as_deref().unwrap_or("")
            ),
            fix: None,
        }];
        checks.extend(self.x11.extension_checks());
        checks
    }

    fn windows(&self) -> PlatformResult<Vec<ServerWindow>> {
        Ok(self
            .x11
            .client_windows()?
            .into_iter()
            .map(|w| ServerWindow {
                id: w.id as u64,
                pid: w.pid,
                title: w.title,
                class: w.wm_class,
                bounds: w.bounds,
                z_index: w.z_index,
                is_on_screen: w.is_on_screen,
                desktop: w.desktop,
            })
            .collect())
    }

    fn current_desktop(&self) -> Option<u32> {
        self.x11.current_desktop()
    }

    fn active_window(&self) -> Option<u64> {
        self.x11.active_window().map(u64::from)
    }

    fn window_bounds(&self, id: u64) -> PlatformResult<Rect> {
        self.x11.client_bounds(id as u32)
    }

    fn screen_size(&self) -> (u32, u32) {
        self.x11.screen_size()
    }

    fn cursor_position(&self) -> PlatformResult<(i32, i32)> {
        self.x11.cursor_position()
    }

    fn pointer_over(&self, id: u64) -> bool {
        self.x11.pointer_over(id as u32).unwrap_or(false)
    }

    fn popups(&self, id: u64) -> Option<Vec<(u64, Rect)>> {
        let frame = self.x11.toplevel_ancestor(id as u32).ok()?;
        Some(
            self.x11
                .opened_popups(frame, id as u32)
                .into_iter()
                .map(|(w, at)| (w as u64, at))
                .collect(),
        )
    }

    fn capture(&self, id: u64) -> PlatformResult<Capture> {
        let (capture, frame) = self.x11.capture(id as u32)?;
        if let Some(repaints) = self.repaints() {
            repaints.watch(id as u32, frame);
        }
        Ok(capture)
    }

    fn last_repaint(&self, id: u64) -> Option<Repaint> {
        self.repaints()?.last_repaint(id as u32)
    }

    fn frame_origin(&self, id: u64) -> FrameOrigin {
        let toolkit_frame = self
            .x11
            .gtk_frame_extents(id as u32)
            .map(|(left, _, top, _)| (left, top));
        FrameOrigin::Screen { toolkit_frame }
    }

    fn alive(&self) -> bool {
        self.x11.alive()
    }

    fn send_input(
        &self,
        window: &WindowInfo,
        events: &[InputEvent],
        delivery: Delivery,
    ) -> PlatformResult<()> {
        self.x11.send_input(window, events, delivery)
    }

    fn warp(&self, x: i32, y: i32) -> PlatformResult<()> {
        self.x11.warp(x, y)
    }

    fn focus_state(&self) -> PlatformResult<FocusState> {
        self.x11.focus_state()
    }

    fn resize(&self, id: u64, width: u32, height: u32) -> PlatformResult<()> {
        self.x11.resize(id as u32, width, height)
    }

    fn set_frame(&self, id: u64, frame: Rect) -> PlatformResult<()> {
        self.x11.set_frame(id as u32, frame)
    }

    fn activate(&self, id: u64) -> PlatformResult<()> {
        self.x11.activate(id as u32)
    }

    fn capture_screen(&self) -> PlatformResult<Capture> {
        self.x11.capture_screen()
    }

    fn clipboard_read(&self, include_text: bool) -> PlatformResult<(Vec<String>, Option<String>)> {
        self.clipboard.read(include_text)
    }

    fn clipboard_write(&self, offer: Vec<(String, Vec<u8>)>) -> PlatformResult<()> {
        self.clipboard.write(offer)
    }

    fn show_overlay(&self, image: &Capture, x: i32, y: i32) -> PlatformResult<()> {
        let mut overlay = self.overlay.lock().unwrap();
        if overlay.is_none() {
            *overlay = Some(overlay::Overlay::open(self.display.as_deref())?);
        }
        overlay.as_mut().expect("just made").show(image, x, y)
    }

    fn hide_overlay(&self) {
        if let Some(overlay) = self.overlay.lock().unwrap().as_mut() {
            overlay.hide();
        }
    }
}
