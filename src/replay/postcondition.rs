//! A replayed turn's postcondition: the change between the turn's recorded before-state
//! and after-state (`before_state.json`, `app_state.json`). After dispatching the turn,
//! replay waits until the live window shows that change before the next turn goes, so
//! `--delay-ms 0` is as correct as a slow replay: a digit clicked before the previous
//! click's effect showed is what lost "58 × 83" its 8 on GTK 4.
//!
//! The change is compared as tree lines without their element indices (indices shift when
//! elements come and go): a line that the recording gained must be there as often as in
//! the after-state, a line it lost must be gone down to its count there. Waiting is on the
//! app's accessibility events, bounded. When most of the change shows and the app then goes
//! quiet, the turn passes with the rest named (an incidental line such as a tooltip need not
//! come back); when half of it or more is missing in the end, the turn fails naming what
//! is missing: a turn whose effect landed elsewhere (typing that went into another window)
//! often still shows a line or two of its change, such as a focus moving.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::platform::{Platform, WindowInfo};

/// How long a turn's change may take to show.
pub const WAIT: Duration = Duration::from_secs(3);
/// Part of the change shows and the app sent nothing for this long: take it as done.
const QUIET: Duration = Duration::from_millis(150);
/// Without an event feed, read again this often.
const POLL: Duration = Duration::from_millis(50);
/// At most this many missing lines are named.
const NAMED: usize = 3;

/// One tree line the recorded turn changed: its count before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change {
    line: String,
    before: usize,
    after: usize,
}

#[derive(Debug, Clone)]
pub struct Postcondition {
    changes: Vec<Change>,
}

/// What a replayed turn's live window showed of its recorded change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    All,
    /// Most of it; these lines (as `+ line` / `- line`) did not show.
    Part(Vec<String>),
}

/// A markdown tree line as a turn's effect is compared: without its `[N] ` index, its
/// `[actions=…]` and its `focused` state, indentation kept (it is the depth). Where focus
/// lands depends on how an action was delivered (an accessibility action never moves it,
/// a pointer click does), and which actions an element offers on its history (GTK 4's
/// display gains `text.undo` once typed into): neither is part of a turn's effect.
fn normalize(line: &str) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let rest = trimmed.strip_prefix("- ").unwrap_or(trimmed);
    let rest = match rest.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((n, tail)) if n.chars().all(|c| c.is_ascii_digit()) => tail,
        _ => rest,
    };
    format!("{indent}- {}", without_incidentals(rest))
}

/// The line without its `[actions=…]`, and with `focused` taken out of its states group:
/// the `(…)` that then ends the line (names and values are quoted, so a `)` there is the
/// group's).
fn without_incidentals(rest: &str) -> String {
    let head = match rest.find(" [actions=") {
        Some(i) => &rest[..i],
        None => rest,
    };
    let Some(open) = head.strip_suffix(')').and_then(|h| h.rfind(" (")) else {
        return head.to_string();
    };
    let states: Vec<&str> = head[open + 2..head.len() - 1]
        .split(", ")
        .filter(|s| *s != "focused")
        .collect();
    let group = if states.is_empty() {
        String::new()
    } else {
        format!(" ({})", states.join(", "))
    };
    format!("{}{group}", &head[..open])
}

fn counts(markdown: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for line in markdown.lines().filter(|l| !l.trim().is_empty()) {
        *out.entry(normalize(line)).or_insert(0) += 1;
    }
    out
}

impl Postcondition {
    /// The recorded change of the turn in `turn_dir`; None when it recorded no states or
    /// no change.
    pub fn of_turn(turn_dir: &Path) -> Option<Postcondition> {
        use crate::trajectory::read::{State, state_markdown};
        let before = state_markdown(turn_dir, State::Before)?;
        let after = state_markdown(turn_dir, State::After)?;
        Self::between(&before, &after)
    }

    pub fn between(before: &str, after: &str) -> Option<Postcondition> {
        let (b, a) = (counts(before), counts(after));
        let mut changes: Vec<Change> = b
            .keys()
            .chain(a.keys())
            .map(|line| Change {
                line: line.clone(),
                before: b.get(line).copied().unwrap_or(0),
                after: a.get(line).copied().unwrap_or(0),
            })
            .filter(|c| c.before != c.after)
            .collect();
        changes.sort_by(|x, y| x.line.cmp(&y.line));
        changes.dedup();
        (!changes.is_empty()).then_some(Postcondition { changes })
    }

    /// The changes a live tree does not show yet, as `+ line` / `- line`.
    fn missing(&self, live: &str) -> Vec<String> {
        let live = counts(live);
        self.changes
            .iter()
            .filter(|c| {
                let n = live.get(&c.line).copied().unwrap_or(0);
                if c.after > c.before {
                    n < c.after
                } else {
                    n > c.after
                }
            })
            .map(|c| {
                let sign = if c.after > c.before { '+' } else { '-' };
                format!("{sign} {}", c.line.trim_start().trim_start_matches("- "))
            })
            .collect()
    }

    /// Waits (bounded by [`WAIT`]) until the live window shows the change.
    pub async fn wait(
        &self,
        platform: &dyn Platform,
        pid: u32,
        window: &WindowInfo,
    ) -> Result<Shown, String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let read_at = Instant::now();
            let live = crate::snapshot::window_state_json(platform, pid, window).await;
            let missing = self.missing(live["tree_markdown"].as_str().unwrap_or(""));
            if missing.is_empty() {
                return Ok(Shown::All);
            }
            let some_shown = missing.len() < self.changes.len();
            let event = next_event(platform, pid, read_at, deadline).await;
            if Instant::now() >= deadline {
                return self.judge(missing);
            }
            // Quiet with most of the change shown: done. With less, the effect may still be
            // on its way (GTK 4 shows a click's ~250 ms later, with no event before): wait on.
            if some_shown && !event {
                if let Ok(shown) = self.judge(missing) {
                    return Ok(shown);
                }
            }
        }
    }
}

impl Postcondition {
    /// What the end of the wait says: most of the change shown passes (named), less fails.
    fn judge(&self, missing: Vec<String>) -> Result<Shown, String> {
        let total = self.changes.len();
        if missing.is_empty() {
            Ok(Shown::All)
        } else if missing.len() == total {
            Err(format!(
                "the recorded change never showed within {} s: {}",
                WAIT.as_secs(),
                name(&missing)
            ))
        } else if missing.len() * 2 >= total {
            Err(format!(
                "most of the recorded change never showed ({} of {total} changed lines missing after {} s): {}",
                missing.len(),
                WAIT.as_secs(),
                name(&missing)
            ))
        } else {
            Ok(Shown::Part(missing))
        }
    }
}

/// Whether the app sent an event after `since` within QUIET (before `deadline`); without
/// an event feed, sleeps POLL and says yes (read again).
async fn next_event(platform: &dyn Platform, pid: u32, since: Instant, deadline: Instant) -> bool {
    if platform
        .app_activity(pid)
        .await
        .is_none_or(|a| a.events == 0)
    {
        tokio::time::sleep(POLL).await;
        return true;
    }
    let until = (since + QUIET).max(Instant::now()).min(deadline);
    crate::platform::event_after(platform, pid, since, until).await
}

/// The first few missing lines, and how many more.
pub fn name(missing: &[String]) -> String {
    let mut shown: Vec<String> = missing.iter().take(NAMED).cloned().collect();
    if missing.len() > NAMED {
        shown.push(format!("and {} more", missing.len() - NAMED));
    }
    shown.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str =
        "- frame \"Calculator\"\n  - [0] button \"7\"\n  - label \"5\"\n  - [1] button \"8\"\n";
    const AFTER: &str =
        "- frame \"Calculator\"\n  - [0] button \"7\"\n  - label \"58\"\n  - [1] button \"8\"\n";

    #[test]
    fn the_change_is_the_lines_gained_and_lost_without_indices() {
        let post = Postcondition::between(BEFORE, AFTER).unwrap();
        assert_eq!(post.missing(BEFORE), ["- label \"5\"", "+ label \"58\""]);
        assert!(post.missing(AFTER).is_empty());
        // Indices shift when elements come and go; the line is still the same.
        let shifted = AFTER.replace("[1] button", "[4] button");
        assert!(post.missing(&shifted).is_empty());
        assert!(Postcondition::between(BEFORE, &BEFORE.replace("[1]", "[2]")).is_none());
    }

    #[test]
    fn focus_and_actions_are_no_part_of_a_change() {
        let before = "- frame\n  - [0] text \"Display\" value=\"7\" (focused) [actions=[copy]]\n";
        let after = "- frame\n  - [0] text \"Display\" value=\"7×\" (focused) [actions=[copy]]\n";
        let post = Postcondition::between(before, after).unwrap();
        let live = "- frame\n  - [3] text \"Display\" value=\"7×\" [actions=[undo, copy]]\n";
        assert!(post.missing(live).is_empty());
        // Focus alone is no change; other states are.
        assert!(Postcondition::between(&before.replace(" (focused)", ""), before).is_none());
        assert_eq!(
            without_incidentals("check_box \"Tax (net)\" (checked, focused) [actions=[click]]"),
            "check_box \"Tax (net)\" (checked)"
        );
        assert_eq!(without_incidentals("label \"(a)\""), "label \"(a)\"");
    }

    #[test]
    fn duplicates_count_and_depth_matters() {
        let before = "- frame\n  - label \"0\"\n";
        let after = "- frame\n  - label \"0\"\n  - label \"0\"\n";
        let post = Postcondition::between(before, after).unwrap();
        assert_eq!(post.missing(before), ["+ label \"0\""]);
        assert_eq!(
            post.missing("- frame\n  - label \"0\"\n    - label \"0\"\n")
                .len(),
            1
        );
        assert!(post.missing(after).is_empty());
    }

    #[test]
    fn a_turn_fails_when_half_of_its_change_or_more_is_missing() {
        let post = Postcondition::between(
            "- frame\n  - label \"a\"\n  - label \"b\"\n",
            "- frame\n  - label \"A\"\n  - label \"B\"\n  - tooltip \"t\"\n",
        )
        .unwrap();
        assert_eq!(post.changes.len(), 5);
        assert_eq!(post.judge(vec![]), Ok(Shown::All));
        let tooltip = vec!["+ tooltip \"t\"".to_string()];
        assert_eq!(post.judge(tooltip.clone()), Ok(Shown::Part(tooltip)));
        let three: Vec<String> = (0..3).map(|i| format!("+ label \"{i}\"")).collect();
        let e = post.judge(three).unwrap_err();
        assert!(
            e.starts_with("most of the recorded change never showed (3 of 5"),
            "{e}"
        );
        let all: Vec<String> = (0..5).map(|i| format!("+ label \"{i}\"")).collect();
        assert!(
            post.judge(all)
                .unwrap_err()
                .starts_with("the recorded change never showed")
        );
    }

    #[test]
    fn missing_lines_are_named_a_few_at_a_time() {
        let lines: Vec<String> = (0..5).map(|i| format!("+ label \"{i}\"")).collect();
        assert_eq!(
            name(&lines),
            "+ label \"0\"; + label \"1\"; + label \"2\"; and 2 more"
        );
    }
}
