//! What a browser tool's turn keeps so that a replay can bind it again: the ids it was
//! called with (`target_id`, `tab_id`, `ref`) are its session's, so the recorder keeps the
//! browser window, the tab's URL and the ref's role, label and named ancestors instead.

use serde_json::Value;

use super::{Bindings, Tab, page_tabs};
use crate::trajectory::{BrowserDialog, BrowserElement, BrowserTarget};
use crate::web::page::CdpConnection;

/// The tab a call with a `target_id` and `tab_id` this session bound names, and what the
/// call names there (its `ref`'s element, the dialog its `dialog_id` answers), its
/// `tab_url` left to fill; None for any other call (it fails on its own, or names no tab).
/// Reads only this session's bindings.
pub fn named(bindings: &Bindings, args: &Value) -> Option<(Tab, BrowserTarget)> {
    let arg = |k: &str| args.get(k).and_then(Value::as_str);
    let tab = bindings.tab(arg("target_id")?, arg("tab_id")?).ok()?;
    let element = arg("ref")
        .and_then(|r| bindings.resolve(&tab.tab_id, r).ok())
        .map(|entry| BrowserElement {
            role: entry.role,
            name: entry.name,
            ancestors: entry.ancestors,
        });
    let dialog = arg("dialog_id")
        .and_then(|_| bindings.watch_of(&tab.tab_id)?.open())
        .map(|d| BrowserDialog {
            kind: d["type"].as_str().unwrap_or_default().to_string(),
            message: d["message"].as_str().unwrap_or_default().to_string(),
        });
    let target = BrowserTarget {
        tab_url: String::new(),
        element,
        dialog,
    };
    Some((tab, target))
}

/// The tab's URL now, asked of its browser (blocking, bounded by [`super::BUDGET`]).
pub fn tab_url(tab: &Tab) -> Option<String> {
    let mut cdp = CdpConnection::open(&tab.target.endpoint, super::BUDGET).ok()?;
    page_tabs(&mut cdp)
        .ok()?
        .into_iter()
        .find(|(cdp_id, _, _)| *cdp_id == tab.cdp_id)
        .map(|(_, _, url)| url)
}
