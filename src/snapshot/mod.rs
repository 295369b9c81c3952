//! What one read of a window shows: the [`Snapshot`] that element indices refer to, and
//! the window state as cua reports it (get_window_state's structured result, its indexed
//! Markdown tree). The tool returns it, recordings store it, and the recorder's settle loop
//! and replay's postconditions read it live; all of them go through this one shape.

pub mod busy;
pub mod incidental;
pub mod markdown;
pub mod text;

use serde_json::json;

use crate::platform::{AxNode, AxTree, Platform, WindowInfo};

/// An accessibility snapshot of one (pid, window), which element indices refer to.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub snapshot_id: String,
    pub pid: u32,
    pub window_id: u64,
    pub tree: AxTree,
    /// element_index → node index in `tree.nodes`.
    pub elements: Vec<usize>,
}

/// Roles that only group other nodes; unnamed and inert, they are left out of the Markdown
/// (their children move up a level) to keep it readable.
pub const STRUCTURAL_ROLES: &[&str] = &[
    "filler",
    "panel",
    "section",
    "unknown",
    "invalid",
    "scroll_pane",
    "viewport",
    "layered_pane",
    "split_pane",
    "grouping",
    "redundant_object",
    "box",
    "internal_frame",
    "root_pane",
    "glass_pane",
];
/// States an action passes through on its way to its effect, not the effect: Qt's button
/// action presses the button at once and clicks it 100 ms later (a read-back that took the
/// press for the effect said `confirmed` with the counter still unchanged), and a click
/// focuses what it clicks before the page acts on it (Chromium sends the focus first).
pub const PASSING_STATES: &[&str] = &["pressed", "armed", "focused"];

/// Whether two window states (as [`state_of`] writes them) differ only in
/// [`PASSING_STATES`]: the same tree, line for line, once those are taken out.
pub fn same_but_passing(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    let lines = |s: &serde_json::Value| -> Option<Vec<String>> {
        let md = s["tree_markdown"].as_str()?;
        Some(
            md.lines()
                .map(|l| markdown::without_states(l, PASSING_STATES))
                .collect(),
        )
    };
    match (lines(a), lines(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// States worth showing on a Markdown line.
const SHOWN_STATES: &[&str] = &[
    "checked",
    "pressed",
    "selected",
    "focused",
    "expanded",
    "indeterminate",
    // Scrolled out of its view (GTK 3): in the tree, not on screen.
    "offscreen",
    // Not showing, listed on request (get_window_state's include_hidden).
    "hidden",
];
const MAX_MARKDOWN_VALUE: usize = 200;

/// get_window_state's structured result for a tree (no screenshot, no snapshot id), and
/// the node of each element index.
pub fn state_of(pid: u32, window: &WindowInfo, tree: &AxTree) -> (serde_json::Value, Vec<usize>) {
    let (mut markdown, elements) = render_markdown(tree);
    let by_ocr = text::read_by_ocr(tree);
    if by_ocr {
        markdown = format!("{}\n{markdown}", text::OCR_NOTE);
    }
    let element_json: Vec<_> = elements
        .iter()
        .enumerate()
        .map(|(index, &n)| {
            let mut e = element_json(index, &tree.nodes[n]);
            if e["label"].is_null() {
                if let Some(text) = inner_text(tree, n) {
                    e["label"] = json!(text);
                }
            }
            e
        })
        .collect();
    let mut structured = json!({
        "pid": pid,
        "window_id": window.window_id,
        "app_name": window.app_name,
        "title": window.title,
        "tree_markdown": markdown,
        "elements": element_json,
        "element_count": elements.len(),
    });
    if by_ocr {
        structured["text_source"] = json!(text::OCR_SOURCE);
    }
    if elements.is_empty() {
        structured["degraded"] = json!(true);
        structured["degraded_reason"] = json!(tree
            .warning
            .clone()
            .unwrap_or_else(|| "the accessibility walk found no actionable element".to_string()));
    }
    (structured, elements)
}

/// The window's tree markdown as it reads now ([`window_state_json`]), or why it could
/// not be read: what a replayed turn and an inline step compare their change from.
pub async fn window_markdown(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> Result<String, String> {
    let state = window_state_json(platform, pid, window).await;
    match state["tree_markdown"].as_str() {
        Some(md) => Ok(md.to_string()),
        None => Err(state["error"].as_str().unwrap_or("no tree").to_string()),
    }
}

/// A window's state as get_window_state reports it, without touching the element cache
/// (the recorder uses this: the caller's indices must keep meaning what they meant), plus
/// the frames of its busy widgets (`busy`, see [`crate::snapshot::busy`]) and of its
/// toolbars and status bars (`regions`, see [`crate::snapshot::incidental`]) when it has any.
pub async fn window_state_json(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> serde_json::Value {
    match text::window_tree(platform, pid, window).await {
        Ok(tree) => {
            let mut state = state_of(pid, window, &tree).0;
            // Busy widgets' frames, indexed or not: a turn's stability and the diff leave
            // them out.
            let busy = busy::listed(&tree);
            if !busy.is_empty() {
                state["busy"] = json!(busy);
            }
            let regions = incidental::listed(&tree);
            if !regions.is_empty() {
                state["regions"] = json!(regions);
            }
            state
        }
        Err(e) => json!({ "pid": pid, "window_id": window.window_id, "error": e.to_string() }),
    }
}

/// The nodes of a tree that `keep` picks and that have a frame, as a recorded state lists
/// them beside its elements (`busy`, `regions`): role, name and window-local frame.
pub(crate) fn framed_nodes(
    tree: &AxTree,
    keep: impl Fn(&AxNode) -> bool,
) -> Vec<serde_json::Value> {
    tree.nodes
        .iter()
        .filter(|n| keep(n))
        .filter_map(|n| {
            let f = n.frame?;
            Some(json!({
                "role": n.role,
                "name": n.name,
                "frame": { "x": f.x, "y": f.y, "w": f.width, "h": f.height },
            }))
        })
        .collect()
}

/// One element as get_window_state reports it, in cua-driver's field names
/// (`element_index`, `label`, `frame {x, y, w, h}`) so its clients read it as they read
/// cua-driver's; `name` is the exact accessible name, `label` what a reader calls it (the
/// name, else the value; [`state_of`] adds the text inside an element that has neither).
pub fn element_json(index: usize, n: &AxNode) -> serde_json::Value {
    // The platform reads one character more than it keeps, so a cut value says so.
    let max = crate::platform::MAX_TEXT_CHARS;
    let cut = n.value.as_ref().filter(|v| v.chars().nth(max).is_some());
    let value = match cut {
        Some(v) => Some(v.chars().take(max).collect::<String>()),
        None => n.value.clone(),
    };
    let label = Some(n.name.as_str())
        .filter(|s| !s.is_empty())
        .or(value.as_deref().filter(|s| !s.is_empty()));
    let mut e = json!({
        "element_index": index,
        "role": n.role,
        "name": n.name,
        "label": label,
        "value": value,
        "states": n.states,
        "actions": n.actions,
        "frame": n.frame.map(|f| json!({ "x": f.x, "y": f.y, "w": f.width, "h": f.height })),
    });
    if let Some(c) = n.confidence {
        e["confidence"] = json!((c * 10.0).round() / 10.0);
    }
    if cut.is_some() {
        e["value_truncated"] = json!(true);
    }
    if n.value_unknown {
        // Said only where it is so: `value: null` alone means the element has no value.
        e["value_known"] = json!(false);
    }
    e
}

/// What a reader calls node `n`, as elements' `label` says: its name, else its value, else
/// the text inside it ([`inner_text`]).
pub fn label_of(tree: &AxTree, n: usize) -> Option<String> {
    let node = &tree.nodes[n];
    Some(node.name.clone())
        .filter(|s| !s.is_empty())
        .or_else(|| node.value.clone().filter(|v| !v.is_empty()))
        .or_else(|| inner_text(tree, n))
}

/// What a person reads on an unnamed element: the names of the plain (not actionable)
/// nodes inside it, in order (a GTK 4 list row's label child), at most a line's worth.
fn inner_text(tree: &AxTree, n: usize) -> Option<String> {
    const MAX: usize = 120;
    let mut words: Vec<&str> = Vec::new();
    let mut stack: Vec<usize> = tree.nodes[n].children.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        let node = &tree.nodes[i];
        if node.actionable {
            continue;
        }
        if !node.name.is_empty() {
            words.push(&node.name);
        }
        stack.extend(node.children.iter().rev());
    }
    let text = words.join(" ");
    (!text.is_empty()).then(|| text.chars().take(MAX).collect())
}

/// An element's index in a state: `element_index`, or `index` in states recorded before
/// cua wrote cua-driver's field names.
pub fn element_index(e: &serde_json::Value) -> Option<u64> {
    e["element_index"].as_u64().or_else(|| e["index"].as_u64())
}

/// Sets `state`'s `elements` to those of `elements` that `keep` accepts, renumbered from 0
/// as their tree lines are when the others' lines are left out, and `element_count` to
/// match.
pub fn keep_elements(
    state: &mut serde_json::Value,
    elements: &[serde_json::Value],
    keep: impl Fn(&serde_json::Value) -> bool,
) {
    let kept: Vec<serde_json::Value> = elements
        .iter()
        .filter(|e| keep(e))
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            for key in ["element_index", "index"] {
                if e.get(key).is_some() {
                    e[key] = serde_json::Value::from(i);
                }
            }
            e
        })
        .collect();
    state["element_count"] = serde_json::Value::from(kept.len());
    state["elements"] = serde_json::Value::Array(kept);
}

/// Renders the tree as Markdown and returns, in index order, the node of each element.
pub fn render_markdown(tree: &AxTree) -> (String, Vec<usize>) {
    let mut out = String::new();
    let mut elements = Vec::new();
    if tree.nodes.is_empty() {
        return (out, elements);
    }
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, depth)) = stack.pop() {
        let n = &tree.nodes[i];
        let shown = n.actionable
            || !n.name.is_empty()
            || n.value.is_some()
            || n.value_unknown
            || !STRUCTURAL_ROLES.contains(&n.role.as_str());
        let child_depth = if shown {
            out.push_str(&"  ".repeat(depth));
            out.push_str("- ");
            if n.actionable {
                out.push_str(&format!("[{}] ", elements.len()));
                elements.push(i);
            }
            out.push_str(&n.role);
            if !n.name.is_empty() {
                out.push_str(&format!(" \"{}\"", escape(&n.name, usize::MAX)));
            }
            if let Some(v) = &n.value {
                out.push_str(&format!(" value=\"{}\"", escape(v, MAX_MARKDOWN_VALUE)));
            } else if n.value_unknown {
                // What the toolkit does not expose is unknown, not empty.
                out.push_str(" value=?");
            }
            let flags: Vec<&str> = n
                .states
                .iter()
                .map(String::as_str)
                .filter(|s| SHOWN_STATES.contains(s))
                .collect();
            let disabled =
                n.actionable && !n.states.iter().any(|s| s == "sensitive" || s == "enabled");
            if !flags.is_empty() || disabled {
                let mut all = flags;
                if disabled {
                    all.push("disabled");
                }
                out.push_str(&format!(" ({})", all.join(", ")));
            }
            if n.actionable && !n.actions.is_empty() {
                out.push_str(&format!(" [actions=[{}]]", n.actions.join(", ")));
            }
            out.push('\n');
            depth + 1
        } else {
            depth
        };
        for c in n.children.iter().rev() {
            stack.push((*c, child_depth));
        }
    }
    (out, elements)
}

/// A name as a Markdown line quotes it (without the quotes): how a line that names an
/// element is found again by its name.
pub fn escape_name(name: &str) -> String {
    escape(name, usize::MAX)
}

fn escape(s: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k >= max_chars {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The tree cut to `max_depth` levels below the window and `max_nodes` nodes in walk
/// order (get_window_state's bounds for huge trees), or None when nothing is cut.
pub fn bounded(
    tree: &AxTree,
    max_depth: Option<usize>,
    max_nodes: Option<usize>,
) -> Option<AxTree> {
    if tree.nodes.is_empty() {
        return None;
    }
    let (max_depth, max_nodes) = (
        max_depth.unwrap_or(usize::MAX),
        max_nodes.unwrap_or(usize::MAX),
    );
    let mut kept: Vec<AxNode> = Vec::new();
    // (node in `tree`, its parent in `kept`, depth)
    let mut stack = vec![(0usize, None::<usize>, 0usize)];
    let mut cut = false;
    while let Some((i, parent, depth)) = stack.pop() {
        if depth > max_depth || kept.len() >= max_nodes.max(1) {
            cut = true;
            continue;
        }
        let at = kept.len();
        let mut node = tree.nodes[i].clone();
        node.parent = parent;
        node.children.clear();
        kept.push(node);
        if let Some(p) = parent {
            kept[p].children.push(at);
        }
        for &c in tree.nodes[i].children.iter().rev() {
            stack.push((c, Some(at), depth + 1));
        }
    }
    cut.then(|| AxTree {
        nodes: kept,
        warning: tree.warning.clone(),
        left_out: tree.left_out.clone(),
        absence: tree.absence,
    })
}

/// The element indices on a (filtered) Markdown tree's lines.
pub fn indices_in_markdown(markdown: &str) -> std::collections::HashSet<u64> {
    markdown
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("- [")?;
            rest.split_once(']')?.0.parse().ok()
        })
        .collect()
}

/// A Markdown tree line without its indentation, bullet and element index: what the line
/// says of its element, which is what a query is matched against (an index is no content:
/// `"6"` must not keep `[16] button "ll"`).
fn line_content(line: &str) -> &str {
    let rest = line.trim_start();
    let rest = rest.strip_prefix("- ").unwrap_or(rest);
    rest.strip_prefix('[')
        .and_then(|r| r.split_once("] "))
        .filter(|(index, _)| index.parse::<u64>().is_ok())
        .map_or(rest, |(_, content)| content)
}

/// Keeps the lines whose content (not their element index) contains `query`
/// (case-insensitive), and the lines above them in the tree.
pub fn filter_markdown(markdown: &str, query: &str) -> String {
    let q = query.to_lowercase();
    let lines: Vec<&str> = markdown.lines().collect();
    let depth = |l: &str| (l.len() - l.trim_start().len()) / 2;
    let mut keep = vec![false; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        if !line_content(line).to_lowercase().contains(&q) {
            continue;
        }
        keep[i] = true;
        let mut d = depth(line);
        for j in (0..i).rev() {
            if d == 0 {
                break;
            }
            if depth(lines[j]) < d {
                keep[j] = true;
                d = depth(lines[j]);
            }
        }
    }
    lines
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(l, _)| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A node with the `sensitive` state, and the `click` action when `actionable`.
    pub(crate) fn sensitive(
        role: &str,
        name: &str,
        actionable: bool,
        children: Vec<usize>,
    ) -> AxNode {
        let node = AxNode::test(role, name)
            .with_states(&["sensitive"])
            .in_tree(None, children);
        match actionable {
            true => node.with_actions(&["click"]),
            false => node.inert(),
        }
    }

    #[test]
    fn markdown_indexes_actionable_nodes_and_hides_inert_containers() {
        let tree = AxTree {
            nodes: vec![
                sensitive("frame", "Calc", false, vec![1]),
                sensitive("panel", "", false, vec![2, 3]),
                sensitive("push_button", "7", true, vec![]),
                sensitive("label", "Result", false, vec![]),
            ],
            warning: None,
            left_out: Vec::new(),
            absence: None,
        };
        let (md, elements) = render_markdown(&tree);
        assert_eq!(
            md,
            "- frame \"Calc\"\n  - [0] push_button \"7\" [actions=[click]]\n  - label \"Result\"\n"
        );
        assert_eq!(elements, vec![2]);
    }

    #[test]
    fn an_unexposed_value_reads_as_unknown_and_an_empty_one_as_empty() {
        let mut unknown = sensitive("text", "Name", true, vec![]);
        unknown.value_unknown = true;
        let mut empty = sensitive("text", "Notes", true, vec![]);
        empty.value = Some(String::new());
        let tree = AxTree {
            nodes: vec![
                sensitive("frame", "Form", false, vec![1, 2]),
                unknown,
                empty,
            ],
            warning: None,
            left_out: Vec::new(),
            absence: None,
        };
        let (md, elements) = render_markdown(&tree);
        assert!(md.contains("[0] text \"Name\" value=? [actions"), "{md}");
        assert!(
            md.contains("[1] text \"Notes\" value=\"\" [actions"),
            "{md}"
        );
        let name = element_json(0, &tree.nodes[elements[0]]);
        assert_eq!(name["value"], serde_json::Value::Null);
        assert_eq!(name["value_known"], json!(false));
        let notes = element_json(1, &tree.nodes[elements[1]]);
        assert_eq!(notes["value"], json!(""));
        assert!(notes.get("value_known").is_none(), "{notes}");
    }

    #[test]
    fn query_keeps_matches_and_their_ancestors_only() {
        let md = "- frame \"A\"\n  - panel \"P\"\n    - [0] button \"Seven\"\n  - label \"x\"\n";
        assert_eq!(
            filter_markdown(md, "seven"),
            "- frame \"A\"\n  - panel \"P\"\n    - [0] button \"Seven\"\n"
        );
        assert_eq!(filter_markdown(md, "nothing"), "");
    }

    #[test]
    fn query_matches_what_a_line_says_not_its_element_index() {
        // An Xaw calculator read by OCR: "6" kept [6], [16], [26] and [36] beside [37] "6".
        let md = "- frame \"xcalc\"\n  - [6] ocr_text \"x2\"\n  - [16] ocr_text \"ll\"\n  \
                  - [37] ocr_text \"6\"\n  - label \"[6] is not an index here\"\n";
        assert_eq!(
            filter_markdown(md, "6"),
            "- frame \"xcalc\"\n  - [37] ocr_text \"6\"\n  - label \"[6] is not an index here\"\n"
        );
    }
}
