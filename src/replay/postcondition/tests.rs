use super::*;

const BEFORE: &str =
    "- frame \"Calculator\"\n  - [0] button \"7\"\n  - label \"5\"\n  - [1] button \"8\"\n";
const AFTER: &str =
    "- frame \"Calculator\"\n  - [0] button \"7\"\n  - label \"58\"\n  - [1] button \"8\"\n";

fn post(before: &str, after: &str) -> Postcondition {
    Postcondition::between(before, after, Reading::default()).unwrap()
}

fn differences(post: &Postcondition, live_before: &str, live_after: &str) -> Vec<String> {
    let r = &post.reading;
    post.differences(&r.counts(live_before, false), &r.counts(live_after, false))
}

#[test]
fn the_recorded_change_made_again_passes_whatever_the_indices() {
    let p = post(BEFORE, AFTER);
    assert!(differences(&p, BEFORE, AFTER).is_empty());
    let shifted = AFTER.replace("[1] button", "[4] button");
    assert!(differences(&p, BEFORE, &shifted).is_empty());
    assert!(
        Postcondition::between(BEFORE, &BEFORE.replace("[1]", "[2]"), Reading::default()).is_none()
    );
}

#[test]
fn nothing_changed_names_what_is_missing() {
    let p = post(BEFORE, AFTER);
    assert_eq!(
        differences(&p, BEFORE, BEFORE),
        ["expected label \"58\", the app still shows label \"5\""]
    );
}

#[test]
fn another_value_in_the_element_s_place_is_a_contradiction() {
    let before = "- frame \"Order\"\n  - label \"Total: 0\"\n  - [0] button \"Add\"\n";
    let after = before.replace("Total: 0", "Total: 3");
    let p = post(before, &after);
    let wrong = before.replace("Total: 0", "Total: -3");
    assert_eq!(
        differences(&p, before, &wrong),
        ["expected label \"Total: 3\", the app shows label \"Total: -3\""]
    );
}

#[test]
fn a_change_made_twice_or_already_there_is_no_pass() {
    let before = "- frame \"Order\"\n  - list \"Items\"\n";
    let after = "- frame \"Order\"\n  - list \"Items\"\n    - list_item \"3 × apple\"\n";
    let p = post(before, after);
    let twice = format!("{after}    - list_item \"3 × apple\"\n");
    assert_eq!(
        differences(&p, before, &twice),
        ["expected list_item \"3 × apple\" once more, the app added it 2 times"]
    );
    // Already there before the dispatch (an earlier doubled click made it): the turn's
    // own change is nothing.
    assert_eq!(
        differences(&p, after, after),
        ["expected list_item \"3 × apple\", not shown"]
    );
}

#[test]
fn an_unrecorded_change_fails_too() {
    let before = "- frame\n  - [0] check_box \"Gift wrap\" (checked)\n  - label \"Total: 0\"\n";
    let after = "- frame\n  - [0] check_box \"Gift wrap\" (checked)\n  - label \"Total: 3\"\n";
    let p = post(before, after);
    let unchecked = after.replace(" (checked)", "");
    assert_eq!(
        differences(&p, before, &unchecked),
        [
            "the app also shows check_box \"Gift wrap\" (not recorded)",
            "check_box \"Gift wrap\" (checked) went away (not recorded)"
        ]
    );
}

#[test]
fn focus_actions_and_tool_tips_are_no_part_of_a_change() {
    let before = "- frame\n  - [0] text \"Display\" value=\"7\" (focused) [actions=[copy]]\n";
    let after = "- frame\n  - [0] text \"Display\" value=\"7×\" (focused) [actions=[copy]]\n  - tool_tip \"Multiply\"\n    - label \"Multiply\"\n";
    let p = post(before, after);
    let live_before = before.replace(" (focused)", "");
    let live = "- frame\n  - [3] text \"Display\" value=\"7×\" [actions=[undo, copy]]\n";
    assert!(differences(&p, &live_before, live).is_empty());
    assert!(
        Postcondition::between(
            &before.replace(" (focused)", ""),
            before,
            Reading::default()
        )
        .is_none()
    );
    assert_eq!(
        without_incidentals("check_box \"Tax (net)\" (checked, focused) [actions=[click]]"),
        "check_box \"Tax (net)\" (checked)"
    );
    assert_eq!(without_incidentals("label \"(a)\""), "label \"(a)\"");
}

#[test]
fn a_healed_element_s_change_is_read_under_its_live_name() {
    let before = "- frame\n  - [0] check_box \"Gift wrap\"\n";
    let after = "- frame\n  - [0] check_box \"Gift wrap\" (checked)\n";
    let reading = Reading {
        other_driver: false,
        valued_roles: None,
        renames: vec![Rename {
            from_role: "check_box".into(),
            from_name: "Gift wrap".into(),
            to_role: "check_box".into(),
            to_name: "Gift wrap (free)".into(),
        }],
        ..Reading::default()
    };
    let p = Postcondition::between(before, after, reading).unwrap();
    let live_before = before.replace("Gift wrap", "Gift wrap (free)");
    let live_after = after.replace("Gift wrap", "Gift wrap (free)");
    assert!(differences(&p, &live_before, &live_after).is_empty());
    // Only that element's own name: a longer name that starts alike is another element.
    let other = Rename {
        from_role: "button".into(),
        from_name: "Add".into(),
        to_role: "button".into(),
        to_name: "Add item".into(),
    };
    assert_eq!(
        other.apply("button \"Add\" (disabled)").as_deref(),
        Some("button \"Add item\" (disabled)")
    );
    assert_eq!(other.apply("button \"Add all\""), None);
}

#[test]
fn volatile_text_is_no_change() {
    let before = "- frame\n  - label \"12:01\"\n  - label \"Total: 0\"\n";
    let after = "- frame\n  - label \"12:02\"\n  - label \"Total: 3\"\n";
    let reading = Reading {
        other_driver: false,
        valued_roles: None,
        volatile: vec![Regex::new(r"\d\d:\d\d").unwrap()],
        ..Reading::default()
    };
    let p = Postcondition::between(before, after, reading).unwrap();
    let live_after = after.replace("12:02", "17:45");
    assert!(differences(&p, before, &live_after).is_empty());
}

#[test]
fn a_uuid_a_run_minted_is_the_same_change_with_another() {
    let before = "- frame\n  - label \"Downloads\"\n";
    let after = "- frame\n  - label \"Downloads\"\n  - button \"bbcdb323-3eb8-485a-9990-a79d7bfc0cad 9 B • Done\"\n";
    let p = post(before, after);
    let live_after = after.replace(
        "bbcdb323-3eb8-485a-9990-a79d7bfc0cad",
        "6ADA73D9-9611-4b5d-aeea-e3db04b4d773",
    );
    assert!(differences(&p, before, &live_after).is_empty());
    // The rest of the line still counts.
    let other = live_after.replace("9 B", "10 B");
    assert!(!differences(&p, before, &other).is_empty());
}

#[test]
fn duplicates_count_and_depth_matters() {
    let before = "- frame\n  - label \"0\"\n";
    let after = "- frame\n  - label \"0\"\n  - label \"0\"\n";
    let p = post(before, after);
    assert_eq!(differences(&p, before, before).len(), 1);
    assert_eq!(
        differences(&p, before, "- frame\n  - label \"0\"\n    - label \"0\"\n").len(),
        2
    );
    assert!(differences(&p, before, after).is_empty());
}

#[test]
fn differences_are_named_a_few_at_a_time() {
    let lines: Vec<String> = (0..5).map(|i| format!("+ label \"{i}\"")).collect();
    assert_eq!(
        name(&lines),
        "+ label \"0\"; + label \"1\"; + label \"2\"; and 2 more"
    );
}

#[test]
fn a_row_already_shown_is_the_recorded_state_once_the_turn_made_its_own_change() {
    let before = "- frame\n  - text value=\"7×6\"\n  - list\n";
    let after = "- frame\n  - text value=\"42\"\n  - list\n    - list_item\n      - label \"42\"\n";
    let p = post(before, after);
    // A second identical calculation: the history shows its one row, unchanged.
    let live_before =
        "- frame\n  - text value=\"7×6\"\n  - list\n    - list_item\n      - label \"42\"\n";
    let live_after = live_before.replace("value=\"7×6\"", "value=\"42\"");
    assert!(differences(&p, live_before, &live_after).is_empty());
    // Without a change of its own, the row that was there proves nothing.
    assert_eq!(
        differences(&p, live_before, live_before),
        [
            "expected label \"42\", not shown",
            "expected list_item, not shown",
            "expected text value=\"42\", the app still shows text value=\"7×6\""
        ]
    );
}

/// cua-driver's editor turn (Mousepad): its text view named by its content with a raw
/// newline, and the closed menu's and hidden toolbar's `Reload` becoming `Revert`, which
/// cua's tree does not list. The same typing live passes; other text does not.
#[test]
fn another_drivers_text_and_hidden_parts_read_as_what_cua_can_see() {
    let theirs_before = "- frame = \"Untitled 1 - Mousepad\"\n        - [0] menu \"File\" [actions=[click]]\n          - menu item = \"Reload      \"\n          - push button = \"Reload\"\n      - [1] page tab \"\" [actions=[]]\n          - [2] text \"\" [actions=[]]\n";
    let theirs_after = "- frame = \"*Untitled 1 - Mousepad\"\n        - [0] menu \"File\" [actions=[click]]\n          - menu item = \"Revert      \"\n          - push button = \"Revert\"\n      - [1] page tab \"\" [actions=[]]\n          - [2] text \"Hello\n\" [actions=[]]\n";
    let recorded = Reading {
        other_driver: true,
        ..Reading::default()
    };
    let p = Postcondition::between(theirs_before, theirs_after, recorded).unwrap();
    let ours_before = "- frame \"Untitled 1 - Mousepad\"\n  - menu_bar\n    - [0] menu \"File\" [actions=[click]]\n  - page_tab_list\n    - [1] page_tab (selected)\n      - [2] text value=\"\" (focused)\n";
    let ours_after = "- frame \"*Untitled 1 - Mousepad\"\n  - menu_bar\n    - [0] menu \"File\" [actions=[click]]\n  - page_tab_list\n    - [1] page_tab (selected)\n      - [2] text value=\"Hello\\n\" (focused)\n";
    assert_eq!(
        p.differences_in(ours_before, ours_after),
        Vec::<String>::new()
    );
    let other_text = ours_after.replace("Hello", "Jello");
    let wrong = p.differences_in(ours_before, &other_text);
    assert!(wrong.iter().any(|d| d.contains("Hello")), "{wrong:?}");
    let untouched = p.differences_in(ours_before, ours_before);
    assert!(!untouched.is_empty(), "nothing typed is no pass");
}

#[test]
fn text_an_agents_recording_saw_still_changing_compares_as_any_moment_of_it() {
    let changing = [
        "tree: - [3] paragraph \"Ticks: 5\"".to_string(),
        "tree: + [3] paragraph \"Ticks: 6\"".to_string(),
        "tree: + [4] label \"new\"".to_string(),
    ];
    let patterns = still_changing(&changing);
    assert_eq!(patterns.len(), 1, "{patterns:?}");
    assert_eq!(patterns[0].as_str(), "paragraph \"Ticks: [^\"]*");
    let before = "- document \"Ticker\"\n  - paragraph \"Ticks: 0\"\n  - label \"Not pressed\"\n";
    let after = "- document \"Ticker\"\n  - paragraph \"Ticks: 6\"\n  - label \"Not pressed\"\n";
    let live = "- document \"Ticker\"\n  - paragraph \"Ticks: 9\"\n  - label \"Not pressed\"\n";
    let moment = Reading {
        moments: patterns,
        ..Reading::default()
    };
    // Read exactly, the counter's later moment is another change; read as a moment, the
    // same one. The rest is still compared: the counter must have left its recorded start,
    // and a label that changed fails.
    assert_eq!(differences(&post(before, after), before, live).len(), 1);
    let p = Postcondition::between(before, after, moment).unwrap();
    assert!(differences(&p, before, live).is_empty());
    assert_eq!(
        differences(&p, before, before).len(),
        1,
        "{:?}",
        differences(&p, before, before)
    );
    let other = live.replace("Not pressed", "Pressed");
    assert_eq!(
        differences(&p, before, &other).len(),
        2,
        "{:?}",
        differences(&p, before, &other)
    );
    // A role that changed, or a name that differs from its first letter on, yields nothing
    // narrower than the role and its quote: no pattern.
    assert!(
        still_changing(&["tree: - label \"a\"".into(), "tree: + button \"a\"".into()]).is_empty()
    );
}

#[test]
fn part_of_the_change_shown_is_still_on_its_way_another_change_is_an_answer() {
    // Gnumeric: Up selects A3 at once, its `Sum =` label follows with no event.
    let before = "- frame \"Book1\"\n  - [0] text value=\"A4\"\n  - label \"Sum = 0\"\n";
    let after = "- frame \"Book1\"\n  - [0] text value=\"A3\"\n  - label \"Sum = 42\"\n";
    let p = post(before, after);
    let contradicted = |live: &str| {
        let r = &p.reading;
        p.contradicted(&r.counts(before, false), &r.counts(live, false))
    };
    let part = after.replace("Sum = 42", "Sum = 0");
    assert!(!differences(&p, before, &part).is_empty());
    assert!(!contradicted(&part), "the label may still change");
    assert!(!contradicted(before), "nothing changed yet");
    assert!(!contradicted(after));
    // A label the recording never had, and a line it did not change, are answers.
    assert!(contradicted(&after.replace("Sum = 42", "Sum = 41")));
    assert!(contradicted(&format!("{part}  - label \"Error\"\n")));
}

#[test]
fn an_element_that_reached_its_recorded_end_before_the_turn_is_no_missing_change() {
    // Recorded while Calc started: its button was laid out, not shown, then shown; the
    // turn's own change is the cell's.
    let before =
        "- frame \"Calc\"\n  - [0] button (offscreen)\n  - [1] table_cell \"A1\" value=\"\"\n";
    let after = "- frame \"Calc\"\n  - [0] button\n  - [1] table_cell \"A1\" value=\"12\"\n";
    let p = post(before, after);
    let live_before = "- frame \"Calc\"\n  - [0] button\n  - [1] table_cell \"A1\" value=\"\"\n";
    assert_eq!(differences(&p, live_before, after), Vec::<String>::new());
    // Without the turn's own change it is still missing.
    assert!(!differences(&p, live_before, live_before).is_empty());
    // And a live window that never got there still fails.
    let stuck =
        "- frame \"Calc\"\n  - [0] button (offscreen)\n  - [1] table_cell \"A1\" value=\"\"\n";
    assert!(!differences(&p, stuck, &stuck.replace("value=\"\"", "value=\"12\"")).is_empty());
}

#[test]
fn a_line_the_recording_held_all_through_ends_as_recorded_when_it_shows_only_now() {
    // A cua-driver recording lists gnome-calculator's empty history list before and after
    // "="; cua leaves it out while it has no area, and lists it once its first row shows.
    let before = "- frame \"Calculator\"\n  - list\n  - text value=\"7×6\"\n";
    let after = "- frame \"Calculator\"\n  - list\n  - text value=\"42\"\n";
    let p = post(before, after);
    let live_before = "- frame \"Calculator\"\n  - text value=\"7×6\"\n";
    let live_after = "- frame \"Calculator\"\n  - list\n  - text value=\"42\"\n";
    assert_eq!(
        differences(&p, live_before, live_after),
        Vec::<String>::new()
    );
    let r = &p.reading;
    assert!(!p.contradicted(&r.counts(live_before, false), &r.counts(live_after, false)));
    // A line the recording never showed is still an unrecorded change.
    let error = format!("{live_after}  - label \"Error\"\n");
    assert_eq!(
        differences(&p, live_before, &error),
        vec!["the app also shows label \"Error\" (not recorded)".to_string()]
    );
    // Nor does it pass without the turn's own change.
    let unchanged = live_after.replace("42", "7×6");
    assert!(!differences(&p, live_before, &unchanged).is_empty());
}
