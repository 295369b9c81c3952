use super::*;
use crate::platform::{AxNode, AxTree, Rect};

/// A window whose panels hold the given buttons (name, x), in order.
fn window(panels: &[(&str, &[(&str, i32)])]) -> Snapshot {
    let mut nodes = vec![
        AxNode::test("frame", "w")
            .in_tree(None, vec![])
            .with_frame(Rect::new(0, 0, 10, 10)),
    ];
    nodes[0].actionable = false;
    let mut elements = Vec::new();
    for (panel, buttons) in panels {
        let p = nodes.len();
        nodes.push(
            AxNode::test("panel", panel)
                .in_tree(Some(0), vec![])
                .with_frame(Rect::new(0, 0, 10, 10)),
        );
        nodes[p].actionable = false;
        nodes[0].children.push(p);
        for (name, x) in *buttons {
            let b = nodes.len();
            nodes.push(
                AxNode::test("push_button", name)
                    .in_tree(Some(p), vec![])
                    .with_frame(Rect::new(*x, 0, 10, 10)),
            );
            nodes[p].children.push(b);
            elements.push(b);
        }
    }
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
        elements,
    }
}

fn form() -> Snapshot {
    window(&[("Order", &[("Add", 0), ("Clear", 100)])])
}

fn locator_of(snap: &Snapshot, element: usize) -> Locator {
    Locator::of(&snap.tree, snap.elements[element], element)
}

#[test]
fn the_exact_path_is_no_heal() {
    let snap = form();
    let add = locator_of(&snap, 0);
    let found = find(&snap, &add, None).unwrap();
    assert_eq!(
        (found.index, found.rule, found.heal),
        (0, LocatorRule::ExactPath, None)
    );
}

#[test]
fn a_moved_element_is_found_by_role_and_name_and_says_so() {
    let add = locator_of(&form(), 0);
    let reordered = window(&[("Order", &[("Clear", 0), ("Add", 100)])]);
    let found = find(&reordered, &add, None).unwrap();
    assert_eq!((found.index, found.rule), (1, LocatorRule::RoleName));
    assert_eq!(
        found.heal.as_deref(),
        Some("push_button \"Add\" found by role and name (its place in the window changed)")
    );
}

#[test]
fn a_relabelled_element_heals_by_its_loose_name_and_names_the_new_one() {
    let add = locator_of(&form(), 0);
    let relabelled = window(&[("Order", &[("Clear", 0), ("Add item", 100)])]);
    let found = find(&relabelled, &add, None).unwrap();
    assert_eq!((found.index, found.rule), (1, LocatorRule::LooseName));
    assert_eq!(
        found.heal.as_deref(),
        Some("push_button \"Add\" → push_button \"Add item\" (name contains)")
    );
    assert_eq!(found.name, "Add item");
    for (live, why) in [
        ("_ADD", "case, spacing or mnemonic"),
        ("  add ", "case, spacing or mnemonic"),
        ("Add…", "case, spacing or mnemonic"),
    ] {
        let snap = window(&[("Order", &[(live, 0), ("Clear", 100)])]);
        let found = find(&snap, &add, None).unwrap();
        assert!(found.heal.unwrap().ends_with(&format!("({why})")), "{live}");
    }
    // Words, not letters: "Address" does not hold "Add".
    assert_eq!(loose_match("Add", "Address"), None);
    assert_eq!(loose_match("Add item", "Add"), Some("name contained"));
}

#[test]
fn an_element_of_another_name_is_never_pressed() {
    let add = locator_of(&form(), 0);
    let removed = window(&[("Order", &[("Clear", 100)])]);
    assert_eq!(
        find(&removed, &add, None).unwrap_err(),
        "no push_button \"Add\"; nearest is push_button \"Clear\" (not pressed)"
    );
}

#[test]
fn the_same_name_under_another_role_is_the_last_rung() {
    let add = locator_of(&form(), 0);
    let mut menu = window(&[("Order", &[("Clear", 100), ("Add", 0)])]);
    let add_node = menu.elements[1];
    menu.tree.nodes[add_node].role = "menu_item".into();
    let found = find(&menu, &add, None).unwrap();
    assert_eq!((found.index, found.rule), (1, LocatorRule::SameName));
    assert_eq!(
        found.heal.as_deref(),
        Some("push_button \"Add\" → menu_item \"Add\" (same name, another role)")
    );
}

#[test]
fn look_alikes_are_told_apart_by_ancestors_and_neighbours_or_refused() {
    let add = locator_of(&form(), 0);
    // A second "Add" in another panel, before the recorded one: the recorded panel tells.
    let quick = window(&[
        ("Quick", &[("Add", 0)]),
        ("Order", &[("Clear", 100), ("Add", 200)]),
    ]);
    assert_eq!(find(&quick, &add, None).unwrap().index, 2);
    // A second "Add" inserted just before the recorded one, in its panel: the recorded
    // place is the new one's now, but the recorded window had one "Add", so places are not
    // trusted. Between "Save" and "Clear" each keeps one recorded neighbour: a tie, refused.
    let recorded_form = "- frame \"w\"\n  - panel \"Order\"\n    - [0] push_button \"Save\"\n    - [1] push_button \"Add\"\n    - [2] push_button \"Clear\"\n";
    let surroundings = Neighbours::in_markdown(recorded_form, 1);
    let add = locator_of(
        &window(&[("Order", &[("Save", 0), ("Add", 50), ("Clear", 100)])]),
        1,
    );
    let twice = window(&[(
        "Order",
        &[("Save", 0), ("Add", 50), ("Add", 75), ("Clear", 100)],
    )]);
    let e = find(&twice, &add, Some(&surroundings)).unwrap_err();
    assert!(
        e.starts_with("2 elements fit push_button \"Add\" and nothing recorded tells them apart: [1] push_button \"Add\" at (50, 0), [2] push_button \"Add\" at (75, 0)"),
        "{e}"
    );
    // Without the recording's tree, the recorded place is all there is.
    assert_eq!(
        find(&twice, &add, None).unwrap().rule,
        LocatorRule::ExactPath
    );
    let add = locator_of(&form(), 0);
    // The recorded neighbours tell them apart when only one stands between the same ones.
    let recorded = Neighbours {
        before: Some(("button".into(), "Save".into())),
        after: Some(("button".into(), "Clear".into())),
        look_alikes: 1,
    };
    let between = window(&[(
        "Order",
        &[("Add", 0), ("Save", 20), ("Add", 50), ("Clear", 100)],
    )]);
    assert_eq!(find(&between, &add, Some(&recorded)).unwrap().index, 2);
}

#[test]
fn neighbours_are_read_from_a_recorded_tree() {
    let md = "- [0] window \"w\"\n  - panel \"A\"\n    - [1] push button \"Save\"\n    - [2] push button \"Add\"\n      - label \"Add\"\n    - [3] push button \"Clear\"\n  - panel \"B\"\n";
    let n = Neighbours::in_markdown(md, 2);
    assert_eq!(n.before, Some(("button".into(), "Save".into())));
    assert_eq!(n.after, Some(("button".into(), "Clear".into())));
    assert_eq!(n.look_alikes, 1);
    assert_eq!(Neighbours::in_markdown(md, 3).after, None);
    assert_eq!(Neighbours::in_markdown(md, 9), Neighbours::default());
}
