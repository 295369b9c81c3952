//! Acting in an attached tab: trusted input through CDP's Input domain (the browser takes
//! it as the user's, without raising or focusing its window), a DOM event where asked,
//! typing with a read-back of the field, navigation, page dialogs and file inputs.

use serde_json::{Value, json};

use super::{BUDGET, DialogWatch, RefEntry, Refusal, page_failed};
use crate::errors::ToolError;
use crate::web::page::{CdpConnection, PageError};

/// Input to a tab that a page dialog may interrupt: once one opens, the page answers
/// nothing until it closes, so the rest of a gesture is not sent and the call reports the
/// dialog (browser_dialog resolves it).
pub struct Input<'a> {
    pub cdp: &'a mut CdpConnection,
    pub session: &'a str,
    watch: &'a DialogWatch,
    pub dialog_opened: bool,
}

impl<'a> Input<'a> {
    /// Input to the tab `session` of `cdp`, which `watch` watches: refused while a dialog
    /// holds the page (it would answer nothing); a dialog the input opens is told to it.
    pub fn begin(
        cdp: &'a mut CdpConnection,
        session: &'a str,
        watch: &'a DialogWatch,
    ) -> Result<Input<'a>, ToolError> {
        if let Some(dialog) = watch.open() {
            return Err(Refusal::ActionUnavailable.because(format!(
                "a {} dialog ({:?}) holds the page: answer it with browser_dialog first",
                dialog["type"].as_str().unwrap_or("JavaScript"),
                dialog["message"].as_str().unwrap_or_default()
            )));
        }
        cdp.call_in(session, "Page.enable", json!({}))
            .map_err(page_failed)?;
        Ok(Input {
            cdp,
            session,
            watch,
            dialog_opened: false,
        })
    }

    /// Sends `method` unless a dialog opened; its reply (None once a dialog is open).
    fn send(&mut self, method: &str, params: Value) -> Result<Option<Value>, ToolError> {
        if self.dialog_opened {
            return Ok(None);
        }
        let reply = self
            .cdp
            .call_in_unless_dialog(self.session, method, params)
            .map_err(page_failed)?;
        match reply {
            Ok(reply) => Ok(Some(reply)),
            Err(dialog) => {
                self.watch.saw(dialog);
                self.dialog_opened = true;
                Ok(None)
            }
        }
    }
}

/// A node's handle for Runtime calls, or the refusal of a node that left the page.
fn object_of(
    cdp: &mut CdpConnection,
    session: &str,
    entry: &RefEntry,
) -> Result<String, ToolError> {
    let resolved = cdp
        .call_in(
            session,
            "DOM.resolveNode",
            json!({ "backendNodeId": entry.backend_node_id }),
        )
        .map_err(|e| gone(entry, e))?;
    resolved["object"]["objectId"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| gone(entry, PageError::Protocol("no objectId".into())))
}

/// The node's handle, once `test` (a JS predicate on `this`) holds for it; otherwise the
/// refusal says the element `fails`.
fn object_that(
    cdp: &mut CdpConnection,
    session: &str,
    entry: &RefEntry,
    test: &str,
    fails: &str,
) -> Result<String, ToolError> {
    let object = object_of(cdp, session, entry)?;
    if call_on(cdp, session, &object, test, json!([]))? != true {
        return Err(Refusal::ActionUnavailable.because(format!(
            "ref {} ({} {:?}) {fails}",
            entry.reference, entry.role, entry.name
        )));
    }
    Ok(object)
}

fn gone(entry: &RefEntry, e: PageError) -> ToolError {
    Refusal::RefStale.because(format!(
        "ref {} ({} {:?}) is no longer on the page ({e}): take a new snapshot",
        entry.reference, entry.role, entry.name
    ))
}

/// Runs `function` (a JS function's source) with `this` the node; its value.
fn call_on(
    cdp: &mut CdpConnection,
    session: &str,
    object: &str,
    function: &str,
    arguments: Value,
) -> Result<Value, ToolError> {
    let reply = cdp
        .call_in(
            session,
            "Runtime.callFunctionOn",
            json!({
                "objectId": object,
                "functionDeclaration": function,
                "arguments": arguments,
                "returnByValue": true,
                "userGesture": true,
            }),
        )
        .map_err(page_failed)?;
    if let Some(message) = crate::web::page::thrown(&reply) {
        return Err(ToolError::failed(format!("the page threw: {message}")));
    }
    Ok(reply["result"]["value"].clone())
}

/// The centre of the ref's element in viewport CSS pixels, scrolled into view first.
/// Refused when another element covers that point: a trusted click would land there.
pub fn element_point(
    cdp: &mut CdpConnection,
    session: &str,
    entry: &RefEntry,
) -> Result<(f64, f64), ToolError> {
    let node = json!({ "backendNodeId": entry.backend_node_id });
    cdp.call_in(session, "DOM.scrollIntoViewIfNeeded", node.clone())
        .map_err(|e| gone(entry, e))?;
    let quads = cdp
        .call_in(session, "DOM.getContentQuads", node)
        .map_err(|e| gone(entry, e))?;
    let Some(quad) = quads["quads"][0].as_array().filter(|q| q.len() == 8) else {
        return Err(Refusal::ActionUnavailable.because(format!(
            "ref {} ({} {:?}) has no box on the page (hidden): it cannot be pointed at",
            entry.reference, entry.role, entry.name
        )));
    };
    let at = |i: usize| quad[i].as_f64().unwrap_or(0.0);
    let x = (at(0) + at(2) + at(4) + at(6)) / 4.0;
    let y = (at(1) + at(3) + at(5) + at(7)) / 4.0;
    let hit = cdp
        .call_in(
            session,
            "DOM.getNodeForLocation",
            json!({ "x": x.round() as i64, "y": y.round() as i64 }),
        )
        .map_err(page_failed)?;
    if hit["backendNodeId"].as_i64() != Some(entry.backend_node_id) {
        let target = object_of(cdp, session, entry)?;
        let hit_entry = RefEntry {
            backend_node_id: hit["backendNodeId"].as_i64().unwrap_or(-1),
            ..entry.clone()
        };
        let hit_object = object_of(cdp, session, &hit_entry)?;
        let inside = call_on(
            cdp,
            session,
            &target,
            "function (h) { return this === h || this.contains(h) || (this.control === h) || (h.labels && Array.from(h.labels).includes(this)); }",
            json!([{ "objectId": hit_object }]),
        )?;
        if inside != true {
            let what = call_on(
                cdp,
                session,
                &hit_object,
                "function () { return this.nodeType === 1 ? this.tagName.toLowerCase() + (this.id ? '#' + this.id : '') : this.nodeName; }",
                json!([]),
            )?;
            return Err(Refusal::ActionUnavailable.because(format!(
                "ref {} ({} {:?}) is covered by {} at its centre ({x:.0}, {y:.0}): a click would land on that",
                entry.reference,
                entry.role,
                entry.name,
                what.as_str().unwrap_or("another element")
            )));
        }
    }
    Ok((x, y))
}

/// One Input.dispatchMouseEvent.
fn mouse(
    input: &mut Input,
    kind: &str,
    (x, y): (f64, f64),
    button: &str,
    click_count: u32,
) -> Result<(), ToolError> {
    let buttons = match (kind, button) {
        ("mousePressed", "left") => 1,
        ("mousePressed", "right") => 2,
        ("mouseMoved", "left") if click_count > 0 => 1,
        _ => 0,
    };
    input
        .send(
            "Input.dispatchMouseEvent",
            json!({ "type": kind, "x": x, "y": y, "button": button, "buttons": buttons, "clickCount": click_count }),
        )
        .map(drop)
}

/// A trusted click (`count` 2: a double click) of `button` at viewport point `at`.
pub fn click_at(
    input: &mut Input,
    at: (f64, f64),
    button: &str,
    count: u32,
) -> Result<(), ToolError> {
    mouse(input, "mouseMoved", at, "none", 0)?;
    for n in 1..=count {
        mouse(input, "mousePressed", at, button, n)?;
        mouse(input, "mouseReleased", at, button, n)?;
    }
    Ok(())
}

/// `this.click()` on the ref's element: dispatched, not a user's click.
pub fn dom_click(input: &mut Input, entry: &RefEntry) -> Result<(), ToolError> {
    let object = object_of(input.cdp, input.session, entry)?;
    input
        .send(
            "Runtime.callFunctionOn",
            json!({ "objectId": object, "functionDeclaration": "function () { this.click(); }", "userGesture": true }),
        )
        .map(drop)
}

/// browser_pointer's gestures.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PointerAction {
    Hover,
    RightClick,
    DoubleClick,
    Scroll,
    Drag,
}

/// A trusted pointer gesture at `from`: to `to` for a drag, by `delta` for a scroll.
pub fn pointer(
    input: &mut Input,
    action: PointerAction,
    from: (f64, f64),
    to: Option<(f64, f64)>,
    delta: (f64, f64),
) -> Result<(), ToolError> {
    match action {
        PointerAction::Hover => mouse(input, "mouseMoved", from, "none", 0),
        PointerAction::RightClick => click_at(input, from, "right", 1),
        PointerAction::DoubleClick => click_at(input, from, "left", 2),
        PointerAction::Scroll => input
            .send(
                "Input.dispatchMouseEvent",
                json!({ "type": "mouseWheel", "x": from.0, "y": from.1, "deltaX": delta.0, "deltaY": delta.1 }),
            )
            .map(drop),
        PointerAction::Drag => {
            let to = to.unwrap_or(from);
            mouse(input, "mouseMoved", from, "none", 0)?;
            mouse(input, "mousePressed", from, "left", 1)?;
            // Steps between, so the page sees a move (drag thresholds, dragover).
            for step in 1..=10 {
                let t = f64::from(step) / 10.0;
                let at = (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
                mouse(input, "mouseMoved", at, "left", 1)?;
            }
            mouse(input, "mouseReleased", to, "left", 1)
        }
    }
}

/// How browser_type delivers text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Typing {
    InsertText,
    Keystrokes,
}

/// Types `text` into the ref's element (focused first; its content selected first when
/// `replace`); the element's value (or text) afterwards, read back (None when a dialog
/// opened and the page cannot answer).
pub fn type_into(
    input: &mut Input,
    entry: &RefEntry,
    text: &str,
    mode: Typing,
    replace: bool,
) -> Result<Option<String>, ToolError> {
    let (cdp, session) = (&mut *input.cdp, input.session);
    let object = object_that(
        cdp,
        session,
        entry,
        "function () { return ('value' in this && !this.readOnly && !this.disabled) || this.isContentEditable; }",
        "takes no text (not an enabled field or editable element)",
    )?;
    cdp.call_in(
        session,
        "DOM.focus",
        json!({ "backendNodeId": entry.backend_node_id }),
    )
    .map_err(|e| gone(entry, e))?;
    if replace {
        call_on(
            cdp,
            session,
            &object,
            "function () { if (typeof this.select === 'function') { this.select(); } else { const r = document.createRange(); r.selectNodeContents(this); const s = getSelection(); s.removeAllRanges(); s.addRange(r); } }",
            json!([]),
        )?;
        if text.is_empty() {
            key(input, "Delete", "Delete", 46, None)?;
        }
    }
    match mode {
        Typing::InsertText if !text.is_empty() => {
            input.send("Input.insertText", json!({ "text": text }))?;
        }
        Typing::InsertText => {}
        Typing::Keystrokes => {
            for ch in text.chars() {
                match ch {
                    '\n' => key(input, "Enter", "Enter", 13, Some("\r"))?,
                    '\t' => key(input, "Tab", "Tab", 9, None)?,
                    _ => {
                        let s = ch.to_string();
                        key(input, &s, "", 0, Some(&s))?
                    }
                }
            }
        }
    }
    if input.dialog_opened {
        return Ok(None);
    }
    let value = call_on(
        input.cdp,
        input.session,
        &object,
        "function () { return 'value' in this ? String(this.value) : this.innerText; }",
        json!([]),
    )?;
    Ok(Some(value.as_str().unwrap_or_default().to_string()))
}

/// One key press (down and up) through Input.dispatchKeyEvent; `text` is what it types.
fn key(
    input: &mut Input,
    name: &str,
    code: &str,
    virtual_key: u32,
    text: Option<&str>,
) -> Result<(), ToolError> {
    let mut down = json!({ "type": "keyDown", "key": name, "code": code, "windowsVirtualKeyCode": virtual_key });
    if let Some(t) = text {
        down["text"] = json!(t);
    }
    input.send("Input.dispatchKeyEvent", down)?;
    input
        .send(
            "Input.dispatchKeyEvent",
            json!({ "type": "keyUp", "key": name, "code": code, "windowsVirtualKeyCode": virtual_key }),
        )
        .map(drop)
}

/// Navigates the tab to `url` and waits for its load event (bounded): an error page or a
/// load that never ends is an error.
pub fn navigate(cdp: &mut CdpConnection, session: &str, url: &str) -> Result<(), ToolError> {
    cdp.call_in(session, "Page.enable", json!({}))
        .map_err(page_failed)?;
    let started = cdp
        .call_in(session, "Page.navigate", json!({ "url": url }))
        .map_err(page_failed)?;
    if let Some(error) = started["errorText"].as_str() {
        return Err(ToolError::failed(format!("navigating to {url}: {error}")));
    }
    // A navigation within the document (a #fragment) has no loader and no load event.
    if started["loaderId"].is_string() {
        let loaded = cdp
            .event("Page.loadEventFired", Some(session), BUDGET)
            .map_err(page_failed)?;
        if loaded.is_none() {
            return Err(ToolError::failed(format!(
                "{url} did not finish loading within {} s",
                BUDGET.as_secs()
            )));
        }
    }
    Ok(())
}

/// browser_dialog's actions.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Dialog {
    Inspect,
    Accept,
    Dismiss,
}

/// Sets the files of the ref's `<input type=file>` (it must be one).
pub fn set_files(
    cdp: &mut CdpConnection,
    session: &str,
    entry: &RefEntry,
    files: &[String],
) -> Result<u64, ToolError> {
    let object = object_that(
        cdp,
        session,
        entry,
        "function () { return this.tagName === 'INPUT' && this.type === 'file'; }",
        "is not an <input type=file>",
    )?;
    cdp.call_in(
        session,
        "DOM.setFileInputFiles",
        json!({ "files": files, "backendNodeId": entry.backend_node_id }),
    )
    .map_err(page_failed)?;
    let count = call_on(
        cdp,
        session,
        &object,
        "function () { return this.files.length; }",
        json!([]),
    )?;
    Ok(count.as_u64().unwrap_or(0))
}
