//! What the page asks and cua answers: an input event becomes a recorded call and the
//! page's line for its turn; "Undo last" takes the last turn back; the inspector reads
//! what is under the pointer; "Save as scenario" writes the scenario file.

use std::cell::Cell;

use serde_json::{Value, json};

use super::{Live, input, inspect, scenario};

/// The recording the page drives: what a scenario of it says, and its turn count.
pub struct Recording {
    pub scenario: scenario::Recorded,
    /// The app's launch: the turn "Undo last" never takes back.
    pub launch_turn: u32,
    /// The number the next recorded call's turn gets, counted as the recorder numbers
    /// (the recorder says which calls became turns, failed ones too), so a turn is
    /// listed without waiting for its after-state to be written.
    pub next_turn: Cell<u32>,
}

impl Live {
    /// A message from the page; the page's answer.
    pub(super) fn message(
        &self,
        text: &str,
        last: &mut Option<input::Window>,
        recording: &Recording,
    ) -> Value {
        let parsed: Value = serde_json::from_str(text).unwrap_or_default();
        match parsed["kind"].as_str() {
            Some("save") => self.save(parsed["name"].as_str().unwrap_or_default(), recording),
            Some("undo") => self.undo(recording),
            Some("inspect") => self.inspect(&parsed),
            _ => self.act(text, last, recording),
        }
    }

    /// An input event as a recorded call.
    fn act(&self, text: &str, last: &mut Option<input::Window>, recording: &Recording) -> Value {
        let event: input::Event = match serde_json::from_str(text) {
            Ok(e) => e,
            Err(e) => return json!({ "kind": "error", "message": format!("a page event: {e}") }),
        };
        let begun = self.ctx.recorder.turns_begun();
        let made = self
            .runtime
            .block_on(input::act(&self.ctx, &self.registry, &event, last));
        let recorded = self.ctx.recorder.turns_begun() > begun;
        match made {
            Ok(made) if !recorded => json!({ "kind": "error", "message": format!(
                "{}: {} (nothing recorded)", made.tool,
                made.result["error"].as_str().unwrap_or("not recorded")) }),
            Ok(made) => {
                let turn = recording.next_turn.get();
                recording.next_turn.set(turn + 1);
                let mut line = json!({ "kind": "turn", "turn": turn, "tool": made.tool,
                    "target": made.element.clone().unwrap_or_else(|| target_of(&made.arguments)),
                    "effect": made.result["effect"], "summary": made.result["summary"] });
                if let Some(error) = made.result["error"].as_str() {
                    line["error"] = json!(error);
                }
                line
            }
            Err(message) => json!({ "kind": "error", "message": message }),
        }
    }

    /// "Undo last": the last turn leaves the trajectory (the app is not undone); the app's
    /// launch, which the scenario needs, stays.
    fn undo(&self, recording: &Recording) -> Value {
        let launch = recording.launch_turn;
        match self
            .runtime
            .block_on(self.ctx.recorder.undo_last(launch + 1))
        {
            Ok(turn) => {
                recording.next_turn.set(turn);
                json!({ "kind": "undone", "turn": turn })
            }
            Err(message) => json!({ "kind": "error",
                "message": format!("undo: {message} (the app's launch, turn {launch}, stays)") }),
        }
    }

    fn inspect(&self, asked: &Value) -> Value {
        let Some((x, y)) = asked["x"].as_f64().zip(asked["y"].as_f64()) else {
            return json!({ "kind": "error", "message": "inspect: `x` and `y` are numbers" });
        };
        let read = inspect::inspect(&self.ctx, &self.registry, x, y);
        self.runtime.block_on(read).unwrap_or_else(
            |message| json!({ "kind": "inspected", "x": x, "y": y, "locator": message }),
        )
    }

    /// "Save as scenario", with the window's size as it is now.
    fn save(&self, name: &str, recording: &Recording) -> Value {
        let recorded = &recording.scenario;
        let size = self.runtime.block_on(async {
            let p = self.ctx.platform().await.ok()?;
            let shot = p.capture_window(recorded.window_id).await.ok()?;
            Some((shot.width, shot.height))
        });
        let Some(size) = size else {
            return json!({ "kind": "error",
                "message": "the app's window cannot be captured now (closed?): not saved" });
        };
        match scenario::save(recorded, name, size) {
            Ok(file) => json!({ "kind": "saved", "path": file,
                "next": format!("cua test {name} --update --harness {}", recorded.harness.display()) }),
            Err(message) => json!({ "kind": "error", "message": message }),
        }
    }
}

/// What a call was addressed to, for the page's list.
fn target_of(args: &Value) -> String {
    if let Some(i) = args["element_index"].as_u64() {
        return format!("element [{i}]");
    }
    if let Some(text) = args["text"].as_str() {
        return format!("{text:?}");
    }
    if let Some(key) = args["key"].as_str() {
        return key.to_string();
    }
    match (args["x"].as_f64(), args["y"].as_f64()) {
        (Some(x), Some(y)) => format!("({x:.0}, {y:.0})"),
        _ => String::new(),
    }
}
