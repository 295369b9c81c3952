//! set_value on the input pipeline: values, text and choices set through the
//! accessibility API, or stepped with keys where the toolkit would not tell its scripts.

use super::pipeline::{At, Check, Deliver, InputAct, Plan};
use super::*;
use crate::dispatch::Contract;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetValueArgs {
    /// Target process id.
    pub pid: u32,
    /// Window whose get_window_state produced element_index.
    pub window_id: u64,
    /// Element from the last get_window_state.
    pub element_index: usize,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// A number (sliders, spin buttons), an option's label (combo boxes, lists), or the text (text fields).
    pub value: String,
    /// Max ms to wait for the effect. Default 0.
    pub settle_ms: Option<u64>,
}

pub struct SetValue;

#[async_trait]
impl ToolSpec for SetValue {
    type Args = SetValueArgs;
    const NAME: &'static str = "set_value";
    const DESCRIPTION: &'static str = "Set an element's value through the accessibility API, without opening popups or moving focus: the numeric value of sliders and spin buttons, the selected option of combo boxes and lists (by label, case-insensitive), or the whole text of a text field.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract =
        Contract::input(&["input.keyboard.type", "accessibility.element_tokens"]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    fn check(a: &SetValueArgs) -> Result<(), ToolError> {
        pipeline::check(&a.address(), a)
    }

    async fn run(&self, ctx: &ToolContext, a: SetValueArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.address(), &a).await
    }
}

impl SetValueArgs {
    fn address(&self) -> Address {
        let snapshot = self.snapshot_id.clone();
        Address::of_element(
            self.pid,
            self.window_id,
            self.element_index,
            snapshot,
            self.settle_ms,
        )
    }

    /// An option of a combo box or list, by its label: chosen through the accessibility
    /// API, or, where the toolkit would not tell its scripts, stepped to with arrow keys.
    async fn choose(
        &self,
        at: &At<'_>,
        node: &AxNode,
        base: Outcome,
    ) -> Result<Plan<()>, ToolError> {
        let (p, label) = (at.p(), describe(node));
        let options = p.option_names(&node.handle).await?;
        let pos = options
            .iter()
            .position(|o| o.eq_ignore_ascii_case(self.value.trim()))
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "`value`: {label} has no option `{}` (options: {})",
                    self.value,
                    options.join(", ")
                ))
            })?;
        let chosen = options[pos].clone();
        let combo = node.role == "combo_box";
        let expect = if combo {
            Expect::OptionChosen {
                handle: node.handle.clone(),
                name: chosen.clone(),
                options: options.clone(),
            }
        } else {
            at.window_change(at.settle_ms().max(1)).await
        };
        let base = base.with("option_index", json!(pos));
        let (outcome, send) = if combo && value_set_is_silent(p, at.pid).await {
            if !step_combo_with_keys(p, at.window(), node, &options, pos).await? {
                return Err(ToolError::failed(format!(
                    "{label} would not take the keyboard focus, so no key was sent to choose `{chosen}`"
                )));
            }
            let outcome = base
                .saying(format!("selected `{chosen}` in {label} with arrow keys"))
                .routed(event_path(Delivery::Background))
                .with("note", json!(SILENT_VALUE_NOTE));
            (outcome, Deliver::Done)
        } else {
            let outcome = base
                .saying(format!("selected `{chosen}` in {label}"))
                .routed(Route::ElementSelection);
            let handle = node.handle.clone();
            (
                outcome,
                Deliver::Select {
                    handle,
                    option: pos,
                },
            )
        };
        Ok(Plan::new(
            outcome,
            send,
            Check::read_back(expect, at.settle_ms(), "px"),
            (),
        ))
    }

    /// A number within the element's range: set through the accessibility API, or, where
    /// the toolkit would not tell its scripts, typed over the field's text.
    async fn number(
        &self,
        at: &At<'_>,
        node: &AxNode,
        range: crate::platform::ValueRange,
        base: Outcome,
    ) -> Result<Plan<()>, ToolError> {
        let label = describe(node);
        let v: f64 = self.value.trim().parse().map_err(|_| {
            ToolError::invalid(format!(
                "`value`: {label} takes a number, got `{}`",
                self.value
            ))
        })?;
        if v < range.minimum || v > range.maximum {
            return Err(ToolError::invalid(format!(
                "`value`: {v} is outside {label}'s range {}..{}",
                range.minimum, range.maximum
            )));
        }
        let handle = node.handle.clone();
        let check = Check::read_back(
            Expect::ValueIs {
                handle: handle.clone(),
                value: v,
            },
            at.settle_ms(),
            "px",
        );
        if !(is_editable(node) && value_set_is_silent(at.p(), at.pid).await) {
            let outcome = base
                .saying(format!("set {label} to {v}"))
                .routed(Route::ElementValue);
            return Ok(Plan::new(
                outcome,
                Deliver::Value { handle, value: v },
                check,
                (),
            ));
        }
        let typed = if v.fract() == 0.0 {
            format!("{}", v as i64)
        } else {
            v.to_string()
        };
        if !focus_unless_focused(at.p(), node).await {
            return Err(ToolError::failed(format!(
                "{label} would not take the keyboard focus, so no key was sent to type {typed}"
            )));
        }
        let mut events = mods_down(&[Modifier::Ctrl]);
        for down in [true, false] {
            let keysym = char_keysym('a');
            events.push(InputEvent::Key { keysym, down });
        }
        events.extend(mods_up(&[Modifier::Ctrl]));
        events.extend(text_key_events(&typed, 0));
        let outcome = base
            .saying(format!("typed {typed} over the value of {label}"))
            .routed(event_path(Delivery::Background))
            .with("note", json!(SILENT_VALUE_NOTE));
        let send = Deliver::Events {
            events,
            kind: Synthetic::Keys,
        };
        Ok(Plan::new(outcome, send, check, ()))
    }
}

#[async_trait]
impl InputAct for SetValueArgs {
    type Memo = ();

    async fn plan(&self, at: &At<'_>) -> Result<Plan<()>, ToolError> {
        let Target::Element { node, index, .. } = &at.target else {
            unreachable!("set_value addresses an element")
        };
        live_element(at.p(), node).await?;
        let label = describe(node);
        let base = Outcome::new("", Route::ElementValue)
            .with("element", element_brief(Some(*index), node));
        if CHOICE_ROLES.contains(&node.role.as_str()) {
            return self.choose(at, node, base).await;
        }
        if let Ok(range) = at.p().value_range(&node.handle).await {
            return self.number(at, node, range, base).await;
        }
        if !is_editable(node) {
            return Err(ToolError::failed(format!(
                "{label} has no value to set (not a slider, spin button, combo box, list or text field)"
            )));
        }
        check_text(&self.value, "value")?;
        let outcome = base
            .saying(format!("set the text of {label}"))
            .routed(Route::ElementText);
        let (handle, text) = (node.handle.clone(), self.value.clone());
        let expect = Expect::TextIs {
            handle: handle.clone(),
            text: text.clone(),
        };
        let check = Check::read_back(expect, at.settle_ms(), "px");
        Ok(Plan::new(
            outcome,
            Deliver::Text { handle, text },
            check,
            (),
        ))
    }

    /// Qt's combo boxes take a selection in their popup list and keep showing the old
    /// option: nothing was chosen, so stepping to it with keys cannot choose twice. Then
    /// the element's value.
    async fn follow_up(
        &self,
        at: &At<'_>,
        mut outcome: Outcome,
        expect: &Expect,
        _memo: (),
    ) -> Result<Outcome, ToolError> {
        let Target::Element { node, .. } = &at.target else {
            return Ok(outcome);
        };
        let p = at.p();
        if outcome.effect == Effect::SuspectedNoop
            && node.role == "combo_box"
            && outcome.path == Route::ElementSelection
            && !takes_no_synthetic_keys(p, at.pid).await
        {
            if let Expect::OptionChosen { options, .. } = expect {
                let pos = outcome.fields["option_index"].as_u64().unwrap_or(0) as usize;
                if step_combo_with_keys(p, at.window(), node, options, pos).await? {
                    outcome.path = event_path(Delivery::Background);
                    outcome.escalation = None;
                    outcome = outcome.with("note", json!("the option was marked selected without being chosen; the combo box was stepped to it with arrow keys"));
                    let wait = expect.read_back_ms(at.settle_ms());
                    settle(p, expect, wait, &mut outcome, "foreground").await;
                }
            }
        }
        Ok(with_new_value(p, outcome, node).await)
    }
}

/// Whether the app ignores synthetic key events (GTK 4 reads XInput2 only).
pub(super) async fn takes_no_synthetic_keys(p: &dyn Platform, pid: u32) -> bool {
    synthetic_caveat(p, pid, Synthetic::Keys).await.is_some()
}

/// Chooses option `pos` of a closed combo box as a person's keys would: the box takes the
/// focus, then one arrow key per option between the one it shows and `pos` (each step tells
/// the app, as a `<select>`'s `change` events do). False, with nothing sent, when the box
/// would not take the focus.
pub(super) async fn step_combo_with_keys(
    p: &dyn Platform,
    window: &WindowInfo,
    node: &AxNode,
    options: &[String],
    pos: usize,
) -> Result<bool, ToolError> {
    // The option shown: the box's name when it is one (Qt, GTK), else the option that
    // says it is selected (a web `<select>` keeps its label).
    let shown = p.read_element(&node.handle).await.ok().map(|r| r.name);
    let selected = p.selected_options(&node.handle).await.unwrap_or_default();
    let from = shown
        .and_then(|n| options.iter().position(|o| *o == n))
        .or_else(|| {
            selected
                .first()
                .and_then(|c| options.iter().position(|o| o == c))
        })
        .unwrap_or(0);
    let key = parse_key(if pos >= from { "Down" } else { "Up" }, "value")?;
    let mut events = Vec::new();
    for _ in 0..pos.abs_diff(from) {
        events.push(InputEvent::Key {
            keysym: key,
            down: true,
        });
        events.push(InputEvent::Key {
            keysym: key,
            down: false,
        });
    }
    // Arrow keys anywhere else would move something else: only into the focused box.
    if !focus_unless_focused(p, node).await {
        return Ok(false);
    }
    p.send_input(window, &events, Delivery::Background).await?;
    Ok(true)
}
