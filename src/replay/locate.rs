//! Finding a recorded element again in a live snapshot, where indices differ, for a
//! recording that kept no locator (the reference driver's and cua-driver's): through the
//! element's line in the before-state's tree_markdown, its role and name, its ancestors'
//! names, and its rank among look-alikes. Ours keep a locator, which the healing ladder
//! (heal.rs) resolves; both compare names with [`same_name`].

use crate::snapshot::Snapshot;
use crate::snapshot::markdown::{self, role_key};

/// Whether a recorded name designates a live one. Names recorded before cua read them as
/// a person does (untrimmed; GTK 4's doubled labels such as `"7 7"`) still match the
/// tidy name the platform gives today (`"7"`).
pub fn same_name(recorded: &str, live: &str) -> bool {
    recorded == live || crate::names::undoubled(recorded) == live
}

/// An element as a recorded tree_markdown shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownTarget {
    pub role: String,
    pub name: String,
    /// The names of its ancestors that have one, from the root down.
    pub ancestors: Vec<String>,
    /// How many elements before it in the recorded tree have its role and name.
    pub rank: usize,
}

impl MarkdownTarget {
    /// Element `index` of a recorded state's tree_markdown.
    pub fn in_markdown(md: &str, index: usize) -> Option<MarkdownTarget> {
        let lines = markdown::parse(md);
        let (line, ancestors) = markdown::element_with_ancestors(&lines, index)?;
        Some(MarkdownTarget {
            role: line.role.clone(),
            name: line.name.clone(),
            ancestors: ancestors
                .iter()
                .filter(|l| !l.name.is_empty())
                .map(|l| l.name.clone())
                .collect(),
            rank: markdown::rank(&lines, line),
        })
    }
}

/// The element index in `snapshot` that a markdown target designates: the elements with
/// its role and name (its name alone when drivers name the role differently), those
/// under the most of its named ancestors, and among look-alikes the one of its rank.
pub fn resolve_markdown(snapshot: &Snapshot, target: &MarkdownTarget) -> Result<usize, String> {
    let nodes = &snapshot.tree.nodes;
    let count = snapshot.elements.len();
    let node = |i: usize| &nodes[snapshot.elements[i]];
    let role = role_key(&target.role);
    let mut alike: Vec<usize> = (0..count)
        .filter(|&i| role_key(&node(i).role) == role && same_name(&target.name, &node(i).name))
        .collect();
    if alike.is_empty() && !target.name.is_empty() {
        alike = (0..count)
            .filter(|&i| same_name(&target.name, &node(i).name))
            .collect();
    }
    if alike.is_empty() && !target.name.is_empty() {
        // cua-driver names an unnamed element by its text (its `label`), and writes the
        // text's newlines raw, so its tree keeps the first line: a live element of the
        // role with no name whose text begins with that line.
        let first_line = |s: &str| s.lines().next().unwrap_or("").trim().to_string();
        let wanted = first_line(&target.name);
        alike = (0..count)
            .filter(|&i| node(i).name.is_empty() && role_key(&node(i).role) == role)
            .filter(|&i| {
                crate::snapshot::label_of(&snapshot.tree, snapshot.elements[i])
                    .is_some_and(|label| first_line(&label) == wanted)
            })
            .collect();
    }
    let ancestors_shared = |i: usize| {
        let mut names = Vec::new();
        let mut at = nodes[snapshot.elements[i]].parent;
        while let Some(p) = at {
            names.push(nodes[p].name.as_str());
            at = nodes[p].parent;
        }
        target
            .ancestors
            .iter()
            .filter(|a| names.contains(&a.as_str()))
            .count()
    };
    let shared: Vec<usize> = alike.iter().map(|&i| ancestors_shared(i)).collect();
    let Some(&best) = shared.iter().max() else {
        let mut closest: Vec<String> = (0..count)
            .filter(|&i| {
                let n = node(i);
                role_key(&n.role) == role
                    || (!target.name.is_empty()
                        && (n.name.contains(&target.name) || target.name.contains(&n.name)))
            })
            .take(3)
            .map(|i| format!("[{i}] {} \"{}\"", node(i).role, node(i).name))
            .collect();
        if closest.is_empty() {
            closest.push("none".into());
        }
        return Err(format!(
            "no element matches {} \"{}\" from the recorded tree_markdown (closest: {})",
            target.role,
            target.name,
            closest.join(", ")
        ));
    };
    // The one of its rank when that one is under the most shared ancestors, else the
    // first that is.
    let pick = match shared.get(target.rank) {
        Some(&s) if s == best => target.rank,
        _ => shared.iter().position(|&s| s == best).unwrap_or(0),
    };
    Ok(alike[pick])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::{AxNode, AxTree, Rect};

    #[test]
    fn names_recorded_before_tidy_names_still_match() {
        assert!(same_name("7 7", "7"));
        assert!(same_name("× ×", "×"));
        assert!(same_name("Open…  ", "Open…"));
        assert!(same_name("Go", "Go"));
        assert!(!same_name("7 7", "6"));
        assert!(!same_name("7", "7 7"));
        assert!(!same_name("Save as", "Save"));
    }

    /// frame > [panel A > button "1" x=0, button "1" x=100], [panel B > button "2" x=200]
    fn snapshot() -> Snapshot {
        let nodes = vec![
            AxNode::test("frame", "w")
                .in_tree(None, vec![1, 4])
                .with_frame(Rect::new(0, 0, 10, 10)),
            AxNode::test("panel", "A")
                .in_tree(Some(0), vec![2, 3])
                .with_frame(Rect::new(0, 0, 10, 10)),
            AxNode::test("push_button", "1")
                .in_tree(Some(1), vec![])
                .with_frame(Rect::new(0, 0, 10, 10)),
            AxNode::test("push_button", "1")
                .in_tree(Some(1), vec![])
                .with_frame(Rect::new(100, 0, 10, 10)),
            AxNode::test("panel", "B")
                .in_tree(Some(0), vec![5])
                .with_frame(Rect::new(0, 0, 10, 10)),
            AxNode::test("push_button", "2")
                .in_tree(Some(4), vec![])
                .with_frame(Rect::new(200, 0, 10, 10)),
        ];
        Snapshot {
            snapshot_id: "t".into(),
            pid: 1,
            window_id: 1,
            tree: AxTree {
                nodes,
                warning: None,
                left_out: Vec::new(),
                absence: None,
            },
            elements: vec![2, 3, 5],
        }
    }

    #[test]
    fn a_markdown_line_finds_its_element_by_role_name_ancestors_and_rank() {
        let snap = snapshot();
        let md = "- [0] window \"w\"\n  - panel \"A\"\n    - [1] push button \"1\"\n    - [2] push button \"1\"\n  - panel \"B\"\n    - [3] push button \"2\"\n";
        let second = MarkdownTarget::in_markdown(md, 2).unwrap();
        assert_eq!(second.ancestors, ["w", "A"]);
        assert_eq!(second.rank, 1);
        assert_eq!(resolve_markdown(&snap, &second), Ok(1));
        let two = MarkdownTarget::in_markdown(md, 3).unwrap();
        assert_eq!(resolve_markdown(&snap, &two), Ok(2));
        // Another driver's role word for the same element: the name decides.
        let renamed_role =
            MarkdownTarget::in_markdown(&md.replace("push button", "AXButton"), 3).unwrap();
        assert_eq!(resolve_markdown(&snap, &renamed_role), Ok(2));
        let gone = MarkdownTarget::in_markdown(&md.replace("\"2\"", "\"3\""), 3).unwrap();
        let e = resolve_markdown(&snap, &gone).unwrap_err();
        assert!(e.contains("no element matches push button \"3\""), "{e}");
        assert!(e.contains("[0] push_button \"1\""), "{e}");
    }
}
