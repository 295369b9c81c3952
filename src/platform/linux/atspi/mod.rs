//! AT-SPI side of the Linux backend: finds a pid's application on the accessibility bus,
//! reads what its `Cache` lists in one `GetItems` call, walks the window's tree from there
//! (reading the nodes the cache left out), and fills in frames, action names, text and
//! values with concurrent per-node calls. Apps that offer a peer-to-peer connection are
//! called over it, not through the bus daemon.
//!
//! Frames come back in window-local pixels. GTK3 and Chromium report screen coordinates;
//! GTK4 reports coordinates relative to its top-level frame (which sits inside the X
//! window behind a client-side-decoration border), so those are shifted by the frame's
//! origin in the window instead.
//!
//! This file holds the bus connection and the tree walk together because they share the
//! per-app state a walk learns (peer-to-peer connections, the toolkit, whether `GetAll`
//! is safe to call: Qt crashes on it at its root); the role vocabulary and name tidying the
//! walk applies sit with it. The walk of one window's tree, from the cache to the nodes'
//! details, is in `walk`; acting on one element by handle is in `element`.

mod element;
mod walk;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use atspi::{Interface, InterfaceSet, Role, State, StateSet};
use futures::future::join_all;
use serde::de::DeserializeOwned;
use zbus::Connection;

use crate::platform::{
    Absence, AxNode, AxTree, HIDDEN, LeftOut, MAX_TEXT_CHARS, PlatformError, PlatformResult, Rect,
    WindowInfo,
};

const REGISTRY: &str = "org.a11y.atspi.Registry";
const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
const COORD_SCREEN: u32 = 0;
const COORD_WINDOW: u32 = 1;
/// How long to wait for a freshly launched app to show up on the accessibility bus.
const REGISTRATION_WAIT: Duration = Duration::from_secs(3);
/// An app registers while it starts; one that has run this long without doing so has no
/// bridge (Tk, Xt, SDL), and is not waited for again on every read.
const REGISTERS_WITHIN: Duration = Duration::from_secs(15);
/// Deepest level of a window's tree that is read.
const MAX_DEPTH: usize = 64;
/// A read stops opening elements once it has opened this many (a runaway page): what it
/// did not open is said in the answer (`truncated`).
const MAX_NODES: usize = 200_000;
/// Tables with more cells than this (a spreadsheet) are read by their cells in view.
const MAX_CELLS_TO_LIST: i32 = 2000;
/// Tables that manage their descendants (tree views) create cells on demand and never
/// cache them; small ones are still read cell by cell. Also bounds the options and
/// selected children read of one element.
const MAX_MANAGED_CHILDREN: i32 = 200;
/// Cells read from a table too big to list (a spreadsheet): the ones in view, at most this
/// many, whole rows from the top.
const MAX_TABLE_CELLS: usize = 400;

/// Action names that make an element worth an index (GTK4 gives every label clipboard
/// actions, which do not make a label something to click).
const PRIMARY_ACTIONS: &[&str] = &[
    "click",
    "press",
    "activate",
    "toggle",
    "jump",
    "open",
    "select",
    "expand or contract",
    "expand",
    "collapse",
    "showmenu",
    "menu",
    "switch",
    "pick",
];

/// Roles whose Text interface holds user-visible content worth reporting as `value`.
const TEXT_VALUE_ROLES: &[Role] = &[
    Role::Text,
    Role::Entry,
    Role::PasswordText,
    Role::SpinButton,
    Role::Terminal,
    Role::DocumentText,
    Role::Paragraph,
    Role::Editbar,
];

/// Identity of one node on the bus.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct NodeRef {
    bus: String,
    path: String,
}

impl NodeRef {
    fn handle(&self) -> String {
        format!("{}|{}", self.bus, self.path)
    }
}

/// One node as read from the cache, before window scoping.
#[derive(Debug, Clone)]
struct RawNode {
    node: NodeRef,
    parent_path: Option<String>,
    index_in_parent: i32,
    child_count: i32,
    role: Role,
    name: String,
    states: StateSet,
    ifaces: InterfaceSet,
    /// Laid out but scrolled out of its view (GTK 3 and web engines clear `showing` for it):
    /// kept in the walk, as a reader who scrolls would find it ([`Atspi::mark_scrolled_out`]).
    scrolled_out: bool,
    /// Its frame, when this walk read it already (in the walk's coordinates; `Some(None)`:
    /// it has none): the scrolled-out check reads it, and it is not asked for again.
    frame_read: Option<Option<Rect>>,
    /// GTK 4 lays a hidden widget out with no area (an editor's closed info bar is 690×0,
    /// its labels 0×0) and marks it `visible`, never `showing` or not: such a node is not
    /// shown, nor anything under it ([`Atspi::mark_laid_out_empty`]).
    laid_out_empty: bool,
}

/// What the accessibility bus holds of an app the registry does not list.
enum Unlisted {
    /// Its root answers: its bus name.
    App(String),
    /// It holds a connection, and its root does not answer: nothing exported.
    Unexported,
    /// It holds no connection.
    Absent,
}

/// Action names that change with the element's state.
const STATEFUL_ACTIONS: &[&str] = &["check", "uncheck", "expand", "collapse"];

/// A node's action names as last read, and how long they hold.
type KnownActions = (Vec<String>, Holds);

/// How long remembered action names hold.
enum Holds {
    Always,
    /// While the node's [`action_state_key`] is what it was (these states).
    WhileActionStates(StateSet),
    /// While all of the node's states are what they were.
    WhileStates(StateSet),
}

/// The states a browser derives [`STATEFUL_ACTIONS`] from: `check` while unchecked,
/// `uncheck` while checked, `expand` or `collapse` by the expanded state.
fn action_state_key(states: StateSet) -> StateSet {
    let mut key = StateSet::empty();
    for s in [
        State::Checked,
        State::Indeterminate,
        State::Expanded,
        State::Collapsed,
        State::Pressed,
    ] {
        if states.contains(s) {
            key.insert(s);
        }
    }
    key
}

/// Roles a person operates, which every toolkit that exposes actions gives one.
const OPERABLE_ROLES: &[Role] = &[
    Role::Button,
    Role::ToggleButton,
    Role::CheckBox,
    Role::RadioButton,
    Role::Link,
    Role::MenuItem,
    Role::PageTab,
    Role::ComboBox,
];

pub struct Atspi {
    /// Role and interfaces per node: fixed for an object's lifetime.
    fixed: Mutex<HashMap<NodeRef, (Role, InterfaceSet)>>,
    /// Toolkit name and version per application bus name.
    toolkits: Mutex<HashMap<String, (String, String)>>,
    /// The accessibility bus.
    conn: Connection,
    /// Peer-to-peer connections to the apps that offer one (atk-bridge apps: GTK 3,
    /// Firefox, Chromium), by the app's bus name. Calls to such an app skip the bus
    /// daemon, which otherwise relays every request and reply.
    direct: Mutex<HashMap<String, Connection>>,
    /// The session bus, where `org.a11y.Status` lives.
    session: Connection,
    /// pid → application bus name, refreshed on a miss.
    apps: Mutex<HashMap<u32, String>>,
    /// Pids already waited for once without registering: asked again without a wait
    /// (every read of a Tk window would otherwise pay REGISTRATION_WAIT while it is young).
    waited_for: Mutex<HashSet<u32>>,
    /// Action names per node: stable for an object's lifetime, so read once, or, for names
    /// that follow the node's state ([`STATEFUL_ACTIONS`]), for as long as that state holds.
    actions: Mutex<HashMap<NodeRef, KnownActions>>,
    /// Change events per app, started on first use (None: it could not start).
    feed: tokio::sync::OnceCell<Option<std::sync::Arc<super::events::EventFeed>>>,
    /// Calls in flight at once ([`MAX_IN_FLIGHT`]).
    in_flight: tokio::sync::Semaphore,
}

/// Calls in flight at once. zbus hands every reply to every call still waiting, each of
/// which checks whether it is its own: the work grows with the square of the calls in
/// flight (a read of 10,000 buttons, all asked at once, kept cua's CPU busy for minutes
/// while the app idled). This many keep the app's queue full and that work small.
const MAX_IN_FLIGHT: usize = 64;

fn ax_err(context: &str, e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Accessibility(format!("at-spi: {context}: {e}"))
}

impl Atspi {
    /// Connects to the accessibility bus announced on the session bus at `session_address`.
    pub async fn connect(session_address: Option<&str>) -> PlatformResult<Atspi> {
        let Some(session_address) = session_address else {
            return Err(PlatformError::NoDesktop(
                "no desktop session bus: DBUS_SESSION_BUS_ADDRESS is not set; start one with `eval \"$(cua sandbox start)\"`"
                    .into(),
            ));
        };
        let session = zbus::connection::Builder::address(session_address)
            .map_err(|e| ax_err("bad session bus address", e))?
            .build()
            .await
            .map_err(|e| ax_err("cannot reach the session bus", e))?;
        let reply = session
            .call_method(
                Some("org.a11y.Bus"),
                "/org/a11y/bus",
                Some("org.a11y.Bus"),
                "GetAddress",
                &(),
            )
            .await
            .map_err(|e| {
                ax_err(
                    "no accessibility bus on the session bus (is at-spi-bus-launcher running?)",
                    e,
                )
            })?;
        let a11y_address: String = reply
            .body()
            .deserialize()
            .map_err(|e| ax_err("accessibility bus address", e))?;
        let conn = zbus::connection::Builder::address(a11y_address.as_str())
            .map_err(|e| ax_err("bad accessibility bus address", e))?
            .build()
            .await
            .map_err(|e| ax_err("cannot reach the accessibility bus", e))?;
        Ok(Atspi {
            fixed: Mutex::new(HashMap::new()),
            toolkits: Mutex::new(HashMap::new()),
            conn,
            direct: Mutex::new(HashMap::new()),
            session,
            apps: Mutex::new(HashMap::new()),
            waited_for: Mutex::new(HashSet::new()),
            actions: Mutex::new(HashMap::new()),
            feed: tokio::sync::OnceCell::new(),
            in_flight: tokio::sync::Semaphore::new(MAX_IN_FLIGHT),
        })
    }

    /// The change events `pid`'s app has sent since the feed started.
    pub async fn app_activity(&self, pid: u32) -> Option<crate::platform::AppActivity> {
        let feed = self
            .feed
            .get_or_init(|| async { super::events::EventFeed::start(&self.conn).await.ok() })
            .await
            .clone()?;
        let bus = self.app_bus_for_pid(pid).await.ok()??;
        Some(feed.activity(&bus))
    }

    async fn call<B, R>(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
        method: &str,
        body: &B,
    ) -> zbus::Result<R>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
        R: DeserializeOwned + zbus::zvariant::Type,
    {
        // Never closed, so acquiring cannot fail.
        let _slot = self.in_flight.acquire().await;
        let direct = self.direct.lock().unwrap().get(dest).cloned();
        if let Some(direct) = direct {
            match direct
                .call_method(None::<&str>, path, Some(iface), method, body)
                .await
            {
                Ok(msg) => return msg.body().deserialize::<R>(),
                // An answer from the app stands; a broken connection falls back to the bus.
                Err(e @ (zbus::Error::MethodError(..) | zbus::Error::FDO(_))) => return Err(e),
                Err(_) => {
                    self.direct.lock().unwrap().remove(dest);
                }
            }
        }
        let msg = self
            .conn
            .call_method(Some(dest), path, Some(iface), method, body)
            .await?;
        msg.body().deserialize::<R>()
    }

    /// Opens the peer-to-peer connection an app announced, if it answers within a second.
    async fn connect_direct(&self, bus: &str, address: &str) {
        let connect = async {
            zbus::connection::Builder::address(address)?
                .p2p()
                .build()
                .await
        };
        if let Ok(Ok(conn)) = tokio::time::timeout(Duration::from_secs(1), connect).await {
            self.direct.lock().unwrap().insert(bus.to_string(), conn);
        }
    }

    async fn property<R>(&self, dest: &str, path: &str, iface: &str, name: &str) -> zbus::Result<R>
    where
        R: TryFrom<zbus::zvariant::OwnedValue>,
        <R as TryFrom<zbus::zvariant::OwnedValue>>::Error: Into<zbus::Error>,
    {
        let value: zbus::zvariant::OwnedValue = self
            .call(
                dest,
                path,
                "org.freedesktop.DBus.Properties",
                "Get",
                &(iface, name),
            )
            .await?;
        R::try_from(value).map_err(Into::into)
    }

    /// Applications registered on the bus, as (bus name, pid).
    pub async fn applications(&self) -> PlatformResult<Vec<(String, u32)>> {
        let children: Vec<(String, zbus::zvariant::OwnedObjectPath)> = self
            .call(
                REGISTRY,
                ROOT_PATH,
                "org.a11y.atspi.Accessible",
                "GetChildren",
                &(),
            )
            .await
            .map_err(|e| ax_err("list applications", e))?;
        let dbus = zbus::fdo::DBusProxy::new(&self.conn)
            .await
            .map_err(|e| ax_err("dbus proxy", e))?;
        let pids = join_all(children.iter().map(|(bus, _)| {
            let dbus = &dbus;
            async move {
                let name = zbus::names::BusName::try_from(bus.as_str()).ok()?;
                dbus.get_connection_unix_process_id(name).await.ok()
            }
        }))
        .await;
        Ok(children
            .into_iter()
            .zip(pids)
            .filter_map(|((bus, _), pid)| pid.map(|p| (bus, p)))
            .collect())
    }

    /// The names of an application's top-level windows (frames, dialogs), by its bus name.
    pub async fn toplevel_names(&self, bus: &str) -> Vec<String> {
        let children: Vec<(String, zbus::zvariant::OwnedObjectPath)> = self
            .call(
                bus,
                ROOT_PATH,
                "org.a11y.atspi.Accessible",
                "GetChildren",
                &(),
            )
            .await
            .unwrap_or_default();
        join_all(children.iter().map(|(owner, path)| async move {
            self.property::<String>(owner, path.as_str(), "org.a11y.atspi.Accessible", "Name")
                .await
                .ok()
        }))
        .await
        .into_iter()
        .flatten()
        .collect()
    }

    /// Whether accessibility is switched on for the session (`org.a11y.Status`).
    pub async fn accessibility_enabled(&self) -> PlatformResult<bool> {
        let reply = self
            .session
            .call_method(
                Some("org.a11y.Bus"),
                "/org/a11y/bus",
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &("org.a11y.Status", "IsEnabled"),
            )
            .await
            .map_err(|e| ax_err("read org.a11y.Status", e))?;
        let value: zbus::zvariant::OwnedValue = reply
            .body()
            .deserialize()
            .map_err(|e| ax_err("read org.a11y.Status", e))?;
        bool::try_from(value).map_err(|e| ax_err("read org.a11y.Status", e))
    }

    pub(crate) async fn app_bus_for_pid(&self, pid: u32) -> PlatformResult<Option<String>> {
        Ok(self.app_bus_or_absence(pid).await?.ok())
    }

    /// `pid`'s bus name on the accessibility bus, or why it has none: it holds no
    /// connection there, or it is connected and exports nothing (GTK 4 registers its root
    /// from an idle callback, which a busy renderer can starve). A young app is waited for.
    pub(crate) async fn app_bus_or_absence(
        &self,
        pid: u32,
    ) -> PlatformResult<Result<String, Absence>> {
        if let Some(bus) = self.apps.lock().unwrap().get(&pid).cloned() {
            return Ok(Ok(bus));
        }
        let deadline = Instant::now() + REGISTRATION_WAIT;
        loop {
            let apps = self.applications().await?;
            let found = {
                let mut map = self.apps.lock().unwrap();
                map.clear();
                map.extend(apps.into_iter().map(|(bus, p)| (p, bus)));
                map.get(&pid).cloned()
            };
            if let Some(bus) = found {
                return Ok(Ok(bus));
            }
            let connected = match self.unregistered_app(pid).await {
                Unlisted::App(bus) => {
                    self.apps.lock().unwrap().insert(pid, bus.clone());
                    return Ok(Ok(bus));
                }
                Unlisted::Unexported => true,
                Unlisted::Absent => false,
            };
            let settled = super::process::process_age(pid).is_none_or(|a| a > REGISTERS_WITHIN)
                || self.waited_for.lock().unwrap().contains(&pid);
            if Instant::now() >= deadline || settled || !process_alive(pid) {
                self.waited_for.lock().unwrap().insert(pid);
                let after = super::process::process_age(pid).unwrap_or(REGISTRATION_WAIT);
                return Ok(Err(match connected {
                    false => Absence::NoBridge,
                    true => Absence::NothingExported {
                        after_ms: after.as_millis() as u64,
                    },
                }));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `pid`'s app when it is on the accessibility bus but not in the registry's list:
    /// GTK 4 registers once, as it starts, so a registry that restarted (or missed the
    /// call) never lists it, while its tree is there all the same. Its root must answer as
    /// an accessible; a connection whose root does not is an app that exports nothing.
    async fn unregistered_app(&self, pid: u32) -> Unlisted {
        let held = self.connections_of(pid).await;
        for name in &held {
            let role: zbus::Result<u32> = self
                .call(name, ROOT_PATH, "org.a11y.atspi.Accessible", "GetRole", &())
                .await;
            if role.is_ok() {
                return Unlisted::App(name.clone());
            }
        }
        match held.is_empty() {
            true => Unlisted::Absent,
            false => Unlisted::Unexported,
        }
    }

    /// The unique names `pid` holds on the accessibility bus.
    async fn connections_of(&self, pid: u32) -> Vec<String> {
        let Ok(dbus) = zbus::fdo::DBusProxy::new(&self.conn).await else {
            return Vec::new();
        };
        let Ok(names) = dbus.list_names().await else {
            return Vec::new();
        };
        let mut held = Vec::new();
        for name in names.iter().filter(|n| n.starts_with(':')) {
            if dbus
                .get_connection_unix_process_id(name.as_ref())
                .await
                .ok()
                == Some(pid)
            {
                held.push(name.to_string());
            }
        }
        held
    }

    async fn cached_items(&self, bus: &str) -> PlatformResult<Vec<RawNode>> {
        let items: Vec<atspi::CacheItem> = self
            .call(
                bus,
                "/org/a11y/atspi/cache",
                "org.a11y.atspi.Cache",
                "GetItems",
                &(),
            )
            .await
            .map_err(|e| ax_err("read the application's cache", e))?;
        Ok(items
            .into_iter()
            .map(|it| RawNode {
                node: NodeRef {
                    bus: it
                        .object
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_else(|| bus.to_string()),
                    path: it.object.path().to_string(),
                },
                parent_path: Some(it.parent.path().to_string())
                    .filter(|p| p != "/org/a11y/atspi/null"),
                index_in_parent: it.index,
                child_count: it.children,
                role: it.role,
                // atspi calls the accessible name `short_name`; its `name` is the description.
                name: it.short_name,
                states: it.states,
                ifaces: it.ifaces,
                scrolled_out: false,
                frame_read: None,
                laid_out_empty: false,
            })
            .collect())
    }

    /// Children of `path`, from the cache when it lists all of them, else read from the
    /// app (`GetChildren` also makes GTK4 export them into its cache for next time).
    /// The cells of a table that are in view, read through the Table interface: the cells
    /// at the table's top-left and bottom-right corners give the row and column ranges,
    /// and each cell is read by position, row by row, at most [`MAX_TABLE_CELLS`]. Same
    /// shape as [`Self::children_of`]; None for a table without those interfaces.
    async fn visible_cells(
        &self,
        bus: &str,
        table: &RawNode,
        coord: u32,
    ) -> Option<(String, Vec<String>, Vec<RawNode>)> {
        const TABLE: &str = "org.a11y.atspi.Table";
        const COMPONENT: &str = "org.a11y.atspi.Component";
        if !table.ifaces.contains(Interface::Table) || !table.ifaces.contains(Interface::Component)
        {
            return None;
        }
        let path = table.node.path.as_str();
        let r = self.extents(&table.node, coord).await?;
        let row_col = |(x, y): (i32, i32)| async move {
            let (_, cell): (String, zbus::zvariant::OwnedObjectPath) = self
                .call(bus, path, COMPONENT, "GetAccessibleAtPoint", &(x, y, coord))
                .await
                .ok()?;
            let index: i32 = self
                .call(
                    bus,
                    cell.as_str(),
                    "org.a11y.atspi.Accessible",
                    "GetIndexInParent",
                    &(),
                )
                .await
                .ok()?;
            let at = (index,);
            let (row, col) = futures::join!(
                self.call::<_, i32>(bus, path, TABLE, "GetRowAtIndex", &at),
                self.call::<_, i32>(bus, path, TABLE, "GetColumnAtIndex", &at),
            );
            Some((row.ok()?, col.ok()?))
        };
        let (first, last) = futures::join!(
            row_col((r.x.saturating_add(1), r.y.saturating_add(1))),
            row_col((
                r.x.saturating_add(r.width).saturating_sub(2),
                r.y.saturating_add(r.height).saturating_sub(2),
            )),
        );
        let (r0, c0) = first?;
        // A table smaller than its view has no cell in the far corner: the first row and
        // column then bound it.
        let (r1, c1) = last.unwrap_or((r0, c0));
        if r0 < 0 || c0 < 0 || r1 < r0 || c1 < c0 {
            return None;
        }
        let cols = (c1 - c0 + 1) as usize;
        let rows = ((r1 - r0 + 1) as usize).min((MAX_TABLE_CELLS / cols).max(1));
        let positions: Vec<(i32, i32)> = (0..rows as i32)
            .flat_map(|dr| (c0..=c1).map(move |c| (r0 + dr, c)))
            .take(MAX_TABLE_CELLS)
            .collect();
        let cells: Vec<Option<(String, zbus::zvariant::OwnedObjectPath)>> =
            join_all(positions.iter().map(|&(row, col)| async move {
                self.call(bus, path, TABLE, "GetAccessibleAt", &(row, col))
                    .await
                    .ok()
            }))
            .await;
        let paths: Vec<String> = cells
            .into_iter()
            .flatten()
            .map(|(_, p)| p.to_string())
            .collect();
        let nodes = join_all(
            paths
                .iter()
                .enumerate()
                .map(|(i, p)| self.read_node(bus, p, Some(path.to_string()), i as i32, None)),
        )
        .await
        .into_iter()
        .flatten()
        .collect();
        Some((path.to_string(), paths, nodes))
    }

    async fn children_of(
        &self,
        bus: &str,
        node: &RawNode,
        known: &Known,
        hidden_light: Option<bool>,
    ) -> Option<(String, Vec<String>, Vec<RawNode>)> {
        let cached = known
            .children
            .get(&node.node.path)
            .map(Vec::len)
            .unwrap_or(0);
        if node.child_count <= 0 || cached as i32 == node.child_count {
            return None;
        }
        let kids: Vec<(String, zbus::zvariant::OwnedObjectPath)> = self
            .call(
                bus,
                &node.node.path,
                "org.a11y.atspi.Accessible",
                "GetChildren",
                &(),
            )
            .await
            .unwrap_or_default();
        let paths: Vec<String> = kids.into_iter().map(|(_, p)| p.to_string()).collect();
        let parent = Some(node.node.path.clone());
        let mut fresh = Vec::new();
        let mut unlisted = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            if known.nodes.contains_key(p.as_str()) {
                continue;
            }
            match known.listed.get(p.as_str()) {
                Some(n) => fresh.push(RawNode {
                    parent_path: parent.clone(),
                    index_in_parent: i as i32,
                    ..n.clone()
                }),
                None => unlisted.push((i, p)),
            }
        }
        let read = join_all(
            unlisted
                .into_iter()
                .map(|(i, p)| self.read_node(bus, p, parent.clone(), i as i32, hidden_light)),
        )
        .await;
        fresh.extend(read.into_iter().flatten());
        Some((node.node.path.clone(), paths, fresh))
    }

    /// One node read call by call, for nodes the toolkit's cache does not list. Role and
    /// interfaces never change for an object, so they are read once per object.
    ///
    /// With `hidden_light: Some(uses_showing)`, a node that does not show (see [`shows`])
    /// is read without its name and child count, which a walk never uses, where those
    /// would cost two calls of their own (Qt, whose hidden menus and pages are many).
    async fn read_node(
        &self,
        bus: &str,
        path: &str,
        parent: Option<String>,
        index: i32,
        hidden_light: Option<bool>,
    ) -> Option<RawNode> {
        const ACC: &str = "org.a11y.atspi.Accessible";
        let node = NodeRef {
            bus: bus.to_string(),
            path: path.to_string(),
        };
        let fixed = self.fixed.lock().unwrap().get(&node).copied();
        let fixed_read = async {
            match fixed {
                Some(f) => Some(f),
                None => {
                    let (role, ifaces) = futures::join!(
                        self.call::<_, u32>(bus, path, ACC, "GetRole", &()),
                        self.call::<_, InterfaceSet>(bus, path, ACC, "GetInterfaces", &()),
                    );
                    let f = (
                        Role::try_from(role.ok()?).unwrap_or(Role::Invalid),
                        ifaces.unwrap_or_default(),
                    );
                    // Firefox fills in an object's interfaces lazily (its first answer
                    // for a fresh page's button may lack Action): an operable role seen
                    // without actions is asked again next time rather than remembered.
                    if !OPERABLE_ROLES.contains(&f.0) || f.1.contains(Interface::Action) {
                        self.fixed.lock().unwrap().insert(node.clone(), f);
                    }
                    Some(f)
                }
            }
        };
        let state_read = self.call::<_, StateSet>(bus, path, ACC, "GetState", &());
        let (fixed, (name, child_count), states) = match hidden_light
            .filter(|_| !self.takes_get_all(bus))
        {
            Some(uses_showing) => {
                let (fixed, states) = futures::join!(fixed_read, state_read);
                let shown = states.as_ref().is_ok_and(|s| shows(*s, uses_showing));
                let name_count = if shown {
                    self.name_and_child_count(bus, path).await
                } else {
                    (None, None)
                };
                (fixed, name_count, states)
            }
            None => futures::join!(fixed_read, self.name_and_child_count(bus, path), state_read),
        };
        let (role, ifaces) = fixed?;
        let name = name.unwrap_or_default();
        let child_count = child_count.unwrap_or(0);
        Some(RawNode {
            node,
            parent_path: parent,
            index_in_parent: index,
            child_count,
            role,
            name,
            states: states.ok()?,
            ifaces,
            scrolled_out: false,
            frame_read: None,
            laid_out_empty: false,
        })
    }

    /// A node's name and child count. One `Properties.GetAll` where the toolkit is known to
    /// take it (atk-bridge: GTK 3, Firefox, Chromium), which halves the calls a node costs;
    /// else two joined Gets: Qt 5 and Qt 6 crash on GetAll of the Accessible interface of
    /// their application root (seen with Debian's 5.15 and 6.4), and toolkits cua has not
    /// met are not asked either.
    async fn name_and_child_count(&self, bus: &str, path: &str) -> (Option<String>, Option<i32>) {
        const ACC: &str = "org.a11y.atspi.Accessible";
        if self.takes_get_all(bus) {
            let all: zbus::Result<HashMap<String, zbus::zvariant::OwnedValue>> = self
                .call(
                    bus,
                    path,
                    "org.freedesktop.DBus.Properties",
                    "GetAll",
                    &(ACC,),
                )
                .await;
            if let Ok(mut all) = all {
                let name = all.remove("Name").and_then(|v| String::try_from(v).ok());
                let count = all.remove("ChildCount").and_then(|v| i32::try_from(v).ok());
                return (name, count);
            }
        }
        let (name, count) = futures::join!(
            self.property::<String>(bus, path, ACC, "Name"),
            self.property::<i32>(bus, path, ACC, "ChildCount"),
        );
        (name.ok(), count.ok())
    }

    /// Whether the app on `bus` is known to take `Properties.GetAll` of a node's
    /// Accessible interface (atk-bridge: GTK 3, Firefox, Chromium).
    fn takes_get_all(&self, bus: &str) -> bool {
        self.with_toolkit(bus, |t| {
            t.is_some_and(|(name, version)| {
                is_web_engine(name) || (name == "gtk" && version.starts_with('3'))
            })
        })
    }

    /// `f` of the toolkit name and version first contact read for `bus` (None before it).
    fn with_toolkit<T>(&self, bus: &str, f: impl FnOnce(Option<&(String, String)>) -> T) -> T {
        f(self.toolkits.lock().unwrap().get(bus))
    }

    /// The app's toolkit name and version, read at first contact with its bus name.
    ///
    /// First contact also asks for the app's own bus address and connects to it, as
    /// libatspi clients do. An atk-bridge app (GTK 3, Firefox, Chromium) creates its
    /// `Cache` object only then, or once someone listens to events: before that
    /// `GetItems` does not exist. Qt answers with an error, which is harmless.
    async fn toolkit(&self, bus: &str) -> (String, String) {
        const APP: &str = "org.a11y.atspi.Application";
        if let Some(t) = self.toolkits.lock().unwrap().get(bus) {
            return t.clone();
        }
        let (name, version, address) = futures::join!(
            self.property::<String>(bus, ROOT_PATH, APP, "ToolkitName"),
            self.property::<String>(bus, ROOT_PATH, APP, "Version"),
            self.call::<_, String>(bus, ROOT_PATH, APP, "GetApplicationBusAddress", &()),
        );
        let (name, version) = (name.unwrap_or_default(), version.unwrap_or_default());
        if let Some(address) = address.ok().filter(|a| !a.is_empty()) {
            self.connect_direct(bus, &address).await;
        }
        self.toolkits
            .lock()
            .unwrap()
            .insert(bus.to_string(), (name.clone(), version.clone()));
        (name, version)
    }

    async fn extents(&self, n: &NodeRef, coord: u32) -> Option<Rect> {
        frame_of(self.raw_extents(n, coord).await?)
    }

    /// The extents as the toolkit gives them, its "no place" included.
    async fn raw_extents(&self, n: &NodeRef, coord: u32) -> Option<Rect> {
        let (x, y, width, height): (i32, i32, i32, i32) = self
            .call(
                &n.bus,
                &n.path,
                "org.a11y.atspi.Component",
                "GetExtents",
                &(coord,),
            )
            .await
            .ok()?;
        Some(Rect {
            x,
            y,
            width,
            height,
        })
    }

    /// GTK 4: reads the frame of each child of `parents` and marks those laid out with no
    /// area as not shown (GTK 4 tells hidden widgets by nothing else). The frame read is
    /// kept for the node's details, so a shown node costs no second read.
    async fn mark_laid_out_empty(&self, known: &mut Known, parents: &[RawNode], coord: u32) {
        let children: Vec<NodeRef> = known
            .children_of_all(parents)
            .iter()
            .filter_map(|k| known.nodes.get(k))
            .filter(|n| n.ifaces.contains(Interface::Component))
            .map(|n| n.node.clone())
            .collect();
        self.read_frames(known, &children, coord, |raw, size| {
            raw.laid_out_empty = size.width <= 0 || size.height <= 0;
        })
        .await;
    }

    /// Marks the children of `parents` that GTK 3 or a web engine laid out but scrolled out
    /// of sight: visible, not `showing`, with a real size (a closed menu's items are 1×1),
    /// and not the page of a notebook tab that is not selected (a hidden page has a real
    /// size too). The extents read are kept as the node's frame.
    async fn mark_scrolled_out(&self, known: &mut Known, parents: &[RawNode], coord: u32) {
        let candidates: Vec<NodeRef> = parents
            .iter()
            // A closed menu's items are not read at all (their size would say 1×1).
            .filter(|p| p.role != Role::Menu)
            .filter(|p| p.role != Role::PageTab || p.states.contains(State::Selected))
            .flat_map(|p| {
                known
                    .children
                    .get(&p.node.path)
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|k| known.nodes.get(&k))
            .filter(|n| {
                n.states.contains(State::Visible)
                    && !n.states.contains(State::Showing)
                    && !n.states.contains(State::Defunct)
            })
            .map(|n| n.node.clone())
            .collect();
        self.read_frames(known, &candidates, coord, |raw, size| {
            raw.scrolled_out = size.width > 1 && size.height > 1;
        })
        .await;
    }

    /// Reads the extents of `nodes` at once, keeps each as the node's frame (so its
    /// details do not ask again), and lets `mark` judge the node by its size.
    async fn read_frames(
        &self,
        known: &mut Known,
        nodes: &[NodeRef],
        coord: u32,
        mark: impl Fn(&mut RawNode, Rect),
    ) {
        let sizes = join_all(nodes.iter().map(|n| self.raw_extents(n, coord))).await;
        for (n, size) in nodes.iter().zip(sizes) {
            if let (Some(size), Some(raw)) = (size, known.nodes.get_mut(&n.path)) {
                mark(raw, size);
                raw.frame_read = Some(frame_of(size));
            }
        }
    }

    /// The node's name as a person reads it ([`tidy_name`]); a widget class name gives
    /// way to the element's description (GTK 4 puts the tooltip there), or to no name.
    async fn readable_name(&self, node: &NodeRef, raw: &str) -> String {
        let gtk4 = self.with_toolkit(&node.bus, |t| {
            t.is_some_and(|(name, version)| {
                name.eq_ignore_ascii_case("gtk") && version.starts_with('4')
            })
        });
        let name = tidy_name(raw, gtk4);
        if !crate::names::is_widget_class_name(name) {
            return name.to_string();
        }
        self.property::<String>(
            &node.bus,
            &node.path,
            "org.a11y.atspi.Accessible",
            "Description",
        )
        .await
        .map(|d| tidy_name(&d, gtk4).to_string())
        .unwrap_or_default()
    }

    /// Action names for display, read once per node (they are the toolkit's fixed set on
    /// GTK 3, Qt and Chromium). `states` is the node's state now: names that browsers
    /// derive from it (`check` / `uncheck`) are remembered while it holds, and so is an
    /// empty list (GTK 4 lists enabled widget actions only, which change with the
    /// widget's state), except in a web engine: Firefox answers a fresh page's controls
    /// with no actions until it has filled them in, with no state change.
    async fn action_names(&self, n: &NodeRef, states: StateSet) -> Vec<String> {
        if let Some((names, holds)) = self.actions.lock().unwrap().get(n) {
            let still = match holds {
                Holds::Always => true,
                Holds::WhileActionStates(was) => action_state_key(*was) == action_state_key(states),
                Holds::WhileStates(was) => *was == states,
            };
            if still {
                return names.clone();
            }
        }
        let names: Vec<String> = self
            .live_action_names(n)
            .await
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
        let stateful = names
            .iter()
            .any(|a| STATEFUL_ACTIONS.iter().any(|s| a.eq_ignore_ascii_case(s)));
        let holds = if stateful {
            Some(Holds::WhileActionStates(states))
        } else if !names.is_empty() {
            Some(Holds::Always)
        } else if self.with_toolkit(&n.bus, |t| t.is_none_or(|(name, _)| is_web_engine(name))) {
            // (A toolkit not known yet counts as one.)
            None
        } else {
            Some(Holds::WhileStates(states))
        };
        if let Some(holds) = holds {
            self.actions
                .lock()
                .unwrap()
                .insert(n.clone(), (names.clone(), holds));
        }
        names
    }

    /// The node's action names now, by position (DoAction takes the position). GTK 4 lists
    /// only enabled widget actions, so its list changes: `text.undo` appears once there
    /// is something to undo and shifts the others.
    async fn live_action_names(&self, n: &NodeRef) -> Vec<String> {
        // GetActions gives localized names (GTK3 even puts descriptions there); GetName
        // gives the stable ones, `click`, `toggle`, `activate`.
        let count: i32 = self
            .property(&n.bus, &n.path, "org.a11y.atspi.Action", "NActions")
            .await
            .unwrap_or(0);
        join_all((0..count.min(32)).map(|i| async move {
            self.call::<_, String>(&n.bus, &n.path, "org.a11y.atspi.Action", "GetName", &(i,))
                .await
                .unwrap_or_default()
        }))
        .await
    }

    async fn text(&self, n: &NodeRef) -> Option<String> {
        let text: String = self
            .call(
                &n.bus,
                &n.path,
                "org.a11y.atspi.Text",
                "GetText",
                &(0i32, -1i32),
            )
            .await
            .ok()?;
        // One character more than is kept: elements[] then says the value was cut.
        Some(text.chars().take(MAX_TEXT_CHARS + 1).collect())
    }

    async fn numeric_value(&self, n: &NodeRef) -> Option<String> {
        let v: f64 = self
            .property(&n.bus, &n.path, "org.a11y.atspi.Value", "CurrentValue")
            .await
            .ok()?;
        Some(format_number(v))
    }

    /// Picks the accessible top-level that is this X window: by title, then by geometry.
    async fn match_toplevel(
        &self,
        toplevels: &[RawNode],
        window: &WindowInfo,
        window_relative: bool,
    ) -> Option<(String, Rect)> {
        let coord = if window_relative {
            COORD_WINDOW
        } else {
            COORD_SCREEN
        };
        let candidates: Vec<&RawNode> = toplevels
            .iter()
            .filter(|n| !n.states.contains(State::Defunct))
            .collect();
        let titled: Vec<&RawNode> = candidates
            .iter()
            .copied()
            .filter(|n| n.name == window.title)
            .collect();
        let pool = if titled.is_empty() {
            candidates
        } else {
            titled
        };
        let rects = join_all(pool.iter().map(|n| self.extents(&n.node, coord))).await;
        let b = window.bounds;
        pool.into_iter()
            .zip(rects)
            .filter_map(|(n, r)| r.map(|r| (n.node.path.clone(), r)))
            .min_by_key(|(_, r)| {
                let size = (r.width - b.width).abs() + (r.height - b.height).abs();
                if window_relative {
                    size
                } else {
                    size + (r.x - b.x).abs() + (r.y - b.y).abs()
                }
            })
    }
}

/// Where a toolkit's element extents start, for making them window-local.
#[derive(Debug, Clone, Copy)]
pub enum FrameOrigin {
    /// On the screen (X11), but for GTK 4, which reports them relative to its top-level
    /// frame: that frame starts at `toolkit_frame` inside the window when the display says
    /// so (`_GTK_FRAME_EXTENTS`), else it is taken to be centred in it.
    Screen { toolkit_frame: Option<(i32, i32)> },
    /// Relative to the window, every toolkit alike (Wayland, where no window knows its
    /// place on the screen). GTK 3 and Qt count from their surface, which holds
    /// client-side shadows outside the window's frame: `surface` is where it starts in
    /// the window when the compositor says (GNOME's buffer rectangle), else the toolkit's
    /// top-level is taken to be centred in the window. GTK 4 counts from its frame.
    WindowRelative { surface: Option<(i32, i32)> },
}

/// The options of a combo box or list: the element, the popup holding them (GTK 3 and
/// Qt put them in a menu or list child), and the options themselves.
struct Options {
    owner: NodeRef,
    popup: Option<NodeRef>,
    items: Vec<RawNode>,
}

/// What is known of an app's nodes during one walk: by path, and children in order.
#[derive(Default)]
struct Known {
    nodes: HashMap<String, RawNode>,
    children: HashMap<String, Vec<String>>,
    /// Nodes an atk-bridge cache listed (GTK 3, Firefox, Chromium): their name, states,
    /// role, interfaces and child count are read live when the cache answers, but the set
    /// is only the objects the app has handed out so far and their `index_in_parent` may
    /// disagree with `GetChildren`, so they stand in for a node's own reads, never for
    /// its parent's child list.
    listed: HashMap<String, RawNode>,
}

impl Known {
    /// The shown nodes under `top` in depth-first order, each with its parent's position.
    /// Each node is placed once, under the first parent met, and never below MAX_DEPTH:
    /// an app whose tree has a cycle gets a tree, not a hang.
    fn depth_first(
        &self,
        top: &str,
        shown: impl Fn(&RawNode) -> bool,
    ) -> Vec<(&RawNode, Option<usize>)> {
        let mut order: Vec<(&RawNode, Option<usize>)> = Vec::new();
        let mut placed: HashSet<&str> = HashSet::new();
        let mut stack: Vec<(&str, Option<usize>, usize)> = vec![(top, None, 0)];
        while let Some((path, parent, depth)) = stack.pop() {
            let Some(n) = self.nodes.get(path) else {
                continue;
            };
            if !shown(n) || depth > MAX_DEPTH || !placed.insert(path) {
                continue;
            }
            let me = order.len();
            order.push((n, parent));
            if let Some(kids) = self.children.get(path) {
                for k in kids.iter().rev() {
                    stack.push((k.as_str(), Some(me), depth + 1));
                }
            }
        }
        order
    }

    /// The root from a cache that is not trusted for the tree's shape, and the rest kept
    /// as [`Known::listed`]. A child count of -1 (a menu, a container that manages its
    /// descendants) says the count was not given: such nodes are read one by one.
    fn listing(items: Vec<RawNode>) -> Known {
        let mut known = Known::default();
        for n in items {
            if n.node.path == ROOT_PATH {
                known.nodes.insert(n.node.path.clone(), n);
            } else if n.child_count >= 0 {
                known.listed.insert(n.node.path.clone(), n);
            }
        }
        known
    }

    fn from_items(items: Vec<RawNode>) -> Known {
        let mut known = Known::default();
        let mut kids: HashMap<String, Vec<(i32, String)>> = HashMap::new();
        for n in &items {
            if let Some(p) = &n.parent_path {
                if *p != n.node.path {
                    kids.entry(p.clone())
                        .or_default()
                        .push((n.index_in_parent, n.node.path.clone()));
                }
            }
        }
        for (parent, mut list) in kids {
            list.sort();
            known
                .children
                .insert(parent, list.into_iter().map(|(_, p)| p).collect());
        }
        known.nodes = items
            .into_iter()
            .map(|n| (n.node.path.clone(), n))
            .collect();
        known
    }

    /// The children of all of `parents`, in order.
    fn children_of_all(&self, parents: &[RawNode]) -> Vec<String> {
        parents
            .iter()
            .flat_map(|n| self.children.get(&n.node.path).cloned().unwrap_or_default())
            .collect()
    }

    /// Takes in what a later `GetItems` lists (GTK 4 exports children into its cache once
    /// asked for them): nodes and children lists not known yet.
    fn absorb(&mut self, items: Vec<RawNode>) {
        let fresh = Known::from_items(items);
        for (parent, kids) in fresh.children {
            self.children.entry(parent).or_insert(kids);
        }
        for (path, n) in fresh.nodes {
            self.nodes.entry(path).or_insert(n);
        }
    }

    fn merge(&mut self, (parent, children, fresh): (String, Vec<String>, Vec<RawNode>)) {
        for n in fresh {
            self.nodes.insert(n.node.path.clone(), n);
        }
        self.children.insert(parent, children);
    }
}

/// Whether a toolkit name is a web engine's ([`super::quirks::WEB_ENGINES`]).
fn is_web_engine(toolkit: &str) -> bool {
    super::quirks::WEB_ENGINES.contains(&toolkit)
}

/// Whether a node with these states shows in a walk: visible, not defunct, and `showing`
/// where the toolkit sets it (GTK 4 does not set it on children).
fn shows(states: StateSet, uses_showing: bool) -> bool {
    states.contains(State::Visible)
        && !states.contains(State::Defunct)
        && (!uses_showing || states.contains(State::Showing))
}

/// Extents as a frame: hidden GTK3 widgets report i32::MIN, which is no frame.
fn frame_of(extents: Rect) -> Option<Rect> {
    (extents.x != i32::MIN && extents.y != i32::MIN).then_some(extents)
}

/// Whether a node is read by its cells in view ([`Atspi::visible_cells`]) rather than
/// child by child: a table with more cells than can be listed. Any other container is read
/// whole, however many children it has (a grid of 10,000 buttons).
fn read_by_cells(n: &RawNode) -> bool {
    let most = match n.states.contains(State::ManagesDescendants) {
        true => MAX_MANAGED_CHILDREN,
        false => MAX_CELLS_TO_LIST,
    };
    n.ifaces.contains(Interface::Table) && n.child_count > most
}

/// A node as its tree line names it, for what a bound left out: `table "Sheet1"`.
fn element_line(n: &RawNode) -> String {
    match n.name.is_empty() {
        true => role_name(n.role),
        false => format!("{} {:?}", role_name(n.role), n.name),
    }
}

/// A name as a person reads it, from the name the toolkit gave ([`crate::names`]):
/// trimmed; GTK 4's doubled label said once. A class name is left to the caller, who has
/// the description to put in its place.
fn tidy_name(raw: &str, gtk4: bool) -> &str {
    if gtk4 {
        crate::names::undoubled(raw)
    } else {
        raw.trim()
    }
}

/// AT-SPI role name in snake_case (`push button` → `push_button`).
pub fn role_name(role: Role) -> String {
    role.name().replace(' ', "_")
}

/// Every AT-SPI role's name, as [`role_name`] writes it, in AT-SPI's order.
pub fn role_vocabulary() -> Vec<String> {
    (1u32..)
        .map_while(|i| Role::try_from(i).ok())
        .map(role_name)
        .collect()
}

/// Roles that are acted on even without an Action interface (tabs, list rows, menu items
/// are selected through their parent).
const ROLE_ACTIONABLE: &[Role] = &[
    // Operable whether or not the toolkit exports an action (GTK 4.8 check boxes do not;
    // click then takes the pointer route).
    Role::CheckBox,
    Role::RadioButton,
    Role::ToggleButton,
    Role::Slider,
    Role::SpinButton,
    Role::ScrollBar,
    Role::ComboBox,
    Role::PageTab,
    Role::ListItem,
    Role::MenuItem,
    Role::CheckMenuItem,
    Role::RadioMenuItem,
    Role::TableCell,
    Role::TreeItem,
    Role::Link,
];

/// Whether an element deserves an index: something an agent can act on.
/// The state a node scrolled out of its view carries (no AT-SPI state says it): it acts
/// through the accessibility API, and has no frame to point at until scrolled into view.
pub const OFFSCREEN: &str = "offscreen";

fn is_actionable(node: &AxNode, role: Role) -> bool {
    node.actions
        .iter()
        .any(|a| PRIMARY_ACTIONS.contains(&a.to_ascii_lowercase().as_str()))
        || node.states.iter().any(|s| s == "editable")
        || ROLE_ACTIONABLE.contains(&role)
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn process_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_a_person_reads_them() {
        // GTK 4.8's doubled labels, said once; only for GTK 4, only two equal halves.
        assert_eq!(tidy_name("7 7", true), "7");
        assert_eq!(tidy_name("= =", true), "=");
        assert_eq!(tidy_name("mod mod", true), "mod");
        assert_eq!(tidy_name("× ×", true), "×");
        assert_eq!(tidy_name("7 7", false), "7 7");
        assert_eq!(tidy_name("Walla Walla x", true), "Walla Walla x");
        assert_eq!(tidy_name("a  a", true), "a  a");
        // Trailing and leading spaces go everywhere.
        assert_eq!(tidy_name("Open…   ", false), "Open…");
    }

    fn node(path: &str, child_count: i32) -> RawNode {
        RawNode {
            node: NodeRef {
                bus: ":1.1".into(),
                path: path.into(),
            },
            parent_path: None,
            index_in_parent: 0,
            child_count,
            role: Role::Panel,
            name: path.into(),
            states: StateSet::new(State::Showing),
            ifaces: InterfaceSet::empty(),
            scrolled_out: false,
            frame_read: None,
            laid_out_empty: false,
        }
    }

    #[test]
    fn a_cyclic_tree_is_placed_once_per_node() {
        let mut known = Known::listing(Vec::new());
        for p in ["/w", "/a", "/b", "/c"] {
            known.nodes.insert(p.into(), node(p, 1));
        }
        // /w → /a → /b → /a (a cycle), /b → /c, and /w lists itself.
        known.merge(("/w".into(), vec!["/a".into(), "/w".into()], Vec::new()));
        known.merge(("/a".into(), vec!["/b".into()], Vec::new()));
        known.merge(("/b".into(), vec!["/a".into(), "/c".into()], Vec::new()));
        let order = known.depth_first("/w", |_| true);
        let paths: Vec<(&str, Option<usize>)> = order
            .iter()
            .map(|(n, p)| (n.node.path.as_str(), *p))
            .collect();
        assert_eq!(
            paths,
            [
                ("/w", None),
                ("/a", Some(0)),
                ("/b", Some(1)),
                ("/c", Some(2))
            ]
        );
    }

    #[test]
    fn a_chain_deeper_than_the_bound_stops_there() {
        let mut known = Known::listing(Vec::new());
        let paths: Vec<String> = (0..MAX_DEPTH + 20).map(|i| format!("/n{i}")).collect();
        for (i, p) in paths.iter().enumerate() {
            known.nodes.insert(p.clone(), node(p, 1));
            if let Some(next) = paths.get(i + 1) {
                known.merge((p.clone(), vec![next.clone()], Vec::new()));
            }
        }
        assert_eq!(known.depth_first("/n0", |_| true).len(), MAX_DEPTH + 1);
    }
}
