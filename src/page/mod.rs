//! Browser pages through their debugging protocols, for the `page` tool: JavaScript
//! evaluated in the tab a window shows, its result as JSON.
//!
//! [`evaluate`] takes a [`PageEndpoint`] (from the platform: where a browser that cua
//! launched listens on the loopback), the window's title (which names its tab) and a
//! script. Chromium speaks the Chrome DevTools Protocol ([`cdp`]), Firefox WebDriver BiDi
//! ([`bidi`]); both are JSON messages over one WebSocket (tungstenite), opened per call
//! and closed after it, so no state outlives a call and a one-shot CLI call works as well
//! as the daemon. Nothing here raises or focuses a window.

mod bidi;
mod cdp;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

use crate::platform::{PageEndpoint, PageProtocol};

/// How long one call may take, from connecting to the result.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Why a page call failed.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// The script threw: its message.
    #[error("the script threw: {0}")]
    Thrown(String),
    /// No tab of the browser is the window's.
    #[error("{0}")]
    NoTab(String),
    /// The endpoint did not answer in time, or broke the protocol.
    #[error("{0}")]
    Protocol(String),
}

/// Evaluates `script` in the tab shown by the window titled `window_title`; its
/// completion value as JSON (`undefined` is null; a promise is awaited).
pub fn evaluate(
    endpoint: &PageEndpoint,
    window_title: &str,
    script: &str,
) -> Result<Value, PageError> {
    let deadline = Instant::now() + TIMEOUT;
    let mut socket = Socket::connect(&endpoint.url, deadline)?;
    let result = match endpoint.protocol {
        PageProtocol::Cdp => cdp::evaluate(&mut socket, window_title, script),
        PageProtocol::Bidi => bidi::evaluate(&mut socket, window_title, script),
    };
    socket.close();
    result
}

/// `document.body.innerText` as a script.
pub const GET_TEXT: &str = "document.body ? document.body.innerText : ''";

/// A script listing the elements `css_selector` matches: tag, innerText and `attributes`
/// (null where an element has none of that name). A bad selector throws its own message.
pub fn query_dom_script(css_selector: &str, attributes: &[String]) -> String {
    format!(
        "Array.from(document.querySelectorAll({selector}), e => ({{ tag: e.tagName.toLowerCase(), text: e.innerText ?? e.textContent, attributes: Object.fromEntries({names}.map(n => [n, e.getAttribute(n)])) }}))",
        selector = json!(css_selector),
        names = json!(attributes),
    )
}

/// Which of `titles` (the tabs') the window titled `window_title` shows: browsers title
/// their window "<tab title> - Chromium" or "<tab title> — Mozilla Firefox", so the longest
/// tab title the window title starts with; the only tab when there is one.
fn pick_tab(window_title: &str, titles: &[String]) -> Option<usize> {
    if titles.len() == 1 {
        return Some(0);
    }
    titles
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty() && window_title.starts_with(t.as_str()))
        .max_by_key(|(_, t)| t.len())
        .map(|(i, _)| i)
}

fn no_tab(window_title: &str, titles: &[String]) -> PageError {
    PageError::NoTab(format!(
        "no tab of this browser is shown by the window {window_title:?} (tabs: {titles:?})"
    ))
}

/// One WebSocket to a debugging endpoint, with numbered commands.
struct Socket {
    ws: WebSocket<TcpStream>,
    next_id: u64,
    deadline: Instant,
}

impl Socket {
    fn connect(url: &str, deadline: Instant) -> Result<Socket, PageError> {
        let authority = url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| PageError::Protocol(format!("not a ws:// URL: {url}")))?;
        let addr = authority
            .parse::<std::net::SocketAddr>()
            .map_err(|e| PageError::Protocol(format!("{authority}: {e}")))?;
        if !addr.ip().is_loopback() {
            return Err(PageError::Protocol(format!(
                "{addr} is not on the loopback; cua only talks to local browsers"
            )));
        }
        let stream = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| {
            PageError::Protocol(format!(
                "the browser's debugging endpoint {addr} does not answer ({e}); did the browser exit?"
            ))
        })?;
        let _ = stream.set_nodelay(true);
        let (ws, _) = tungstenite::client(url, stream)
            .map_err(|e| PageError::Protocol(format!("WebSocket handshake with {url}: {e}")))?;
        Ok(Socket {
            ws,
            next_id: 1,
            deadline,
        })
    }

    /// Sends `method` with `params` (and `extra` top-level fields, e.g. a CDP session);
    /// waits for the reply with the same id, skipping events. The reply whole.
    fn command(&mut self, method: &str, params: Value, extra: Value) -> Result<Value, PageError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let (Some(m), Some(extra)) = (message.as_object_mut(), extra.as_object()) {
            m.extend(extra.clone());
        }
        self.ws
            .send(Message::text(message.to_string()))
            .map_err(|e| PageError::Protocol(format!("{method}: {e}")))?;
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(PageError::Protocol(format!(
                    "{method}: no answer within {} s",
                    TIMEOUT.as_secs()
                )));
            }
            let _ = self.ws.get_ref().set_read_timeout(Some(left));
            let frame = self.ws.read().map_err(|e| match e {
                tungstenite::Error::Io(io)
                    if matches!(
                        io.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    PageError::Protocol(format!(
                        "{method}: no answer within {} s",
                        TIMEOUT.as_secs()
                    ))
                }
                e => PageError::Protocol(format!("{method}: {e}")),
            })?;
            let Message::Text(text) = frame else { continue };
            let reply: Value = serde_json::from_str(text.as_str())
                .map_err(|e| PageError::Protocol(format!("{method}: {e}")))?;
            if reply["id"] == id {
                return Ok(reply);
            }
        }
    }

    fn close(mut self) {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tab_is_the_one_the_window_title_starts_with() {
        let tabs = vec!["Inbox".to_string(), "Inbox (2)".to_string(), String::new()];
        assert_eq!(pick_tab("Inbox (2) - Chromium", &tabs), Some(1));
        assert_eq!(pick_tab("Inbox — Mozilla Firefox", &tabs), Some(0));
        assert_eq!(pick_tab("Other - Chromium", &tabs), None);
        assert_eq!(pick_tab("anything", &["only".to_string()]), Some(0));
    }

    #[test]
    fn query_dom_quotes_the_selector_and_attribute_names() {
        let script = query_dom_script("a[href=\"x\"]", &["data-id".into()]);
        assert!(
            script.contains(r#"querySelectorAll("a[href=\"x\"]")"#),
            "{script}"
        );
        assert!(script.contains(r#"["data-id"].map"#), "{script}");
    }

    #[test]
    fn only_loopback_endpoints_are_dialled() {
        let far = Socket::connect("ws://10.0.0.1:9222/x", Instant::now() + TIMEOUT);
        assert!(matches!(far, Err(PageError::Protocol(m)) if m.contains("loopback")));
    }
}
