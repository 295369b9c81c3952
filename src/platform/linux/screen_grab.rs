//! Whole-screen frames for the video helper (`cua-video`). On X11 through MIT-SHM: one
//! shared segment attached to the X server, refilled by each [`ScreenGrab::grab`] (~1-2 ms
//! for 1080p); the segment never outlives the process, even when it is killed. On Wayland
//! through `wlr-screencopy` of the whole output (the backend's own capture), turned into
//! the same BGRX rows.

use x11rb::connection::Connection;
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xproto::ImageFormat;

/// A System V shared-memory segment attached to the X server.
struct Segment {
    id: i32,
    addr: *mut u8,
    len: usize,
}

impl Segment {
    fn new(len: usize) -> Result<Segment, String> {
        // SAFETY: plain System V calls. The segment is marked for removal once the server
        // has attached it too ([`Segment::release_when_detached`]).
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, len, libc::IPC_CREAT | 0o600);
            if id < 0 {
                return Err(format!("shmget: {}", std::io::Error::last_os_error()));
            }
            let addr = libc::shmat(id, std::ptr::null(), 0);
            if addr as isize == -1 {
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
                return Err(format!("shmat: {}", std::io::Error::last_os_error()));
            }
            Ok(Segment {
                id,
                addr: addr as *mut u8,
                len,
            })
        }
    }

    /// Marks the segment for removal: the kernel frees it when the last process detaches,
    /// so it does not outlive a process that is killed. Linux still lets the X server use
    /// a marked segment it has attached; call this after the attach was checked.
    fn release_when_detached(&self) {
        // SAFETY: marking the segment we created; attachments stay valid.
        unsafe {
            libc::shmctl(self.id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: addr points at len bytes mapped for the segment's lifetime; the server
        // writes the segment only during a GetImage request, which has been answered
        // before this is called.
        unsafe { std::slice::from_raw_parts_mut(self.addr, self.len) }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: detaching and removing the segment we created.
        unsafe {
            libc::shmdt(self.addr as *const libc::c_void);
            libc::shmctl(self.id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

/// One desktop's screen, grabbed whole: an X display's root window, or a Wayland output.
/// (Opened once a recording; the variants' sizes do not matter.)
#[allow(clippy::large_enum_variant)]
pub enum ScreenGrab {
    X11(X11Grab),
    #[cfg(feature = "wayland")]
    Wayland(WaylandGrab),
}

impl ScreenGrab {
    /// The screen of X display `display`.
    pub fn open(display: &str) -> Result<ScreenGrab, String> {
        X11Grab::open(display).map(ScreenGrab::X11)
    }

    /// The output of the Wayland compositor whose socket is `socket`.
    #[cfg(feature = "wayland")]
    pub fn open_wayland(socket: &std::path::Path) -> Result<ScreenGrab, String> {
        WaylandGrab::open(socket).map(ScreenGrab::Wayland)
    }

    /// The screen's size in pixels.
    pub fn size(&self) -> (u32, u32) {
        match self {
            ScreenGrab::X11(g) => (g.width, g.height),
            #[cfg(feature = "wayland")]
            ScreenGrab::Wayland(g) => g.size,
        }
    }

    /// The whole screen now: BGRX rows of `width * 4` bytes, top to bottom, valid until
    /// the next grab.
    pub fn grab(&mut self) -> Result<&mut [u8], String> {
        match self {
            ScreenGrab::X11(g) => g.grab(),
            #[cfg(feature = "wayland")]
            ScreenGrab::Wayland(g) => g.grab(),
        }
    }
}

/// A Wayland output, captured whole by screencopy on each grab.
#[cfg(feature = "wayland")]
pub struct WaylandGrab {
    wayland: super::wayland::Wayland,
    size: (u32, u32),
    bgrx: Vec<u8>,
}

#[cfg(feature = "wayland")]
impl WaylandGrab {
    fn open(socket: &std::path::Path) -> Result<WaylandGrab, String> {
        let wayland = super::wayland::Wayland::connect(socket, None).map_err(|e| e.to_string())?;
        let size = wayland.screen_size();
        if size.0 == 0 || size.1 == 0 {
            return Err(format!(
                "the compositor at {} has no output",
                socket.display()
            ));
        }
        Ok(WaylandGrab {
            wayland,
            size,
            bgrx: Vec::new(),
        })
    }

    fn grab(&mut self) -> Result<&mut [u8], String> {
        let (width, height, bgrx) = self
            .wayland
            .capture_output_bgrx()
            .map_err(|e| e.to_string())?;
        if (width, height) != self.size {
            return Err(format!(
                "the output changed size ({}x{} to {width}x{height}) while recording",
                self.size.0, self.size.1
            ));
        }
        self.bgrx = bgrx;
        Ok(&mut self.bgrx)
    }
}

/// The root window of one X display, grabbed whole into shared memory.
pub struct X11Grab {
    conn: x11rb::rust_connection::RustConnection,
    root: u32,
    seg: u32,
    segment: Segment,
    width: u32,
    height: u32,
}

impl X11Grab {
    fn open(display: &str) -> Result<X11Grab, String> {
        let (conn, screen) =
            x11rb::connect(Some(display)).map_err(|e| format!("cannot open {display}: {e}"))?;
        let root = &conn.setup().roots[screen];
        let (root, width, height) = (
            root.root,
            root.width_in_pixels as u32,
            root.height_in_pixels as u32,
        );
        let segment = Segment::new((width * height * 4) as usize)?;
        let seg = conn.generate_id().map_err(|e| e.to_string())?;
        conn.shm_attach(seg, segment.id as u32, false)
            .map_err(|e| e.to_string())?
            .check()
            .map_err(|e| format!("MIT-SHM attach failed: {e}"))?;
        segment.release_when_detached();
        Ok(X11Grab {
            conn,
            root,
            seg,
            segment,
            width,
            height,
        })
    }

    /// The slice is the shared segment itself.
    fn grab(&mut self) -> Result<&mut [u8], String> {
        self.conn
            .shm_get_image(
                self.root,
                0,
                0,
                self.width as u16,
                self.height as u16,
                !0,
                ImageFormat::Z_PIXMAP.into(),
                self.seg,
                0,
            )
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| format!("capture failed: {e}"))?;
        let len = (self.width * self.height * 4) as usize;
        Ok(&mut self.segment.bytes_mut()[..len])
    }
}

impl Drop for X11Grab {
    fn drop(&mut self) {
        let _ = self.conn.shm_detach(self.seg);
        let _ = self.conn.flush();
    }
}
