//! The JSON-RPC lines between the client and rmcp. rmcp's types have no room for what
//! cua-driver's clients send and read beyond MCP, so this layer adapts whole messages:
//! - a line that is not JSON gets the parse error (-32700) it is owed, and reading goes on;
//! - an `initialize` with empty params (cua-driver's own test kit sends one) gets MCP's
//!   defaults filled in, where rmcp would take it for a newer protocol and refuse it;
//! - the answer to `tools/list` gains cua-driver's fields: `capability_version`,
//!   `schema_version`, and per tool `capabilities` and `risk` ([`ListExtensions`]).
//!
//! When stdin closes, requests still running are answered before rmcp is told the client
//! left (a client that writes its requests and closes its end is owed every reply).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// The MCP version an `initialize` without one is taken to speak (cua-driver answers it).
const DEFAULT_PROTOCOL: &str = "2025-06-18";

/// What `tools/list` answers carry besides MCP's fields: top-level fields, and per tool
/// name the fields to add to that tool.
#[derive(Default)]
pub struct ListExtensions {
    pub top: serde_json::Map<String, Value>,
    pub per_tool: HashMap<String, serde_json::Map<String, Value>>,
}

/// Fills in what an `initialize` left out (params, protocolVersion, capabilities,
/// clientInfo), so a bare handshake gets the version cua-driver answers.
fn lenient_initialize(message: &mut Value) {
    if message["method"] != "initialize" {
        return;
    }
    if !message["params"].is_object() {
        message["params"] = json!({});
    }
    let params = message["params"]
        .as_object_mut()
        .expect("made an object above");
    params
        .entry("protocolVersion")
        .or_insert_with(|| json!(DEFAULT_PROTOCOL));
    params.entry("capabilities").or_insert_with(|| json!({}));
    params
        .entry("clientInfo")
        .or_insert_with(|| json!({ "name": "unnamed client", "version": "0" }));
}

/// Adds the extension fields to a `tools/list` result.
fn extend_tool_list(message: &mut Value, ext: &ListExtensions) {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return;
    };
    for (k, v) in &ext.top {
        result.insert(k.clone(), v.clone());
    }
    if let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools.iter_mut() {
            let name = tool["name"].as_str().unwrap_or_default().to_string();
            if let (Some(fields), Some(t)) = (ext.per_tool.get(&name), tool.as_object_mut()) {
                for (k, v) in fields {
                    t.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// Stdin/stdout with the adapters in front of rmcp; returns the two ends rmcp serves on.
pub fn guarded_stdio(
    extensions: Arc<ListExtensions>,
) -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const PIPE: usize = 1 << 20;
    let (server_in, mut feed) = tokio::io::duplex(PIPE);
    let (drain, server_out) = tokio::io::duplex(PIPE);
    let (errors_tx, mut errors_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let in_flight = Arc::new(InFlight::default());
    let requests = in_flight.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(&line) {
                Ok(mut message) => {
                    lenient_initialize(&mut message);
                    requests.sent(&message);
                    if feed
                        .write_all(format!("{message}\n").as_bytes())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
                Err(e) => {
                    let reply = json!({
                        "jsonrpc": "2.0",
                        "id": null,
                        "error": { "code": -32700, "message": format!("parse error: {e}") },
                    });
                    let _ = errors_tx.send(reply.to_string());
                }
            }
        }
        // stdin closed: once the requests in flight are answered, closing the feed ends
        // the rmcp service (the client disconnected).
        requests.drained(DRAIN_WAIT).await;
        drop(feed);
    });
    tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        let mut responses = BufReader::new(drain).lines();
        loop {
            let mut line = tokio::select! {
                r = responses.next_line() => match r {
                    Ok(Some(l)) => l,
                    _ => break,
                },
                Some(e) = errors_rx.recv() => e,
            };
            if let Ok(mut message) = serde_json::from_str::<Value>(&line) {
                if in_flight.answered(&message) == Some(Method::ToolsList) {
                    extend_tool_list(&mut message, &extensions);
                    line = message.to_string();
                }
            }
            let written = out.write_all(format!("{line}\n").as_bytes()).await;
            let _ = out.flush().await;
            if written.is_err() {
                break;
            }
        }
    });
    (server_in, server_out)
}

/// The longest stdin's end waits for requests still running to be answered.
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// The requests whose answers this layer changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    ToolsList,
    Other,
}

/// Ids of the client's requests that have not been answered yet, with their method.
#[derive(Default)]
struct InFlight {
    ids: Mutex<HashMap<String, Method>>,
    answered: tokio::sync::Notify,
}

impl InFlight {
    /// A message from the client: a request (method and id) now awaits its answer.
    fn sent(&self, message: &Value) {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return;
        };
        if !message["id"].is_null() {
            let method = if method == "tools/list" {
                Method::ToolsList
            } else {
                Method::Other
            };
            self.ids
                .lock()
                .unwrap()
                .insert(message["id"].to_string(), method);
        }
    }

    /// A message to the client: a response (id, no method) answers its request, whose
    /// method this returns.
    fn answered(&self, message: &Value) -> Option<Method> {
        if message.get("method").is_some() || message["id"].is_null() {
            return None;
        }
        let method = self.ids.lock().unwrap().remove(&message["id"].to_string());
        self.answered.notify_waiters();
        method
    }

    fn pending(&self) -> HashSet<String> {
        self.ids.lock().unwrap().keys().cloned().collect()
    }

    /// Waits until every request has been answered, at most `bound`.
    async fn drained(&self, bound: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let next = self.answered.notified();
            if self.pending().is_empty() {
                return;
            }
            if tokio::time::timeout_at(deadline, next).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_initialize_gets_mcp_defaults_and_a_full_one_is_kept() {
        let mut bare = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {} });
        lenient_initialize(&mut bare);
        assert_eq!(bare["params"]["protocolVersion"], DEFAULT_PROTOCOL);
        assert!(bare["params"]["capabilities"].is_object());
        assert!(bare["params"]["clientInfo"]["name"].is_string());
        let mut full = json!({ "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": { "roots": {} },
            "clientInfo": { "name": "x", "version": "1" } } });
        let before = full.clone();
        lenient_initialize(&mut full);
        assert_eq!(full, before);
        let mut other = json!({ "method": "tools/list", "id": 2 });
        lenient_initialize(&mut other);
        assert!(other.get("params").is_none());
    }

    #[test]
    fn only_the_answer_to_tools_list_is_extended() {
        let flight = InFlight::default();
        flight.sent(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list" }));
        flight.sent(&json!({ "jsonrpc": "2.0", "id": 8, "method": "tools/call" }));
        assert_eq!(
            flight.answered(&json!({ "id": 8, "result": {} })),
            Some(Method::Other)
        );
        assert_eq!(
            flight.answered(&json!({ "id": 7, "result": {} })),
            Some(Method::ToolsList)
        );
        assert_eq!(flight.answered(&json!({ "id": 7, "result": {} })), None);
        let mut ext = ListExtensions::default();
        ext.top.insert("capability_version".into(), json!("1"));
        ext.per_tool.insert(
            "click".into(),
            serde_json::Map::from_iter([("capabilities".to_string(), json!(["a"]))]),
        );
        let mut answer =
            json!({ "id": 7, "result": { "tools": [ { "name": "click" }, { "name": "zoom" } ] } });
        extend_tool_list(&mut answer, &ext);
        assert_eq!(answer["result"]["capability_version"], "1");
        assert_eq!(answer["result"]["tools"][0]["capabilities"], json!(["a"]));
        assert!(answer["result"]["tools"][1].get("capabilities").is_none());
    }
}
