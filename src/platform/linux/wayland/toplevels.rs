//! The window list: `wlr-foreign-toplevel-management`. Each toplevel gets a number of this
//! connection's when announced (Wayland gives windows no global id), kept until it closes.

use wayland_client::{Connection, Dispatch, QueueHandle, event_created_child};
use wayland_protocols_wlr::foreign_toplevel::v1::client::{
    zwlr_foreign_toplevel_handle_v1::{self as handle, ZwlrForeignToplevelHandleV1},
    zwlr_foreign_toplevel_manager_v1::{self as manager, ZwlrForeignToplevelManagerV1},
};

use super::State;

/// Window ids start here, far from X11's (which are below 2^32), so that a recording names
/// which kind of window it saw.
const FIRST_ID: u64 = 1 << 40;

/// A toplevel as last announced (its pending changes apply at `done`).
#[derive(Debug, Clone)]
pub struct Toplevel {
    pub id: u64,
    pub handle: ZwlrForeignToplevelHandleV1,
    pub title: String,
    pub app_id: String,
    pub activated: bool,
    pub minimized: bool,
    /// Whether a `done` has come since it was announced (before that it is half-known).
    pub complete: bool,
    pending: Pending,
}

#[derive(Debug, Clone, Default)]
struct Pending {
    title: Option<String>,
    app_id: Option<String>,
    states: Option<Vec<u32>>,
}

pub struct Toplevels {
    pub manager: Option<ZwlrForeignToplevelManagerV1>,
    /// In the order they were announced (oldest first).
    pub list: Vec<Toplevel>,
    next_id: u64,
}

impl Toplevels {
    pub fn new(manager: Option<ZwlrForeignToplevelManagerV1>) -> Toplevels {
        Toplevels {
            manager,
            list: Vec::new(),
            next_id: FIRST_ID,
        }
    }

    pub fn by_id(&self, id: u64) -> Option<&Toplevel> {
        self.list.iter().find(|t| t.id == id && t.complete)
    }

    /// Complete toplevels, oldest first.
    pub fn complete(&self) -> impl Iterator<Item = &Toplevel> {
        self.list.iter().filter(|t| t.complete)
    }
}

impl Dispatch<ZwlrForeignToplevelManagerV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrForeignToplevelManagerV1,
        event: manager::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            manager::Event::Toplevel { toplevel } => {
                let list = &mut state.toplevels;
                list.list.push(Toplevel {
                    id: list.next_id,
                    handle: toplevel,
                    title: String::new(),
                    app_id: String::new(),
                    activated: false,
                    minimized: false,
                    complete: false,
                    pending: Pending::default(),
                });
                list.next_id += 1;
            }
            manager::Event::Finished => state.toplevels.manager = None,
            _ => {}
        }
    }

    event_created_child!(State, ZwlrForeignToplevelManagerV1, [
        manager::EVT_TOPLEVEL_OPCODE => (ZwlrForeignToplevelHandleV1, ()),
    ]);
}

impl Dispatch<ZwlrForeignToplevelHandleV1, ()> for State {
    fn event(
        state: &mut Self,
        proxy: &ZwlrForeignToplevelHandleV1,
        event: handle::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let list = &mut state.toplevels.list;
        let Some(at) = list.iter().position(|t| &t.handle == proxy) else {
            return;
        };
        let t = &mut list[at];
        match event {
            handle::Event::Title { title } => t.pending.title = Some(title),
            handle::Event::AppId { app_id } => t.pending.app_id = Some(app_id),
            handle::Event::State { state } => {
                t.pending.states = Some(
                    state
                        .chunks_exact(4)
                        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                        .collect(),
                )
            }
            handle::Event::Done => {
                let p = std::mem::take(&mut t.pending);
                if let Some(title) = p.title {
                    t.title = title;
                }
                if let Some(app_id) = p.app_id {
                    t.app_id = app_id;
                }
                if let Some(states) = p.states {
                    t.activated = states.contains(&(handle::State::Activated as u32));
                    t.minimized = states.contains(&(handle::State::Minimized as u32));
                }
                t.complete = true;
            }
            handle::Event::Closed => {
                let gone = list.remove(at);
                gone.handle.destroy();
            }
            _ => {}
        }
    }
}
