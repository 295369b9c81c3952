//! `cua-video`: the helper that records a display to H.264 for `cua`'s recorder, the only
//! binary that links FFmpeg (see `cua::recording::video` for why, and for the JSON lines
//! it reads and writes). Not meant to be run by hand:
//!
//!     cua-video --display :99 --out recording.mp4 --fps 30
//!     cua-video --wayland /run/user/0/wayland-1 --out recording.mp4 --fps 30
//!
//! It grabs the screen (an X display's, or a Wayland output by screencopy) on a `fps` timeline, paints the rectangles the last `masks` line
//! named black and the agent cursor where the last `pointer` line pointed (with a ripple
//! for a while after a click), converts to yuv420p and encodes with libx264 (ultrafast, zerolatency, CRF
//! 28) into an MP4 with its index first. An unchanged screen reuses the previous converted
//! frame, which keeps a quiet desktop cheap. The file is finalized when standard input
//! closes.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use cua::cursor::sprite::{Sprite, SpriteCache, paint_ripple_bgrx};
use cua::platform::Rect;
use cua::platform::linux::screen_grab::ScreenGrab;
use cua::recording::video::{FromHelper, ToHelper, VideoInfo, paint_black};
use ffmpeg_next as ffmpeg;

#[derive(Parser)]
#[command(about = "Records a display to H.264 for cua's recorder (driven over stdin/stdout)")]
struct Args {
    /// The X display to record, e.g. `:99`.
    #[arg(long, required_unless_present = "wayland", conflicts_with = "wayland")]
    display: Option<String>,
    /// The Wayland compositor's socket, to record its output instead.
    #[arg(long)]
    wayland: Option<PathBuf>,
    /// The MP4 file to write.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = cua::recording::video::FPS)]
    fps: i32,
}

/// What frames show besides the screen, as the input last said.
#[derive(Default)]
struct Overlays {
    masks: Vec<Rect>,
    pointer: Option<Pointer>,
    sprites: SpriteCache,
}

/// Where the agent last pointed, the cursor's picture, and its last click.
struct Pointer {
    at: (i32, i32),
    sprite: Sprite,
    click: Option<(Instant, [u8; 3])>,
}

impl Overlays {
    fn paint(&self, screen: &mut [u8], width: u32, height: u32) {
        paint_black(screen, width, height, &self.masks);
        if let Some(p) = &self.pointer {
            if let Some((when, color)) = p.click {
                let age = when.elapsed().as_millis() as u64;
                paint_ripple_bgrx(screen, width, height, p.at, age, color);
            }
            p.sprite.paint_bgrx(screen, width, height, p.at.0, p.at.1);
        }
    }
}

fn main() {
    let args = Args::parse();
    let overlays = Arc::new(Mutex::new(Overlays::default()));
    let stop = Arc::new(AtomicBool::new(false));
    {
        let (overlays, stop) = (overlays.clone(), stop.clone());
        std::thread::spawn(move || read_input(&overlays, &stop));
    }
    let reply = match Encoder::open(&args) {
        Ok(encoder) => {
            say(&FromHelper::Ready {
                width: encoder.width,
                height: encoder.height,
            });
            match encoder.run(&stop, &overlays) {
                Ok(info) => FromHelper::Done(info),
                Err(e) => FromHelper::Failed(e),
            }
        }
        Err(e) => FromHelper::Failed(e),
    };
    let failed = matches!(reply, FromHelper::Failed(_));
    say(&reply);
    std::process::exit(i32::from(failed));
}

fn say(reply: &FromHelper) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string(reply).unwrap());
    let _ = out.flush();
}

/// Takes each `masks` line as the new list and each `pointer` line as where the cursor
/// is now; at the end of input, asks the loop to stop.
fn read_input(overlays: &Mutex<Overlays>, stop: &AtomicBool) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<ToHelper>(&line) {
            Ok(ToHelper::Masks(rects)) => overlays.lock().unwrap().masks = rects,
            Ok(ToHelper::Pointer(mark)) => {
                let mut o = overlays.lock().unwrap();
                let sprite = o
                    .sprites
                    .get(&mark.style, |e| {
                        eprintln!("cua-video: {e}; drawing the arrow")
                    })
                    .clone();
                let click = if mark.click {
                    Some((Instant::now(), mark.style.bloom()))
                } else {
                    o.pointer.as_ref().and_then(|p| p.click)
                };
                o.pointer = Some(Pointer {
                    at: (mark.x, mark.y),
                    sprite,
                    click,
                });
            }
            Err(e) => eprintln!("cua-video: ignored input line {line:?}: {e}"),
        }
    }
    stop.store(true, Ordering::SeqCst);
}

struct Encoder {
    grab: ScreenGrab,
    path: PathBuf,
    fps: i32,
    /// The encoded size: the screen's, made even for yuv420p.
    width: u32,
    height: u32,
    octx: ffmpeg::format::context::Output,
    encoder: ffmpeg::encoder::Video,
    scaler: ffmpeg::software::scaling::Context,
}

impl Encoder {
    fn open(args: &Args) -> Result<Encoder, String> {
        let grab = match (&args.display, &args.wayland) {
            #[cfg(feature = "wayland")]
            (_, Some(socket)) => ScreenGrab::open_wayland(socket),
            #[cfg(not(feature = "wayland"))]
            (_, Some(_)) => Err("this cua-video was built without Wayland".to_string()),
            (Some(display), None) => ScreenGrab::open(display),
            (None, None) => Err("no screen named (--display or --wayland)".to_string()),
        }
        .map_err(|e| format!("video: {e}"))?;
        let (sw, sh) = grab.size();
        let (width, height) = (sw & !1, sh & !1);
        let fps = args.fps;

        ffmpeg::init().map_err(|e| format!("video: ffmpeg init: {e}"))?;
        // Errors only: libx264 otherwise prints its settings banner on every start.
        ffmpeg::log::set_level(ffmpeg::log::Level::Error);
        let path = &args.out;
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
        enc.set_width(width);
        enc.set_height(height);
        enc.set_format(ffmpeg::format::Pixel::YUV420P);
        enc.set_time_base(ffmpeg::Rational(1, fps));
        enc.set_frame_rate(Some(ffmpeg::Rational(fps, 1)));
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
        stream.set_time_base(ffmpeg::Rational(1, fps));
        let mut mux_opts = ffmpeg::Dictionary::new();
        mux_opts.set("movflags", "+faststart");
        octx.write_header_with(mux_opts)
            .map_err(|e| format!("video: mp4 header: {e}"))?;
        let scaler = ffmpeg::software::scaling::Context::get(
            ffmpeg::format::Pixel::BGRZ,
            width,
            height,
            ffmpeg::format::Pixel::YUV420P,
            width,
            height,
            ffmpeg::software::scaling::Flags::FAST_BILINEAR,
        )
        .map_err(|e| format!("video: scaler: {e}"))?;
        Ok(Encoder {
            grab,
            path: path.clone(),
            fps,
            width,
            height,
            octx,
            encoder,
            scaler,
        })
    }

    /// Grabs and encodes until `stop`, then finalizes the file.
    fn run(mut self, stop: &AtomicBool, overlays: &Mutex<Overlays>) -> Result<VideoInfo, String> {
        let (fps, w, h) = (self.fps, self.width, self.height);
        let screen_width = self.grab.size().0;
        let mut src = ffmpeg::frame::Video::new(ffmpeg::format::Pixel::BGRZ, w, h);
        let mut yuv = ffmpeg::frame::Video::new(ffmpeg::format::Pixel::YUV420P, w, h);
        let mut frames = 0u64;
        let mut last_slot: i64 = -1;
        let start = Instant::now();
        let mut error = None;
        while !stop.load(Ordering::SeqCst) {
            let next_due = start + Duration::from_secs_f64((last_slot + 1) as f64 / fps as f64);
            let now = Instant::now();
            if next_due > now {
                std::thread::sleep(next_due - now);
            }
            let slot = (start.elapsed().as_secs_f64() * fps as f64).floor() as i64;
            if slot <= last_slot {
                continue;
            }
            let screen = match self.grab.grab() {
                Ok(screen) => screen,
                Err(e) => {
                    error = Some(format!("video: {e}"));
                    break;
                }
            };
            let screen_height = (screen.len() / (screen_width as usize * 4)) as u32;
            overlays
                .lock()
                .unwrap()
                .paint(screen, screen_width, screen_height);
            // Rows that differ from the frame buffer are copied in; an unchanged screen
            // keeps the previous converted frame (one compare pass, no copies).
            let stride = src.stride(0);
            let row = (w * 4) as usize;
            let data = src.data_mut(0);
            let mut changed = frames == 0;
            for y in 0..h as usize {
                let at = y * screen_width as usize * 4;
                let (from, to) = (
                    &screen[at..at + row],
                    &mut data[y * stride..y * stride + row],
                );
                if to != from {
                    to.copy_from_slice(from);
                    changed = true;
                }
            }
            if changed {
                if let Err(e) = self.scaler.run(&src, &mut yuv) {
                    error = Some(format!("video: convert: {e}"));
                    break;
                }
            }
            yuv.set_pts(Some(slot));
            if let Err(e) = self.encoder.send_frame(&yuv) {
                error = Some(format!("video: encode: {e}"));
                break;
            }
            self.drain();
            frames += 1;
            last_slot = slot;
        }
        let _ = self.encoder.send_eof();
        self.drain();
        self.octx
            .write_trailer()
            .map_err(|e| format!("video: finalize: {e}"))?;
        if let Some(e) = error {
            return Err(e);
        }
        Ok(VideoInfo {
            path: self
                .path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
            codec: "h264".into(),
            fps,
            width: w,
            height: h,
            frames,
            duration_s: (last_slot + 1).max(0) as f64 / fps as f64,
        })
    }

    /// Writes every packet the encoder has ready.
    fn drain(&mut self) {
        let stream_tb = self
            .octx
            .stream(0)
            .map(|s| s.time_base())
            .unwrap_or(ffmpeg::Rational(1, self.fps));
        let mut packet = ffmpeg::Packet::empty();
        while self.encoder.receive_packet(&mut packet).is_ok() {
            packet.set_stream(0);
            packet.rescale_ts(ffmpeg::Rational(1, self.fps), stream_tb);
            let _ = packet.write_interleaved(&mut self.octx);
        }
    }
}
