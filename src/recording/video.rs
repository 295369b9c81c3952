//! H.264 video of the whole display while recording (`video_experimental`, `--video`),
//! made by a helper process, `cua-video` (src/bin/cua-video.rs), so that FFmpeg is loaded
//! only while a video records: the `cua` binary itself links none of it and starts in a
//! few milliseconds.
//!
//! [`VideoRecorder`] starts the helper and talks to it in JSON lines ([`ToHelper`] on its
//! standard input, [`FromHelper`] on its standard output). The helper grabs the screen on
//! a 30 fps timeline (a late frame takes its real slot, so the video's duration follows the
//! wall clock), paints the secret rectangles black and the agent cursor where the agent
//! last pointed (with a ripple after a click), both sent through the [`Feed`], and encodes
//! with libx264 into `recording.mp4` (faststart). When its input closes (a stop, or cua killed), it
//! finalizes the file, so a killed cua still leaves a playable video.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cursor::sprite::Style;
use crate::platform::Rect;

pub const FPS: i32 = 30;

/// The screen a video records: an X display, or a Wayland compositor's output.
#[derive(Debug, Clone)]
pub enum VideoSource {
    X11 { display: String },
    Wayland { socket: PathBuf },
}

impl VideoSource {
    /// The helper's arguments that name it.
    fn helper_args(&self) -> [std::ffi::OsString; 2] {
        match self {
            VideoSource::X11 { display } => ["--display".into(), display.into()],
            VideoSource::Wayland { socket } => ["--wayland".into(), socket.into()],
        }
    }
}

/// The helper's file name, looked for beside the running executable.
pub const HELPER: &str = "cua-video";

/// How long the helper may take to start encoding, and to finalize the file.
const START_WAIT: Duration = Duration::from_secs(10);
const FINISH_WAIT: Duration = Duration::from_secs(30);

/// What session.json records about the video.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VideoInfo {
    pub path: String,
    pub codec: String,
    pub fps: i32,
    pub width: u32,
    pub height: u32,
    pub frames: u64,
    pub duration_s: f64,
}

/// What the recorder tells the helper, one JSON object a line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ToHelper {
    /// Screen rectangles to paint black in every frame from now on (the whole list).
    Masks(Vec<Rect>),
    /// The agent pointed at a screen point now: the cursor is drawn there in every frame
    /// from now on, with a ripple first when it clicked.
    Pointer(PointerMark),
}

/// One pointer action, as the video shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PointerMark {
    pub x: i32,
    pub y: i32,
    /// A button went down here.
    pub click: bool,
    pub style: Style,
}

/// What the helper answers, one JSON object a line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum FromHelper {
    /// Encoding has started; frames are `width` x `height`.
    Ready { width: u32, height: u32 },
    /// The file is finalized.
    Done(VideoInfo),
    /// Nothing more will come: why the video could not start or finish.
    Failed(String),
}

/// What the recorder and the tools tell a recording video: screen rectangles to paint
/// over, by the window whose state reported them (the latest state of a window replaces
/// its list), and where the agent points. Each is sent to the helper at once.
#[derive(Clone, Default)]
pub struct Feed(Arc<Mutex<FeedState>>);

#[derive(Default)]
struct FeedState {
    by_window: HashMap<u64, Vec<Rect>>,
    helper: Option<ChildStdin>,
}

impl Feed {
    /// The agent points at a screen point now.
    pub fn point(&self, mark: PointerMark) {
        if let Some(stdin) = self.0.lock().unwrap().helper.as_mut() {
            let _ = send(stdin, &ToHelper::Pointer(mark));
        }
    }

    pub fn set_masks(&self, window_id: u64, screen_rects: Vec<Rect>) {
        let mut state = self.0.lock().unwrap();
        if screen_rects.is_empty() {
            if state.by_window.remove(&window_id).is_none() {
                return;
            }
        } else {
            state.by_window.insert(window_id, screen_rects);
        }
        let all = state.by_window.values().flatten().copied().collect();
        if let Some(stdin) = state.helper.as_mut() {
            // A helper that died is reported when the recording stops.
            let _ = send(stdin, &ToHelper::Masks(all));
        }
    }

    /// Closes the helper's input: it finalizes the file and exits.
    fn close(&self) {
        self.0.lock().unwrap().helper = None;
    }
}

fn send(stdin: &mut ChildStdin, message: &ToHelper) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).expect("helper messages serialize");
    line.push(b'\n');
    stdin.write_all(&line)?;
    stdin.flush()
}

pub struct VideoRecorder {
    feed: Feed,
    child: Child,
    replies: Receiver<FromHelper>,
}

impl VideoRecorder {
    /// Starts recording `source` into `path`; returns once the encoder is running.
    pub fn start(source: &VideoSource, path: &Path) -> Result<VideoRecorder, String> {
        let helper = helper_path()?;
        let mut child = Command::new(&helper)
            .args(source.helper_args())
            .arg("--out")
            .arg(path)
            .arg("--fps")
            .arg(FPS.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("video: cannot start {}: {e}", helper.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("cua-video-replies".into())
            .spawn(move || {
                for line in std::io::BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let reply = serde_json::from_str(&line).unwrap_or_else(|e| {
                        FromHelper::Failed(format!("video: helper said {line:?}: {e}"))
                    });
                    if tx.send(reply).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        let feed = Feed::default();
        feed.0.lock().unwrap().helper = child.stdin.take();
        let mut recorder = VideoRecorder {
            feed,
            child,
            replies,
        };
        match recorder.replies.recv_timeout(START_WAIT) {
            Ok(FromHelper::Ready { .. }) => Ok(recorder),
            Ok(FromHelper::Failed(e)) => Err(e),
            Ok(other) => Err(format!("video: helper started with {other:?}")),
            Err(_) => {
                let _ = recorder.child.kill();
                Err(format!(
                    "video: {HELPER} did not start within {} s",
                    START_WAIT.as_secs()
                ))
            }
        }
    }

    /// What the frames show besides the screen: masks and the agent's pointer.
    pub fn feed(&self) -> Feed {
        self.feed.clone()
    }

    /// The helper's process id (its CPU is the video's cost).
    pub fn helper_pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops and finalizes the file (flushes the encoder, writes the index).
    pub fn stop(mut self) -> Result<VideoInfo, String> {
        self.finish()
    }

    fn finish(&mut self) -> Result<VideoInfo, String> {
        self.feed.close();
        let reply = self.replies.recv_timeout(FINISH_WAIT);
        if reply.is_err() {
            let _ = self.child.kill();
        }
        let status = self.child.wait();
        match reply {
            Ok(FromHelper::Done(info)) => Ok(info),
            Ok(FromHelper::Failed(e)) => Err(e),
            Ok(other) => Err(format!("video: helper finished with {other:?}")),
            Err(_) => Err(match status {
                Ok(s) if !s.success() => format!("video: {HELPER} ended ({s}) without a video"),
                _ => format!(
                    "video: {HELPER} did not finalize within {} s",
                    FINISH_WAIT.as_secs()
                ),
            }),
        }
    }
}

impl Drop for VideoRecorder {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.finish();
        }
    }
}

/// `CUA_VIDEO_HELPER`, else `cua-video` beside the running executable ([`crate::files::helper`]).
pub fn helper_path() -> Result<PathBuf, String> {
    crate::files::helper(HELPER, "CUA_VIDEO_HELPER").map_err(|e| format!("video: {e}"))
}

/// Paints `rects` black in a BGRX image `width` pixels wide and `height` tall (a frame in
/// shared memory, drawn in place through imageproc, which clips the rectangles).
pub fn paint_black(pixels: &mut [u8], width: u32, height: u32, rects: &[Rect]) {
    let len = (width * height * 4) as usize;
    let Some(frame) = pixels.get_mut(..len) else {
        return;
    };
    let Some(mut image) =
        image::ImageBuffer::<image::Rgba<u8>, &mut [u8]>::from_raw(width, height, frame)
    else {
        return;
    };
    for r in rects.iter().filter(|r| !r.is_empty()) {
        let rect = imageproc::rect::Rect::at(r.x, r.y).of_size(r.width as u32, r.height as u32);
        imageproc::drawing::draw_filled_rect_mut(&mut image, rect, image::Rgba([0, 0, 0, 0]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_back_as_written() {
        let masks = ToHelper::Masks(vec![Rect::new(1, 2, 3, 4)]);
        let line = serde_json::to_string(&masks).unwrap();
        assert_eq!(line, r#"{"masks":[{"x":1,"y":2,"width":3,"height":4}]}"#);
        assert_eq!(serde_json::from_str::<ToHelper>(&line).unwrap(), masks);
        let pointer = ToHelper::Pointer(PointerMark {
            x: 5,
            y: 6,
            click: true,
            style: Style::default(),
        });
        let line = serde_json::to_string(&pointer).unwrap();
        assert_eq!(serde_json::from_str::<ToHelper>(&line).unwrap(), pointer);
        let ready: FromHelper =
            serde_json::from_str(r#"{"ready":{"width":8,"height":6}}"#).unwrap();
        assert_eq!(
            ready,
            FromHelper::Ready {
                width: 8,
                height: 6
            }
        );
    }

    #[test]
    fn paint_black_stays_inside_the_image() {
        let mut pixels = vec![255u8; 4 * 4 * 4];
        paint_black(
            &mut pixels,
            4,
            4,
            &[Rect::new(3, 3, 100, 100), Rect::new(-5, 0, 6, 1)],
        );
        let black: Vec<usize> = (0..16).filter(|i| pixels[i * 4] == 0).collect();
        assert_eq!(black, vec![0, 15]);
    }
}
