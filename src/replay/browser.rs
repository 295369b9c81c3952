//! A browser tool's turn, bound again: its ids (`target_id`, `tab_id`, `ref`) were its
//! recording session's, so the live browser window (bound like any window) is bound as a
//! target in this session, the tab found by the URL the recording kept, and the element
//! by its recorded role and label, climbing the same ladder as element turns (role and
//! name, a loose name, the same name under another role); where several fit a rung, the
//! recorded ancestors' names decide, as for element turns. Nothing is acted on that is
//! not singled out: several still alike, or none, fail the turn naming them. A dialog is
//! answered only when the tab's open one is of the recorded kind and message.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};
use crate::platform::WindowInfo;
use crate::trajectory::{Action, BrowserDialog, BrowserElement, BrowserTarget};

use super::heal::{LocatorRule, describe, disabled_message, rung_fits};
use super::postcondition::Rename;
use super::{READY_TIMEOUT, TurnResult};

/// Whether `tool` names its tab by session ids (browser_prepare names a pid, which replay
/// rebinds like any).
pub(super) fn names_a_tab(tool: &str) -> bool {
    tool.starts_with("browser_") && tool != "browser_prepare"
}

/// The recorded tab and element of a browser turn; why it cannot replay when the
/// recording kept none.
pub(super) fn recorded(action: &Action, tool: &str) -> Result<BrowserTarget, String> {
    action.browser.clone().ok_or_else(|| {
            format!(
                "not replayable: this {tool} turn was recorded without its tab's URL and its element's role and label (before cua kept them, or by another driver); record it again"
            )
        })
}

/// Rewrites the turn's `target_id`, `tab_id` and `ref` to the live ones in `window`,
/// waiting (bounded) for the tab and the element to be there; a healed element's rename,
/// which the later turns' checks read their recorded trees by.
pub(super) async fn bind(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &BrowserTarget,
    window: &WindowInfo,
    args: &mut Value,
    result: &mut TurnResult,
) -> Result<Option<Rename>, String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let (target_id, tab_id) = live_tab(ctx, registry, recorded, window, deadline).await?;
    args["target_id"] = json!(target_id);
    args["tab_id"] = json!(tab_id);
    let tab_args = json!({ "target_id": target_id, "tab_id": tab_id });
    if let Some(dialog) = &recorded.dialog {
        args["dialog_id"] = json!(live_dialog(ctx, registry, dialog, &tab_args, deadline).await?);
    }
    let Some(element) = &recorded.element else {
        return Ok(None);
    };
    loop {
        let refs = call(ctx, registry, "get_browser_state", tab_args.clone()).await?["refs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // The refs' ancestors are this session's reading of the snapshot, not its JSON.
        let live: Vec<LiveRef> = refs
            .iter()
            .map(|json| LiveRef {
                json,
                ancestors: json["ref"]
                    .as_str()
                    .and_then(|r| ctx.browser.resolve(&tab_id, r).ok())
                    .map(|entry| entry.ancestors)
                    .unwrap_or_default(),
            })
            .collect();
        match find(&live, element) {
            Ok(Some(fit)) => {
                args["ref"] = json!(fit.reference);
                result.locator_match = Some(fit.rule.as_str().to_string());
                let rename = fit.heal.is_some().then(|| Rename {
                    from_role: element.role.clone(),
                    from_name: element.name.clone(),
                    to_role: fit.role,
                    to_name: fit.name,
                });
                result.heal = fit.heal;
                result.look_alikes = fit.look_alikes;
                return Ok(rename);
            }
            Err(e) => return Err(e),
            Ok(None) if Instant::now() >= deadline => {
                return Err(format!(
                    "no {} in the tab at {}; nothing pressed",
                    describe(&element.role, &element.name),
                    recorded.tab_url
                ));
            }
            Ok(None) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The id of the tab's open dialog, once one of the recorded kind and message is open.
async fn live_dialog(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &BrowserDialog,
    tab: &Value,
    deadline: Instant,
) -> Result<String, String> {
    let mut inspect = tab.clone();
    inspect["action"] = json!("inspect");
    loop {
        let open = call(ctx, registry, "browser_dialog", inspect.clone()).await?;
        if open["present"] == true {
            if open["kind"] != recorded.kind.as_str()
                || open["message"] != recorded.message.as_str()
            {
                return Err(format!(
                    "the open dialog is a {} saying {}; the recording answered a {} saying {:?}; not answered",
                    open["kind"], open["message"], recorded.kind, recorded.message
                ));
            }
            return Ok(open["dialog_id"].as_str().unwrap_or_default().to_string());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "no dialog opened (the recording answered a {} saying {:?})",
                recorded.kind, recorded.message
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// This session's target id for `window` and the id of its tab at the recorded URL.
async fn live_tab(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    recorded: &BrowserTarget,
    window: &WindowInfo,
    deadline: Instant,
) -> Result<(String, String), String> {
    let pid = window.pid.unwrap_or(0);
    let at = json!({ "pid": pid, "window_id": window.window_id });
    loop {
        let bound = call(ctx, registry, "get_browser_state", at.clone()).await;
        let tabs = bound
            .as_ref()
            .map(|b| b["tabs"].as_array().cloned().unwrap_or_default())
            .unwrap_or_default();
        let tab = tabs.iter().find(|t| t["url"] == recorded.tab_url.as_str());
        if let (Ok(bound), Some(tab)) = (&bound, tab) {
            let id = |v: &Value| v.as_str().unwrap_or_default().to_string();
            return Ok((id(&bound["target_id"]), id(&tab["tab_id"])));
        }
        if Instant::now() >= deadline {
            let why = match bound {
                Err(e) => e,
                Ok(_) => format!(
                    "its tabs are at {:?}",
                    tabs.iter()
                        .map(|t| t["url"].as_str().unwrap_or(""))
                        .collect::<Vec<_>>()
                ),
            };
            return Err(format!(
                "no tab of window {} is at {} after {} s: {why}",
                window.window_id,
                recorded.tab_url,
                READY_TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The live ref a recorded element is: the rung that found it, the heal, the live role
/// and label, and what told it apart from look-alikes.
struct Fit {
    reference: String,
    rule: LocatorRule,
    heal: Option<String>,
    role: String,
    name: String,
    look_alikes: Option<String>,
}

/// A live ref as [`find`] weighs it: its snapshot JSON and its named ancestors.
struct LiveRef<'a> {
    json: &'a Value,
    ancestors: Vec<String>,
}

impl LiveRef<'_> {
    fn role(&self) -> String {
        self.json["role"].as_str().unwrap_or_default().to_string()
    }
    fn label(&self) -> String {
        self.json["label"].as_str().unwrap_or_default().to_string()
    }
    fn brief(&self) -> String {
        format!(
            "{} {}",
            self.json["ref"].as_str().unwrap_or(""),
            describe(&self.role(), &self.label())
        )
    }
}

/// Refs as a reader lists them: `p4:1 button "Delete", p4:2 button "Delete"`.
fn briefs<'a>(refs: impl Iterator<Item = &'a LiveRef<'a>>) -> String {
    refs.map(LiveRef::brief).collect::<Vec<_>>().join(", ")
}

/// The live ref the recorded element is, with the rung that found it and the heal; None
/// when no rung finds one yet; an error when several fit that the recorded ancestors'
/// names do not tell apart, or when the one found is disabled.
fn find(refs: &[LiveRef], element: &BrowserElement) -> Result<Option<Fit>, String> {
    for rule in [
        LocatorRule::RoleName,
        LocatorRule::LooseName,
        LocatorRule::SameName,
    ] {
        let recorded = (element.role.as_str(), element.name.as_str());
        let fits: Vec<(&LiveRef, &'static str)> = refs
            .iter()
            .filter_map(|r| rung_fits(rule, recorded, (&r.role(), &r.label())).map(|why| (r, why)))
            .collect();
        if fits.is_empty() {
            continue;
        }
        // As element turns: the most recorded ancestors' names shared decides.
        let shared = |r: &LiveRef| {
            element
                .ancestors
                .iter()
                .filter(|a| r.ancestors.contains(a))
                .count()
        };
        let best = fits.iter().map(|(r, _)| shared(r)).max().unwrap_or(0);
        let left: Vec<&(&LiveRef, &str)> = fits.iter().filter(|(r, _)| shared(r) == best).collect();
        let [(r, why)] = left.as_slice() else {
            return Err(format!(
                "{} elements fit {}: {}; nothing recorded tells them apart, none pressed",
                left.len(),
                describe(&element.role, &element.name),
                briefs(left.iter().map(|(r, _)| *r))
            ));
        };
        let (live_role, live_name) = (r.role(), r.label());
        let disabled = r.json["states"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s == "disabled"));
        if disabled {
            return Err(disabled_message(&live_role, &live_name));
        }
        let heal = (rule != LocatorRule::RoleName).then(|| {
            format!(
                "{} → {} ({why})",
                describe(&element.role, &element.name),
                describe(&live_role, &live_name)
            )
        });
        let reference = r.json["ref"].as_str().unwrap_or_default().to_string();
        let look_alikes = (fits.len() > 1).then(|| {
            format!(
                "{} elements fit {}: {}; {reference} chosen by its recorded ancestors' names ({})",
                fits.len(),
                describe(&element.role, &element.name),
                briefs(fits.iter().map(|(r, _)| *r)),
                element.ancestors.join(", ")
            )
        });
        return Ok(Some(Fit {
            reference,
            rule,
            heal,
            role: live_role,
            name: live_name,
            look_alikes,
        }));
    }
    Ok(None)
}

/// A read-only browser call of this replay's session: its structured result.
async fn call(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    tool: &str,
    args: Value,
) -> Result<Value, String> {
    registry
        .call(ctx, tool, args)
        .await
        .map(|out| out.structured)
        .map_err(|e| e.to_string())
}
