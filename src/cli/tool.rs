//! `cua <tool> '<json>'` and `cua call`: arguments read and checked, the call run through
//! a daemon when one runs for the display (else in this process), the result printed.

use super::*;

/// Splits `cua <tool> [JSON] [--json] [--screenshot-out-file PATH]`.
pub(super) fn parse_tool_words(words: &[String]) -> Result<(Option<String>, OutputFlags), String> {
    let mut flags = OutputFlags::default();
    let mut args = None;
    let mut it = words.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--json" => flags.json = true,
            "--screenshot-out-file" => {
                let p = it.next().ok_or("--screenshot-out-file needs a path")?;
                flags.screenshot_out_file = Some(PathBuf::from(p));
            }
            s if s.starts_with("--screenshot-out-file=") => {
                flags.screenshot_out_file =
                    Some(PathBuf::from(&s["--screenshot-out-file=".len()..]));
            }
            s if s.starts_with("--") => return Err(format!("unknown flag `{s}`")),
            s if args.is_none() => args = Some(s.to_string()),
            s => {
                return Err(format!(
                    "unexpected argument `{s}` (pass tool arguments as one JSON object)"
                ));
            }
        }
    }
    Ok((args, flags))
}

pub(super) fn run_tool(
    name: &str,
    args: Option<&str>,
    flags: &OutputFlags,
    socket: Option<&Path>,
) -> i32 {
    // A program reading stdout (cua-driver's clients parse `call`'s JSON) gets JSON,
    // failures included; a person at a terminal gets the summary.
    let piped = !std::io::IsTerminal::is_terminal(&std::io::stdout());
    let json = flags.json || piped;
    let flags = &OutputFlags {
        json,
        screenshot_out_file: flags.screenshot_out_file.clone(),
    };
    let fail = |code: i32, e: &dyn std::fmt::Display, kind: &str| {
        if piped {
            out(
                &serde_json::json!({ "isError": true, "error": kind, "message": e.to_string() })
                    .to_string(),
            );
        }
        fail(code, e)
    };
    let registry = ToolRegistry::new();
    let tool = match registry.get(name) {
        Ok(t) => t,
        Err(e) => return fail(e.exit_code(), &e, e.kind()),
    };
    let args: Value = match args.map(serde_json::from_str).transpose() {
        Ok(v) => v.unwrap_or(Value::Object(Default::default())),
        Err(e) => {
            let msg = format!(
                "arguments are not valid JSON: {e} (pass one JSON object, e.g. '{{\"pid\": 123}}')"
            );
            return fail(2, &msg, "invalid_arguments");
        }
    };
    // Nothing runs (no desktop is touched) until the arguments are valid.
    if let Err(e) = tool.validate(&args) {
        return fail(e.exit_code(), &e, e.kind());
    }
    // A running daemon owns the state (element caches, recording): go through it.
    let daemon = socket
        .map(Path::to_path_buf)
        .unwrap_or_else(crate::daemon::default_socket);
    let result = match crate::daemon::call(&daemon, name, &args) {
        Some(result) => result,
        None if socket.is_some() => Err(crate::errors::ToolError::failed(format!(
            "no cua daemon listens on {} (start one with `cua serve --socket {0}`)",
            daemon.display()
        ))),
        None => {
            let runtime = match runtime() {
                Ok(r) => r,
                Err(code) => return code,
            };
            let ctx = ToolContext::new().one_shot();
            // Through the registry, so a recording (in-process) would see it too.
            runtime.block_on(registry.call(&ctx, name, args))
        }
    };
    match result {
        Ok(output) => print_output(&output, flags),
        Err(crate::errors::ToolError::Reported { message, report }) => {
            // The tool's own report of its failure: printed as its result is, exit 1.
            let mut shown = report;
            if json && shown.is_object() {
                shown["isError"] = Value::Bool(true);
                out(&serde_json::to_string_pretty(&shown).unwrap_or_default());
            }
            super::fail(1, message)
        }
        Err(e) => fail(e.exit_code(), &e, e.kind()),
    }
}

pub(super) fn print_output(output: &ToolOutput, flags: &OutputFlags) -> i32 {
    let mut structured = output.structured.clone();
    let mut note = None;
    if let Some(image) = &output.image {
        match &flags.screenshot_out_file {
            Some(path) => {
                if let Err(e) = crate::files::write_atomic(path, &image.data) {
                    return fail(1, format!("cannot write `{}`: {e}", path.display()));
                }
                structured["screenshot_file_path"] = Value::String(path.display().to_string());
                note = Some(format!("image written to {}", path.display()));
            }
            None if flags.json => {
                // cua-driver's field names, which its clients read.
                let data = base64::engine::general_purpose::STANDARD.encode(&image.data);
                let field = if image.mime == "image/png" {
                    "screenshot_png_b64"
                } else {
                    "screenshot_b64"
                };
                structured[field] = Value::String(data);
                structured["screenshot_mime_type"] = Value::String(image.mime.into());
            }
            None => {
                note = Some("image not shown: pass --screenshot-out-file PATH to save it".into())
            }
        }
    }
    if flags.json {
        out(&serde_json::to_string_pretty(&structured).unwrap_or_default());
    } else {
        out(output.summary.trim_end());
        if let Some(n) = note {
            out(&format!("({n})"));
        }
    }
    0
}

/// `cua list-tools`: every tool, one line each.
pub(super) fn list_tools() -> i32 {
    let registry = ToolRegistry::new();
    for t in registry.tools() {
        let first = t.description().split(". ").next().unwrap_or("");
        out(&format!(
            "{:<20} {}{}",
            t.name(),
            if t.read_only() { "" } else { "[acts] " },
            first.trim_end_matches('.')
        ));
    }
    0
}

/// `cua describe TOOL`: its description, capabilities and argument schema as JSON.
pub(super) fn describe(tool: &str) -> i32 {
    let registry = ToolRegistry::new();
    match registry.get(tool) {
        Ok(t) => {
            let doc = serde_json::json!({
                "name": t.name(),
                "description": t.description(),
                "read_only": t.read_only(),
                "capabilities": t.contract().capabilities,
                "input_schema": t.input_schema(),
            });
            out(&serde_json::to_string_pretty(&doc).unwrap_or_default());
            0
        }
        Err(e) => fail(e.exit_code(), e),
    }
}
