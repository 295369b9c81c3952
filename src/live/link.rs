//! The connected page, on two threads of its own so that a tool call in progress never
//! stops the picture: one owns the WebSocket (reads the page's events, writes replies and
//! the newest frame), the other captures the screen every frame period and leaves the
//! newest changed frame for it. The recorder's loop sees the page as a queue of events
//! and a way to reply.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;
use tungstenite::{Message, WebSocket};

use super::frames::Frames;
use super::input;
use crate::platform::Platform;

pub struct PageLink {
    events: Receiver<String>,
    replies: Sender<Message>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The window last acted in, where typing and keys go.
    pub last_window: Option<input::Window>,
}

/// What [`PageLink::next_event`] found.
pub enum Next {
    Event(String),
    Nothing,
    Gone,
}

impl PageLink {
    /// Serves `ws` (its reads time out, so its thread looks at its queues in between),
    /// with frames of `platform`'s screen every `every`.
    pub fn start(
        ws: WebSocket<TcpStream>,
        platform: Arc<dyn Platform>,
        runtime: tokio::runtime::Handle,
        every: Duration,
    ) -> PageLink {
        let (events_tx, events) = channel();
        let (replies, replies_rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let newest: Arc<Mutex<Option<Vec<u8>>>> = Arc::default();
        let socket = {
            let (stop, newest) = (stop.clone(), newest.clone());
            std::thread::spawn(move || socket_loop(ws, &events_tx, &replies_rx, &newest, &stop))
        };
        let capture = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut frames = Frames::default();
                while !stop.load(Ordering::SeqCst) {
                    let started = std::time::Instant::now();
                    if let Some(jpeg) = runtime.block_on(frames.next(platform.as_ref())) {
                        *newest.lock().unwrap() = Some(jpeg);
                    }
                    // A frame starts every period: the capture's own time is part of it.
                    std::thread::sleep(every.saturating_sub(started.elapsed()));
                }
            })
        };
        PageLink {
            events,
            replies,
            stop,
            threads: vec![socket, capture],
            last_window: None,
        }
    }

    /// The page's next event, waiting up to `wait`.
    pub fn next_event(&self, wait: Duration) -> Next {
        match self.events.recv_timeout(wait) {
            Ok(text) => Next::Event(text),
            Err(RecvTimeoutError::Timeout) => Next::Nothing,
            Err(RecvTimeoutError::Disconnected) => Next::Gone,
        }
    }

    /// Sends a JSON message; a page gone is noticed at its next event.
    pub fn say(&self, message: Value) {
        let _ = self.replies.send(Message::text(message.to_string()));
    }
}

impl Drop for PageLink {
    /// Stops both threads once what was said has been sent.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Until the page goes or `stop`: the page's text messages to `events`; then replies and
/// the newest frame out.
fn socket_loop(
    mut ws: WebSocket<TcpStream>,
    events: &Sender<String>,
    replies: &Receiver<Message>,
    newest: &Mutex<Option<Vec<u8>>>,
    stop: &AtomicBool,
) {
    loop {
        match ws.read() {
            Ok(Message::Text(text)) => {
                if events.send(text.as_str().to_string()).is_err() {
                    return;
                }
            }
            Ok(Message::Close(_)) => return,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
        while let Ok(reply) = replies.try_recv() {
            if ws.send(reply).is_err() {
                return;
            }
        }
        // Replies first: an "ended" said before the stop reaches the page.
        if stop.load(Ordering::SeqCst) {
            let _ = ws.close(None);
            let _ = ws.flush();
            return;
        }
        let frame = newest.lock().unwrap().take();
        if let Some(jpeg) = frame {
            if ws.send(Message::binary(jpeg)).is_err() {
                return;
            }
        }
    }
}
