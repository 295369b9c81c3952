//! `page`: a browser tab's DOM and JavaScript, through the debugging endpoint browsers
//! get when cua launches them (`crate::web::page`). `get_text` and `query_dom` only read;
//! `execute_javascript`, `click_element` and `insert_text` act (the policy checks them, a
//! recording keeps each as a turn, a replay runs it again).

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolOutput, ToolSpec, window_of};
use crate::errors::ToolError;
use crate::web::page::PageError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PageAction {
    ExecuteJavascript,
    GetText,
    QueryDom,
    ClickElement,
    InsertText,
    TypeKeystrokes,
    EnableJavascriptAppleEvents,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageArgs {
    /// execute_javascript, click_element and insert_text (act); get_text, query_dom (read); type_keystrokes is refused (type_text sends keys); enable_javascript_apple_events is macOS only.
    pub action: PageAction,
    /// Browser process ID.
    pub pid: u32,
    /// The browser window; its tab is the one read or run in.
    pub window_id: u64,
    /// JS to run (execute_javascript only); its completion value is returned, a promise awaited.
    pub javascript: Option<String>,
    /// CSS selector for querySelectorAll (query_dom only).
    pub css_selector: Option<String>,
    /// Attributes to include per match (query_dom only), e.g. ["href", "data-id"].
    pub attributes: Option<Vec<String>>,
    /// CSS selector of the element to click (click_element only): the first match.
    pub selector: Option<String>,
    /// Text to insert where the page's focus is (insert_text only).
    pub text: Option<String>,
    /// A loopback CDP port to use instead of the endpoint cua finds from pid (its browser must be pid).
    pub cdp_port: Option<u16>,
    /// Run in the one tab whose URL contains this, instead of the window's tab.
    pub target_url_contains: Option<String>,
    /// macOS only (enable_javascript_apple_events).
    pub bundle_id: Option<String>,
    /// macOS only (enable_javascript_apple_events).
    pub user_has_confirmed_enabling: Option<bool>,
}

pub struct Page;

#[async_trait]
impl ToolSpec for Page {
    type Args = PageArgs;
    const NAME: &'static str = "page";
    const DESCRIPTION: &'static str = "Browser page primitives for Chromium and Firefox that cua launched (launch_app gives them a debugging endpoint only this user can reach): execute_javascript runs JS in the window's tab and returns its value as JSON (an action: recorded and replayed); get_text returns document.body.innerText; query_dom returns tag, innerText and the requested attributes of each querySelectorAll(css_selector) match; click_element clicks the first match of selector (scrolled into view); insert_text inserts text where the page's focus is (focus the field first). Read actions never raise or focus the window. target_url_contains picks the one tab whose URL contains it instead of the window's; cdp_port names a loopback DevTools port to use (its browser must be pid). A thrown exception is an error with its message; each call is bounded to 10 s.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["page.action"],
        risk: Risk::R3,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    fn acts(args: &PageArgs) -> bool {
        matches!(
            args.action,
            PageAction::ExecuteJavascript | PageAction::ClickElement | PageAction::InsertText
        )
    }

    fn check(args: &PageArgs) -> Result<(), ToolError> {
        let (needs, allows): (&[&str], &[&str]) = match args.action {
            PageAction::ExecuteJavascript => (&["javascript"], &["javascript"]),
            PageAction::GetText => (&[], &[]),
            PageAction::QueryDom => (&["css_selector"], &["css_selector", "attributes"]),
            PageAction::ClickElement => (&["selector"], &["selector"]),
            PageAction::InsertText => (&["text"], &["text"]),
            PageAction::TypeKeystrokes => {
                return Err(ToolError::invalid(
                    "`action`: type_keystrokes is not offered: page scripts cannot send trusted key events; type_text sends real keys to the page's element (insert_text inserts text)",
                ));
            }
            PageAction::EnableJavascriptAppleEvents => {
                return Err(ToolError::invalid(
                    "`action`: enable_javascript_apple_events is macOS only and not on this platform: on Linux, browsers that launch_app starts already take execute_javascript",
                ));
            }
        };
        let given = [
            ("javascript", args.javascript.is_some()),
            ("css_selector", args.css_selector.is_some()),
            ("attributes", args.attributes.is_some()),
            ("selector", args.selector.is_some()),
            ("text", args.text.is_some()),
            ("bundle_id", args.bundle_id.is_some()),
            (
                "user_has_confirmed_enabling",
                args.user_has_confirmed_enabling.is_some(),
            ),
        ];
        let action = serde_json::to_value(args.action).unwrap_or_default();
        let action = action.as_str().unwrap_or_default();
        if let Some((field, _)) = given.iter().find(|(f, set)| *set && !allows.contains(f)) {
            return Err(ToolError::invalid(format!(
                "`{field}` does not go with action {action}"
            )));
        }
        if let Some(field) = needs
            .iter()
            .find(|f| given.iter().any(|(g, set)| g == *f && !set))
        {
            return Err(ToolError::invalid(format!(
                "`{field}` is required with action {action}"
            )));
        }
        for (field, value) in [
            ("css_selector", &args.css_selector),
            ("selector", &args.selector),
            ("target_url_contains", &args.target_url_contains),
        ] {
            if value.as_deref().is_some_and(str::is_empty) {
                return Err(ToolError::invalid(format!("`{field}` is empty")));
            }
        }
        Ok(())
    }

    async fn run(&self, ctx: &ToolContext, args: PageArgs) -> Result<ToolOutput, ToolError> {
        Self::check(&args)?;
        let platform = ctx.platform().await?;
        let window = window_of(platform.as_ref(), Some(args.pid), args.window_id).await?;
        let endpoint = match args.cdp_port {
            Some(port) => {
                let pid = args.pid;
                tokio::task::spawn_blocking(move || crate::web::page::endpoint_on_port(port, pid))
                    .await
                    .map_err(|e| ToolError::failed(format!("page: {e}")))?
                    .map_err(|e| ToolError::failed(format!("`cdp_port`: {e}")))?
            }
            None => platform.page_endpoint(args.pid).await?,
        };
        let script = match args.action {
            PageAction::ExecuteJavascript => args.javascript.clone().unwrap_or_default(),
            PageAction::GetText => crate::web::page::GET_TEXT.to_string(),
            PageAction::QueryDom => crate::web::page::query_dom_script(
                args.css_selector.as_deref().unwrap_or_default(),
                args.attributes.as_deref().unwrap_or_default(),
            ),
            PageAction::ClickElement => {
                crate::web::page::click_script(args.selector.as_deref().unwrap_or_default())
            }
            PageAction::InsertText => {
                crate::web::page::insert_text_script(args.text.as_deref().unwrap_or_default())
            }
            PageAction::TypeKeystrokes | PageAction::EnableJavascriptAppleEvents => {
                unreachable!("refused by check")
            }
        };
        let tab = match &args.target_url_contains {
            Some(part) => crate::web::page::TabChoice::UrlContains(part.clone()),
            None => crate::web::page::TabChoice::Shown(window.title.clone()),
        };
        let value = tokio::task::spawn_blocking(move || {
            crate::web::page::evaluate(&endpoint, &tab, &script)
        })
        .await
        .map_err(|e| ToolError::failed(format!("page: {e}")))?
        .map_err(|e| match e {
            PageError::Thrown(m) => ToolError::failed(format!("the script threw: {m}")),
            e => ToolError::failed(e.to_string()),
        })?;
        Ok(match args.action {
            PageAction::GetText => {
                let text = value.as_str().unwrap_or_default().to_string();
                ToolOutput::new(
                    format!(
                        "{} characters of text from {:?}",
                        text.chars().count(),
                        window.title
                    ),
                    json!({ "action": "get_text", "text": text }),
                )
            }
            PageAction::QueryDom => {
                let count = value.as_array().map(Vec::len).unwrap_or(0);
                ToolOutput::new(
                    format!(
                        "{count} element(s) match {:?} in {:?}",
                        args.css_selector.unwrap_or_default(),
                        window.title
                    ),
                    json!({ "action": "query_dom", "count": count, "elements": value }),
                )
            }
            PageAction::ClickElement => ToolOutput::new(
                format!(
                    "clicked {} matching {:?} in {:?}",
                    brief(&value),
                    args.selector.unwrap_or_default(),
                    window.title
                ),
                json!({ "action": "click_element", "element": value }),
            ),
            PageAction::InsertText => ToolOutput::new(
                format!(
                    "inserted text into {} in {:?}",
                    brief(&value["tag"]),
                    window.title
                ),
                json!({ "action": "insert_text", "element": value }),
            ),
            _ => ToolOutput::new(
                format!("ran JavaScript in {:?}: {}", window.title, brief(&value)),
                json!({ "action": "execute_javascript", "result": value }),
            ),
        })
    }
}

/// A value's JSON, cut to 200 characters for the summary.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
