//! The browser tools that act in a tab: `browser_click`, `browser_type`,
//! `browser_pointer`, `browser_dialog`, `browser_set_input_files`. Input is trusted (CDP's
//! Input domain) unless the call asks for a DOM event; none raises or focuses the window.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{acting_tab, blocking, watch};
use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;
use crate::platform::Delivery;
use crate::tools::{ToolContext, ToolOutput, ToolSpec};
use crate::web::browser::act::{self, Input};
use crate::web::browser::{self, Dialog, PointerAction, RefEntry, Refusal, Typing};

/// How a click reaches the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputRoute {
    /// Input.dispatchMouseEvent: the page sees a user's click.
    Trusted,
    /// The element's click(): dispatched, which controls that want a user's click ignore.
    DomEvent,
}

const fn action_contract(capability: &'static [&'static str], risk: Risk) -> Contract {
    Contract {
        capabilities: capability,
        risk,
        destructive: false,
        idempotent: false,
        open_world: true,
    }
}

/// The structured result of an input: what cua-driver's clients read, and where.
fn acted(route: &str, target_id: &str, tab_id: &str, extra: Value) -> Value {
    let mut out = json!({
        "status": "ok",
        "effect": "unverifiable",
        "route": route,
        "delivery": { "mode": "background" },
        "target_id": target_id,
        "tab_id": tab_id,
    });
    if let (Some(o), Some(extra)) = (out.as_object_mut(), extra.as_object()) {
        o.extend(extra.clone());
    }
    out
}

/// What the agent does next: look, or answer the dialog the input opened.
fn after(dialog_opened: bool) -> &'static str {
    if dialog_opened {
        "it opened a JavaScript dialog, which holds the page until browser_dialog answers it"
    } else {
        "take a snapshot to see its effect"
    }
}

/// The viewport point of a ref or of x/y.
fn point_of(
    cdp: &mut crate::web::page::CdpConnection,
    session: &str,
    entry: Option<&RefEntry>,
    xy: Option<(f64, f64)>,
) -> Result<(f64, f64), ToolError> {
    match (entry, xy) {
        (Some(e), _) => act::element_point(cdp, session, e),
        (None, Some(p)) => Ok(p),
        (None, None) => Err(ToolError::invalid("give `ref`, or `x` and `y`")),
    }
}

/// `x` and `y` together, or neither.
fn pair(
    x: Option<f64>,
    y: Option<f64>,
    names: (&str, &str),
) -> Result<Option<(f64, f64)>, ToolError> {
    match (x, y) {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() && x >= 0.0 && y >= 0.0 => {
            Ok(Some((x, y)))
        }
        (Some(_), Some(_)) => Err(ToolError::invalid(format!(
            "`{}`/`{}` must be finite viewport pixels, 0 or more",
            names.0, names.1
        ))),
        (None, None) => Ok(None),
        _ => Err(ToolError::invalid(format!(
            "`{}` and `{}` go together",
            names.0, names.1
        ))),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserClickArgs {
    /// A target id from get_browser_state (this session's).
    pub target_id: String,
    /// A tab id of that target.
    pub tab_id: String,
    /// A ref of the tab's latest snapshot (p<snapshot>:<index>); or x and y.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// Viewport x in CSS pixels, instead of ref.
    pub x: Option<f64>,
    /// Viewport y in CSS pixels, instead of ref.
    pub y: Option<f64>,
    /// trusted (default): a user's click through the Input domain; dom_event: the element's click() (ref only).
    pub input_route: Option<InputRoute>,
}

pub struct BrowserClick;

#[async_trait]
impl ToolSpec for BrowserClick {
    type Args = BrowserClickArgs;
    const NAME: &'static str = "browser_click";
    const DESCRIPTION: &'static str = "Click an element of a tab (its ref from get_browser_state) or a viewport point (x, y in CSS pixels) of an exactly bound browser target, without raising the window. trusted (default) sends the browser a user's click at the element's centre, scrolled into view, and refuses (browser_action_unavailable) when another element covers it; dom_event calls the element's click(), which controls that want a user's click may ignore. The effect is not read back: take a new snapshot to see it.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = action_contract(&["browser.input.click"], Risk::R2);

    fn check(a: &BrowserClickArgs) -> Result<(), ToolError> {
        let xy = pair(a.x, a.y, ("x", "y"))?;
        match (&a.reference, xy, a.input_route) {
            (Some(_), Some(_), _) => Err(ToolError::invalid("give `ref` or `x`/`y`, not both")),
            (None, None, _) => Err(ToolError::invalid("give `ref`, or `x` and `y`")),
            (None, Some(_), Some(InputRoute::DomEvent)) => Err(ToolError::invalid(
                "`input_route` dom_event needs a `ref` (a DOM event goes to an element)",
            )),
            _ => Ok(()),
        }
    }

    async fn run(&self, ctx: &ToolContext, a: BrowserClickArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let tab = acting_tab(ctx, &a.target_id, &a.tab_id).await?;
        let entry = match &a.reference {
            Some(r) => Some(ctx.browser.resolve(&a.tab_id, r)?),
            None => None,
        };
        let route = a.input_route.unwrap_or(InputRoute::Trusted);
        let xy = pair(a.x, a.y, ("x", "y"))?;
        let clicked = entry.clone();
        let watch = watch(ctx, &tab).await?;
        let (at, dialog) = blocking(move || {
            let (mut cdp, session) = browser::attach(&tab)?;
            let at = match (route, &clicked) {
                (InputRoute::DomEvent, Some(_)) => None,
                _ => Some(point_of(&mut cdp, &session, clicked.as_ref(), xy)?),
            };
            let mut input = Input::begin(&mut cdp, &session, &watch)?;
            match (at, &clicked) {
                (Some(at), _) => act::click_at(&mut input, at, "left", 1)?,
                (None, Some(e)) => act::dom_click(&mut input, e)?,
                (None, None) => unreachable!("refused by check"),
            }
            let dialog = input.dialog_opened;
            cdp.close();
            Ok((at, dialog))
        })
        .await?;
        let what = entry
            .as_ref()
            .map(|e| format!("{} {} {:?}", e.reference, e.role, e.name))
            .unwrap_or_else(|| "the point".into());
        let (route_name, how) = match route {
            InputRoute::Trusted => ("trusted_input", "a trusted click"),
            InputRoute::DomEvent => ("dom", "click()"),
        };
        Ok(ToolOutput::new(
            format!(
                "{how} on {what}{} in {}; {}",
                at.map(|(x, y)| format!(" at ({x:.0}, {y:.0})"))
                    .unwrap_or_default(),
                a.tab_id,
                after(dialog)
            ),
            acted(
                route_name,
                &a.target_id,
                &a.tab_id,
                json!({ "ref": a.reference, "x": at.map(|p| p.0), "y": at.map(|p| p.1), "dialog_opened": dialog }),
            ),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserTypeArgs {
    /// A target id from get_browser_state (this session's).
    pub target_id: String,
    /// A tab id of that target.
    pub tab_id: String,
    /// The field's ref from the tab's latest snapshot.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Text to type.
    pub text: String,
    /// insert_text (default): the text at once (Input.insertText); keystrokes: a key event per character.
    pub mode: Option<Typing>,
    /// true: select the field's content first, so the text replaces it (an empty text clears it). Default false: insert at the caret.
    pub replace: Option<bool>,
}

pub struct BrowserType;

#[async_trait]
impl ToolSpec for BrowserType {
    type Args = BrowserTypeArgs;
    const NAME: &'static str = "browser_type";
    const DESCRIPTION: &'static str = "Type text into a field of a tab (its ref from get_browser_state) of an exactly bound browser target, without raising the window: the field takes the page's focus, then insert_text (default) inserts the text at the caret or keystrokes sends a key event per character; replace selects the field's content first (an empty text clears it). The field's value is read back: effect confirmed when it holds the text, partial otherwise.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = action_contract(&["browser.input.type"], Risk::R2);

    async fn run(&self, ctx: &ToolContext, a: BrowserTypeArgs) -> Result<ToolOutput, ToolError> {
        let tab = acting_tab(ctx, &a.target_id, &a.tab_id).await?;
        let entry = ctx.browser.resolve(&a.tab_id, &a.reference)?;
        let (text, mode, replace) = (
            a.text.clone(),
            a.mode.unwrap_or(Typing::InsertText),
            a.replace.unwrap_or(false),
        );
        let typed = entry.clone();
        let watch = watch(ctx, &tab).await?;
        let value = blocking(move || {
            let (mut cdp, session) = browser::attach(&tab)?;
            let mut input = Input::begin(&mut cdp, &session, &watch)?;
            let value = act::type_into(&mut input, &typed, &text, mode, replace)?;
            cdp.close();
            Ok(value)
        })
        .await?;
        let holds = value.as_ref().map(|v| {
            if replace {
                *v == a.text
            } else {
                v.contains(&a.text)
            }
        });
        let effect = match holds {
            Some(true) => "confirmed",
            Some(false) => "partial",
            None => "unverifiable",
        };
        Ok(ToolOutput::new(
            format!(
                "typed {} character(s) into {} {} {:?}: {}",
                a.text.chars().count(),
                entry.reference,
                entry.role,
                entry.name,
                match &value {
                    Some(v) => format!("it now holds {v:?} ({effect})"),
                    None => after(true).to_string(),
                }
            ),
            {
                let mut out = acted(
                    "trusted_input",
                    &a.target_id,
                    &a.tab_id,
                    json!({ "ref": a.reference, "value": value, "dialog_opened": value.is_none() }),
                );
                out["effect"] = json!(effect);
                out["evidence"] = json!([{ "kind": "value_readback" }]);
                out
            },
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserPointerArgs {
    /// A target id from get_browser_state (this session's).
    pub target_id: String,
    /// A tab id of that target.
    pub tab_id: String,
    /// hover, right_click, double_click, scroll (by delta_x/delta_y) or drag (to destination_ref or to_x/to_y).
    pub action: PointerAction,
    /// Where the gesture starts: a ref of the tab's latest snapshot; or x and y.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// Viewport x in CSS pixels, instead of ref.
    pub x: Option<f64>,
    /// Viewport y in CSS pixels, instead of ref.
    pub y: Option<f64>,
    /// Drag: the ref to drop on.
    pub destination_ref: Option<String>,
    /// Drag: the viewport x to drop at.
    pub to_x: Option<f64>,
    /// Drag: the viewport y to drop at.
    pub to_y: Option<f64>,
    /// Scroll: horizontal CSS pixels.
    pub delta_x: Option<f64>,
    /// Scroll: vertical CSS pixels (positive scrolls down).
    pub delta_y: Option<f64>,
    /// trusted (default). dom_event is refused: only clicks are offered as DOM events.
    pub input_route: Option<InputRoute>,
}

pub struct BrowserPointer;

#[async_trait]
impl ToolSpec for BrowserPointer {
    type Args = BrowserPointerArgs;
    const NAME: &'static str = "browser_pointer";
    const DESCRIPTION: &'static str = "Hover, right-click, double-click, scroll (delta_x/delta_y) or drag (to destination_ref or to_x/to_y) in a tab of an exactly bound browser target, from a ref's centre or a viewport point, as trusted input (CDP's Input domain), without raising or activating the window or tab.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = action_contract(&["browser.input.pointer"], Risk::R2);

    fn check(a: &BrowserPointerArgs) -> Result<(), ToolError> {
        if a.input_route == Some(InputRoute::DomEvent) {
            return Err(ToolError::invalid(
                "`input_route`: dom_event is offered for browser_click only; pointer gestures go as trusted input",
            ));
        }
        let from = pair(a.x, a.y, ("x", "y"))?;
        if a.reference.is_some() == from.is_some() {
            return Err(ToolError::invalid(
                "give `ref`, or `x` and `y` (one of them)",
            ));
        }
        let to = pair(a.to_x, a.to_y, ("to_x", "to_y"))?;
        let drag = a.action == PointerAction::Drag;
        if drag && a.destination_ref.is_some() == to.is_some() {
            return Err(ToolError::invalid(
                "a drag needs `destination_ref`, or `to_x` and `to_y` (one of them)",
            ));
        }
        if !drag && (a.destination_ref.is_some() || to.is_some()) {
            return Err(ToolError::invalid(
                "`destination_ref`/`to_x`/`to_y` go with action drag only",
            ));
        }
        let scroll = a.action == PointerAction::Scroll;
        if scroll && a.delta_x.is_none() && a.delta_y.is_none() {
            return Err(ToolError::invalid("a scroll needs `delta_x` or `delta_y`"));
        }
        if !scroll && (a.delta_x.is_some() || a.delta_y.is_some()) {
            return Err(ToolError::invalid(
                "`delta_x`/`delta_y` go with action scroll only",
            ));
        }
        Ok(())
    }

    async fn run(&self, ctx: &ToolContext, a: BrowserPointerArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let tab = acting_tab(ctx, &a.target_id, &a.tab_id).await?;
        let resolve = |r: &Option<String>| -> Result<Option<RefEntry>, ToolError> {
            r.as_deref()
                .map(|r| ctx.browser.resolve(&a.tab_id, r))
                .transpose()
        };
        let (from_entry, to_entry) = (resolve(&a.reference)?, resolve(&a.destination_ref)?);
        let from_xy = pair(a.x, a.y, ("x", "y"))?;
        let to_xy = pair(a.to_x, a.to_y, ("to_x", "to_y"))?;
        let delta = (a.delta_x.unwrap_or(0.0), a.delta_y.unwrap_or(0.0));
        let action = a.action;
        let watch = watch(ctx, &tab).await?;
        let (from, to, dialog) = blocking(move || {
            let (mut cdp, session) = browser::attach(&tab)?;
            let from = point_of(&mut cdp, &session, from_entry.as_ref(), from_xy)?;
            let to = match (to_entry.as_ref(), to_xy) {
                (None, None) => None,
                (entry, xy) => Some(point_of(&mut cdp, &session, entry, xy)?),
            };
            let mut input = Input::begin(&mut cdp, &session, &watch)?;
            act::pointer(&mut input, action, from, to, delta)?;
            let dialog = input.dialog_opened;
            cdp.close();
            Ok((from, to, dialog))
        })
        .await?;
        let name = serde_json::to_value(a.action).unwrap_or_default();
        Ok(ToolOutput::new(
            format!(
                "{} at ({:.0}, {:.0}){} in {}; {}",
                name.as_str().unwrap_or_default(),
                from.0,
                from.1,
                to.map(|t| format!(" to ({:.0}, {:.0})", t.0, t.1))
                    .unwrap_or_default(),
                a.tab_id,
                after(dialog)
            ),
            acted(
                "trusted_input",
                &a.target_id,
                &a.tab_id,
                json!({ "action": name, "x": from.0, "y": from.1, "to_x": to.map(|t| t.0), "to_y": to.map(|t| t.1), "dialog_opened": dialog }),
            ),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserDialogArgs {
    /// A target id from get_browser_state (this session's).
    pub target_id: String,
    /// A tab id of that target.
    pub tab_id: String,
    /// inspect (read the open dialog, if any), accept or dismiss.
    pub action: Dialog,
    /// accept/dismiss: the dialog_id inspect returned (refused if another dialog is open by then).
    pub dialog_id: Option<String>,
    /// accept of a prompt: the answer.
    pub prompt_text: Option<String>,
    /// background (default) or foreground: both resolve the dialog through the browser, which moves nothing on screen.
    #[schemars(extend("default" = "background"))]
    pub delivery_mode: Option<Delivery>,
}

/// An id for the open dialog: the same dialog (tab, kind, message, page) gives the same.
fn dialog_id(cdp_tab: &str, dialog: &Value) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        cdp_tab,
        dialog["type"].as_str(),
        dialog["message"].as_str(),
        dialog["url"].as_str(),
    )
        .hash(&mut h);
    format!("dialog-{:012x}", h.finish() & 0xffff_ffff_ffff)
}

pub struct BrowserDialog;

#[async_trait]
impl ToolSpec for BrowserDialog {
    type Args = BrowserDialogArgs;
    const NAME: &'static str = "browser_dialog";
    const DESCRIPTION: &'static str = "Inspect, accept or dismiss a page's JavaScript dialog (alert, confirm, prompt, beforeunload) in a tab of an exactly bound browser target. inspect returns the open dialog's kind, message and dialog_id (present false when none); accept (with prompt_text for a prompt) and dismiss need that dialog_id. Resolved through the browser in either delivery mode: nothing on screen moves. Never touches the browser's own permission prompts, extensions or file pickers.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract =
        action_contract(&["browser.dialog", "input.delivery_mode"], Risk::R3);

    fn acts(a: &BrowserDialogArgs) -> bool {
        a.action != Dialog::Inspect
    }

    fn check(a: &BrowserDialogArgs) -> Result<(), ToolError> {
        match a.action {
            Dialog::Inspect if a.dialog_id.is_some() || a.prompt_text.is_some() => Err(
                ToolError::invalid("`dialog_id` and `prompt_text` go with accept or dismiss"),
            ),
            Dialog::Accept | Dialog::Dismiss if a.dialog_id.is_none() => Err(ToolError::invalid(
                "`dialog_id` is required to accept or dismiss: inspect returns it",
            )),
            Dialog::Dismiss if a.prompt_text.is_some() => {
                Err(ToolError::invalid("`prompt_text` goes with accept only"))
            }
            _ => Ok(()),
        }
    }

    async fn run(&self, ctx: &ToolContext, a: BrowserDialogArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let tab = acting_tab(ctx, &a.target_id, &a.tab_id).await?;
        let watch = watch(ctx, &tab).await?;
        let dialog = watch.open();
        let id = dialog.as_ref().map(|d| dialog_id(&tab.cdp_id, d));
        if a.action != Dialog::Inspect {
            let Some(d) = &dialog else {
                return Err(Refusal::ActionUnavailable
                    .because(format!("no JavaScript dialog is open in {}", a.tab_id)));
            };
            if id != a.dialog_id {
                return Err(Refusal::ActionUnavailable.because(format!(
                    "dialog_id {:?} is not the open dialog's ({}): inspect again",
                    a.dialog_id.clone().unwrap_or_default(),
                    id.clone().unwrap_or_default()
                )));
            }
            if a.prompt_text.is_some() && d["type"] != "prompt" {
                return Err(ToolError::invalid(format!(
                    "`prompt_text` answers a prompt; the open dialog is {}",
                    d["type"].as_str().unwrap_or("another kind")
                )));
            }
            let (accept, prompt) = (a.action == Dialog::Accept, a.prompt_text.clone());
            let answer = watch.clone();
            blocking(move || answer.resolve(accept, prompt).map_err(ToolError::failed)).await?;
        }
        let kind = dialog
            .as_ref()
            .map(|d| d["type"].clone())
            .unwrap_or(Value::Null);
        let summary = match (&dialog, a.action) {
            (None, _) => format!("no JavaScript dialog is open in {}", a.tab_id),
            (Some(d), Dialog::Inspect) => format!(
                "a {} dialog is open in {}: {:?}",
                kind.as_str().unwrap_or_default(),
                a.tab_id,
                d["message"].as_str().unwrap_or_default()
            ),
            (Some(_), action) => format!(
                "{} the {} dialog in {}",
                if action == Dialog::Accept {
                    "accepted"
                } else {
                    "dismissed"
                },
                kind.as_str().unwrap_or_default(),
                a.tab_id
            ),
        };
        Ok(ToolOutput::new(
            summary,
            json!({
                "status": "ok",
                "target_id": a.target_id,
                "tab_id": a.tab_id,
                "present": dialog.is_some() && a.action == Dialog::Inspect,
                "dialog_id": id,
                "kind": kind,
                "message": dialog.as_ref().map(|d| d["message"].clone()),
                "default_prompt": dialog.as_ref().map(|d| d["defaultPrompt"].clone()),
                "action": a.action_name(),
                "delivery": { "mode": a.delivery_mode.unwrap_or(Delivery::Background) },
            }),
        ))
    }
}

impl BrowserDialogArgs {
    fn action_name(&self) -> &'static str {
        match self.action {
            Dialog::Inspect => "inspect",
            Dialog::Accept => "accept",
            Dialog::Dismiss => "dismiss",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserSetInputFilesArgs {
    /// A target id from get_browser_state (this session's).
    pub target_id: String,
    /// A tab id of that target.
    pub tab_id: String,
    /// The <input type=file>'s ref from the tab's latest snapshot.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Absolute paths of regular files (no symlinks), 1 to 32.
    pub files: Vec<String>,
}

pub struct BrowserSetInputFiles;

#[async_trait]
impl ToolSpec for BrowserSetInputFiles {
    type Args = BrowserSetInputFilesArgs;
    const NAME: &'static str = "browser_set_input_files";
    const DESCRIPTION: &'static str = "Give an <input type=file> of a tab (its ref) of an exactly bound browser target the files named (absolute paths of regular files, no symlinks, 1 to 32), through the browser: no file picker opens. The input's file count is read back; paths are not echoed.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = action_contract(&["browser.input.files"], Risk::R3);

    fn check(a: &BrowserSetInputFilesArgs) -> Result<(), ToolError> {
        if a.files.is_empty() || a.files.len() > 32 {
            return Err(ToolError::invalid("`files`: give 1 to 32 paths"));
        }
        Ok(())
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        a: BrowserSetInputFilesArgs,
    ) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        for (i, file) in a.files.iter().enumerate() {
            let path = std::path::Path::new(file);
            let meta = std::fs::symlink_metadata(path);
            let why = match &meta {
                _ if !path.is_absolute() => Some("is not an absolute path"),
                Err(_) => Some("does not exist"),
                Ok(m) if m.file_type().is_symlink() => Some("is a symlink"),
                Ok(m) if !m.is_file() => Some("is not a regular file"),
                Ok(_) => None,
            };
            if let Some(why) = why {
                return Err(ToolError::invalid(format!("`files[{i}]` {why}")));
            }
        }
        let tab = acting_tab(ctx, &a.target_id, &a.tab_id).await?;
        let entry = ctx.browser.resolve(&a.tab_id, &a.reference)?;
        let (files, given) = (a.files.clone(), entry.clone());
        let count = blocking(move || {
            let (mut cdp, session) = browser::attach(&tab)?;
            let count = act::set_files(&mut cdp, &session, &given, &files)?;
            cdp.close();
            Ok(count)
        })
        .await?;
        let effect = if count == a.files.len() as u64 {
            "confirmed"
        } else {
            "partial"
        };
        let mut out = acted(
            "trusted_input",
            &a.target_id,
            &a.tab_id,
            json!({ "ref": a.reference, "file_count": count }),
        );
        out["effect"] = json!(effect);
        out["evidence"] = json!([{ "kind": "value_readback" }]);
        Ok(ToolOutput::new(
            format!(
                "{} now holds {count} file(s) of {} given ({effect})",
                entry.reference,
                a.files.len()
            ),
            out,
        ))
    }
}
