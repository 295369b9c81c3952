//! A session's capture scope: cua-driver's deprecated compatibility policy, which its
//! clients still set with `start_session {capture_scope}`. A session that never set one is
//! not confined (cua picks window or desktop per action); once set, it holds for the
//! session's life (a different scope is refused until end_session):
//! - `window`: screen-level reads (get_desktop_state, get_screen_size) and desktop-scoped
//!   actions are refused, `desktop_scope_disabled`;
//! - `desktop`: window reads (get_window_state, zoom, a window's screenshot) are refused,
//!   `window_scope_disabled`;
//! - `auto`: window until `escalate_session` unlocks the desktop, for good (then window
//!   reads are refused as in `desktop`); before that, desktop calls are refused with
//!   `desktop_escalation_required`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::errors::ToolError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaptureScope {
    Auto,
    Window,
    Desktop,
}

/// Why a session escalated (cua-driver's reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EscalationReason {
    AxTreePixelMismatch,
    BackgroundDeliveryFailed,
    ForegroundIneffective,
    NoWindowTarget,
    Other,
}

/// A session's scope once set.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopePolicy {
    pub scope: CaptureScope,
    pub escalation: Option<(EscalationReason, Option<String>)>,
}

impl ScopePolicy {
    pub fn new(scope: CaptureScope) -> Self {
        ScopePolicy {
            scope,
            escalation: None,
        }
    }

    /// Whether desktop calls are allowed.
    pub fn desktop_unlocked(&self) -> bool {
        match self.scope {
            CaptureScope::Desktop => true,
            CaptureScope::Window => false,
            CaptureScope::Auto => self.escalation.is_some(),
        }
    }

    /// The session's scope as cua-driver's session tools report it.
    pub fn describe(&self, session: &str) -> Value {
        let unlocked = self.desktop_unlocked();
        json!({
            "session": session,
            "capture_scope": self.scope,
            "effective_scope": if unlocked { "desktop" } else { "window" },
            "desktop_unlocked": unlocked,
            "escalation_reason": self.escalation.as_ref().map(|(r, _)| *r),
            "escalation_detail": self.escalation.as_ref().and_then(|(_, d)| d.clone()),
        })
    }
}

/// What a call needs of the scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Desktop,
    Window,
    Either,
}

/// What `tool` called with `args` (as given, before dispatch resolves a desktop scope)
/// needs of the session's scope.
pub fn needs(tool: &str, args: &Value, desktop_scoped: bool) -> Needs {
    match tool {
        "get_desktop_state" | "get_screen_size" => Needs::Desktop,
        _ if desktop_scoped => Needs::Desktop,
        "get_window_state" | "zoom" => Needs::Window,
        "screenshot" if !args["window_id"].is_null() => Needs::Window,
        _ => Needs::Either,
    }
}

/// Refuses a call the session's scope does not allow.
pub fn check(
    policy: Option<&ScopePolicy>,
    session: &str,
    tool: &str,
    needs: Needs,
) -> Result<(), ToolError> {
    let Some(policy) = policy else {
        return Ok(());
    };
    let unlocked = policy.desktop_unlocked();
    let refuse = |code: &'static str, message: String| {
        let mut details = policy.describe(session);
        details["code"] = json!(code);
        Err(ToolError::Refusal {
            code: code.to_string(),
            message,
            details,
        })
    };
    match (needs, policy.scope, unlocked) {
        (Needs::Desktop, CaptureScope::Window, _) => refuse(
            "desktop_scope_disabled",
            format!(
                "desktop-scope tool '{tool}' is disabled for session '{session}' (capture_scope window); start another session to work at screen level"
            ),
        ),
        (Needs::Desktop, CaptureScope::Auto, false) => refuse(
            "desktop_escalation_required",
            format!(
                "desktop-scope tool '{tool}' needs session '{session}' escalated first: call escalate_session (the escalation is permanent)"
            ),
        ),
        (Needs::Window, CaptureScope::Desktop, _) => refuse(
            "window_scope_disabled",
            format!(
                "window-scope tool '{tool}' is disabled for session '{session}' (capture_scope desktop); start another session to read windows"
            ),
        ),
        (Needs::Window, CaptureScope::Auto, true) => refuse(
            "window_scope_disabled",
            format!(
                "window-scope tool '{tool}' is disabled because escalation to desktop scope is permanent for session '{session}'; to recover, call end_session for session '{session}', then call start_session with a new session id"
            ),
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<(), ToolError>) -> Option<String> {
        r.err().and_then(|e| e.refusal_code().map(String::from))
    }

    #[test]
    fn each_scope_refuses_the_other_kind_of_call_and_auto_unlocks_for_good() {
        let none = check(None, "s", "get_desktop_state", Needs::Desktop);
        assert!(none.is_ok(), "a session that set no scope is not confined");
        let window = ScopePolicy::new(CaptureScope::Window);
        let w = |n| code(check(Some(&window), "s", "t", n));
        assert_eq!(w(Needs::Desktop), Some("desktop_scope_disabled".into()));
        assert_eq!(w(Needs::Window), None);
        let desktop = ScopePolicy::new(CaptureScope::Desktop);
        assert_eq!(
            code(check(Some(&desktop), "s", "t", Needs::Window)),
            Some("window_scope_disabled".into())
        );
        assert_eq!(code(check(Some(&desktop), "s", "t", Needs::Desktop)), None);
        let mut auto = ScopePolicy::new(CaptureScope::Auto);
        assert_eq!(
            code(check(Some(&auto), "s", "t", Needs::Desktop)),
            Some("desktop_escalation_required".into())
        );
        assert_eq!(code(check(Some(&auto), "s", "t", Needs::Window)), None);
        auto.escalation = Some((EscalationReason::Other, None));
        assert_eq!(code(check(Some(&auto), "s", "t", Needs::Desktop)), None);
        let err = check(Some(&auto), "s", "get_window_state", Needs::Window).unwrap_err();
        assert!(
            err.to_string()
                .contains("escalation to desktop scope is permanent")
        );
        assert_eq!(
            needs("screenshot", &json!({ "window_id": 3 }), false),
            Needs::Window
        );
        assert_eq!(needs("click", &json!({}), true), Needs::Desktop);
        assert_eq!(needs("click", &json!({}), false), Needs::Either);
    }
}
