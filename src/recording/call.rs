//! One action recorded as a turn ([`record_call`]), in the steps it takes: the previous
//! turn handed on, the before-state, the video's masks, the action run, the window it
//! turned out to address (launch_app's is known only after), the [`Action`] with its
//! secrets redacted, and the task that takes the after-state off the caller's path.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::{
    EachTurn, LastState, PendingTurn, REUSE_BEFORE, Recorder, StateCapture, TurnJob, capture_state,
    redact, redacted_state, settle, stable, video, window_for,
};
use crate::errors::ToolError;
use crate::output::ToolOutput;
use crate::platform::{Platform, WindowInfo};
use crate::trajectory::{
    Action, ActionResult, AppIdentity, BrowserTarget, Locator, Point, SCHEMA_VERSION,
};

/// An action about to run, as the recorder needs to know it (the call path fills it in).
pub struct Call<'a> {
    pub tool: &'a str,
    pub args: Value,
    /// The desktop, when it could be reached.
    pub platform: Option<Arc<dyn Platform>>,
    /// The element the call names by index, in its window's snapshot.
    pub target: Option<Locator>,
    /// A browser tool's window (pid, window id) and what it names there.
    pub browser: Option<(u32, u64, BrowserTarget)>,
    /// What the turn must not keep (the session's redaction config).
    pub redaction: redact::Rules,
}

/// Runs an action (`run`, the tool's call) and records it as a turn. The result is
/// returned unchanged.
pub async fn record_call(
    recorder: &Recorder,
    call: Call<'_>,
    run: impl std::future::Future<Output = Result<ToolOutput, ToolError>>,
) -> Result<ToolOutput, ToolError> {
    // The previous turn must reach the writer first: turns stay in call order, and its
    // after-state (read now, if its window had not settled) stands in for this turn's
    // before-state.
    let each_turn = recorder.each_turn();
    if each_turn.is_some() {
        recorder.finish_pending().await;
    } else {
        recorder.cut_pending().await;
    }
    let platform = call.platform.clone();
    let mut at = Addressed::of(&call, platform.as_deref()).await;
    let before = before_state(recorder, platform.as_ref(), &at).await;
    let masks = recorder.video_feed();
    // The video hides the window's secret fields before the action can show them.
    mask_secrets(masks.as_ref(), at.window.as_ref(), &call.redaction, &before);
    if let (Some(p), Some(pid)) = (&platform, at.pid) {
        // Starts the app's event feed before the action, so its effect's events count.
        let _ = p.app_activity(pid).await;
    }
    let action_started = Instant::now();
    let result = run.await;

    at.learn_from(&result, platform.as_deref()).await;
    let Some((tx, t_ms)) = recorder.sender() else {
        return result;
    };
    recorder
        .turns_begun
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let action = action_of(&call, &at, &result, before.as_ref(), t_ms);
    let after = AfterState {
        platform,
        at,
        before,
        action,
        action_started,
        each_turn,
        masks,
        redaction: call.redaction,
    };
    let (cut, cut_now) = settle::Cut::new();
    let (checked, check) = tokio::sync::watch::channel::<Option<Option<Instant>>>(None);
    let (last_state, observed) = (recorder.last_state.clone(), recorder.observed.clone());
    let task = tokio::spawn(async move {
        let job = after.take(check, cut_now, last_state, observed).await;
        let _ = tx.send(super::writer::Job::Write(Box::new(job)));
    });
    *recorder.pending.lock().await = Some(PendingTurn { task, cut, checked });
    result
}

/// The process and window an action addresses: from its arguments, then (launch_app)
/// from its result.
struct Addressed {
    pid: Option<u32>,
    window_id: Option<u64>,
    window: Option<WindowInfo>,
}

impl Addressed {
    /// From the call's arguments, or a browser tool's target window.
    async fn of(call: &Call<'_>, platform: Option<&dyn Platform>) -> Self {
        let args = &call.args;
        let browser = call.browser.as_ref();
        let pid = arg_u64(args, "pid")
            .map(|p| p as u32)
            .or(browser.map(|b| b.0));
        let window_id = arg_u64(args, "window_id").or(browser.map(|b| b.1));
        let window = match platform {
            Some(p) => window_for(p, pid, window_id).await,
            None => None,
        };
        Addressed {
            pid,
            window_id,
            window,
        }
    }

    /// launch_app: the new process and its window are known only once it has run.
    async fn learn_from(
        &mut self,
        result: &Result<ToolOutput, ToolError>,
        platform: Option<&dyn Platform>,
    ) {
        let Ok(out) = result else { return };
        let reply = &out.structured;
        if self.pid.is_none() {
            self.pid = reply.get("pid").and_then(Value::as_u64).map(|p| p as u32);
        }
        if self.window_id.is_none() {
            self.window_id = reply.get("window_id").and_then(Value::as_u64).or_else(|| {
                reply
                    .pointer("/windows/0/window_id")
                    .and_then(Value::as_u64)
            });
        }
        if self.window.as_ref().map(|w| w.window_id) != self.window_id || self.window.is_none() {
            if let Some(p) = platform {
                self.window = window_for(p, self.pid, self.window_id).await;
            }
        }
    }

    /// The window's id: the window found, else the one the call named.
    fn window_id(&self) -> Option<u64> {
        self.window.as_ref().map(|w| w.window_id).or(self.window_id)
    }
}

fn arg_u64(args: &Value, key: &str) -> Option<u64> {
    args.get(key).and_then(Value::as_u64)
}

/// The window before the action: the last turn's after-state while it is fresh, else read.
async fn before_state(
    recorder: &Recorder,
    platform: Option<&Arc<dyn Platform>>,
    at: &Addressed,
) -> Option<StateCapture> {
    let (Some(p), Some(pid), Some(w)) = (platform, at.pid, &at.window) else {
        return None;
    };
    let reuse = {
        let last = recorder.last_state.lock().unwrap();
        last.as_ref()
            .filter(|l| l.window_id == w.window_id && l.at.elapsed() < REUSE_BEFORE)
            .map(|l| l.state.clone())
    };
    match reuse {
        Some(state) => Some(state),
        None => Some(capture_state(p, pid, w).await),
    }
}

/// Tells the video which parts of the window to paint over: its secret fields in `state`.
fn mask_secrets(
    masks: Option<&video::Feed>,
    window: Option<&WindowInfo>,
    redaction: &redact::Rules,
    state: &Option<StateCapture>,
) {
    if let (Some(m), Some(w), Some(s)) = (masks, window, state) {
        m.set_masks(
            w.window_id,
            super::screen_rects(w, redaction.secret_frames(&s.json)),
        );
    }
}

/// The turn's action as action.json keeps it (its turn number is given at write time).
fn action_of(
    call: &Call<'_>,
    at: &Addressed,
    result: &Result<ToolOutput, ToolError>,
    before: Option<&StateCapture>,
    t_ms: u64,
) -> Action {
    let (summary, error, structured) = match result {
        Ok(out) => (out.summary.clone(), None, out.structured.clone()),
        Err(e) => (String::new(), Some(e.to_string()), Value::Null),
    };
    let kept = kept_arguments(call, &structured, before, summary);
    Action {
        schema_version: SCHEMA_VERSION,
        turn: 0,
        tool: call.tool.to_string(),
        arguments: match kept.arguments {
            Value::Object(fields) => fields,
            _ => Default::default(),
        },
        result_summary: kept.summary,
        result_error: error,
        result: result_fields(result, &structured),
        timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        t_ms,
        pid: at.pid,
        window_id: at.window_id(),
        app: at
            .window
            .as_ref()
            .map(|w| app_identity(w, call.platform.as_deref())),
        click_point: click_point(&structured),
        target: call.target.clone(),
        browser: call.browser.as_ref().map(|b| b.2.clone()),
        redacted: kept.redacted,
        settle: None,
        recorded_by: None,
        extra: Default::default(),
    }
}

fn app_identity(window: &WindowInfo, platform: Option<&dyn Platform>) -> AppIdentity {
    AppIdentity {
        app_name: window.app_name.clone(),
        executable: window
            .pid
            .and_then(|pid| platform?.process_executable(pid))
            .unwrap_or_default(),
        window_title: window.title.clone(),
    }
}

/// The arguments and summary a turn may keep, and which arguments it blanked.
struct Kept {
    arguments: Value,
    summary: String,
    redacted: Vec<String>,
}

/// The call's arguments without this run's private keys and session, and, where the action
/// typed or set text into a secret field, without that text (in the summary too).
fn kept_arguments(
    call: &Call<'_>,
    structured: &Value,
    before: Option<&StateCapture>,
    mut summary: String,
) -> Kept {
    let mut arguments = call.args.clone();
    if let Value::Object(m) = &mut arguments {
        m.retain(|k, _| !k.starts_with('_') && k != "session");
    }
    let mut redacted = Vec::new();
    if into_secret(call, structured, before) {
        for key in ["text", "value"] {
            let Some(secret) = arguments.get(key).and_then(Value::as_str).map(String::from) else {
                continue;
            };
            if !secret.is_empty() {
                summary = summary.replace(&secret, redact::REDACTED);
            }
            arguments[key] = json!(redact::REDACTED);
            redacted.push(key.to_string());
        }
    }
    Kept {
        arguments,
        summary,
        redacted,
    }
}

/// Whether the action went into a secret field: the element its result names, the one
/// its locator names, or (keys to the focus) the focused element before it ran.
fn into_secret(call: &Call<'_>, structured: &Value, before: Option<&StateCapture>) -> bool {
    let rules = &call.redaction;
    let focused = |e: &Value| {
        e["states"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s == "focused"))
    };
    structured
        .get("element")
        .is_some_and(|e| rules.is_secret(e))
        || call
            .target
            .as_ref()
            .is_some_and(|l| rules.is_secret(&json!({ "role": l.role, "name": l.name })))
        || before.is_some_and(|b| {
            b.json["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|e| rules.is_secret(e) && focused(e))
        })
}

/// The result fields a turn keeps: the route, the effect and the escalation, and for a
/// failed call whether it was refused before touching anything.
fn result_fields(result: &Result<ToolOutput, ToolError>, structured: &Value) -> ActionResult {
    let mut fields = json!({});
    for key in ["path", "verified", "effect", "escalation"] {
        if let Some(v) = structured.get(key).filter(|v| !v.is_null()) {
            fields[key] = v.clone();
        }
    }
    // A field of another shape than the type's is kept whole, untyped, never dropped.
    let mut kept: ActionResult =
        serde_json::from_value(fields.clone()).unwrap_or_else(|_| ActionResult {
            extra: fields.as_object().cloned().unwrap_or_default(),
            ..ActionResult::default()
        });
    if let Err(e) = result {
        kept.refused = Some(matches!(
            e,
            ToolError::InvalidArguments(_)
                | ToolError::UnknownTool(_)
                | ToolError::Refused(_)
                | ToolError::RefusedAs { .. }
        ));
    }
    kept
}

fn click_point(structured: &Value) -> Option<Point> {
    let p = structured.get("click_point")?;
    Some(Point {
        x: p.get("x")?.as_i64()? as i32,
        y: p.get("y")?.as_i64()? as i32,
    })
}

/// What the after-state task needs: the turn so far, and how to read its window.
struct AfterState {
    platform: Option<Arc<dyn Platform>>,
    at: Addressed,
    before: Option<StateCapture>,
    action: Action,
    action_started: Instant,
    each_turn: Option<EachTurn>,
    masks: Option<video::Feed>,
    redaction: redact::Rules,
}

impl AfterState {
    /// The turn, complete: the after-state is taken once the window is quiet (or, in a
    /// run that settles each turn, stable), or when the next recorded call cuts that wait
    /// short; that call waits for this task first, so turns stay in order.
    async fn take(
        mut self,
        mut check: tokio::sync::watch::Receiver<Option<Option<Instant>>>,
        cut_now: settle::Cut,
        last_state: Arc<std::sync::Mutex<Option<LastState>>>,
        observed: Arc<std::sync::Mutex<Option<settle::Observation>>>,
    ) -> TurnJob {
        let after = match (&self.platform, self.at.pid, &self.at.window) {
            (Some(p), Some(pid), Some(w)) => {
                let confirmed = self.action.result.effect.as_deref() == Some("confirmed");
                let effect = settle::Effect {
                    before: self.before.as_ref().map(|b| &b.json),
                    action_started: self.action_started,
                    // The tool read its effect back: the window already shows it.
                    confirmed,
                    recheck_silent: true,
                };
                let state = match self.each_turn {
                    Some(each) => {
                        // A replay checks the turn's change first: read once it is there.
                        let shown = match each.after_check {
                            true => check
                                .wait_for(Option::is_some)
                                .await
                                .ok()
                                .and_then(|c| c.flatten()),
                            false => None,
                        };
                        // A turn that acts inside an incidental region waits for it too.
                        let before_json = self.before.as_ref().map(|b| &b.json);
                        let target = before_json.and_then(|b| {
                            crate::trajectory::points::target_index(
                                &self.action,
                                &crate::trajectory::points::frames_of(b),
                            )
                        });
                        let tree = before_json.and_then(|b| b["tree_markdown"].as_str());
                        let incidental = each.incidental.for_target(tree, target);
                        let (state, settled) = stable::stable_state(
                            p,
                            pid,
                            w,
                            effect,
                            shown,
                            each.timeout,
                            &incidental,
                        )
                        .await;
                        self.action.settle = Some(settled);
                        state
                    }
                    None => {
                        let quiet =
                            settle::settled_state(p, pid, w, effect, &cut_now, &observed).await;
                        // An agent's turn says when its window never held still; its
                        // after-state is the last read (a stable settle's record, so diff
                        // and replay read it one way).
                        if !quiet.still_changing.is_empty() {
                            self.action.settle = Some(crate::trajectory::Settle {
                                status: crate::trajectory::SettleStatus::Unsettled,
                                latency_ms: self.action_started.elapsed().as_millis() as u64,
                                changed: self.before.as_ref().is_some_and(|b| {
                                    !settle::differences_in_tree(&b.json, &quiet.state.json, 1)
                                        .is_empty()
                                }),
                                changing: quiet.still_changing,
                                by: crate::trajectory::SettledBy::Agent,
                            });
                        }
                        quiet.state
                    }
                };
                *last_state.lock().unwrap() = Some(LastState {
                    window_id: w.window_id,
                    at: Instant::now(),
                    state: state.clone(),
                });
                Some(state)
            }
            _ => None,
        };
        mask_secrets(
            self.masks.as_ref(),
            self.at.window.as_ref(),
            &self.redaction,
            &after,
        );
        let scrub = |s: Option<StateCapture>| s.map(|s| redacted_state(&self.redaction, s));
        TurnJob {
            action: self.action,
            before: scrub(self.before),
            after: scrub(after),
        }
    }
}
