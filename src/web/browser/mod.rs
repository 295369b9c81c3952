//! cua-driver's browser tools' state and their work in a Chromium tab: the browser
//! targets a session bound (a browser window: its pid, window id and CDP endpoint), their
//! tabs, and the element refs of each tab's latest snapshot.
//!
//! The ids handed out (`target-N`, `tab-N`, `p<snapshot>:<index>`) mean something only in
//! the session that minted them ([`Bindings`] lives in its tool context), never a CDP id.
//! A ref names a DOM node by its backend node id, which outlives page scripts' changes but
//! not a navigation; a newer snapshot of the tab retires the older refs. Every call opens
//! its own connection ([`crate::web::page::CdpConnection`]), so nothing outlives a call but ids.
//!
//! What cannot be proven is refused with cua-driver's codes ([`Refusal`]): a tab the
//! window's title does not single out is bound `heuristic` and never acted in.

pub mod act;
mod dialogs;
pub mod download;
pub mod record;
mod snapshot;

pub use act::{Dialog, PointerAction, Typing};
pub use dialogs::DialogWatch;
pub use snapshot::{RefEntry, Snapshot};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::errors::ToolError;
use crate::platform::PageEndpoint;
use crate::web::page::{CdpConnection, PageError};

/// How long one browser call may take, from connecting to its last reply.
pub const BUDGET: Duration = Duration::from_secs(10);

/// cua-driver's refusal codes for browser calls (the ones cua can meet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not a browser whose pages speak CDP (not a browser, or Firefox).
    RouteUnavailable,
    /// A Chromium with no endpoint cua can reach: browser_prepare says how to get one.
    RequiresSetup,
    /// The target id is unknown in this session, or its browser is gone.
    BindingStale,
    /// A target id came without the tab id a call needs.
    TabRequired,
    /// The binding is heuristic (the window's tab is not singled out): no acting in it.
    WrongTarget,
    /// The tab id is unknown to the target, or its tab closed.
    TabNotFound,
    /// The ref is malformed, of an older snapshot, or its node left the page.
    RefStale,
    /// The ref's element is covered where a trusted click would land.
    ActionUnavailable,
}

impl Refusal {
    pub fn code(self) -> &'static str {
        match self {
            Refusal::RouteUnavailable => "browser_route_unavailable",
            Refusal::RequiresSetup => "browser_requires_setup",
            Refusal::BindingStale => "browser_binding_stale",
            Refusal::TabRequired => "browser_tab_required",
            Refusal::WrongTarget => "browser_wrong_target_refused",
            Refusal::TabNotFound => "browser_tab_not_found",
            Refusal::RefStale => "browser_ref_stale",
            Refusal::ActionUnavailable => "browser_action_unavailable",
        }
    }

    /// The refusal as a tool error (its structured result carries `code`).
    pub fn because(self, message: impl Into<String>) -> ToolError {
        ToolError::Refusal {
            code: self.code().to_string(),
            message: message.into(),
            details: json!({}),
        }
    }
}

/// How the tools reach `endpoint`, as results name it.
pub fn transport(endpoint: &PageEndpoint) -> &'static str {
    if endpoint.url.starts_with("unix:") {
        "relay_pipe"
    } else {
        "loopback_websocket"
    }
}

/// The refusal of a Firefox: these tools speak CDP.
pub fn firefox_refused(pid: u32) -> ToolError {
    Refusal::RouteUnavailable.because(format!(
        "pid {pid} is Firefox: the browser tools speak the Chrome DevTools Protocol; Firefox's pages are read and driven through the page tool"
    ))
}

/// A page call's failure as a tool error.
pub fn page_failed(e: PageError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// A browser window a session bound.
#[derive(Debug, Clone)]
pub struct Target {
    pub pid: u32,
    pub window_id: u64,
    pub endpoint: PageEndpoint,
    /// Whether the window's title singled out its tab (acting is allowed only then).
    pub exact: bool,
    /// tab id → CDP target id.
    pub tabs: Vec<(String, String)>,
}

/// The ids one session minted, and each tab's latest snapshot.
#[derive(Default)]
pub struct Bindings {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    minted: u64,
    targets: HashMap<String, Target>,
    /// Latest snapshot per tab id.
    snapshots: HashMap<String, Snapshot>,
    /// The dialog watch of each tab used so far, by tab id.
    watches: HashMap<String, Arc<DialogWatch>>,
}

impl State {
    fn mint(&mut self, kind: &str) -> String {
        self.minted += 1;
        format!("{kind}-{}", self.minted)
    }
}

/// A tab of a target, as a tool call names it, resolved.
#[derive(Debug, Clone)]
pub struct Tab {
    pub target: Target,
    pub tab_id: String,
    pub cdp_id: String,
}

impl Bindings {
    /// Binds window `window_id` of browser `pid`: the same target id as before for the
    /// same window, tab ids kept for tabs seen before. `tabs` are the CDP target ids of
    /// the window's tabs, `exact` whether its title singled one out.
    pub fn bind(
        &self,
        pid: u32,
        window_id: u64,
        endpoint: PageEndpoint,
        exact: bool,
        cdp_tabs: &[String],
    ) -> (String, Target) {
        let mut state = self.state.lock().unwrap();
        let known = state
            .targets
            .iter()
            .find(|(_, t)| t.pid == pid && t.window_id == window_id)
            .map(|(id, t)| (id.clone(), t.tabs.clone()));
        let (target_id, old_tabs) = match known {
            Some(found) => found,
            None => (state.mint("target"), Vec::new()),
        };
        let tabs = cdp_tabs
            .iter()
            .map(|cdp| {
                let id = old_tabs
                    .iter()
                    .find(|(_, c)| c == cdp)
                    .map(|(id, _)| id.clone())
                    .unwrap_or_else(|| state.mint("tab"));
                (id, cdp.clone())
            })
            .collect();
        let target = Target {
            pid,
            window_id,
            endpoint,
            exact,
            tabs,
        };
        state.targets.insert(target_id.clone(), target.clone());
        (target_id, target)
    }

    /// The tab `tab_id` of target `target_id`, or the refusal naming which is unknown.
    pub fn tab(&self, target_id: &str, tab_id: &str) -> Result<Tab, ToolError> {
        let state = self.state.lock().unwrap();
        let target = state.targets.get(target_id).ok_or_else(|| {
            Refusal::BindingStale.because(format!(
                "target_id {target_id:?} is not one this session bound: call get_browser_state with pid and window_id first"
            ))
        })?;
        let cdp_id = target
            .tabs
            .iter()
            .find(|(id, _)| id == tab_id)
            .map(|(_, cdp)| cdp.clone())
            .ok_or_else(|| {
                Refusal::TabNotFound.because(format!(
                    "tab_id {tab_id:?} is not a tab of {target_id}; its tabs: {:?}",
                    target.tabs.iter().map(|(id, _)| id).collect::<Vec<_>>()
                ))
            })?;
        Ok(Tab {
            target: target.clone(),
            tab_id: tab_id.to_string(),
            cdp_id,
        })
    }

    /// A new snapshot id.
    pub fn next_snapshot(&self) -> u64 {
        let mut state = self.state.lock().unwrap();
        state.minted += 1;
        state.minted
    }

    /// Keeps `snapshot` as its tab's latest, retiring the refs of the one before.
    pub fn keep_snapshot(&self, tab_id: &str, snapshot: Snapshot) {
        let mut state = self.state.lock().unwrap();
        state.snapshots.insert(tab_id.to_string(), snapshot);
    }

    /// Retires the tab's refs (it navigated).
    pub fn forget_snapshot(&self, tab_id: &str) {
        self.state.lock().unwrap().snapshots.remove(tab_id);
    }

    /// The tab's running dialog watch, if it has one.
    pub fn watch_of(&self, tab_id: &str) -> Option<Arc<DialogWatch>> {
        let state = self.state.lock().unwrap();
        state.watches.get(tab_id).filter(|w| w.alive()).cloned()
    }

    /// Keeps `watch` as the tab's.
    pub fn keep_watch(&self, tab_id: &str, watch: Arc<DialogWatch>) {
        let mut state = self.state.lock().unwrap();
        state.watches.insert(tab_id.to_string(), watch);
    }

    /// The node `reference` names in the tab's latest snapshot.
    pub fn resolve(&self, tab_id: &str, reference: &str) -> Result<RefEntry, ToolError> {
        let state = self.state.lock().unwrap();
        let Some(snapshot) = state.snapshots.get(tab_id) else {
            return Err(Refusal::RefStale.because(format!(
                "ref {reference:?}: {tab_id} has no live snapshot (none taken, or the tab navigated): call get_browser_state with target_id and tab_id"
            )));
        };
        snapshot.resolve(reference)
    }
}

/// Opens a connection to `target`'s browser and attaches to its tab `cdp_id`: a tab that
/// closed is refused as such.
pub fn attach(tab: &Tab) -> Result<(CdpConnection, String), ToolError> {
    let mut cdp = CdpConnection::open(&tab.target.endpoint, BUDGET).map_err(|e| {
        Refusal::BindingStale.because(format!(
            "the browser of this target does not answer ({e}); bind its window again"
        ))
    })?;
    let session = cdp
        .attach(&tab.cdp_id)
        .map_err(|e| Refusal::TabNotFound.because(format!("{} is gone ({e})", tab.tab_id)))?;
    Ok((cdp, session))
}

/// The page tabs of a browser as (CDP target id, title, url), in the browser's order.
pub fn page_tabs(cdp: &mut CdpConnection) -> Result<Vec<(String, String, String)>, ToolError> {
    let targets = cdp
        .call("Target.getTargets", json!({}))
        .map_err(page_failed)?;
    Ok(targets["targetInfos"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter(|t| t["type"] == "page")
                .map(|t| {
                    let s = |k: &str| t[k].as_str().unwrap_or_default().to_string();
                    (s("targetId"), s("title"), s("url"))
                })
                .collect()
        })
        .unwrap_or_default())
}

/// The CDP window id (Browser.getWindowForTarget) of tab `cdp_id`.
pub fn cdp_window(cdp: &mut CdpConnection, cdp_id: &str) -> Option<i64> {
    cdp.call("Browser.getWindowForTarget", json!({ "targetId": cdp_id }))
        .ok()
        .and_then(|r| r["windowId"].as_i64())
}

/// `location.href` and `document.title` of an attached tab.
pub fn location(cdp: &mut CdpConnection, session: &str) -> (String, String) {
    let value = cdp
        .call_in(
            session,
            "Runtime.evaluate",
            json!({ "expression": "[location.href, document.title]", "returnByValue": true }),
        )
        .ok()
        .map(|r| r["result"]["value"].clone())
        .unwrap_or(Value::Null);
    let s = |i: usize| value[i].as_str().unwrap_or_default().to_string();
    (s(0), s(1))
}
