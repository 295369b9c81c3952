//! The Chrome DevTools Protocol side: the browser's targets are listed on its browser
//! socket, the window's tab is attached in flat mode (one socket, a session id per
//! message) and `Runtime.evaluate` returns the value by value.

use serde_json::{Value, json};

use super::{PageError, Socket, no_tab, pick_tab};

pub(super) fn evaluate(
    socket: &mut Socket,
    window_title: &str,
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
    let tab = pick_tab(window_title, &titles).ok_or_else(|| no_tab(window_title, &titles))?;
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
    if let Some(details) = evaluated.get("exceptionDetails") {
        // The thrown value's description holds "Error: message\n    at …".
        let message = details["exception"]["description"]
            .as_str()
            .or(details["text"].as_str())
            .unwrap_or("exception");
        return Err(PageError::Thrown(
            message.lines().next().unwrap_or(message).to_string(),
        ));
    }
    Ok(evaluated["result"]
        .get("value")
        .cloned()
        .unwrap_or(Value::Null))
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
