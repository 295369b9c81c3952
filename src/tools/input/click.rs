//! The click tools: click, double_click and right_click, one [`ClickAct`] each on the input
//! pipeline. A click runs its element's action in the background (the element given, or
//! the one under the point), focuses a text field as a person's click would, and is
//! otherwise sent as button events at the point, or at the element's visible centre.

use super::pipeline::{At, Check, Deliver, InputAct, Plan};
use super::*;
use crate::dispatch::Contract;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClickKind {
    Click,
    Double,
    Right,
}

impl ClickKind {
    fn verb(self) -> &'static str {
        match self {
            ClickKind::Click => "clicked",
            ClickKind::Double => "double-clicked",
            ClickKind::Right => "right-clicked",
        }
    }

    /// The element actions tried, in order, when the call names none.
    fn actions(self) -> &'static [&'static str] {
        match self {
            ClickKind::Click => CLICK_ACTIONS,
            ClickKind::Double => DOUBLE_CLICK_ACTIONS,
            ClickKind::Right => MENU_ACTIONS,
        }
    }
}

/// A click's own part: its kind, the action asked for, the button, count and modifiers.
pub(super) struct ClickAct {
    kind: ClickKind,
    action: Option<String>,
    count: u8,
    modifiers: Vec<String>,
    button: u8,
}

impl ClickAct {
    fn new(
        kind: ClickKind,
        action: Option<String>,
        count: u8,
        modifiers: Option<Vec<String>>,
        button: Option<MouseButton>,
    ) -> Self {
        let button = match kind {
            ClickKind::Right => 3,
            _ => button.unwrap_or(MouseButton::Left).number(),
        };
        // A right-button click is a right click (its element's menu action first),
        // whichever tool sent it.
        let kind = if kind == ClickKind::Click && button == 3 {
            ClickKind::Right
        } else {
            kind
        };
        ClickAct {
            kind,
            action,
            count,
            modifiers: modifiers.unwrap_or_default(),
            button,
        }
    }

    fn mods(&self) -> Result<Vec<Modifier>, ToolError> {
        parse_modifiers(&self.modifiers, "modifier")
    }

    /// A plain left click with nothing held and no action named.
    fn plain(&self) -> bool {
        self.kind == ClickKind::Click
            && self.count == 1
            && self.button == 1
            && self.modifiers.is_empty()
            && self.action.is_none()
    }

    /// What shows a click landed: any change within `settle_ms` when given; without it, a
    /// click's within the toolkit's latency (its effect is read back unless the app
    /// cannot tell), and a right click's too where the platform sees the window's popups
    /// (the context menu it opens is one). A double click reads back only when asked: what
    /// it opens (a file, in another app) need not show in the window.
    async fn expectation(
        &self,
        at: &At<'_>,
        toggled: Option<(&AxNode, &ElementReading)>,
    ) -> Expect {
        if let Some((node, live)) = toggled {
            return toggle_expectation(node, live);
        }
        match at.settle_given {
            None if self.kind == ClickKind::Click => {
                expect_within_latency(at.ctx, at.p(), at.pid, at.window()).await
            }
            None if self.kind == ClickKind::Right
                && at.p().popups(at.window().window_id).await.is_some() =>
            {
                expect_within_latency(at.ctx, at.p(), at.pid, at.window()).await
            }
            ms => at.window_change(ms.unwrap_or(0)).await,
        }
    }

    /// A person's click on a text field puts the caret there; its accessibility action
    /// (activate: Enter) would not. So a plain background click on one focuses it. None
    /// where that is not the case, or the toolkit will not move the focus that way (GTK 4:
    /// it is then clicked by pointer, `by_pointer`).
    async fn focus_text_field(&self, at: &At<'_>, by_pointer: &mut bool) -> Option<Plan<()>> {
        let Target::Element { node, index, .. } = &at.target else {
            return None;
        };
        if !self.plain() || at.mode != Delivery::Background || !takes_text(node) {
            return None;
        }
        if !focus_unless_focused(at.p(), node).await {
            *by_pointer = true;
            return None;
        }
        // Read back: focus_unless_focused saw the element say it has the focus.
        let outcome = Outcome::new(format!("focused {}", describe(node)), Route::ElementFocus)
            .with("element", element_brief(Some(*index), node));
        Some(Plan::new(
            outcome,
            Deliver::Done,
            Check::Known(Effect::Confirmed),
            (),
        ))
    }

    /// The element's own action, when it has one for this click.
    async fn by_action(
        &self,
        at: &At<'_>,
        node: &AxNode,
        index: Option<usize>,
        live: &ElementReading,
    ) -> Result<Option<Plan<()>>, ToolError> {
        let requested = index.and(self.action.as_deref());
        let Some(action) = pick_action(node, requested, self.kind.actions())? else {
            return Ok(None);
        };
        let toggled = is_toggle_click(node, self.kind).then_some((node, live));
        let expect = self.expectation(at, toggled).await;
        let times = if self.kind == ClickKind::Click {
            self.count
        } else {
            1
        };
        let point = match &at.target {
            Target::Pixel { x, y, .. } => Some((*x, *y)),
            _ => at.target.visible_part().map(|f| f.center()),
        };
        let mut outcome = Outcome::new(
            format!("{} {}", self.kind.verb(), describe(node)),
            Route::ElementAction,
        )
        .with("action", json!(action))
        .with("element", element_brief(index, node));
        if let Some(f) = node.frame {
            let (cx, cy) = f.center();
            outcome = outcome.with("click_point", json!({ "x": cx, "y": cy }));
        }
        if let Target::Pixel { x, y, .. } = at.target {
            outcome = outcome
                .with("click_point", json!({ "x": x, "y": y }))
                .with("resolved_from_pixel", json!(true));
        }
        let send = Deliver::Action {
            handle: node.handle.clone(),
            action,
            times,
        };
        let plan = Plan::new(
            outcome,
            send,
            Check::read_back(expect, at.settle_ms(), "px"),
            (),
        );
        Ok(Some(match point {
            Some(point) => plan.pointing(point, Gesture::Click),
            None => plan,
        }))
    }

    /// Button events at the point, or at the element's visible centre.
    async fn by_pointer(
        &self,
        at: &At<'_>,
        element: Option<(&AxNode, Option<usize>)>,
        live: Option<&ElementReading>,
    ) -> Result<Plan<()>, ToolError> {
        let (x, y) = match &at.target {
            Target::Pixel { x, y, .. } => (*x, *y),
            // Its visible part: a centre its list or the window clips would land elsewhere.
            Target::Element { node, .. } => at.target.visible_part().map(|f| f.center()).ok_or_else(|| {
                ToolError::failed(format!(
                    "{} has no action for this and no part of it shows to click (its container or the window clips it): scroll it into view first",
                    describe(node)
                ))
            })?,
            Target::Window { .. } => unreachable!("a click has an element or a point"),
        };
        let count = if self.kind == ClickKind::Double {
            2
        } else {
            self.count
        };
        // A toggle clicked by pointer (GTK 4 check boxes expose no action) implies its
        // checked state flips, read back like the action route's.
        let toggled = element
            .map(|(node, _)| node)
            .filter(|n| is_toggle_click(n, self.kind))
            .zip(live);
        let expect = self.expectation(at, toggled).await;
        let mut outcome = Outcome::new(
            format!("{} at ({x}, {y})", self.kind.verb()),
            event_path(at.mode),
        )
        .with("click_point", json!({ "x": x, "y": y }));
        if let Some((node, index)) = element {
            outcome = outcome.with("element", element_brief(index, node));
        }
        let send = Deliver::Events {
            events: click_events(x, y, self.button, count, &self.mods()?),
            kind: Synthetic::Pointer(at.window().window_id),
        };
        let check = Check::read_back(expect, at.settle_ms(), "foreground");
        Ok(Plan::new(outcome, send, check, ()).pointing((x, y), Gesture::Click))
    }
}

#[async_trait]
impl InputAct for ClickAct {
    type Memo = ();

    fn check(&self, address: &Address) -> Result<(), ToolError> {
        self.mods()?;
        if !(1..=3).contains(&self.count) {
            return Err(ToolError::invalid(format!(
                "`count`: must be 1, 2 or 3, got {}",
                self.count
            )));
        }
        if self.action.is_some() && address.element_index.is_none() {
            return Err(ToolError::invalid("`action`: only with `element_index`"));
        }
        if address.element_index.is_none() && !address.has_point() {
            return Err(ToolError::invalid(
                "give `element_index` (with `window_id`) or `x` and `y`",
            ));
        }
        Ok(())
    }

    async fn plan(&self, at: &At<'_>) -> Result<Plan<()>, ToolError> {
        let mut click_by_pointer = false;
        if let Some(plan) = self.focus_text_field(at, &mut click_by_pointer).await {
            return Ok(plan);
        }
        // Background with no modifiers: act on the element (given, or under the pixel). So
        // too in the foreground for an element with no frame on screen (scrolled out of
        // its view): no pointer can reach it, its action can.
        let unreachable_by_pointer =
            matches!(&at.target, Target::Element { node, .. } if node.frame.is_none());
        let act_on_element = (at.mode == Delivery::Background || unreachable_by_pointer)
            && self.modifiers.is_empty()
            && !click_by_pointer
            && (self.button == 1 || self.kind == ClickKind::Right);
        let (element, index) = match &at.target {
            Target::Element { node, index, .. } => (Some(AxNode::clone(node)), Some(*index)),
            Target::Pixel { x, y, .. } if act_on_element => (at.element_at(*x, *y).await, None),
            _ => (None, None),
        };
        let live = match &element {
            Some(node) => Some(live_element(at.p(), node).await?),
            None => None,
        };
        if let (true, Some(node), Some(live)) = (act_on_element, &element, &live) {
            if let Some(plan) = self.by_action(at, node, index, live).await? {
                return Ok(plan);
            }
        }
        self.by_pointer(at, element.as_ref().map(|n| (n, index)), live.as_ref())
            .await
    }

    async fn follow_up(
        &self,
        at: &At<'_>,
        outcome: Outcome,
        expect: &Expect,
        _memo: (),
    ) -> Result<Outcome, ToolError> {
        // A toggle's checked state after the click.
        Ok(with_checked(at.p(), outcome, expect).await)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ClickArgs {
    #[serde(flatten, deserialize_with = "crate::dispatch::with_field_names")]
    pub at: Address,
    /// Accessibility action to run (element_index only), e.g. toggle. Default: the element's primary one.
    pub action: Option<String>,
    /// Clicks: 1-3 (pixel route). Default 1.
    #[schemars(range(min = 1, max = 3))]
    pub count: Option<u8>,
    /// Modifiers held during the click: cmd/super, ctrl, shift, alt/option (pixel route).
    pub modifier: Option<Vec<String>>,
    /// Mouse button (pixel route). Default left.
    pub button: Option<MouseButton>,
}

impl ClickArgs {
    fn act(&self) -> ClickAct {
        let count = self.count.unwrap_or(1);
        ClickAct::new(
            ClickKind::Click,
            self.action.clone(),
            count,
            self.modifier.clone(),
            self.button,
        )
    }
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

    fn check(a: &ClickArgs) -> Result<(), ToolError> {
        pipeline::check(&a.at, &a.act())
    }

    async fn run(&self, ctx: &ToolContext, a: ClickArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.at, &a.act()).await
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DoubleClickArgs {
    #[serde(flatten, deserialize_with = "crate::dispatch::with_field_names")]
    pub at: Address,
    /// Modifiers held (pixel route): cmd/super, ctrl, shift, alt/option.
    pub modifier: Option<Vec<String>>,
    /// Mouse button. Default left; another button double-clicks by pointer (at the element's centre).
    pub button: Option<MouseButton>,
}

impl DoubleClickArgs {
    fn act(&self) -> ClickAct {
        ClickAct::new(
            ClickKind::Double,
            None,
            2,
            self.modifier.clone(),
            self.button,
        )
    }
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

    fn check(a: &DoubleClickArgs) -> Result<(), ToolError> {
        pipeline::check(&a.at, &a.act())
    }

    async fn run(&self, ctx: &ToolContext, a: DoubleClickArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.at, &a.act()).await
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RightClickArgs {
    #[serde(flatten, deserialize_with = "crate::dispatch::with_field_names")]
    pub at: Address,
    /// Accessibility action to run instead of the menu action (element_index only).
    pub action: Option<String>,
    /// Modifiers held (pixel route).
    pub modifier: Option<Vec<String>>,
}

impl RightClickArgs {
    fn act(&self) -> ClickAct {
        ClickAct::new(
            ClickKind::Right,
            self.action.clone(),
            1,
            self.modifier.clone(),
            None,
        )
    }
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

    fn check(a: &RightClickArgs) -> Result<(), ToolError> {
        pipeline::check(&a.at, &a.act())
    }

    async fn run(&self, ctx: &ToolContext, a: RightClickArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.at, &a.act()).await
    }
}
