//! A raw JSON-RPC client of `cua mcp` over stdio, one call at a time; shared by the MCP
//! tests and the MCP benchmark.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// A live `cua mcp` client speaking raw JSON-RPC, one call at a time.
pub struct McpClient {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
    /// The server's answer to `initialize` (its info and instructions).
    pub initialized: Value,
}

impl McpClient {
    pub fn start(envs: &[(String, String)], extra_args: &[&str]) -> McpClient {
        Self::start_server(env!("CARGO_BIN_EXE_cua"), envs, extra_args)
    }

    /// Another MCP stdio server (`program mcp ARGS`): cua-driver beside cua in a bench.
    pub fn start_server(
        program: &str,
        envs: &[(String, String)],
        extra_args: &[&str],
    ) -> McpClient {
        let mut child = Command::new(program)
            .arg("mcp")
            .args(extra_args)
            .envs(envs.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut c = McpClient {
            child,
            stdin,
            stdout,
            next_id: 0,
            initialized: Value::Null,
        };
        c.initialized = c.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}));
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: Value) {
        self.stdin
            .as_mut()
            .unwrap()
            .write_all(format!("{v}\n").as_bytes())
            .unwrap();
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        use std::io::BufRead;
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["id"], id, "{v}");
        v
    }

    /// A tool call's result.
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))["result"].clone()
    }
}

impl McpClient {
    /// Closes stdin (the client disconnects) and waits for the server to finish.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
