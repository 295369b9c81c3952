//! The daemon's reply line: the one encoding of a tool's [`ToolOutput`] or [`ToolError`]
//! on the socket, and its decoding on the client's side. The error's kind travels with
//! it, so a refusal read back through the daemon is still a refusal (and exits 1, not 2).

use base64::Engine;
use serde_json::{Value, json};

use crate::errors::ToolError;
use crate::tools::{ImageBlock, ToolOutput};

/// `{"ok": true, "summary", "structured", "image": {"mime", "base64"}?}` or
/// `{"ok": false, "error", "kind", "message", "exit_code"}` (`error` is the full text for
/// people; `kind` and `message` rebuild the error).
pub fn encode_reply(result: Result<ToolOutput, ToolError>) -> Value {
    match result {
        Ok(out) => {
            let mut v = json!({ "ok": true, "summary": out.summary, "structured": out.structured });
            if let Some(img) = out.image {
                v["image"] = json!({
                    "mime": img.mime,
                    "base64": base64::engine::general_purpose::STANDARD.encode(&img.data),
                });
            }
            v
        }
        Err(e) => {
            let mut v = json!({
                "ok": false,
                "error": e.to_string(),
                "kind": e.kind(),
                "message": e.message(),
                "exit_code": e.exit_code(),
            });
            if let ToolError::Refusal { code, details, .. } = &e {
                v["code"] = json!(code);
                v["details"] = details.clone();
            }
            if let ToolError::RefusedAs { code, .. } = &e {
                v["refusal_code"] = json!(code);
            }
            if let ToolError::Reported { report, .. } = &e {
                v["report"] = report.clone();
            }
            v
        }
    }
}

/// The result a reply line stands for; a reply that is not one is a failure saying so.
pub fn decode_reply(reply: &Value) -> Result<ToolOutput, ToolError> {
    if reply["ok"] == true {
        let image = match reply.get("image") {
            None | Some(Value::Null) => None,
            Some(i) => {
                let data = i["base64"]
                    .as_str()
                    .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
                    .ok_or_else(|| {
                        ToolError::failed("bad reply from daemon: image is not base64")
                    })?;
                let mime = if i["mime"] == "image/jpeg" {
                    "image/jpeg"
                } else {
                    "image/png"
                };
                Some(ImageBlock { mime, data })
            }
        };
        return Ok(ToolOutput {
            summary: reply["summary"].as_str().unwrap_or("").to_string(),
            structured: reply["structured"].clone(),
            image,
        });
    }
    let message = reply["message"]
        .as_str()
        .or(reply["error"].as_str())
        .unwrap_or("daemon error");
    if let Some(code) = reply["code"].as_str() {
        return Err(ToolError::Refusal {
            code: code.to_string(),
            message: message.to_string(),
            details: reply["details"].clone(),
        });
    }
    if let Some(report) = reply.get("report").filter(|r| !r.is_null()) {
        return Err(ToolError::Reported {
            message: message.to_string(),
            report: report.clone(),
        });
    }
    if let Some(code) = reply["refusal_code"].as_str() {
        return Err(ToolError::RefusedAs {
            code: code.to_string(),
            message: message.to_string(),
        });
    }
    Err(ToolError::from_kind(
        reply["kind"].as_str().unwrap_or("failed"),
        message,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_kind_and_an_image_survive_the_round_trip() {
        let errors = [
            ToolError::InvalidArguments("`pid`: expected a number".into()),
            ToolError::UnknownTool("clik".into()),
            ToolError::Failed("window gone".into()),
            ToolError::NoDesktop("no DISPLAY".into()),
            ToolError::Refused("ctrl+w is forbidden".into()),
            ToolError::StaleToken("element_token is stale".into()),
            ToolError::RefusedAs {
                code: "os_permission_prompt_requires_trusted_host".into(),
                message: "no prompts".into(),
            },
            ToolError::Refusal {
                code: "window_scope_disabled".into(),
                message: "window-scope tool 'zoom' is disabled".into(),
                details: json!({ "session": "s", "code": "window_scope_disabled" }),
            },
            ToolError::Reported {
                message: "replayed 2 steps: 1 failed".into(),
                report: json!({ "attempted": 2, "failed": 1 }),
            },
        ];
        for e in errors {
            let line = encode_reply(Err(e.clone())).to_string();
            let back = decode_reply(&serde_json::from_str(&line).unwrap()).unwrap_err();
            assert_eq!(back, e);
            assert_eq!(back.exit_code(), e.exit_code());
        }
        let out = ToolOutput {
            summary: "took a screenshot".into(),
            structured: json!({ "width": 2 }),
            image: Some(ImageBlock {
                mime: "image/jpeg",
                data: vec![0xff, 0xd8, 0, 1, 2],
            }),
        };
        let line = encode_reply(Ok(out)).to_string();
        let back = decode_reply(&serde_json::from_str(&line).unwrap()).unwrap();
        assert_eq!(back.summary, "took a screenshot");
        assert_eq!(back.structured["width"], 2);
        let img = back.image.unwrap();
        assert_eq!(
            (img.mime, img.data),
            ("image/jpeg", vec![0xff, 0xd8, 0, 1, 2])
        );
    }

    #[test]
    fn a_reply_with_a_broken_image_is_a_failure() {
        let e = decode_reply(&json!({ "ok": true, "image": { "base64": "%%" } })).unwrap_err();
        assert!(e.to_string().contains("not base64"), "{e}");
    }
}
