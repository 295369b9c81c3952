//! The one reader of trajectory folders. Replay, diff, goldens and the harness list turns
//! and read `action.json` and the state files through here, so every reader checks the
//! same things (JSON, the types of the fields readers use, a `schema_version` this build
//! understands) and reports a bad file the same way: the file, the field, and for corrupt
//! JSON its line and column. Reading never panics on what it finds; a folder from the
//! reference driver (no schema_version, `after_state.json`) reads as what it is.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::{Action, SCHEMA_VERSION, parse_turn_dir};

/// The most bytes a JSON file of a turn may hold: a state of the largest windows is a few
/// megabytes; anything far beyond is not a turn file, and is not read into memory.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// One `turn-NNNNN` folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TurnFolder {
    pub number: u32,
    pub dir: PathBuf,
}

/// The turn folders of a trajectory, in order. An error when `dir` is not a readable
/// folder or holds no turns.
pub fn turn_folders(dir: &Path) -> Result<Vec<TurnFolder>, String> {
    if !dir.is_dir() {
        return Err(format!("`{}` is not a directory", dir.display()));
    }
    let mut turns = Vec::new();
    // One level: turn folders sit directly in the trajectory. An entry that cannot be
    // read is an error (a turn silently left out would shift every later comparison).
    for entry in walkdir::WalkDir::new(dir).min_depth(1).max_depth(1) {
        let entry = entry.map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
        if !entry.file_type().is_dir() {
            continue;
        }
        if let Some(number) = parse_turn_dir(&entry.file_name().to_string_lossy()) {
            turns.push(TurnFolder {
                number,
                dir: entry.into_path(),
            });
        }
    }
    turns.sort();
    if turns.is_empty() {
        return Err(format!("`{}` holds no turn-NNNNN folders", dir.display()));
    }
    Ok(turns)
}

/// What every reader relies on in a state file (`before_state.json`, `app_state.json`,
/// the reference driver's `after_state.json`): get_window_state's structured result.
#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // read for their types; the value itself is returned whole
pub struct WindowStateFile {
    pub pid: Option<u32>,
    pub window_id: Option<u64>,
    pub element_count: Option<u64>,
    /// The window's tree as Markdown, one element per line (`- [N] role "name" …`).
    pub tree_markdown: Option<String>,
    /// The indexed elements: element_index (`index` before 0.21), element_token, role, name,
    /// label, value, states, actions, frame {x, y, w, h} (`width`, `height` before 0.21).
    pub elements: Option<Vec<serde_json::Map<String, Value>>>,
}

/// A turn's action.json as the one [`Action`] type: JSON, an object whose fields have
/// their types (an error names the field), with a `schema_version` this build reads. One
/// that cua-driver wrote comes through its adapter ([`super::cua_driver`]).
pub fn action(turn_dir: &Path) -> Result<Action, String> {
    let path = turn_dir.join("action.json");
    let mut v = json_file(&path)?.ok_or_else(|| format!("{}: missing", path.display()))?;
    if !v.is_object() {
        return Err(format!("{}: not a JSON object", path.display()));
    }
    if super::cua_driver::wrote(&v) {
        v = super::cua_driver::adapt(v).map_err(|e| format!("{}: {e}", path.display()))?;
    } else if let Some(version) = v.get("schema_version").and_then(Value::as_u64) {
        if version > SCHEMA_VERSION as u64 {
            return Err(format!(
                "{} has schema_version {version}, newer than this build reads ({SCHEMA_VERSION}); update cua",
                path.display()
            ));
        }
    }
    let mut action: Action = typed(&path, &v)?;
    if action.turn == 0 {
        let folder = turn_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        action.turn = folder.as_deref().and_then(parse_turn_dir).unwrap_or(0);
    }
    if action.by_other_driver()
        && action.arguments.contains_key("element_index")
        && !action.arguments.contains_key("window_id")
    {
        // cua-driver 0.21 records an element action by its token alone: the window it
        // names is the one the turn's before-state was read from.
        let window = json_file(&turn_dir.join("before_state.json"))
            .ok()
            .flatten()
            .and_then(|s| s.get("window_id").cloned());
        if let Some(w) = window {
            action.arguments.insert("window_id".into(), w);
        }
    }
    Ok(action)
}

/// Which of a turn's window states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// `before_state.json`: the window before the action.
    Before,
    /// `app_state.json` (the reference driver's `after_state.json`): after it.
    After,
}

/// A turn's window state, checked like [`action`]; None when the turn has none.
pub fn state(turn_dir: &Path, which: State) -> Result<Option<Value>, String> {
    let names: &[&str] = match which {
        State::Before => &["before_state.json"],
        State::After => &["app_state.json", "after_state.json"],
    };
    for name in names {
        let path = turn_dir.join(name);
        if let Some(v) = json_file(&path)? {
            typed::<WindowStateFile>(&path, &v)?;
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// A state's tree_markdown, when the state exists, reads and has one.
pub fn state_markdown(turn_dir: &Path, which: State) -> Option<String> {
    let state = state(turn_dir, which).ok()??;
    state.get("tree_markdown")?.as_str().map(str::to_string)
}

/// A JSON file, None when it does not exist.
fn json_file(path: &Path) -> Result<Option<Value>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if !meta.is_file() {
        return Err(format!("{}: not a file", path.display()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{}: {} bytes, more than a turn file holds ({MAX_FILE_BYTES})",
            path.display(),
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // serde_json's message ends with the line and column.
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("{}: corrupt JSON: {e}", path.display()))
}

/// `v` as a `T`, or an error naming the file and the field that does not fit.
fn typed<T: serde::de::DeserializeOwned>(path: &Path, v: &Value) -> Result<T, String> {
    if !v.is_object() {
        return Err(format!("{}: not a JSON object", path.display()));
    }
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let field = e.path().to_string();
        let why = e.into_inner();
        if field == "." {
            format!("{}: {why}", path.display())
        } else {
            format!("{}: `{field}`: {why}", path.display())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

    fn turn_with(files: &[(&str, &str)]) -> PathBuf {
        let n = &N;
        let dir = std::env::temp_dir().join(format!(
            "cua-read-{}-{:?}-{}",
            std::process::id(),
            std::thread::current().id(),
            n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let turn = dir.join("turn-00001");
        std::fs::create_dir_all(&turn).unwrap();
        for (name, text) in files {
            std::fs::write(turn.join(name), text).unwrap();
        }
        turn
    }

    #[test]
    fn bad_files_are_named_with_the_field_or_the_position() {
        let cases = [
            ("{\"tool\": 3}", "`tool`: invalid type: integer"),
            ("{\"arguments\": {}}", "missing field `tool`"),
            ("[1]", "not a JSON object"),
            ("{\"tool\": \"click\",", "corrupt JSON"),
            ("{\"tool\": \"click\", \"arguments\": []}", "`arguments`"),
            (
                "{\"tool\": \"click\", \"schema_version\": 99}",
                "newer than this build",
            ),
            (
                "{\"tool\": \"click\", \"target\": {\"role\": 1}}",
                "`target.role`",
            ),
        ];
        for (text, want) in cases {
            let turn = turn_with(&[("action.json", text)]);
            let e = action(&turn).unwrap_err();
            assert!(e.contains("action.json") && e.contains(want), "{text}: {e}");
            let _ = std::fs::remove_dir_all(turn.parent().unwrap());
        }
        let turn = turn_with(&[("app_state.json", "{\"tree_markdown\": 7}")]);
        let e = state(&turn, State::After).unwrap_err();
        assert!(e.contains("app_state.json: `tree_markdown`"), "{e}");
        assert_eq!(state(&turn, State::Before), Ok(None));
        let _ = std::fs::remove_dir_all(turn.parent().unwrap());
    }

    #[test]
    fn an_action_reads_as_the_one_type_and_keeps_what_it_does_not_know() {
        let turn = turn_with(&[(
            "action.json",
            r#"{"schema_version": 1, "tool": "press_key", "arguments": {"key": "7", "delivery_mode": "foreground"},
                "result": {"effect": "unverifiable", "escalation": {"recommended": "foreground", "reason": "GTK 4"}, "route_detail": 3},
                "result_error": null, "a_newer_field": {"kept": true}}"#,
        )]);
        let a = action(&turn).unwrap();
        assert_eq!(a.turn, 1, "a turn without a number reads as its folder's");
        assert_eq!(a.delivery_mode(), Some("foreground"));
        assert!(a.result.asked_to_escalate());
        assert_eq!(a.failure(), None);
        let back = serde_json::to_value(&a).unwrap();
        assert_eq!(back["a_newer_field"], serde_json::json!({"kept": true}));
        assert_eq!(back["result"]["route_detail"], 3);
        assert_eq!(back["result"]["escalation"]["reason"], "GTK 4");
        let _ = std::fs::remove_dir_all(turn.parent().unwrap());
    }

    #[test]
    fn the_reference_drivers_after_state_reads_as_the_after_state() {
        let turn = turn_with(&[
            (
                "action.json",
                "{\"tool\": \"click\", \"result_error\": false}",
            ),
            (
                "after_state.json",
                "{\"tree_markdown\": \"- [0] window \\\"W\\\"\"}",
            ),
        ]);
        assert!(action(&turn).is_ok());
        assert_eq!(
            state_markdown(&turn, State::After).as_deref(),
            Some("- [0] window \"W\"")
        );
        let _ = std::fs::remove_dir_all(turn.parent().unwrap());
    }
}
