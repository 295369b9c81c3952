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
use crate::dispatch::scope::{CaptureScope, EscalationReason, ScopePolicy};
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
    /// cua-driver's deprecated session scope: window refuses screen-level calls, desktop refuses window reads, auto is window until escalate_session. Fixed for the session's life; without it the session is not confined (cua picks per action).
    pub capture_scope: Option<CaptureScope>,
    /// Refused: cua has no cursor themes (set_agent_cursor_style sets the agent cursor's look).
    pub cursor_theme: Option<Value>,
}

/// The session's capture scope as the session tools report it: cua-driver's fields when
/// start_session set one, else that none confines it.
fn scope_of(ctx: &ToolContext) -> Value {
    let session = ctx.session().unwrap_or("default");
    match ctx.capture_scope.lock().unwrap().as_ref() {
        Some(policy) => policy.describe(session),
        None => json!({ "session": session, "capture_scope": null, "scope_enforced": false }),
    }
}

/// Adds the scope fields to a session description.
fn with_scope(mut doc: Value, ctx: &ToolContext) -> Value {
    if let (Value::Object(d), Value::Object(scope)) = (&mut doc, scope_of(ctx)) {
        for (k, v) in scope {
            d.entry(k).or_insert(v);
        }
    }
    doc
}

pub struct StartSession;

#[async_trait]
impl ToolSpec for StartSession {
    type Args = StartSessionArgs;
    const NAME: &'static str = crate::dispatch::START_SESSION;
    const DESCRIPTION: &'static str = "Start (or return) the session named by `session`: calls naming the same session share element snapshots, the recorder and set_config overrides. Optional: any call naming a session creates it; start_session is the one call that revives a session after end_session. Without `session`, returns the connection's own. Returns session, active and revived.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(
        Risk::R1,
        &["session.lifecycle.start", "session.capture_scope"],
    );
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(&self, ctx: &ToolContext, a: StartSessionArgs) -> Result<ToolOutput, ToolError> {
        if a.cursor_theme.is_some() {
            return Err(ToolError::invalid(
                "`cursor_theme`: cua has no cursor themes; set_agent_cursor_style sets the agent cursor's colours and shape",
            ));
        }
        if let Some(wanted) = a.capture_scope {
            let mut current = ctx.capture_scope.lock().unwrap();
            match current.as_ref() {
                Some(set) if set.scope != wanted => {
                    let name = ctx.session().unwrap_or("default");
                    let mut details = set.describe(name);
                    details["requested_capture_scope"] = json!(wanted);
                    return Err(ToolError::Refusal {
                        code: "session_policy_conflict".into(),
                        message: format!(
                            "session '{name}' already has capture_scope {}; a session's scope is fixed: end_session, then start_session again",
                            json!(set.scope)
                        ),
                        details,
                    });
                }
                Some(_) => {}
                None => *current = Some(ScopePolicy::new(wanted)),
            }
        }
        let mut session = with_scope(this_session(ctx), ctx);
        session["active"] = json!(true);
        let revived = ctx
            .activity
            .revived
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        session["revived"] = json!(revived);
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EscalateSessionArgs {
    /// Why window scope did not do.
    pub reason: EscalationReason,
    /// Optional short detail (at most 200 characters; no secrets or page content).
    pub detail: Option<String>,
}

pub struct EscalateSession;

#[async_trait]
impl ToolSpec for EscalateSession {
    type Args = EscalateSessionArgs;
    const NAME: &'static str = "escalate_session";
    const DESCRIPTION: &'static str = "Unlock screen-level calls for a session started with capture_scope auto, for good (its window reads are then refused; end the session to go back). cua-driver compatibility: a session that set no scope needs no escalation. Returns the session's scope.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["session.capture_scope.escalate"],
        // Widens what the session may do, for good (cua-driver's class too).
        risk: Risk::R2,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    async fn run(
        &self,
        ctx: &ToolContext,
        a: EscalateSessionArgs,
    ) -> Result<ToolOutput, ToolError> {
        if a.detail.as_ref().is_some_and(|d| d.chars().count() > 200) {
            return Err(ToolError::invalid("`detail`: at most 200 characters"));
        }
        let name = ctx.session().unwrap_or("default").to_string();
        let mut guard = ctx.capture_scope.lock().unwrap();
        let policy = guard.as_mut().ok_or_else(|| {
            ToolError::invalid(format!(
                "session '{name}' set no capture_scope, so nothing confines it to escalate from (start_session with capture_scope auto to use escalation)"
            ))
        })?;
        match policy.scope {
            CaptureScope::Window => {
                let mut details = policy.describe(&name);
                details["code"] = json!("escalation_not_permitted");
                return Err(ToolError::Refusal {
                    code: "escalation_not_permitted".into(),
                    message: format!(
                        "session '{name}' has capture_scope window, which does not escalate; start a session with capture_scope auto or desktop"
                    ),
                    details,
                });
            }
            CaptureScope::Auto if policy.escalation.is_none() => {
                policy.escalation = Some((a.reason, a.detail));
            }
            _ => {}
        }
        let doc = policy.describe(&name);
        Ok(ToolOutput::new(
            format!("session {name}: desktop scope unlocked"),
            doc,
        ))
    }
}

pub struct GetSessionState;

#[async_trait]
impl ToolSpec for GetSessionState {
    type Args = NoArgs;
    const NAME: &'static str = "get_session_state";
    const DESCRIPTION: &'static str = "The session's capture scope (cua-driver compatibility): capture_scope, effective_scope, desktop_unlocked and the escalation, or that no scope confines it. get_session has its lifecycle.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["session.capture_scope.read"]);
    const RECORDED: bool = false;

    async fn run(&self, ctx: &ToolContext, _a: NoArgs) -> Result<ToolOutput, ToolError> {
        let doc = scope_of(ctx);
        let summary = match doc["capture_scope"].as_str() {
            Some(scope) => format!(
                "capture_scope {scope}, effective {}",
                doc["effective_scope"].as_str().unwrap_or("?")
            ),
            None => "no capture_scope confines this session".to_string(),
        };
        Ok(ToolOutput::new(summary, doc))
    }
}
