//! Finding a turn's element in the live window: its recorded locator through the healing
//! ladder ([`super::heal`]), or, for a recording that kept none, its line in the recorded
//! tree ([`super::locate`]); waiting (bounded) until it is there and enabled, and saying
//! what was healed.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::platform::WindowInfo;
use crate::snapshot::Snapshot;
use crate::trajectory::{Action, Locator};

use super::heal::{self, LocatorRule, Neighbours};
use super::locate::{MarkdownTarget, resolve_markdown};
use super::postcondition::Rename;
use super::window::TurnStates;

/// What a recorded element turn says its element was.
enum Recorded {
    Locator(Locator, Option<Neighbours>),
    Markdown(MarkdownTarget),
}

/// The live element a turn acts on.
pub(super) struct Element {
    pub index: usize,
    /// The rule that found it: a ladder rung, or `tree_markdown`.
    pub rule: &'static str,
    /// How it was healed, for a reader; None when found as recorded.
    pub heal: Option<String>,
    /// Its recorded role and name read as the live ones, when they differ.
    pub rename: Option<Rename>,
    /// Its locator in the live window, when it was healed (what `--heal` writes back).
    pub healed_target: Option<Locator>,
    /// Every candidate and what decided, when several fitted.
    pub look_alikes: Option<String>,
}

impl Recorded {
    fn of(action: &Action, states: &TurnStates, recorded_index: usize) -> Result<Recorded, String> {
        match &action.target {
            Some(t) => Ok(Recorded::Locator(
                t.clone(),
                states
                    .before
                    .as_deref()
                    .map(|md| Neighbours::in_markdown(md, recorded_index)),
            )),
            None => states
                .before
                .as_deref()
                .and_then(|md| MarkdownTarget::in_markdown(md, recorded_index))
                .map(Recorded::Markdown)
                .ok_or_else(|| {
                    format!("turn has element_index {recorded_index} but no locator and no [{recorded_index}] line in before_state.json's tree_markdown")
                }),
        }
    }

    /// The element in `snapshot`, or why it is not pressed.
    fn find(&self, snapshot: &Snapshot) -> Result<Element, String> {
        match self {
            Recorded::Locator(loc, neighbours) => {
                let found = heal::find(snapshot, loc, neighbours.as_ref())?;
                let node = &snapshot.tree.nodes[snapshot.elements[found.index]];
                if heal::enabled(&loc.states) && !heal::enabled(&node.states) {
                    return Err(heal::disabled_message(&node.role, &node.name));
                }
                let healed = found.rule != LocatorRule::ExactPath;
                let renamed = found.role != loc.role || found.name != loc.name;
                Ok(Element {
                    index: found.index,
                    rule: found.rule.as_str(),
                    heal: found.heal,
                    rename: (renamed && healed).then(|| Rename {
                        from_role: loc.role.clone(),
                        from_name: loc.name.clone(),
                        to_role: found.role.clone(),
                        to_name: found.name.clone(),
                    }),
                    healed_target: healed.then(|| {
                        Locator::of(&snapshot.tree, snapshot.elements[found.index], found.index)
                    }),
                    look_alikes: found.look_alikes,
                })
            }
            Recorded::Markdown(m) => Ok(Element {
                index: resolve_markdown(snapshot, m)?,
                rule: "tree_markdown",
                heal: None,
                rename: None,
                healed_target: None,
                look_alikes: None,
            }),
        }
    }
}

/// The live element of an element-indexed turn (None for other turns), found by
/// `deadline`: in the snapshot a previous turn took when the locator's exact path leads to
/// an element that is still live and unchanged (one round trip instead of a tree walk),
/// else in fresh snapshots until it resolves. Sets `args`' element index to it.
pub(super) async fn find_element(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    action: &Action,
    states: &TurnStates,
    window: &WindowInfo,
    args: &mut Value,
    deadline: Instant,
) -> Result<Option<Element>, String> {
    let Some(recorded_index) = args.get("element_index").and_then(Value::as_u64) else {
        return Ok(None);
    };
    let recorded = Recorded::of(action, states, recorded_index as usize)?;
    let pid = window.pid.unwrap_or(0);
    let cached = match ctx.snapshot(pid, window.window_id) {
        Some(snap) => match recorded.find(&snap) {
            Ok(e)
                if e.rule == LocatorRule::ExactPath.as_str()
                    && still_live(ctx, &snap, e.index).await =>
            {
                Some(e)
            }
            _ => None,
        },
        None => None,
    };
    let element = match cached {
        Some(found) => found,
        None => loop {
            let (_, snapshot) = registry
                .read_window(ctx, pid, window.window_id)
                .await
                .map_err(|e| e.to_string())?;
            match recorded.find(&snapshot) {
                Ok(found) => break found,
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        },
    };
    args["element_index"] = json!(element.index);
    // The recorded snapshot id named a snapshot of the recording's session.
    if let Some(fields) = args.as_object_mut() {
        fields.remove("snapshot_id");
    }
    Ok(Some(element))
}

/// Whether the element a cached snapshot resolves to is still that element: alive, same
/// name, and still visible/showing when it was. One round trip instead of a new tree walk.
async fn still_live(ctx: &ToolContext, snapshot: &Snapshot, index: usize) -> bool {
    let node = &snapshot.tree.nodes[snapshot.elements[index]];
    let Ok(platform) = ctx.platform().await else {
        return false;
    };
    let Ok(live) = platform.read_element(&node.handle).await else {
        return false;
    };
    let kept = |state: &str| {
        !node.states.iter().any(|s| s == state) || live.states.iter().any(|s| s == state)
    };
    live.name == node.name && kept("visible") && kept("showing") && kept("sensitive")
}
