//! A watch on a tab's JavaScript dialogs, for as long as the session binds the tab.
//!
//! Chromium tells of a dialog only the connections whose Page domain was enabled when it
//! opened, takes its answer only from one of those, and answers nothing else in the page
//! while it is open (Page.enable included). So each tab a session uses gets a thread
//! holding a connection of its own, Page enabled, that keeps the open dialog and answers
//! it when browser_dialog asks. The thread ends when the session's bindings go (its
//! command channel closes) or the tab does.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::platform::PageEndpoint;
use crate::web::page::{CdpConnection, PageError};

/// How long the watch waits for events before it looks for a command.
const TURN: Duration = Duration::from_millis(50);

/// How long enabling the watch may take: a page that does not answer by then is held by
/// a dialog that opened before cua watched (or is hung).
const ENABLE: Duration = Duration::from_secs(3);

type Answer = mpsc::Sender<Result<(), String>>;

/// One tab's watch.
pub struct DialogWatch {
    open: Arc<Mutex<Option<Value>>>,
    commands: Mutex<mpsc::Sender<(bool, Option<String>, Answer)>>,
    alive: Arc<std::sync::atomic::AtomicBool>,
}

impl DialogWatch {
    /// Starts watching tab `cdp_id` (blocking: connects, attaches, enables Page).
    pub fn start(endpoint: &PageEndpoint, cdp_id: &str) -> Result<DialogWatch, PageError> {
        let mut cdp = CdpConnection::open(endpoint, ENABLE)?;
        let session = cdp.attach(cdp_id)?;
        cdp.call_in(&session, "Page.enable", json!({})).map_err(|e| {
            PageError::Protocol(format!(
                "the tab does not answer ({e}): a JavaScript dialog that opened before cua watched this tab may hold it; answer it in the browser"
            ))
        })?;
        let open = Arc::new(Mutex::new(None));
        let alive = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (tx, rx) = mpsc::channel();
        let (seen, living) = (open.clone(), alive.clone());
        std::thread::Builder::new()
            .name("cua-dialog-watch".into())
            .spawn(move || {
                watch(cdp, &session, &seen, &rx);
                living.store(false, std::sync::atomic::Ordering::Relaxed);
            })
            .map_err(|e| PageError::Protocol(format!("the dialog watch: {e}")))?;
        Ok(DialogWatch {
            open,
            commands: Mutex::new(tx),
            alive,
        })
    }

    /// Whether the watch still runs (its tab and browser are there).
    pub fn alive(&self) -> bool {
        self.alive.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The open dialog's Page.javascriptDialogOpening params, if one is open.
    pub fn open(&self) -> Option<Value> {
        self.open.lock().unwrap().clone()
    }

    /// A dialog another connection saw open (an input that opened it), so a call that
    /// follows at once finds it even before the watch's own event is read.
    pub fn saw(&self, params: Value) {
        *self.open.lock().unwrap() = Some(params);
    }

    /// Accepts (with `prompt_text`) or dismisses the open dialog.
    pub fn resolve(&self, accept: bool, prompt_text: Option<String>) -> Result<(), String> {
        let (tx, rx) = mpsc::channel();
        self.commands
            .lock()
            .unwrap()
            .send((accept, prompt_text, tx))
            .map_err(|_| "the tab's dialog watch ended (the tab or browser closed)".to_string())?;
        rx.recv_timeout(super::BUDGET)
            .map_err(|_| "the browser did not answer in time".to_string())?
    }
}

fn watch(
    mut cdp: CdpConnection,
    session: &str,
    open: &Mutex<Option<Value>>,
    commands: &mpsc::Receiver<(bool, Option<String>, Answer)>,
) {
    loop {
        match commands.try_recv() {
            Ok((accept, prompt, answer)) => {
                let mut params = json!({ "accept": accept });
                if let Some(t) = prompt {
                    params["promptText"] = json!(t);
                }
                cdp.renew(super::BUDGET);
                let done = cdp
                    .call_in(session, "Page.handleJavaScriptDialog", params)
                    .map(|_| *open.lock().unwrap() = None)
                    .map_err(|e| e.to_string());
                let _ = answer.send(done);
            }
            Err(mpsc::TryRecvError::Empty) => {}
            Err(mpsc::TryRecvError::Disconnected) => break,
        }
        cdp.renew(super::BUDGET);
        match cdp.next_event("Page.javascriptDialog", TURN) {
            Ok(Some(event)) if event["sessionId"].as_str() == Some(session) => {
                *open.lock().unwrap() = match event["method"].as_str() {
                    Some("Page.javascriptDialogOpening") => Some(event["params"].clone()),
                    _ => None,
                };
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    cdp.close();
}
