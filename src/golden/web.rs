//! The web review (`cua golden review --web`): the HTML report of the pending goldens,
//! served on the loopback with accept / reject per changed turn and per scenario. Decisions
//! go through the same golden code as the terminal review ([`super::decide_turn`],
//! [`Goldens::accept`], [`Goldens::reject`]).
//!
//! Who can reach it: the server listens on 127.0.0.1 only, and everything lives under
//! `/<token>/`, a 128-bit token drawn once per review and printed with the URL. Another
//! path, another `Host` (DNS rebinding), or a file outside the rendered report is refused.
//! The report is rendered afresh into a private temporary folder on every page load, so
//! the page always shows what is left to decide; the folder goes when the review ends.
//! The server stops on Ctrl-C, or by itself once it has shown that nothing is left.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tiny_http::{Header, Method, Request, Response, Server};

use super::{Decision, Goldens, decide_turn, refuse_in_ci};
use crate::diff::{DiffConfig, diff_trajectories};
use crate::report::{ScenarioReport, html};

/// One decision posted by a button of the page.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Posted {
    scenario: String,
    /// A changed turn; absent for the whole scenario.
    turn: Option<u32>,
    decision: String,
}

struct WebReview<'a> {
    goldens: &'a Goldens,
    /// The scenarios under review, with their diff settings.
    scenarios: Vec<(String, DiffConfig)>,
    token: String,
    /// `127.0.0.1:PORT`, the only `Host` answered.
    host: String,
    report_dir: PathBuf,
}

/// What the serve loop does after a request.
enum Next {
    Continue,
    /// The page said nothing is left to review.
    Finished,
}

/// Serves the review of `scenarios` until every one is decided (and the page has said so)
/// or the process is interrupted. `ready` gets the URL to open once the server listens.
pub fn serve(
    goldens: &Goldens,
    scenarios: Vec<(String, DiffConfig)>,
    ready: impl FnOnce(&str),
) -> Result<(), String> {
    refuse_in_ci()?;
    let server = Server::http("127.0.0.1:0").map_err(|e| format!("listening on 127.0.0.1: {e}"))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or("the review server has no TCP port")?;
    let token = crate::loopback::one_time_token()?;
    let report_dir = std::env::temp_dir().join(format!("cua-review-{}", std::process::id()));
    let review = WebReview {
        goldens,
        scenarios,
        host: format!("127.0.0.1:{port}"),
        report_dir,
        token,
    };
    // An interrupt ends the loop, which removes the report's folder.
    crate::loopback::stop_on_interrupt()?;
    ready(&format!("http://{}/{}/", review.host, review.token));
    let result = loop {
        if crate::loopback::interrupted() {
            break Ok(());
        }
        // A bounded wait, so an interrupt is seen within a quarter second.
        match server.recv_timeout(Duration::from_millis(250)) {
            Ok(Some(request)) => match review.handle(request) {
                Next::Continue => {}
                Next::Finished => break Ok(()),
            },
            Ok(None) => {}
            Err(e) => break Err(format!("the review server failed: {e}")),
        }
    };
    let _ = std::fs::remove_dir_all(&review.report_dir);
    result
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

fn text(status: u16, body: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}

fn reply_json(status: u16, body: serde_json::Value) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body.to_string())
        .with_status_code(status)
        .with_header(header("Content-Type", "application/json"))
}

impl WebReview<'_> {
    fn handle(&self, mut request: Request) -> Next {
        let host_ok = request
            .headers()
            .iter()
            .any(|h| h.field.equiv("Host") && h.value.as_str() == self.host);
        let path = request.url().split('?').next().unwrap_or("").to_string();
        let prefix = format!("/{}", self.token);
        let (response, next) = match path.strip_prefix(&prefix) {
            _ if !host_ok => (text(403, "forbidden: unexpected Host"), Next::Continue),
            None => (text(404, "not found"), Next::Continue),
            Some("") => (
                text(308, "").with_header(header("Location", &format!("{prefix}/"))),
                Next::Continue,
            ),
            Some("/" | "/index.html") if *request.method() == Method::Get => self.page(),
            Some("/decide") if *request.method() == Method::Post => {
                let mut body = String::new();
                let read = std::io::Read::read_to_string(
                    &mut std::io::Read::take(request.as_reader(), 64 * 1024),
                    &mut body,
                );
                let response = match read {
                    Ok(_) => self.decide(&body),
                    Err(e) => reply_json(400, json!({"ok": false, "error": e.to_string()})),
                };
                (response, Next::Continue)
            }
            Some(rest) if *request.method() == Method::Get => (self.asset(rest), Next::Continue),
            Some(_) => (text(405, "method not allowed"), Next::Continue),
        };
        let _ = request.respond(response);
        next
    }

    /// The scenarios under review that still have a pending golden.
    fn pending(&self) -> Vec<&(String, DiffConfig)> {
        self.scenarios
            .iter()
            .filter(|(name, _)| self.goldens.pending(name).is_dir())
            .collect()
    }

    fn page(&self) -> (Response<std::io::Cursor<Vec<u8>>>, Next) {
        let pending = self.pending();
        if pending.is_empty() {
            let html = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>cua golden review</title></head><body><h1>Nothing left to review</h1><p>Every pending golden was decided; the review server has stopped. You can close this tab.</p></body></html>";
            let response =
                Response::from_string(html).with_header(header("Content-Type", "text/html"));
            return (response, Next::Finished);
        }
        let reports: Vec<ScenarioReport> = pending
            .iter()
            .map(|(name, config)| self.report(name, config))
            .collect();
        let _ = std::fs::remove_dir_all(&self.report_dir);
        let written = html::write_with_review(&self.report_dir, "cua golden review", &reports)
            .and_then(std::fs::read);
        let response = match written {
            Ok(bytes) => {
                Response::from_data(bytes).with_header(header("Content-Type", "text/html"))
            }
            Err(e) => text(500, &format!("rendering the report: {e}")),
        };
        (response, Next::Continue)
    }

    /// The pending run against the golden, or what accepting would do when there is none.
    fn report(&self, name: &str, config: &DiffConfig) -> ScenarioReport {
        let golden = self.goldens.golden(name);
        let pending = self.goldens.pending(name);
        let mut report = if golden.is_dir() {
            match diff_trajectories(&golden, &pending, config) {
                Ok(d) => ScenarioReport::of_diff(name.to_string(), d, 0),
                Err(e) => ScenarioReport::of_error(name.to_string(), e.to_string()),
            }
        } else {
            ScenarioReport::of_error(
                name.to_string(),
                "no golden yet: accepting makes the pending run the golden".into(),
            )
        };
        report
            .notes
            .push(format!("pending golden: {}", pending.display()));
        report
    }

    fn decide(&self, body: &str) -> Response<std::io::Cursor<Vec<u8>>> {
        match self.apply(body) {
            Ok(message) => reply_json(200, json!({"ok": true, "message": message})),
            Err(error) => reply_json(409, json!({"ok": false, "error": error})),
        }
    }

    fn apply(&self, body: &str) -> Result<String, String> {
        let posted: Posted = serde_json::from_str(body).map_err(|e| format!("request: {e}"))?;
        let Some((name, config)) = self.scenarios.iter().find(|(n, _)| *n == posted.scenario)
        else {
            return Err(format!(
                "`scenario`: {} is not under review",
                posted.scenario
            ));
        };
        let decision = match posted.decision.as_str() {
            "accept" => Decision::Accept,
            "reject" => Decision::Reject,
            other => return Err(format!("`decision`: `{other}` is not accept or reject")),
        };
        match posted.turn {
            Some(turn) => {
                let done = decide_turn(self.goldens, name, config, turn, decision)?;
                Ok(format!(
                    "{name} turn {turn}: {}{}",
                    if done.accepted {
                        "accepted into the golden"
                    } else {
                        "kept as in the golden"
                    },
                    if done.review_done {
                        "; nothing left undecided, pending golden removed"
                    } else {
                        ""
                    }
                ))
            }
            None if decision == Decision::Accept => self
                .goldens
                .accept(name)
                .map(|p| format!("{name}: accepted as {}", p.display())),
            None => self
                .goldens
                .reject(name)
                .map(|()| format!("{name}: pending golden rejected")),
        }
    }

    /// A file of the rendered report; nothing outside it.
    fn asset(&self, rest: &str) -> Response<std::io::Cursor<Vec<u8>>> {
        let relative = Path::new(rest.trim_start_matches('/'));
        if !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            return text(404, "not found");
        }
        let file = self.report_dir.join(relative);
        let kind = match file.extension().and_then(|e| e.to_str()) {
            Some("png") => "image/png",
            Some("html") => "text/html",
            _ => return text(404, "not found"),
        };
        match std::fs::read(&file) {
            Ok(bytes) => Response::from_data(bytes).with_header(header("Content-Type", kind)),
            Err(_) => text(404, "not found"),
        }
    }
}
