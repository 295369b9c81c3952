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
    /// A number from `.0` to `.1`.
    Range(f64, f64),
    /// A whole number of milliseconds up to this bound (a delay no call should wait past).
    Millis(u64),
    /// `#RRGGBB` or `#RGB`, or "" for the default.
    Color,
    /// A list of [`Kind::Color`]s (empty: the default).
    Colors,
    /// A file path, or "" for none.
    Path,
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
        default: || json!(true),
        doc: "Agent cursor overlay: an arrow that glides to each pointer action's point before it lands (daemon and MCP server; a one-shot CLI call draws none). Unset, it is on on a person's desktop and off inside a cua sandbox.",
    },
    KeySpec {
        key: "agent_cursor.motion.start_handle",
        kind: Kind::Range(0.0, 1.0),
        default: || json!(0.3),
        doc: "Agent cursor glide: how far along the line the path's first control point sits.",
    },
    KeySpec {
        key: "agent_cursor.motion.end_handle",
        kind: Kind::Range(0.0, 1.0),
        default: || json!(0.3),
        doc: "Agent cursor glide: the same, measured from the end point.",
    },
    KeySpec {
        key: "agent_cursor.motion.arc_size",
        kind: Kind::Range(0.0, 1.0),
        default: || json!(0.25),
        doc: "Agent cursor glide: sideways bulge as a fraction of the path's length (0: straight).",
    },
    KeySpec {
        key: "agent_cursor.motion.arc_flow",
        kind: Kind::Range(-1.0, 1.0),
        default: || json!(0.0),
        doc: "Agent cursor glide: where the bulge peaks (positive: toward the destination).",
    },
    KeySpec {
        key: "agent_cursor.motion.spring",
        kind: Kind::Range(0.3, 1.0),
        default: || json!(0.72),
        doc: "Agent cursor settle damping (kept for compatibility: this backend's arrow is drawn upright, so it has no rotation to settle).",
    },
    KeySpec {
        key: "agent_cursor.glide_duration_ms",
        kind: Kind::Millis(10_000),
        default: || json!(750),
        doc: "Agent cursor: how long each glide to a pointer action's point takes (the action waits for it).",
    },
    KeySpec {
        key: "agent_cursor.dwell_after_click_ms",
        kind: Kind::Millis(10_000),
        default: || json!(400),
        doc: "Agent cursor: how long a click's tool waits after the click, with the cursor resting on the target.",
    },
    KeySpec {
        key: "agent_cursor.idle_hide_ms",
        kind: Kind::Millis(600_000),
        default: || json!(3000),
        doc: "Agent cursor: how long the overlay stays after the last pointer action before it hides.",
    },
    KeySpec {
        key: "agent_cursor.style.gradient_colors",
        kind: Kind::Colors,
        default: || json!([]),
        doc: "Agent cursor arrow fill, tip to tail, as CSS hex colors (empty: the default violet). The video's cursor uses it too.",
    },
    KeySpec {
        key: "agent_cursor.style.bloom_color",
        kind: Kind::Color,
        default: || json!(""),
        doc: "Agent cursor click ripple color (empty: the default).",
    },
    KeySpec {
        key: "agent_cursor.style.image_path",
        kind: Kind::Path,
        default: || json!(""),
        doc: "Agent cursor image (PNG or JPEG, drawn at most 32 px, hot spot top left) instead of the arrow; empty: the arrow.",
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
    check(spec.kind, value)
        .map_err(|want| ToolError::invalid(format!("`value`: {key} takes {want}, got {value}")))
}

/// Checks `value` for `key` given as a tool's own argument `field` (the error names it).
pub fn validate_field(key: &str, field: &str, value: &Value) -> Result<Value, ToolError> {
    let spec = spec(key)?;
    check(spec.kind, value)
        .map_err(|want| ToolError::invalid(format!("`{field}`: takes {want}, got {value}")))
}

/// The value in its normal form, or what the kind wants.
fn check(kind: Kind, value: &Value) -> Result<Value, String> {
    let bad = |want: &str| want.to_string();
    match kind {
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
        Kind::Range(min, max) => value
            .as_f64()
            .filter(|v| (min..=max).contains(v))
            .map(|v| json!(v))
            .ok_or_else(|| bad(&format!("a number from {min} to {max}"))),
        Kind::Millis(max) => value
            .as_u64()
            .filter(|v| *v <= max)
            .map(|v| json!(v))
            .ok_or_else(|| bad(&format!("a whole number of milliseconds up to {max}"))),
        Kind::Color => value
            .as_str()
            .filter(|s| s.is_empty() || parse_color(s).is_some())
            .map(|s| json!(s))
            .ok_or_else(|| bad("a CSS hex color (#RRGGBB or #RGB) or \"\"")),
        Kind::Colors => value
            .as_array()
            .filter(|a| a.iter().all(|c| c.as_str().and_then(parse_color).is_some()))
            .map(|a| json!(a))
            .ok_or_else(|| bad("a list of CSS hex colors (#RRGGBB or #RGB)")),
        Kind::Path => value
            .as_str()
            .map(|s| json!(s))
            .ok_or_else(|| bad("a path (a string; \"\" for none)")),
    }
}

/// A CSS hex color, `#RRGGBB` or `#RGB`, as RGB.
pub fn parse_color(text: &str) -> Option<[u8; 3]> {
    let hex = text.strip_prefix('#')?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize, len: usize| u8::from_str_radix(&hex[i * len..(i + 1) * len], 16).ok();
    match hex.len() {
        6 => Some([digit(0, 2)?, digit(1, 2)?, digit(2, 2)?]),
        3 => Some([digit(0, 1)? * 17, digit(1, 1)? * 17, digit(2, 1)? * 17]),
        _ => None,
    }
}

/// The valid values the global config file sets (flat: key → value); keys it leaves out,
/// or sets to a value of the wrong type, fall to a default; a file that does not parse
/// counts as empty, as the reference driver does.
pub fn load_stored() -> Map<String, Value> {
    let stored: Value = std::fs::read(global_path())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(json!({}));
    KEYS.iter()
        .filter_map(|k| {
            let v = get_dotted(&stored, k.key).and_then(|v| validate(k.key, v).ok())?;
            Some((k.key.to_string(), v))
        })
        .collect()
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

/// Persists one global value (temporary file + rename, so readers never see half a file).
/// The file keeps only the keys someone set: a default is never written, so one that
/// depends on the desktop (`agent_cursor.enabled`) stays a default.
pub fn save_global(key: &str, value: Value) -> Result<PathBuf, ToolError> {
    let path = global_path();
    let mut stored = load_stored();
    stored.insert(key.to_string(), value);
    let tree = nested(&stored);
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
