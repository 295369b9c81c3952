//! Trajectory recording: a hook around tool dispatch that, for every action tool call
//! (successful, failed or refused), captures the target window before and after, and hands
//! the turn to one ordered writer thread.
//!
//! A turn's after-state is taken off the caller's path: a task waits for the window to
//! settle while the agent goes on. The next recorded action never waits for that settle: it
//! cuts it short, and the after-state is the window as it was just before that action
//! touched it (read then, once, and reused as the next turn's before-state). Replays and
//! test runs, whose after-states are compared with goldens, settle every turn instead
//! ([`Recorder::settle_each_turn`]).
//!
//! One writer thread ([`writer`]) assembles `turn-NNNNN/` under a hidden temporary name and
//! renames it into place when complete, so neither a reader nor a crash ever sees a
//! half-written turn. Turn numbers are given at write time, so a failed write leaves no
//! hole; the failure goes to `last_error` and never fails the action itself.

mod call;
pub mod redact;
mod settle;
pub mod stable;
pub mod video;
mod writer;

pub use call::{Call, record_call};

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use crate::errors::ToolError;
use crate::platform::{Capture, Platform, WindowInfo};
use crate::trajectory::{Action, SCHEMA_VERSION, Session, parse_turn_dir, turn_dir_name};

/// The video's file name inside a recording folder.
pub const VIDEO_FILE: &str = "recording.mp4";

/// A window's state at one instant: get_window_state's structured result and the pixels.
#[derive(Clone)]
pub struct StateCapture {
    pub json: Value,
    pub pixels: Option<Capture>,
}

struct TurnJob {
    action: Action,
    before: Option<StateCapture>,
    after: Option<StateCapture>,
}

struct Active {
    video: Option<video::VideoRecorder>,
    dir: PathBuf,
    started: Instant,
    session: Session,
    tx: Sender<writer::Job>,
    writer: std::thread::JoinHandle<()>,
}

/// What get_recording_state reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecordingState {
    pub enabled: bool,
    pub output_dir: Option<PathBuf>,
    pub next_turn: u32,
    pub video: Option<Value>,
    pub last_error: Option<String>,
}

/// Shared between the recorder and its writer thread.
#[derive(Default)]
struct Progress {
    next_turn: u32,
    last_error: Option<String>,
}

/// The last after-state, reusable as the next action's before-state while it is fresh.
struct LastState {
    window_id: u64,
    at: Instant,
    state: StateCapture,
}

/// A turn whose after-state is still being taken.
struct PendingTurn {
    task: tokio::task::JoinHandle<()>,
    /// Tells the task to stop waiting for the window to settle and read it now.
    cut: tokio::sync::watch::Sender<bool>,
    /// In a run that checks each turn ([`EachTurn::after_check`]): the driver's word that
    /// its check is over, with when it saw the turn's change. Dropped: go on all the same.
    checked: tokio::sync::watch::Sender<Option<Option<Instant>>>,
}

impl PendingTurn {
    /// Waits for the task, the driver's check over (it has moved on).
    async fn finish(self) {
        drop(self.checked);
        let _ = self.task.await;
    }
}

/// How a run that settles every turn takes its after-states ([`Recorder::settle_each_turn`]).
#[derive(Debug, Clone)]
pub struct EachTurn {
    /// How long a window may take to hold still ([`stable::TIMEOUT`] by default).
    pub timeout: std::time::Duration,
    /// The driver checks each turn's change before the after-state is read (a replay, see
    /// [`Recorder::turn_checked`]).
    pub after_check: bool,
    /// What the run's comparison leaves out ([`crate::snapshot::incidental`]): it need not
    /// hold still either (Calc's toolbar changes its enabled state late).
    pub incidental: crate::snapshot::incidental::Incidental,
}

impl Default for EachTurn {
    fn default() -> Self {
        EachTurn {
            timeout: stable::TIMEOUT,
            after_check: false,
            incidental: Default::default(),
        }
    }
}

#[derive(Default)]
pub struct Recorder {
    active: Mutex<Option<Active>>,
    progress: Arc<Mutex<Progress>>,
    /// The task finishing the previous turn (after-state, submission).
    pending: tokio::sync::Mutex<Option<PendingTurn>>,
    last_state: Arc<Mutex<Option<LastState>>>,
    /// The agent's last reading of a window's tree (get_window_state) while recording: a
    /// settle that finds it newer than the app's last event takes it instead of reading
    /// the tree again.
    observed: Arc<Mutex<Option<settle::Observation>>>,
    /// Every turn settles before the next action runs (a replay or test run, whose
    /// after-states are compared with a golden's): never cut short, and stable.
    each_turn: Mutex<Option<EachTurn>>,
    /// How many calls have become turns since the process started (written or still
    /// taking their after-state): a caller learns whether its call was recorded.
    turns_begun: std::sync::atomic::AtomicU64,
}

/// Makes `dir` ready to record into: created, writable, without a crash's leftovers, and
/// without turns unless `append`. Returns the first turn's number.
fn prepare_folder(dir: &Path, append: bool) -> Result<u32, ToolError> {
    if dir.exists() && !dir.is_dir() {
        return Err(ToolError::invalid(format!(
            "`output_dir`: `{}` is a file, not a directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        ToolError::invalid(format!(
            "`output_dir`: cannot create `{}`: {e}",
            dir.display()
        ))
    })?;
    let probe = dir.join(".cua-write-probe");
    std::fs::write(&probe, b"").map_err(|e| {
        ToolError::invalid(format!(
            "`output_dir`: `{}` is not writable: {e}",
            dir.display()
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    // Leftovers of a crash mid-turn are hidden temporaries: never turns, safe to drop.
    for entry in std::fs::read_dir(dir)
        .map_err(|e| ToolError::failed(e.to_string()))?
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(".turn-") && name.ends_with(".tmp") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let turns = existing_turns(dir).map_err(|e| ToolError::failed(e.to_string()))?;
    if !turns.is_empty() && !append {
        return Err(ToolError::invalid(format!(
            "`output_dir`: `{}` already holds {} turns (up to {}); pass append: true to continue after them, or pick an empty folder",
            dir.display(),
            turns.len(),
            turn_dir_name(*turns.last().unwrap())
        )));
    }
    Ok(turns.last().map(|n| n + 1).unwrap_or(1))
}

/// The display's video into `dir`, never over an existing one.
fn start_video(dir: &Path, source: &video::VideoSource) -> Result<video::VideoRecorder, ToolError> {
    let file = dir.join(VIDEO_FILE);
    if file.exists() {
        return Err(ToolError::invalid(format!(
            "`output_dir`: `{}` already holds a video; pick another folder (videos are never overwritten)",
            dir.display()
        )));
    }
    video::VideoRecorder::start(source, &file).map_err(ToolError::failed)
}

/// Existing turn numbers in a folder.
fn existing_turns(dir: &Path) -> std::io::Result<Vec<u32>> {
    let mut turns = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        if let Some(n) = parse_turn_dir(&name.to_string_lossy()) {
            turns.push(n);
        }
    }
    turns.sort_unstable();
    Ok(turns)
}

impl Recorder {
    /// How many calls have become turns so far (see [`Recorder::turns_begun`]'s field).
    pub fn turns_begun(&self) -> u64 {
        self.turns_begun.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn is_recording(&self) -> bool {
        self.active.lock().unwrap().is_some()
    }

    pub fn state(&self) -> RecordingState {
        let active = self.active.lock().unwrap();
        let progress = self.progress.lock().unwrap();
        RecordingState {
            enabled: active.is_some(),
            output_dir: active.as_ref().map(|a| a.dir.clone()),
            next_turn: if active.is_some() {
                progress.next_turn
            } else {
                0
            },
            video: active.as_ref().and_then(|a| a.session.video.clone()),
            last_error: progress.last_error.clone(),
        }
    }

    /// Starts recording into `dir` (created with parents). A folder that already holds
    /// turns is refused unless `append`, which continues after the last one.
    /// With `video`, that screen is also recorded to `recording.mp4`.
    pub fn start(
        &self,
        dir: &Path,
        append: bool,
        screen: Option<(u32, u32)>,
        platform: &str,
        video: Option<&video::VideoSource>,
    ) -> Result<RecordingState, ToolError> {
        let mut active = self.active.lock().unwrap();
        if let Some(a) = active.as_ref() {
            return Err(ToolError::invalid(format!(
                "already recording into `{}`; stop it first (set_recording enabled=false)",
                a.dir.display()
            )));
        }
        let first_turn = prepare_folder(dir, append)?;
        let video = match video {
            Some(source) => Some(start_video(dir, source)?),
            None => None,
        };
        let session = Session {
            schema_version: SCHEMA_VERSION,
            driver: "cua".into(),
            driver_version: env!("CARGO_PKG_VERSION").into(),
            platform: platform.into(),
            started_at: chrono::Utc::now().to_rfc3339(),
            stopped_at: None,
            screen: screen.map(|(width, height)| crate::trajectory::ScreenSize { width, height }),
            first_turn,
            turns_written: 0,
            video: video.as_ref().map(|_| json!({ "path": VIDEO_FILE, "codec": "h264", "fps": video::FPS, "status": "recording" })),
        };
        crate::files::write_atomic(
            &dir.join("session.json"),
            &serde_json::to_vec_pretty(&session).unwrap(),
        )
        .map_err(|e| ToolError::failed(format!("cannot write session.json: {e}")))?;
        {
            let mut p = self.progress.lock().unwrap();
            p.next_turn = first_turn;
            p.last_error = None;
        }
        let (tx, writer) = writer::start(dir, first_turn, self.progress.clone());
        *active = Some(Active {
            video,
            dir: dir.to_path_buf(),
            started: Instant::now(),
            session,
            tx,
            writer,
        });
        drop(active);
        Ok(self.state())
    }

    /// Stops recording: waits for queued turns, then rewrites session.json with the stop time.
    /// Returns None when nothing was recording.
    pub fn stop(&self) -> Option<RecordingState> {
        let active = self.active.lock().unwrap().take()?;
        drop(active.tx);
        let _ = active.writer.join();
        let mut session = active.session;
        if let Some(v) = active.video {
            session.video = Some(match v.stop() {
                Ok(info) => json!(info),
                Err(e) => {
                    self.note_error(e.clone());
                    json!({ "path": VIDEO_FILE, "error": e })
                }
            });
        }
        let next = self.progress.lock().unwrap().next_turn;
        session.stopped_at = Some(chrono::Utc::now().to_rfc3339());
        session.turns_written = next.saturating_sub(session.first_turn);
        if let Err(e) = crate::files::write_atomic(
            &active.dir.join("session.json"),
            &serde_json::to_vec_pretty(&session).unwrap(),
        ) {
            self.note_error(format!("cannot write session.json: {e}"));
        }
        let mut state = self.state();
        state.output_dir = Some(active.dir);
        state.next_turn = next;
        Some(state)
    }

    /// Adds to last_error without hiding an earlier failure.
    fn note_error(&self, e: String) {
        let mut p = self.progress.lock().unwrap();
        p.last_error = Some(match p.last_error.take() {
            Some(earlier) => format!("{earlier}; {e}"),
            None => e,
        });
    }

    /// Where to send a turn, and its time since the start; None when not recording.
    fn sender(&self) -> Option<(Sender<writer::Job>, u64)> {
        let active = self.active.lock().unwrap();
        active
            .as_ref()
            .map(|a| (a.tx.clone(), a.started.elapsed().as_millis() as u64))
    }

    /// What a recording video shows besides the screen (masks, the agent's pointer),
    /// while a video records.
    pub fn video_feed(&self) -> Option<video::Feed> {
        let active = self.active.lock().unwrap();
        active.as_ref()?.video.as_ref().map(|v| v.feed())
    }

    /// Waits until the previous turn has been handed to the writer, its after-state
    /// taken once the window settled.
    pub async fn finish_pending(&self) {
        if let Some(pending) = self.pending.lock().await.take() {
            pending.finish().await;
        }
    }

    /// The driver has checked the last turn (a replay: its recorded change showed at
    /// `shown`, or the turn has none): its after-state may be read now.
    pub async fn turn_checked(&self, shown: Option<Instant>) {
        if let Some(pending) = self.pending.lock().await.as_ref() {
            let _ = pending.checked.send(Some(shown));
        }
    }

    /// The agent read window `window_id`'s tree (its state as recorded turns keep it),
    /// starting at `read_started`.
    pub fn observed(&self, window_id: u64, read_started: Instant, state: Value) {
        *self.observed.lock().unwrap() = Some(settle::Observation {
            window_id,
            read_started,
            state,
        });
    }

    /// Makes every turn settle before the next action runs, as a replay or test run needs:
    /// its after-states are compared with a golden's and must not depend on how soon the
    /// next turn came, nor on how fast the app was ([`stable`]).
    pub fn settle_each_turn(&self, how: EachTurn) {
        *self.each_turn.lock().unwrap() = Some(how);
    }

    fn each_turn(&self) -> Option<EachTurn> {
        self.each_turn.lock().unwrap().clone()
    }

    /// Hands the previous turn to the writer now: its after-state is the window as it is
    /// at this instant (the next action has not touched it yet), unless it had settled.
    async fn cut_pending(&self) {
        if let Some(pending) = self.pending.lock().await.take() {
            let _ = pending.cut.send(true);
            pending.finish().await;
        }
    }

    /// Takes back the last turn this recording wrote ("Undo last"): the previous action's
    /// turn is completed first, so the one taken back is the one the person saw. The app
    /// is not undone, and turns numbered below `floor` stay. Answers the turn's number,
    /// which the next turn gets.
    pub async fn undo_last(&self, floor: u32) -> Result<u32, String> {
        self.finish_pending().await;
        let (tx, _) = self.sender().ok_or("not recording: nothing to undo")?;
        let (answer, undone) = tokio::sync::oneshot::channel();
        tx.send(writer::Job::Undo { floor, answer })
            .map_err(|_| "the recording's writer has stopped".to_string())?;
        undone
            .await
            .map_err(|_| "the recording's writer has stopped".to_string())?
    }

    /// Stops recording once the previous turn is complete (see [`Recorder::stop`]).
    pub async fn stop_when_done(&self) -> Option<RecordingState> {
        self.finish_pending().await;
        *self.last_state.lock().unwrap() = None;
        *self.observed.lock().unwrap() = None;
        self.stop()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The window an action addresses: `window_id`, else the pid's frontmost on-screen window.
async fn window_for(
    platform: &dyn Platform,
    pid: Option<u32>,
    window_id: Option<u64>,
) -> Option<WindowInfo> {
    let list = platform.list_windows().await.ok()?.windows;
    match (window_id, pid) {
        (Some(id), _) => list.into_iter().find(|w| w.window_id == id),
        (None, Some(pid)) => list
            .into_iter()
            .filter(|w| w.pid == Some(pid) && w.is_on_screen)
            .max_by_key(|w| w.z_index),
        _ => None,
    }
}

async fn capture_state(
    platform: &Arc<dyn Platform>,
    pid: u32,
    window: &WindowInfo,
) -> StateCapture {
    let (json, frame) = settle::read_state(platform, pid, window).await;
    StateCapture {
        json,
        pixels: frame.map(|(c, _)| c),
    }
}

/// A state as a turn may keep it: secret values blanked, secret frames painted over.
fn redacted_state(rules: &redact::Rules, mut state: StateCapture) -> StateCapture {
    let frames = rules.secret_frames(&state.json);
    if let Some(p) = &mut state.pixels {
        redact::paint(p, &frames);
    }
    rules.scrub_state(&mut state.json);
    state
}

/// Window-local rectangles in screen pixels.
fn screen_rects(
    window: &WindowInfo,
    rects: Vec<crate::platform::Rect>,
) -> Vec<crate::platform::Rect> {
    rects
        .into_iter()
        .map(|r| crate::platform::Rect {
            x: r.x + window.bounds.x,
            y: r.y + window.bounds.y,
            ..r
        })
        .collect()
}

/// An after-state younger than this stands in for the next action's before-state.
const REUSE_BEFORE: std::time::Duration = std::time::Duration::from_millis(1500);
