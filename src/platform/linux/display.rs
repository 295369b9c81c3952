//! The display server's half of the Linux backend, behind one trait: the window list,
//! capture, input and window placement, which X11 (x11_desktop.rs) and Wayland
//! (wayland/) do differently. Accessibility (AT-SPI), processes and launching
//! are the same under both and stay in [`super::LinuxPlatform`].
//!
//! Calls block (X round trips, Wayland dispatch); the platform runs the long ones on
//! blocking threads.

use super::atspi::FrameOrigin;
use crate::platform::{
    Capture, Delivery, FocusState, InputEvent, PermissionCheck, PlatformError, PlatformResult,
    Rect, Repaint, WindowInfo,
};

/// A top-level window as the display server lists it, before app names are attached.
#[derive(Debug, Clone)]
pub struct ServerWindow {
    pub id: u64,
    pub pid: Option<u32>,
    pub title: String,
    /// WM_CLASS on X11, the app id on Wayland: names the app where its pid does not.
    pub class: String,
    pub bounds: Rect,
    pub z_index: u32,
    pub is_on_screen: bool,
    pub desktop: Option<u32>,
}

pub trait DisplayServer: Send + Sync {
    /// The platform's name in reports (`linux-x11-atspi`).
    fn name(&self) -> &'static str;
    /// Which display server this is.
    fn backend(&self) -> crate::desktop::Backend;
    /// What this display offers of what cua uses, one line each.
    fn checks(&self) -> Vec<PermissionCheck>;
    /// Top-level windows, bottom to top.
    fn windows(&self) -> PlatformResult<Vec<ServerWindow>>;
    fn current_desktop(&self) -> Option<u32> {
        None
    }
    fn active_window(&self) -> Option<u64>;
    /// A window's client area on the screen now.
    fn window_bounds(&self, id: u64) -> PlatformResult<Rect>;
    fn screen_size(&self) -> (u32, u32);
    fn cursor_position(&self) -> PlatformResult<(i32, i32)>;
    fn pointer_over(&self, _id: u64) -> bool {
        false
    }
    fn capture(&self, id: u64) -> PlatformResult<Capture>;
    /// Window `id`'s open popups (menus, context menus, popovers, drop-down lists: windows
    /// of their own), each with its bounds on the screen, bottom to top. None where the
    /// display cannot tell.
    fn popups(&self, _id: u64) -> Option<Vec<(u64, Rect)>> {
        None
    }
    fn last_repaint(&self, _id: u64) -> Option<Repaint> {
        None
    }
    /// Where toolkits' element extents in window `id` start: on the screen, GTK 4's from
    /// its own frame, which starts inside the window where the display says so (GTK's
    /// client-side decorations under X11). Wayland answers otherwise: no client knows
    /// where its window is, so every toolkit reports extents relative to it.
    fn frame_origin(&self, _id: u64) -> FrameOrigin {
        FrameOrigin::Screen {
            toolkit_frame: None,
        }
    }
    /// Why no app takes background (synthetic) input on this display, when none does
    /// (Wayland): every app's quirks then say so, and the tools escalate to foreground.
    fn background_input_caveat(&self) -> Option<&'static str> {
        None
    }
    fn alive(&self) -> bool;
    fn send_input(
        &self,
        window: &WindowInfo,
        events: &[InputEvent],
        delivery: Delivery,
    ) -> PlatformResult<()>;
    fn warp(&self, x: i32, y: i32) -> PlatformResult<()>;
    fn focus_state(&self) -> PlatformResult<FocusState>;
    fn resize(&self, id: u64, width: u32, height: u32) -> PlatformResult<()>;
    fn set_frame(&self, id: u64, frame: Rect) -> PlatformResult<()>;
    fn activate(&self, id: u64) -> PlatformResult<()>;
    fn capture_screen(&self) -> PlatformResult<Capture>;
    fn clipboard_read(&self, _include_text: bool) -> PlatformResult<(Vec<String>, Option<String>)> {
        Err(PlatformError::Unsupported(format!(
            "the clipboard is not supported on {} yet",
            self.name()
        )))
    }
    fn clipboard_write(&self, _offer: Vec<(String, Vec<u8>)>) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(format!(
            "the clipboard is not supported on {} yet",
            self.name()
        )))
    }
    fn show_overlay(&self, _image: &Capture, _x: i32, _y: i32) -> PlatformResult<()> {
        Err(PlatformError::Unsupported(format!(
            "the agent cursor overlay is not supported on {} yet",
            self.name()
        )))
    }
    fn hide_overlay(&self) {}
}

/// The check every Wayland display answers the same: no background input.
#[cfg(feature = "wayland")]
pub fn no_background_input() -> PermissionCheck {
    PermissionCheck {
        concern: crate::platform::Concern::Input,
        name: "background_input".into(),
        ok: false,
        detail: "Wayland has no way to send events to one window: pointer and key events go through the seat (delivery_mode foreground); background actions use the element's accessibility interface".into(),
        fix: None,
    }
}
