//! Browser pages through their debugging protocols, for the `page` tool: JavaScript
//! evaluated in the tab a window shows, its result as JSON.
//!
//! [`evaluate`] takes a [`PageEndpoint`] (from the platform: where a browser that cua
//! launched listens), the window's title (which names its tab) and a script. Chromium
//! speaks the Chrome DevTools Protocol ([`cdp`]), Firefox WebDriver BiDi ([`bidi`]). A
//! browser launch_app started is reached through its page relay ([`crate::web::relay`], a Unix socket
//! only this user can open), others on a loopback WebSocket (tungstenite). Both are JSON
//! messages, on a connection opened per call and closed after it, so no state outlives a
//! call and a one-shot CLI call works as well as the daemon. Nothing here raises or
//! focuses a window.

mod bidi;
mod cdp;

pub use cdp::{Connection as CdpConnection, thrown};

use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
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

/// Which tab of a browser a call runs in.
#[derive(Debug, Clone)]
pub enum TabChoice {
    /// The tab the window with this title shows.
    Shown(String),
    /// The one tab whose URL contains this (refused when none or several do).
    UrlContains(String),
}

impl TabChoice {
    /// The index of the chosen tab among tabs with these titles and URLs.
    fn pick(&self, titles: &[String], urls: &[String]) -> Result<usize, PageError> {
        match self {
            TabChoice::Shown(window_title) => {
                pick_tab(window_title, titles).ok_or_else(|| no_tab(window_title, titles))
            }
            TabChoice::UrlContains(part) => {
                let matching: Vec<usize> = (0..urls.len())
                    .filter(|i| urls[*i].contains(part.as_str()))
                    .collect();
                match matching[..] {
                    [one] => Ok(one),
                    _ => Err(PageError::NoTab(format!(
                        "{} tabs have a URL containing {part:?} (one must; tabs: {urls:?})",
                        matching.len()
                    ))),
                }
            }
        }
    }
}

/// Evaluates `script` in the chosen tab; its completion value as JSON (`undefined` is
/// null; a promise is awaited).
pub fn evaluate(
    endpoint: &PageEndpoint,
    tab: &TabChoice,
    script: &str,
) -> Result<Value, PageError> {
    let deadline = Instant::now() + TIMEOUT;
    let mut socket = Socket::connect(&endpoint.url, deadline)?;
    let result = match endpoint.protocol {
        PageProtocol::Cdp => cdp::evaluate(&mut socket, tab, script),
        PageProtocol::Bidi => bidi::evaluate(&mut socket, tab, script),
    };
    socket.close();
    result
}

/// The CDP endpoint a Chromium serves on loopback `port` (its `/json/version`), refused
/// unless that browser is process `pid`: a port names no owner, so it is asked.
pub fn endpoint_on_port(port: u16, pid: u32) -> Result<PageEndpoint, PageError> {
    use std::io::{Read, Write};
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let unreachable = |e: std::io::Error| {
        PageError::Protocol(format!("nothing answers on 127.0.0.1:{port} ({e})"))
    };
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(unreachable)?;
    let _ = stream.set_read_timeout(Some(TIMEOUT));
    // HTTP/1.1 (Chromium gives HTTP/1.0 no answer) and it keeps the connection open: the
    // body is read to its Content-Length.
    stream
        .write_all(
            format!(
                "GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .map_err(unreachable)?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    let body = loop {
        let n = stream.read(&mut chunk).map_err(unreachable)?;
        reply.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&reply).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if body.len() >= length || n == 0 {
                break body.to_string();
            }
        } else if n == 0 {
            break String::new();
        }
    };
    let version: Value = serde_json::from_str(&body).map_err(|_| {
        PageError::Protocol(format!(
            "127.0.0.1:{port} is not a DevTools endpoint (no /json/version)"
        ))
    })?;
    // The browser's socket path, dialled on the port asked (not a host the reply names).
    let path = version["webSocketDebuggerUrl"]
        .as_str()
        .and_then(|u| u.strip_prefix("ws://"))
        .and_then(|rest| rest.find('/').map(|i| rest[i..].to_string()))
        .ok_or_else(|| PageError::Protocol(format!("127.0.0.1:{port} names no WebSocket")))?;
    let endpoint = PageEndpoint {
        protocol: PageProtocol::Cdp,
        url: format!("ws://127.0.0.1:{port}{path}"),
    };
    let mut socket = Socket::connect(&endpoint.url, Instant::now() + TIMEOUT)?;
    let info = socket.command("SystemInfo.getProcessInfo", json!({}), json!({}));
    socket.close();
    let owner = info?["result"]["processInfo"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["type"] == "browser"))
        .and_then(|p| p["id"].as_u64());
    match owner {
        Some(id) if id == u64::from(pid) => Ok(endpoint),
        Some(id) => Err(PageError::Protocol(format!(
            "the browser on port {port} is pid {id}, not {pid}"
        ))),
        None => Err(PageError::Protocol(format!(
            "the browser on port {port} does not say its process id"
        ))),
    }
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

/// A script clicking the first element `selector` matches, scrolled into view first; it
/// throws when nothing matches, and returns the element's tag and text.
pub fn click_script(selector: &str) -> String {
    format!(
        "(() => {{ const e = document.querySelector({sel}); if (!e) throw new Error('no element matches ' + {sel}); e.scrollIntoView({{ block: 'center' }}); e.click(); return {{ tag: e.tagName.toLowerCase(), text: (e.innerText ?? e.textContent ?? '').slice(0, 80) }}; }})()",
        sel = json!(selector),
    )
}

/// A script inserting `text` where the page's focus is, as typing would (an `input` event
/// follows): the editing command where the element takes it, else the field's own range.
/// It throws when nothing editable has the focus, and returns the element's tag and value.
pub fn insert_text_script(text: &str) -> String {
    format!(
        "(() => {{ const a = document.activeElement; const t = {text}; if (!a || a === document.body) throw new Error('nothing on the page has the focus: click or focus the field first'); if (!document.execCommand('insertText', false, t)) {{ if (!('value' in a)) throw new Error('the focused ' + a.tagName.toLowerCase() + ' takes no text'); const s = a.selectionStart ?? a.value.length; a.setRangeText(t, s, a.selectionEnd ?? s, 'end'); a.dispatchEvent(new InputEvent('input', {{ bubbles: true, inputType: 'insertText', data: t }})); }} return {{ tag: a.tagName.toLowerCase(), value: a.value ?? a.textContent }}; }})()",
        text = json!(text),
    )
}

/// Which of `titles` (the tabs') the window titled `window_title` shows: browsers title
/// their window "<tab title> - Chromium" or "<tab title> — Mozilla Firefox", so the longest
/// tab title the window title starts with; the only tab when there is one.
pub fn pick_tab(window_title: &str, titles: &[String]) -> Option<usize> {
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

/// How a call reaches the browser: a page relay's Unix socket ([`crate::web::relay`]), which carries
/// the protocol's JSON messages, each ended by a NUL; or a WebSocket on the loopback (a
/// browser started with a debugging flag of the caller's own).
enum Link {
    // Boxed: a WebSocket is some 250 bytes, a relay's stream 50.
    WebSocket(Box<WebSocket<TcpStream>>),
    Relay(std::io::BufReader<UnixStream>),
}

/// One connection to a debugging endpoint, with numbered commands.
struct Socket {
    link: Link,
    next_id: u64,
    deadline: Instant,
    /// Events that came while a command waited for its reply, oldest first, for
    /// [`Socket::event`] (the browser tools wait for loads and dialogs).
    events: std::collections::VecDeque<Value>,
    /// A relay message's bytes read before a wait ended.
    partial: Vec<u8>,
}

/// How many unclaimed events a connection keeps (older ones are dropped).
const KEPT_EVENTS: usize = 256;

impl Socket {
    fn connect(url: &str, deadline: Instant) -> Result<Socket, PageError> {
        let link = match url.strip_prefix("unix:") {
            Some(path) => Link::Relay(std::io::BufReader::new(connect_relay(Path::new(path))?)),
            None => Link::WebSocket(Box::new(connect_websocket(url)?)),
        };
        Ok(Socket {
            link,
            next_id: 1,
            deadline,
            events: Default::default(),
            partial: Vec::new(),
        })
    }

    /// Sends `method` with `params` (and `extra` top-level fields, e.g. a CDP session);
    /// waits for the reply with the same id, skipping events. The reply whole.
    fn command(&mut self, method: &str, params: Value, extra: Value) -> Result<Value, PageError> {
        match self.command_unless(method, params, extra, |_| false)? {
            Ok(reply) => Ok(reply),
            Err(_) => unreachable!("nothing interrupts"),
        }
    }

    /// Like [`Socket::command`], but gives up waiting for the reply when an event
    /// `interrupts` accepts comes first (a page dialog blocks the page's reply until it
    /// closes): Err(event) then.
    fn command_unless(
        &mut self,
        method: &str,
        params: Value,
        extra: Value,
        interrupts: impl Fn(&Value) -> bool,
    ) -> Result<Result<Value, Value>, PageError> {
        if let Some(i) = self.events.iter().position(&interrupts) {
            return Ok(Err(self.events.remove(i).unwrap_or_default()));
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let (Some(m), Some(extra)) = (message.as_object_mut(), extra.as_object()) {
            m.extend(extra.clone());
        }
        self.send(message.to_string())
            .map_err(|e| PageError::Protocol(format!("{method}: {e}")))?;
        let answer = self.event(|m| m["id"] == id || interrupts(m), self.deadline)?;
        match answer {
            None => Err(PageError::Protocol(format!(
                "{method}: no answer within {} s",
                TIMEOUT.as_secs()
            ))),
            Some(m) if m["id"] == id => Ok(Ok(m)),
            Some(event) => Ok(Err(event)),
        }
    }

    fn keep_event(&mut self, message: Value) {
        if message.get("method").is_some() {
            if self.events.len() == KEPT_EVENTS {
                self.events.pop_front();
            }
            self.events.push_back(message);
        }
    }

    /// The first event `wanted` accepts, kept or still to come, waiting until `until`
    /// at the latest (None then).
    fn event(
        &mut self,
        wanted: impl Fn(&Value) -> bool,
        until: Instant,
    ) -> Result<Option<Value>, PageError> {
        if let Some(i) = self.events.iter().position(&wanted) {
            return Ok(self.events.remove(i));
        }
        loop {
            let left = until
                .min(self.deadline)
                .saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let text = match self.receive(left) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e) if is_timeout(&e) => return Ok(None),
                Err(e) => return Err(PageError::Protocol(e.to_string())),
            };
            let message: Value =
                serde_json::from_str(&text).map_err(|e| PageError::Protocol(e.to_string()))?;
            if wanted(&message) {
                return Ok(Some(message));
            }
            self.keep_event(message);
        }
    }

    fn send(&mut self, text: String) -> std::io::Result<()> {
        match &mut self.link {
            Link::WebSocket(ws) => ws.send(Message::text(text)).map_err(std::io::Error::other),
            Link::Relay(stream) => crate::web::relay::write_message(stream.get_mut(), &text),
        }
    }

    /// The next text message, waiting at most `left`; None for a frame that is no text.
    fn receive(&mut self, left: Duration) -> std::io::Result<Option<String>> {
        match &mut self.link {
            Link::WebSocket(ws) => {
                let _ = ws.get_ref().set_read_timeout(Some(left));
                match ws.read() {
                    Ok(Message::Text(text)) => Ok(Some(text.as_str().to_string())),
                    Ok(_) => Ok(None),
                    Err(tungstenite::Error::Io(io)) => Err(io),
                    Err(e) => Err(std::io::Error::other(e)),
                }
            }
            Link::Relay(stream) => {
                use std::io::BufRead;
                let _ = stream.get_ref().set_read_timeout(Some(left));
                // A wait that times out mid-message keeps the bytes read so far: the
                // message goes on where the next wait starts.
                let read = stream.read_until(0, &mut self.partial)?;
                if self.partial.last() != Some(&0) {
                    if read == 0 {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "the browser's relay closed the connection; did the browser exit?",
                        ));
                    }
                    return Ok(None);
                }
                let mut message = std::mem::take(&mut self.partial);
                message.pop();
                String::from_utf8(message)
                    .map(Some)
                    .map_err(std::io::Error::other)
            }
        }
    }

    fn close(self) {
        if let Link::WebSocket(mut ws) = self.link {
            let _ = ws.close(None);
            let _ = ws.flush();
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// A WebSocket to `url`, which must be on the loopback.
fn connect_websocket(url: &str) -> Result<WebSocket<TcpStream>, PageError> {
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
    Ok(ws)
}

/// A relay's socket, which must be this user's.
fn connect_relay(path: &Path) -> Result<UnixStream, PageError> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(path).map(|m| m.uid()).map_err(|e| {
        PageError::Protocol(format!(
            "the browser's relay socket {}: {e}; did the browser exit?",
            path.display()
        ))
    })?;
    if owner != nix::unistd::getuid().as_raw() {
        return Err(PageError::Protocol(format!(
            "{} belongs to another user (uid {owner}); cua talks only to its own relays",
            path.display()
        )));
    }
    UnixStream::connect(path).map_err(|e| {
        PageError::Protocol(format!(
            "the browser's relay {} does not answer ({e}); did the browser exit?",
            path.display()
        ))
    })
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
