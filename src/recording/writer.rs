//! The one thread that writes a recording's turns, in the order they come, and takes the
//! last one back ("Undo last" in `cua record --live`). It alone numbers turns, so a failed
//! write leaves no hole and an undone turn's number is the next turn's.
//!
//! A turn is assembled under a hidden temporary name and renamed into place when complete;
//! an undone turn is renamed out of place before it is deleted. Either way a reader or a
//! crash sees a whole turn or none, and [`super::prepare_folder`] drops the leftovers.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};

use crate::platform::Capture;
use crate::trajectory::turn_dir_name;

use super::{Progress, TurnJob};

/// What the writer is asked to do.
pub(super) enum Job {
    /// Boxed: a turn's states are large beside an undo, and a job is moved once.
    Write(Box<TurnJob>),
    /// Delete the last turn written in this recording unless it is numbered below `floor`;
    /// answers its number.
    Undo {
        floor: u32,
        answer: tokio::sync::oneshot::Sender<Result<u32, String>>,
    },
}

/// Starts the writer for `dir`, whose first turn in this recording is `first_turn`.
pub(super) fn start(
    dir: &Path,
    first_turn: u32,
    progress: Arc<Mutex<Progress>>,
) -> (Sender<Job>, std::thread::JoinHandle<()>) {
    let (tx, rx) = channel::<Job>();
    let out = dir.to_path_buf();
    let writer = std::thread::spawn(move || {
        for job in rx {
            let turn = progress.lock().unwrap().next_turn;
            match job {
                Job::Write(job) => match write_turn(&out, turn, *job) {
                    Ok(()) => progress.lock().unwrap().next_turn = turn + 1,
                    Err(e) => {
                        progress.lock().unwrap().last_error =
                            Some(format!("turn {turn} not written: {e}"))
                    }
                },
                Job::Undo { floor, answer } => {
                    let undone = undo_turn(&out, first_turn.max(floor), turn);
                    if let Ok(n) = undone {
                        progress.lock().unwrap().next_turn = n;
                    }
                    let _ = answer.send(undone);
                }
            }
        }
    });
    (tx, writer)
}

/// Deletes the turn before `next` unless it is numbered below `floor` (at least this
/// recording's first turn: turns from before an append are never taken back).
fn undo_turn(dir: &Path, floor: u32, next: u32) -> Result<u32, String> {
    if next <= floor {
        return Err("nothing to undo".into());
    }
    let turn = next - 1;
    let name = turn_dir_name(turn);
    let gone: PathBuf = dir.join(format!(".{name}.undone.tmp"));
    std::fs::rename(dir.join(&name), &gone).map_err(|e| format!("{name} not undone: {e}"))?;
    // Out of place already: a failure to delete leaves a hidden leftover, never a turn.
    let _ = std::fs::remove_dir_all(&gone);
    Ok(turn)
}

fn write_turn(dir: &Path, turn: u32, mut job: TurnJob) -> std::io::Result<()> {
    let name = turn_dir_name(turn);
    let tmp = dir.join(format!(".{name}.tmp"));
    let result = (|| {
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp)?;
        }
        std::fs::create_dir(&tmp)?;
        job.action.turn = turn;
        std::fs::write(
            tmp.join("action.json"),
            serde_json::to_vec_pretty(&job.action).map_err(std::io::Error::other)?,
        )?;
        let png = |c: &Capture| crate::images::encode_png(c).map_err(std::io::Error::other);
        if let Some(before) = &job.before {
            std::fs::write(
                tmp.join("before_state.json"),
                serde_json::to_vec_pretty(&before.json).map_err(std::io::Error::other)?,
            )?;
            if let Some(p) = &before.pixels {
                std::fs::write(tmp.join("before.png"), png(p)?)?;
            }
        }
        if let Some(after) = &job.after {
            std::fs::write(
                tmp.join("app_state.json"),
                serde_json::to_vec_pretty(&after.json).map_err(std::io::Error::other)?,
            )?;
            if let Some(p) = &after.pixels {
                std::fs::write(tmp.join("screenshot.png"), png(p)?)?;
            }
        }
        if let Some(point) = job.action.click_point {
            let base = job
                .before
                .as_ref()
                .and_then(|b| b.pixels.as_ref())
                .or(job.after.as_ref().and_then(|a| a.pixels.as_ref()));
            if let Some(base) = base {
                let mut marked = base.clone();
                draw_dot(&mut marked, point.x, point.y);
                std::fs::write(tmp.join("click.png"), png(&marked)?)?;
            }
        }
        std::fs::rename(&tmp, dir.join(&name))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

/// A filled red dot (radius 6) with a white ring, visible on any background.
fn draw_dot(c: &mut Capture, cx: i32, cy: i32) {
    use imageproc::drawing::draw_filled_circle_mut;
    let Some(mut image) =
        image::RgbaImage::from_raw(c.width, c.height, std::mem::take(&mut c.rgba))
    else {
        return;
    };
    draw_filled_circle_mut(&mut image, (cx, cy), 8, image::Rgba([255, 255, 255, 255]));
    draw_filled_circle_mut(&mut image, (cx, cy), 6, image::Rgba([255, 0, 0, 255]));
    c.rgba = image.into_raw();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(tool: &str) -> Job {
        let action = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "turn": 0, "tool": tool, "arguments": {},
            "result_summary": "", "result_error": null, "result": {}, "timestamp": "",
            "t_ms": 0, "pid": null, "window_id": null, "app": null, "click_point": null,
            "target": null }))
        .unwrap();
        Job::Write(Box::new(TurnJob {
            action,
            before: None,
            after: None,
        }))
    }

    fn undo(tx: &Sender<Job>) -> Result<u32, String> {
        let (answer, undone) = tokio::sync::oneshot::channel();
        tx.send(Job::Undo { floor: 0, answer }).unwrap();
        undone.blocking_recv().unwrap()
    }

    #[test]
    fn undo_takes_back_this_recordings_last_turn_only_and_its_number_is_reused() {
        let dir = std::env::temp_dir().join(format!("cua-writer-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        // Turn 1 is an earlier recording's (this one appends from turn 2).
        std::fs::create_dir(dir.as_path().join(turn_dir_name(1))).unwrap();
        let progress = Arc::new(Mutex::new(Progress {
            next_turn: 2,
            last_error: None,
        }));
        let (tx, writer) = start(dir.as_path(), 2, progress.clone());
        tx.send(job("click")).unwrap();
        tx.send(job("type_text")).unwrap();
        assert_eq!(undo(&tx), Ok(3));
        tx.send(job("press_key")).unwrap();
        assert_eq!(undo(&tx), Ok(3));
        assert_eq!(undo(&tx), Ok(2));
        assert_eq!(undo(&tx), Err("nothing to undo".to_string()));
        tx.send(job("scroll")).unwrap();
        drop(tx);
        writer.join().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.as_path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [turn_dir_name(1), turn_dir_name(2)]);
        let action =
            std::fs::read_to_string(dir.as_path().join(turn_dir_name(2)).join("action.json"));
        assert!(action.unwrap().contains("\"scroll\""));
        assert_eq!(progress.lock().unwrap().next_turn, 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
