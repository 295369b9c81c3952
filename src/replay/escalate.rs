//! Escalation inside a sandbox: when an action comes back saying it could not work in the
//! background (`escalation: {recommended: "foreground"}`, e.g. keys sent to GTK 4, which
//! ignores synthetic X events) and the desktop is a cua sandbox, where no person's focus
//! or pointer can be taken, replay and `cua test` repeat the call with
//! `delivery_mode: "foreground"`. Both calls are turns of a recording, the second with
//! its `delivery_mode`, so the trajectory shows that the escalation was taken. On a
//! person's desktop nothing is repeated: the result says what to do.
//!
//! The repeat runs only when the app provably did nothing: the window's tree (its lines,
//! values and names, the focus aside) reads as it did before the first call. An app can
//! take input and show it somewhere the tool did not read back (LibreOffice Calc types
//! into an edit line, not the cell): input delivered but not read back is never sent
//! again, which would double it (a cell holding `=SUM(A1:A2)=SUM(A1:A2)`).

use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::errors::ToolError;
use crate::output::ToolOutput;
use crate::trajectory::Action;

/// The result of a call, and how many calls (turns, when recording) it took.
pub struct Escalated {
    pub result: Result<ToolOutput, ToolError>,
    pub calls: u32,
    /// Why the escalation the result asks for was not taken, when it was not.
    pub held_back: Option<String>,
}

/// Whether a call's result asks for foreground delivery of an effect it could not confirm.
fn wants_foreground(out: &ToolOutput) -> bool {
    out.structured.pointer("/escalation/recommended") == Some(&json!("foreground"))
        && out.structured["effect"] != "confirmed"
}

/// Whether `call` may repeat this call in the foreground: in a sandbox, a tool that takes
/// a delivery mode, and the caller chose none. Only then is the window's tree before the
/// call needed.
fn may_repeat(ctx: &ToolContext, registry: &ToolRegistry, tool: &str, args: &Value) -> bool {
    let takes_mode = registry
        .get(tool)
        .map(|t| {
            t.input_schema()["properties"]
                .get("delivery_mode")
                .is_some()
        })
        .unwrap_or(false);
    ctx.desktop().sandbox_dir.is_some() && takes_mode && args.get("delivery_mode").is_none()
}

/// The tree_markdown of the window `args` names (`pid`, `window_id`), read now; None when
/// the call names none or it cannot be read.
async fn window_markdown(ctx: &ToolContext, args: &Value) -> Option<String> {
    let pid = args["pid"].as_u64()? as u32;
    let window_id = args["window_id"].as_u64()?;
    let platform = ctx.platform().await.ok()?;
    let windows = platform.list_windows().await.ok()?.windows;
    let window = windows.into_iter().find(|w| w.window_id == window_id)?;
    let state = crate::snapshot::window_state_json(platform.as_ref(), pid, &window).await;
    state["tree_markdown"].as_str().map(str::to_string)
}

/// Runs `tool`; in a sandbox, once more in the foreground when the result asks for it, the
/// caller did not choose a delivery mode, and the window's tree (`before`: as read just
/// before the call; read here when None and a repeat is possible) shows the first call
/// changed nothing.
pub async fn call(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    tool: &str,
    args: Value,
    before: Option<String>,
) -> Escalated {
    let possible = may_repeat(ctx, registry, tool, &args);
    let before = match (possible, before) {
        (true, None) => window_markdown(ctx, &args).await,
        (_, before) => before,
    };
    let first = registry.call(ctx, tool, args.clone()).await;
    let asked = possible && first.as_ref().is_ok_and(wants_foreground);
    if !asked {
        return Escalated {
            result: first,
            calls: 1,
            held_back: None,
        };
    }
    if let Some(why) = changed_since(ctx, &args, before.as_deref()).await {
        return Escalated {
            result: first,
            calls: 1,
            held_back: Some(format!("not repeated in the foreground: {why}")),
        };
    }
    let mut args = args;
    args["delivery_mode"] = json!("foreground");
    Escalated {
        result: registry.call(ctx, tool, args).await,
        calls: 2,
        held_back: None,
    }
}

/// Why the first delivery may have acted: the window's tree no longer reads as `before`
/// (or either reading is missing, so nothing proves it did not). None: provably unchanged.
async fn changed_since(ctx: &ToolContext, args: &Value, before: Option<&str>) -> Option<String> {
    let Some(before) = before else {
        return Some("the window could not be read before the call".into());
    };
    let Some(now) = window_markdown(ctx, args).await else {
        return Some("the window could not be read after the call".into());
    };
    let reading = super::postcondition::Reading {
        incidental: crate::snapshot::incidental::Incidental::none(),
        ..Default::default()
    };
    let changes = super::postcondition::changed_lines(before, &now, &reading);
    let first = changes.first()?;
    Some(format!(
        "the window changed after the first delivery ({first}{}), so the input may have landed",
        match changes.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        }
    ))
}

/// Whether `next` (the turn after `action`) is the foreground repeat of `action`.
pub fn is_repeat_of(action: &Action, next: &Action) -> bool {
    action.tool == next.tool
        && next.delivery_mode() == Some("foreground")
        && action.delivery_mode().is_none()
}
