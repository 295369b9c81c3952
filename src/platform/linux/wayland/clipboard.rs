//! The Wayland clipboard through `wlr-data-control`, the protocol clipboard managers use:
//! it lets a client that has no focused surface read the selection and set it.
//!
//! Each read is a connection of its own (a data device, the selection's offer, one pipe
//! per transfer). Like X11, Wayland stores no clipboard content: the source's client hands
//! it to each app that pastes. So each write starts an owner thread with its own connection
//! that answers every paste until another client takes the selection (the compositor then
//! cancels the source and the thread ends). The owner lives as long as the process (the
//! daemon, the MCP server), as on X11.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

use wayland_client::backend::ObjectId;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle, event_created_child};
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_device_v1::{self, ZwlrDataControlDeviceV1},
    zwlr_data_control_manager_v1::ZwlrDataControlManagerV1,
    zwlr_data_control_offer_v1::{self, ZwlrDataControlOfferV1},
    zwlr_data_control_source_v1::{self, ZwlrDataControlSourceV1},
};

use crate::platform::{PlatformError, PlatformResult};

/// How long a read waits for the selection's owner to hand its text over, and a write
/// for the compositor to show cua's offer as the selection.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// The types a text is read as, best first (what Wayland and X11 apps offer).
const TEXT_TYPES: &[&str] = &[
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "text/plain",
    "STRING",
    "TEXT",
];

fn err(context: &str, e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Other(format!("wayland clipboard: {context}: {e}"))
}

/// What to offer: each MIME type and its bytes.
pub type Offer = Vec<(String, Vec<u8>)>;

/// The clipboard of one compositor.
pub struct Clipboard {
    socket: PathBuf,
}

impl Clipboard {
    pub fn new(socket: &Path) -> Clipboard {
        Clipboard {
            socket: socket.to_path_buf(),
        }
    }

    /// The types the selection offers, and its text when asked and offered.
    pub fn read(&self, include_text: bool) -> PlatformResult<(Vec<String>, Option<String>)> {
        let mut link = Link::open(&self.socket)?;
        let Some(offer) = link.state.selection.clone() else {
            return Ok((Vec::new(), None));
        };
        let types = link.state.types_of(&offer);
        let text_type = TEXT_TYPES.iter().find(|t| types.iter().any(|o| o == *t));
        let text = match (include_text, text_type) {
            (true, Some(mime)) => Some(link.receive(&offer, mime)?),
            _ => None,
        };
        offer.destroy();
        Ok((types, text))
    }

    /// Offers `offer` as the selection; returns once the compositor shows it as such.
    pub fn write(&self, offer: Offer) -> PlatformResult<()> {
        let mut link = Link::open(&self.socket)?;
        let before = link.state.selection.as_ref().map(Proxy::id);
        let source = link.manager.create_data_source(&link.queue.handle(), ());
        for (mime, _) in &offer {
            source.offer(mime.clone());
        }
        link.device.set_selection(Some(&source));
        let offered: Vec<&str> = offer.iter().map(|(t, _)| t.as_str()).collect();
        let deadline = Instant::now() + ANSWER_WAIT;
        // The compositor answers with a selection event: a new offer, of our own types,
        // once our source is the selection.
        loop {
            link.roundtrip()?;
            let ours = link.state.selection.as_ref().is_some_and(|o| {
                let types = link.state.types_of(o);
                Some(o.id()) != before && offered.iter().all(|t| types.iter().any(|s| s == t))
            });
            if ours {
                break;
            }
            if link.state.cancelled || Instant::now() >= deadline {
                return Err(err("write", "the compositor did not take cua's offer"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        link.state.content = offer.into_iter().collect();
        let (ready, started) = channel();
        std::thread::Builder::new()
            .name("cua-wl-clipboard".into())
            .spawn(move || link.serve(ready))
            .map_err(|e| err("start the owner", e))?;
        started
            .recv_timeout(ANSWER_WAIT)
            .map_err(|_| err("owner", "the clipboard owner did not start"))
    }
}

/// A connection with a data device on the seat, and what it has seen of the selection.
struct Link {
    conn: Connection,
    queue: EventQueue<State>,
    state: State,
    manager: ZwlrDataControlManagerV1,
    device: ZwlrDataControlDeviceV1,
}

#[derive(Default)]
struct State {
    /// Each offer the compositor announced, with its types.
    offers: HashMap<ObjectId, Vec<String>>,
    /// The current selection's offer, once the device said.
    selection: Option<ZwlrDataControlOfferV1>,
    /// What cua offers, by type (the owner's).
    content: HashMap<String, Vec<u8>>,
    /// The compositor replaced cua's source: the owner stops.
    cancelled: bool,
}

impl State {
    fn types_of(&self, offer: &ZwlrDataControlOfferV1) -> Vec<String> {
        self.offers.get(&offer.id()).cloned().unwrap_or_default()
    }
}

impl Link {
    fn open(socket: &Path) -> PlatformResult<Link> {
        let stream = std::os::unix::net::UnixStream::connect(socket)
            .map_err(|e| err("connect to the compositor", e))?;
        let conn = Connection::from_socket(stream).map_err(|e| err("connection", e))?;
        let (globals, mut queue) =
            registry_queue_init::<State>(&conn).map_err(|e| err("registry", e))?;
        let qh = queue.handle();
        let manager: ZwlrDataControlManagerV1 = globals.bind(&qh, 1..=2, ()).map_err(|_| {
            PlatformError::Unsupported(
                "the compositor offers no zwlr_data_control_manager_v1, the protocol cua reads and writes the Wayland clipboard with".into(),
            )
        })?;
        let seat: wl_seat::WlSeat = globals
            .bind(&qh, 1..=7, ())
            .map_err(|_| err("seat", "the compositor has no seat"))?;
        let device = manager.get_data_device(&seat, &qh, ());
        let mut state = State::default();
        // The device announces the selection in answer to its creation.
        queue
            .roundtrip(&mut state)
            .map_err(|e| err("roundtrip", e))?;
        Ok(Link {
            conn,
            queue,
            state,
            manager,
            device,
        })
    }

    fn roundtrip(&mut self) -> PlatformResult<()> {
        self.queue
            .roundtrip(&mut self.state)
            .map(drop)
            .map_err(|e| err("roundtrip", e))
    }

    /// The offer's content as `mime`, read from a pipe its owner writes to (bounded).
    fn receive(&mut self, offer: &ZwlrDataControlOfferV1, mime: &str) -> PlatformResult<String> {
        let (reader, writer) = nix::unistd::pipe().map_err(|e| err("pipe", e))?;
        offer.receive(mime.to_string(), writer.as_fd());
        self.conn.flush().map_err(|e| err("flush", e))?;
        drop(writer);
        let bytes = read_bounded(reader, ANSWER_WAIT)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Answers pastes until the source is cancelled or the compositor goes.
    fn serve(mut self, ready: Sender<()>) {
        let _ = ready.send(());
        while !self.state.cancelled {
            if self.queue.blocking_dispatch(&mut self.state).is_err() {
                return;
            }
        }
        tracing::debug!("wayland clipboard: another client took the selection");
    }
}

/// Reads `fd` to its end, giving up after `within` (an owner that never closes it).
fn read_bounded(fd: OwnedFd, within: Duration) -> PlatformResult<Vec<u8>> {
    let deadline = Instant::now() + within;
    let mut file = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(err(
                "read",
                "the selection's owner did not hand its text over",
            ));
        }
        if !super::readable_within(file.as_fd(), left) {
            continue;
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(err("read", e)),
        }
    }
}

impl Dispatch<ZwlrDataControlDeviceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrDataControlDeviceV1,
        event: zwlr_data_control_device_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            zwlr_data_control_device_v1::Event::DataOffer { id } => {
                state.offers.insert(id.id(), Vec::new());
            }
            zwlr_data_control_device_v1::Event::Selection { id } => {
                state.selection = id;
            }
            zwlr_data_control_device_v1::Event::Finished => state.cancelled = true,
            _ => {}
        }
    }

    event_created_child!(State, ZwlrDataControlDeviceV1, [
        zwlr_data_control_device_v1::EVT_DATA_OFFER_OPCODE => (ZwlrDataControlOfferV1, ()),
    ]);
}

impl Dispatch<ZwlrDataControlOfferV1, ()> for State {
    fn event(
        state: &mut Self,
        offer: &ZwlrDataControlOfferV1,
        event: zwlr_data_control_offer_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_data_control_offer_v1::Event::Offer { mime_type } = event {
            state.offers.entry(offer.id()).or_default().push(mime_type);
        }
    }
}

impl Dispatch<ZwlrDataControlSourceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrDataControlSourceV1,
        event: zwlr_data_control_source_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            zwlr_data_control_source_v1::Event::Send { mime_type, fd } => {
                // A paste: the bytes of that type, written whole, then the pipe closed so
                // the app sees the end; on a thread, so a paster that reads slowly (or
                // never) holds up no other paste. One that went away is no error of ours.
                let bytes = state.content.get(&mime_type).cloned().unwrap_or_default();
                std::thread::spawn(move || {
                    let _ = std::fs::File::from(fd).write_all(&bytes);
                });
            }
            zwlr_data_control_source_v1::Event::Cancelled => state.cancelled = true,
            _ => {}
        }
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

wayland_client::delegate_noop!(State: ignore wl_seat::WlSeat);
wayland_client::delegate_noop!(State: ignore ZwlrDataControlManagerV1);
