//! The worked examples docs/tools.md shows under a tool: a command line and the shape of
//! what it prints with `--json`. tests/docs_examples.rs runs each one, in docs/tools.md's
//! order (the registry's), against Debian 12's Calculator in a sandbox and checks every field the shape names, so
//! an output that changes shape fails a test instead of someone's script.
//!
//! Shapes are written `{field, field?: {…}, field: [{…}], …}`: an object's fields that are
//! always there (`field?` can be null or absent; an array's shape holds for every item;
//! `…` says there is more).

/// One example: `cua <tool> '<args>' --json` prints `shape`. `PID` and `WID` in `args`
/// stand for the pid and window_id launch_app's example printed.
pub struct Example {
    pub tool: &'static str,
    pub args: &'static str,
    pub shape: &'static str,
    /// What the reader needs to run it (which element an index is), if anything.
    pub note: &'static str,
}

pub const EXAMPLES: &[Example] = &[
    Example {
        tool: "check_permissions",
        args: "{}",
        shape: "{ok, checks: [{name, ok, concern, detail, fix}]}",
        note: "",
    },
    Example {
        tool: "health_report",
        args: "{}",
        shape: "{overall, checks: [{name, status, message}], driver_version, platform, schema_version}",
        note: "",
    },
    Example {
        tool: "list_apps",
        args: "{}",
        shape: "{apps: [{name, desktop_id, running, active, pid}]}",
        note: "",
    },
    Example {
        tool: "launch_app",
        args: r#"{"name": "Calculator"}"#,
        shape: "{pid, name, executable, newly_started, launcher_pid, home, accessibility_note?, windows: [{window_id, pid, app_name, title, bounds: {x, y, width, height}, z_index, is_on_screen, …}]}",
        note: "The examples below use its `pid` as PID and `windows[0].window_id` as WID.",
    },
    Example {
        tool: "list_windows",
        args: r#"{"pid": PID}"#,
        shape: "{windows: [{window_id, pid, app_name, title, bounds: {x, y, width, height}, z_index, is_on_screen, …}], current_space_id}",
        note: "",
    },
    Example {
        tool: "get_window_state",
        args: r#"{"pid": PID, "window_id": WID}"#,
        shape: "{pid, window_id, app_name, title, snapshot_id, tree_markdown, element_count, elements: [{element_index, element_token, role, name, value, states, actions, frame?: {x, y, w, h}, pixel_frame?: {x, y, w, h}}], screenshot_width, screenshot_height, screenshot_png_b64, …}",
        note: "`frame` is in screen pixels, `pixel_frame` in the screenshot's; both are missing for an element with no area on screen (a hidden scroll bar). In Debian 12's Calculator element 8 is the display (a text field) and 12 the button \"7\".",
    },
    Example {
        tool: "verify_state",
        args: r#"{"pid": PID, "window_id": WID, "expect": [{"element": {"selector": {"role": "button", "label_contains": "7"}, "exists": true}}]}"#,
        shape: "{status, satisfied, predicates: [{index, status, detail}], samples, elapsed_ms, …}",
        note: "",
    },
    Example {
        tool: "screenshot",
        args: r#"{"window_id": WID}"#,
        shape: "{window_id, width, height, format, bytes, …}",
        note: "Add `--screenshot-out-file shot.png` to save the image.",
    },
    Example {
        tool: "zoom",
        args: r#"{"pid": PID, "window_id": WID, "x1": 0, "y1": 0, "x2": 200, "y2": 100}"#,
        shape: "{x, y, width, height, screenshot_scale, …}",
        note: "",
    },
    Example {
        tool: "get_screen_size",
        args: "{}",
        shape: "{width, height, scale_factor}",
        note: "",
    },
    Example {
        tool: "get_cursor_position",
        args: "{}",
        shape: "{x, y}",
        note: "",
    },
    Example {
        tool: "click",
        args: r#"{"pid": PID, "window_id": WID, "element_index": 8}"#,
        shape: "{path, effect, verified, action, element: {element_index, role, name, frame: {x, y, w, h}}, click_point: {x, y}, pid, window_id}",
        note: "Element indices come from the last get_window_state, so run `cua serve` (or `cua record start`) first: without a daemon each call is its own process.",
    },
    Example {
        tool: "type_text",
        args: r#"{"pid": PID, "window_id": WID, "element_index": 6, "text": "×6"}"#,
        shape: "{path, effect, verified, element: {element_index, role, name, frame: {x, y, w, h}}, value, pid, window_id, …}",
        note: "",
    },
    Example {
        tool: "press_key",
        args: r#"{"pid": PID, "window_id": WID, "key": "return"}"#,
        shape: "{path, effect, verified, keys, escalation: {recommended, reason}, pid, window_id}",
        note: "Calculator is GTK 4, which ignores synthetic key events: the answer is `effect: unverifiable` with `escalation.recommended: foreground`.",
    },
    Example {
        tool: "set_value",
        args: r#"{"pid": PID, "window_id": WID, "element_index": 6, "value": "7×6"}"#,
        shape: "{path, effect, verified, element: {element_index, role, name, frame: {x, y, w, h}}, value, pid, window_id}",
        note: "",
    },
    Example {
        tool: "clipboard_write",
        args: r#"{"text": "hello"}"#,
        shape: "{written_type, types, supported, …}",
        note: "",
    },
    Example {
        tool: "clipboard_read",
        args: "{}",
        shape: "{text, types, supported, …}",
        note: "",
    },
    Example {
        tool: "get_recording_state",
        args: "{}",
        shape: "{enabled, output_dir, next_turn, video, last_error}",
        note: "",
    },
];

/// The example of `tool`, as docs/tools.md prints it under the tool.
pub fn markdown(tool: &str) -> Option<String> {
    let example = EXAMPLES.iter().find(|e| e.tool == tool)?;
    let mut md = format!(
        "\nExample:\n\n```sh\ncua {} '{}' --json\n```\n\nprints `{}`\n",
        example.tool, example.args, example.shape
    );
    if !example.note.is_empty() {
        md.push_str(&format!("\n{}\n", example.note));
    }
    Some(md)
}

#[cfg(test)]
mod tests {
    use super::EXAMPLES;
    use crate::tools::ToolRegistry;

    #[test]
    fn every_example_is_of_a_tool_and_runs_after_the_launch_it_needs() {
        let registry = ToolRegistry::new();
        let order: Vec<&str> = registry.tools().map(|t| t.name()).collect();
        let launch = order.iter().position(|t| *t == "launch_app").unwrap();
        for example in EXAMPLES {
            let at = order.iter().position(|t| *t == example.tool);
            let at = at.unwrap_or_else(|| panic!("no tool {} to show", example.tool));
            let needs_launch = example.args.contains("PID") || example.args.contains("WID");
            assert!(
                !needs_launch || at > launch,
                "{} runs before launch_app",
                example.tool
            );
            serde_json::from_str::<serde_json::Value>(
                &example.args.replace("PID", "1").replace("WID", "2"),
            )
            .unwrap_or_else(|e| panic!("{}'s arguments are not JSON: {e}", example.tool));
        }
    }
}
