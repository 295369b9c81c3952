//! What a tool call returns when it succeeds ([`ToolOutput`]; a failure is a
//! [`crate::errors::ToolError`]): one value the CLI, the daemon, MCP and the recorder all read.

use serde_json::Value;

/// An image a tool returns (screenshot, zoom).
#[derive(Debug, Clone)]
pub struct ImageBlock {
    pub mime: &'static str,
    pub data: Vec<u8>,
}

/// What a tool returns: a one-paragraph summary for people, the structured result for
/// programs, and optionally an image.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub summary: String,
    pub structured: Value,
    pub image: Option<ImageBlock>,
}

impl ToolOutput {
    pub fn new(summary: impl Into<String>, structured: Value) -> Self {
        ToolOutput {
            summary: summary.into(),
            structured,
            image: None,
        }
    }
}
