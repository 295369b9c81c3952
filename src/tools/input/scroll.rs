//! scroll on the input pipeline: through the element's scroll bar value, or its rows
//! revealed, in the background; else wheel clicks or page keys at a point.

use super::pipeline::{At, Check, Deliver, InputAct, Plan};
use super::*;
use crate::dispatch::Contract;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ScrollArgs {
    #[serde(flatten, deserialize_with = "crate::dispatch::with_field_names")]
    pub at: Address,
    /// up, down, left or right.
    pub direction: Direction,
    /// How many lines or pages (1-50). Default 3.
    pub amount: Option<u32>,
    /// line (default) or page.
    pub by: Option<ScrollUnit>,
}

pub struct Scroll;

/// The scroll bar that scrolls `node` in `direction`: itself, a descendant, or a sibling.
pub(super) fn scroll_bar_for(
    tree: &crate::platform::AxTree,
    node_index: usize,
    vertical: bool,
) -> Option<usize> {
    let orientation = if vertical { "vertical" } else { "horizontal" };
    let is_bar = |i: usize| {
        let n = &tree.nodes[i];
        n.role == "scroll_bar"
            && (n.states.iter().any(|s| s == orientation)
                || !n
                    .states
                    .iter()
                    .any(|s| s == "vertical" || s == "horizontal"))
    };
    let mut scope = vec![node_index];
    let mut at = Some(node_index);
    for _ in 0..4 {
        let Some(i) = at else { break };
        // Breadth-first through this node's subtree.
        let mut queue = std::collections::VecDeque::from([i]);
        while let Some(k) = queue.pop_front() {
            if is_bar(k) {
                return Some(k);
            }
            queue.extend(tree.nodes[k].children.iter().copied());
        }
        at = tree.nodes[i].parent;
        scope.push(i);
    }
    None
}

#[async_trait]
impl ToolSpec for Scroll {
    type Args = ScrollArgs;
    const NAME: &'static str = "scroll";
    const DESCRIPTION: &'static str = "Scroll a view. With an element (element_index or at x/y) its scroll bar moves through the accessibility API, or its rows are scrolled into view (background-safe, verified); otherwise wheel events (line) or Page Up/Down (page) go to the window.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        destructive: false,
        ..Contract::input(&[
            "input.pointer.scroll",
            "input.scroll.coordinates",
            "accessibility.element_tokens",
            "input.delivery_mode",
        ])
    };

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    fn check(a: &ScrollArgs) -> Result<(), ToolError> {
        pipeline::check(&a.at, a)
    }

    async fn run(&self, ctx: &ToolContext, a: ScrollArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.at, &a).await
    }
}

impl ScrollArgs {
    fn amount(&self) -> u32 {
        self.amount.unwrap_or(3)
    }

    fn by(&self) -> ScrollUnit {
        self.by.unwrap_or(ScrollUnit::Line)
    }

    fn vertical(&self) -> bool {
        matches!(self.direction, Direction::Up | Direction::Down)
    }

    /// -1 towards the start (up, left), 1 towards the end.
    fn sign(&self) -> f64 {
        if matches!(self.direction, Direction::Up | Direction::Left) {
            -1.0
        } else {
            1.0
        }
    }

    /// The element's scroll bar, moved through its value; None where it has none.
    async fn through_bar(
        &self,
        at: &At<'_>,
        tree: &crate::platform::AxTree,
        node: usize,
    ) -> Option<Plan<()>> {
        let bar = scroll_bar_for(tree, node, self.vertical()).map(|b| tree.nodes[b].clone())?;
        let range = at.p().value_range(&bar.handle).await.ok()?;
        let span = (range.maximum - range.minimum).max(0.0);
        let line = if range.step > 0.0 {
            range.step
        } else {
            (span / 20.0).max(1.0)
        };
        let unit = match self.by() {
            ScrollUnit::Page => (span / 4.0).max(line),
            ScrollUnit::Line => line,
        };
        let value = (range.current + self.sign() * unit * self.amount() as f64)
            .clamp(range.minimum, range.maximum);
        let mut outcome = Outcome::new(
            format!(
                "scrolled {:?} {} {:?}s ({} → {value})",
                self.direction,
                self.amount(),
                self.by(),
                range.current
            )
            .to_lowercase(),
            Route::ElementValue,
        )
        .with("scroll_bar", element_brief(None, &bar))
        .with("value", json!(value));
        let expect = Expect::ValueIs {
            handle: bar.handle.clone(),
            value,
        };
        let check = if value == range.current {
            outcome.what.push_str(" (already at the end)");
            Check::Known(Effect::SuspectedNoop)
        } else {
            Check::read_back(expect, at.settle_ms(), "foreground")
        };
        let send = Deliver::Value {
            handle: bar.handle,
            value,
        };
        Some(Plan::new(outcome, send, check, ()))
    }

    /// No scroll bar: rows of the element's view are scrolled into view (web lists, whose
    /// scroll bars are not in the tree). Lines count as rows here. None where the
    /// element cannot reveal its rows.
    async fn through_rows(&self, at: &At<'_>, node: &AxNode) -> Option<Plan<()>> {
        let rows = match self.by() {
            ScrollUnit::Page => self.amount() * 4,
            ScrollUnit::Line => self.amount(),
        } as usize;
        let direction = self.direction;
        match at
            .p()
            .reveal_sibling(&node.handle, self.sign() > 0.0, rows)
            .await
        {
            Ok(Some(row)) => {
                let outcome = Outcome::new(
                    format!("scrolled {direction:?} {rows} rows into view").to_lowercase(),
                    Route::ElementScrollTo,
                );
                let expect = Expect::StateChange {
                    handle: row,
                    state: "showing",
                    before: false,
                };
                let check = Check::read_back(expect, at.settle_ms(), "foreground");
                Some(Plan::new(outcome, Deliver::Done, check, ()))
            }
            Ok(None) => {
                let outcome = Outcome::new(
                    format!("no rows to scroll {direction:?}: the view is at its end")
                        .to_lowercase(),
                    Route::ElementScrollTo,
                );
                let check = Check::Known(Effect::SuspectedNoop);
                Some(Plan::new(outcome, Deliver::Done, check, ()))
            }
            Err(_) => None,
        }
    }

    /// Wheel clicks (lines) or Page Up/Down (pages) at a point.
    fn wheel_events(&self, (x, y): (i32, i32)) -> Vec<InputEvent> {
        let mut events = vec![InputEvent::Move { x, y }];
        let (button, keysym) = match self.direction {
            Direction::Up => (4, 0xff55),
            Direction::Down => (5, 0xff56),
            Direction::Left => (6, 0xff55),
            Direction::Right => (7, 0xff56),
        };
        for _ in 0..self.amount() {
            for down in [true, false] {
                events.push(match self.by() {
                    ScrollUnit::Line => InputEvent::Button { x, y, button, down },
                    ScrollUnit::Page => InputEvent::Key { keysym, down },
                });
            }
        }
        events
    }

    /// Where the wheel goes: the point; an element's visible part, or, where its list clips
    /// it whole, the list's (a point outside them, outside the window or past the list,
    /// would scroll whatever lies there); else the window's centre.
    fn wheel_point(
        at: &At<'_>,
        found: &Option<(crate::platform::AxTree, usize)>,
    ) -> Result<(i32, i32), ToolError> {
        let window = at.window();
        match (&at.target, found) {
            (Target::Pixel { x, y, .. }, _) => Ok((*x, *y)),
            (Target::Element { .. }, Some((t, n))) if t.nodes[*n].frame.is_some() => Ok(at
                .target
                .visible_part()
                .or_else(|| at.target.container_visible_part())
                .ok_or_else(|| {
                    ToolError::failed(format!(
                        "no part of {} shows (its container or the window clips it), so no wheel can reach it; scroll its container first",
                        describe(&t.nodes[*n])
                    ))
                })?
                .center()),
            _ => Ok((window.bounds.width / 2, window.bounds.height / 2)),
        }
    }

    async fn by_wheel(
        &self,
        at: &At<'_>,
        found: &Option<(crate::platform::AxTree, usize)>,
    ) -> Result<Plan<()>, ToolError> {
        let (x, y) = Self::wheel_point(at, found)?;
        // A scroll shows in the tree (other rows showing), so it is always read back: a
        // toolkit that ignores synthetic wheel events (Qt) is then named, not guessed.
        let wait = at.settle_ms().max(READ_BACK_MS);
        let expect = at.window_change(wait).await;
        let outcome = Outcome::new(
            format!(
                "scrolled {:?} {} {:?}s at ({x}, {y})",
                self.direction,
                self.amount(),
                self.by()
            )
            .to_lowercase(),
            event_path(at.mode),
        );
        let send = Deliver::Events {
            events: self.wheel_events((x, y)),
            kind: Synthetic::Pointer(at.window().window_id),
        };
        let check = Check::ReadBack {
            expect,
            wait,
            escalate_to: "foreground",
        };
        Ok(Plan::new(outcome, send, check, ()).pointing((x, y), Gesture::Move))
    }
}

#[async_trait]
impl InputAct for ScrollArgs {
    type Memo = ();

    fn check(&self, _address: &Address) -> Result<(), ToolError> {
        let amount = self.amount();
        if !(1..=50).contains(&amount) {
            return Err(ToolError::invalid(format!(
                "`amount`: must be 1-50, got {amount}"
            )));
        }
        Ok(())
    }

    async fn plan(&self, at: &At<'_>) -> Result<Plan<()>, ToolError> {
        // The addressed element, or the one at the point, in its tree.
        let found = match &at.target {
            Target::Element {
                snapshot, index, ..
            } => Some((snapshot.tree.clone(), snapshot.elements[*index])),
            Target::Pixel { x, y, .. } => {
                let tree = tree_for(at.ctx, at.p(), at.pid, at.window()).await?;
                node_at(&tree, *x, *y, false).map(|n| (tree, n))
            }
            Target::Window { .. } => None,
        };
        // An addressed element's view scrolls through its scroll bar in either mode (the
        // element may be clipped where no wheel can reach it); a point in the foreground
        // gets the real wheel it asked for.
        let through_value =
            at.mode == Delivery::Background || matches!(at.target, Target::Element { .. });
        if let (true, Some((tree, node))) = (through_value, &found) {
            if let Some(plan) = self.through_bar(at, tree, *node).await {
                return Ok(plan);
            }
        }
        if let (Delivery::Background, true, Target::Element { node, .. }) =
            (at.mode, self.vertical(), &at.target)
        {
            if let Some(plan) = self.through_rows(at, node).await {
                return Ok(plan);
            }
        }
        self.by_wheel(at, &found).await
    }
}
