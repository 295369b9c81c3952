//! H.264 video of the whole display while recording (`video_experimental`, `--video`):
//! frames are captured through MIT-SHM on a 30 fps timeline (a late frame takes its real
//! slot, so the video's duration follows the wall clock), converted to yuv420p and encoded
//! with libx264 into `recording.mp4` (faststart). An unchanged screen reuses the previous
//! converted frame, which keeps a quiet desktop cheap. Secret frames the recorder reports
//! ([`Masks`], screen pixels) are painted black in each captured frame before it is
//! compared or encoded.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ffmpeg_next as ffmpeg;
use x11rb::connection::Connection;
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xproto::ImageFormat;

pub const FPS: i32 = 30;

/// What session.json records about the video.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VideoInfo {
    pub path: String,
    pub codec: &'static str,
    pub fps: i32,
    pub width: u32,
    pub height: u32,
    pub frames: u64,
    pub duration_s: f64,
}

/// Screen rectangles to paint over, by the window whose state reported them: the latest
/// state of a window replaces its list.
#[derive(Clone, Default)]
pub struct Masks(Arc<std::sync::Mutex<std::collections::HashMap<u64, Vec<crate::platform::Rect>>>>);

impl Masks {
    pub fn set(&self, window_id: u64, screen_rects: Vec<crate::platform::Rect>) {
        let mut all = self.0.lock().unwrap();
        if screen_rects.is_empty() {
            all.remove(&window_id);
        } else {
            all.insert(window_id, screen_rects);
        }
    }

    fn all(&self) -> Vec<crate::platform::Rect> {
        self.0.lock().unwrap().values().flatten().copied().collect()
    }
}

pub struct VideoRecorder {
    masks: Masks,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<VideoInfo, String>>>,
}

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
    /// so it does not outlive a cua that is killed. Linux still lets the X server use a
    /// marked segment it has attached; call this after the attach was checked.
    fn release_when_detached(&self) {
        // SAFETY: marking the segment we created; attachments stay valid.
        unsafe {
            libc::shmctl(self.id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: addr points at len bytes mapped for the segment's lifetime.
        unsafe { std::slice::from_raw_parts(self.addr, self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above; the server writes the segment only during a GetImage request,
        // which has been answered before this is called.
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

impl VideoRecorder {
    /// Starts recording `display` into `path`; returns once the encoder is running.
    pub fn start(display: &str, path: &Path) -> Result<VideoRecorder, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let masks = Masks::default();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (display, path, flag) = (display.to_string(), path.to_path_buf(), stop.clone());
        let painted = masks.clone();
        let thread = std::thread::Builder::new()
            .name("cua-video".into())
            .spawn(move || record(&display, &path, &flag, &painted, ready_tx))
            .map_err(|e| e.to_string())?;
        match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => Ok(VideoRecorder {
                masks,
                stop,
                thread: Some(thread),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(thread
                .join()
                .ok()
                .and_then(|r| r.err())
                .unwrap_or_else(|| "video encoder did not start".into())),
        }
    }

    /// The secret rectangles painted over in every frame.
    pub fn masks(&self) -> Masks {
        self.masks.clone()
    }

    /// Stops and finalizes the file (flushes the encoder, writes the index).
    pub fn stop(mut self) -> Result<VideoInfo, String> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .take()
            .map(|t| t.join().map_err(|_| "video thread panicked".to_string())?)
            .unwrap_or(Err("not running".into()))
    }
}

impl Drop for VideoRecorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn record(
    display: &str,
    path: &PathBuf,
    stop: &AtomicBool,
    masks: &Masks,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) -> Result<VideoInfo, String> {
    let setup = (|| -> Result<_, String> {
        let (conn, screen) = x11rb::connect(Some(display))
            .map_err(|e| format!("video: cannot open {display}: {e}"))?;
        let root = conn.setup().roots[screen].root;
        let (sw, sh) = (
            conn.setup().roots[screen].width_in_pixels as u32,
            conn.setup().roots[screen].height_in_pixels as u32,
        );
        // yuv420p needs even sizes.
        let (w, h) = (sw & !1, sh & !1);
        let segment = Segment::new((sw * sh * 4) as usize)?;
        let seg = conn.generate_id().map_err(|e| e.to_string())?;
        conn.shm_attach(seg, segment.id as u32, false)
            .map_err(|e| e.to_string())?
            .check()
            .map_err(|e| format!("video: MIT-SHM attach failed: {e}"))?;
        segment.release_when_detached();

        ffmpeg::init().map_err(|e| format!("video: ffmpeg init: {e}"))?;
        // Errors only: libx264 otherwise prints its settings banner on every start.
        ffmpeg::log::set_level(ffmpeg::log::Level::Error);
        let mut octx = ffmpeg::format::output(path)
            .map_err(|e| format!("video: cannot create {}: {e}", path.display()))?;
        let codec = ffmpeg::encoder::find_by_name("libx264")
            .ok_or("video: libx264 encoder not available")?;
        let global_header = octx
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let mut stream = octx.add_stream(codec).map_err(|e| e.to_string())?;
        let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .map_err(|e| e.to_string())?;
        enc.set_width(w);
        enc.set_height(h);
        enc.set_format(ffmpeg::format::Pixel::YUV420P);
        enc.set_time_base(ffmpeg::Rational(1, FPS));
        enc.set_frame_rate(Some(ffmpeg::Rational(FPS, 1)));
        if global_header {
            enc.set_flags(ffmpeg::codec::Flags::GLOBAL_HEADER);
        }
        let mut opts = ffmpeg::Dictionary::new();
        opts.set("preset", "ultrafast");
        opts.set("tune", "zerolatency");
        opts.set("crf", "28");
        let encoder = enc
            .open_with(opts)
            .map_err(|e| format!("video: cannot open libx264: {e}"))?;
        stream.set_parameters(&encoder);
        stream.set_time_base(ffmpeg::Rational(1, FPS));
        let mut mux_opts = ffmpeg::Dictionary::new();
        mux_opts.set("movflags", "+faststart");
        octx.write_header_with(mux_opts)
            .map_err(|e| format!("video: mp4 header: {e}"))?;
        let scaler = ffmpeg::software::scaling::Context::get(
            ffmpeg::format::Pixel::BGRZ,
            w,
            h,
            ffmpeg::format::Pixel::YUV420P,
            w,
            h,
            ffmpeg::software::scaling::Flags::FAST_BILINEAR,
        )
        .map_err(|e| format!("video: scaler: {e}"))?;
        Ok((conn, root, sw, w, h, segment, seg, octx, encoder, scaler))
    })();
    let (conn, root, sw, w, h, mut segment, seg, mut octx, mut encoder, mut scaler) = match setup {
        Ok(s) => {
            let _ = ready.send(Ok(()));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(e.clone()));
            return Err(e);
        }
    };
    let stream_tb = octx
        .stream(0)
        .map(|s| s.time_base())
        .unwrap_or(ffmpeg::Rational(1, FPS));
    let mut src = ffmpeg::frame::Video::new(ffmpeg::format::Pixel::BGRZ, w, h);
    let mut yuv = ffmpeg::frame::Video::new(ffmpeg::format::Pixel::YUV420P, w, h);
    let mut frames = 0u64;
    let mut last_slot: i64 = -1;
    let start = Instant::now();
    let drain = |encoder: &mut ffmpeg::encoder::Video,
                 octx: &mut ffmpeg::format::context::Output| {
        let mut packet = ffmpeg::Packet::empty();
        while encoder.receive_packet(&mut packet).is_ok() {
            packet.set_stream(0);
            packet.rescale_ts(ffmpeg::Rational(1, FPS), stream_tb);
            let _ = packet.write_interleaved(octx);
        }
    };
    let mut error = None;
    while !stop.load(Ordering::SeqCst) {
        let next_due = start + Duration::from_secs_f64((last_slot + 1) as f64 / FPS as f64);
        let now = Instant::now();
        if next_due > now {
            std::thread::sleep(next_due - now);
        }
        let slot = (start.elapsed().as_secs_f64() * FPS as f64).floor() as i64;
        if slot <= last_slot {
            continue;
        }
        let grabbed = conn
            .shm_get_image(
                root,
                0,
                0,
                sw as u16,
                h as u16,
                !0,
                ImageFormat::Z_PIXMAP.into(),
                seg,
                0,
            )
            .map_err(|e| e.to_string())
            .and_then(|c| c.reply().map_err(|e| e.to_string()));
        if let Err(e) = grabbed {
            error = Some(format!("video: capture failed: {e}"));
            break;
        }
        paint_black(
            &mut segment.bytes_mut()[..(sw * h * 4) as usize],
            sw,
            h,
            &masks.all(),
        );
        // Rows that differ from the frame buffer are copied in; an unchanged screen keeps
        // the previous converted frame (one compare pass, no copies).
        let raw = &segment.bytes()[..(sw * h * 4) as usize];
        let stride = src.stride(0);
        let row = (w * 4) as usize;
        let data = src.data_mut(0);
        let mut changed = frames == 0;
        for y in 0..h as usize {
            let from = &raw[y * (sw as usize) * 4..y * (sw as usize) * 4 + row];
            let to = &mut data[y * stride..y * stride + row];
            if to != from {
                to.copy_from_slice(from);
                changed = true;
            }
        }
        if changed {
            if let Err(e) = scaler.run(&src, &mut yuv) {
                error = Some(format!("video: convert: {e}"));
                break;
            }
        }
        yuv.set_pts(Some(slot));
        if let Err(e) = encoder.send_frame(&yuv) {
            error = Some(format!("video: encode: {e}"));
            break;
        }
        drain(&mut encoder, &mut octx);
        frames += 1;
        last_slot = slot;
    }
    let _ = encoder.send_eof();
    drain(&mut encoder, &mut octx);
    octx.write_trailer()
        .map_err(|e| format!("video: finalize: {e}"))?;
    let _ = conn.shm_detach(seg);
    let _ = conn.flush();
    if let Some(e) = error {
        return Err(e);
    }
    Ok(VideoInfo {
        path: path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        codec: "h264",
        fps: FPS,
        width: w,
        height: h,
        frames,
        duration_s: (last_slot + 1).max(0) as f64 / FPS as f64,
    })
}

/// Paints `rects` black in a BGRX image `width` pixels wide and `height` tall.
fn paint_black(pixels: &mut [u8], width: u32, height: u32, rects: &[crate::platform::Rect]) {
    for r in rects {
        let x0 = r.x.clamp(0, width as i32) as usize;
        let x1 = r.right().clamp(0, width as i64) as usize;
        let y0 = r.y.clamp(0, height as i32) as usize;
        let y1 = r.bottom().clamp(0, height as i64) as usize;
        for y in y0..y1 {
            let row = y * width as usize * 4;
            pixels[row + x0 * 4..row + x1 * 4].fill(0);
        }
    }
}
