//! Sessions: the tool contexts of a server that serves several at once (the daemon, the
//! MCP server). A call's `session` argument picks its context, made on first use; calls
//! without one use the server's own. The session tools (start_session, end_session,
//! get_session, list_sessions) read and end them through each context's [`Directory`].
//!
//! An ended named session stays ended: a later call naming it is refused until
//! start_session revives it (cua-driver's rule), so a run that ended cannot be resumed by
//! a straggling call.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::ToolContext;
use crate::errors::ToolError;

/// The tool that revives an ended session; every other tool is refused one.
pub const START_SESSION: &str = "start_session";

/// A server's sessions: its own (default) context and the named ones.
pub struct Sessions {
    default: Arc<ToolContext>,
    directory: Arc<Directory>,
}

/// The named sessions and the ended names, shared with every context they hold.
pub struct Directory {
    default: std::sync::Weak<ToolContext>,
    by_id: Mutex<HashMap<String, Arc<ToolContext>>>,
    ended: Mutex<HashSet<String>>,
}

/// One session as the session tools list it.
pub struct SessionEntry {
    pub id: Option<String>,
    /// The server's own session (calls that name none), not one a client named.
    pub implicit: bool,
    pub context: Arc<ToolContext>,
}

impl Sessions {
    pub fn new(default: Arc<ToolContext>) -> Self {
        let directory = Arc::new(Directory {
            default: Arc::downgrade(&default),
            by_id: Mutex::new(HashMap::new()),
            ended: Mutex::new(HashSet::new()),
        });
        default.join(&directory);
        Sessions { default, directory }
    }

    /// The context a call of `tool` runs in. A `session` that is not a short string is
    /// refused, and so is an ended one, except by start_session (which revives it).
    pub fn for_call(&self, tool: &str, args: &Value) -> Result<Arc<ToolContext>, ToolError> {
        let Some(session) = args.get("session") else {
            return Ok(self.default.clone());
        };
        let id = session
            .as_str()
            .filter(|s| !s.is_empty() && s.len() <= 128)
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "`session`: expected a non-empty string of at most 128 characters, got {session}"
                ))
            })?;
        if self.default.session() == Some(id) {
            return Ok(self.default.clone());
        }
        let revived = {
            let mut ended = self.directory.ended.lock().unwrap();
            if ended.contains(id) && tool != START_SESSION {
                return Err(ToolError::invalid(format!(
                    "`session`: session {id:?} was ended; start_session revives it"
                )));
            }
            ended.remove(id)
        };
        let ctx = self
            .directory
            .by_id
            .lock()
            .unwrap()
            .entry(id.to_string())
            .or_insert_with(|| {
                let ctx = Arc::new(ToolContext::for_session(self.default.desktop().clone(), id));
                ctx.join(&self.directory);
                ctx
            })
            .clone();
        if revived {
            ctx.activity
                .revived
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(ctx)
    }

    /// Ends session `id` because its client is gone: its recording is finalized and its
    /// context dropped (a later call may name it again).
    pub async fn end(&self, id: &str) {
        let ended = self.directory.by_id.lock().unwrap().remove(id);
        if let Some(ctx) = ended {
            ctx.release_held_button().await;
            ctx.recorder.stop_when_done().await;
        }
    }

    /// How many sessions there are, the server's own included.
    pub fn count(&self) -> usize {
        1 + self.directory.by_id.lock().unwrap().len()
    }

    /// Finalizes every session's recording (server shutdown, client gone).
    pub async fn finalize_all(&self) {
        let all: Vec<Arc<ToolContext>> = std::iter::once(self.default.clone())
            .chain(self.directory.by_id.lock().unwrap().values().cloned())
            .collect();
        for ctx in all {
            ctx.release_held_button().await;
            ctx.recorder.stop_when_done().await;
        }
    }
}

impl Directory {
    /// Every live session, the server's own first, then the named ones by name.
    pub fn entries(&self) -> Vec<SessionEntry> {
        let mut named: Vec<SessionEntry> = self
            .by_id
            .lock()
            .unwrap()
            .iter()
            .map(|(id, ctx)| SessionEntry {
                id: Some(id.clone()),
                implicit: false,
                context: ctx.clone(),
            })
            .collect();
        named.sort_by(|a, b| a.id.cmp(&b.id));
        let own = self.default.upgrade().map(|ctx| SessionEntry {
            id: ctx.session().map(String::from),
            implicit: true,
            context: ctx,
        });
        own.into_iter().chain(named).collect()
    }

    /// Whether `ctx` is the server's own session (which ends only with its connection).
    pub fn is_default(&self, ctx: &ToolContext) -> bool {
        self.default
            .upgrade()
            .is_some_and(|d| std::ptr::eq(Arc::as_ptr(&d), ctx))
    }

    /// Ends a session (end_session): its recording is finalized; a named session is
    /// dropped and its name refused until revived, the server's own starts over.
    pub async fn end(&self, ctx: &Arc<ToolContext>) {
        ctx.release_held_button().await;
        ctx.recorder.stop_when_done().await;
        if self.is_default(ctx) {
            ctx.forget();
            return;
        }
        if let Some(id) = ctx.session() {
            self.by_id.lock().unwrap().remove(id);
            self.ended.lock().unwrap().insert(id.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sessions() -> Sessions {
        let env = crate::platform::DesktopEnv::from_process_env();
        Sessions::new(Arc::new(ToolContext::for_session(env, "own")))
    }

    #[tokio::test]
    async fn an_ended_session_is_refused_until_start_session_revives_it() {
        let s = sessions();
        let run = s.for_call("click", &json!({ "session": "run-1" })).unwrap();
        assert!(Arc::ptr_eq(
            &run,
            &s.for_call("zoom", &json!({ "session": "run-1" })).unwrap()
        ));
        let directory = run
            .directory()
            .expect("a named session knows its directory");
        let ids: Vec<_> = directory.entries().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, [Some("own".to_string()), Some("run-1".to_string())]);
        directory.end(&run).await;
        let Err(err) = s.for_call("click", &json!({ "session": "run-1" })) else {
            panic!("an ended session was served");
        };
        assert!(
            err.to_string().contains("start_session revives it"),
            "{err}"
        );
        let revived = s
            .for_call(START_SESSION, &json!({ "session": "run-1" }))
            .unwrap();
        assert!(!Arc::ptr_eq(&run, &revived));
        assert!(s.for_call("click", &json!({ "session": "run-1" })).is_ok());
    }

    #[tokio::test]
    async fn the_servers_own_session_starts_over_when_ended_and_is_never_refused() {
        let s = sessions();
        let own = s.for_call("click", &json!({})).unwrap();
        assert!(Arc::ptr_eq(
            &own,
            &s.for_call("click", &json!({ "session": "own" })).unwrap()
        ));
        let directory = own.directory().unwrap();
        assert!(directory.is_default(&own));
        directory.end(&own).await;
        assert!(s.for_call("click", &json!({})).is_ok());
        assert!(s.for_call("click", &json!({ "session": "own" })).is_ok());
        let Err(err) = s.for_call("click", &json!({ "session": "" })) else {
            panic!("an empty session name was taken");
        };
        assert!(err.to_string().contains("`session`"), "{err}");
    }
}
