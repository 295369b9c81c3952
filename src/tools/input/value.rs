//! set_value: values, text and choices set through the accessibility API, or stepped
//! with keys where the toolkit would not tell its scripts.

use super::*;
use crate::dispatch::Contract;

// set_value, scroll, drag, move_cursor.

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

    async fn run(&self, ctx: &ToolContext, a: SetValueArgs) -> Result<ToolOutput, ToolError> {
        let settle_ms = check_settle(a.settle_ms)?;
        let platform = ctx.platform().await?;
        let p = platform.as_ref();
        let element = element_ref(Some(a.element_index), a.snapshot_id.as_deref())?;
        let target = resolve(ctx, p, a.pid, Some(a.window_id), element, None, None).await?;
        let Target::Element {
            window,
            node,
            index,
            ..
        } = target
        else {
            unreachable!()
        };
        live_element(p, &node).await?;
        let label = describe(&node);
        let base = |what: String, path| {
            Outcome::new(what, path).with("element", element_brief(Some(index), &node))
        };

        let (mut outcome, expect) = if CHOICE_ROLES.contains(&node.role.as_str()) {
            let options = p.option_names(&node.handle).await?;
            let pos = options
                .iter()
                .position(|o| o.eq_ignore_ascii_case(a.value.trim()))
                .ok_or_else(|| {
                    ToolError::invalid(format!(
                        "`value`: {label} has no option `{}` (options: {})",
                        a.value,
                        options.join(", ")
                    ))
                })?;
            let chosen = options[pos].clone();
            let outcome = if node.role == "combo_box" && value_set_is_silent(p, a.pid).await {
                if !step_combo_with_keys(p, &window, &node, &options, pos).await? {
                    return Err(ToolError::failed(format!(
                        "{label} would not take the keyboard focus, so no key was sent to choose `{chosen}`"
                    )));
                }
                base(
                    format!("selected `{chosen}` in {label} with arrow keys"),
                    event_path(Delivery::Background),
                )
                .with("note", json!(SILENT_VALUE_NOTE))
            } else {
                p.select_option(&node.handle, pos).await?;
                base(
                    format!("selected `{chosen}` in {label}"),
                    Route::ElementSelection,
                )
            };
            (
                outcome.with("option_index", json!(pos)),
                if node.role == "combo_box" {
                    Expect::OptionChosen {
                        handle: node.handle.clone(),
                        name: chosen,
                        options,
                    }
                } else {
                    expect_window_change(p, a.pid, &window, settle_ms.max(1)).await
                },
            )
        } else if let Ok(range) = p.value_range(&node.handle).await {
            let v: f64 = a.value.trim().parse().map_err(|_| {
                ToolError::invalid(format!(
                    "`value`: {label} takes a number, got `{}`",
                    a.value
                ))
            })?;
            if v < range.minimum || v > range.maximum {
                return Err(ToolError::invalid(format!(
                    "`value`: {v} is outside {label}'s range {}..{}",
                    range.minimum, range.maximum
                )));
            }
            let expect = Expect::ValueIs {
                handle: node.handle.clone(),
                value: v,
            };
            if is_editable(&node) && value_set_is_silent(p, a.pid).await {
                let typed = if v.fract() == 0.0 {
                    format!("{}", v as i64)
                } else {
                    v.to_string()
                };
                if !focus_unless_focused(p, &node).await {
                    return Err(ToolError::failed(format!(
                        "{label} would not take the keyboard focus, so no key was sent to type {typed}"
                    )));
                }
                let mut events = mods_down(&[Modifier::Ctrl]);
                events.push(InputEvent::Key {
                    keysym: char_keysym('a'),
                    down: true,
                });
                events.push(InputEvent::Key {
                    keysym: char_keysym('a'),
                    down: false,
                });
                events.extend(mods_up(&[Modifier::Ctrl]));
                events.extend(text_key_events(&typed, 0));
                p.send_input(&window, &events, Delivery::Background).await?;
                (
                    base(
                        format!("typed {typed} over the value of {label}"),
                        event_path(Delivery::Background),
                    )
                    .with("note", json!(SILENT_VALUE_NOTE)),
                    expect,
                )
            } else {
                p.set_value(&node.handle, v).await?;
                (
                    base(format!("set {label} to {v}"), Route::ElementValue),
                    expect,
                )
            }
        } else if is_editable(&node) {
            check_text(&a.value, "value")?;
            p.set_text(&node.handle, &a.value).await?;
            (
                base(format!("set the text of {label}"), Route::ElementText),
                Expect::TextIs {
                    handle: node.handle.clone(),
                    text: a.value.clone(),
                },
            )
        } else {
            return Err(ToolError::failed(format!(
                "{label} has no value to set (not a slider, spin button, combo box, list or text field)"
            )));
        };
        settle(
            p,
            &expect,
            expect.read_back_ms(settle_ms),
            &mut outcome,
            "px",
        )
        .await;
        // Qt's combo boxes take a selection in their popup list and keep showing the old
        // option: nothing was chosen, so stepping to it with keys cannot choose twice.
        if outcome.effect == Effect::SuspectedNoop
            && node.role == "combo_box"
            && outcome.path == Route::ElementSelection
            && !takes_no_synthetic_keys(p, a.pid).await
        {
            if let Expect::OptionChosen { options, .. } = &expect {
                let pos = outcome.fields["option_index"].as_u64().unwrap_or(0) as usize;
                if step_combo_with_keys(p, &window, &node, options, pos).await? {
                    outcome.path = event_path(Delivery::Background);
                    outcome.escalation = None;
                    outcome = outcome.with("note", json!("the option was marked selected without being chosen; the combo box was stepped to it with arrow keys"));
                    let wait = expect.read_back_ms(settle_ms);
                    settle(p, &expect, wait, &mut outcome, "foreground").await;
                }
            }
        }
        outcome = with_new_value(p, outcome, &node).await;
        Ok(outcome.into_output(Some(a.pid), Some(&window)))
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
