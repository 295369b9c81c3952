//! Repaints, from the X Damage extension: when each captured window last changed on
//! screen. Recording waits for a window to stop repainting before it takes the turn's
//! screenshot, instead of comparing captures on a timer.
//!
//! It has its own X connection and a reader thread, so the events never queue behind the
//! main connection's requests. A window is watched from its first capture on (the turn's
//! before-state), through its top-level frame: with Composite redirection, whatever the
//! app draws in any of its subwindows damages that frame. Each report is acknowledged
//! (`DamageSubtract`) so the next repaint reports again, and
//! dated after the server has handled that. A question ("when did it last repaint?") first
//! sends a marker through the server and waits until the reader has handled it: a
//! repaint the server saw before the question is always counted, however far behind a
//! loaded machine has left the reader thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::platform::{REPAINT_CADENCE_MAX, Repaint};

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};
use x11rb::protocol::xproto::{
    ChangeWindowAttributesAux, ClientMessageEvent, ConnectionExt as _, CreateWindowAux, EventMask,
    Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// Windows watched for repaints, and when each last repainted.
pub struct Repaints {
    conn: Arc<RustConnection>,
    /// An unmapped window of this connection: a message to it ends the reader.
    wake: Window,
    /// Watched window → (its top-level frame, the damage object on it).
    watched: Arc<Mutex<HashMap<u32, (Window, u32)>>>,
    /// Frame → when it last repainted (or was first watched).
    last: Arc<Mutex<HashMap<Window, Repaint>>>,
    /// How many markers were sent through the server...
    markers_sent: AtomicU64,
    /// ...and the highest one the reader has handled.
    markers_seen: Arc<(Mutex<u64>, Condvar)>,
    reader: Option<JoinHandle<()>>,
}

/// The wake window's messages: stop the reader, or a marker (with its number's two
/// halves).
const STOP: u32 = 0;
const MARKER: u32 = 1;
/// How long a question waits for its marker before it says "cannot tell".
const MARKER_WAIT: Duration = Duration::from_millis(500);

impl Repaints {
    /// None when the display cannot be reached or has no Damage extension.
    pub fn connect(display: &str) -> Option<Repaints> {
        let (conn, screen) = x11rb::connect(Some(display)).ok()?;
        conn.damage_query_version(1, 1).ok()?.reply().ok()?;
        let root = conn.setup().roots[screen].root;
        let wake = conn.generate_id().ok()?;
        conn.create_window(
            0,
            wake,
            root,
            0,
            0,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            0,
            &CreateWindowAux::new(),
        )
        .ok()?;
        conn.flush().ok()?;
        let conn = Arc::new(conn);
        let last = Arc::new(Mutex::new(HashMap::new()));
        let watched = Arc::new(Mutex::new(HashMap::new()));
        let markers_seen = Arc::new((Mutex::new(0), Condvar::new()));
        let reader = {
            let (conn, last, watched) = (conn.clone(), last.clone(), watched.clone());
            let seen = markers_seen.clone();
            std::thread::Builder::new()
                .name("cua-repaints".into())
                .spawn(move || read_repaints(&conn, wake, &last, &watched, &seen))
                .ok()?
        };
        Some(Repaints {
            conn,
            wake,
            watched,
            last,
            markers_sent: AtomicU64::new(0),
            markers_seen,
            reader: Some(reader),
        })
    }

    /// Watches `window`, whose top-level frame is `frame`, unless it already is.
    pub fn watch(&self, window: u32, frame: Window) {
        let mut watched = self.watched.lock().unwrap();
        if watched.get(&window).is_some_and(|(f, _)| *f == frame) {
            return;
        }
        let Ok(damage) = self.conn.generate_id() else {
            return;
        };
        if let Some((_, old)) = watched.insert(window, (frame, damage)) {
            let _ = self.conn.damage_destroy(old);
        }
        let first = Repaint {
            at: Instant::now(),
            cadence: None,
        };
        self.last.lock().unwrap().insert(frame, first);
        // Its destruction ends the watch: window ids come back (a relaunched app's window
        // often has its predecessor's id) and must not inherit its repaint times.
        let _ = self.conn.change_window_attributes(
            frame,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::STRUCTURE_NOTIFY),
        );
        let _ = self
            .conn
            .damage_create(damage, frame, ReportLevel::NON_EMPTY);
        let _ = self.conn.flush();
    }

    /// When `window` last repainted (or began to be watched), counting every repaint the
    /// server saw before this call; None if it is not watched or the reader is stuck.
    pub fn last_repaint(&self, window: u32) -> Option<Repaint> {
        let frame = self.watched.lock().unwrap().get(&window)?.0;
        self.caught_up()?;
        self.last.lock().unwrap().get(&frame).copied()
    }

    /// Sends a marker through the server and waits until the reader has handled it (and so
    /// every repaint report the server sent before it).
    fn caught_up(&self) -> Option<()> {
        let marker = self.markers_sent.fetch_add(1, Ordering::SeqCst) + 1;
        let halves = [(marker >> 32) as u32, marker as u32];
        self.send_to_reader([MARKER, halves[0], halves[1], 0, 0])
            .ok()?;
        // Another caller's later marker may pass first: it was sent after this call began,
        // so it vouches for every repaint before this call too.
        let (seen, handled) = &*self.markers_seen;
        let seen = seen.lock().unwrap();
        let (seen, timeout) = handled
            .wait_timeout_while(seen, MARKER_WAIT, |s| *s < marker)
            .ok()?;
        drop(seen);
        (!timeout.timed_out()).then_some(())
    }

    fn send_to_reader(&self, data: [u32; 5]) -> Result<(), x11rb::errors::ConnectionError> {
        let message = ClientMessageEvent::new(32, self.wake, x11rb::NONE, data);
        self.conn
            .send_event(false, self.wake, EventMask::NO_EVENT, message)?;
        self.conn.flush()
    }
}

/// Notes each repaint and acknowledges it, and forgets windows that were destroyed, until
/// the wake window gets a message or the connection fails.
fn read_repaints(
    conn: &RustConnection,
    wake: Window,
    last: &Mutex<HashMap<Window, Repaint>>,
    watched: &Mutex<HashMap<u32, (Window, u32)>>,
    markers_seen: &(Mutex<u64>, Condvar),
) {
    while let Ok(event) = conn.wait_for_event() {
        match event {
            Event::DamageNotify(n) => {
                // A repaint between this report and the server's handling of the subtract
                // reports nothing (the region was not empty yet): the time is taken once
                // the subtract has been handled, so it is never earlier than that repaint.
                let _ = conn.damage_subtract(n.damage, x11rb::NONE, x11rb::NONE);
                let _ = conn.sync();
                let at = Instant::now();
                let mut last = last.lock().unwrap();
                let cadence = last
                    .get(&n.drawable)
                    .map(|before| at - before.at)
                    .filter(|gap| *gap <= REPAINT_CADENCE_MAX);
                last.insert(n.drawable, Repaint { at, cadence });
            }
            // A watched frame went away, and its damage object with it.
            Event::DestroyNotify(d) => {
                last.lock().unwrap().remove(&d.window);
                watched
                    .lock()
                    .unwrap()
                    .retain(|_, (frame, _)| *frame != d.window);
            }
            Event::ClientMessage(m) if m.window == wake => {
                let [kind, high, low, ..] = m.data.as_data32();
                if kind == STOP {
                    return;
                }
                let marker = (u64::from(high) << 32) | u64::from(low);
                let mut seen = markers_seen.0.lock().unwrap();
                *seen = (*seen).max(marker);
                markers_seen.1.notify_all();
            }
            _ => {}
        }
    }
}

impl Drop for Repaints {
    fn drop(&mut self) {
        let _ = self.send_to_reader([STOP, 0, 0, 0, 0]);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}
