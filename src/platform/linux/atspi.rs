//! AT-SPI side of the Linux backend: finds a pid's application on the accessibility bus,
//! reads its whole tree in one `Cache.GetItems` call, scopes it to one window, and fills
//! in frames, action names, text and values with concurrent per-node calls.
//!
//! Frames come back in window-local pixels. GTK3 and Chromium report screen coordinates;
//! GTK4 reports coordinates relative to its top-level frame (which sits inside the X
//! window behind a client-side-decoration border), so those are shifted by the frame's
//! origin in the window instead.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use atspi::{Interface, InterfaceSet, Role, State, StateSet};
use futures::future::join_all;
use serde::de::DeserializeOwned;
use zbus::Connection;

use crate::platform::{AxNode, AxTree, PlatformError, PlatformResult, Rect, WindowInfo};

const REGISTRY: &str = "org.a11y.atspi.Registry";
const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
const COORD_SCREEN: u32 = 0;
const COORD_WINDOW: u32 = 1;
/// How long to wait for a freshly launched app to show up on the accessibility bus.
const REGISTRATION_WAIT: Duration = Duration::from_secs(3);
/// Rounds of exporting children before the tree is taken as it is (a tree's depth).
const MAX_EXPORT_ROUNDS: usize = 40;
/// Nodes with more children than this (huge lists) are not expanded child by child.
const MAX_CHILDREN_TO_EXPORT: i32 = 2000;
/// Containers that manage their descendants (tree views, tables) create children on
/// demand and never cache them; small ones are still read child by child.
const MAX_MANAGED_CHILDREN: i32 = 200;
/// Text longer than this is cut in snapshots (documents can be huge).
const MAX_TEXT_CHARS: usize = 4000;

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
}

pub struct Atspi {
    /// The accessibility bus.
    conn: Connection,
    /// The session bus, where `org.a11y.Status` lives.
    session: Connection,
    /// pid → application bus name, refreshed on a miss.
    apps: Mutex<HashMap<u32, String>>,
    /// Action names per node: stable for an object's lifetime, so read once.
    actions: Mutex<HashMap<NodeRef, Vec<String>>>,
}

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
            conn,
            session,
            apps: Mutex::new(HashMap::new()),
            actions: Mutex::new(HashMap::new()),
        })
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
        let msg = self
            .conn
            .call_method(Some(dest), path, Some(iface), method, body)
            .await?;
        msg.body().deserialize::<R>()
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

    async fn app_bus_for_pid(&self, pid: u32) -> PlatformResult<Option<String>> {
        if let Some(bus) = self.apps.lock().unwrap().get(&pid).cloned() {
            return Ok(Some(bus));
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
            if found.is_some() {
                return Ok(found);
            }
            if Instant::now() >= deadline || !process_alive(pid) {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
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
            })
            .collect())
    }

    /// The application's nodes, complete for everything shown. `Cache.GetItems` only lists
    /// objects the toolkit has exported so far (GTK4 exports lazily), so nodes with more
    /// children than cached get a `GetChildren` (which exports them), and the cache is read
    /// again; children a toolkit still does not cache are read node by node.
    async fn complete_items(&self, bus: &str) -> PlatformResult<Vec<RawNode>> {
        let mut cache_works = true;
        let mut items: Vec<RawNode> = match self.cached_items(bus).await {
            Ok(items) => items,
            Err(_) => {
                cache_works = false;
                vec![
                    self.read_node(bus, ROOT_PATH, None, 0)
                        .await
                        .ok_or_else(|| {
                            ax_err(
                                "read the application",
                                "neither Cache.GetItems nor the root answered",
                            )
                        })?,
                ]
            }
        };
        let mut expanded: std::collections::HashSet<String> = Default::default();
        for _round in 0..MAX_EXPORT_ROUNDS {
            let mut cached_children: HashMap<&str, i32> = HashMap::new();
            for n in &items {
                if let Some(p) = &n.parent_path {
                    *cached_children.entry(p.as_str()).or_default() += 1;
                }
            }
            let need: Vec<String> = items
                .iter()
                .filter(|n| {
                    let shown = n.node.path == ROOT_PATH
                        || (n.states.contains(State::Visible)
                            && !n.states.contains(State::Defunct));
                    shown
                        && n.child_count
                            > cached_children
                                .get(n.node.path.as_str())
                                .copied()
                                .unwrap_or(0)
                        && n.child_count
                            <= if n.states.contains(State::ManagesDescendants) {
                                MAX_MANAGED_CHILDREN
                            } else {
                                MAX_CHILDREN_TO_EXPORT
                            }
                        && !expanded.contains(&n.node.path)
                })
                .map(|n| n.node.path.clone())
                .collect();
            if need.is_empty() {
                break;
            }
            let lists = join_all(need.iter().map(|path| async move {
                let kids: Vec<(String, zbus::zvariant::OwnedObjectPath)> = self
                    .call(bus, path, "org.a11y.atspi.Accessible", "GetChildren", &())
                    .await
                    .unwrap_or_default();
                (path.clone(), kids)
            }))
            .await;
            expanded.extend(need);
            if cache_works {
                if let Ok(fresh) = self.cached_items(bus).await {
                    items = fresh;
                }
            }
            let known: std::collections::HashSet<String> =
                items.iter().map(|n| n.node.path.clone()).collect();
            let missing: Vec<(String, String, i32)> = lists
                .into_iter()
                .flat_map(|(parent, kids)| {
                    kids.into_iter()
                        .enumerate()
                        .map(move |(i, (_, path))| (parent.clone(), path.to_string(), i as i32))
                })
                .filter(|(_, path, _)| !known.contains(path))
                .collect();
            let read = join_all(
                missing
                    .iter()
                    .map(|(parent, path, i)| self.read_node(bus, path, Some(parent.clone()), *i)),
            )
            .await;
            items.extend(read.into_iter().flatten());
        }
        Ok(items)
    }

    /// One node read call by call, for toolkits whose cache does not list it.
    async fn read_node(
        &self,
        bus: &str,
        path: &str,
        parent: Option<String>,
        index: i32,
    ) -> Option<RawNode> {
        const ACC: &str = "org.a11y.atspi.Accessible";
        let (role, name, states, ifaces, child_count) = futures::join!(
            self.call::<_, u32>(bus, path, ACC, "GetRole", &()),
            self.property::<String>(bus, path, ACC, "Name"),
            self.call::<_, StateSet>(bus, path, ACC, "GetState", &()),
            self.call::<_, InterfaceSet>(bus, path, ACC, "GetInterfaces", &()),
            self.property::<i32>(bus, path, ACC, "ChildCount"),
        );
        Some(RawNode {
            node: NodeRef {
                bus: bus.to_string(),
                path: path.to_string(),
            },
            parent_path: parent,
            index_in_parent: index,
            child_count: child_count.unwrap_or(0),
            role: Role::try_from(role.ok()?).unwrap_or(Role::Invalid),
            name: name.unwrap_or_default(),
            states: states.ok()?,
            ifaces: ifaces.unwrap_or_default(),
        })
    }

    async fn toolkit(&self, bus: &str) -> (String, String) {
        let name: String = self
            .property(bus, ROOT_PATH, "org.a11y.atspi.Application", "ToolkitName")
            .await
            .unwrap_or_default();
        let version: String = self
            .property(bus, ROOT_PATH, "org.a11y.atspi.Application", "Version")
            .await
            .unwrap_or_default();
        (name, version)
    }

    async fn extents(&self, n: &NodeRef, coord: u32) -> Option<Rect> {
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
        // Hidden GTK3 widgets report i32::MIN; treat as "no frame".
        (x != i32::MIN && y != i32::MIN).then_some(Rect {
            x,
            y,
            width,
            height,
        })
    }

    async fn action_names(&self, n: &NodeRef) -> Vec<String> {
        if let Some(names) = self.actions.lock().unwrap().get(n) {
            return names.clone();
        }
        // GetActions gives localized names (GTK3 even puts descriptions there); GetName
        // gives the stable ones, `click`, `toggle`, `activate`.
        let count: i32 = self
            .property(&n.bus, &n.path, "org.a11y.atspi.Action", "NActions")
            .await
            .unwrap_or(0);
        let names: Vec<String> = join_all((0..count.min(32)).map(|i| async move {
            self.call::<_, String>(&n.bus, &n.path, "org.a11y.atspi.Action", "GetName", &(i,))
                .await
                .unwrap_or_default()
        }))
        .await
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
        self.actions
            .lock()
            .unwrap()
            .insert(n.clone(), names.clone());
        names
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
        Some(text.chars().take(MAX_TEXT_CHARS).collect())
    }

    async fn numeric_value(&self, n: &NodeRef) -> Option<String> {
        let v: f64 = self
            .property(&n.bus, &n.path, "org.a11y.atspi.Value", "CurrentValue")
            .await
            .ok()?;
        Some(format_number(v))
    }

    /// The tree of `pid` scoped to `window`. `csd_origin` is where the toolkit's top-level
    /// frame starts inside the X window, when the window manager told us (`_GTK_FRAME_EXTENTS`).
    pub async fn window_tree(
        &self,
        pid: u32,
        window: &WindowInfo,
        csd_origin: Option<(i32, i32)>,
    ) -> PlatformResult<AxTree> {
        let Some(bus) = self.app_bus_for_pid(pid).await? else {
            return Ok(AxTree {
                nodes: Vec::new(),
                warning: Some(format!(
                    "pid {pid} is not on the accessibility bus (not an accessible toolkit, NO_AT_BRIDGE set, or started before accessibility was enabled)"
                )),
            });
        };
        let raw = match self.complete_items(&bus).await {
            Ok(items) => items,
            Err(e) => {
                // The app left the bus (or restarted): forget it and report why.
                self.apps.lock().unwrap().remove(&pid);
                return Err(e);
            }
        };
        let by_path: HashMap<&str, usize> = raw
            .iter()
            .enumerate()
            .map(|(i, n)| (n.node.path.as_str(), i))
            .collect();
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, n) in raw.iter().enumerate() {
            if let Some(p) = n.parent_path.as_deref().and_then(|p| by_path.get(p)) {
                if *p != i {
                    children.entry(*p).or_default().push(i);
                }
            }
        }
        for list in children.values_mut() {
            list.sort_by_key(|c| raw[*c].index_in_parent);
        }
        let app_root = by_path
            .get(ROOT_PATH)
            .copied()
            .ok_or_else(|| ax_err("read the application's cache", "no application root"))?;
        let toplevels: Vec<usize> = children.get(&app_root).cloned().unwrap_or_default();
        let (toolkit, version) = self.toolkit(&bus).await;
        let window_relative = toolkit.eq_ignore_ascii_case("gtk") && version.starts_with('4');

        let Some((top, top_screen)) = self
            .match_toplevel(&raw, &toplevels, window, window_relative)
            .await
        else {
            return Ok(AxTree {
                nodes: Vec::new(),
                warning: Some(format!(
                    "no accessible top-level of pid {pid} matches window {} \"{}\"",
                    window.window_id, window.title
                )),
            });
        };

        // Offset that turns a reported extent into window-local pixels.
        let offset = if window_relative {
            let (fx, fy) = csd_origin.unwrap_or((
                ((window.bounds.width - top_screen.width) / 2).max(0),
                ((window.bounds.height - top_screen.height) / 2).max(0),
            ));
            (fx - top_screen.x, fy - top_screen.y)
        } else {
            (-window.bounds.x, -window.bounds.y)
        };
        let coord = if window_relative {
            COORD_WINDOW
        } else {
            COORD_SCREEN
        };

        // Scope to the window's subtree, keeping only what is shown.
        let uses_showing = subtree(&children, top)
            .iter()
            .skip(1)
            .any(|i| raw[*i].states.contains(State::Showing));
        let mut order: Vec<(usize, Option<usize>)> = Vec::new();
        let mut stack = vec![(top, None)];
        while let Some((i, parent)) = stack.pop() {
            let st = raw[i].states;
            let shown = i == top
                || (st.contains(State::Visible)
                    && (!uses_showing || st.contains(State::Showing))
                    && !st.contains(State::Defunct));
            if !shown {
                continue;
            }
            let me = order.len();
            order.push((i, parent));
            if let Some(kids) = children.get(&i) {
                for k in kids.iter().rev() {
                    stack.push((*k, Some(me)));
                }
            }
        }

        let details = join_all(order.iter().map(|(i, _)| {
            let n = &raw[*i];
            async move {
                let frame = if n.ifaces.contains(Interface::Component) {
                    self.extents(&n.node, coord).await
                } else {
                    None
                };
                let actions = if n.ifaces.contains(Interface::Action) && n.role != Role::Label {
                    self.action_names(&n.node).await
                } else {
                    Vec::new()
                };
                let value = if n.ifaces.contains(Interface::Value) {
                    self.numeric_value(&n.node).await
                } else if n.ifaces.contains(Interface::Text) && TEXT_VALUE_ROLES.contains(&n.role) {
                    self.text(&n.node).await
                } else {
                    None
                };
                (frame, actions, value)
            }
        }))
        .await;

        let window_rect = Rect {
            x: 0,
            y: 0,
            width: window.bounds.width,
            height: window.bounds.height,
        };
        let mut nodes: Vec<AxNode> = Vec::with_capacity(order.len());
        let mut dropped: Vec<bool> = vec![false; order.len()];
        for (k, ((i, parent), (frame, actions, value))) in order.iter().zip(details).enumerate() {
            let n = &raw[*i];
            // A child of a dropped node goes with it.
            if parent.is_some_and(|p| dropped[p]) {
                dropped[k] = true;
                continue;
            }
            let frame = frame
                .map(|r| Rect {
                    x: r.x + offset.0,
                    y: r.y + offset.1,
                    width: r.width,
                    height: r.height,
                })
                .filter(|r| !r.is_empty() && r.intersects(&window_rect));
            let parent_index = parent.map(|p| remap(&dropped, p));
            let me = nodes.len();
            if let Some(p) = parent_index {
                nodes[p].children.push(me);
            }
            let mut node = AxNode {
                role: role_name(n.role),
                name: n.name.clone(),
                value,
                states: n
                    .states
                    .iter()
                    .map(|s| s.to_static_str().to_string())
                    .collect(),
                actions,
                frame,
                parent: parent_index,
                children: Vec::new(),
                handle: n.node.handle(),
                actionable: false,
            };
            node.actionable = is_actionable(&node);
            nodes.push(node);
        }
        Ok(AxTree {
            nodes,
            warning: None,
        })
    }

    /// Picks the accessible top-level that is this X window: by title, then by geometry.
    async fn match_toplevel(
        &self,
        raw: &[RawNode],
        toplevels: &[usize],
        window: &WindowInfo,
        window_relative: bool,
    ) -> Option<(usize, Rect)> {
        let coord = if window_relative {
            COORD_WINDOW
        } else {
            COORD_SCREEN
        };
        let candidates: Vec<usize> = toplevels
            .iter()
            .copied()
            .filter(|i| !raw[*i].states.contains(State::Defunct))
            .collect();
        let titled: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|i| raw[*i].name == window.title)
            .collect();
        let pool = if titled.is_empty() {
            candidates
        } else {
            titled
        };
        let rects = join_all(pool.iter().map(|i| self.extents(&raw[*i].node, coord))).await;
        let b = window.bounds;
        pool.into_iter()
            .zip(rects)
            .filter_map(|(i, r)| r.map(|r| (i, r)))
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

/// Index of node `k` in the output once the dropped nodes before it are gone.
fn remap(dropped: &[bool], k: usize) -> usize {
    k - dropped[..k].iter().filter(|d| **d).count()
}

fn subtree(children: &HashMap<usize, Vec<usize>>, top: usize) -> Vec<usize> {
    let mut out = vec![top];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get(&out[i]) {
            out.extend(kids);
        }
        i += 1;
    }
    out
}

/// AT-SPI role name in snake_case (`push button` → `push_button`).
pub fn role_name(role: Role) -> String {
    role.name().replace(' ', "_")
}

/// Whether an element deserves an index: something an agent can act on.
fn is_actionable(node: &AxNode) -> bool {
    node.actions
        .iter()
        .any(|a| PRIMARY_ACTIONS.contains(&a.to_ascii_lowercase().as_str()))
        || node.states.iter().any(|s| s == "editable")
        || matches!(
            node.role.as_str(),
            "slider"
                | "spin_button"
                | "scroll_bar"
                | "combo_box"
                | "page_tab"
                | "list_item"
                | "menu_item"
                | "check_menu_item"
                | "radio_menu_item"
                | "table_cell"
                | "tree_item"
                | "link"
        )
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
