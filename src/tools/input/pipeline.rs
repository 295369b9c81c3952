//! The one pipeline every addressed input tool runs ([`run`]): check the arguments →
//! resolve the target → plan the delivery → deliver → settle → check the effect. A tool
//! supplies only what is its own, as an [`InputAct`]: its checks, its [`Plan`] at the
//! resolved target (the route, what to send, what would show it landed, where the agent
//! cursor points), and what it adds once the effect was read.

use std::sync::Arc;

use super::*;
use crate::tools::cursor::Pointing;

/// What an input tool adds to the pipeline.
#[async_trait]
pub(super) trait InputAct: Send + Sync {
    /// What the plan hands to [`InputAct::follow_up`] (the element acted on, a text
    /// before typing...).
    type Memo: Send;

    /// The tool's own checks that need no desktop (its amount, its text, its keys).
    fn check(&self, _address: &Address) -> Result<(), ToolError> {
        Ok(())
    }

    /// What to do at the resolved target.
    async fn plan(&self, at: &At<'_>) -> Result<Plan<Self::Memo>, ToolError>;

    /// What the tool adds once the effect was read (a toggle's checked state, the value
    /// after the action, a retry by keys where the app ignored the first route).
    async fn follow_up(
        &self,
        _at: &At<'_>,
        outcome: Outcome,
        _expect: &Expect,
        _memo: Self::Memo,
    ) -> Result<Outcome, ToolError> {
        Ok(outcome)
    }
}

/// The resolved target, and what every step of the pipeline needs.
pub(super) struct At<'a> {
    pub ctx: &'a ToolContext,
    pub platform: Arc<dyn Platform>,
    pub target: Target,
    pub pid: u32,
    pub mode: Delivery,
    /// The caller's `settle_ms` as given (checked by [`Address::check`]).
    pub settle_given: Option<u64>,
}

impl At<'_> {
    pub(super) fn p(&self) -> &dyn Platform {
        self.platform.as_ref()
    }

    pub(super) fn window(&self) -> &WindowInfo {
        self.target.window()
    }

    /// How long to wait for the effect: the caller's `settle_ms`, 0 when not given.
    pub(super) fn settle_ms(&self) -> u64 {
        self.settle_given.unwrap_or(0)
    }

    /// Any change in the window from now on, read back within `settle_ms`.
    pub(super) async fn window_change(&self, settle_ms: u64) -> Expect {
        expect_window_change(self.p(), self.pid, self.window(), settle_ms).await
    }

    /// The smallest actionable element under a window-local point.
    pub(super) async fn element_at(&self, x: i32, y: i32) -> Option<AxNode> {
        element_at(self.ctx, self.p(), self.pid, self.window(), x, y).await
    }
}

/// What a tool decided at its target.
pub(super) struct Plan<M> {
    /// What the result will say: what was done, by which route, and the tool's fields.
    pub outcome: Outcome,
    pub deliver: Deliver,
    pub check: Check,
    /// Where the agent cursor shows the action, window-local.
    pub cursor: Option<Cursor>,
    pub memo: M,
}

impl<M> Plan<M> {
    /// A plan: what the result says, what reaches the app, how the effect is known, and
    /// what the follow-up needs; the agent cursor points nowhere unless [`Plan::pointing`].
    pub(super) fn new(outcome: Outcome, deliver: Deliver, check: Check, memo: M) -> Self {
        Plan {
            outcome,
            deliver,
            check,
            cursor: None,
            memo,
        }
    }

    pub(super) fn pointing(mut self, at: (i32, i32), gesture: Gesture) -> Self {
        self.cursor = Some(Cursor {
            at,
            gesture,
            drag_to: None,
        });
        self
    }
}

/// What reaches the app.
pub(super) enum Deliver {
    /// The element's own accessibility action, `times` times.
    Action {
        handle: String,
        action: String,
        times: u8,
    },
    /// The element's numeric value, set through the accessibility API.
    Value { handle: String, value: f64 },
    /// The element's whole text, set through the accessibility API.
    Text { handle: String, text: String },
    /// Option `option` of a combo box or list chosen through the accessibility API.
    Select { handle: String, option: usize },
    /// Input events to the window in the run's delivery mode. In the background, `kind`
    /// names what the app may ignore ([`synthetic_caveat`]).
    Events {
        events: Vec<InputEvent>,
        kind: Synthetic,
    },
    /// Sent while planning: the plan needed the app's answer (an inserted text's span, a
    /// row revealed, the focus taken).
    Done,
}

/// How the effect is known.
pub(super) enum Check {
    /// Read `expect` back for up to `wait` ms; with no effect by then, recommend
    /// `escalate_to`.
    ReadBack {
        expect: Expect,
        wait: u64,
        escalate_to: &'static str,
    },
    /// Known while planning (the element said it took the focus; a view at its end).
    Known(Effect),
}

impl Check {
    /// Read `expect` back for as long as it implies ([`Expect::read_back_ms`]).
    pub(super) fn read_back(expect: Expect, settle_ms: u64, escalate_to: &'static str) -> Self {
        let wait = expect.read_back_ms(settle_ms);
        Check::ReadBack {
            expect,
            wait,
            escalate_to,
        }
    }
}

/// The agent cursor's part in an action.
pub(super) struct Cursor {
    pub at: (i32, i32),
    pub gesture: Gesture,
    /// A drag: where the cursor moves while the events are sent, and for how long.
    pub drag_to: Option<((i32, i32), Duration)>,
}

/// The checks of an input tool's arguments that need no desktop ([`ToolSpec::check`]).
pub(super) fn check(address: &Address, act: &impl InputAct) -> Result<(), ToolError> {
    address.check()?;
    act.check(address)
}

/// Runs an input tool: the whole pipeline.
pub(super) async fn run(
    ctx: &ToolContext,
    address: &Address,
    act: &impl InputAct,
) -> Result<ToolOutput, ToolError> {
    check(address, act)?;
    let platform = ctx.platform().await?;
    let target = resolve(ctx, platform.as_ref(), address).await?;
    let at = At {
        ctx,
        platform,
        target,
        pid: address.pid,
        mode: address.mode(),
        settle_given: address.settle_ms,
    };
    let plan = act.plan(&at).await?;
    let memo = plan.memo;
    let pointing = match &plan.cursor {
        Some(c) => Some(point_at(ctx, at.p(), on_screen(at.window(), c.at), c.gesture).await),
        None => None,
    };
    let mut outcome = plan.outcome;
    let drag = plan
        .cursor
        .as_ref()
        .and_then(|c| c.drag_to)
        .zip(pointing.as_ref())
        .map(|(to, pointing)| Drag { to, pointing });
    let windows_before = windows_of(at.p(), at.pid).await;
    deliver(&at, plan.deliver, drag, &mut outcome).await?;
    let expect = match plan.check {
        Check::ReadBack {
            expect,
            wait,
            escalate_to,
        } => {
            settle(at.p(), &expect, wait, &mut outcome, escalate_to).await;
            expect
        }
        Check::Known(effect) => {
            outcome.effect = effect;
            Expect::Nothing
        }
    };
    let mut outcome = act.follow_up(&at, outcome, &expect, memo).await?;
    if let (Some(before), Some(after)) = (windows_before, windows_of(at.p(), at.pid).await) {
        outcome = with_windows(outcome, &before, &after);
    }
    if let Some(pointing) = pointing {
        pointing.landed(ctx, at.platform.clone()).await;
    }
    Ok(outcome.into_output(Some(at.pid), Some(at.window())))
}

/// The app's windows now, by id with their titles: what an action opened or closed is
/// told from two of these. None when the windows cannot be listed.
async fn windows_of(p: &dyn Platform, pid: u32) -> Option<Vec<(u64, String)>> {
    let windows = p.list_windows().await.ok()?.windows;
    Some(
        windows
            .into_iter()
            .filter(|w| w.pid == Some(pid))
            .map(|w| (w.window_id, w.title))
            .collect(),
    )
}

/// The outcome naming the windows the action opened and closed (`opened`, `closed`:
/// `[{window_id, title}]`, each only when not empty). A window that came or went is an
/// effect the app showed: the action landed, whatever its own read-back said (ctrl+s
/// opening Save As answered `unverifiable`, and named nothing).
fn with_windows(
    mut outcome: Outcome,
    before: &[(u64, String)],
    after: &[(u64, String)],
) -> Outcome {
    let listed = |from: &[(u64, String)], absent_from: &[(u64, String)]| -> Vec<Value> {
        from.iter()
            .filter(|(id, _)| absent_from.iter().all(|(other, _)| other != id))
            .map(|(id, title)| json!({ "window_id": id, "title": title }))
            .collect()
    };
    let (opened, closed) = (listed(after, before), listed(before, after));
    if opened.is_empty() && closed.is_empty() {
        return outcome;
    }
    let mut said = Vec::new();
    for (key, windows) in [("opened", opened), ("closed", closed)] {
        if windows.is_empty() {
            continue;
        }
        let titles: Vec<String> = windows
            .iter()
            .map(|w| format!("{:?}", w["title"].as_str().unwrap_or("")))
            .collect();
        said.push(format!("{key} {}", titles.join(", ")));
        outcome = outcome.with(key, Value::Array(windows));
    }
    if outcome.effect != Effect::Confirmed {
        outcome.effect = Effect::Confirmed;
        outcome.escalation = None;
    }
    let what = format!("{}; {}", outcome.what, said.join("; "));
    outcome.saying(what)
}

/// A drag under way: where the cursor goes, in how long, and the cursor that goes there.
struct Drag<'a> {
    to: ((i32, i32), Duration),
    pointing: &'a Pointing,
}

/// Sends what the plan says; background events carry the caveat of their toolkit.
async fn deliver(
    at: &At<'_>,
    deliver: Deliver,
    drag: Option<Drag<'_>>,
    outcome: &mut Outcome,
) -> Result<(), ToolError> {
    let p = at.p();
    match deliver {
        Deliver::Action {
            handle,
            action,
            times,
        } => {
            for _ in 0..times {
                p.do_action(&handle, &action).await?;
            }
        }
        Deliver::Value { handle, value } => p.set_value(&handle, value).await?,
        Deliver::Text { handle, text } => p.set_text(&handle, &text).await?,
        Deliver::Select { handle, option } => p.select_option(&handle, option).await?,
        Deliver::Events { events, kind } => {
            let window = at.window();
            match drag {
                // The cursor follows the drag while its events go.
                Some(Drag {
                    to: (to, duration),
                    pointing,
                }) => {
                    let moving = pointing.drag_to(at.ctx, p, on_screen(window, to), duration);
                    let (sent, ()) = tokio::join!(p.send_input(window, &events, at.mode), moving);
                    sent?;
                }
                None => p.send_input(window, &events, at.mode).await?,
            }
            if at.mode == Delivery::Background {
                outcome.escalation = synthetic_caveat(p, at.pid, kind).await;
            }
        }
        Deliver::Done => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(list: &[(u64, &str)]) -> Vec<(u64, String)> {
        list.iter().map(|(id, t)| (*id, t.to_string())).collect()
    }

    #[test]
    fn a_window_that_came_or_went_is_named_and_is_the_actions_effect() {
        let before = windows(&[(1, "Untitled 1 - Mousepad")]);
        let after = windows(&[(1, "*Untitled 1 - Mousepad"), (7, "Save As")]);
        let mut pressed = Outcome::new("pressed ctrl+s", Route::BackgroundEvent);
        pressed.escalation = Some(("foreground", "nothing read back".into()));
        let saved = with_windows(pressed, &before, &after);
        assert_eq!(saved.effect, Effect::Confirmed);
        assert!(saved.escalation.is_none());
        assert_eq!(
            Value::Object(saved.fields.clone()),
            json!({ "opened": [{ "window_id": 7, "title": "Save As" }] }),
            "a retitled window is neither opened nor closed"
        );
        assert_eq!(saved.what, "pressed ctrl+s; opened \"Save As\"");
        let closed = with_windows(
            Outcome::new("pressed escape", Route::BackgroundEvent),
            &after,
            &before,
        );
        assert_eq!(
            closed.fields["closed"],
            json!([{ "window_id": 7, "title": "Save As" }])
        );
        let same = with_windows(
            Outcome::new("clicked", Route::ElementAction),
            &before,
            &before,
        );
        assert_eq!(same.effect, Effect::Unverifiable);
        assert!(same.fields.is_empty());
    }
}
