use serde_json::{Value, json};

use super::*;

const SEVEN: &str = "- [0] frame \"Calculator\"\n  - [1] label \"7\"";
const EMPTY: &str = "- [0] frame \"Calculator\"\n  - [1] label \"\"";
const SEVENTY_SEVEN: &str = "- [0] frame \"Calculator\"\n  - [1] label \"77\"";

fn action(tool: &str, arguments: Value, result: Value, error: Option<&str>) -> Action {
    serde_json::from_value(json!({
        "tool": tool, "arguments": arguments, "result": result, "result_error": error,
    }))
    .unwrap()
}

fn key(delivery: Option<&str>) -> Value {
    let mut args = json!({ "pid": 7, "window_id": 9, "key": "7" });
    if let Some(mode) = delivery {
        args["delivery_mode"] = json!(mode);
    }
    args
}

fn escalated() -> Value {
    json!({ "effect": "unverifiable",
        "escalation": { "recommended": "foreground", "reason": "GTK 4 ignores synthetic X events" } })
}

fn turns<'a>(rows: &'a [(Action, &'a str, &'a str)]) -> Vec<Recorded<'a>> {
    rows.iter()
        .enumerate()
        .map(|(k, (action, before, after))| Recorded {
            number: k as u32 + 1,
            action,
            before: Some(before),
            after: Some(after),
        })
        .collect()
}

fn shape(plan: &Plan) -> Vec<(Vec<u32>, bool)> {
    plan.steps
        .iter()
        .map(|s| (s.turns.clone(), s.skipped.is_some()))
        .collect()
}

#[test]
fn a_background_attempt_the_app_ignored_is_folded_into_its_foreground_retry() {
    let rows = [
        (
            action("press_key", key(None), escalated(), None),
            EMPTY,
            EMPTY,
        ),
        (
            action(
                "press_key",
                key(Some("foreground")),
                json!({"effect": "confirmed"}),
                None,
            ),
            EMPTY,
            SEVEN,
        ),
    ];
    let plan = Plan::of(&turns(&rows), false);
    assert_eq!(shape(&plan), vec![(vec![1, 2], false)]);
    assert_eq!(plan.steps[0].turn, 2);
    let why = &plan.steps[0].folded[0].why;
    assert!(
        why.contains("retried it in the foreground") && why.contains("GTK 4 ignores"),
        "{why}"
    );
    // --raw: every turn as recorded.
    let raw = Plan::of(&turns(&rows), true);
    assert_eq!(shape(&raw), vec![(vec![1], false), (vec![2], false)]);
}

#[test]
fn an_attempt_the_recording_shows_acting_is_never_folded() {
    // An agent pressing 7 twice on purpose: the first press showed.
    let rows = [
        (
            action("press_key", key(None), escalated(), None),
            EMPTY,
            SEVEN,
        ),
        (
            action(
                "press_key",
                key(Some("foreground")),
                json!({"effect": "confirmed"}),
                None,
            ),
            SEVEN,
            SEVENTY_SEVEN,
        ),
    ];
    let plan = Plan::of(&turns(&rows), false);
    assert_eq!(shape(&plan), vec![(vec![1], false), (vec![2], false)]);
    // A change that showed only by the next turn's before-state counts too.
    let rows = [
        (
            action("press_key", key(None), escalated(), None),
            EMPTY,
            EMPTY,
        ),
        (
            action(
                "press_key",
                key(Some("foreground")),
                json!({"effect": "confirmed"}),
                None,
            ),
            SEVEN,
            SEVENTY_SEVEN,
        ),
    ];
    let plan = Plan::of(&turns(&rows), false);
    assert_eq!(shape(&plan), vec![(vec![1], false), (vec![2], false)]);
}

#[test]
fn a_refused_or_failed_turn_is_skipped_with_its_reason() {
    let rows = [
        (
            action(
                "press_key",
                json!({"pid": 7, "key": "return"}),
                json!({"refused": true}),
                Some("background keys are not delivered to this app"),
            ),
            SEVEN,
            SEVEN,
        ),
        (
            action(
                "press_key",
                json!({"pid": 7, "key": "return", "delivery_mode": "foreground"}),
                json!({"effect": "confirmed"}),
                None,
            ),
            SEVEN,
            SEVENTY_SEVEN,
        ),
        (
            action(
                "click",
                json!({"pid": 7, "x": 1, "y": 2}),
                json!({}),
                Some("window gone"),
            ),
            SEVENTY_SEVEN,
            SEVENTY_SEVEN,
        ),
    ];
    let plan = Plan::of(&turns(&rows), false);
    assert_eq!(
        shape(&plan),
        vec![(vec![1], true), (vec![2], false), (vec![3], true)]
    );
    let why = plan.steps[0].skipped.as_deref().unwrap();
    assert!(
        why.starts_with("recorded as failed (refused: background keys"),
        "{why}"
    );
    assert!(
        plan.steps[2]
            .skipped
            .as_deref()
            .unwrap()
            .contains("error: window gone")
    );
    assert_eq!(plan.counts(), (2, 0));
}

#[test]
fn an_untaken_escalation_is_replayed_whatever_its_effect_read() {
    // Typing into a password field: the driver read no change (no tree shows the text) and
    // asked to escalate; the typing happened all the same. And cua-driver's type_text into
    // Mousepad: escalation asked, and the text went in.
    let mut no_change = escalated();
    no_change["effect"] = json!("suspected_noop");
    for (result, after) in [(no_change, EMPTY), (escalated(), SEVEN)] {
        let rows = [
            (
                action(
                    "type_text",
                    json!({"pid": 7, "text": "hunter2"}),
                    result,
                    None,
                ),
                EMPTY,
                after,
            ),
            (
                action(
                    "click",
                    json!({"pid": 7, "x": 5, "y": 5}),
                    json!({"effect": "confirmed"}),
                    None,
                ),
                after,
                SEVEN,
            ),
        ];
        assert_eq!(
            shape(&Plan::of(&turns(&rows), false)),
            vec![(vec![1], false), (vec![2], false)]
        );
    }
}

#[test]
fn a_no_change_turn_called_again_is_one_step_and_chains_fold_into_the_last() {
    let click = |effect: &str| {
        action(
            "click",
            json!({"pid": 7, "window_id": 9, "element_index": 1}),
            json!({ "effect": effect }),
            None,
        )
    };
    let rows = [
        (click("no_change"), SEVEN, SEVEN),
        (click("suspected_noop"), SEVEN, SEVEN),
        (click("confirmed"), SEVEN, SEVENTY_SEVEN),
    ];
    let plan = Plan::of(&turns(&rows), false);
    assert_eq!(shape(&plan), vec![(vec![1, 2, 3], false)]);
    assert!(
        plan.steps[0].folded[0]
            .why
            .contains("turn 2 called it again")
    );
    // An unverifiable click called again is not a retry: nothing said it did nothing.
    let rows = [
        (click("unverifiable"), SEVEN, SEVEN),
        (click("confirmed"), SEVEN, SEVENTY_SEVEN),
    ];
    assert_eq!(shape(&Plan::of(&turns(&rows), false)).len(), 2);
}

#[test]
fn a_retry_must_be_the_same_call_on_the_same_element() {
    let press = |k: &str, mode: Option<&str>| {
        let mut args = json!({ "pid": 7, "key": k });
        if let Some(m) = mode {
            args["delivery_mode"] = json!(m);
        }
        args
    };
    let rows = [
        (
            action("press_key", press("7", None), escalated(), None),
            EMPTY,
            EMPTY,
        ),
        (
            action("press_key", press("8", Some("foreground")), json!({}), None),
            EMPTY,
            SEVEN,
        ),
    ];
    // Another key: the attempt is its own step, replayed (its effect was unverifiable).
    assert_eq!(
        shape(&Plan::of(&turns(&rows), false)),
        vec![(vec![1], false), (vec![2], false)]
    );
    // Another element of the same tree: the index is not compared, the element is.
    let tree = "- [0] frame \"C\"\n  - [1] button \"7\"\n  - [2] button \"8\"";
    let click = |index: u64, mode: Option<&str>| {
        let mut args = json!({ "pid": 7, "element_index": index });
        if let Some(m) = mode {
            args["delivery_mode"] = json!(m);
        }
        action("click", args, json!({"effect": "no_change"}), None)
    };
    let rows = [
        (click(1, None), tree, tree),
        (click(2, Some("foreground")), tree, SEVEN),
    ];
    assert_eq!(shape(&Plan::of(&turns(&rows), false)).len(), 2);
    let rows = [
        (click(1, None), tree, tree),
        (click(1, Some("foreground")), tree, SEVEN),
    ];
    assert_eq!(
        shape(&Plan::of(&turns(&rows), false)),
        vec![(vec![1, 2], false)]
    );
}
