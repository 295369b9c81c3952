//! Target resolution: an action's addressing (element index, pixel, window) checked and
//! resolved against the last snapshot, re-read when it is older, and the element under a
//! pixel.

use super::*;

/// The target an action resolved to.
pub(super) enum Target {
    Element {
        window: WindowInfo,
        index: usize,
        node: Box<AxNode>,
        /// The snapshot the index was resolved in (a concurrent get_window_state may have
        /// replaced the window's latest one since).
        snapshot: std::sync::Arc<crate::tools::Snapshot>,
    },
    Pixel {
        window: WindowInfo,
        x: i32,
        y: i32,
    },
    Window {
        window: WindowInfo,
    },
}

/// Roles whose frame clips what they hold: a scrolled list shows part of its rows.
const CLIPPING_ROLES: &[&str] = &[
    "scroll_pane",
    "viewport",
    "list",
    "list_box",
    "table",
    "tree",
    "tree_table",
];

/// Whether `node` clips what it holds (a role of [`CLIPPING_ROLES`] with a real frame).
fn clips(node: &crate::platform::AxNode) -> bool {
    node.frame.is_some_and(|f| f.width > 0 && f.height > 0)
        && CLIPPING_ROLES.contains(&node.role.as_str())
}

/// Node `n`'s frame inside `window` and every clipping ancestor; None when nothing shows.
fn visible(
    tree: &crate::platform::AxTree,
    n: usize,
    window: &WindowInfo,
) -> Option<crate::platform::Rect> {
    let window_area = crate::platform::Rect::new(0, 0, window.bounds.width, window.bounds.height);
    let mut part = tree.nodes.get(n)?.frame?.intersection(&window_area)?;
    let mut ancestor = tree.nodes[n].parent;
    while let Some(a) = ancestor {
        if clips(&tree.nodes[a]) {
            part = part.intersection(&tree.nodes[a].frame?)?;
        }
        ancestor = tree.nodes[a].parent;
    }
    Some(part)
}

impl Target {
    /// The part of the addressed element a pointer can reach, window-local: its frame
    /// inside the window and inside every ancestor that clips (a row half scrolled out of
    /// its list). None when nothing of it shows, or it has no frame; a pixel target is
    /// itself.
    pub(super) fn visible_part(&self) -> Option<crate::platform::Rect> {
        match self {
            Target::Element {
                window,
                index,
                snapshot,
                ..
            } => visible(&snapshot.tree, *snapshot.elements.get(*index)?, window),
            Target::Pixel { x, y, .. } => Some(crate::platform::Rect::new(*x, *y, 1, 1)),
            Target::Window { .. } => None,
        }
    }

    /// The visible part of the nearest container that clips the addressed element (the
    /// list a row is scrolled out of): where a wheel scrolls that element's view.
    pub(super) fn container_visible_part(&self) -> Option<crate::platform::Rect> {
        let Target::Element {
            window,
            index,
            snapshot,
            ..
        } = self
        else {
            return None;
        };
        let tree = &snapshot.tree;
        let mut ancestor = tree.nodes.get(*snapshot.elements.get(*index)?)?.parent;
        while let Some(a) = ancestor {
            if clips(&tree.nodes[a]) {
                if let Some(part) = visible(tree, a, window) {
                    return Some(part);
                }
            }
            ancestor = tree.nodes[a].parent;
        }
        None
    }

    pub(super) fn window(&self) -> &WindowInfo {
        match self {
            Target::Element { window, .. }
            | Target::Pixel { window, .. }
            | Target::Window { window } => window,
        }
    }
}

/// A pointer gesture's `duration_ms` (0-10000, default 500) and `steps` (1-200, default
/// 20), checked (drag, mouse_drag).
pub(super) fn gesture_timing(
    duration_ms: Option<u64>,
    steps: Option<u32>,
) -> Result<(u64, u32), ToolError> {
    let duration = duration_ms.unwrap_or(500);
    if duration > 10_000 {
        return Err(ToolError::invalid(format!(
            "`duration_ms`: at most 10000, got {duration}"
        )));
    }
    let steps = steps.unwrap_or(20);
    if !(1..=200).contains(&steps) {
        return Err(ToolError::invalid(format!(
            "`steps`: must be 1-200, got {steps}"
        )));
    }
    Ok((duration, steps))
}

/// The pid's window: the given one (checked to belong to it), else its frontmost on-screen one.
pub(super) async fn target_window(
    platform: &dyn Platform,
    pid: u32,
    window_id: Option<u64>,
) -> Result<WindowInfo, ToolError> {
    crate::tools::window_or_frontmost(platform, pid, window_id).await
}

/// An element index, and the snapshot it was read from when the caller says.
#[derive(Clone, Copy)]
pub(super) struct ElementRef<'a> {
    index: usize,
    snapshot_id: Option<&'a str>,
}

/// The element an action's `element_index` and `snapshot_id` name (a snapshot id alone is
/// a mistake).
pub(super) fn element_ref(
    index: Option<usize>,
    snapshot_id: Option<&str>,
) -> Result<Option<ElementRef<'_>>, ToolError> {
    match (index, snapshot_id) {
        (None, Some(_)) => Err(ToolError::invalid(
            "`snapshot_id`: only goes with `element_index` (it says which snapshot the index is from)",
        )),
        (index, snapshot_id) => Ok(index.map(|index| ElementRef { index, snapshot_id })),
    }
}

/// Why there is no snapshot to take an index from: the window was read under another pid
/// (a pid/window mix-up), or not read at all in this process.
pub(super) fn no_snapshot(ctx: &ToolContext, pid: u32, window_id: u64) -> ToolError {
    let keys = ctx.snapshot_keys();
    if let Some((owner, _)) = keys.iter().find(|(_, w)| *w == window_id) {
        return ToolError::invalid(format!(
            "`pid`: window {window_id} was read with pid {owner}, not {pid}; pass the pid that owns the window (list_windows shows it)"
        ));
    }
    let read: Vec<String> = keys
        .iter()
        .filter(|(p, _)| *p == pid)
        .map(|(_, w)| w.to_string())
        .collect();
    if !read.is_empty() {
        return ToolError::invalid(format!(
            "`window_id`: window {window_id} of pid {pid} was never read; this session read its window(s) {} (call get_window_state on the one you mean)",
            read.join(", ")
        ));
    }
    ToolError::invalid(format!(
        "`element_index`: no snapshot of pid {pid} window {window_id}; call get_window_state first (element indices live in one process: from the CLI, run `cua serve` so calls share them)"
    ))
}

/// The node an index names: in the snapshot the caller named, else in the window's
/// latest one. Also says whether that snapshot is older than the window's latest, and
/// gives the snapshot itself.
pub(super) fn snapshot_element(
    ctx: &ToolContext,
    pid: u32,
    window_id: u64,
    element: ElementRef<'_>,
) -> Result<(AxNode, bool, std::sync::Arc<crate::tools::Snapshot>), ToolError> {
    let latest = ctx.snapshot(pid, window_id);
    let snap = match element.snapshot_id {
        None => latest
            .clone()
            .ok_or_else(|| no_snapshot(ctx, pid, window_id))?,
        Some(id) => {
            let snap = ctx.snapshot_by_id(id).ok_or_else(|| {
                ToolError::invalid(format!(
                    "`snapshot_id`: {id} is not one of the last {} snapshots this session took; call get_window_state again",
                    crate::tools::RECENT_SNAPSHOTS
                ))
            })?;
            if (snap.pid, snap.window_id) != (pid, window_id) {
                return Err(ToolError::invalid(format!(
                    "`snapshot_id`: {id} is a snapshot of pid {} window {}, not of pid {pid} window {window_id}",
                    snap.pid, snap.window_id
                )));
            }
            snap
        }
    };
    let index = element.index;
    let node = snap
        .elements
        .get(index)
        .map(|n| snap.tree.nodes[*n].clone())
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "`element_index`: {index} is out of range (snapshot {} has {} elements, 0-{})",
                snap.snapshot_id,
                snap.elements.len(),
                snap.elements.len().saturating_sub(1)
            ))
        })?;
    let older = latest.is_some_and(|l| l.snapshot_id != snap.snapshot_id);
    Ok((node, older, snap))
}

/// Refuses an element read from an older snapshot that is gone or reads differently now:
/// the index was the caller's, the element may not be.
pub(super) async fn still_the_same(
    p: &dyn Platform,
    node: &AxNode,
    element: ElementRef<'_>,
    live: (u32, &WindowInfo),
) -> Result<(), ToolError> {
    let id = element.snapshot_id.unwrap_or_default();
    let index = element.index;
    if node.handle.is_empty() {
        return text_still_there(p, node, element, live).await;
    }
    // A destroyed GTK 3 widget's object still answers: no name, not visible.
    let gone = |now: &ElementReading| {
        now.states.iter().any(|s| s == "defunct") || !now.states.iter().any(|s| s == "visible")
    };
    match p.read_element(&node.handle).await {
        Ok(now) if !gone(&now) && now.name != node.name => Err(ToolError::failed(format!(
            "element {index} of snapshot {id} ({}) now reads {:?}; call get_window_state again",
            describe(node),
            now.name
        ))),
        Ok(now) if !gone(&now) => Ok(()),
        _ => Err(ToolError::failed(format!(
            "element {index} of snapshot {id} ({}) is gone from the window; call get_window_state again",
            describe(node)
        ))),
    }
}

/// Text read by OCR in an older snapshot is still on screen where it was: the window, read
/// again, shows the same text over the same place (else the point may hold something else).
async fn text_still_there(
    p: &dyn Platform,
    node: &AxNode,
    element: ElementRef<'_>,
    (pid, window): (u32, &WindowInfo),
) -> Result<(), ToolError> {
    let tree = crate::snapshot::text::window_tree(p, pid, window).await?;
    let there = |n: &AxNode| {
        n.name == node.name
            && n.frame
                .zip(node.frame)
                .is_some_and(|(a, b)| a.intersects(&b))
    };
    if tree.nodes.iter().any(there) {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "element {} of snapshot {} ({}) no longer shows there; call get_window_state again",
        element.index,
        element.snapshot_id.unwrap_or_default(),
        describe(node)
    )))
}

/// The target an address names: an element of a snapshot (re-read when the snapshot is
/// older than the window's latest), a point in a window, or the window.
pub(super) async fn resolve(
    ctx: &ToolContext,
    platform: &dyn Platform,
    address: &Address,
) -> Result<Target, ToolError> {
    let (pid, window_id) = (address.pid, address.window_id);
    if let Some(element) = address.element()? {
        let window_id = window_id.expect("checked by Address::check");
        let (node, older, snapshot) = snapshot_element(ctx, pid, window_id, element)?;
        let window = window_of(platform, Some(pid), window_id).await?;
        if older {
            still_the_same(platform, &node, element, (pid, &window)).await?;
        }
        return Ok(Target::Element {
            window,
            index: element.index,
            node: Box::new(node),
            snapshot,
        });
    }
    let window = target_window(platform, pid, window_id).await?;
    if let (Some(x), Some(y)) = (address.x, address.y) {
        // x, y are in the screenshot's pixels, which max_image_dimension may have scaled.
        let scale = screenshot_scale(ctx, &window);
        let (w, h) = (
            window.bounds.width as f64 * scale,
            window.bounds.height as f64 * scale,
        );
        if x >= w || y >= h {
            return Err(ToolError::invalid(format!(
                "({x}, {y}) is outside the window's {}x{} screenshot",
                w.round(),
                h.round()
            )));
        }
        return Ok(Target::Pixel {
            window,
            x: (x / scale) as i32,
            y: (y / scale) as i32,
        });
    }
    Ok(Target::Window { window })
}

/// The factor between the window's screenshot (as get_window_state returns it) and the
/// window itself.
pub(super) fn screenshot_scale(ctx: &ToolContext, window: &WindowInfo) -> f64 {
    ctx.image_scale(
        window.bounds.width.max(0) as u32,
        window.bounds.height.max(0) as u32,
        None,
    )
}

/// The window's last snapshot tree (what the caller saw), or a fresh walk when there is none.
pub(super) async fn tree_for(
    ctx: &ToolContext,
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> Result<crate::platform::AxTree, PlatformError> {
    match ctx.snapshot(pid, window.window_id) {
        Some(s) => Ok(s.tree.clone()),
        None => crate::snapshot::text::window_tree(platform, pid, window).await,
    }
}

/// The smallest node whose frame holds a window-local point (actionable ones only, if asked).
pub(super) fn node_at(
    tree: &crate::platform::AxTree,
    x: i32,
    y: i32,
    actionable_only: bool,
) -> Option<usize> {
    (0..tree.nodes.len())
        .filter(|i| !actionable_only || tree.nodes[*i].actionable)
        .filter(|i| tree.nodes[*i].frame.is_some_and(|f| f.contains(x, y)))
        .min_by_key(|i| {
            tree.nodes[*i]
                .frame
                .map(|f| f.width as i64 * f.height as i64)
                .unwrap_or(i64::MAX)
        })
}

/// The smallest actionable element under a window-local point.
pub(super) async fn element_at(
    ctx: &ToolContext,
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    x: i32,
    y: i32,
) -> Option<AxNode> {
    let mut tree = tree_for(ctx, platform, pid, window).await.ok()?;
    let i = node_at(&tree, x, y, true)?;
    Some(tree.nodes.swap_remove(i))
}

/// The element an action result names: index, role, name and frame, in get_window_state's
/// field names (its element, `snapshot::element_json`, also has its value, states and
/// actions).
pub(super) fn element_brief(index: Option<usize>, n: &AxNode) -> Value {
    let frame = n
        .frame
        .map(|f| json!({ "x": f.x, "y": f.y, "w": f.width, "h": f.height }));
    json!({ "element_index": index, "role": n.role, "name": n.name, "frame": frame })
}

pub(super) fn describe(n: &AxNode) -> String {
    if n.name.is_empty() {
        n.role.clone()
    } else {
        format!("{} \"{}\"", n.role, n.name)
    }
}

pub(super) fn pick_action(
    node: &AxNode,
    requested: Option<&str>,
    preferred: &[&str],
) -> Result<Option<String>, ToolError> {
    if let Some(a) = requested {
        return node
            .actions
            .iter()
            .find(|n| n.eq_ignore_ascii_case(a))
            .cloned()
            .map(Some)
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "`action`: {} has no action `{a}` (it has: {})",
                    describe(node),
                    if node.actions.is_empty() {
                        "none".into()
                    } else {
                        node.actions.join(", ")
                    }
                ))
            });
    }
    Ok(preferred.iter().find_map(|p| {
        node.actions
            .iter()
            .find(|a| a.eq_ignore_ascii_case(p))
            .cloned()
    }))
}
