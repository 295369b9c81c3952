//! The pointer tools besides the clicks (click.rs): drag, on the input pipeline, and
//! move_cursor, which moves the real pointer by design. Each points the agent cursor
//! (tools/cursor.rs) at its point before it acts.

use super::pipeline::{At, Check, Cursor, Deliver, InputAct, Plan};
use super::*;
use crate::dispatch::{Contract, Risk};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragArgs {
    /// Target process id.
    pub pid: u32,
    /// Drag start, window-local screenshot pixels.
    pub from_x: f64,
    /// Drag start, window-local screenshot pixels.
    pub from_y: f64,
    /// Drag end, window-local screenshot pixels.
    pub to_x: f64,
    /// Drag end, window-local screenshot pixels.
    pub to_y: f64,
    /// Time between press and release in milliseconds (0-10000). Default 500.
    pub duration_ms: Option<u64>,
    /// Intermediate motion events (1-200). Default 20.
    pub steps: Option<u32>,
    /// Modifiers held across the gesture.
    pub modifier: Option<Vec<String>>,
    /// Mouse button. Default left.
    pub button: Option<MouseButton>,
    /// Window the coordinates belong to; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct Drag;

#[async_trait]
impl ToolSpec for Drag {
    type Args = DragArgs;
    const NAME: &'static str = "drag";
    const DESCRIPTION: &'static str = "Press, move in steps and release between two window-local points (sliders, selections, drag and drop). Background sends synthetic pointer events, which some toolkits ignore (GTK 4): the result then recommends foreground, which moves the real pointer and restores it.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&["input.pointer.drag", "input.delivery_mode"]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    fn check(a: &DragArgs) -> Result<(), ToolError> {
        pipeline::check(&a.address(), a)
    }

    async fn run(&self, ctx: &ToolContext, a: DragArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.address(), &a).await
    }
}

impl DragArgs {
    fn address(&self) -> Address {
        Address::of_window(self.pid, self.window_id, self.delivery_mode, self.settle_ms)
    }

    /// The two points as event pixels of `window`, refused outside it. Coordinates are in
    /// the screenshot's pixels (max_image_dimension may scale them).
    fn points(&self, ctx: &ToolContext, window: &WindowInfo) -> Result<[(f64, f64); 2], ToolError> {
        let scale = screenshot_scale(ctx, window);
        for (name, v, limit) in [
            ("from_x", self.from_x, window.bounds.width),
            ("to_x", self.to_x, window.bounds.width),
            ("from_y", self.from_y, window.bounds.height),
            ("to_y", self.to_y, window.bounds.height),
        ] {
            let limit = (limit as f64 * scale).round();
            if v >= limit {
                return Err(ToolError::invalid(format!(
                    "`{name}`: {v} is outside the window ({limit} px)"
                )));
            }
        }
        Ok([
            (self.from_x / scale, self.from_y / scale),
            (self.to_x / scale, self.to_y / scale),
        ])
    }
}

/// Press at `from`, `steps` moves over `duration` ms to `to`, release, modifiers held
/// across.
fn drag_events(
    [from, to]: [(f64, f64); 2],
    button: u8,
    mods: &[Modifier],
    duration: u64,
    steps: u32,
) -> Vec<InputEvent> {
    let at = |(x, y): (f64, f64)| (x as i32, y as i32);
    let ((fx, fy), (tx, ty)) = (at(from), at(to));
    let mut events = vec![InputEvent::Move { x: fx, y: fy }];
    events.extend(mods_down(mods));
    events.push(InputEvent::Button {
        x: fx,
        y: fy,
        button,
        down: true,
    });
    let pause = Duration::from_millis(duration / steps as u64);
    for i in 1..=steps {
        let t = i as f64 / steps as f64;
        let x = (from.0 + (to.0 - from.0) * t).round() as i32;
        let y = (from.1 + (to.1 - from.1) * t).round() as i32;
        events.push(InputEvent::Pause(pause));
        events.push(InputEvent::Move { x, y });
    }
    events.push(InputEvent::Button {
        x: tx,
        y: ty,
        button,
        down: false,
    });
    events.extend(mods_up(mods));
    events
}

#[async_trait]
impl InputAct for DragArgs {
    type Memo = ();

    fn check(&self, _address: &Address) -> Result<(), ToolError> {
        for (name, v) in [
            ("from_x", self.from_x),
            ("from_y", self.from_y),
            ("to_x", self.to_x),
            ("to_y", self.to_y),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(ToolError::invalid(format!(
                    "`{name}`: must be a non-negative number, got {v}"
                )));
            }
        }
        gesture_timing(self.duration_ms, self.steps)?;
        parse_modifiers(self.modifier.as_deref().unwrap_or_default(), "modifier").map(|_| ())
    }

    async fn plan(&self, at: &At<'_>) -> Result<Plan<()>, ToolError> {
        let (duration, steps) = gesture_timing(self.duration_ms, self.steps)?;
        let mods = parse_modifiers(self.modifier.as_deref().unwrap_or_default(), "modifier")?;
        let points = self.points(at.ctx, at.window())?;
        let button = self.button.unwrap_or(MouseButton::Left).number();
        let [(fx, fy), (tx, ty)] = points.map(|(x, y)| (x as i32, y as i32));
        let expect = at.window_change(at.settle_ms()).await;
        let outcome = Outcome::new(
            format!("dragged ({fx}, {fy}) → ({tx}, {ty})"),
            event_path(at.mode),
        )
        .with("click_point", json!({ "x": fx, "y": fy }))
        .with("end_point", json!({ "x": tx, "y": ty }));
        let send = Deliver::Events {
            events: drag_events(points, button, &mods, duration, steps),
            kind: Synthetic::Pointer(at.window().window_id),
        };
        let check = Check::ReadBack {
            expect,
            wait: at.settle_ms(),
            escalate_to: "foreground",
        };
        let mut plan = Plan::new(outcome, send, check, ());
        plan.cursor = Some(Cursor {
            at: (fx, fy),
            gesture: Gesture::Press,
            drag_to: Some(((tx, ty), Duration::from_millis(duration))),
        });
        Ok(plan)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveCursorArgs {
    /// X in screen points (a fraction is rounded).
    pub x: f64,
    /// Y in screen points (a fraction is rounded).
    pub y: f64,
}

pub struct MoveCursor;

#[async_trait]
impl ToolSpec for MoveCursor {
    type Args = MoveCursorArgs;
    const NAME: &'static str = "move_cursor";
    const DESCRIPTION: &'static str = "Move the real mouse pointer to a screen point (screen points, origin top-left). This is the one tool that changes the pointer by design.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract =
        Contract::idempotent(Risk::R1, &["agent_cursor.move", "input.pointer.move"]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: MoveCursorArgs) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let (w, h) = platform.screen_size().await?;
        let (x, y) = (a.x.round(), a.y.round());
        if !(0.0..w as f64).contains(&x) || !(0.0..h as f64).contains(&y) {
            return Err(ToolError::invalid(format!(
                "({}, {}) is outside the {w}x{h} screen",
                a.x, a.y
            )));
        }
        let (x, y) = (x as i32, y as i32);
        let pointing = point_at(ctx, platform.as_ref(), (x, y), Gesture::Move).await;
        platform.warp_pointer(x, y).await?;
        let mut outcome = Outcome::new(
            format!("moved the pointer to ({x}, {y})"),
            Route::PointerWarp,
        );
        outcome.effect = if platform.cursor_position().await? == (x, y) {
            Effect::Confirmed
        } else {
            Effect::SuspectedNoop
        };
        pointing.landed(ctx, platform).await;
        Ok(outcome.into_output(None, None))
    }
}
