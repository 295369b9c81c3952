//! The agent cursor's overlay on X11: one override-redirect window on a connection of its
//! own. Override-redirect keeps the window manager from framing, listing or focusing it;
//! an empty input shape lets every pointer event fall through to the window below (so
//! XTest clicks and the server's pointer tracking never see it); its bounding shape is the
//! picture's opaque pixels. Being another X client's top-level window, it is in no app
//! window's capture (those read the app's own off-screen storage, and popups only of the
//! app's own client), while a whole-screen grab such as the video sees it.

use x11rb::connection::{Connection, RequestConnection as _};
use x11rb::protocol::shape::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ClipOrdering, ConfigureWindowAux, ConnectionExt as _,
    CreateGCAux, CreateWindowAux, Gcontext, ImageFormat, Pixmap, PropMode, Rectangle, StackMode,
    Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use crate::platform::{Capture, PlatformError, PlatformResult};

pub struct Overlay {
    conn: RustConnection,
    window: Window,
    gc: Gcontext,
    depth: u8,
    pixmap: Option<Pixmap>,
    image: Option<Capture>,
    mapped: bool,
}

fn x_err(what: &str, e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Other(format!("agent cursor overlay: {what}: {e}"))
}

impl Overlay {
    /// Creates the (unmapped) window on `display`.
    pub fn open(display: Option<&str>) -> PlatformResult<Overlay> {
        let (conn, screen_num) = x11rb::connect(display).map_err(|e| x_err("connect", e))?;
        if conn
            .extension_information(shape::X11_EXTENSION_NAME)
            .map_err(|e| x_err("query extension", e))?
            .is_none()
        {
            return Err(PlatformError::Unsupported(
                "the X server has no SHAPE extension, which the agent cursor overlay needs".into(),
            ));
        }
        let screen = conn.setup().roots[screen_num].clone();
        let depth = screen.root_depth;
        let bits = conn
            .setup()
            .pixmap_formats
            .iter()
            .find(|f| f.depth == depth)
            .map(|f| f.bits_per_pixel);
        if bits != Some(32) || depth < 24 {
            return Err(PlatformError::Unsupported(format!(
                "the agent cursor overlay needs a 24- or 32-bit screen with 32-bit pixels (depth {depth}, {bits:?} bits)"
            )));
        }
        let window = conn.generate_id().map_err(|e| x_err("id", e))?;
        conn.create_window(
            depth,
            window,
            screen.root,
            0,
            0,
            1,
            1,
            0,
            WindowClass::INPUT_OUTPUT,
            screen.root_visual,
            &CreateWindowAux::new()
                .override_redirect(1)
                .background_pixel(screen.black_pixel),
        )
        .map_err(|e| x_err("create window", e))?;
        // An empty input region: clicks and pointer tracking pass through to what is below.
        conn.shape_rectangles(
            shape::SO::SET,
            shape::SK::INPUT,
            ClipOrdering::UNSORTED,
            window,
            0,
            0,
            &[],
        )
        .map_err(|e| x_err("input shape", e))?;
        conn.change_property8(
            PropMode::REPLACE,
            window,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            b"cua agent cursor",
        )
        .map_err(|e| x_err("name", e))?;
        let gc = conn.generate_id().map_err(|e| x_err("id", e))?;
        conn.create_gc(gc, window, &CreateGCAux::new())
            .map_err(|e| x_err("gc", e))?;
        conn.flush().map_err(|e| x_err("flush", e))?;
        Ok(Overlay {
            conn,
            window,
            gc,
            depth,
            pixmap: None,
            image: None,
            mapped: false,
        })
    }

    /// Shows `image` with its top-left corner at (`x`, `y`), above every window.
    pub fn show(&mut self, image: &Capture, x: i32, y: i32) -> PlatformResult<()> {
        if self.image.as_ref() != Some(image) {
            self.set_image(image)?;
        }
        self.conn
            .configure_window(
                self.window,
                &ConfigureWindowAux::new()
                    .x(x)
                    .y(y)
                    .stack_mode(StackMode::ABOVE),
            )
            .map_err(|e| x_err("move", e))?;
        if !self.mapped {
            self.conn
                .map_window(self.window)
                .map_err(|e| x_err("map", e))?;
            self.mapped = true;
        }
        self.conn.flush().map_err(|e| x_err("flush", e))
    }

    pub fn hide(&mut self) {
        if self.mapped {
            let _ = self.conn.unmap_window(self.window);
            let _ = self.conn.flush();
            self.mapped = false;
        }
    }

    /// The picture becomes the window's background (the server repaints it; no expose
    /// handling needed) and its opaque pixels the window's shape.
    fn set_image(&mut self, image: &Capture) -> PlatformResult<()> {
        let (w, h) = (image.width as u16, image.height as u16);
        let pixmap = self.conn.generate_id().map_err(|e| x_err("id", e))?;
        self.conn
            .create_pixmap(self.depth, pixmap, self.window, w, h)
            .map_err(|e| x_err("pixmap", e))?;
        let bgrx: Vec<u8> = image
            .rgba
            .chunks_exact(4)
            .flat_map(|p| [p[2], p[1], p[0], 0])
            .collect();
        self.conn
            .put_image(
                ImageFormat::Z_PIXMAP,
                pixmap,
                self.gc,
                w,
                h,
                0,
                0,
                0,
                self.depth,
                &bgrx,
            )
            .map_err(|e| x_err("put image", e))?;
        self.conn
            .configure_window(
                self.window,
                &ConfigureWindowAux::new()
                    .width(u32::from(w))
                    .height(u32::from(h)),
            )
            .map_err(|e| x_err("resize", e))?;
        self.conn
            .change_window_attributes(
                self.window,
                &ChangeWindowAttributesAux::new().background_pixmap(pixmap),
            )
            .map_err(|e| x_err("background", e))?;
        self.conn
            .shape_rectangles(
                shape::SO::SET,
                shape::SK::BOUNDING,
                ClipOrdering::UNSORTED,
                self.window,
                0,
                0,
                &opaque_runs(image),
            )
            .map_err(|e| x_err("shape", e))?;
        self.conn
            .clear_area(false, self.window, 0, 0, 0, 0)
            .map_err(|e| x_err("clear", e))?;
        if let Some(old) = self.pixmap.replace(pixmap) {
            let _ = self.conn.free_pixmap(old);
        }
        self.image = Some(image.clone());
        Ok(())
    }
}

/// The opaque pixels of `image` as one rectangle per horizontal run.
fn opaque_runs(image: &Capture) -> Vec<Rectangle> {
    let mut runs = Vec::new();
    for y in 0..image.height {
        let mut start = None;
        for x in 0..=image.width {
            let opaque =
                x < image.width && image.rgba[((y * image.width + x) * 4 + 3) as usize] > 0;
            match (opaque, start) {
                (true, None) => start = Some(x),
                (false, Some(s)) => {
                    runs.push(Rectangle {
                        x: s as i16,
                        y: y as i16,
                        width: (x - s) as u16,
                        height: 1,
                    });
                    start = None;
                }
                _ => {}
            }
        }
    }
    runs
}

impl Drop for Overlay {
    fn drop(&mut self) {
        let _ = self.conn.destroy_window(self.window);
        let _ = self.conn.flush();
    }
}
