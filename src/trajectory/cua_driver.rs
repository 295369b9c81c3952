//! The adapter for recordings the cua-driver binary wrote (no `schema_version`): its
//! action.json, read as what it is and given the shape every reader here uses.
//!
//! What it writes that ours does not: `arguments.element_token` (`"s00000002:31"`,
//! snapshot 2, element 31) instead of an index; `result_error` as a boolean;
//! `action_truth` (its delivery and effect report); timing as
//! `t_ms_from_session_start`. What it leaves out: the app's name and executable, and the
//! element's locator (replay binds windows and elements through the before-state's
//! tree_markdown instead, see `replay::bind` and `replay::locate`).

use serde_json::{Value, json};

/// `recorded_by` of an adapted action: readers that compare (the diff) know the turn's
/// states come from another driver (other element indices, a `[0] window` line).
pub const RECORDED_BY: &str = "cua-driver";

/// Whether an action.json (already checked as JSON with a string `tool`) was written by
/// cua-driver rather than by cua.
pub fn wrote(action: &Value) -> bool {
    action.get("schema_version").is_none()
        && (action.get("action_truth").is_some()
            || action.get("t_ms_from_session_start").is_some()
            || action["result_error"].is_boolean()
            || action.pointer("/arguments/element_token").is_some())
}

/// The action in this crate's shape; an error names the field it cannot map.
pub fn adapt(mut action: Value) -> Result<Value, String> {
    action["recorded_by"] = json!(RECORDED_BY);
    if let Some(token) = action.pointer("/arguments/element_token").cloned() {
        let index = token.as_str().and_then(token_index).ok_or_else(|| {
            format!("`arguments.element_token`: expected \"sNNNNNNNN:INDEX\", got {token}")
        })?;
        let args = &mut action["arguments"];
        if let Some(old) = args.get("element_index").and_then(Value::as_u64) {
            if old as usize != index {
                return Err(format!(
                    "`arguments`: element_token {token} and element_index {old} name different elements"
                ));
            }
        }
        if let Some(m) = args.as_object_mut() {
            m.remove("element_token");
            m.insert("element_index".into(), json!(index));
        }
    }
    if let Some(failed) = action["result_error"].as_bool() {
        action["result_error"] = match failed {
            true => action["result_summary"].clone(),
            false => Value::Null,
        };
    }
    if action.get("t_ms").is_none() {
        if let Some(t) = action
            .get("t_ms_from_session_start")
            .and_then(Value::as_f64)
        {
            action["t_ms"] = json!(t.max(0.0) as u64);
        }
    }
    if action.get("result").is_none() {
        if let Some(truth) = action.get("action_truth").cloned() {
            action["result"] = result_of(&truth);
        }
    }
    // Its click point is in fractional pixels; ours in whole ones.
    if let Some(point) = action.get_mut("click_point").and_then(Value::as_object_mut) {
        for axis in ["x", "y"] {
            if let Some(v) = point.get(axis).and_then(Value::as_f64) {
                point.insert(axis.into(), json!(v.round() as i64));
            }
        }
    }
    Ok(action)
}

/// Its `action_truth` as our result's fields: the effect, and the escalation it asked
/// for (`retry_with_foreground_delivery` is ours `recommended: "foreground"`).
fn result_of(truth: &Value) -> Value {
    let mut result = json!({});
    if let Some(effect) = truth.get("effect").filter(|e| e.is_string()) {
        result["effect"] = effect.clone();
    }
    let escalation = &truth["escalation"];
    if escalation["kind"] == "retry_with_foreground_delivery" {
        result["escalation"] = json!({
            "recommended": "foreground",
            "reason": escalation["detail"].as_str().unwrap_or(""),
        });
    }
    result
}

/// The element index of a token `s<snapshot>:<index>`.
fn token_index(token: &str) -> Option<usize> {
    parse_token(token).map(|(_, index)| index)
}

/// A token's snapshot id (`s` and hex digits, as cua-driver mints them) and element index.
/// cua's own tokens have the same form (`dispatch::tokens`).
pub fn parse_token(token: &str) -> Option<(&str, usize)> {
    let (snapshot, index) = token.split_once(':')?;
    let hex = snapshot.strip_prefix('s')?;
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some((snapshot, index.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> Value {
        json!({
            "tool": "click",
            "arguments": { "pid": 412, "window_id": 9, "element_token": "s00000002:31" },
            "result_summary": "clicked",
            "result_error": false,
            "timestamp": "1795298502.979",
            "t_ms_from_session_start": 1520.6,
            "click_point": { "x": 10.5, "y": 20.25 },
            "action_truth": { "effect": "confirmed", "route": "atspi_action" }
        })
    }

    #[test]
    fn a_token_becomes_its_index_and_the_rest_takes_this_crates_shape() {
        let a = recorded();
        assert!(wrote(&a));
        let a = adapt(a).unwrap();
        assert_eq!(
            a["arguments"],
            json!({ "pid": 412, "window_id": 9, "element_index": 31 })
        );
        assert_eq!(a["result_error"], Value::Null);
        assert_eq!(a["t_ms"], 1520);
        assert_eq!(a["result"]["effect"], "confirmed");
        assert_eq!(a["click_point"], json!({ "x": 11, "y": 20 }));
        assert_eq!(a["recorded_by"], RECORDED_BY);

        let mut failed = recorded();
        failed["result_error"] = json!(true);
        assert_eq!(adapt(failed).unwrap()["result_error"], "clicked");
    }

    #[test]
    fn a_snapshot_id_is_read_as_the_hex_cua_driver_mints() {
        let mut a = recorded();
        a["arguments"]["element_token"] = json!("s0000001a:7");
        assert_eq!(adapt(a).unwrap()["arguments"]["element_index"], 7);
    }

    #[test]
    fn a_token_it_cannot_read_is_named() {
        for bad in [
            json!("31"),
            json!("s2"),
            json!("sx:1"),
            json!(7),
            json!("s1:-3"),
        ] {
            let mut a = recorded();
            a["arguments"]["element_token"] = bad.clone();
            let e = adapt(a).unwrap_err();
            assert!(e.contains("`arguments.element_token`"), "{bad}: {e}");
        }
        let mut a = recorded();
        a["arguments"]["element_index"] = json!(4);
        assert!(adapt(a).unwrap_err().contains("different elements"));
    }

    #[test]
    fn this_crates_own_turns_are_not_taken_for_foreign_ones() {
        let ours =
            json!({ "schema_version": 1, "tool": "click", "arguments": {}, "result_error": null });
        assert!(!wrote(&ours));
        let reference_doc =
            json!({ "tool": "click", "arguments": { "pid": 1 }, "result_error": null });
        assert!(!wrote(&reference_doc));
    }
}
