//! Error types shared by every module, and how they map to exit codes.
//!
//! Tools fail with [`ToolError`]; the CLI maps it to an exit code (0 ok, 1 the tool
//! reported an error, 2 bad input). Messages are lowercase and carry their context.

use std::fmt;

/// Why a tool call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The arguments were rejected before anything ran; the message names the field.
    InvalidArguments(String),
    /// No tool by that name; the message names it (and the closest tool, if any).
    UnknownTool(String),
    /// The tool ran and reported a failure (window gone, app not accessible, ...).
    Failed(String),
    /// There is no desktop to talk to.
    NoDesktop(String),
    /// The safety policy refused the call before it ran (src/policy).
    Refused(String),
    /// The server's authority refused the call under a refusal code of cua-driver's own
    /// (not `permission_denied`), in cua-driver's refusal envelope.
    RefusedAs { code: String, message: String },
    /// An `element_token` names a snapshot that a newer read of its window replaced (or
    /// that this session no longer holds); the caller must read the window again.
    StaleToken(String),
    /// A refusal cua-driver's clients branch on by its `code`, with the fields they read
    /// (`details`, an object): its structured result is those fields and `code`, as
    /// cua-driver's is.
    Refusal {
        code: String,
        message: String,
        details: serde_json::Value,
    },
    /// The tool ran to its end and its own report says it failed (a replay with a failed
    /// step): the report is its structured result, as on success, so a client that
    /// checks `isError` sees the failure and one that reads the result loses nothing.
    Reported {
        message: String,
        report: serde_json::Value,
    },
}

impl ToolError {
    pub fn failed(msg: impl Into<String>) -> Self {
        ToolError::Failed(msg.into())
    }

    pub fn invalid(msg: impl Into<String>) -> Self {
        ToolError::InvalidArguments(msg.into())
    }

    /// The error's kind as every wire names it (MCP `structuredContent.error`, the daemon's
    /// replies): invalid_arguments, unknown_tool, failed, no_desktop, refused.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::InvalidArguments(_) => "invalid_arguments",
            ToolError::UnknownTool(_) => "unknown_tool",
            ToolError::Failed(_) | ToolError::Reported { .. } => "failed",
            ToolError::NoDesktop(_) => "no_desktop",
            ToolError::Refused(_) | ToolError::RefusedAs { .. } => "refused",
            ToolError::StaleToken(_) => "stale_element_token",
            ToolError::Refusal { .. } => "refused",
        }
    }

    /// cua-driver's refusal code for the errors its clients branch on (its
    /// `structuredContent.refusal.code`); None for the others.
    pub fn refusal_code(&self) -> Option<&str> {
        match self {
            ToolError::StaleToken(_) => Some("stale_element_token"),
            ToolError::Refused(_) => Some("permission_denied"),
            ToolError::Refusal { code, .. } | ToolError::RefusedAs { code, .. } => {
                Some(code.as_str())
            }
            _ => None,
        }
    }

    /// The message without the prefix Display adds for the kind.
    pub fn message(&self) -> &str {
        match self {
            ToolError::InvalidArguments(m)
            | ToolError::UnknownTool(m)
            | ToolError::Failed(m)
            | ToolError::NoDesktop(m)
            | ToolError::Refused(m)
            | ToolError::StaleToken(m)
            | ToolError::Refusal { message: m, .. }
            | ToolError::RefusedAs { message: m, .. }
            | ToolError::Reported { message: m, .. } => m,
        }
    }

    /// The error from its [`ToolError::kind`] and [`ToolError::message`] (an unknown kind
    /// is a failure).
    pub fn from_kind(kind: &str, message: impl Into<String>) -> ToolError {
        let m = message.into();
        match kind {
            "invalid_arguments" => ToolError::InvalidArguments(m),
            "unknown_tool" => ToolError::UnknownTool(m),
            "no_desktop" => ToolError::NoDesktop(m),
            "refused" => ToolError::Refused(m),
            "stale_element_token" => ToolError::StaleToken(m),
            _ => ToolError::Failed(m),
        }
    }

    /// Exit code for the CLI: 2 for input the caller must fix, 1 for a failed run.
    pub fn exit_code(&self) -> i32 {
        match self {
            ToolError::InvalidArguments(_)
            | ToolError::UnknownTool(_)
            | ToolError::StaleToken(_) => 2,
            ToolError::Failed(_)
            | ToolError::NoDesktop(_)
            | ToolError::Refused(_)
            | ToolError::RefusedAs { .. }
            | ToolError::Refusal { .. }
            | ToolError::Reported { .. } => 1,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::InvalidArguments(m) => write!(f, "invalid arguments: {m}"),
            ToolError::UnknownTool(m) => f.write_str(m),
            ToolError::Failed(m) => f.write_str(m),
            ToolError::NoDesktop(m) => f.write_str(m),
            ToolError::Refused(m) | ToolError::RefusedAs { message: m, .. } => {
                write!(f, "refused: {m}")
            }
            ToolError::StaleToken(m) => f.write_str(m),
            ToolError::Refusal { message, .. } | ToolError::Reported { message, .. } => {
                f.write_str(message)
            }
        }
    }
}

impl std::error::Error for ToolError {}

impl From<crate::platform::PlatformError> for ToolError {
    fn from(e: crate::platform::PlatformError) -> Self {
        match e {
            crate::platform::PlatformError::NoDesktop(m) => ToolError::NoDesktop(m),
            crate::platform::PlatformError::InvalidInput(m) => ToolError::InvalidArguments(m),
            other => ToolError::Failed(other.to_string()),
        }
    }
}

/// What an input tool's error says when the element it was given is gone from the app:
/// it refused before sending anything, so finding the element again and repeating the
/// call cannot double an action (replay does).
pub const ELEMENT_GONE: &str = "is gone from the app";
