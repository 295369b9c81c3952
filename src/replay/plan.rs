//! Replay by intent: a trajectory's turns read into the steps a replay drives.
//!
//! A recording holds every attempt, with what the driver said of it: a call that failed or
//! was refused, a background attempt the app ignored and the retry in the foreground that
//! did the work, a click that changed nothing and the same click again. Replaying every
//! turn as recorded sends the work twice (a calculator reads `77`) or sends a call that
//! never ran (a refused Return becomes a blank line). So before the first step, the turns
//! are read into [`Step`]s, each naming the turns it stands for:
//!
//! - a turn whose call failed or was refused is **skipped** (`recorded as failed (…)`);
//! - an attempt that a retry of the same call follows (the escalated delivery, or the same
//!   call after a `no_change` / `suspected_noop`) is **folded** into the retry, when the
//!   recording shows the attempt changed nothing (its before- and after-states, and the
//!   retry's before-state, are one tree). The step replays the retry.
//!
//! A turn the recording shows acting is never folded, whatever its result said: an agent
//! that presses "7" twice on purpose gets "77" back. `--raw` ([`Plan::raw`]) makes each turn
//! a step of its own, as recorded.
//!
//! In: the turns ([`Recorded`]: the typed action and its recorded trees). Out: a [`Plan`],
//! which `cua replay`, `cua test` and `replay_trajectory` drive alike, and `cua replay
//! --plan` prints.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::snapshot::markdown;
use crate::trajectory::Action;

/// One recorded turn, as the plan reads it.
pub struct Recorded<'a> {
    pub number: u32,
    pub action: &'a Action,
    /// The recorded trees before and after the action (tree_markdown), when recorded.
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
}

/// What a replay drives: the steps, in order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Plan {
    /// Each turn is a step, as recorded (`--raw`): nothing skipped or folded.
    pub raw: bool,
    pub steps: Vec<Step>,
}

/// One intention of the recording: the turn that is replayed, the earlier attempts it
/// stands for, or a turn that is not replayed and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Step {
    /// The turn replayed (the last of `turns`), or the turn skipped.
    pub turn: u32,
    pub tool: String,
    /// Every turn this step stands for, in order.
    pub turns: Vec<u32>,
    /// The earlier turns of this step, which are not replayed, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<Folded>,
    /// Why the turn is not replayed at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// An attempt folded into the step that retried it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Folded {
    pub turn: u32,
    pub why: String,
}

/// The turns a step leaves out, a line each, as every report names them: `turn 2
/// (press_key): folded into turn 3: …`, `turn 4 (press_key): recorded as failed (…)`.
pub fn left_out(turn: u32, tool: &str, skipped: Option<&str>, folded: &[Folded]) -> Vec<String> {
    let folded = folded.iter().map(|f| {
        format!(
            "turn {} ({tool}): folded into turn {turn}: {}",
            f.turn, f.why
        )
    });
    let skipped = skipped.map(|why| format!("turn {turn} ({tool}): {why}"));
    folded.chain(skipped).collect()
}

impl Plan {
    /// The steps of `turns` (in recorded order); with `raw`, one step a turn.
    pub fn of(turns: &[Recorded<'_>], raw: bool) -> Plan {
        let mut steps: Vec<Step> = Vec::new();
        // The attempts waiting for the turn that retries them.
        let mut pending: Vec<Folded> = Vec::new();
        for (k, turn) in turns.iter().enumerate() {
            let next = turns.get(k + 1);
            let skipped = (!raw).then(|| skip(turn)).flatten();
            if skipped.is_none() && !raw {
                if let Some(why) = next.and_then(|next| superseded(turn, next)) {
                    pending.push(Folded {
                        turn: turn.number,
                        why,
                    });
                    continue;
                }
            }
            let folded = std::mem::take(&mut pending);
            let mut numbers: Vec<u32> = folded.iter().map(|f| f.turn).collect();
            numbers.push(turn.number);
            steps.push(Step {
                turn: turn.number,
                tool: turn.action.tool.clone(),
                turns: numbers,
                folded,
                skipped,
            });
        }
        Plan { raw, steps }
    }

    /// The steps of turns read from their folders (number, folder, action): each turn's
    /// recorded trees are read here, where the rules need them (not with `raw`).
    pub fn of_folders<'a>(
        turns: impl IntoIterator<Item = (u32, &'a Path, &'a Action)>,
        raw: bool,
    ) -> Plan {
        use crate::trajectory::read::{State, state_markdown};
        let read = |dir: &Path, which| (!raw).then(|| state_markdown(dir, which)).flatten();
        let turns: Vec<(u32, &Action, Option<String>, Option<String>)> = turns
            .into_iter()
            .map(|(n, dir, action)| (n, action, read(dir, State::Before), read(dir, State::After)))
            .collect();
        let recorded: Vec<Recorded<'_>> = turns
            .iter()
            .map(|(number, action, before, after)| Recorded {
                number: *number,
                action,
                before: before.as_deref(),
                after: after.as_deref(),
            })
            .collect();
        Plan::of(&recorded, raw)
    }

    /// How many turns are skipped, and how many folded into a retry.
    pub fn counts(&self) -> (usize, usize) {
        let skipped = self.steps.iter().filter(|s| s.skipped.is_some()).count();
        let folded = self.steps.iter().map(|s| s.folded.len()).sum();
        (skipped, folded)
    }
}

/// Why `turn` is not replayed, when the recording says its call did not run.
///
/// A call that ran is replayed even when its driver saw nothing happen and asked for an
/// escalation the agent did not take: typing into a password field reads back as no change
/// (no tree shows its text) and did act. Replaying such a turn at worst fails a later step
/// honestly; skipping it could pass a run that lost input.
fn skip(turn: &Recorded<'_>) -> Option<String> {
    let failure = turn.action.failure()?;
    Some(format!("recorded as failed ({failure})"))
}

/// Why `attempt` is folded into `next`, when `next` retries it: the same call on the same
/// element, after an attempt the driver flagged and the recording shows changed nothing.
fn superseded(attempt: &Recorded<'_>, next: &Recorded<'_>) -> Option<String> {
    let (a, b) = (attempt.action, next.action);
    if a.failure().is_some() || b.failure().is_some() || !same_call(attempt, next) {
        return None;
    }
    if !showed_nothing(attempt, Some(next)) {
        return None;
    }
    let escalated =
        b.delivery_mode() == Some("foreground") && a.delivery_mode() != Some("foreground");
    let effect = a.result.effect.as_deref().unwrap_or("none recorded");
    if escalated && (a.result.asked_to_escalate() || a.result.saw_no_change()) {
        let reason = match &a.result.escalation {
            Some(e) if !e.reason.is_empty() => format!("; {}", e.reason),
            _ => String::new(),
        };
        return Some(format!(
            "the app showed no change (effect {effect}{reason}); turn {} retried it in the foreground",
            next.number
        ));
    }
    (a.result.saw_no_change() || a.result.asked_to_escalate()).then(|| {
        format!(
            "the app showed no change (effect {effect}); turn {} called it again",
            next.number
        )
    })
}

/// Whether the recording shows that `turn` changed nothing: its before- and after-trees
/// are one, and so is the next turn's before-tree (a late change shows there). Without
/// recorded trees, the driver's own word (`no_change`, `suspected_noop`).
fn showed_nothing(turn: &Recorded<'_>, next: Option<&Recorded<'_>>) -> bool {
    match (turn.before, turn.after) {
        (Some(before), Some(after)) => {
            before == after && next.and_then(|n| n.before).is_none_or(|b| b == before)
        }
        _ => turn.action.result.saw_no_change(),
    }
}

/// Arguments that say how or through which snapshot a call reached its element, not what
/// it did: a retry may differ in these.
const DELIVERY_ARGUMENTS: [&str; 3] = ["delivery_mode", "element_index", "element_token"];

/// Whether two turns make the same call: the same tool, the same arguments but for how
/// they were delivered, and the same element.
fn same_call(a: &Recorded<'_>, b: &Recorded<'_>) -> bool {
    let what = |r: &Recorded<'_>| -> Vec<(String, Value)> {
        let mut args: Vec<(String, Value)> = r
            .action
            .arguments
            .iter()
            .filter(|(k, _)| !DELIVERY_ARGUMENTS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        args.sort_by(|x, y| x.0.cmp(&y.0));
        args
    };
    a.action.tool == b.action.tool && what(a) == what(b) && same_element(a, b)
}

/// Whether two turns act on one element (or both on none): their locators' paths, else
/// their elements' lines in the recorded trees.
fn same_element(a: &Recorded<'_>, b: &Recorded<'_>) -> bool {
    let (ia, ib) = (a.action.element_index(), b.action.element_index());
    let (Some(ia), Some(ib)) = (ia, ib) else {
        return ia.is_none() && ib.is_none();
    };
    if let (Some(ta), Some(tb)) = (&a.action.target, &b.action.target) {
        return ta.role == tb.role && ta.name == tb.name && ta.path == tb.path;
    }
    let line = |r: &Recorded<'_>, index: u64| -> Option<(String, String, Vec<String>)> {
        let lines = markdown::parse(r.before?);
        let (line, ancestors) = markdown::element_with_ancestors(&lines, index as usize)?;
        let path = ancestors.iter().map(|l| format!("{} {:?}", l.role, l.name));
        Some((line.role.clone(), line.name.clone(), path.collect()))
    };
    match (line(a, ia), line(b, ib)) {
        (Some(x), Some(y)) => x == y,
        // Nothing tells the elements apart but their indices in one recording.
        _ => ia == ib && a.before.is_none() && b.before.is_none(),
    }
}

#[cfg(test)]
mod tests;
