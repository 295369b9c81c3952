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
    let outcome = act.follow_up(&at, outcome, &expect, memo).await?;
    if let Some(pointing) = pointing {
        pointing.landed(ctx, at.platform.clone()).await;
    }
    Ok(outcome.into_output(Some(at.pid), Some(at.window())))
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
