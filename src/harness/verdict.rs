//! What a recorded run's own results say, before any comparison with a golden: a turn
//! that errored, was refused, came back `suspected_noop`, or carries an escalation that
//! was not taken did not do what its step asked. Such a run fails, and is never stored
//! as a golden (a golden holding a no-op would make the no-op the expected behaviour).
//! A step that is meant to change nothing says `expect_effect = false`.

use std::path::Path;

use crate::trajectory::Action;

/// One turn whose result says it did not do its job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unhonoured {
    pub turn: u32,
    pub tool: String,
    pub reason: String,
}

impl std::fmt::Display for Unhonoured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "turn {} ({}): {}", self.turn, self.tool, self.reason)
    }
}

/// Why this recorded action (its action.json) does not count as done, if it does not.
pub fn judge(action: &Action) -> Option<String> {
    if let Some(failure) = action.failure() {
        return Some(failure);
    }
    let r = &action.result;
    if let Some(esc) = &r.escalation {
        return Some(format!(
            "escalation to {} not taken: {}",
            esc.recommended, esc.reason
        ));
    }
    if r.effect.as_deref() == Some("suspected_noop") {
        return Some("effect suspected_noop: the app showed no change".into());
    }
    None
}

/// The turns of a recorded run that did not do their job, skipping the turns whose step
/// expects no effect (`allowed(turn)` true). Turns are listed and read as replay reads
/// them; an unreadable one counts as not done.
pub fn unhonoured(run_dir: &Path, allowed: impl Fn(u32) -> bool) -> Vec<Unhonoured> {
    let turns = crate::replay::turn_dirs(run_dir).unwrap_or_default();
    let actions: Vec<Result<Action, String>> = turns
        .iter()
        .map(|(_, dir)| crate::trajectory::read::action(dir))
        .collect();
    let mut out = Vec::new();
    for (k, (n, _)) in turns.iter().enumerate() {
        if allowed(*n) {
            continue;
        }
        // An escalation taken: the next turn repeated the call in the foreground.
        let taken = |a: &Action| {
            actions
                .get(k + 1)
                .and_then(|next| next.as_ref().ok())
                .is_some_and(|next| crate::replay::escalate::is_repeat_of(a, next))
        };
        match &actions[k] {
            Ok(a) if taken(a) => {}
            Ok(a) => {
                if let Some(reason) = judge(a) {
                    out.push(Unhonoured {
                        turn: *n,
                        tool: a.tool.clone(),
                        reason,
                    });
                }
            }
            Err(e) => out.push(Unhonoured {
                turn: *n,
                tool: "?".into(),
                reason: format!("action.json unreadable: {e}"),
            }),
        }
    }
    out
}

/// Fails each turn whose app took longer than `max_ms` to settle (a scenario's
/// `max_turn_ms`), saying so as slowness beside the golden's time.
pub fn over_budget(diff: &mut crate::diff::TrajectoryDiff, max_ms: u64) {
    use crate::diff::TurnStatus;
    for t in &mut diff.turns {
        let Some(ms) = t.actual_latency_ms.filter(|&ms| ms > max_ms) else {
            continue;
        };
        let golden = t
            .expected_latency_ms
            .map(|g| format!(" (golden: {g} ms)"))
            .unwrap_or_default();
        t.reasons.push(format!(
            "slow: the app took {ms} ms to settle, over max_turn_ms = {max_ms}{golden}"
        ));
        if t.status == TurnStatus::Passed {
            t.status = TurnStatus::Failed;
        }
    }
    diff.passed = diff.turns.iter().all(crate::diff::TurnDiff::passed);
}

/// The turns of a recorded run whose window never held still, with what kept changing:
/// such a run is never stored as a golden.
pub fn unsettled(run_dir: &Path) -> Vec<Unhonoured> {
    let turns = crate::replay::turn_dirs(run_dir).unwrap_or_default();
    turns
        .iter()
        .filter_map(|(n, dir)| {
            let action = crate::trajectory::read::action(dir).ok()?;
            let settle = action.settle?;
            (settle.status == crate::trajectory::SettleStatus::Unsettled).then(|| Unhonoured {
                turn: *n,
                tool: action.tool,
                reason: format!(
                    "the window never held still (still changing: {})",
                    settle.changing.join("; ")
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_over_budget_fails_as_slowness_beside_the_goldens_time() {
        use crate::diff::{TrajectoryDiff, TurnDiff, TurnStatus};
        let turn = |n: u32, ms: u64| TurnDiff {
            turn: n,
            tool: "click".into(),
            status: TurnStatus::Passed,
            reasons: Vec::new(),
            notes: Vec::new(),
            action_diff: Vec::new(),
            tree_diff: None,
            pixels: None,
            expected_latency_ms: Some(96),
            actual_latency_ms: Some(ms),
            expected_dir: None,
            actual_dir: None,
            diff_png: None,
        };
        let mut diff = TrajectoryDiff {
            expected: "g".into(),
            actual: "r".into(),
            passed: true,
            turns: vec![turn(1, 400), turn(2, 1712)],
            not_compared: Vec::new(),
        };
        over_budget(&mut diff, 1000);
        assert!(!diff.passed);
        assert!(diff.turns[0].passed());
        assert_eq!(diff.turns[1].status, TurnStatus::Failed);
        assert_eq!(
            diff.turns[1].reasons,
            ["slow: the app took 1712 ms to settle, over max_turn_ms = 1000 (golden: 96 ms)"]
        );
    }
    use serde_json::{Value, json};

    fn action(result: Value, error: Option<&str>) -> Action {
        serde_json::from_value(action_json(result, error)).unwrap()
    }

    fn action_json(result: Value, error: Option<&str>) -> Value {
        json!({
            "schema_version": 1,
            "turn": 1,
            "tool": "hotkey",
            "arguments": {},
            "result_summary": "",
            "result_error": error,
            "result": result,
            "timestamp": "",
            "t_ms": 0,
        })
    }

    #[test]
    fn errors_refusals_noops_and_untaken_escalations_do_not_count_as_done() {
        assert_eq!(
            judge(&action(json!({"effect": "confirmed"}), None)),
            None,
            "a confirmed effect is done"
        );
        assert_eq!(
            judge(&action(json!({"effect": "unverifiable"}), None)),
            None,
            "unverifiable is not a claim either way"
        );
        assert!(
            judge(&action(
                json!({}),
                Some("invalid arguments: unknown argument txt")
            ))
            .unwrap()
            .contains("unknown argument txt")
        );
        assert!(
            judge(&action(
                json!({"refused": true}),
                Some("refused: forbidden")
            ))
            .unwrap()
            .starts_with("refused")
        );
        assert!(
            judge(&action(json!({"effect": "suspected_noop"}), None))
                .unwrap()
                .contains("suspected_noop")
        );
        let escalated = json!({"effect": "unverifiable",
            "escalation": {"recommended": "foreground", "reason": "GTK 4 ignores synthetic X events"}});
        assert!(
            judge(&action(escalated, None))
                .unwrap()
                .contains("escalation to foreground not taken: GTK 4")
        );
    }

    #[test]
    fn turns_are_read_from_the_run_folder_and_allowed_ones_skipped() {
        let dir = std::env::temp_dir().join(format!("cua-verdict-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (n, result) in [
            (1, json!({"effect": "confirmed"})),
            (2, json!({"effect": "suspected_noop"})),
            (3, json!({"effect": "suspected_noop"})),
        ] {
            let t = dir.join(crate::trajectory::turn_dir_name(n));
            std::fs::create_dir_all(&t).unwrap();
            let mut a = action_json(result, None);
            a["turn"] = json!(n);
            std::fs::write(t.join("action.json"), serde_json::to_vec(&a).unwrap()).unwrap();
        }
        std::fs::create_dir_all(dir.join(crate::trajectory::turn_dir_name(4))).unwrap();
        let found = unhonoured(&dir, |n| n == 3);
        let turns: Vec<u32> = found.iter().map(|u| u.turn).collect();
        assert_eq!(turns, vec![2, 4], "{found:?}");
        assert!(found[1].reason.contains("unreadable"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
