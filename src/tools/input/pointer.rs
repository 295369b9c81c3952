//! The pointer tools: click, double_click, right_click, drag and move_cursor. Each
//! points the agent cursor (tools/cursor.rs) at its point before it acts.

use super::*;
use crate::dispatch::{Contract, Risk};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClickKind {
    Click,
    Double,
    Right,
}

pub(super) struct ClickRequest {
    kind: ClickKind,
    pid: u32,
    window_id: Option<u64>,
    element_index: Option<usize>,
    snapshot_id: Option<String>,
    x: Option<f64>,
    y: Option<f64>,
    action: Option<String>,
    count: u8,
    modifier: Vec<String>,
    button: u8,
    delivery_mode: Option<Delivery>,
    settle_ms: Option<u64>,
}

pub(super) async fn run_click(ctx: &ToolContext, r: ClickRequest) -> Result<ToolOutput, ToolError> {
    check_addressing(r.element_index, r.window_id, r.x, r.y)?;
    let settle_ms = check_settle(r.settle_ms)?;
    let mods = parse_modifiers(&r.modifier, "modifier")?;
    if !(1..=3).contains(&r.count) {
        return Err(ToolError::invalid(format!(
            "`count`: must be 1, 2 or 3, got {}",
            r.count
        )));
    }
    if r.action.is_some() && r.element_index.is_none() {
        return Err(ToolError::invalid("`action`: only with `element_index`"));
    }
    if r.element_index.is_none() && r.x.is_none() {
        return Err(ToolError::invalid(
            "give `element_index` (with `window_id`) or `x` and `y`",
        ));
    }
    let platform = ctx.platform().await?;
    let p = platform.as_ref();
    let element = element_ref(r.element_index, r.snapshot_id.as_deref())?;
    let target = resolve(ctx, p, r.pid, r.window_id, element, r.x, r.y).await?;
    let mode = delivery(r.delivery_mode);
    // A right-button click is a right click (its element's menu action first), whichever
    // tool sent it.
    let r = if r.kind == ClickKind::Click && r.button == 3 {
        ClickRequest {
            kind: ClickKind::Right,
            ..r
        }
    } else {
        r
    };
    // A person's click on a text field puts the caret there; its accessibility action
    // (activate: Enter) would not. So a plain background click on one focuses it; where
    // the toolkit will not move the focus that way (GTK 4), it is clicked by pointer.
    let mut click_by_pointer = false;
    if let Target::Element { node, index, .. } = &target {
        let plain = r.kind == ClickKind::Click && r.count == 1 && r.button == 1;
        if plain
            && mode == Delivery::Background
            && mods.is_empty()
            && r.action.is_none()
            && super::keyboard::takes_text(node)
        {
            if super::keyboard::focus_unless_focused(p, node).await {
                let window = target.window().clone();
                // Read back: focus_unless_focused saw the element say it has the focus.
                let mut outcome =
                    Outcome::new(format!("focused {}", describe(node)), Route::ElementFocus)
                        .with("element", element_brief(Some(*index), node));
                outcome.effect = Effect::Confirmed;
                return Ok(outcome.into_output(Some(r.pid), Some(&window)));
            }
            click_by_pointer = true;
        }
    }
    let preferred: &[&str] = match r.kind {
        ClickKind::Click => CLICK_ACTIONS,
        ClickKind::Double => DOUBLE_CLICK_ACTIONS,
        ClickKind::Right => MENU_ACTIONS,
    };
    let verb = match r.kind {
        ClickKind::Click => "clicked",
        ClickKind::Double => "double-clicked",
        ClickKind::Right => "right-clicked",
    };

    // Background with no modifiers: act on the element (given, or under the pixel). So
    // too in the foreground for an element with no frame on screen (scrolled out of its
    // view): no pointer can reach it, its action can.
    let unreachable_by_pointer =
        matches!(&target, Target::Element { node, .. } if node.frame.is_none());
    let act_on_element = (mode == Delivery::Background || unreachable_by_pointer)
        && mods.is_empty()
        && !click_by_pointer
        && (r.button == 1 || r.kind == ClickKind::Right);
    let (element, index) = match &target {
        Target::Element { node, index, .. } => (Some(AxNode::clone(node)), Some(*index)),
        Target::Pixel { window, x, y } if act_on_element => {
            (element_at(ctx, p, r.pid, window, *x, *y).await, None)
        }
        _ => (None, None),
    };
    let window = target.window().clone();
    let live = match &element {
        Some(node) => Some(live_element(p, node).await?),
        None => None,
    };
    if act_on_element {
        if let Some(node) = &element {
            let requested = if index.is_some() {
                r.action.as_deref()
            } else {
                None
            };
            if let Some(action) = pick_action(node, requested, preferred)? {
                let toggled = is_toggle_click(node, r.kind);
                let expect = match &live {
                    Some(live) if toggled => toggle_expectation(node, live),
                    _ => click_expectation(ctx, p, r.pid, &window, r.kind, r.settle_ms).await,
                };
                let times = if r.kind == ClickKind::Click {
                    r.count
                } else {
                    1
                };
                let point = match &target {
                    Target::Pixel { x, y, .. } => Some((*x, *y)),
                    _ => target.visible_part().map(|f| f.center()),
                };
                let pointing = match point {
                    Some(at) => {
                        Some(point_at(ctx, p, on_screen(&window, at), Gesture::Click).await)
                    }
                    None => None,
                };
                for _ in 0..times {
                    p.do_action(&node.handle, &action)
                        .await
                        .map_err(ToolError::from)?;
                }
                let mut outcome =
                    Outcome::new(format!("{verb} {}", describe(node)), Route::ElementAction)
                        .with("action", json!(action))
                        .with("element", element_brief(index, node));
                if let Some(f) = node.frame {
                    let (cx, cy) = f.center();
                    outcome = outcome.with("click_point", json!({ "x": cx, "y": cy }));
                }
                if let Target::Pixel { x, y, .. } = target {
                    outcome = outcome
                        .with("click_point", json!({ "x": x, "y": y }))
                        .with("resolved_from_pixel", json!(true));
                }
                settle(
                    p,
                    &expect,
                    expect.read_back_ms(settle_ms),
                    &mut outcome,
                    "px",
                )
                .await;
                if toggled {
                    outcome = with_checked(p, outcome, &expect).await;
                }
                if let Some(pointing) = pointing {
                    pointing.landed(ctx, platform.clone()).await;
                }
                return Ok(outcome.into_output(Some(r.pid), Some(&window)));
            }
        }
    }

    // Pixel route: at the given point, or at the element's centre.
    let (x, y) = match &target {
        Target::Pixel { x, y, .. } => (*x, *y),
        // Its visible part: a centre its list or the window clips would land elsewhere.
        Target::Element { node, .. } => {
            target.visible_part().map(|f| f.center()).ok_or_else(|| {
                ToolError::failed(format!(
                    "{} has no action for this and no part of it shows to click (its container or the window clips it): scroll it into view first",
                    describe(node)
                ))
            })?
        }
        Target::Window { .. } => unreachable!("checked above"),
    };
    let button = if r.kind == ClickKind::Right {
        3
    } else {
        r.button
    };
    let count = if r.kind == ClickKind::Double {
        2
    } else {
        r.count
    };
    // A toggle clicked by pointer (GTK 4 check boxes expose no action) implies its
    // checked state flips, read back like the action route's.
    let toggled = element.as_ref().filter(|n| is_toggle_click(n, r.kind));
    let expect = match (toggled, &live) {
        (Some(node), Some(live)) => toggle_expectation(node, live),
        _ => click_expectation(ctx, p, r.pid, &window, r.kind, r.settle_ms).await,
    };
    let pointing = point_at(ctx, p, on_screen(&window, (x, y)), Gesture::Click).await;
    p.send_input(&window, &click_events(x, y, button, count, &mods), mode)
        .await?;
    let path = event_path(mode);
    let mut outcome = Outcome::new(format!("{verb} at ({x}, {y})"), path)
        .with("click_point", json!({ "x": x, "y": y }));
    if let Some(node) = &element {
        outcome = outcome.with("element", element_brief(index, node));
    }
    if mode == Delivery::Background {
        outcome.escalation = synthetic_caveat(p, r.pid, Synthetic::Pointer(window.window_id)).await;
    }
    settle(
        p,
        &expect,
        expect.read_back_ms(settle_ms),
        &mut outcome,
        "foreground",
    )
    .await;
    if toggled.is_some() {
        outcome = with_checked(p, outcome, &expect).await;
    }
    pointing.landed(ctx, platform.clone()).await;
    Ok(outcome.into_output(Some(r.pid), Some(&window)))
}

/// What shows a click landed: any change within `settle_ms` when given; without it, a
/// plain click's within the toolkit's latency (its effect is read back unless the app
/// cannot tell). A double or right click reads back only when asked: what they open (a
/// file, a context menu in a popup of its own) need not show in the window.
async fn click_expectation(
    ctx: &ToolContext,
    p: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    kind: ClickKind,
    settle_ms: Option<u64>,
) -> Expect {
    match settle_ms {
        None if kind == ClickKind::Click => expect_within_latency(ctx, p, pid, window).await,
        ms => expect_window_change(p, pid, window, ms.unwrap_or(0)).await,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    /// Target process id.
    pub pid: u32,
    /// Window of element_index (required with it) or of x/y (default: the pid's frontmost).
    pub window_id: Option<u64>,
    /// Element index from the last get_window_state of (pid, window_id): acts through the accessibility API.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// X in window-local screenshot pixels (with y).
    pub x: Option<f64>,
    /// Y in window-local screenshot pixels (with x).
    pub y: Option<f64>,
    /// Accessibility action to run (element_index only), e.g. toggle. Default: the element's primary one.
    pub action: Option<String>,
    /// Clicks: 1-3 (pixel route). Default 1.
    #[schemars(range(min = 1, max = 3))]
    pub count: Option<u8>,
    /// Modifiers held during the click: cmd/super, ctrl, shift, alt/option (pixel route).
    pub modifier: Option<Vec<String>>,
    /// Mouse button (pixel route). Default left.
    pub button: Option<MouseButton>,
    /// background (default): never changes focus, stacking or the pointer; foreground: real input, then restores.
    pub delivery_mode: Option<Delivery>,
    /// Wait up to this many milliseconds for the effect to show before returning. Default: until the window changes, at most the toolkit's latency (then `no_change`); 0: do not wait.
    pub settle_ms: Option<u64>,
}

pub struct Click;

#[async_trait]
impl ToolSpec for Click {
    type Args = ClickArgs;
    const NAME: &'static str = "click";
    const DESCRIPTION: &'static str = "Click an element or a point. element_index + window_id runs the element's accessibility action (press/click/activate/toggle, or `action`): no pointer move, no focus change. x, y (window-local pixels) + pid: in background a point on an actionable element runs its action, elsewhere synthetic button events go to the window; foreground clicks with the real pointer, then restores. Returns path, verified, effect and escalation.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&[
        "input.pointer.click",
        "input.pointer.click.left",
        "accessibility.element_tokens",
        "input.delivery_mode",
    ]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: ClickArgs) -> Result<ToolOutput, ToolError> {
        run_click(
            ctx,
            ClickRequest {
                kind: ClickKind::Click,
                pid: a.pid,
                window_id: a.window_id,
                element_index: a.element_index,
                snapshot_id: a.snapshot_id,
                x: a.x,
                y: a.y,
                action: a.action,
                count: a.count.unwrap_or(1),
                modifier: a.modifier.unwrap_or_default(),
                button: a.button.unwrap_or(MouseButton::Left).number(),
                delivery_mode: a.delivery_mode,
                settle_ms: a.settle_ms,
            },
        )
        .await
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoubleClickArgs {
    /// Target process id.
    pub pid: u32,
    /// Window of the element_index or pixel coordinates.
    pub window_id: Option<u64>,
    /// Runs the element's activate/open action when it has one, else double-clicks its centre.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// X in window-local screenshot pixels (with y).
    pub x: Option<f64>,
    /// Y in window-local screenshot pixels (with x).
    pub y: Option<f64>,
    /// Modifiers held (pixel route): cmd/super, ctrl, shift, alt/option.
    pub modifier: Option<Vec<String>>,
    /// Mouse button. Default left; another button double-clicks by pointer (at the element's centre).
    pub button: Option<MouseButton>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct DoubleClick;

#[async_trait]
impl ToolSpec for DoubleClick {
    type Args = DoubleClickArgs;
    const NAME: &'static str = "double_click";
    const DESCRIPTION: &'static str = "Double-click an element (its activate/open action when it has one, else a double click at its centre) or a window-local point.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&[
        "input.pointer.click",
        "input.pointer.click.left",
        "input.pointer.click.double",
        "accessibility.element_tokens",
        "input.delivery_mode",
    ]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: DoubleClickArgs) -> Result<ToolOutput, ToolError> {
        run_click(
            ctx,
            ClickRequest {
                kind: ClickKind::Double,
                pid: a.pid,
                window_id: a.window_id,
                element_index: a.element_index,
                snapshot_id: a.snapshot_id,
                x: a.x,
                y: a.y,
                action: None,
                count: 2,
                modifier: a.modifier.unwrap_or_default(),
                button: a.button.unwrap_or(MouseButton::Left).number(),
                delivery_mode: a.delivery_mode,
                settle_ms: a.settle_ms,
            },
        )
        .await
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RightClickArgs {
    /// Target process id.
    pub pid: u32,
    /// Window of the element_index or pixel coordinates.
    pub window_id: Option<u64>,
    /// Runs the element's context-menu action when it has one, else right-clicks its centre.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// X in window-local screenshot pixels (with y).
    pub x: Option<f64>,
    /// Y in window-local screenshot pixels (with x).
    pub y: Option<f64>,
    /// Accessibility action to run instead of the menu action (element_index only).
    pub action: Option<String>,
    /// Modifiers held (pixel route).
    pub modifier: Option<Vec<String>>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct RightClick;

#[async_trait]
impl ToolSpec for RightClick {
    type Args = RightClickArgs;
    const NAME: &'static str = "right_click";
    const DESCRIPTION: &'static str = "Right-click an element (its context-menu action, or `action`) or a window-local point (button 3).";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&[
        "input.pointer.click",
        "input.pointer.click.right",
        "accessibility.element_tokens",
        "input.delivery_mode",
    ]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    async fn run(&self, ctx: &ToolContext, a: RightClickArgs) -> Result<ToolOutput, ToolError> {
        run_click(
            ctx,
            ClickRequest {
                kind: ClickKind::Right,
                pid: a.pid,
                window_id: a.window_id,
                element_index: a.element_index,
                snapshot_id: a.snapshot_id,
                x: a.x,
                y: a.y,
                action: a.action,
                count: 1,
                modifier: a.modifier.unwrap_or_default(),
                button: 3,
                delivery_mode: a.delivery_mode,
                settle_ms: a.settle_ms,
            },
        )
        .await
    }
}

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

    async fn run(&self, ctx: &ToolContext, a: DragArgs) -> Result<ToolOutput, ToolError> {
        for (name, v) in [
            ("from_x", a.from_x),
            ("from_y", a.from_y),
            ("to_x", a.to_x),
            ("to_y", a.to_y),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(ToolError::invalid(format!(
                    "`{name}`: must be a non-negative number, got {v}"
                )));
            }
        }
        let settle_ms = check_settle(a.settle_ms)?;
        let (duration, steps) = gesture_timing(a.duration_ms, a.steps)?;
        let mods = parse_modifiers(&a.modifier.unwrap_or_default(), "modifier")?;
        let mode = delivery(a.delivery_mode);
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let window = target_window(p, a.pid, a.window_id).await?;
        // Coordinates are in the screenshot's pixels (max_image_dimension may scale them).
        let scale = screenshot_scale(ctx, &window);
        for (name, v, limit) in [
            ("from_x", a.from_x, window.bounds.width),
            ("to_x", a.to_x, window.bounds.width),
            ("from_y", a.from_y, window.bounds.height),
            ("to_y", a.to_y, window.bounds.height),
        ] {
            let limit = (limit as f64 * scale).round();
            if v >= limit {
                return Err(ToolError::invalid(format!(
                    "`{name}`: {v} is outside the window ({limit} px)"
                )));
            }
        }
        let (from_x, from_y, to_x, to_y) = (
            a.from_x / scale,
            a.from_y / scale,
            a.to_x / scale,
            a.to_y / scale,
        );
        let button = a.button.unwrap_or(MouseButton::Left).number();
        let (fx, fy, tx, ty) = (from_x as i32, from_y as i32, to_x as i32, to_y as i32);
        let mut events = vec![InputEvent::Move { x: fx, y: fy }];
        events.extend(mods_down(&mods));
        events.push(InputEvent::Button {
            x: fx,
            y: fy,
            button,
            down: true,
        });
        let pause = Duration::from_millis(duration / steps as u64);
        for i in 1..=steps {
            let t = i as f64 / steps as f64;
            let x = (from_x + (to_x - from_x) * t).round() as i32;
            let y = (from_y + (to_y - from_y) * t).round() as i32;
            events.push(InputEvent::Pause(pause));
            events.push(InputEvent::Move { x, y });
        }
        events.push(InputEvent::Button {
            x: tx,
            y: ty,
            button,
            down: false,
        });
        events.extend(mods_up(&mods));
        let expect = expect_window_change(p, a.pid, &window, settle_ms).await;
        let pointing = point_at(ctx, p, on_screen(&window, (fx, fy)), Gesture::Press).await;
        let (sent, ()) = tokio::join!(
            p.send_input(&window, &events, mode),
            pointing.drag_to(
                ctx,
                p,
                on_screen(&window, (tx, ty)),
                Duration::from_millis(duration)
            )
        );
        sent?;
        let path = event_path(mode);
        let mut outcome = Outcome::new(format!("dragged ({fx}, {fy}) → ({tx}, {ty})"), path)
            .with("click_point", json!({ "x": fx, "y": fy }))
            .with("end_point", json!({ "x": tx, "y": ty }));
        if mode == Delivery::Background {
            outcome.escalation =
                synthetic_caveat(p, a.pid, Synthetic::Pointer(window.window_id)).await;
        }
        settle(p, &expect, settle_ms, &mut outcome, "foreground").await;
        pointing.landed(ctx, platform.clone()).await;
        Ok(outcome.into_output(Some(a.pid), Some(&window)))
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
    const CONTRACT: Contract = Contract {
        capabilities: &["agent_cursor.move", "input.pointer.move"],
        risk: Risk::R1,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

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
