//! `clipboard_read` and `clipboard_write`: the desktop's clipboard, as cua-driver's clients
//! use it (put a value there, then paste it into an app; read what an app copied). Content
//! is privacy-sensitive: a read returns text only when asked, and a written value is never
//! echoed. A written value lives as long as the process that owns it, so a one-shot
//! `cua call` refuses to write (its content would vanish as it exits): write through a
//! daemon (`cua serve`, then `cua call --socket`) or an MCP server.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;

/// The text types a written text is offered as (what GTK, Qt, Chromium and Firefox ask for).
const TEXT_TYPES: &[&str] = &[
    "UTF8_STRING",
    "text/plain;charset=utf-8",
    "text/plain",
    "STRING",
    "TEXT",
];

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClipboardReadArgs {
    /// Also return the clipboard's plain text (privacy-sensitive). Default false: the types only.
    pub include_text: Option<bool>,
}

pub struct ClipboardRead;

#[async_trait]
impl ToolSpec for ClipboardRead {
    type Args = ClipboardReadArgs;
    const NAME: &'static str = "clipboard_read";
    const DESCRIPTION: &'static str = "List the types the clipboard offers (UTF8_STRING, image/png, text/uri-list, …) and, with include_text, its plain text (privacy-sensitive; never recorded).";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract {
        capabilities: &["clipboard.read", "clipboard.types"],
        risk: Risk::R2,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
    const RECORDED: bool = false;

    async fn run(&self, ctx: &ToolContext, a: ClipboardReadArgs) -> Result<ToolOutput, ToolError> {
        let include_text = a.include_text.unwrap_or(false);
        let read = ctx.platform().await?.clipboard_read(include_text).await?;
        let summary = match (read.types.is_empty(), &read.text) {
            (true, _) => "the clipboard is empty".to_string(),
            (false, Some(t)) => format!(
                "the clipboard offers {} ({} characters of text)",
                read.types.join(", "),
                t.chars().count()
            ),
            (false, None) => format!("the clipboard offers {}", read.types.join(", ")),
        };
        Ok(ToolOutput::new(
            summary,
            json!({
                "supported": true,
                "types": read.types,
                "text": read.text,
                "privacy_sensitive": read.text.is_some(),
                "content_redacted_from_telemetry": true,
            }),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClipboardWriteArgs {
    /// Plain text to put on the clipboard.
    pub text: Option<String>,
    /// Absolute path of an image (PNG, JPEG) to put on the clipboard, as image/png.
    pub image_path: Option<String>,
    /// Absolute path of a file to put on the clipboard as a file URL (text/uri-list).
    pub file_path: Option<String>,
}

pub struct ClipboardWrite;

/// A local absolute path a write names, checked; the field names the error.
fn local_file(field: &str, path: &str) -> Result<std::path::PathBuf, ToolError> {
    let p = std::path::PathBuf::from(path);
    if !p.is_absolute() {
        return Err(ToolError::invalid(format!(
            "`{field}`: must be an absolute path, got {path:?}"
        )));
    }
    if !p.is_file() {
        return Err(ToolError::invalid(format!(
            "`{field}`: {path} is not a readable file"
        )));
    }
    Ok(p)
}

/// A file URL for a path (RFC 8089), its bytes outside the unreserved set escaped.
fn file_url(path: &std::path::Path) -> String {
    let mut url = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                url.push(b as char)
            }
            _ => url.push_str(&format!("%{b:02X}")),
        }
    }
    url
}

#[async_trait]
impl ToolSpec for ClipboardWrite {
    type Args = ClipboardWriteArgs;
    const NAME: &'static str = "clipboard_write";
    const DESCRIPTION: &'static str = "Put exactly one value on the clipboard: text, an image (image_path, offered as image/png) or a file URL (file_path); an app then pastes it. Returns the types offered. The value lives as long as this server (a one-shot `cua call` refuses: use `cua serve` and --socket).";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &[
            "clipboard.write",
            "clipboard.write.text",
            "clipboard.write.image",
            "clipboard.write.file_url",
            "clipboard.types",
        ],
        risk: Risk::R1,
        destructive: true,
        idempotent: true,
        open_world: false,
    };

    async fn run(&self, ctx: &ToolContext, a: ClipboardWriteArgs) -> Result<ToolOutput, ToolError> {
        let given = [
            a.text.is_some(),
            a.image_path.is_some(),
            a.file_path.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(ToolError::invalid(
                "give exactly one of `text`, `image_path` or `file_path`",
            ));
        }
        if ctx.is_one_shot() {
            return Err(ToolError::invalid(
                "a one-shot `cua call` exits at once, and clipboard content (X11 or Wayland) lives only as long as the process that offers it: start `cua serve` and write with `cua call --socket …`, or through MCP",
            ));
        }
        let (written, offer): (&str, Vec<(String, Vec<u8>)>) = if let Some(text) = &a.text {
            let offer = TEXT_TYPES
                .iter()
                .map(|t| (t.to_string(), text.as_bytes().to_vec()))
                .collect();
            ("text/plain", offer)
        } else if let Some(path) = &a.image_path {
            let p = local_file("image_path", path)?;
            let image = image::open(&p).map_err(|e| {
                ToolError::invalid(format!(
                    "`image_path`: {path} is not an image cua reads ({e})"
                ))
            })?;
            let mut png = Vec::new();
            image
                .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                .map_err(|e| ToolError::failed(format!("encoding {path} as PNG: {e}")))?;
            ("image/png", vec![("image/png".to_string(), png)])
        } else {
            let p = local_file("file_path", a.file_path.as_deref().unwrap_or_default())?;
            let url = file_url(&p);
            let offer = vec![
                (
                    "text/uri-list".to_string(),
                    format!("{url}\r\n").into_bytes(),
                ),
                (
                    "x-special/gnome-copied-files".to_string(),
                    format!("copy\n{url}").into_bytes(),
                ),
                (
                    "UTF8_STRING".to_string(),
                    p.to_string_lossy().as_bytes().to_vec(),
                ),
            ];
            ("text/uri-list", offer)
        };
        let types: Vec<String> = offer.iter().map(|(t, _)| t.clone()).collect();
        ctx.platform().await?.clipboard_write(offer).await?;
        Ok(ToolOutput::new(
            format!("the clipboard offers {written} ({})", types.join(", ")),
            json!({
                "supported": true,
                "written_type": written,
                "types": types,
                "privacy_sensitive": a.text.is_some(),
                "content_redacted_from_telemetry": true,
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_becomes_an_escaped_file_url() {
        let url = file_url(std::path::Path::new("/tmp/a b/ü.txt"));
        assert_eq!(url, "file:///tmp/a%20b/%C3%BC.txt");
    }
}
