//! Input tools against real apps. Effects are checked through the apps' own accessibility
//! trees, and every background action is watched by a focus observer: the active window,
//! X input focus, stacking order and pointer must be the same after as before.

mod common;

use std::time::{Duration, Instant};

use common::{App, desktop, elements, frame, support_app};
use cua::errors::ToolError;
use cua::platform::FocusState;
use cua::tools::ToolOutput;
use serde_json::{Value, json};

/// One context per test (element caches are per context, as per MCP connection), with a
/// focus observer around background actions.
struct Session(common::Session);

impl std::ops::Deref for Session {
    type Target = common::Session;
    fn deref(&self) -> &common::Session {
        &self.0
    }
}

impl Session {
    fn new() -> Session {
        Session(common::Session::new())
    }

    fn focus(&self) -> FocusState {
        self.block_on(async {
            self.ctx()
                .platform()
                .await
                .unwrap()
                .focus_state()
                .await
                .unwrap()
        })
    }

    /// A background action, with the focus observer around it.
    fn act(&self, tool: &str, args: Value) -> ToolOutput {
        let before = self.focus();
        let out = self
            .call(tool, args.clone())
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"));
        let after = self.focus();
        assert_eq!(
            before, after,
            "background {tool} {args} changed the foreground"
        );
        out
    }

    fn state(&self, app: &App) -> ToolOutput {
        self.call(
            "get_window_state",
            json!({ "pid": app.pid, "window_id": app.window_id, "include_screenshot": false }),
        )
        .unwrap()
    }

    fn index_of(&self, app: &App, pred: impl Fn(&Value) -> bool) -> (usize, Value) {
        let state = self.state(app);
        let el = elements(&state)
            .into_iter()
            .find(|e| pred(e))
            .unwrap_or_else(|| panic!("no such element in\n{}", state.structured["tree_markdown"]));
        (el["element_index"].as_u64().unwrap() as usize, el)
    }

    /// Polls the app's tree until `pred` holds (the effect shows), bounded.
    fn wait_tree(&self, app: &App, what: &str, pred: impl Fn(&ToolOutput) -> bool) -> ToolOutput {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let s = self.state(app);
            if pred(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "{what} never showed:\n{}",
                s.structured["tree_markdown"]
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn named(prefix: &'static str) -> impl Fn(&Value) -> bool {
    move |e: &Value| e["role"] == "button" && e["name"] == prefix
}

#[test]
fn calculator_element_clicks_compute_7_times_6() {
    let s = Session::new();
    let calc = &desktop().calculator;
    for key in ["7", "×", "6", "="] {
        let (index, el) = s.index_of(calc, named(key));
        if key == "6" {
            // By pixel, at the centre of the button's frame, while another window covers it.
            pixel_click_lands(&s, calc, index, &el);
            continue;
        }
        let out = s.act("click", json!({ "pid": calc.pid, "window_id": calc.window_id, "element_index": index, "settle_ms": 2000 }));
        assert_eq!(out.structured["path"], "element_action", "{}", out.summary);
        assert_eq!(out.structured["effect"], "confirmed", "{}", out.summary);
    }
    s.wait_tree(calc, "42 on the display", |st| {
        elements(st)
            .iter()
            .any(|e| e["value"].as_str().is_some_and(|v| v.trim() == "42"))
            || st.structured["tree_markdown"]
                .as_str()
                .unwrap()
                .contains("\"42\"")
    });
}

#[test]
fn widget_factory_toggle_slider_entry_and_combo_through_the_tree() {
    let s = Session::new();
    let wf = &desktop().widget_factory;
    let args = |index: usize, extra: Value| {
        let mut a = json!({ "pid": wf.pid, "window_id": wf.window_id, "element_index": index });
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    let sensitive = |e: &Value| {
        e["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "sensitive")
    };
    let checked = |e: &Value| {
        e["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "checked")
    };

    // Toggle an unchecked check button.
    let (cb, _) = s.index_of(wf, |e| {
        e["role"] == "check_box"
            && sensitive(e)
            && !checked(e)
            && !e["states"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == "indeterminate")
    });
    let out = s.act("click", args(cb, json!({ "settle_ms": 2000 })));
    assert_eq!(out.structured["effect"], "confirmed", "{}", out.summary);
    let st = s.state(wf);
    assert!(
        checked(&elements(&st)[cb]),
        "check box {cb} not checked: {}",
        elements(&st)[cb]
    );

    // Set a slider's value.
    // A vertical slider: the drag test owns the horizontal ones.
    let (slider, _) = s.index_of(wf, |e| {
        e["role"] == "slider"
            && sensitive(e)
            && e["states"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == "vertical")
    });
    let out = s.act("set_value", args(slider, json!({ "value": "73" })));
    assert_eq!(out.structured["path"], "element_value");
    assert_eq!(elements(&s.state(wf))[slider]["value"], "73");

    // Type into an entry.
    let (entry, before) = s.index_of(wf, |e| {
        e["role"] == "text" && sensitive(e) && e["value"] == "entry"
    });
    let out = s.act("type_text", args(entry, json!({ "text": " héllo → ✓" })));
    assert_eq!(out.structured["path"], "element_text");
    let after = &elements(&s.state(wf))[entry];
    assert_eq!(
        after["value"]
            .as_str()
            .unwrap()
            .replace(before["value"].as_str().unwrap(), ""),
        " héllo → ✓",
        "{after}"
    );

    // Select a combo option by its label, without opening the popup.
    let (combo, _) = s.index_of(wf, |e| e["role"] == "combo_box" && e["name"] == "Left");
    let out = s.act(
        "set_value",
        args(combo, json!({ "value": "right", "settle_ms": 2000 })),
    );
    assert_eq!(out.structured["effect"], "confirmed", "{}", out.summary);
    assert_eq!(elements(&s.state(wf))[combo]["name"], "Right");
}

#[test]
fn mousepad_multiline_unicode_then_select_all_and_delete() {
    let s = Session::new();
    let mp = &desktop().mousepad;
    let (text, _) = s.index_of(mp, |e| {
        e["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "editable")
    });
    let typed = "first line\nzweite Zeile: héllo → ✓\n三";
    let out = s.act(
        "type_text",
        json!({ "pid": mp.pid, "window_id": mp.window_id, "element_index": text, "text": typed }),
    );
    assert_eq!(out.structured["effect"], "confirmed", "{}", out.summary);
    let st = s.state(mp);
    assert_eq!(elements(&st)[text]["value"], typed);

    s.act(
        "hotkey",
        json!({ "pid": mp.pid, "window_id": mp.window_id, "keys": ["ctrl", "a"] }),
    );
    s.act(
        "press_key",
        json!({ "pid": mp.pid, "window_id": mp.window_id, "key": "delete" }),
    );
    s.wait_tree(mp, "an empty document", |st| {
        elements(st)[text]["value"] == ""
    });
}

/// Clicks at the centre of a button's frame, by pixel, land on that button.
fn pixel_click_lands(s: &Session, app: &App, index: usize, el: &Value) {
    let (x, y, w, h) = frame(el);
    let out = s.act(
        "click",
        json!({ "pid": app.pid, "window_id": app.window_id, "x": x + w / 2, "y": y + h / 2, "settle_ms": 2000 }),
    );
    assert_eq!(
        out.structured["element"]["name"], el["name"],
        "{}",
        out.summary
    );
    assert_eq!(
        out.structured["effect"], "confirmed",
        "{} (element {index})",
        out.summary
    );
}

#[test]
fn pixel_clicks_land_on_buttons_in_gtk3() {
    // GTK4 (the calculator, covered) is checked inside the 7 × 6 test, which owns that app.
    let s = Session::new();
    let d = desktop();
    // GTK3: a toggle button in the widget factory.
    let (index, el) = s.index_of(&d.widget_factory, |e| {
        e["role"] == "toggle_button"
            && e["name"] == "togglebutton"
            && e["states"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == "sensitive")
    });
    pixel_click_lands(&s, &d.widget_factory, index, &el);
    let after = &elements(&s.state(&d.widget_factory))[index];
    assert_ne!(
        after["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "checked"),
        el["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "checked"),
        "toggle button did not toggle"
    );
}

/// (A background drag on GTK 3 depends on where the real pointer is: tests/foreground.rs,
/// which may move it.)
#[test]
fn scroll_moves_a_gtk3_text_view() {
    let s = Session::new();
    let wf = &desktop().widget_factory;
    // Scroll the text view down by its scroll bar.
    let (text, _) = s.index_of(wf, |e| {
        e["role"] == "text" && e["value"].as_str().is_some_and(|v| v.starts_with("Lorem"))
    });
    let bar_value = |st: &ToolOutput| -> f64 {
        elements(st)
            .iter()
            .filter(|e| {
                e["role"] == "scroll_bar"
                    && e["states"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|s| s == "vertical")
            })
            .filter_map(|e| e["value"].as_str()?.parse::<f64>().ok())
            .fold(0.0, f64::max)
    };
    let before = bar_value(&s.state(wf));
    let out = s.act("scroll", json!({ "pid": wf.pid, "window_id": wf.window_id, "element_index": text, "direction": "down", "amount": 3, "settle_ms": 2000 }));
    assert_eq!(out.structured["path"], "element_value", "{}", out.summary);
    assert_eq!(out.structured["effect"], "confirmed", "{}", out.summary);
    assert!(bar_value(&s.state(wf)) > before, "scroll bar did not move");
}

#[test]
fn bad_input_is_refused_and_nothing_is_sent() {
    let s = Session::new();
    let d = desktop();
    let calc = &d.calculator;
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "click",
            json!({ "pid": calc.pid, "window_id": 1234567, "element_index": 0 }),
            "call get_window_state first",
        ),
        (
            "click",
            json!({ "pid": calc.pid, "window_id": calc.window_id, "element_index": 0, "x": 1, "y": 2 }),
            "not both",
        ),
        ("click", json!({ "pid": calc.pid, "x": 10 }), "`y`"),
        (
            "click",
            json!({ "pid": calc.pid, "element_index": 0 }),
            "`window_id`",
        ),
        (
            "press_key",
            json!({ "pid": calc.pid, "key": "hyperjump" }),
            "unknown key",
        ),
        (
            "press_key",
            json!({ "pid": calc.pid, "key": "a", "modifiers": ["hyper"] }),
            "unknown modifier",
        ),
        (
            "hotkey",
            json!({ "pid": calc.pid, "keys": ["ctrl", "q", "a"] }),
            "`keys[1]`",
        ),
        (
            "type_text",
            json!({ "pid": calc.pid, "text": "a\u{7}b" }),
            "control character",
        ),
        (
            "click",
            json!({ "pid": calc.pid, "window_id": calc.window_id, "x": 99999, "y": 1 }),
            "outside",
        ),
        (
            "type_text",
            json!({ "pid": calc.pid, "text": "7".repeat(100_001) }),
            "at most 100000 characters",
        ),
        (
            "type_text",
            json!({ "pid": calc.pid, "text": "7".repeat(10_001), "as_keys": true }),
            "too many to type key by key",
        ),
    ];
    for (tool, args, expected) in cases {
        let before = s.focus();
        let err = s.call(tool, args.clone()).unwrap_err();
        // Control characters in typed text are the safety policy's to refuse.
        let policy = expected == "control character";
        assert!(
            matches!(err, ToolError::InvalidArguments(_)) && !policy
                || matches!(err, ToolError::Refused(_)) && policy,
            "{tool} {args}: {err:?}"
        );
        assert!(
            err.to_string().contains(expected),
            "{tool} {args}: `{err}` lacks `{expected}`"
        );
        assert_eq!(before, s.focus());
    }
    // Out of range, after a real snapshot.
    s.state(calc);
    let err = s
        .call(
            "click",
            json!({ "pid": calc.pid, "window_id": calc.window_id, "element_index": 9999 }),
        )
        .unwrap_err();
    assert!(err.to_string().contains("out of range"), "{err}");
    // The calculator's window with the editor's pid: the mix-up is named, not "call
    // get_window_state first" (it was called).
    let err = s
        .call(
            "click",
            json!({ "pid": d.mousepad.pid, "window_id": calc.window_id, "element_index": 0 }),
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "`pid`: window {} was read with pid {}, not {}",
            calc.window_id, calc.pid, d.mousepad.pid
        )),
        "{err}"
    );
}

#[test]
fn a_disabled_element_is_refused_with_the_reason_and_never_clicked_by_pixel() {
    let s = Session::new();
    let wf = &desktop().widget_factory;
    let state = s.state(wf);
    // The widget factory shows insensitive copies of its widgets.
    let disabled = elements(&state).into_iter().find(|e| {
        let states = e["states"].as_array().unwrap();
        states.iter().any(|x| x == "visible")
            && !states.iter().any(|x| x == "sensitive" || x == "enabled")
    });
    let Some(el) = disabled else {
        panic!("the widget factory shows no disabled element");
    };
    let before = s.focus();
    let err = s
        .call(
            "click",
            json!({ "pid": wf.pid, "window_id": wf.window_id, "element_index": el["element_index"] }),
        )
        .expect_err("a disabled element is refused");
    assert!(
        matches!(err, ToolError::Refused(_)) && err.to_string().contains("disabled"),
        "{err}"
    );
    assert_eq!(s.focus(), before, "nothing was sent");
}

/// An action that names the snapshot its index came from acts on the element it named
/// there, even after newer snapshots moved the indices; an element of that snapshot that
/// changed or went away since is refused, and a bad `snapshot_id` is named. In a sandbox
/// of its own: its windows would take the focus other tests watch.
#[test]
fn an_index_with_its_snapshot_id_acts_on_that_element_or_is_refused() {
    let s = Session(common::Session::on(cua::sandbox::SandboxOptions {
        width: 800,
        height: 600,
        ..Default::default()
    }));
    let launch = || App::launched(&s.call("launch_app", support_app("shifting.py")).unwrap());
    let app = launch();
    let button = |name: &'static str| move |e: &Value| e["role"] == "button" && e["name"] == name;
    let has_button = |state: &ToolOutput, name: &str| {
        elements(state)
            .iter()
            .any(|e| e["role"] == "button" && e["name"] == name)
    };
    let first = s.state(&app);
    let first_id = first.structured["snapshot_id"]
        .as_str()
        .unwrap()
        .to_string();
    let index = |state: &ToolOutput, name: &'static str| {
        elements(state)
            .into_iter()
            .find(button(name))
            .unwrap_or_else(|| panic!("no {name}:\n{}", state.structured["tree_markdown"]))["element_index"]
            .as_u64()
            .unwrap()
    };
    let (add, rename, remove) = (
        index(&first, "Add row"),
        index(&first, "Rename"),
        index(&first, "Remove"),
    );
    let click = |index: u64, snapshot_id: &str| {
        s.call(
            "click",
            json!({ "pid": app.pid, "window_id": app.window_id, "element_index": index, "snapshot_id": snapshot_id }),
        )
    };

    // A row above everything: in the next snapshot every index has moved.
    click(add, &first_id).unwrap();
    let second = s.wait_tree(&app, "Row 1", |st| has_button(st, "Row 1"));
    assert_ne!(index(&second, "Rename"), rename, "the indices moved");
    // The first snapshot's index still names "Rename".
    click(rename, &first_id).unwrap();
    s.wait_tree(&app, "Renamed", |st| has_button(st, "Renamed"));
    // That element reads differently now: refused, nothing clicked.
    let err = click(rename, &first_id).unwrap_err().to_string();
    assert!(err.contains("now reads \"Renamed\""), "{err}");
    // Gone: "Remove" removed itself.
    let latest = s.state(&app);
    let latest_id = latest.structured["snapshot_id"]
        .as_str()
        .unwrap()
        .to_string();
    click(index(&latest, "Remove"), &latest_id).unwrap();
    s.wait_tree(&app, "Remove gone", |st| !has_button(st, "Remove"));
    let err = click(remove, &first_id).unwrap_err().to_string();
    assert!(err.contains("gone"), "{err}");
    let rows = s.state(&app);
    assert!(
        !has_button(&rows, "Row 2"),
        "a refused click ran something:\n{}",
        rows.structured["tree_markdown"]
    );

    // Bad snapshot ids name the field.
    let err = click(add, "no-such-snapshot").unwrap_err().to_string();
    assert!(
        err.contains("`snapshot_id`") && err.contains("not one of"),
        "{err}"
    );
    let other_app = launch();
    let other = s.state(&other_app);
    let other_id = other.structured["snapshot_id"].as_str().unwrap();
    let err = click(add, other_id).unwrap_err().to_string();
    assert!(
        err.contains("`snapshot_id`") && err.contains("not of pid"),
        "{err}"
    );
    let err = s
        .call(
            "click",
            json!({ "pid": app.pid, "window_id": app.window_id, "x": 5, "y": 5, "snapshot_id": first_id }),
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`snapshot_id`: only goes with `element_index`"),
        "{err}"
    );
}

/// An agent's loop on the GTK 4 calculator, whose clicks show their effect ~250 ms late:
/// 84 products (504 element clicks), each click sent as soon as the previous one returned
/// and the window was read, as an agent observes. A click sent while the previous one's
/// effect is pending vanished (5 of 10 products came out wrong); none may now, and every
/// click reads its effect back (`confirmed`, never `unverifiable`). The products are read
/// from the calculator's own display.
#[test]
fn five_hundred_element_clicks_on_gtk4_land_and_read_back() {
    const PRODUCTS: usize = 84;
    let s = common::Session::private();
    let calc = App::launched(
        &s.call("launch_app", json!({ "name": "gnome-calculator" }))
            .unwrap(),
    );
    let observe = || {
        s.call(
            "get_window_state",
            json!({ "pid": calc.pid, "window_id": calc.window_id, "include_screenshot": false }),
        )
        .unwrap()
    };
    let index = |state: &ToolOutput, label: &str| {
        elements(state)
            .into_iter()
            .find(|e| e["role"] == "button" && e["name"] == label)
            .unwrap_or_else(|| panic!("no button {label}"))["element_index"]
            .clone()
    };
    let shown = |state: &ToolOutput| -> Vec<String> {
        elements(state)
            .into_iter()
            .filter(|e| e["role"] == "text")
            .filter_map(|e| {
                e["value"]
                    .as_str()
                    .map(|v| v.replace([',', '\u{2009}'], ""))
            })
            .map(|v| v.trim().to_string())
            .collect()
    };
    let mut state = observe();
    let (mut wrong, mut unread) = (Vec::new(), Vec::new());
    // Deterministic operands: two-digit numbers from a fixed sequence.
    let mut seed: u64 = 7;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        10 + (seed >> 33) % 90
    };
    for _ in 0..PRODUCTS {
        let (a, b) = (next(), next());
        let keys: Vec<String> = format!("{a}×{b}=").chars().map(String::from).collect();
        for key in &keys {
            let out = s
                .call(
                    "click",
                    json!({ "pid": calc.pid, "window_id": calc.window_id, "element_index": index(&state, key) }),
                )
                .unwrap();
            if out.structured["effect"] != "confirmed" {
                unread.push(format!("{a}×{b}, {key}: {}", out.structured["effect"]));
            }
            state = observe();
        }
        // The product shows a little after "=" is taken: read until it does, bounded, as
        // an agent waiting for the display would.
        let deadline = Instant::now() + Duration::from_secs(2);
        while !shown(&state).contains(&(a * b).to_string()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            state = observe();
        }
        if !shown(&state).contains(&(a * b).to_string()) {
            wrong.push(format!("{a}×{b}: the display shows {:?}", shown(&state)));
        }
        s.call(
            "press_key",
            json!({ "pid": calc.pid, "window_id": calc.window_id, "key": "Escape" }),
        )
        .unwrap();
        state = observe();
    }
    assert!(
        wrong.is_empty(),
        "{} products wrong: {wrong:#?}",
        wrong.len()
    );
    assert!(
        unread.is_empty(),
        "{} clicks not read back: {unread:#?}",
        unread.len()
    );
}

/// A click's read-back says `confirmed` only when the window changed: Reset on a counter
/// already at 0 runs (the fixture's journal shows the click) and changes nothing, so it
/// says `no_change`; Increment then says `confirmed`, and the counter reads 1. On GTK 3
/// and on GTK 4, whose effects show ~250 ms late.
#[test]
fn a_click_that_changes_nothing_says_no_change_and_one_that_does_confirmed() {
    for toolkit in ["gtk3", "gtk4"] {
        let sandbox = cua::sandbox::Sandbox::start(cua::sandbox::SandboxOptions {
            width: 1280,
            height: 800,
            ..Default::default()
        })
        .expect("sandbox");
        let journal = std::env::temp_dir().join(format!(
            "cua-input-readback-{toolkit}-{}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&journal);
        let (pid, window_id) = common::launch_fixture(sandbox.env(), toolkit, &journal);
        let session = common::Session::for_desktop(sandbox.desktop());
        let call = |tool: &str, args: Value| session.call(tool, args).unwrap();
        let state = call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
        );
        let index = |name: &str| {
            elements(&state)
                .into_iter()
                .find(|e| e["role"] == "button" && e["name"] == name)
                .unwrap_or_else(|| panic!("{toolkit}: no {name} button"))["element_index"]
                .clone()
        };
        let clicks = |widget: &str| {
            common::journal(&journal)
                .iter()
                .filter(|e| e["event"] == "clicked" && e["widget"] == widget)
                .count()
        };
        let reset = call(
            "click",
            json!({ "pid": pid, "window_id": window_id, "element_index": index("Reset") }),
        );
        assert_eq!(clicks("Reset"), 1, "{toolkit}: Reset was not clicked");
        assert_eq!(
            reset.structured["effect"], "no_change",
            "{toolkit}: Reset at 0 changed nothing: {}",
            reset.structured
        );
        assert_eq!(reset.structured["verified"], false);
        let increment = call(
            "click",
            json!({ "pid": pid, "window_id": window_id, "element_index": index("Increment") }),
        );
        assert_eq!(
            increment.structured["effect"], "confirmed",
            "{toolkit}: {}",
            increment.structured
        );
        let after = call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window_id, "include_screenshot": false }),
        );
        assert!(
            after.structured["tree_markdown"]
                .as_str()
                .unwrap()
                .contains("Count: 1"),
            "{toolkit}: the counter does not read 1:\n{}",
            after.structured["tree_markdown"]
        );
        let _ = std::fs::remove_file(&journal);
    }
}
