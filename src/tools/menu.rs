//! `invoke_menu`: runs an application menu item by its path of labels ("File", "Save
//! As…"), resolved one level at a time in the live accessibility tree and run through its
//! accessibility action, never by pixel. A level the app builds only when opened is opened
//! (its own action) and read again. A missing, ambiguous or disabled step fails, naming it.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolOutput, ToolSpec, window_of};
use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;
use crate::platform::{AxTree, Platform, WindowInfo};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokeMenuArgs {
    /// Process that owns the window.
    pub pid: u32,
    /// The window whose menus to use.
    pub window_id: u64,
    /// Menu labels from the top, e.g. ["File", "Save As…"] (1-16, matched exactly after trimming).
    pub path: Vec<String>,
}

pub struct InvokeMenu;

/// Roles a menu level is made of.
const MENU_ROLES: &[&str] = &[
    "menu",
    "menu_item",
    "check_menu_item",
    "radio_menu_item",
    "tearoff_menu_item",
    "menu_bar",
    "popup_menu",
];
/// Actions that open a menu or run an item, in order of preference.
const MENU_ITEM_ACTIONS: &[&str] = &["click", "activate", "press", "open"];
/// How long a level the app builds on opening takes to appear.
const OPEN_WAIT: Duration = Duration::from_millis(1500);

#[async_trait]
impl ToolSpec for InvokeMenu {
    type Args = InvokeMenuArgs;
    const NAME: &'static str = "invoke_menu";
    const DESCRIPTION: &'static str = "Run an application menu item by its path of labels, e.g. [\"File\", \"Say hello\"]: each level found among the menus of the window (labels exact after trimming), opened when the app builds it only then, the last item run through its accessibility action; never by pixel. A missing, ambiguous or disabled step fails, naming it and what is there.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["menu.path.invoke", "accessibility.menu.native"],
        risk: Risk::R1,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    fn check(a: &InvokeMenuArgs) -> Result<(), ToolError> {
        if a.path.is_empty() || a.path.len() > 16 {
            return Err(ToolError::invalid(format!(
                "`path`: 1 to 16 labels, got {}",
                a.path.len()
            )));
        }
        if let Some(i) = a.path.iter().position(|s| s.trim().is_empty()) {
            return Err(ToolError::invalid(format!("`path[{i}]`: empty label")));
        }
        Ok(())
    }

    async fn run(&self, ctx: &ToolContext, a: InvokeMenuArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let window = window_of(p, Some(a.pid), a.window_id).await?;
        // The chain of (label, name path) resolved so far; each level is looked for under
        // the node the previous one resolved to, in a fresh read.
        let mut parent: Option<Vec<String>> = None;
        for (depth, label) in a.path.iter().enumerate() {
            let label = label.trim();
            let last = depth + 1 == a.path.len();
            let (tree, node) = find_level(p, a.pid, &window, parent.as_deref(), label).await?;
            let n = &tree.nodes[node];
            if !n.states.iter().any(|s| s == "sensitive" || s == "enabled") {
                return Err(ToolError::failed(format!(
                    "menu item {label:?} is disabled"
                )));
            }
            let has_level = !tree.nodes[node].children.is_empty();
            if last || !has_level {
                let action = MENU_ITEM_ACTIONS
                    .iter()
                    .find_map(|want| n.actions.iter().find(|a| a.eq_ignore_ascii_case(want)))
                    .ok_or_else(|| {
                        ToolError::failed(format!(
                            "menu item {label:?} has no action to run (it has: {})",
                            n.actions.join(", ")
                        ))
                    })?
                    .clone();
                p.do_action(&n.handle, &action).await?;
            }
            let mut path = parent.unwrap_or_default();
            path.push(label.to_string());
            parent = Some(path);
        }
        let path = a.path.join(" > ");
        Ok(ToolOutput::new(
            format!("invoked {path}"),
            json!({ "pid": a.pid, "window_id": a.window_id, "path": a.path,
                    "route": "element_action", "effect": "unverifiable" }),
        ))
    }
}

/// The menu node labelled `label` under the level `parent` names (None: the window's top
/// menus), waiting (bounded) for a level the app builds on opening.
async fn find_level(
    p: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    parent: Option<&[String]>,
    label: &str,
) -> Result<(AxTree, usize), ToolError> {
    let deadline = Instant::now() + OPEN_WAIT;
    loop {
        let tree = p.accessibility_tree(pid, window).await?;
        let scope = match parent {
            None => Some(0),
            Some(path) => resolve(&tree, path),
        };
        if let Some(scope) = scope {
            let found = menu_children(&tree, scope, parent.is_none());
            let named: Vec<usize> = found
                .iter()
                .copied()
                .filter(|&i| tree.nodes[i].name.trim() == label)
                .collect();
            match named.as_slice() {
                [one] => return Ok((tree, *one)),
                [] if Instant::now() < deadline && parent.is_some() => {}
                [] => {
                    let there: Vec<String> = found
                        .iter()
                        .map(|&i| format!("{:?}", tree.nodes[i].name.trim()))
                        .collect();
                    return Err(ToolError::failed(format!(
                        "no menu item {label:?}{} (there: {})",
                        parent
                            .map(|p| format!(" under {:?}", p.join(" > ")))
                            .unwrap_or_default(),
                        if there.is_empty() {
                            "nothing".into()
                        } else {
                            there.join(", ")
                        }
                    )));
                }
                many => {
                    return Err(ToolError::failed(format!(
                        "menu item {label:?} is ambiguous: {} items carry it",
                        many.len()
                    )));
                }
            }
        } else if Instant::now() >= deadline {
            return Err(ToolError::failed(format!(
                "menu {:?} is gone",
                parent.unwrap_or_default().join(" > ")
            )));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// The node a path of menu labels names, from the window's top menus down.
fn resolve(tree: &AxTree, path: &[String]) -> Option<usize> {
    let mut at = 0;
    for (depth, label) in path.iter().enumerate() {
        let found = menu_children(tree, at, depth == 0);
        let named: Vec<usize> = found
            .into_iter()
            .filter(|&i| tree.nodes[i].name.trim() == label)
            .collect();
        at = *named.first()?;
    }
    Some(at)
}

/// The menu nodes of the level below `at`: its nearest menu descendants (through nodes
/// that only group them). From the window (`top`), menus anywhere, not inside another
/// menu; a window with none (GTK 4.8 exposes its menu buttons as plain buttons) offers its
/// buttons, whose popovers are read as the next level.
fn menu_children(tree: &AxTree, at: usize, top: bool) -> Vec<usize> {
    let menus = nearest(tree, at, |i| {
        let role = tree.nodes[i].role.as_str();
        MENU_ROLES.contains(&role) && role != "menu_bar" && role != "popup_menu"
    });
    if top && menus.is_empty() {
        return nearest(tree, at, |i| {
            tree.nodes[i].role.ends_with("button") && !tree.nodes[i].name.trim().is_empty()
        });
    }
    menus
}

/// The nearest descendants of `at` that `is` accepts (not looking inside them).
fn nearest(tree: &AxTree, at: usize, is: impl Fn(usize) -> bool) -> Vec<usize> {
    let is_menu = is;
    let mut out = Vec::new();
    let mut stack: Vec<usize> = tree.nodes[at].children.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        if is_menu(i) {
            out.push(i);
        } else {
            stack.extend(tree.nodes[i].children.iter().rev());
        }
    }
    out
}
