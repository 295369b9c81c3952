//! KWin's window list: `org_kde_plasma_window_management`. Unlike the wlroots list it
//! gives each window's pid, its place on the screen, its stacking and a uuid, and lets a
//! client activate a window. KWin offers it only to clients it trusts (the KDE sandbox's
//! KWin trusts every client).

use wayland_client::{Connection, Dispatch, Proxy, QueueHandle};
use wayland_protocols_plasma::plasma_window_management::client::{
    org_kde_plasma_window::{self as window, OrgKdePlasmaWindow},
    org_kde_plasma_window_management::{self as manager, OrgKdePlasmaWindowManagement, State},
};

use super::State as Client;
use crate::platform::Rect;

/// Window ids from KWin's uuids start here, apart from the wlroots list's and sway's
/// (`toplevels::FIRST_ID`, `SWAY_WINDOW_IDS`).
const KWIN_WINDOW_IDS: u64 = 1 << 42;

/// A window as KWin last described it.
#[derive(Debug, Clone)]
pub struct PlasmaWindow {
    /// The same in every cua process: from KWin's uuid.
    pub id: u64,
    pub uuid: String,
    pub handle: OrgKdePlasmaWindow,
    pub title: String,
    pub app_id: String,
    pub pid: Option<u32>,
    /// Its frame on the screen (None until KWin said).
    pub geometry: Option<Rect>,
    pub state: u32,
    /// The uuid of the window it is transient for (a dialog's parent).
    pub parent: Option<String>,
    /// Whether KWin sent its initial state (before that it is half-known).
    pub complete: bool,
}

impl PlasmaWindow {
    pub fn active(&self) -> bool {
        self.state & State::Active as u32 != 0
    }

    pub fn minimized(&self) -> bool {
        self.state & State::Minimized as u32 != 0
    }

    /// Whether KWin has described it whole and placed it: a window announced before its
    /// first frame has no place yet (KWin places it then, and a frame set before that
    /// was undone: GTK 4's first window, 3 of 3).
    fn shown(&self) -> bool {
        self.complete && self.geometry.is_some()
    }
}

#[derive(Default)]
pub struct PlasmaWindows {
    pub manager: Option<OrgKdePlasmaWindowManagement>,
    /// In the order KWin announced them (oldest first).
    pub list: Vec<PlasmaWindow>,
    /// Uuids bottom to top, as KWin last said.
    pub stacking: Vec<String>,
}

impl PlasmaWindows {
    pub fn new(manager: Option<OrgKdePlasmaWindowManagement>) -> PlasmaWindows {
        PlasmaWindows {
            manager,
            ..PlasmaWindows::default()
        }
    }

    pub fn by_id(&self, id: u64) -> Option<&PlasmaWindow> {
        self.list.iter().find(|w| w.id == id && w.shown())
    }

    /// Shown windows, bottom to top (those KWin has not stacked yet last).
    pub fn stacked(&self) -> Vec<PlasmaWindow> {
        let rank = |w: &PlasmaWindow| {
            self.stacking
                .iter()
                .position(|u| *u == w.uuid)
                .unwrap_or(usize::MAX)
        };
        let mut out: Vec<PlasmaWindow> = self.list.iter().filter(|w| w.shown()).cloned().collect();
        out.sort_by_key(rank);
        out
    }

    fn get_mut(&mut self, uuid: &str) -> Option<&mut PlasmaWindow> {
        self.list.iter_mut().find(|w| w.uuid == uuid)
    }
}

/// A stable id from a uuid such as `{0f3a…}`: its first 40 bits.
fn id_of(uuid: &str) -> u64 {
    let hex: String = uuid
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(10)
        .collect();
    KWIN_WINDOW_IDS | u64::from_str_radix(&hex, 16).unwrap_or(0)
}

impl Dispatch<OrgKdePlasmaWindowManagement, ()> for Client {
    fn event(
        state: &mut Self,
        manager: &OrgKdePlasmaWindowManagement,
        event: manager::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        match event {
            manager::Event::WindowWithUuid { uuid, .. } => {
                if state.plasma.get_mut(&uuid).is_some() {
                    return;
                }
                let handle = manager.get_window_by_uuid(uuid.clone(), qh, uuid.clone());
                state.plasma.list.push(PlasmaWindow {
                    id: id_of(&uuid),
                    uuid,
                    handle,
                    title: String::new(),
                    app_id: String::new(),
                    pid: None,
                    geometry: None,
                    state: 0,
                    parent: None,
                    complete: false,
                });
            }
            manager::Event::StackingOrderUuidChanged { uuids } => {
                state.plasma.stacking = uuids
                    .split(';')
                    .filter(|u| !u.is_empty())
                    .map(String::from)
                    .collect();
            }
            _ => {}
        }
    }
}

impl Dispatch<OrgKdePlasmaWindow, String> for Client {
    fn event(
        state: &mut Self,
        handle: &OrgKdePlasmaWindow,
        event: window::Event,
        uuid: &String,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let window::Event::Unmapped = event {
            state.plasma.list.retain(|w| w.uuid != *uuid);
            handle.destroy();
            return;
        }
        let Some(w) = state.plasma.get_mut(uuid) else {
            return;
        };
        match event {
            window::Event::TitleChanged { title } => w.title = title,
            window::Event::AppIdChanged { app_id } => w.app_id = app_id,
            window::Event::StateChanged { flags } => w.state = flags,
            window::Event::PidChanged { pid } => w.pid = (pid > 0).then_some(pid),
            window::Event::Geometry {
                x,
                y,
                width,
                height,
            } => w.geometry = Some(Rect::new(x, y, width as i32, height as i32)),
            window::Event::ParentWindow { parent } => {
                w.parent = parent.and_then(|p| p.data::<String>().cloned());
            }
            window::Event::InitialState => w.complete = true,
            _ => {}
        }
    }
}
