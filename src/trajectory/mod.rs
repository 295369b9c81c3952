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

/// `turn-NNNNN/action.json`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Action {
    pub schema_version: u32,
    pub turn: u32,
    pub tool: String,
    /// As called, minus private `_`-prefixed keys.
    pub arguments: Value,
    pub result_summary: String,
    pub result_error: Option<String>,
    /// path, verified, effect, escalation of the action's structured result.
    pub result: Value,
    /// ISO-8601 UTC.
    pub timestamp: String,
    /// Milliseconds since the recording started.
    pub t_ms: u64,
    pub pid: Option<u32>,
    pub window_id: Option<u64>,
    pub app: Option<AppIdentity>,
    /// Window-local pixels, for the click family.
    pub click_point: Option<Point>,
    /// For element-addressed actions.
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
    /// recorded, a `cua test` run): absent in an agent's recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
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
}

impl Settle {
    /// The `settle` of an action.json, when its run settled each turn.
    pub fn of_action(action: &Value) -> Option<Settle> {
        serde_json::from_value(action.get("settle")?.clone()).ok()
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
