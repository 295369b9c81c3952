//! scroll: through the element's scroll bar value in the background, else wheel or
//! page keys at a point.

use super::*;
use crate::dispatch::Contract;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollArgs {
    /// Target process id.
    pub pid: u32,
    /// up, down, left or right.
    pub direction: Direction,
    /// How many lines or pages (1-50). Default 3.
    pub amount: Option<u32>,
    /// line (default) or page.
    pub by: Option<ScrollUnit>,
    /// Window to scroll; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// Scrollable element (or one inside it): its scroll bar moves through the accessibility API.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// Scroll at this window-local point (with y).
    pub x: Option<f64>,
    /// Scroll at this window-local point (with x).
    pub y: Option<f64>,
    /// background (default) or foreground.
    pub delivery_mode: Option<Delivery>,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
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

    async fn run(&self, ctx: &ToolContext, a: ScrollArgs) -> Result<ToolOutput, ToolError> {
        check_addressing(a.element_index, a.window_id, a.x, a.y)?;
        let settle_ms = check_settle(a.settle_ms)?;
        let amount = a.amount.unwrap_or(3);
        if !(1..=50).contains(&amount) {
            return Err(ToolError::invalid(format!(
                "`amount`: must be 1-50, got {amount}"
            )));
        }
        let by = a.by.unwrap_or(ScrollUnit::Line);
        let mode = delivery(a.delivery_mode);
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let element = element_ref(a.element_index, a.snapshot_id.as_deref())?;
        let target = resolve(ctx, p, a.pid, a.window_id, element, a.x, a.y).await?;
        let window = target.window().clone();
        let vertical = matches!(a.direction, Direction::Up | Direction::Down);
        let sign = if matches!(a.direction, Direction::Up | Direction::Left) {
            -1.0
        } else {
            1.0
        };

        // The element's scroll bar, moved through its value.
        let tree_and_node = match &target {
            Target::Element {
                snapshot, index, ..
            } => Some((snapshot.tree.clone(), snapshot.elements[*index])),
            Target::Pixel { x, y, .. } => {
                let tree = tree_for(ctx, p, a.pid, &window).await?;
                node_at(&tree, *x, *y, false).map(|n| (tree, n))
            }
            Target::Window { .. } => None,
        };
        // An addressed element's view scrolls through its scroll bar in either mode (the
        // element may be clipped where no wheel can reach it); a point in the foreground
        // gets the real wheel it asked for.
        let through_value =
            mode == Delivery::Background || matches!(target, Target::Element { .. });
        if through_value {
            if let Some(bar) = tree_and_node
                .as_ref()
                .and_then(|(t, n)| scroll_bar_for(t, *n, vertical).map(|b| t.nodes[b].clone()))
            {
                if let Ok(range) = p.value_range(&bar.handle).await {
                    let span = (range.maximum - range.minimum).max(0.0);
                    let line = if range.step > 0.0 {
                        range.step
                    } else {
                        (span / 20.0).max(1.0)
                    };
                    let unit = if by == ScrollUnit::Page {
                        (span / 4.0).max(line)
                    } else {
                        line
                    };
                    let target_value = (range.current + sign * unit * amount as f64)
                        .clamp(range.minimum, range.maximum);
                    p.set_value(&bar.handle, target_value).await?;
                    let mut outcome = Outcome::new(
                        format!(
                            "scrolled {:?} {amount} {:?}s ({} → {target_value})",
                            a.direction, by, range.current
                        )
                        .to_lowercase(),
                        Route::ElementValue,
                    )
                    .with("scroll_bar", element_brief(None, &bar))
                    .with("value", json!(target_value));
                    let expect = Expect::ValueIs {
                        handle: bar.handle.clone(),
                        value: target_value,
                    };
                    if target_value == range.current {
                        outcome.effect = Effect::SuspectedNoop;
                        outcome.what.push_str(" (already at the end)");
                    } else {
                        let wait = expect.read_back_ms(settle_ms);
                        settle(p, &expect, wait, &mut outcome, "foreground").await;
                    }
                    return Ok(outcome.into_output(Some(a.pid), Some(&window)));
                }
            }
        }
        // No scroll bar: rows of the view are scrolled into view (web lists, whose
        // scroll bars are not in the tree). Lines count as rows here.
        if let (Delivery::Background, true, Target::Element { node, .. }) =
            (mode, vertical, &target)
        {
            let rows = if by == ScrollUnit::Page {
                amount * 4
            } else {
                amount
            } as usize;
            match p.reveal_sibling(&node.handle, sign > 0.0, rows).await {
                Ok(Some(row)) => {
                    let mut outcome = Outcome::new(
                        format!("scrolled {:?} {rows} rows into view", a.direction).to_lowercase(),
                        Route::ElementScrollTo,
                    );
                    let expect = Expect::StateChange {
                        handle: row,
                        state: "showing",
                        before: false,
                    };
                    let wait = expect.read_back_ms(settle_ms);
                    settle(p, &expect, wait, &mut outcome, "foreground").await;
                    return Ok(outcome.into_output(Some(a.pid), Some(&window)));
                }
                Ok(None) => {
                    let mut outcome = Outcome::new(
                        format!(
                            "no rows to scroll {:?}: the view is at its end",
                            a.direction
                        )
                        .to_lowercase(),
                        Route::ElementScrollTo,
                    );
                    outcome.effect = Effect::SuspectedNoop;
                    return Ok(outcome.into_output(Some(a.pid), Some(&window)));
                }
                Err(_) => {}
            }
        }
        // Wheel or page keys at a point.
        let (x, y) = match (&target, &tree_and_node) {
            (Target::Pixel { x, y, .. }, _) => (*x, *y),
            (Target::Element { .. }, Some((t, n))) if t.nodes[*n].frame.is_some() => {
                // The wheel goes to the element's visible part, or, where its list clips
                // it whole, to the list's: a point outside them (outside the window, or
                // past the list) would scroll whatever lies there.
                target
                    .visible_part()
                    .or_else(|| target.container_visible_part())
                    .ok_or_else(|| {
                        ToolError::failed(format!(
                            "no part of {} shows (its container or the window clips it), so no wheel can reach it; scroll its container first",
                            describe(&t.nodes[*n])
                        ))
                    })?
                    .center()
            }
            _ => (window.bounds.width / 2, window.bounds.height / 2),
        };
        let mut events = vec![InputEvent::Move { x, y }];
        for _ in 0..amount {
            match by {
                ScrollUnit::Line => {
                    let button = match a.direction {
                        Direction::Up => 4,
                        Direction::Down => 5,
                        Direction::Left => 6,
                        Direction::Right => 7,
                    };
                    events.push(InputEvent::Button {
                        x,
                        y,
                        button,
                        down: true,
                    });
                    events.push(InputEvent::Button {
                        x,
                        y,
                        button,
                        down: false,
                    });
                }
                ScrollUnit::Page => {
                    let keysym = if sign < 0.0 { 0xff55 } else { 0xff56 };
                    events.push(InputEvent::Key { keysym, down: true });
                    events.push(InputEvent::Key {
                        keysym,
                        down: false,
                    });
                }
            }
        }
        // A scroll shows in the tree (other rows showing), so it is always read back: a
        // toolkit that ignores synthetic wheel events (Qt) is then named, not guessed.
        let wait = settle_ms.max(READ_BACK_MS);
        let expect = expect_window_change(p, a.pid, &window, wait).await;
        let pointing = point_at(ctx, p, on_screen(&window, (x, y)), Gesture::Move).await;
        p.send_input(&window, &events, mode).await?;
        let path = event_path(mode);
        let mut outcome = Outcome::new(
            format!(
                "scrolled {:?} {amount} {:?}s at ({x}, {y})",
                a.direction, by
            )
            .to_lowercase(),
            path,
        );
        if mode == Delivery::Background {
            outcome.escalation =
                synthetic_caveat(p, a.pid, Synthetic::Pointer(window.window_id)).await;
        }
        settle(p, &expect, wait, &mut outcome, "foreground").await;
        pointing.landed(ctx, platform.clone()).await;
        Ok(outcome.into_output(Some(a.pid), Some(&window)))
    }
}
