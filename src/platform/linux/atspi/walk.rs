//! One window's tree ([`Atspi::window_tree`]), in the steps of its walk: the app's nodes as
//! its cache lists them and its root, the top-level that is the window, the levels below
//! it read concurrently, each shown node's details (frame, actions, value, readable name),
//! and the nodes in window-local pixels.

use super::*;

/// How a walk reads one app: its toolkit's ways.
struct Reading {
    bus: String,
    gtk4: bool,
    /// Whether `showing` marks what is hidden (GTK 4 never sets it on children).
    uses_showing: bool,
    /// GTK 3 clears `showing` on what its viewport scrolled out of sight; such nodes are
    /// kept, told apart from hidden pages and closed menus (see mark_scrolled_out).
    keeps_scrolled_out: bool,
    /// A web engine does the same for a page's content below the fold, kept too; but only
    /// inside the page: Firefox's own hidden menu bar is visible, not showing, and sized.
    keeps_scrolled_out_of_pages: bool,
    /// Its one-line entries do not expose their text (GTK 4, see quirks::of_toolkit).
    hides_entry_text: bool,
    /// What does not show is read as fully as what does (include_hidden).
    with_hidden: bool,
    coord: u32,
}

impl Atspi {
    /// The tree of `pid` scoped to `window`, its frames in window-local pixels as `frames`
    /// says the toolkit reports them; with `with_hidden`, what does not show too, marked
    /// [`HIDDEN`].
    pub async fn window_tree(
        &self,
        pid: u32,
        window: &WindowInfo,
        frames: FrameOrigin,
        with_hidden: bool,
    ) -> PlatformResult<AxTree> {
        let bus = match self.app_bus_or_absence(pid).await? {
            Ok(bus) => bus,
            Err(absence) => return Ok(no_tree(pid, absence)),
        };
        let (toolkit, version) = self.toolkit(&bus).await;
        let gtk = toolkit.eq_ignore_ascii_case("gtk");
        let gtk4 = gtk && version.starts_with('4');
        let (window_relative, csd_origin) = match frames {
            FrameOrigin::Screen { toolkit_frame } => (gtk4, toolkit_frame),
            // GTK 4 counts from its frame, inside its surface's shadows, as on X11; the
            // others from their surface.
            FrameOrigin::WindowRelative { surface } => (true, surface.filter(|_| !gtk4)),
        };
        let reading = Reading {
            bus,
            gtk4,
            uses_showing: !gtk4,
            keeps_scrolled_out: gtk && version.starts_with('3'),
            keeps_scrolled_out_of_pages: is_web_engine(&toolkit),
            hides_entry_text: crate::platform::linux::quirks::of_toolkit(&format!(
                "{toolkit} {version}"
            ))
            .hides_entry_text,
            with_hidden,
            coord: if window_relative {
                COORD_WINDOW
            } else {
                COORD_SCREEN
            },
        };
        let mut known = self.app_nodes(pid, &reading).await?;
        let Some((top, top_rect)) = self
            .window_toplevel(&reading, &mut known, window, window_relative)
            .await
        else {
            return Ok(AxTree {
                nodes: Vec::new(),
                warning: Some(format!(
                    "no accessible top-level of pid {pid} matches window {} \"{}\"",
                    window.window_id, window.title
                )),
                left_out: Vec::new(),
                absence: None,
            });
        };
        let showing = |n: &RawNode| {
            n.node.path == top
                || n.scrolled_out
                || (shows(n.states, reading.uses_showing) && !n.laid_out_empty)
        };
        // A defunct node is gone, not hidden: never read.
        let shown = |n: &RawNode| showing(n) || (with_hidden && !n.states.contains(State::Defunct));
        let left_out = self.read_levels(&reading, &mut known, &top, shown).await;
        // Offset that turns a reported extent into window-local pixels.
        let offset = if window_relative {
            let (fx, fy) = csd_origin.unwrap_or((
                ((window.bounds.width - top_rect.width) / 2).max(0),
                ((window.bounds.height - top_rect.height) / 2).max(0),
            ));
            (fx - top_rect.x, fy - top_rect.y)
        } else {
            (-window.bounds.x, -window.bounds.y)
        };
        let order = known.depth_first(&top, shown);
        let details = join_all(order.iter().map(|(n, _)| self.details(n, &reading))).await;
        let misplaced = self
            .misplaced_root_panes(&order, &details, reading.coord)
            .await;
        let hidden: Vec<bool> = order.iter().map(|(n, _)| !showing(n)).collect();
        Ok(AxTree {
            nodes: nodes_of(&order, details, offset, &misplaced, window, &hidden),
            warning: None,
            left_out,
            absence: None,
        })
    }

    /// What GTK 4 already cached (all of the app after the first walk), and the root. An
    /// atk-bridge cache (GTK 3, Firefox, Chromium) gives the nodes it lists, not the tree's
    /// shape: it holds what existed when it was created plus what the app announced since
    /// (Firefox's page content loaded later is missing), and GTK 3's index_in_parent
    /// disagrees with GetChildren.
    async fn app_nodes(&self, pid: u32, r: &Reading) -> PlatformResult<Known> {
        let items = self.cached_items(&r.bus).await.unwrap_or_default();
        let mut known = if r.gtk4 {
            Known::from_items(items)
        } else {
            Known::listing(items)
        };
        if known.nodes.contains_key(ROOT_PATH) {
            return Ok(known);
        }
        match self.read_node(&r.bus, ROOT_PATH, None, 0, None).await {
            Some(root) => {
                known.nodes.insert(ROOT_PATH.to_string(), root);
                Ok(known)
            }
            None => {
                // The app left the bus (or restarted): forget it and report why.
                self.apps.lock().unwrap().remove(&pid);
                Err(ax_err(
                    "read the application",
                    format!("pid {pid} no longer answers"),
                ))
            }
        }
    }

    /// The app's top-levels, read in full (they are matched to the window by name), and the
    /// one that is `window`, with its extent.
    async fn window_toplevel(
        &self,
        r: &Reading,
        known: &mut Known,
        window: &WindowInfo,
        window_relative: bool,
    ) -> Option<(String, Rect)> {
        let root = known.nodes[ROOT_PATH].clone();
        if let Some(found) = self.children_of(&r.bus, &root, known, None).await {
            known.merge(found);
        }
        let toplevels: Vec<RawNode> = known
            .children
            .get(ROOT_PATH)
            .map(|kids| {
                kids.iter()
                    .filter_map(|k| known.nodes.get(k).cloned())
                    .collect()
            })
            .unwrap_or_default();
        self.match_toplevel(&toplevels, window, window_relative)
            .await
    }

    /// The window's levels below `top`, each read concurrently: the children of every
    /// shown node, and of a table too big to list (a spreadsheet's million rows) the cells
    /// in view. Each node is opened once: an app whose tree has a cycle (a child that
    /// lists an ancestor) must not make the walk go round until the depth bound. Returns
    /// what the bounds left out: a big table's cells out of view, and what lies below
    /// [`MAX_DEPTH`] levels or past [`MAX_NODES`] nodes.
    async fn read_levels(
        &self,
        r: &Reading,
        known: &mut Known,
        top: &str,
        shown: impl Fn(&RawNode) -> bool,
    ) -> Vec<LeftOut> {
        let mut left_out = Vec::new();
        // A page's nodes: its documents and all under them.
        let mut in_page: HashSet<String> = HashSet::new();
        let mut opened: HashSet<String> = HashSet::new();
        let mut frontier = vec![top.to_string()];
        for _ in 0..MAX_DEPTH {
            if opened.len() > MAX_NODES {
                break;
            }
            frontier.retain(|p| opened.insert(p.clone()));
            if frontier.is_empty() {
                break;
            }
            let at_frontier = |big: bool| -> Vec<RawNode> {
                frontier
                    .iter()
                    .filter_map(|p| known.nodes.get(p))
                    .filter(|n| shown(n) && read_by_cells(n) == big)
                    .cloned()
                    .collect()
            };
            let (open, big_tables) = (at_frontier(false), at_frontier(true));
            if r.gtk4 {
                self.export_children(r, known, &open).await;
            }
            // A node that does not show costs fewer calls, unless it is to be listed too.
            let listing = (!r.with_hidden).then_some(r.uses_showing);
            let (found, cells) = futures::join!(
                join_all(
                    open.iter()
                        .map(|n| self.children_of(&r.bus, n, known, listing))
                ),
                join_all(
                    big_tables
                        .iter()
                        .map(|n| self.visible_cells(&r.bus, n, r.coord))
                ),
            );
            for (table, read) in big_tables.iter().zip(&cells) {
                let returned = read.as_ref().map_or(0, |(_, paths, _)| paths.len());
                left_out.push(LeftOut {
                    element: element_line(table),
                    returned: returned as u64,
                    total: table.child_count.max(0) as u64,
                    why: format!(
                        "a table too big to list: only its cells in view are read, at most {MAX_TABLE_CELLS}"
                    ),
                });
            }
            for f in found.into_iter().chain(cells).flatten() {
                known.merge(f);
            }
            if r.gtk4 {
                self.mark_laid_out_empty(known, &open, r.coord).await;
            }
            if r.keeps_scrolled_out {
                self.mark_scrolled_out(known, &open, r.coord).await;
            } else if r.keeps_scrolled_out_of_pages {
                let pages: Vec<RawNode> = open
                    .iter()
                    .filter(|n| {
                        in_page.contains(&n.node.path)
                            || matches!(n.role, Role::DocumentWeb | Role::DocumentFrame)
                    })
                    .cloned()
                    .collect();
                self.mark_scrolled_out(known, &pages, r.coord).await;
                in_page.extend(known.children_of_all(&pages));
            }
            frontier = known.children_of_all(&open);
        }
        left_out.extend(unopened(known, &frontier, &opened, shown));
        left_out
    }

    /// GTK 4 exports a node's children into its cache only once asked for them, and a
    /// read of each fresh child costs five calls (a first read of a 3,200-button window:
    /// 32,000 calls, 95 s). So the level's children are asked for first, all at once, and
    /// then taken from one `GetItems`; what that still lacks is read child by child.
    async fn export_children(&self, r: &Reading, known: &mut Known, open: &[RawNode]) {
        let unexported: Vec<&RawNode> = open
            .iter()
            .filter(|n| {
                let cached = known.children.get(&n.node.path).map_or(0, Vec::len);
                n.child_count > 0 && cached as i32 != n.child_count
            })
            .collect();
        if unexported.is_empty() {
            return;
        }
        join_all(unexported.iter().map(|n| async move {
            let _: zbus::Result<Vec<(String, zbus::zvariant::OwnedObjectPath)>> = self
                .call(
                    &r.bus,
                    &n.node.path,
                    "org.a11y.atspi.Accessible",
                    "GetChildren",
                    &(),
                )
                .await;
        }))
        .await;
        if let Ok(items) = self.cached_items(&r.bus).await {
            known.absorb(items);
        }
    }

    /// A shown node's details: its frame (read for what an agent may act on or read, and
    /// for the containers that clip what they hold, not for every container), its action
    /// names, its value and its readable name.
    async fn details(&self, n: &RawNode, reading: &Reading) -> Details {
        let actions = if n.ifaces.contains(Interface::Action) && n.role != Role::Label {
            self.action_names(&n.node, n.states).await
        } else {
            Vec::new()
        };
        let text_value = n.ifaces.contains(Interface::Text)
            && (TEXT_VALUE_ROLES.contains(&n.role)
                    // A web `role=status` in Firefox holds its text, no child label.
                    || (n.role == Role::StatusBar && n.child_count == 0));
        // A cell shows its text (an empty cell is not `0`, a label cell is not a number),
        // unless the text is its name already (GTK's tree view cells).
        let cell_text = n.role == Role::TableCell && n.ifaces.contains(Interface::Text);
        let value = if cell_text {
            self.text(&n.node).await.filter(|t| *t != n.name)
        } else if n.ifaces.contains(Interface::Value) {
            self.numeric_value(&n.node).await
        } else if text_value {
            self.text(&n.node).await
        } else {
            None
        };
        // GTK 4.8's entries answer "" whatever they show: an empty read of a one-line
        // entry there is no value known, not an empty one (an agent typed over a file
        // chooser's name it read as empty). Its multi-line text views do expose theirs.
        let value_unknown = reading.hides_entry_text
            && text_value
            && !n.states.contains(State::MultiLine)
            && value.as_deref().is_none_or(str::is_empty);
        let value = value.filter(|_| !value_unknown);
        let wants_frame = n.ifaces.contains(Interface::Component)
            && (!actions.is_empty()
                || text_value
                || n.ifaces.contains(Interface::Value)
                || n.states.contains(State::Editable)
                || ROLE_ACTIONABLE.contains(&n.role)
                || matches!(n.role, Role::ScrollPane | Role::Viewport)
                // Incidental regions are masked by their own frames (their items may have
                // none), and a root pane's frame is checked against its parent's.
                || matches!(n.role, Role::ToolBar | Role::StatusBar | Role::RootPane));
        let frame = match (wants_frame, n.frame_read) {
            (true, Some(read)) => read,
            (true, None) => self.extents(&n.node, reading.coord).await,
            (false, _) => None,
        };
        let name = self.readable_name(&n.node, &n.name).await;
        Details {
            frame,
            actions,
            value,
            value_unknown,
            name,
        }
    }

    /// The root panes that report themselves away from where their parent holds them, and
    /// how far to move each (with all under it) to its parent's place. LibreOffice on GTK 3
    /// counts its root pane from the top of its GTK window's content, above the native
    /// menu bar that holds it down: every toolbar item and cell read 25-31 px above where
    /// it shows, so a click on cell A2 fell on A1 and masks missed their toolbar. Only a
    /// root pane of its parent's exact size is moved: one that fills its parent and
    /// reports another place is misplaced, not laid out.
    async fn misplaced_root_panes(
        &self,
        order: &[(&RawNode, Option<usize>)],
        details: &[Details],
        coord: u32,
    ) -> HashMap<usize, (i32, i32)> {
        let panes: Vec<(usize, usize, Rect)> = order
            .iter()
            .zip(details)
            .enumerate()
            .filter(|(_, ((n, _), _))| n.role == Role::RootPane)
            .filter_map(|(i, ((_, parent), d))| Some((i, (*parent)?, d.frame?)))
            .collect();
        let parents = join_all(
            panes
                .iter()
                .map(|(_, p, _)| self.extents(&order[*p].0.node, coord)),
        )
        .await;
        panes
            .into_iter()
            .zip(parents)
            .filter_map(|((i, _, pane), parent)| {
                let parent = parent?;
                let same_size = parent.width == pane.width && parent.height == pane.height;
                let moved = (parent.x - pane.x, parent.y - pane.y);
                (same_size && moved != (0, 0)).then_some((i, moved))
            })
            .collect()
    }
}

/// What the depth and node bounds kept from opening: the frontier's shown nodes that were
/// never opened, with their children, which are not in the answer.
fn unopened(
    known: &Known,
    frontier: &[String],
    opened: &HashSet<String>,
    shown: impl Fn(&RawNode) -> bool,
) -> Vec<LeftOut> {
    let why = match opened.len() > MAX_NODES {
        true => format!("the read stops opening elements past {MAX_NODES} nodes"),
        false => format!("deeper than {MAX_DEPTH} levels"),
    };
    frontier
        .iter()
        .filter(|p| !opened.contains(*p))
        .filter_map(|p| known.nodes.get(p))
        .filter(|n| shown(n) && n.child_count > 0)
        .map(|n| LeftOut {
            element: element_line(n),
            returned: 0,
            total: n.child_count as u64,
            why: why.clone(),
        })
        .collect()
}

/// The tree of an app with none to read, saying why.
fn no_tree(pid: u32, absence: Absence) -> AxTree {
    let warning = match absence {
        Absence::NoBridge => format!(
            "pid {pid} is not on the accessibility bus (not an accessible toolkit, NO_AT_BRIDGE set, or started before accessibility was enabled)"
        ),
        Absence::NothingExported { after_ms } => format!(
            "pid {pid} is on the accessibility bus but exports no object after {after_ms} ms (its toolkit has not registered its root)"
        ),
    };
    AxTree {
        nodes: Vec::new(),
        warning: Some(warning),
        left_out: Vec::new(),
        absence: Some(absence),
    }
}

/// What [`Atspi::details`] reads of a node besides what the walk knows.
struct Details {
    frame: Option<Rect>,
    actions: Vec<String>,
    value: Option<String>,
    value_unknown: bool,
    name: String,
}

/// The walk's nodes, in depth-first order, as the tree's nodes: frames moved by `offset`
/// into window-local pixels (and each misplaced root pane's subtree by its own move, see
/// [`Atspi::misplaced_root_panes`]), dropped where empty or outside the window.
fn nodes_of(
    order: &[(&RawNode, Option<usize>)],
    details: Vec<Details>,
    offset: (i32, i32),
    misplaced: &HashMap<usize, (i32, i32)>,
    window: &WindowInfo,
    hidden: &[bool],
) -> Vec<AxNode> {
    let window_rect = Rect::new(0, 0, window.bounds.width, window.bounds.height);
    let mut nodes: Vec<AxNode> = Vec::with_capacity(order.len());
    // Each node's move beyond `offset`: its own, else its parent's (parents come first).
    let mut moved: Vec<(i32, i32)> = Vec::with_capacity(order.len());
    for (i, ((n, parent), d)) in order.iter().zip(details).enumerate() {
        let by = misplaced
            .get(&i)
            .copied()
            .or_else(|| parent.map(|p| moved[p]))
            .unwrap_or((0, 0));
        moved.push(by);
        let frame = d
            .frame
            .map(|r| Rect {
                x: r.x + offset.0 + by.0,
                y: r.y + offset.1 + by.1,
                ..r
            })
            .filter(|r| !r.is_empty() && r.intersects(&window_rect));
        let me = nodes.len();
        if let Some(p) = parent {
            nodes[*p].children.push(me);
        }
        let mut states: Vec<String> = n
            .states
            .iter()
            .map(|s| s.to_static_str().to_string())
            .collect();
        if n.scrolled_out {
            states.push(OFFSCREEN.to_string());
        }
        if hidden[i] {
            states.push(HIDDEN.to_string());
        }
        let mut node = AxNode {
            role: role_name(n.role),
            name: d.name,
            value: d.value,
            value_unknown: d.value_unknown,
            states,
            actions: d.actions,
            frame,
            parent: *parent,
            children: Vec::new(),
            reported_children: u32::try_from(n.child_count).ok(),
            handle: n.node.handle(),
            actionable: false,
            confidence: None,
        };
        node.actionable = is_actionable(&node, n.role);
        nodes.push(node);
    }
    nodes
}
