//! Escalation inside a sandbox: when an action comes back saying it could not work in the
//! background (`escalation: {recommended: "foreground"}`, e.g. keys sent to GTK 4, which
//! ignores synthetic X events) and the desktop is a cua sandbox, where no person's focus
//! or pointer can be taken, replay and `cua test` repeat the call with
//! `delivery_mode: "foreground"`. Both calls are turns of a recording, the second with
//! its `delivery_mode`, so the trajectory shows that the escalation was taken. On a
//! person's desktop nothing is repeated: the result says what to do.

use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::errors::ToolError;
use crate::output::ToolOutput;
use crate::trajectory::Action;

/// The result of a call, and how many calls (turns, when recording) it took.
pub struct Escalated {
    pub result: Result<ToolOutput, ToolError>,
    pub calls: u32,
}

/// Whether a call's result asks for foreground delivery of an effect it could not confirm.
fn wants_foreground(out: &ToolOutput) -> bool {
    out.structured.pointer("/escalation/recommended") == Some(&json!("foreground"))
        && out.structured["effect"] != "confirmed"
}

/// Runs `tool`; in a sandbox, once more in the foreground when the result asks for it and
/// the caller did not choose a delivery mode.
pub async fn call(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    tool: &str,
    args: Value,
) -> Escalated {
    let first = registry.call(ctx, tool, args.clone()).await;
    let takes_mode = registry
        .get(tool)
        .map(|t| {
            t.input_schema()["properties"]
                .get("delivery_mode")
                .is_some()
        })
        .unwrap_or(false);
    let repeat = ctx.desktop().sandbox_dir.is_some()
        && takes_mode
        && args.get("delivery_mode").is_none()
        && first.as_ref().is_ok_and(wants_foreground);
    if !repeat {
        return Escalated {
            result: first,
            calls: 1,
        };
    }
    let mut args = args;
    args["delivery_mode"] = json!("foreground");
    Escalated {
        result: registry.call(ctx, tool, args).await,
        calls: 2,
    }
}

/// Whether `next` (the turn after `action`) is the foreground repeat of `action`.
pub fn is_repeat_of(action: &Action, next: &Action) -> bool {
    action.tool == next.tool
        && next.delivery_mode() == Some("foreground")
        && action.delivery_mode().is_none()
}
