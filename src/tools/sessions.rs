//! The session tools: `start_session`, `end_session`, `get_session` and `list_sessions`,
//! over the sessions a server keeps ([`crate::dispatch::Sessions`]): each has its own
//! element snapshots, recorder and set_config overrides. A call's `session` argument picks
//! the session it runs in, so these tools act on the session they are called in.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{NoArgs, ToolContext, ToolOutput, ToolSpec};
use crate::dispatch::{Contract, Risk, SessionEntry};
use crate::errors::ToolError;

/// What the session tools say of one session (no content: no tree, no screenshot).
fn describe(id: Option<&str>, implicit: bool, ctx: &ToolContext) -> Value {
    json!({
        "session": id,
        "implicit": implicit,
        "state": "active",
        "recording_active": ctx.recorder.is_recording(),
        "cursor_visible": ctx.config("agent_cursor.enabled").as_bool().unwrap_or(false),
        "snapshots": ctx.snapshot_keys().len(),
        "age_seconds": ctx.activity.created.elapsed().as_secs(),
        "idle_seconds": ctx.activity.idle().as_secs(),
    })
}

/// This call's session as the session tools describe it.
fn this_session(ctx: &ToolContext) -> Value {
    let implicit = ctx.directory().is_none_or(|d| d.is_default(ctx));
    describe(ctx.session(), implicit, ctx)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartSessionArgs {
    /// Deprecated (cua-driver compatibility): accepted and reported back; cua picks window or desktop per action.
    pub capture_scope: Option<CaptureScope>,
    /// Refused: cua has no cursor themes (set_agent_cursor_style sets the agent cursor's look).
    pub cursor_theme: Option<Value>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureScope {
    Auto,
    Window,
    Desktop,
}

pub struct StartSession;

#[async_trait]
impl ToolSpec for StartSession {
    type Args = StartSessionArgs;
    const NAME: &'static str = crate::dispatch::START_SESSION;
    const DESCRIPTION: &'static str = "Start (or return) the session named by `session`: calls naming the same session share element snapshots, the recorder and set_config overrides. Optional: any call naming a session creates it; start_session is the one call that revives a session after end_session. Without `session`, returns the connection's own. Returns session, active and revived.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["session.lifecycle.start", "session.capture_scope"],
        risk: Risk::R1,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, a: StartSessionArgs) -> Result<ToolOutput, ToolError> {
        if a.cursor_theme.is_some() {
            return Err(ToolError::invalid(
                "`cursor_theme`: cua has no cursor themes; set_agent_cursor_style sets the agent cursor's colours and shape",
            ));
        }
        let mut session = this_session(ctx);
        let scope = a.capture_scope.unwrap_or(CaptureScope::Auto);
        session["active"] = json!(true);
        let revived = ctx
            .activity
            .revived
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        session["revived"] = json!(revived);
        session["capture_scope"] = json!(scope);
        Ok(ToolOutput::new(
            format!(
                "session {} is active",
                ctx.session().unwrap_or("(this process)")
            ),
            session,
        ))
    }
}

pub struct EndSession;

#[async_trait]
impl ToolSpec for EndSession {
    type Args = NoArgs;
    const NAME: &'static str = "end_session";
    const DESCRIPTION: &'static str = "End the session named by `session` (default: the connection's own): its recording is finalized and its snapshots, recorder and set_config overrides dropped. A named session stays ended (later calls naming it are refused) until start_session revives it; the connection's own starts over. Idempotent.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["session.lifecycle.end"],
        risk: Risk::R1,
        destructive: true,
        idempotent: true,
        open_world: false,
    };
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, _a: NoArgs) -> Result<ToolOutput, ToolError> {
        let id = ctx.session().map(String::from);
        match ctx.directory() {
            Some(directory) => {
                let this = directory
                    .entries()
                    .into_iter()
                    .find(|e| std::ptr::eq(Arc::as_ptr(&e.context), ctx))
                    .map(|e| e.context);
                if let Some(this) = this {
                    directory.end(&this).await;
                }
            }
            None => {
                ctx.recorder.stop_when_done().await;
            }
        }
        Ok(ToolOutput::new(
            format!(
                "session {} ended",
                id.as_deref().unwrap_or("(this process)")
            ),
            json!({ "session": id, "active": false }),
        ))
    }
}

pub struct GetSession;

#[async_trait]
impl ToolSpec for GetSession {
    type Args = NoArgs;
    const NAME: &'static str = "get_session";
    const DESCRIPTION: &'static str = "Describe the session named by `session` (default: the connection's own), without content: implicit (the connection's own), recording_active, cursor_visible, snapshots held, age_seconds and idle_seconds. Sessions last until ended or until their connection closes.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["session.lifecycle.read"]);

    async fn run(&self, ctx: &ToolContext, _a: NoArgs) -> Result<ToolOutput, ToolError> {
        let session = this_session(ctx);
        Ok(ToolOutput::new(
            format!(
                "session {}: recording {}, {} snapshots, idle {} s",
                ctx.session().unwrap_or("(this process)"),
                if session["recording_active"] == true {
                    "on"
                } else {
                    "off"
                },
                session["snapshots"],
                session["idle_seconds"]
            ),
            session,
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSessionsArgs {
    /// Where to go on: next_cursor from the previous page.
    pub cursor: Option<String>,
    /// Sessions per page, 1-100. Default 50.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

pub struct ListSessions;

#[async_trait]
impl ToolSpec for ListSessions {
    type Args = ListSessionsArgs;
    const NAME: &'static str = "list_sessions";
    const DESCRIPTION: &'static str = "List the live sessions of this server (the connection's own first, then named ones by name), each as get_session describes it, a page at a time (limit, cursor → next_cursor).";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["session.lifecycle.list"]);

    async fn run(&self, ctx: &ToolContext, a: ListSessionsArgs) -> Result<ToolOutput, ToolError> {
        let limit = a.limit.unwrap_or(50) as usize;
        if !(1..=100).contains(&limit) {
            return Err(ToolError::invalid(format!(
                "`limit`: 1 to 100, got {limit}"
            )));
        }
        let start = match &a.cursor {
            Some(c) => c.parse::<usize>().map_err(|_| {
                ToolError::invalid(format!(
                    "`cursor`: {c:?} is not a cursor from list_sessions' next_cursor"
                ))
            })?,
            None => 0,
        };
        let entries: Vec<Value> = match ctx.directory() {
            Some(d) => d
                .entries()
                .iter()
                .map(
                    |SessionEntry {
                         id,
                         implicit,
                         context,
                     }| { describe(id.as_deref(), *implicit, context) },
                )
                .collect(),
            None => vec![this_session(ctx)],
        };
        let page: Vec<Value> = entries.iter().skip(start).take(limit).cloned().collect();
        let next = (start + page.len() < entries.len()).then(|| (start + page.len()).to_string());
        let names: Vec<String> = page
            .iter()
            .map(|s| {
                s["session"]
                    .as_str()
                    .unwrap_or("(this process)")
                    .to_string()
            })
            .collect();
        Ok(ToolOutput::new(
            format!("{} sessions: {}", entries.len(), names.join(", ")),
            json!({ "sessions": page, "next_cursor": next }),
        ))
    }
}
