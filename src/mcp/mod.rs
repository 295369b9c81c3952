//! `cua mcp`: the MCP server over stdio. The only module that knows rmcp (pinned in
//! Cargo.toml, since its API moves between releases): it lists the registry's tools with
//! their JSON Schemas, descriptions and read-only annotations, and turns each call into a
//! result: the summary as the first text block, the tool's image as an image block, the
//! structured result as structuredContent, failures as `isError` results with the reason.
//!
//! The server owns one [`ToolContext`] (element caches, the recorder, set_config overrides
//! held in memory): a stdio connection is one client and one session. When the client disconnects or the process is signalled, an active
//! recording is finalized (queued turns written, video closed, session.json stamped).
//! With `--socket`, calls are forwarded to a running `cua serve` daemon instead.

use std::path::PathBuf;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

pub mod profile;
mod wire;

use crate::errors::ToolError;
use crate::tools::{Sessions, ToolContext, ToolOutput, ToolRegistry};

/// Where calls run: in this process, or in a daemon reached through its socket.
enum CallSite {
    InProcess(Arc<Sessions>),
    /// The daemon's socket, and this connection's session id there (sent with every call
    /// that names none, so clients of one daemon stay apart).
    Daemon(PathBuf, String),
}

struct CuaServer {
    registry: Arc<ToolRegistry>,
    calls: CallSite,
    tools: Vec<Tool>,
}

impl CuaServer {
    /// The server, listing every tool or those `listed` names ([`profile`]).
    fn new(calls: CallSite, listed: Option<Vec<String>>) -> CuaServer {
        let registry = Arc::new(ToolRegistry::new());
        let tools = registry
            .tools()
            .filter(|t| {
                listed
                    .as_ref()
                    .is_none_or(|l| l.iter().any(|n| n == t.name()))
            })
            .map(|t| {
                let schema = match crate::dispatch::for_the_wire(t.input_schema()) {
                    Value::Object(m) => m,
                    _ => serde_json::Map::new(),
                };
                let contract = t.contract();
                // Every hint said outright (cua-driver's clients check destructiveHint on
                // read-only tools too, where MCP's default would be true).
                let annotations = ToolAnnotations::new()
                    .read_only(t.read_only())
                    .destructive(contract.destructive && !t.read_only())
                    .idempotent(contract.idempotent)
                    .open_world(contract.open_world);
                let tool = Tool::new(t.name().to_string(), t.description().to_string(), schema)
                    .with_annotations(annotations);
                match t.output_schema() {
                    Some(Value::Object(output)) => tool.with_raw_output_schema(Arc::new(output)),
                    _ => tool,
                }
            })
            .collect();
        CuaServer {
            registry,
            calls,
            tools,
        }
    }

    async fn run(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        match &self.calls {
            CallSite::InProcess(sessions) => {
                let ctx = sessions.for_call(name, &args)?;
                self.registry.call(&ctx, name, args).await
            }
            CallSite::Daemon(socket, session) => {
                let mut args = args;
                if let Value::Object(m) = &mut args {
                    m.entry("session").or_insert_with(|| json!(session));
                }
                let (socket, name) = (socket.clone(), name.to_string());
                tokio::task::spawn_blocking(move || {
                    crate::daemon::call(&socket, &name, &args).unwrap_or_else(|| {
                        Err(ToolError::failed(format!(
                            "no cua daemon listens on {} (start one with `cua serve`)",
                            socket.display()
                        )))
                    })
                })
                .await
                .map_err(|e| ToolError::failed(format!("daemon call: {e}")))?
            }
        }
    }
}

/// cua-driver's fields of `tools/list`: the token vocabulary's version, and each tool's
/// capability tokens and risk ([`crate::tools::Contract`]).
fn list_extensions(registry: &ToolRegistry) -> wire::ListExtensions {
    let mut ext = wire::ListExtensions::default();
    ext.top.insert(
        "capability_version".into(),
        json!(crate::tools::CAPABILITY_VERSION),
    );
    ext.top.insert(
        "schema_version".into(),
        json!(crate::tools::CONTRACT_SCHEMA_VERSION),
    );
    for t in registry.tools() {
        let contract = t.contract();
        let fields = serde_json::Map::from_iter([
            ("capabilities".to_string(), json!(contract.capabilities)),
            ("risk".to_string(), contract.risk_json(!t.read_only())),
        ]);
        ext.per_tool.insert(t.name().to_string(), fields);
    }
    ext
}

/// get_window_state's structured result carries tree_markdown and elements[] as
/// cua-driver's does (its clients read both there), unless the call says
/// `include_elements: false`: then the tree comes once, in the text the model reads.
fn lean(tool: &str, args: &Value, structured: &mut Value) {
    if tool != "get_window_state" {
        return;
    }
    if let Value::Object(m) = structured {
        if args["include_elements"] == json!(false) {
            m.remove("tree_markdown");
            m.remove("elements");
        }
    }
}

/// A tool's output as an MCP result.
fn result_of(output: Result<ToolOutput, ToolError>) -> CallToolResult {
    match output {
        Ok(out) => {
            let mut content = vec![ContentBlock::text(out.summary)];
            if let Some(img) = out.image {
                content.push(ContentBlock::image(
                    base64::engine::general_purpose::STANDARD.encode(&img.data),
                    img.mime,
                ));
            }
            let mut result = CallToolResult::success(content);
            result.structured_content = Some(out.structured);
            result
        }
        Err(e) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
            let mut structured = json!({ "error": e.kind(), "message": e.to_string() });
            if let ToolError::Reported { report, .. } = &e {
                // The tool's own report, as a success would carry it.
                structured = report.clone();
            } else if let ToolError::Refusal { code, details, .. } = &e {
                // cua-driver's shape for these: its fields and the code, nothing else.
                structured = details.clone();
                structured["code"] = json!(code);
            } else if let Some(code) = e.refusal_code() {
                // cua-driver's refusal envelope, which its clients read.
                structured["status"] = json!("refused");
                structured["refusal"] = json!({ "code": code, "message": e.message() });
            }
            result.structured_content = Some(structured);
            result
        }
    }
}

impl ServerHandler for CuaServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cua", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Computer-use driver: observe windows with get_window_state (accessibility tree \
                 with element indices + screenshot), act with click / type_text / press_key / \
                 set_value ... by element_index or pixel, record with set_recording, replay with \
                 replay_trajectory. {}\n\n{}",
                crate::tools::SESSION_ARGUMENT,
                crate::dispatch::shared_arguments_text()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // What the authority denies outright is not advertised: this process's, or over a
        // daemon the daemon's (it refuses the calls).
        let daemon_lists = match &self.calls {
            CallSite::Daemon(socket, _) => {
                let socket = socket.clone();
                tokio::task::spawn_blocking(move || crate::daemon::listed_tools(&socket))
                    .await
                    .ok()
                    .flatten()
            }
            CallSite::InProcess(_) => None,
        };
        let tools = self
            .tools
            .iter()
            .filter(|t| crate::policy::authority::lists(&t.name))
            .filter(|t| {
                daemon_lists
                    .as_ref()
                    .is_none_or(|l| l.contains(t.name.as_ref()))
            })
            .cloned()
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Err(e) = self.registry.get(&request.name) {
            return Err(ErrorData::invalid_params(e.to_string(), None));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let started = std::time::Instant::now();
        let output = self.run(&request.name, args.clone()).await;
        let session = args["session"].as_str().unwrap_or("");
        crate::logs::call(&request.name, session, started, &output);
        let output = output.map(|mut out| {
            lean(&request.name, &args, &mut out.structured);
            out
        });
        Ok(result_of(output).into())
    }
}

/// Serves MCP on stdin/stdout until the client disconnects or SIGTERM/SIGINT arrives;
/// then finalizes any recording this server holds.
pub async fn serve_stdio(
    socket: Option<PathBuf>,
    listed: Option<Vec<String>>,
) -> Result<(), String> {
    crate::logs::to_stderr();
    // One session per connection: its element caches, recorder and set_config overrides
    // are its own.
    let session = format!(
        "mcp-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis()
    );
    let sessions = Arc::new(Sessions::new(Arc::new(ToolContext::for_session(
        crate::platform::DesktopEnv::from_process_env(),
        session.clone(),
    ))));
    // Over a daemon, this connection's session there lives as long as this lease: when
    // this process ends, however it ends, the daemon finalizes the session's recording.
    let lease = match socket.clone() {
        Some(s) => {
            let id = session.clone();
            tokio::task::spawn_blocking(move || crate::daemon::lease_session(&s, &id))
                .await
                .ok()
                .flatten()
        }
        None => None,
    };
    let calls = match socket {
        Some(s) => CallSite::Daemon(s, session),
        None => CallSite::InProcess(sessions.clone()),
    };
    let server = CuaServer::new(calls, listed)
        .serve(wire::guarded_stdio(Arc::new(list_extensions(
            &ToolRegistry::new(),
        ))))
        .await
        .map_err(|e| format!("MCP initialization failed: {e}"))?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| e.to_string())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| e.to_string())?;
    let cancel = server.cancellation_token();
    tokio::select! {
        _ = server.waiting() => {}
        _ = term.recv() => cancel.cancel(),
        _ = int.recv() => cancel.cancel(),
    }
    sessions.finalize_all().await;
    drop(lease);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_that_reports_its_own_failure_is_an_error_carrying_its_report() {
        let report = json!({ "attempted": 2, "failed": 1, "turns": [{ "turn": 2, "ok": false }] });
        let result = result_of(Err(ToolError::Reported {
            message: "replayed 2 steps: 1 failed".into(),
            report: report.clone(),
        }));
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, Some(report));
        let ok = result_of(Ok(ToolOutput::new("fine", json!({ "failed": 0 }))));
        assert_eq!(ok.is_error, Some(false));
    }
}
