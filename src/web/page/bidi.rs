//! The WebDriver BiDi side (Firefox): a session is opened for the call and ended after it
//! (Firefox holds one at a time, so a call that finds another's open waits for it; behind
//! the page relay, which holds that one session, the relay answers both), the
//! top-level browsing contexts are told apart by their document titles, and
//! `script.evaluate`'s typed result is turned back into JSON.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{PageError, Socket, TabChoice};

pub(super) fn evaluate(
    socket: &mut Socket,
    choice: &TabChoice,
    script: &str,
) -> Result<Value, PageError> {
    open_session(socket)?;
    let outcome = evaluate_in_session(socket, choice, script);
    let _ = socket.command("session.end", json!({}), json!({}));
    outcome
}

fn open_session(socket: &mut Socket) -> Result<(), PageError> {
    loop {
        let reply = socket.command("session.new", json!({ "capabilities": {} }), json!({}))?;
        match result(&reply, "session.new") {
            Ok(_) => return Ok(()),
            // Another call's session: Firefox takes one at a time.
            Err(e)
                if reply["error"] == "session not created" && Instant::now() < socket.deadline =>
            {
                tracing::debug!("waiting for another BiDi session to end: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
}

fn evaluate_in_session(
    socket: &mut Socket,
    choice: &TabChoice,
    script: &str,
) -> Result<Value, PageError> {
    let tree = socket.command(
        "browsingContext.getTree",
        json!({ "maxDepth": 0 }),
        json!({}),
    )?;
    let all = result(&tree, "browsingContext.getTree")?["contexts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let contexts: Vec<Value> = all.iter().map(|c| c["context"].clone()).collect();
    let urls: Vec<String> = all
        .iter()
        .map(|c| c["url"].as_str().unwrap_or_default().to_string())
        .collect();
    // Titles only where the window's title chooses (each costs an evaluation).
    let mut titles = Vec::with_capacity(contexts.len());
    if matches!(choice, TabChoice::Shown(_)) {
        for context in &contexts {
            let title = run(socket, context, "document.title")?;
            titles.push(title.as_str().unwrap_or_default().to_string());
        }
    }
    let tab = choice.pick(&titles, &urls)?;
    run(socket, &contexts[tab], script)
}

/// `script.evaluate` in one context; the completion value as JSON.
fn run(socket: &mut Socket, context: &Value, script: &str) -> Result<Value, PageError> {
    let reply = socket.command(
        "script.evaluate",
        json!({
            "expression": script,
            "target": { "context": context },
            "awaitPromise": true,
            "resultOwnership": "none",
            "userActivation": true,
        }),
        json!({}),
    )?;
    let evaluated = result(&reply, "script.evaluate")?;
    if evaluated["type"] == "exception" {
        let text = evaluated["exceptionDetails"]["text"]
            .as_str()
            .unwrap_or("exception");
        return Err(PageError::Thrown(text.to_string()));
    }
    Ok(to_json(&evaluated["result"]))
}

/// A reply's `result`, or its error as an error.
fn result<'a>(reply: &'a Value, method: &str) -> Result<&'a Value, PageError> {
    if reply["type"] == "error" {
        return Err(PageError::Protocol(format!(
            "{method}: {}: {}",
            reply["error"].as_str().unwrap_or("error"),
            reply["message"].as_str().unwrap_or_default()
        )));
    }
    Ok(&reply["result"])
}

/// A BiDi remote value as the JSON `JSON.stringify` would make of it: numbers that JSON
/// cannot hold are null, maps are objects, a regular expression is its source.
fn to_json(remote: &Value) -> Value {
    let value = &remote["value"];
    match remote["type"].as_str().unwrap_or_default() {
        "string" | "boolean" => value.clone(),
        "number" => match value {
            Value::Number(_) => value.clone(),
            Value::String(s) if s == "-0" => json!(0),
            _ => Value::Null,
        },
        "bigint" | "date" => value.clone(),
        "regexp" => json!(format!(
            "/{}/{}",
            value["pattern"].as_str().unwrap_or_default(),
            value["flags"].as_str().unwrap_or_default()
        )),
        "array" | "set" => Value::Array(
            value
                .as_array()
                .map(|items| items.iter().map(to_json).collect())
                .unwrap_or_default(),
        ),
        "object" | "map" => {
            let mut object = Map::new();
            for pair in value.as_array().into_iter().flatten() {
                let key = match &pair[0] {
                    Value::String(k) => k.clone(),
                    other => to_json(other).to_string(),
                };
                object.insert(key, to_json(&pair[1]));
            }
            Value::Object(object)
        }
        "node" | "window" => json!({}),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_values_read_as_json_stringify_would_write_them() {
        let remote = json!({ "type": "object", "value": [
            ["n", { "type": "number", "value": 1.5 }],
            ["nan", { "type": "number", "value": "NaN" }],
            ["list", { "type": "array", "value": [
                { "type": "string", "value": "a" }, { "type": "null" }, { "type": "undefined" }
            ]}],
            ["ok", { "type": "boolean", "value": true }],
            ["re", { "type": "regexp", "value": { "pattern": "a+", "flags": "g" } }]
        ]});
        assert_eq!(
            to_json(&remote),
            json!({ "n": 1.5, "nan": null, "list": ["a", null, null], "ok": true, "re": "/a+/g" })
        );
        assert_eq!(
            to_json(&json!({ "type": "number", "value": "-0" })),
            json!(0)
        );
    }
}
