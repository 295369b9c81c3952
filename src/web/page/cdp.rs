//! The Chrome DevTools Protocol side: the browser's targets are listed on its browser
//! socket, the window's tab is attached in flat mode (one socket, a session id per
//! message) and `Runtime.evaluate` returns the value by value.

use serde_json::{Value, json};

use super::{PageError, Socket, TabChoice};

pub(super) fn evaluate(
    socket: &mut Socket,
    choice: &TabChoice,
    script: &str,
) -> Result<Value, PageError> {
    let targets = socket.command("Target.getTargets", json!({}), json!({}))?;
    let pages: Vec<&Value> = result(&targets, "Target.getTargets")?["targetInfos"]
        .as_array()
        .map(|all| all.iter().filter(|t| t["type"] == "page").collect())
        .unwrap_or_default();
    let titles: Vec<String> = pages
        .iter()
        .map(|t| t["title"].as_str().unwrap_or_default().to_string())
        .collect();
    let urls: Vec<String> = pages
        .iter()
        .map(|t| t["url"].as_str().unwrap_or_default().to_string())
        .collect();
    let tab = choice.pick(&titles, &urls)?;
    let attached = socket.command(
        "Target.attachToTarget",
        json!({ "targetId": pages[tab]["targetId"], "flatten": true }),
        json!({}),
    )?;
    let session = result(&attached, "Target.attachToTarget")?["sessionId"].clone();
    let evaluated = socket.command(
        "Runtime.evaluate",
        json!({
            "expression": script,
            "returnByValue": true,
            "awaitPromise": true,
            "userGesture": true,
            "timeout": super::TIMEOUT.as_millis() as u64,
        }),
        json!({ "sessionId": session }),
    )?;
    let _ = socket.command(
        "Target.detachFromTarget",
        json!({ "sessionId": session }),
        json!({}),
    );
    let evaluated = result(&evaluated, "Runtime.evaluate")?;
    if let Some(message) = thrown(evaluated) {
        return Err(PageError::Thrown(message));
    }
    Ok(evaluated["result"]
        .get("value")
        .cloned()
        .unwrap_or(Value::Null))
}

/// What a Runtime reply's script threw, if it threw: the first line of the thrown value's
/// description ("Error: message\n    at …").
pub fn thrown(result: &Value) -> Option<String> {
    let details = result.get("exceptionDetails")?;
    let message = details["exception"]["description"]
        .as_str()
        .or(details["text"].as_str())
        .unwrap_or("exception");
    Some(message.lines().next().unwrap_or(message).to_string())
}

/// A reply's `result`, or its `error` as an error.
fn result<'a>(reply: &'a Value, method: &str) -> Result<&'a Value, PageError> {
    match reply.get("error") {
        Some(e) => Err(PageError::Protocol(format!(
            "{method}: {}",
            e["message"].as_str().unwrap_or("error")
        ))),
        None => Ok(&reply["result"]),
    }
}

/// An open CDP connection for the browser tools (the `browser` module): commands to the
/// browser or to a tab attached in flat mode (a session id per message), and the events
/// they wait for (a load, a dialog). Like [`super::evaluate`]'s, it lives for one call.
pub struct Connection {
    socket: Socket,
}

impl Connection {
    /// Connects to a Chromium endpoint; a call may take `budget` in all.
    pub fn open(
        endpoint: &crate::platform::PageEndpoint,
        budget: std::time::Duration,
    ) -> Result<Connection, PageError> {
        if endpoint.protocol != crate::platform::PageProtocol::Cdp {
            return Err(PageError::Protocol(
                "this browser speaks WebDriver BiDi, not the Chrome DevTools Protocol".into(),
            ));
        }
        let deadline = std::time::Instant::now() + budget;
        Ok(Connection {
            socket: Socket::connect(&endpoint.url, deadline)?,
        })
    }

    /// `method` on the browser: its result, or its error as an error.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, PageError> {
        let reply = self.socket.command(method, params, json!({}))?;
        result(&reply, method).cloned()
    }

    /// `method` in the attached tab `session`.
    pub fn call_in(
        &mut self,
        session: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, PageError> {
        let reply = self
            .socket
            .command(method, params, json!({ "sessionId": session }))?;
        result(&reply, method).cloned()
    }

    /// `method` in tab `session`, unless the tab shows a JavaScript dialog first (its
    /// Page domain enabled, or this the enabling): Err(the dialog's
    /// Page.javascriptDialogOpening params) then, the reply left behind (the page answers
    /// once the dialog closes).
    pub fn call_in_unless_dialog(
        &mut self,
        session: &str,
        method: &str,
        params: Value,
    ) -> Result<Result<Value, Value>, PageError> {
        let dialog = |m: &Value| {
            m["method"] == "Page.javascriptDialogOpening"
                && m["sessionId"].as_str() == Some(session)
        };
        match self
            .socket
            .command_unless(method, params, json!({ "sessionId": session }), dialog)?
        {
            Ok(reply) => result(&reply, method).cloned().map(Ok),
            Err(event) => Ok(Err(event["params"].clone())),
        }
    }

    /// Attaches to the tab whose CDP target id is `target`; the session id.
    pub fn attach(&mut self, target: &str) -> Result<String, PageError> {
        let attached = self.call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        )?;
        attached["sessionId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| PageError::Protocol("Target.attachToTarget: no sessionId".into()))
    }

    /// The params of the first `method` event of `session` (None: any), waiting `within`
    /// at most; None when none came.
    pub fn event(
        &mut self,
        method: &str,
        session: Option<&str>,
        within: std::time::Duration,
    ) -> Result<Option<Value>, PageError> {
        let until = std::time::Instant::now() + within;
        let wanted = |m: &Value| {
            m["method"] == method && session.is_none_or(|s| m["sessionId"].as_str() == Some(s))
        };
        Ok(self
            .socket
            .event(wanted, until)?
            .map(|m| m["params"].clone()))
    }

    /// The first event whose method starts with `prefix` (any session), waiting `within`
    /// at most; None when none came.
    pub fn next_event(
        &mut self,
        prefix: &str,
        within: std::time::Duration,
    ) -> Result<Option<Value>, PageError> {
        let until = std::time::Instant::now() + within;
        let wanted = |m: &Value| m["method"].as_str().is_some_and(|n| n.starts_with(prefix));
        self.socket.event(wanted, until)
    }

    /// Gives the connection `budget` more from now (a long-lived watcher renews it per wait).
    pub fn renew(&mut self, budget: std::time::Duration) {
        self.socket.deadline = std::time::Instant::now() + budget;
    }

    pub fn close(self) {
        self.socket.close();
    }
}
