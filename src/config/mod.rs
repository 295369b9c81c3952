//! Driver configuration: a fixed set of dotted keys with types and defaults. The global
//! default lives in `$XDG_CONFIG_HOME/cua/config.json` (written atomically); a session
//! (an MCP connection) keeps in-memory overrides. Effective value = call argument >
//! session override > global default.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::errors::ToolError;

/// What values a key takes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A non-negative integer.
    UInt,
    Number,
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A list of strings.
    StringList,
}

pub struct KeySpec {
    pub key: &'static str,
    pub kind: Kind,
    pub default: fn() -> Value,
    pub doc: &'static str,
}

/// Every key there is.
pub const KEYS: &[KeySpec] = &[
    KeySpec {
        key: "max_image_dimension",
        kind: Kind::UInt,
        default: || json!(0),
        doc: "Screenshots are downscaled so their longest side fits (0: full size). Element frames, pixel coordinates and zoom regions are then in the downscaled image's pixels.",
    },
    KeySpec {
        key: "capture_mode",
        kind: Kind::Choice(&["vision", "ax", "som"]),
        default: || json!("som"),
        doc: "Accepted for compatibility and ignored: get_window_state always returns the tree and the screenshot.",
    },
    KeySpec {
        key: "agent_cursor.enabled",
        kind: Kind::Bool,
        default: || json!(false),
        doc: "Agent cursor overlay (kept for compatibility; this Linux backend draws no overlay).",
    },
    KeySpec {
        key: "agent_cursor.motion.start_handle",
        kind: Kind::Number,
        default: || json!(0.3),
        doc: "Agent cursor motion curve.",
    },
    KeySpec {
        key: "agent_cursor.motion.end_handle",
        kind: Kind::Number,
        default: || json!(0.3),
        doc: "Agent cursor motion curve.",
    },
    KeySpec {
        key: "agent_cursor.motion.arc_size",
        kind: Kind::Number,
        default: || json!(0.25),
        doc: "Agent cursor motion curve.",
    },
    KeySpec {
        key: "agent_cursor.motion.arc_flow",
        kind: Kind::Number,
        default: || json!(0.0),
        doc: "Agent cursor motion curve.",
    },
    KeySpec {
        key: "agent_cursor.motion.spring",
        kind: Kind::Number,
        default: || json!(0.72),
        doc: "Agent cursor motion curve.",
    },
    KeySpec {
        key: "policy.forbidden_apps",
        kind: Kind::StringList,
        default: || json!([]),
        doc: "Apps (name, executable or desktop id, case-insensitive) every action on is refused.",
    },
    KeySpec {
        key: "policy.require_approval_for_app",
        kind: Kind::StringList,
        default: || json!([]),
        doc: "Apps actions on are refused with \"approval required\" unless listed in policy.approved_apps.",
    },
    KeySpec {
        key: "policy.approved_apps",
        kind: Kind::StringList,
        default: || json!([]),
        doc: "Explicit approvals for apps in policy.require_approval_for_app.",
    },
    KeySpec {
        key: "policy.forbidden_key_combos",
        kind: Kind::StringList,
        default: || json!([]),
        doc: "Key combos refused in press_key / hotkey and inside type_text, in any notation (⌘Q, Cmd+Q, command-Q, ^Q, ⌥⇧T).",
    },
    KeySpec {
        key: "redaction.enabled",
        kind: Kind::Bool,
        default: || json!(true),
        doc: "Recordings paint password fields (and redaction.names) over in screenshots and video, and replace text typed into them.",
    },
    KeySpec {
        key: "redaction.names",
        kind: Kind::StringList,
        default: || json!([]),
        doc: "Names of elements (case-insensitive) a recording treats like password fields.",
    },
    KeySpec {
        key: "policy.output_roots",
        kind: Kind::StringList,
        default: || json!([]),
        doc: "Folders files a tool writes (screenshot_out_file, set_recording's output_dir) must be inside; empty: anywhere.",
    },
];

fn spec(key: &str) -> Result<&'static KeySpec, ToolError> {
    KEYS.iter().find(|k| k.key == key).ok_or_else(|| {
        let known: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
        ToolError::invalid(format!(
            "`key`: unknown config key `{key}` (known: {})",
            known.join(", ")
        ))
    })
}

/// Checks `value` against `key`'s type; names the field and the expected type.
pub fn validate(key: &str, value: &Value) -> Result<Value, ToolError> {
    let spec = spec(key)?;
    let bad = |want: &str| ToolError::invalid(format!("`value`: {key} takes {want}, got {value}"));
    match spec.kind {
        Kind::UInt => value
            .as_u64()
            .map(|v| json!(v))
            .ok_or_else(|| bad("a non-negative integer")),
        Kind::Number => value
            .as_f64()
            .filter(|v| v.is_finite())
            .map(|v| json!(v))
            .ok_or_else(|| bad("a number")),
        Kind::Bool => value
            .as_bool()
            .map(|v| json!(v))
            .ok_or_else(|| bad("true or false")),
        Kind::Choice(choices) => value
            .as_str()
            .filter(|s| choices.contains(s))
            .map(|s| json!(s))
            .ok_or_else(|| bad(&format!("one of {}", choices.join(", ")))),
        Kind::StringList => value
            .as_array()
            .filter(|a| a.iter().all(Value::is_string))
            .map(|a| json!(a))
            .ok_or_else(|| bad("a list of strings")),
    }
}

/// `$XDG_CONFIG_HOME/cua/config.json` (or `~/.config/cua/config.json`).
pub fn global_path() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("cua").join("config.json")
}

fn get_dotted<'a>(tree: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(tree, |v, part| v.get(part))
}

fn set_dotted(tree: &mut Value, key: &str, value: Value) {
    let parts: Vec<&str> = key.split('.').collect();
    let mut node = tree;
    for part in &parts[..parts.len() - 1] {
        if !node.get(*part).is_some_and(Value::is_object) {
            node[*part] = json!({});
        }
        node = &mut node[*part];
    }
    node[parts[parts.len() - 1]] = value;
}

/// The global defaults as stored (flat: key → value), falling back to the built-in default
/// for a key that is missing or has the wrong type; a file that does not parse counts as
/// empty, as the reference driver does.
pub fn load_global() -> Map<String, Value> {
    let stored: Value = std::fs::read(global_path())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(json!({}));
    KEYS.iter()
        .map(|k| {
            let v = get_dotted(&stored, k.key)
                .and_then(|v| validate(k.key, v).ok())
                .unwrap_or_else(k.default);
            (k.key.to_string(), v)
        })
        .collect()
}

/// Persists one global value (temporary file + rename, so readers never see half a file).
pub fn save_global(key: &str, value: Value) -> Result<PathBuf, ToolError> {
    let path = global_path();
    let mut tree = json!({ "schema_version": 1 });
    for (k, v) in load_global() {
        set_dotted(&mut tree, &k, v);
    }
    set_dotted(&mut tree, key, value);
    crate::files::write_atomic(&path, &serde_json::to_vec_pretty(&tree).unwrap_or_default())
        .map_err(|e| ToolError::failed(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

/// A flat map of effective values rendered as the nested config document.
pub fn nested(values: &Map<String, Value>) -> Value {
    let mut tree = json!({ "schema_version": 1 });
    for (k, v) in values {
        set_dotted(&mut tree, k, v.clone());
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_against_their_key() {
        assert_eq!(
            validate("max_image_dimension", &json!(1024)).unwrap(),
            json!(1024)
        );
        let e = validate("max_image_dimension", &json!("big"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`value`") && e.contains("non-negative integer"),
            "{e}"
        );
        let e = validate("max_image_dimensions", &json!(3))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`key`") && e.contains("unknown config key"),
            "{e}"
        );
        assert!(validate("capture_mode", &json!("ax")).is_ok());
        assert!(validate("capture_mode", &json!("pixels")).is_err());
        assert!(validate("policy.forbidden_apps", &json!(["Terminal"])).is_ok());
        assert!(validate("policy.forbidden_apps", &json!([1])).is_err());
    }

    #[test]
    fn dotted_keys_nest() {
        let mut flat = Map::new();
        flat.insert("agent_cursor.motion.spring".into(), json!(0.5));
        flat.insert("max_image_dimension".into(), json!(800));
        let tree = nested(&flat);
        assert_eq!(tree["agent_cursor"]["motion"]["spring"], 0.5);
        assert_eq!(get_dotted(&tree, "max_image_dimension"), Some(&json!(800)));
    }
}
