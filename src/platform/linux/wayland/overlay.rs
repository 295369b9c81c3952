//! The agent cursor's overlay on Wayland: a `wlr-layer-shell` surface on the overlay layer,
//! anchored to the output's top-left corner and placed by its margins, with an empty input
//! region so every pointer event falls through to the window below (the seat's pointer,
//! which foreground clicks use, never lands on it). No window list shows a layer surface.
//!
//! Unlike X11, where an app window's capture is the window's own storage, a Wayland
//! window's screenshot is its region of the output, which would show the cursor above it:
//! a window capture takes the overlay down first and puts it back after (on the same
//! connection, so the compositor sees the requests in that order). A whole-output capture,
//! like the video's, shows it, as on X11.

use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use wayland_client::protocol::{wl_buffer, wl_compositor, wl_region, wl_shm, wl_surface};
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols_wlr::layer_shell::v1::client::{
    zwlr_layer_shell_v1::{self, ZwlrLayerShellV1},
    zwlr_layer_surface_v1::{self, ZwlrLayerSurfaceV1},
};

use super::{Session, State};
use crate::platform::{Capture, PlatformError, PlatformResult, Rect};

/// The overlay's protocol objects and what it shows.
#[derive(Default)]
pub struct Overlay {
    compositor: Option<wl_compositor::WlCompositor>,
    layer_shell: Option<ZwlrLayerShellV1>,
    picture: Option<Picture>,
    shown: Option<Shown>,
    /// The serial of a configure not yet acknowledged.
    configure: Option<u32>,
    /// The compositor closed the layer surface (the output went): make another.
    closed: bool,
}

/// The sprite in a shared-memory buffer.
struct Picture {
    image: Capture,
    buffer: wl_buffer::WlBuffer,
}

/// The mapped layer surface and where its top-left corner is.
struct Shown {
    surface: wl_surface::WlSurface,
    layer: ZwlrLayerSurfaceV1,
    at: (i32, i32),
}

impl Overlay {
    pub fn new(
        compositor: Option<wl_compositor::WlCompositor>,
        layer_shell: Option<ZwlrLayerShellV1>,
    ) -> Overlay {
        Overlay {
            compositor,
            layer_shell,
            ..Default::default()
        }
    }

    /// Whether the compositor offers what the overlay needs.
    pub fn offered(&self) -> bool {
        self.compositor.is_some() && self.layer_shell.is_some()
    }

    /// Where it shows now, on the output.
    fn area(&self) -> Option<Rect> {
        let (shown, picture) = (self.shown.as_ref()?, self.picture.as_ref()?);
        Some(Rect::new(
            shown.at.0,
            shown.at.1,
            picture.image.width as i32,
            picture.image.height as i32,
        ))
    }
}

impl Session {
    /// Shows `image` with its top-left corner at (`x`, `y`) on the output, above every
    /// window.
    pub fn show_overlay(&mut self, image: &Capture, x: i32, y: i32) -> PlatformResult<()> {
        let s = &mut self.state;
        let (Some(compositor), Some(shell), Some(shm), Some(output)) = (
            s.overlay.compositor.clone(),
            s.overlay.layer_shell.clone(),
            s.shm.clone(),
            s.output.clone(),
        ) else {
            return Err(PlatformError::Unsupported(
                "this Wayland compositor offers no zwlr_layer_shell_v1, which the agent cursor overlay needs; a recording's video still draws the cursor".into(),
            ));
        };
        if s.overlay.picture.as_ref().map(|p| &p.image) != Some(image) {
            let buffer = sprite_buffer(image, &shm, &s.qh)?;
            if let Some(old) = s.overlay.picture.replace(Picture {
                image: image.clone(),
                buffer,
            }) {
                old.buffer.destroy();
            }
        }
        if s.overlay.closed {
            self.hide_overlay();
            self.state.overlay.closed = false;
        }
        // Margins place it; layer-shell takes no negative ones, so a sprite whose hot spot
        // is at the very edge is drawn from the edge.
        let (left, top) = (x.max(0), y.max(0));
        let (w, h) = (image.width, image.height);
        if self.state.overlay.shown.is_none() {
            let s = &mut self.state;
            let surface = compositor.create_surface(&s.qh, ());
            let nothing = compositor.create_region(&s.qh, ());
            surface.set_input_region(Some(&nothing));
            nothing.destroy();
            let layer = shell.get_layer_surface(
                &surface,
                Some(&output),
                zwlr_layer_shell_v1::Layer::Overlay,
                "cua-agent-cursor".into(),
                &s.qh,
                (),
            );
            layer.set_anchor(
                zwlr_layer_surface_v1::Anchor::Top | zwlr_layer_surface_v1::Anchor::Left,
            );
            layer.set_exclusive_zone(-1);
            layer.set_keyboard_interactivity(zwlr_layer_surface_v1::KeyboardInteractivity::None);
            layer.set_size(w, h);
            layer.set_margin(top, 0, 0, left);
            surface.commit();
            s.overlay.configure = None;
            s.overlay.shown = Some(Shown {
                surface,
                layer,
                at: (left, top),
            });
            // A layer surface may show a buffer only once its first configure is acked.
            self.read_until("the overlay's configure", super::ANSWER_WAIT, |s| {
                s.overlay.configure.is_some()
            })?;
        }
        let s = &mut self.state;
        let (Some(shown), Some(picture)) = (s.overlay.shown.as_mut(), s.overlay.picture.as_ref())
        else {
            return Ok(());
        };
        if let Some(serial) = s.overlay.configure.take() {
            shown.layer.ack_configure(serial);
        }
        shown.layer.set_size(w, h);
        shown.layer.set_margin(top, 0, 0, left);
        shown.at = (left, top);
        shown.surface.attach(Some(&picture.buffer), 0, 0);
        shown.surface.damage_buffer(0, 0, w as i32, h as i32);
        shown.surface.commit();
        self.conn
            .flush()
            .map_err(|e| PlatformError::Other(format!("Wayland: {e}")))
    }

    /// Takes the overlay down (a later show makes it again).
    pub fn hide_overlay(&mut self) {
        if let Some(shown) = self.state.overlay.shown.take() {
            shown.layer.destroy();
            shown.surface.destroy();
            let _ = self.conn.flush();
        }
    }

    /// The pixels of `region` without the overlay over them, taken by `capture`: through
    /// this connection (screencopy, ordered after the overlay's removal) or beside it
    /// (KWin's screenshot over D-Bus, after a round trip: KWin has removed it by then).
    pub fn capture_without_overlay(
        &mut self,
        region: Rect,
        capture: impl FnOnce(&mut Session) -> PlatformResult<Capture>,
    ) -> PlatformResult<Capture> {
        let over = self.state.overlay.area().filter(|a| a.intersects(&region));
        let Some(area) = over else {
            return capture(self);
        };
        let image = self.state.overlay.picture.as_ref().map(|p| p.image.clone());
        self.hide_overlay();
        let captured = self.roundtrip().and_then(|()| capture(self));
        if let Some(image) = image {
            // Back where it was; a failure to show it again fails no screenshot.
            if let Err(e) = self.show_overlay(&image, area.x, area.y) {
                tracing::debug!("agent cursor overlay not shown again: {e}");
            }
        }
        captured
    }
}

/// `image` (RGBA) as an ARGB8888 shared-memory buffer: little-endian B, G, R, A with the
/// colour premultiplied by alpha, as Wayland composites it.
fn sprite_buffer(
    image: &Capture,
    shm: &wl_shm::WlShm,
    qh: &QueueHandle<State>,
) -> PlatformResult<wl_buffer::WlBuffer> {
    let premultiplied: Vec<u8> = image
        .rgba
        .chunks_exact(4)
        .flat_map(|p| {
            let a = p[3] as u16;
            let scale = |c: u8| ((c as u16 * a + 127) / 255) as u8;
            [scale(p[2]), scale(p[1]), scale(p[0]), p[3]]
        })
        .collect();
    let memory = super::capture::memfd("cua-agent-cursor", premultiplied.len())?;
    memory
        .write_all_at(&premultiplied, 0)
        .map_err(|e| PlatformError::Other(format!("agent cursor overlay: {e}")))?;
    let pool = shm.create_pool(memory.as_fd(), premultiplied.len() as i32, qh, ());
    let buffer = pool.create_buffer(
        0,
        image.width as i32,
        image.height as i32,
        image.width as i32 * 4,
        wl_shm::Format::Argb8888,
        qh,
        (),
    );
    // The buffer keeps the memory mapped in the compositor; the pool can go.
    pool.destroy();
    Ok(buffer)
}

impl Dispatch<ZwlrLayerSurfaceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrLayerSurfaceV1,
        event: zwlr_layer_surface_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            zwlr_layer_surface_v1::Event::Configure { serial, .. } => {
                state.overlay.configure = Some(serial);
            }
            zwlr_layer_surface_v1::Event::Closed => state.overlay.closed = true,
            _ => {}
        }
    }
}

wayland_client::delegate_noop!(State: ignore wl_compositor::WlCompositor);
wayland_client::delegate_noop!(State: ignore wl_surface::WlSurface);
wayland_client::delegate_noop!(State: ignore wl_region::WlRegion);
wayland_client::delegate_noop!(State: ignore ZwlrLayerShellV1);
