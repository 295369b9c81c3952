//! The X11 clipboard (the CLIPBOARD selection): reading what its owner offers, and owning
//! it to offer text, a PNG image or a file URL. X11 stores no clipboard content: the owner
//! hands it to each app that asks, so cua's owner is a thread with a connection of its own,
//! alive as long as the process (the daemon, the MCP server); it stops offering when another
//! app takes the clipboard. Content is sent in one transfer (no INCR): what exceeds the
//! server's request size is refused when written.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, PropMode, SelectionNotifyEvent,
    SelectionRequestEvent, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::{CURRENT_TIME, NONE};

use crate::platform::{PlatformError, PlatformResult};

/// How long a read waits for the owner's answer, and a write for the selection: a bound,
/// not a wait (2 s failed a read of cua's own owner once on a loaded CI machine).
const ANSWER_WAIT: Duration = Duration::from_secs(5);
/// How often the owner looks for requests and new content (a paste waits at most this
/// long for its answer; an idle owner wakes 50 times a second).
const OWNER_POLL: Duration = Duration::from_millis(20);

fn x_err(context: &str, e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Other(format!("x11 clipboard: {context}: {e}"))
}

/// What to offer: each type (a target name such as `UTF8_STRING` or `image/png`) and its
/// bytes.
pub type Offer = Vec<(String, Vec<u8>)>;

/// A request to the owner thread: new content, and where to say whether it owns the
/// clipboard now.
type Write = (Offer, Sender<PlatformResult<()>>);

/// The clipboard of one X display.
pub struct Clipboard {
    display: String,
    owner: Mutex<Option<Sender<Write>>>,
}

impl Clipboard {
    pub fn new(display: &str) -> Clipboard {
        Clipboard {
            display: display.to_string(),
            owner: Mutex::new(None),
        }
    }

    /// Offers `offer` on the clipboard; returns once cua owns it.
    pub fn write(&self, offer: Offer) -> PlatformResult<()> {
        let mut owner = self.owner.lock().unwrap();
        if owner.is_none() {
            let (tx, rx) = channel::<Write>();
            let display = self.display.clone();
            std::thread::Builder::new()
                .name("cua-clipboard".into())
                .spawn(move || serve(&display, rx))
                .map_err(|e| x_err("start the owner", e))?;
            *owner = Some(tx);
        }
        let (done, answer) = channel();
        let sent = owner.as_ref().unwrap().send((offer, done));
        if sent.is_err() {
            // The thread ended (its connection broke): the next write starts another.
            *owner = None;
            return Err(x_err("owner", "the clipboard owner stopped; try again"));
        }
        answer
            .recv_timeout(ANSWER_WAIT)
            .map_err(|_| x_err("owner", "no answer from the clipboard owner"))?
    }

    /// The types the clipboard's owner offers, and its text when asked and offered.
    pub fn read(&self, include_text: bool) -> PlatformResult<(Vec<String>, Option<String>)> {
        let (conn, window, atoms) = open(&self.display)?;
        let owner = conn
            .get_selection_owner(atoms.clipboard)
            .map_err(|e| x_err("owner", e))?
            .reply()
            .map_err(|e| x_err("owner", e))?
            .owner;
        if owner == NONE {
            return Ok((Vec::new(), None));
        }
        let targets = fetch(&conn, window, &atoms, atoms.targets)?;
        let listed: Vec<Atom> = match targets {
            Some((_, bytes)) => bytes
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            None => Vec::new(),
        };
        let mut types = Vec::new();
        for atom in &listed {
            let name = conn
                .get_atom_name(*atom)
                .map_err(|e| x_err("type name", e))?
                .reply()
                .map_err(|e| x_err("type name", e))?
                .name;
            types.push(String::from_utf8_lossy(&name).into_owned());
        }
        let text = match include_text {
            false => None,
            true => {
                let target = [atoms.utf8_string, AtomEnum::STRING.into()]
                    .into_iter()
                    .find(|t| listed.contains(t) || listed.is_empty());
                match target {
                    Some(t) => match fetch(&conn, window, &atoms, t)? {
                        Some((ty, _)) if ty == atoms.incr => {
                            return Err(x_err(
                                "text",
                                "the text is too large for one transfer (INCR), which cua does not read",
                            ));
                        }
                        Some((_, bytes)) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                        None => None,
                    },
                    None => None,
                }
            }
        };
        Ok((types, text))
    }
}

struct Atoms {
    clipboard: Atom,
    targets: Atom,
    utf8_string: Atom,
    incr: Atom,
    /// Where a read asks the owner to put its answer.
    property: Atom,
}

fn atom(conn: &RustConnection, name: &str) -> PlatformResult<Atom> {
    Ok(conn
        .intern_atom(false, name.as_bytes())
        .map_err(|e| x_err("atom", e))?
        .reply()
        .map_err(|e| x_err("atom", e))?
        .atom)
}

/// A connection and an unmapped window of its own, to own or request the selection with.
fn open(display: &str) -> PlatformResult<(RustConnection, Window, Atoms)> {
    let (conn, screen) =
        x11rb::connect(Some(display)).map_err(|e| x_err("connect to the display", e))?;
    let root = conn.setup().roots[screen].root;
    let window = conn.generate_id().map_err(|e| x_err("window id", e))?;
    conn.create_window(
        0,
        window,
        root,
        0,
        0,
        1,
        1,
        0,
        WindowClass::INPUT_ONLY,
        0,
        &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
    )
    .map_err(|e| x_err("window", e))?;
    let atoms = Atoms {
        clipboard: atom(&conn, "CLIPBOARD")?,
        targets: atom(&conn, "TARGETS")?,
        utf8_string: atom(&conn, "UTF8_STRING")?,
        incr: atom(&conn, "INCR")?,
        property: atom(&conn, "CUA_CLIPBOARD")?,
    };
    conn.flush().map_err(|e| x_err("flush", e))?;
    Ok((conn, window, atoms))
}

/// Asks the owner for `target` and reads its answer: its type and bytes, or None when the
/// owner refused it.
fn fetch(
    conn: &RustConnection,
    window: Window,
    atoms: &Atoms,
    target: Atom,
) -> PlatformResult<Option<(Atom, Vec<u8>)>> {
    conn.convert_selection(
        window,
        atoms.clipboard,
        target,
        atoms.property,
        CURRENT_TIME,
    )
    .map_err(|e| x_err("request", e))?;
    conn.flush().map_err(|e| x_err("flush", e))?;
    let deadline = Instant::now() + ANSWER_WAIT;
    loop {
        match conn.poll_for_event().map_err(|e| x_err("event", e))? {
            Some(Event::SelectionNotify(n)) if n.requestor == window => {
                if n.property == NONE {
                    return Ok(None);
                }
                let reply = conn
                    .get_property(true, window, atoms.property, AtomEnum::ANY, 0, u32::MAX / 4)
                    .map_err(|e| x_err("read", e))?
                    .reply()
                    .map_err(|e| x_err("read", e))?;
                return Ok(Some((reply.type_, reply.value)));
            }
            Some(_) => {}
            None if Instant::now() >= deadline => {
                return Err(x_err(
                    "read",
                    format!(
                        "the clipboard's owner did not answer within {} s",
                        ANSWER_WAIT.as_secs()
                    ),
                ));
            }
            None => std::thread::sleep(OWNER_POLL),
        }
    }
}

/// The owner thread: takes the clipboard for each offer it is sent and serves requests
/// until the process ends (or its connection breaks).
fn serve(display: &str, writes: Receiver<Write>) {
    let Ok((conn, window, atoms)) = open(display) else {
        // Every write waiting here learns the owner is gone.
        for (_, done) in writes.iter() {
            let _ = done.send(Err(x_err("connect", "cannot open the display")));
        }
        return;
    };
    let limit = conn.maximum_request_bytes().saturating_sub(1024);
    let mut offer: Offer = Vec::new();
    let mut owning = false;
    loop {
        let next = if owning {
            match writes.try_recv() {
                Ok(w) => Some(w),
                Err(std::sync::mpsc::TryRecvError::Empty) => None,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
            }
        } else {
            match writes.recv() {
                Ok(w) => Some(w),
                Err(_) => return,
            }
        };
        if let Some((new, done)) = next {
            let too_big = new.iter().find(|(_, bytes)| bytes.len() > limit);
            let taken = match too_big {
                Some((ty, bytes)) => Err(PlatformError::InvalidInput(format!(
                    "{} bytes of {ty} is more than one clipboard transfer carries ({limit} bytes here)",
                    bytes.len()
                ))),
                None => take(&conn, window, &atoms),
            };
            if taken.is_ok() {
                offer = new;
                owning = true;
            }
            let _ = done.send(taken);
        }
        loop {
            match conn.poll_for_event() {
                Ok(Some(Event::SelectionRequest(r))) => answer(&conn, &atoms, &offer, &r),
                Ok(Some(Event::SelectionClear(c))) if c.selection == atoms.clipboard => {
                    owning = false;
                    offer.clear();
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => return,
            }
        }
        if owning {
            std::thread::sleep(OWNER_POLL);
        }
    }
}

/// Makes `window` the clipboard's owner, checked.
fn take(conn: &RustConnection, window: Window, atoms: &Atoms) -> PlatformResult<()> {
    conn.set_selection_owner(window, atoms.clipboard, CURRENT_TIME)
        .map_err(|e| x_err("take", e))?;
    let owner = conn
        .get_selection_owner(atoms.clipboard)
        .map_err(|e| x_err("take", e))?
        .reply()
        .map_err(|e| x_err("take", e))?
        .owner;
    match owner == window {
        true => Ok(()),
        false => Err(x_err(
            "take",
            "the X server did not make cua the clipboard's owner",
        )),
    }
}

/// Answers one app's request: the list of types, the bytes of one, or a refusal.
fn answer(conn: &RustConnection, atoms: &Atoms, offer: &Offer, r: &SelectionRequestEvent) {
    // An old client asks without a property: the answer goes in one named like the target.
    let property = if r.property == NONE {
        r.target
    } else {
        r.property
    };
    let name = |a: Atom| {
        conn.get_atom_name(a)
            .ok()
            .and_then(|c| c.reply().ok())
            .map(|r| String::from_utf8_lossy(&r.name).into_owned())
    };
    let served = if r.selection != atoms.clipboard || offer.is_empty() {
        false
    } else if r.target == atoms.targets {
        let mut list: Vec<Atom> = vec![atoms.targets];
        for (ty, _) in offer {
            if let Ok(a) = atom(conn, ty) {
                list.push(a);
            }
        }
        conn.change_property32(
            PropMode::REPLACE,
            r.requestor,
            property,
            AtomEnum::ATOM,
            &list,
        )
        .is_ok()
    } else {
        let wanted = name(r.target);
        match offer.iter().find(|(ty, _)| Some(ty) == wanted.as_ref()) {
            Some((_, bytes)) => conn
                .change_property8(PropMode::REPLACE, r.requestor, property, r.target, bytes)
                .is_ok(),
            None => false,
        }
    };
    let notify = SelectionNotifyEvent {
        response_type: x11rb::protocol::xproto::SELECTION_NOTIFY_EVENT,
        sequence: 0,
        time: r.time,
        requestor: r.requestor,
        selection: r.selection,
        target: r.target,
        property: if served { property } else { NONE },
    };
    let _ = conn.send_event(false, r.requestor, EventMask::NO_EVENT, notify);
    let _ = conn.flush();
}
