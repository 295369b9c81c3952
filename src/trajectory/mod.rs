//! The on-disk trajectory format as Rust types: `session.json` at the root and, per turn,
//! `turn-NNNNN/action.json` plus state files and PNGs. docs/trajectory-format.md describes
//! every field; `schema_version` lets a reader refuse files newer than it understands.

pub mod cua_driver;

pub mod points;
pub mod read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::platform::{AxTree, Rect};

pub const SCHEMA_VERSION: u32 = 1;

/// `session.json`: written atomically when recording starts and again when it stops.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Session {
    pub schema_version: u32,
    pub driver: String,
    pub driver_version: String,
    pub platform: String,
    pub started_at: String,
    pub stopped_at: Option<String>,
    pub screen: Option<ScreenSize>,
    /// Turns written in this session (appends continue an earlier session's numbering).
    pub first_turn: u32,
    pub turns_written: u32,
    pub video: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScreenSize {
    pub width: u32,
    pub height: u32,
}

/// Who a turn acted on, so replay can find the app again in another run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppIdentity {
    pub app_name: String,
    pub executable: String,
    pub window_title: String,
}

/// One step of the path from a window's root to an element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathStep {
    pub role: String,
    pub name: String,
    /// Position among siblings with the same role.
    pub index: usize,
}

/// Enough to find an element again in a fresh snapshot where indices differ.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Locator {
    pub role: String,
    pub name: String,
    pub path: Vec<PathStep>,
    pub frame: Option<Rect>,
    pub states: Vec<String>,
    /// The index it had in the recorded snapshot.
    pub element_index: usize,
}

impl Locator {
    /// The locator of node `node` of `tree`.
    pub fn of(tree: &AxTree, node: usize, element_index: usize) -> Locator {
        let mut chain = vec![node];
        while let Some(p) = tree.nodes[*chain.last().unwrap()].parent {
            chain.push(p);
        }
        chain.reverse();
        let path = chain
            .iter()
            .map(|&i| {
                let n = &tree.nodes[i];
                let index = match n.parent {
                    Some(p) => tree.nodes[p]
                        .children
                        .iter()
                        .take_while(|&&c| c != i)
                        .filter(|&&c| tree.nodes[c].role == n.role)
                        .count(),
                    None => 0,
                };
                PathStep {
                    role: n.role.clone(),
                    name: n.name.clone(),
                    index,
                }
            })
            .collect();
        let n = &tree.nodes[node];
        Locator {
            role: n.role.clone(),
            name: n.name.clone(),
            path,
            frame: n.frame,
            states: n.states.clone(),
            element_index,
        }
    }
}

/// What a browser tool's turn acted on, told by what a replay can find again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrowserTarget {
    /// The tab's URL when the call ran.
    pub tab_url: String,
    /// The element the call's `ref` named, as the tab's snapshot showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<BrowserElement>,
    /// The JavaScript dialog a `browser_dialog` answered: its kind (alert, confirm,
    /// prompt, beforeunload) and message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<BrowserDialog>,
}

/// A page's JavaScript dialog, as the browser showed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrowserDialog {
    pub kind: String,
    pub message: String,
}

/// An element of a tab's snapshot: its accessibility role and label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrowserElement {
    pub role: String,
    pub name: String,
    /// The names of its named ancestors in the page, nearest first (up to 4): they tell
    /// the element apart from a look-alike when the replay finds several. Absent in
    /// recordings made before cua kept them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ancestors: Vec<String>,
}

/// `turn-NNNNN/action.json`: what the recorder writes and what every reader reads
/// ([`read::action`]), the one type of a turn's action. A turn another driver wrote reads
/// as this type too (through [`cua_driver::adapt`]); fields this build does not know stay in
/// `extra` and are written back as they were, so nothing recorded is lost on a round trip.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Action {
    /// 0 for a turn another driver wrote (which has none).
    #[serde(default)]
    pub schema_version: u32,
    /// The turn's number; a turn that does not say is read as its folder's number.
    #[serde(default)]
    pub turn: u32,
    pub tool: String,
    /// As called, minus private `_`-prefixed keys.
    #[serde(default, deserialize_with = "null_as_default")]
    pub arguments: serde_json::Map<String, Value>,
    #[serde(default)]
    pub result_summary: String,
    /// Why the call failed, when it did (the tool's error, or the driver's refusal).
    #[serde(default)]
    pub result_error: Option<String>,
    /// path, verified, effect, escalation of the action's structured result.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: ActionResult,
    /// ISO-8601 UTC.
    #[serde(default)]
    pub timestamp: String,
    /// Milliseconds since the recording started.
    #[serde(default)]
    pub t_ms: u64,
    #[serde(default)]
    pub pid: Option<u32>,
    #[serde(default)]
    pub window_id: Option<u64>,
    #[serde(default)]
    pub app: Option<AppIdentity>,
    /// Window-local pixels, for the click family.
    #[serde(default)]
    pub click_point: Option<Point>,
    /// For element-addressed actions.
    #[serde(default)]
    pub target: Option<Locator>,
    /// For a browser tool's turn: the tab it acted in and the element its ref named, so a
    /// replay binds them again (the ids it was called with are its session's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<BrowserTarget>,
    /// Arguments whose text was replaced with `[redacted]` (typed into a password field, or
    /// an element `redaction.names` lists); a replay takes turn N's from
    /// `CUA_SECRET_TURN_<N>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
    /// How the after-state was taken, in a run that settles every turn (a replay
    /// recorded, a `cua test` run). In an agent's recording only when its window never
    /// held still before the next action or the recorder's bound (`unsettled`, with what
    /// kept changing); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
    /// The driver that wrote the turn, when it is not cua (`cua-driver`: set by its
    /// adapter, so readers that compare know its states use another vocabulary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_by: Option<String>,
    /// Fields this build does not read (another driver's, or a newer cua's), kept whole.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

impl Action {
    /// The recorded `pid` and `window_id`: the call's arguments', else the turn's own.
    pub fn recorded_ids(&self) -> (Option<u64>, Option<u64>) {
        let id = |k: &str| self.arguments.get(k).and_then(Value::as_u64);
        (
            id("pid").or(self.pid.map(u64::from)),
            id("window_id").or(self.window_id),
        )
    }

    /// The call's `delivery_mode` argument, when it named one.
    pub fn delivery_mode(&self) -> Option<&str> {
        self.arguments.get("delivery_mode").and_then(Value::as_str)
    }

    /// The call's `element_index` argument, when it addressed an element by index.
    pub fn element_index(&self) -> Option<u64> {
        self.arguments.get("element_index").and_then(Value::as_u64)
    }

    /// Whether another driver wrote the turn (cua-driver, through its adapter).
    pub fn by_other_driver(&self) -> bool {
        self.recorded_by.as_deref() == Some(cua_driver::RECORDED_BY)
    }

    /// Why the recorded call did not run, when it failed or was refused.
    pub fn failure(&self) -> Option<String> {
        let error = self.result_error.as_deref().filter(|e| !e.is_empty());
        if self.result.refused == Some(true) {
            return Some(format!(
                "refused: {}",
                error.unwrap_or("(no reason recorded)")
            ));
        }
        error.map(|e| format!("error: {e}"))
    }
}

/// The structured result's fields a turn keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionResult {
    /// The route the action took (`element_action`, `xtest`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// What the driver saw the action do: `confirmed`, `unverifiable`, `no_change`,
    /// `suspected_noop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// The delivery the driver asked to be called again with, when it could not confirm
    /// the effect of this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
    /// For a failed call: whether it was refused before touching anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<bool>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

impl ActionResult {
    /// Whether the driver said the action did nothing the app showed.
    pub fn saw_no_change(&self) -> bool {
        matches!(
            self.effect.as_deref(),
            Some("no_change") | Some("suspected_noop")
        )
    }

    /// Whether the driver asked for the call again in another delivery, not having seen
    /// its effect.
    pub fn asked_to_escalate(&self) -> bool {
        self.escalation.is_some() && self.effect.as_deref() != Some("confirmed")
    }
}

/// An action result's `escalation`: the delivery to call again with, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Escalation {
    /// `foreground`.
    #[serde(default)]
    pub recommended: String,
    #[serde(default)]
    pub reason: String,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// A field that may be `null` on disk, read as its default.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// A settled turn's after-state: whether the window held still, and how long the app took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Settle {
    pub status: SettleStatus,
    /// Milliseconds from the action's start until the window first showed the state it
    /// settled in (a replay's recorded change, when it showed sooner than that was read).
    pub latency_ms: u64,
    /// Whether the settled window differs from the before-state (busy widgets aside): the
    /// action changed something, whatever its `effect` said when it returned.
    pub changed: bool,
    /// What still changed between the last two reads, when `unsettled`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changing: Vec<String>,
    /// Who settled the turn: a run that settles every turn (absent), or an agent's
    /// recording (`agent`), which writes a settle only for a window that never held still.
    #[serde(default, skip_serializing_if = "SettledBy::is_run")]
    pub by: SettledBy,
}

/// Who settled a turn, which says what its `unsettled` means.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SettledBy {
    /// A run that settles every turn (`cua test`, `cua replay --record-to`): read until two
    /// reads agree, within the scenario's bound. Unsettled, its state cannot be compared.
    #[default]
    Run,
    /// An agent's recording: read again after the app's events went quiet, at most
    /// 600 ms. Unsettled, its state is one moment of a window that kept changing.
    Agent,
}

impl SettledBy {
    fn is_run(&self) -> bool {
        *self == SettledBy::Run
    }
}

/// Whether a turn's window held still.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SettleStatus {
    /// The same tree and pixels on two reads in a row.
    Stable,
    /// Still changing when the bound ran out.
    Unsettled,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

/// `before_state.json` / `app_state.json`: get_window_state's structured result.
pub type WindowState = Value;

/// JSON Schemas of the on-disk files, by file name (docs/schema/ holds these).
pub fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "action.schema.json",
            serde_json::to_value(schemars::schema_for!(Action)).unwrap_or_default(),
        ),
        (
            "session.schema.json",
            serde_json::to_value(schemars::schema_for!(Session)).unwrap_or_default(),
        ),
        (
            "window-state.schema.json",
            serde_json::to_value(schemars::schema_for!(read::WindowStateFile)).unwrap_or_default(),
        ),
    ]
}

/// Name of the folder of turn `n`.
pub fn turn_dir_name(n: u32) -> String {
    format!("turn-{n:05}")
}

/// The number of a `turn-NNNNN` folder name.
pub fn parse_turn_dir(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("turn-")?;
    (digits.len() == 5 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_names_round_trip_and_reject_others() {
        assert_eq!(turn_dir_name(7), "turn-00007");
        assert_eq!(parse_turn_dir("turn-00007"), Some(7));
        assert_eq!(parse_turn_dir(".turn-00007.tmp"), None);
        assert_eq!(parse_turn_dir("turn-7"), None);
    }
}
