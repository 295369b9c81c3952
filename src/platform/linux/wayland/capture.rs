//! Screenshots: `wlr-screencopy` of a region of the output into shared memory. The
//! compositor copies what the output shows there, so a window covered by another shows the
//! cover (X11's Composite capture shows the covered window itself).

use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use wayland_client::protocol::{wl_buffer, wl_shm, wl_shm_pool};
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_frame_v1::{
    self as frame, ZwlrScreencopyFrameV1,
};

use super::{Session, State};
use crate::platform::{Capture, PlatformError, PlatformResult, Rect};

/// What the compositor said of the frame being captured.
#[derive(Default)]
pub struct FrameState {
    /// The shared-memory buffer it wants: format, width, height, stride.
    shm: Option<(WEnum<wl_shm::Format>, u32, u32, u32)>,
    /// All buffer kinds are announced (version 3), or the first one came (older).
    described: bool,
    y_invert: bool,
    ready: bool,
    failed: bool,
}

/// A copied frame as the compositor wrote it.
struct RawFrame {
    bytes: Vec<u8>,
    format: wl_shm::Format,
    width: u32,
    height: u32,
    stride: u32,
    y_invert: bool,
}

impl Session {
    /// The pixels of `region` (output pixels), as RGBA.
    pub fn capture_region(&mut self, region: Rect) -> PlatformResult<Capture> {
        let raw = self.copy_region(region)?;
        to_rgba(&raw)
    }

    /// The pixels of `region` as BGRX rows, for the video encoder: the compositor's own
    /// bytes when it writes XRGB8888 or ARGB8888 top row first (sway does), so a 30 fps
    /// video converts nothing.
    pub fn capture_region_bgrx(&mut self, region: Rect) -> PlatformResult<(u32, u32, Vec<u8>)> {
        let raw = self.copy_region(region)?;
        let native = matches!(
            raw.format,
            wl_shm::Format::Xrgb8888 | wl_shm::Format::Argb8888
        ) && !raw.y_invert
            && raw.stride == raw.width * 4;
        if native {
            return Ok((raw.width, raw.height, raw.bytes));
        }
        let rgba = to_rgba(&raw)?;
        let bgrx = rgba
            .rgba
            .chunks_exact(4)
            .flat_map(|p| [p[2], p[1], p[0], 255])
            .collect();
        Ok((rgba.width, rgba.height, bgrx))
    }

    fn copy_region(&mut self, region: Rect) -> PlatformResult<RawFrame> {
        let s = &mut self.state;
        let (Some(manager), Some(output), Some(shm)) = (&s.screencopy, &s.output, &s.shm) else {
            return Err(PlatformError::Capture(
                "this Wayland compositor offers no screencopy (zwlr_screencopy_manager_v1): screenshots are not possible here".into(),
            ));
        };
        if region.is_empty() {
            return Err(PlatformError::Capture(format!(
                "the window has no area on the output ({region:?})"
            )));
        }
        let (manager, output, shm) = (manager.clone(), output.clone(), shm.clone());
        s.frame = FrameState::default();
        let frame = manager.capture_output_region(
            0,
            &output,
            region.x,
            region.y,
            region.width,
            region.height,
            &s.qh,
            (),
        );
        let result = self.copy_frame(&frame, &shm);
        frame.destroy();
        result
    }

    fn copy_frame(
        &mut self,
        frame: &ZwlrScreencopyFrameV1,
        shm: &wl_shm::WlShm,
    ) -> PlatformResult<RawFrame> {
        self.read_until("a screencopy", super::ANSWER_WAIT, |s| {
            s.frame.described || s.frame.failed
        })?;
        let Some((format, width, height, stride)) = self.state.frame.shm else {
            return Err(PlatformError::Capture(
                "the compositor offered no shared-memory buffer for the screenshot".into(),
            ));
        };
        let WEnum::Value(format) = format else {
            return Err(PlatformError::Capture(format!(
                "unknown pixel format {format:?}"
            )));
        };
        let size = stride as usize * height as usize;
        let memory = memfd("cua-screencopy", size)?;
        let pool = shm.create_pool(memory.as_fd(), size as i32, &self.state.qh, ());
        let buffer = pool.create_buffer(
            0,
            width as i32,
            height as i32,
            stride as i32,
            format,
            &self.state.qh,
            (),
        );
        frame.copy(&buffer);
        let copied = self.read_until("a screencopy", super::ANSWER_WAIT, |s| {
            s.frame.ready || s.frame.failed
        });
        buffer.destroy();
        pool.destroy();
        copied?;
        if self.state.frame.failed {
            return Err(PlatformError::Capture(
                "the compositor failed the screencopy".into(),
            ));
        }
        let mut raw = vec![0u8; size];
        memory
            .read_exact_at(&mut raw, 0)
            .map_err(|e| PlatformError::Capture(format!("reading the screenshot: {e}")))?;
        Ok(RawFrame {
            bytes: raw,
            format,
            width,
            height,
            stride,
            y_invert: self.state.frame.y_invert,
        })
    }
}

/// An anonymous shared-memory file of `size` bytes.
pub(super) fn memfd(name: &str, size: usize) -> PlatformResult<std::fs::File> {
    let fd = nix::sys::memfd::memfd_create(name, nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
        .map_err(|e| PlatformError::Capture(format!("memfd: {e}")))?;
    let file = std::fs::File::from(fd);
    file.set_len(size as u64)
        .map_err(|e| PlatformError::Capture(format!("memfd: {e}")))?;
    Ok(file)
}

/// Rows of 32-bit pixels in the compositor's format, top row first in RGBA.
fn to_rgba(frame: &RawFrame) -> PlatformResult<Capture> {
    let RawFrame {
        bytes: raw,
        format,
        width,
        height,
        stride,
        y_invert,
    } = frame;
    let (width, height, stride, y_invert) = (*width, *height, *stride, *y_invert);
    // Little-endian memory order of each format's 32-bit word.
    let (r, g, b, a): (usize, usize, usize, Option<usize>) = match *format {
        wl_shm::Format::Xrgb8888 => (2, 1, 0, None),
        wl_shm::Format::Argb8888 => (2, 1, 0, Some(3)),
        wl_shm::Format::Xbgr8888 => (0, 1, 2, None),
        wl_shm::Format::Abgr8888 => (0, 1, 2, Some(3)),
        other => {
            return Err(PlatformError::Capture(format!(
                "unsupported screencopy pixel format {other:?}"
            )));
        }
    };
    let mut rgba = Vec::with_capacity(width as usize * height as usize * 4);
    for row in 0..height as usize {
        let source = if y_invert {
            height as usize - 1 - row
        } else {
            row
        };
        let line = &raw[source * stride as usize..][..width as usize * 4];
        for p in line.chunks_exact(4) {
            rgba.extend_from_slice(&[p[r], p[g], p[b], a.map_or(255, |a| p[a])]);
        }
    }
    Ok(Capture {
        width,
        height,
        rgba,
    })
}

impl Dispatch<ZwlrScreencopyFrameV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrScreencopyFrameV1,
        event: frame::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let f = &mut state.frame;
        match event {
            frame::Event::Buffer {
                format,
                width,
                height,
                stride,
            } => {
                f.shm = Some((format, width, height, stride));
                // Version 1 and 2 frames announce one buffer and no buffer_done.
                f.described |= state
                    .screencopy
                    .as_ref()
                    .is_some_and(|m| wayland_client::Proxy::version(m) < 3);
            }
            frame::Event::BufferDone => f.described = true,
            frame::Event::Flags {
                flags: WEnum::Value(flags),
            } => f.y_invert = flags.contains(frame::Flags::YInvert),
            frame::Event::Ready { .. } => f.ready = true,
            frame::Event::Failed => f.failed = true,
            _ => {}
        }
    }
}

wayland_client::delegate_noop!(State: ignore wl_shm_pool::WlShmPool);
wayland_client::delegate_noop!(State: ignore wl_buffer::WlBuffer);
