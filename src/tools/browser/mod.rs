//! cua-driver's browser tools, over a Chromium tab's DevTools endpoint ([`crate::web::browser`]
//! holds the session's targets, tabs and refs): `get_browser_state` binds a browser
//! window (pid + window_id → target_id and tab ids) or reads a tab's controls as refs,
//! `browser_prepare` finds or starts a browser with an endpoint, `browser_navigate` loads a
//! URL; the input tools ([`input`]) click, type, point, answer dialogs and set files.
//! Nothing here raises or focuses a window. Firefox's pages are the `page` tool's.

mod download;
mod input;
mod prepare;

pub use download::BrowserDownload;
pub use input::{BrowserClick, BrowserDialog, BrowserPointer, BrowserSetInputFiles, BrowserType};
pub use prepare::BrowserPrepare;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ImageBlock, ToolContext, ToolOutput, ToolSpec, window_of};
use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;
use crate::platform::{PageProtocol, PlatformError};
use crate::web::browser::{self, Refusal, Snapshot, Tab};

/// Runs blocking CDP work off the async runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("browser call: {e}")))?
}

/// The tab a call acts in: bound exactly, its browser still running.
pub(crate) async fn acting_tab(
    ctx: &ToolContext,
    target_id: &str,
    tab_id: &str,
) -> Result<Tab, ToolError> {
    let tab = ctx.browser.tab(target_id, tab_id)?;
    if !tab.target.exact {
        return Err(Refusal::WrongTarget.because(format!(
            "{target_id} is bound heuristically (its window's title names no single tab): acting in it is refused; bring the tab to the front of its window and bind again"
        )));
    }
    if !ctx.platform().await?.process_running(tab.target.pid).await {
        return Err(Refusal::BindingStale.because(format!(
            "{target_id}'s browser (pid {}) is no longer running",
            tab.target.pid
        )));
    }
    Ok(tab)
}

/// The tab's dialog watch, started on first use ([`browser::DialogWatch`]).
pub(crate) async fn watch(
    ctx: &ToolContext,
    tab: &Tab,
) -> Result<std::sync::Arc<browser::DialogWatch>, ToolError> {
    if let Some(watch) = ctx.browser.watch_of(&tab.tab_id) {
        return Ok(watch);
    }
    let (endpoint, cdp_id) = (tab.target.endpoint.clone(), tab.cdp_id.clone());
    let watch = blocking(move || {
        browser::DialogWatch::start(&endpoint, &cdp_id).map_err(browser::page_failed)
    })
    .await?;
    let watch = std::sync::Arc::new(watch);
    ctx.browser.keep_watch(&tab.tab_id, watch.clone());
    Ok(watch)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotFormat {
    DomRefsV1,
    SemanticV2,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetBrowserStateArgs {
    /// Browser process id (bind mode, with window_id).
    pub pid: Option<u32>,
    /// The browser window to bind (bind mode, with pid).
    pub window_id: Option<u64>,
    /// A target id get_browser_state minted in this session (snapshot mode, with tab_id).
    pub target_id: Option<String>,
    /// A tab id of that target (snapshot mode).
    pub tab_id: Option<String>,
    /// dom_refs_v1 (the default and only format cua offers; semantic_v2 is refused).
    pub snapshot_format: Option<SnapshotFormat>,
    /// Also capture the tab's viewport as PNG, through the browser (the window is not raised).
    #[schemars(extend("default" = false))]
    pub include_screenshot: Option<bool>,
    /// semantic_v2 only (refused).
    pub query: Option<String>,
    /// semantic_v2 only (refused).
    pub scope_ref: Option<String>,
    /// semantic_v2 only (refused).
    pub continuation: Option<String>,
}

pub struct GetBrowserState;

#[async_trait]
impl ToolSpec for GetBrowserState {
    type Args = GetBrowserStateArgs;
    const NAME: &'static str = "get_browser_state";
    const DESCRIPTION: &'static str = "Read a Chromium browser through its DevTools endpoint, without raising or focusing it. Bind mode (pid + window_id): binds that window as a target of this session, with a target_id and a tab_id per tab of the window; the binding is exact when the window's title names one tab (only exact targets take browser_* actions). Snapshot mode (target_id + tab_id): the tab's controls (its accessibility tree's buttons, links, fields, … and whatever takes the focus) as refs p<snapshot>:<index>, with role, label, value and states; a newer snapshot or a navigation retires older refs. include_screenshot adds the tab's viewport as PNG. A browser without an endpoint is refused as browser_requires_setup (see browser_prepare); Firefox is refused as browser_route_unavailable (use page).";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::idempotent(Risk::R2, &["browser.state"]);

    fn check(a: &GetBrowserStateArgs) -> Result<(), ToolError> {
        if a.snapshot_format == Some(SnapshotFormat::SemanticV2) {
            return Err(ToolError::invalid(
                "`snapshot_format`: semantic_v2 is not offered by cua; dom_refs_v1 is",
            ));
        }
        for (field, set) in [
            ("query", a.query.is_some()),
            ("scope_ref", a.scope_ref.is_some()),
            ("continuation", a.continuation.is_some()),
        ] {
            if set {
                return Err(ToolError::invalid(format!(
                    "`{field}` belongs to snapshot_format semantic_v2, which cua does not offer"
                )));
            }
        }
        match (&a.pid, &a.window_id, &a.target_id, &a.tab_id) {
            (Some(_), Some(_), None, None) | (None, None, Some(_), Some(_)) => Ok(()),
            (Some(_), None, None, None) => Err(ToolError::invalid(
                "`window_id` is required with `pid` (bind mode)",
            )),
            (None, None, Some(_), None) => Err(Refusal::TabRequired.because(
                "`tab_id` is required with `target_id` (snapshot mode): bind mode listed the tab ids",
            )),
            _ => Err(ToolError::invalid(
                "give pid + window_id (bind a window) or target_id + tab_id (read a tab), not a mix",
            )),
        }
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        a: GetBrowserStateArgs,
    ) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        match (a.pid, a.window_id, a.target_id, a.tab_id) {
            (Some(pid), Some(window_id), _, _) => bind(ctx, pid, window_id).await,
            (_, _, Some(target_id), Some(tab_id)) => {
                snapshot(
                    ctx,
                    &target_id,
                    &tab_id,
                    a.include_screenshot.unwrap_or(false),
                )
                .await
            }
            _ => unreachable!("refused by check"),
        }
    }
}

async fn bind(ctx: &ToolContext, pid: u32, window_id: u64) -> Result<ToolOutput, ToolError> {
    let platform = ctx.platform().await?;
    let window = window_of(platform.as_ref(), Some(pid), window_id).await?;
    let endpoint = platform.page_endpoint(pid).await.map_err(|e| match e {
        PlatformError::Unsupported(m) => Refusal::RequiresSetup.because(format!(
            "{m} (browser_prepare with allow_launch starts one that has an endpoint)"
        )),
        other => Refusal::RouteUnavailable.because(other.to_string()),
    })?;
    if endpoint.protocol != PageProtocol::Cdp {
        return Err(browser::firefox_refused(pid));
    }
    let title = window.title.clone();
    let reach = endpoint.clone();
    let (tabs, exact) = blocking(move || {
        let mut cdp = crate::web::page::CdpConnection::open(&reach, browser::BUDGET)
            .map_err(browser::page_failed)?;
        let all = browser::page_tabs(&mut cdp)?;
        let titles: Vec<String> = all.iter().map(|t| t.1.clone()).collect();
        let shown = crate::web::page::pick_tab(&title, &titles);
        // The window's tabs: those in the same browser window as the tab its title names.
        let tabs = match shown.and_then(|i| browser::cdp_window(&mut cdp, &all[i].0)) {
            Some(window) => all
                .into_iter()
                .enumerate()
                .filter(|(i, t)| {
                    Some(*i) == shown || browser::cdp_window(&mut cdp, &t.0) == Some(window)
                })
                .map(|(i, t)| (t, Some(i) == shown))
                .collect(),
            None => all.into_iter().map(|t| (t, false)).collect::<Vec<_>>(),
        };
        cdp.close();
        Ok((tabs, shown.is_some()))
    })
    .await?;
    let transport = browser::transport(&endpoint);
    let cdp_ids: Vec<String> = tabs.iter().map(|(t, _)| t.0.clone()).collect();
    let (target_id, target) = ctx.browser.bind(pid, window_id, endpoint, exact, &cdp_ids);
    let listed: Vec<Value> = tabs
        .iter()
        .zip(&target.tabs)
        .map(|(((_, title, url), active), (tab_id, _))| {
            json!({ "tab_id": tab_id, "title": title, "url": url, "active": active })
        })
        .collect();
    let quality = if exact { "exact" } else { "heuristic" };
    Ok(ToolOutput::new(
        format!(
            "bound {target_id} ({quality}) to {:?} with {} tab(s): {}",
            window.title,
            listed.len(),
            target
                .tabs
                .iter()
                .zip(&tabs)
                .map(|((id, _), ((_, title, _), _))| format!("{id} {title:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        json!({
            "status": "ok",
            "mode": "bind",
            "target_id": target_id,
            "binding_quality": quality,
            "binding_route": "process_endpoint",
            "endpoint_transport": transport,
            "mutation_allowed": exact,
            "native_title": window.title,
            "pid": pid,
            "window_id": window_id,
            "tabs": listed,
        }),
    ))
}

async fn snapshot(
    ctx: &ToolContext,
    target_id: &str,
    tab_id: &str,
    include_screenshot: bool,
) -> Result<ToolOutput, ToolError> {
    let tab = ctx.browser.tab(target_id, tab_id)?;
    // Watched from the first look, so a dialog the page opens later is seen.
    watch(ctx, &tab).await?;
    let id = ctx.browser.next_snapshot();
    let (snap, png, viewport) = blocking(move || {
        let (mut cdp, session) = browser::attach(&tab)?;
        let snap = Snapshot::take(&mut cdp, &session, id)?;
        let mut png = None;
        if include_screenshot {
            let shot = cdp
                .call_in(
                    &session,
                    "Page.captureScreenshot",
                    json!({ "format": "png" }),
                )
                .map_err(browser::page_failed)?;
            use base64::Engine;
            let data = base64::engine::general_purpose::STANDARD
                .decode(shot["data"].as_str().unwrap_or_default())
                .map_err(|e| ToolError::failed(format!("the tab's screenshot: {e}")))?;
            png = Some(data);
        }
        let viewport = cdp
            .call_in(&session, "Page.getLayoutMetrics", json!({}))
            .map(|m| m["cssLayoutViewport"].clone())
            .unwrap_or(Value::Null);
        cdp.close();
        Ok((snap, png, viewport))
    })
    .await?;
    let lines: Vec<String> = snap.refs.iter().map(|r| r.line()).collect();
    let refs: Vec<Value> = snap.refs.iter().map(|r| r.to_json()).collect();
    let mut structured = json!({
        "status": "ok",
        "mode": "snapshot",
        "target_id": target_id,
        "tab_id": tab_id,
        "snapshot_id": format!("p{}", snap.id),
        "format": "dom_refs_v1",
        "url": snap.url,
        "refs": refs,
        "truncated": false,
        "viewport": {
            "width": viewport["clientWidth"],
            "height": viewport["clientHeight"],
            "coordinate_space": "viewport_css_px",
        },
    });
    let summary = format!(
        "snapshot p{} of {}: {} interactive element(s)\n{}",
        snap.id,
        snap.url,
        snap.refs.len(),
        lines.join("\n")
    );
    ctx.browser.keep_snapshot(tab_id, snap);
    let mut out = ToolOutput::new(summary, Value::Null);
    if let Some(data) = png {
        structured["screenshot"] = json!({
            "source": "cdp_tab",
            "scope": "viewport",
            "mime_type": "image/png",
            "tab_activation": "not_requested",
            "window_foregrounding": "not_requested",
        });
        out.image = Some(ImageBlock {
            mime: "image/png",
            data,
        });
    }
    out.structured = structured;
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserNavigateArgs {
    /// A target id from get_browser_state (this session's).
    pub target_id: String,
    /// A tab id of that target.
    pub tab_id: String,
    /// Where to go: an http:, https: or about: URL.
    pub url: String,
}

pub struct BrowserNavigate;

#[async_trait]
impl ToolSpec for BrowserNavigate {
    type Args = BrowserNavigateArgs;
    const NAME: &'static str = "browser_navigate";
    const DESCRIPTION: &'static str = "Load an http:, https: or about: URL in a tab of an exactly bound browser target and wait for its load event (at most 10 s), without raising the window. The tab's refs are retired: take a new snapshot.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["browser.navigate"],
        risk: Risk::R2,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    fn check(a: &BrowserNavigateArgs) -> Result<(), ToolError> {
        let scheme = a.url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("http" | "https" | "about") => Ok(()),
            _ => Err(ToolError::invalid(format!(
                "`url`: {:?} is not an http:, https: or about: URL",
                a.url
            ))),
        }
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        a: BrowserNavigateArgs,
    ) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let tab = acting_tab(ctx, &a.target_id, &a.tab_id).await?;
        ctx.browser.forget_snapshot(&a.tab_id);
        let url = a.url.clone();
        let (href, title) = blocking(move || {
            let (mut cdp, session) = browser::attach(&tab)?;
            browser::act::navigate(&mut cdp, &session, &url)?;
            let at = browser::location(&mut cdp, &session);
            cdp.close();
            Ok(at)
        })
        .await?;
        Ok(ToolOutput::new(
            format!(
                "{} now shows {href} ({title:?}); its refs are retired",
                a.tab_id
            ),
            json!({
                "status": "ok",
                "effect": "confirmed",
                "route": "trusted_input",
                "delivery": { "mode": "background" },
                "evidence": [{ "kind": "window_change" }],
                "target_id": a.target_id,
                "tab_id": a.tab_id,
                "url": href,
                "title": title,
            }),
        ))
    }
}
