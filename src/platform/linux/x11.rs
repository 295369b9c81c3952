//! X11 side of the Linux backend: window list (EWMH), geometry, pointer, and window capture
//! through Composite so covered windows come out right instead of black.
//!
//! Composite only keeps a window's pixels off-screen while some client holds a redirect;
//! the sandbox runs a holder for its whole life ([`hold_composite_redirect`]). Without one,
//! [`X11::capture`] redirects on its own connection and waits once for content to appear.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::composite::{ConnectionExt as _, Redirect};
use x11rb::protocol::res::{ClientIdMask, ClientIdSpec, ConnectionExt as _};
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConfigureWindowAux, ConnectionExt as _, ImageFormat, MapState, Window,
};
use x11rb::rust_connection::RustConnection;

use crate::platform::{Capture, Concern, PermissionCheck, PlatformError, PlatformResult, Rect};

/// Atoms interned once per connection.
pub(super) struct Atoms {
    pub(super) net_client_list_stacking: Atom,
    net_client_list: Atom,
    pub(super) net_active_window: Atom,
    net_wm_pid: Atom,
    net_wm_name: Atom,
    net_wm_state: Atom,
    net_wm_state_hidden: Atom,
    net_wm_desktop: Atom,
    net_current_desktop: Atom,
    net_supporting_wm_check: Atom,
    utf8_string: Atom,
    /// A popup's kind, and the kind that marks a tooltip (`popups.rs`).
    pub(super) net_wm_window_type: Atom,
    pub(super) net_wm_window_type_tooltip: Atom,
    gtk_frame_extents: Atom,
}

/// A raw X11 top-level client window, before app names are attached.
#[derive(Debug, Clone)]
pub struct RawWindow {
    pub id: Window,
    pub pid: Option<u32>,
    pub title: String,
    pub wm_class: String,
    pub bounds: Rect,
    pub z_index: u32,
    pub is_on_screen: bool,
    pub desktop: Option<u32>,
}

/// The pointer buttons still pressed after a batch of events (a held gesture), and, for
/// one held through XTest, what to give back once they are released: the active window and
/// the pointer's place before it (restoring them mid-gesture would drag the pointer away).
#[derive(Default)]
pub struct Held {
    pub(super) mask: u16,
    pub(super) restore: Option<(Option<Window>, (i32, i32))>,
}

/// Keycode → keysyms as the server maps them (input.rs reads and extends it).
pub struct Keymap {
    pub(super) min_keycode: u8,
    pub(super) per_keycode: usize,
    pub(super) keysyms: Vec<u32>,
    /// Spare keycodes this connection bound to characters the map lacks, least recently
    /// used first. They stay bound after the keys are sent (see `bind_missing`) and are
    /// undone when the connection drops.
    pub(super) bound: Vec<u8>,
}

pub struct X11 {
    pub(super) conn: RustConnection,
    pub(super) root: Window,
    screen_size: (u32, u32),
    pub(super) atoms: Atoms,
    redirected_here: AtomicBool,
    /// Keycode → keysyms, read on first keyboard use.
    pub(super) keymap: std::sync::Mutex<Option<Keymap>>,
    /// Buttons a gesture left pressed between calls (mouse_button_down … mouse_button_up).
    pub(super) held: std::sync::Mutex<Held>,
}

fn x_err(context: &str, e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Other(format!("x11: {context}: {e}"))
}

impl X11 {
    pub fn connect(display: Option<&str>) -> PlatformResult<X11> {
        let display = display.unwrap_or_default();
        if display.is_empty() {
            return Err(PlatformError::NoDesktop(
                "no desktop: DISPLAY is not set; start one with `eval \"$(cua sandbox start)\"`"
                    .into(),
            ));
        }
        let (conn, screen_num) = x11rb::connect(Some(display)).map_err(|e| {
            PlatformError::NoDesktop(format!(
                "no desktop: cannot open X display {display} ({e}); start one with `eval \"$(cua sandbox start)\"`"
            ))
        })?;
        let screen = &conn.setup().roots[screen_num];
        let root = screen.root;
        let screen_size = (
            screen.width_in_pixels as u32,
            screen.height_in_pixels as u32,
        );
        let atoms = intern_atoms(&conn)?;
        Ok(X11 {
            conn,
            root,
            screen_size,
            atoms,
            redirected_here: AtomicBool::new(false),
            keymap: std::sync::Mutex::new(None),
            held: std::sync::Mutex::new(Held::default()),
        })
    }

    pub fn screen_size(&self) -> (u32, u32) {
        self.screen_size
    }

    /// One round trip on this connection: fails once the server it was opened on is gone.
    pub fn alive(&self) -> bool {
        self.conn
            .get_input_focus()
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .is_some()
    }

    pub fn cursor_position(&self) -> PlatformResult<(i32, i32)> {
        let reply = self
            .conn
            .query_pointer(self.root)
            .map_err(|e| x_err("query pointer", e))?
            .reply()
            .map_err(|e| x_err("query pointer", e))?;
        Ok((reply.root_x as i32, reply.root_y as i32))
    }

    /// Whether the real pointer is over window `id` (or one of its subwindows) and no
    /// other window covers it there: the chain of windows under the pointer, from the
    /// root down, passes through `id`.
    pub fn pointer_over(&self, id: u32) -> PlatformResult<bool> {
        let mut window = self.root;
        // A chain longer than this is a loop in a broken reply, not a window tree.
        for _ in 0..64 {
            let reply = self
                .conn
                .query_pointer(window)
                .map_err(|e| x_err("query pointer", e))?
                .reply()
                .map_err(|e| x_err("query pointer", e))?;
            if reply.child == x11rb::NONE {
                return Ok(false);
            }
            if reply.child == id {
                return Ok(true);
            }
            window = reply.child;
        }
        Ok(false)
    }

    pub fn has_extension(&self, name: &'static str) -> bool {
        matches!(self.conn.extension_information(name), Ok(Some(_)))
    }

    pub fn extension_checks(&self) -> Vec<PermissionCheck> {
        let mut checks = Vec::new();
        for (concern, ext, why) in [
            (
                Concern::Input,
                "XTEST",
                "foreground input (XTest) is unavailable",
            ),
            (
                Concern::Capture,
                "MIT-SHM",
                "fast shared-memory capture is unavailable",
            ),
            (
                Concern::Capture,
                "Composite",
                "covered windows cannot be captured",
            ),
            (Concern::Input, "XFIXES", "cursor tracking is unavailable"),
            (
                Concern::Other,
                "X-Resource",
                "windows without _NET_WM_PID (Tk, Xt, SDL) have no pid",
            ),
        ] {
            let ok = self.has_extension(ext);
            checks.push(PermissionCheck {
                concern,
                name: format!("x11_extension_{}", ext.to_lowercase().replace('-', "_")),
                ok,
                detail: if ok {
                    format!("{ext} present")
                } else {
                    format!("{ext} missing: {why}")
                },
                fix: (!ok).then(|| format!("start the X server with +extension {ext}")),
            });
        }
        let wm = self.window_manager_running();
        checks.push(PermissionCheck {
            concern: Concern::Session,
            name: "window_manager".into(),
            ok: wm,
            detail: if wm {
                "an EWMH window manager is running".into()
            } else {
                "no EWMH window manager: _NET_CLIENT_LIST and _NET_ACTIVE_WINDOW are missing".into()
            },
            fix: (!wm).then(|| "run openbox on the display (cua sandbox start does)".into()),
        });
        checks
    }

    pub fn window_manager_running(&self) -> bool {
        self.get_u32s(
            self.root,
            self.atoms.net_supporting_wm_check,
            AtomEnum::WINDOW.into(),
        )
        .map(|v| !v.is_empty())
        .unwrap_or(false)
    }

    pub(super) fn get_u32s(
        &self,
        window: Window,
        prop: Atom,
        ty: Atom,
    ) -> PlatformResult<Vec<u32>> {
        let reply = self
            .conn
            .get_property(false, window, prop, ty, 0, u32::MAX / 4)
            .map_err(|e| x_err("get property", e))?
            .reply()
            .map_err(|e| x_err("get property", e))?;
        Ok(reply.value32().map(|v| v.collect()).unwrap_or_default())
    }

    fn get_string(&self, window: Window, prop: Atom, ty: Atom) -> Option<String> {
        let reply = self
            .conn
            .get_property(false, window, prop, ty, 0, u32::MAX / 4)
            .ok()?
            .reply()
            .ok()?;
        if reply.value.is_empty() {
            return None;
        }
        Some(String::from_utf8_lossy(&reply.value).into_owned())
    }

    pub fn active_window(&self) -> Option<Window> {
        self.get_u32s(
            self.root,
            self.atoms.net_active_window,
            AtomEnum::WINDOW.into(),
        )
        .ok()?
        .first()
        .copied()
        .filter(|w| *w != 0)
    }

    pub fn current_desktop(&self) -> Option<u32> {
        self.get_u32s(
            self.root,
            self.atoms.net_current_desktop,
            AtomEnum::CARDINAL.into(),
        )
        .ok()?
        .first()
        .copied()
    }

    /// Top-level client windows, bottom to top.
    pub fn client_windows(&self) -> PlatformResult<Vec<RawWindow>> {
        let mut ids = self.get_u32s(
            self.root,
            self.atoms.net_client_list_stacking,
            AtomEnum::WINDOW.into(),
        )?;
        if ids.is_empty() {
            ids = self.get_u32s(
                self.root,
                self.atoms.net_client_list,
                AtomEnum::WINDOW.into(),
            )?;
        }
        if ids.is_empty() && !self.window_manager_running() {
            return Err(PlatformError::NoDesktop(
                "no window manager on this display: windows cannot be listed; use `cua sandbox start`, which runs openbox"
                    .into(),
            ));
        }
        let current = self.current_desktop();
        let mut out = Vec::with_capacity(ids.len());
        for (z, id) in ids.into_iter().enumerate() {
            // A window can vanish between the list and the queries; skip it.
            if let Ok(w) = self.describe(id, z as u32, current) {
                out.push(w);
            }
        }
        Ok(out)
    }

    /// One client window's properties.
    pub fn describe(
        &self,
        id: Window,
        z_index: u32,
        current: Option<u32>,
    ) -> PlatformResult<RawWindow> {
        let geometry = self.client_bounds(id)?;
        let attrs = self
            .conn
            .get_window_attributes(id)
            .map_err(|e| x_err("window attributes", e))?
            .reply()
            .map_err(|_| PlatformError::NoSuchWindow(id as u64))?;
        let pid = self
            .get_u32s(id, self.atoms.net_wm_pid, AtomEnum::CARDINAL.into())
            .ok()
            .and_then(|v| v.first().copied())
            .or_else(|| self.client_pid(id));
        let title = self
            .get_string(id, self.atoms.net_wm_name, self.atoms.utf8_string)
            .or_else(|| self.get_string(id, AtomEnum::WM_NAME.into(), AtomEnum::STRING.into()))
            .unwrap_or_default();
        let wm_class = self
            .get_string(id, AtomEnum::WM_CLASS.into(), AtomEnum::STRING.into())
            .map(|s| s.split('\0').nth(1).unwrap_or("").to_string())
            .unwrap_or_default();
        let hidden = self
            .get_u32s(id, self.atoms.net_wm_state, AtomEnum::ATOM.into())
            .unwrap_or_default()
            .contains(&self.atoms.net_wm_state_hidden);
        let desktop = self
            .get_u32s(id, self.atoms.net_wm_desktop, AtomEnum::CARDINAL.into())
            .ok()
            .and_then(|v| v.first().copied())
            .filter(|d| *d != u32::MAX);
        let on_current = match (desktop, current) {
            (Some(d), Some(c)) => d == c,
            _ => true,
        };
        Ok(RawWindow {
            id,
            pid,
            title,
            wm_class,
            bounds: geometry,
            z_index,
            is_on_screen: attrs.map_state == MapState::VIEWABLE && !hidden && on_current,
            desktop,
        })
    }

    /// The pid of the local client that created `id`, asked of the server itself (the
    /// X-Resource extension): how a window that sets no `_NET_WM_PID` (Tk, Xt, SDL 1)
    /// still names its process. None for a remote client or a server without X-Resource.
    pub fn client_pid(&self, id: Window) -> Option<u32> {
        let spec = ClientIdSpec {
            client: id,
            mask: ClientIdMask::LOCAL_CLIENT_PID,
        };
        let reply = self.conn.res_query_client_ids(&[spec]).ok()?.reply().ok()?;
        reply
            .ids
            .iter()
            .find(|v| v.spec.mask == ClientIdMask::LOCAL_CLIENT_PID)
            .and_then(|v| v.value.first().copied())
            .filter(|pid| *pid != 0)
    }

    /// The client area of a window in screen coordinates.
    pub fn client_bounds(&self, id: Window) -> PlatformResult<Rect> {
        let geo = self
            .conn
            .get_geometry(id)
            .map_err(|e| x_err("geometry", e))?
            .reply()
            .map_err(|_| PlatformError::NoSuchWindow(id as u64))?;
        let origin = self
            .conn
            .translate_coordinates(id, self.root, 0, 0)
            .map_err(|e| x_err("translate", e))?
            .reply()
            .map_err(|_| PlatformError::NoSuchWindow(id as u64))?;
        Ok(Rect {
            x: origin.dst_x as i32,
            y: origin.dst_y as i32,
            width: geo.width as i32,
            height: geo.height as i32,
        })
    }

    /// Asks for a window size (the window manager applies it; the app lays out again).
    pub fn resize(&self, id: Window, width: u32, height: u32) -> PlatformResult<()> {
        self.conn
            .configure_window(id, &ConfigureWindowAux::new().width(width).height(height))
            .map_err(|e| x_err("configure", e))?;
        self.conn.flush().map_err(|e| x_err("flush", e))?;
        Ok(())
    }

    /// Asks the window manager to move and size a window's client area (screen pixels).
    pub fn set_frame(&self, id: Window, frame: Rect) -> PlatformResult<()> {
        if frame.width <= 0 || frame.height <= 0 {
            return Err(PlatformError::InvalidInput(format!(
                "a window needs a positive size, got {}x{}",
                frame.width, frame.height
            )));
        }
        let aux = ConfigureWindowAux::new()
            .x(frame.x)
            .y(frame.y)
            .width(frame.width as u32)
            .height(frame.height as u32);
        self.conn
            .configure_window(id, &aux)
            .map_err(|e| x_err("configure", e))?;
        self.conn.flush().map_err(|e| x_err("flush", e))?;
        Ok(())
    }

    /// The whole screen as the server composes it (windows are redirected automatically,
    /// so the root's pixels are what a person sees).
    pub fn capture_screen(&self) -> PlatformResult<Capture> {
        let geometry = self
            .conn
            .get_geometry(self.root)
            .map_err(|e| x_err("geometry", e))?
            .reply()
            .map_err(|e| x_err("geometry", e))?;
        let (w, h) = (geometry.width as u32, geometry.height as u32);
        let image = self
            .conn
            .get_image(
                ImageFormat::Z_PIXMAP,
                self.root,
                0,
                0,
                w as u16,
                h as u16,
                !0,
            )
            .map_err(|e| x_err("get image", e))?
            .reply()
            .map_err(|e| PlatformError::Capture(format!("get image: {e}")))?;
        if image.depth < 24 || image.data.len() < (w * h * 4) as usize {
            return Err(PlatformError::Capture(format!(
                "unsupported screen image: depth {}, {} bytes for {w}x{h}",
                image.depth,
                image.data.len()
            )));
        }
        let rgba = image.data[..(w * h * 4) as usize]
            .chunks_exact(4)
            .flat_map(|px| [px[2], px[1], px[0], 255])
            .collect();
        Ok(Capture {
            width: w,
            height: h,
            rgba,
        })
    }

    /// Left/top of the client-side-decoration margin (`_GTK_FRAME_EXTENTS`), if set.
    pub fn gtk_frame_extents(&self, id: Window) -> Option<(i32, i32, i32, i32)> {
        let atom = self.atoms.gtk_frame_extents;
        let v = self.get_u32s(id, atom, AtomEnum::CARDINAL.into()).ok()?;
        (v.len() == 4).then(|| (v[0] as i32, v[1] as i32, v[2] as i32, v[3] as i32))
    }

    /// The child of the root that contains `id` (the window manager's frame).
    pub(super) fn toplevel_ancestor(&self, id: Window) -> PlatformResult<Window> {
        let mut current = id;
        loop {
            let tree = self
                .conn
                .query_tree(current)
                .map_err(|e| x_err("query tree", e))?
                .reply()
                .map_err(|_| PlatformError::NoSuchWindow(id as u64))?;
            if tree.parent == self.root || tree.parent == 0 {
                return Ok(current);
            }
            current = tree.parent;
        }
    }

    /// Redirect every top-level window into off-screen storage (automatic mode: the server
    /// keeps drawing the screen as usual). Lasts as long as this connection.
    pub fn redirect_subwindows(&self) -> PlatformResult<()> {
        self.conn
            .composite_query_version(0, 4)
            .map_err(|e| x_err("composite", e))?
            .reply()
            .map_err(|e| x_err("composite", e))?;
        self.conn
            .composite_redirect_subwindows(self.root, Redirect::AUTOMATIC)
            .map_err(|e| x_err("composite redirect", e))?
            .check()
            .map_err(|e| x_err("composite redirect", e))?;
        Ok(())
    }

    /// The window's client area as RGBA, with its open menus and popups over it
    /// (`popups.rs`), and the top-level frame it was read from (the window whose repaints
    /// say the capture went stale).
    pub fn capture(&self, id: Window) -> PlatformResult<(Capture, Window)> {
        let bounds = self.client_bounds(id)?;
        if bounds.is_empty() {
            return Err(PlatformError::Capture(format!("window {id} has no size")));
        }
        let frame = self.toplevel_ancestor(id)?;
        let offset = self
            .conn
            .translate_coordinates(id, frame, 0, 0)
            .map_err(|e| x_err("translate", e))?
            .reply()
            .map_err(|_| PlatformError::NoSuchWindow(id as u64))?;
        let capture = match self.capture_from_pixmap(id, frame, offset.dst_x, offset.dst_y, &bounds)
        {
            Ok(c) => Ok(c),
            Err(_) if !self.redirected_here.swap(true, Ordering::SeqCst) => {
                // Nobody holds a redirect on this display: take one and give the server
                // time to paint into the new off-screen storage.
                self.redirect_subwindows()?;
                std::thread::sleep(Duration::from_millis(350));
                self.capture_from_pixmap(id, frame, offset.dst_x, offset.dst_y, &bounds)
            }
            Err(e) => Err(e),
        };
        Ok((capture?, frame))
    }

    /// The client area `bounds` of window `id`, read from its frame's off-screen storage at
    /// (`x`, `y`), with its open popups painted over it.
    fn capture_from_pixmap(
        &self,
        id: Window,
        frame: Window,
        x: i16,
        y: i16,
        bounds: &Rect,
    ) -> PlatformResult<Capture> {
        let (w, h) = (bounds.width as u32, bounds.height as u32);
        let image = self.read_window_pixels(frame, x, y, w, h)?;
        if image.depth < 24 {
            return Err(PlatformError::Capture(format!(
                "unsupported window depth {}",
                image.depth
            )));
        }
        let mut rgba = Vec::with_capacity((w * h * 4) as usize);
        for px in image.bgrx.chunks_exact(4) {
            // ZPixmap on a little-endian 24/32-bit TrueColor visual is B, G, R, X.
            rgba.extend_from_slice(&[px[2], px[1], px[0], 255]);
        }
        let mut capture = Capture {
            width: w,
            height: h,
            rgba,
        };
        self.paint_popups(frame, id, bounds, &mut capture);
        Ok(capture)
    }

    /// A rectangle of a redirected window's off-screen pixels, as the server stores them
    /// (B, G, R, X or A per pixel).
    pub(super) fn read_window_pixels(
        &self,
        window: Window,
        x: i16,
        y: i16,
        width: u32,
        height: u32,
    ) -> PlatformResult<WindowPixels> {
        let pixmap = self.conn.generate_id().map_err(|e| x_err("id", e))?;
        self.conn
            .composite_name_window_pixmap(window, pixmap)
            .map_err(|e| x_err("name pixmap", e))?
            .check()
            .map_err(|e| PlatformError::Capture(format!("window is not redirected: {e}")))?;
        let image = self
            .conn
            .get_image(
                ImageFormat::Z_PIXMAP,
                pixmap,
                x,
                y,
                width as u16,
                height as u16,
                !0,
            )
            .map_err(|e| x_err("get image", e))
            .and_then(|c| {
                c.reply()
                    .map_err(|e| PlatformError::Capture(format!("get image: {e}")))
            });
        let _ = self.conn.free_pixmap(pixmap);
        let _ = self.conn.flush();
        let mut image = image?;
        let expected = (width * height * 4) as usize;
        if image.depth >= 24 && image.data.len() < expected {
            return Err(PlatformError::Capture(format!(
                "short image: {} bytes for {width}x{height}",
                image.data.len()
            )));
        }
        image.data.truncate(expected);
        Ok(WindowPixels {
            depth: image.depth,
            bgrx: image.data,
        })
    }
}

/// What [`X11::read_window_pixels`] read.
pub(super) struct WindowPixels {
    pub(super) depth: u8,
    pub(super) bgrx: Vec<u8>,
}

fn intern_atoms(conn: &RustConnection) -> PlatformResult<Atoms> {
    let names: [&[u8]; 14] = [
        b"_NET_CLIENT_LIST_STACKING",
        b"_NET_CLIENT_LIST",
        b"_NET_ACTIVE_WINDOW",
        b"_NET_WM_PID",
        b"_NET_WM_NAME",
        b"_NET_WM_STATE",
        b"_NET_WM_STATE_HIDDEN",
        b"_NET_WM_DESKTOP",
        b"_NET_CURRENT_DESKTOP",
        b"_NET_SUPPORTING_WM_CHECK",
        b"UTF8_STRING",
        b"_NET_WM_WINDOW_TYPE",
        b"_NET_WM_WINDOW_TYPE_TOOLTIP",
        b"_GTK_FRAME_EXTENTS",
    ];
    let cookies: Vec<_> = names
        .iter()
        .map(|n| conn.intern_atom(false, n))
        .collect::<Result<_, _>>()
        .map_err(|e| x_err("intern atom", e))?;
    let mut atoms = Vec::with_capacity(names.len());
    for c in cookies {
        atoms.push(c.reply().map_err(|e| x_err("intern atom", e))?.atom);
    }
    Ok(Atoms {
        net_client_list_stacking: atoms[0],
        net_client_list: atoms[1],
        net_active_window: atoms[2],
        net_wm_pid: atoms[3],
        net_wm_name: atoms[4],
        net_wm_state: atoms[5],
        net_wm_state_hidden: atoms[6],
        net_wm_desktop: atoms[7],
        net_current_desktop: atoms[8],
        net_supporting_wm_check: atoms[9],
        utf8_string: atoms[10],
        net_wm_window_type: atoms[11],
        net_wm_window_type_tooltip: atoms[12],
        gtk_frame_extents: atoms[13],
    })
}

impl Drop for X11 {
    /// Characters bound to spare keycodes for typing go back to unbound.
    fn drop(&mut self) {
        self.unbind_all();
    }
}
