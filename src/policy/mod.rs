//! Safety policy, checked before every action tool runs (after its arguments parsed):
//! forbidden apps, apps that need an explicit approval, forbidden key combos, and C0
//! control characters in type_text (other than \n and \t). Combos, forbidden and pressed,
//! resolve through the one key vocabulary ([`crate::keys::Combo`]): ⌘Q, Cmd+Q, command-Q,
//! super+q and `hotkey ["cmd", "U+0071"]` are one combo; `meta` is Alt everywhere. They are
//! also matched inside type_text on whitespace-separated tokens. Rules come from the config keys `policy.*` (session override > global)
//! and from a policy file (TOML, same keys without the prefix): `$CUA_POLICY`, else
//! `$XDG_CONFIG_HOME/cua/policy.toml` when present. When app rules exist and the target
//! app cannot be identified, the action is refused (fail closed). A refusal is a
//! [`ToolError::Refused`]; while recording it is a turn marked refused.
//!
//! Paths a tool writes to ([`output_path`]), from read-only tools too: inside
//! `policy.output_roots` when set, and never over an existing file that is not an image.

pub mod authority;
pub mod driver_policy;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::errors::ToolError;
use crate::keys::Combo;
use crate::platform::Platform;

/// The policy file's contents.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    #[serde(default)]
    pub forbidden_apps: Vec<String>,
    #[serde(default)]
    pub require_approval_for_app: Vec<String>,
    #[serde(default)]
    pub approved_apps: Vec<String>,
    #[serde(default)]
    pub forbidden_key_combos: Vec<String>,
    #[serde(default)]
    pub output_roots: Vec<String>,
}

/// The policy file in force, if any.
pub fn policy_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CUA_POLICY").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let default = crate::config::global_path().with_file_name("policy.toml");
    default.is_file().then_some(default)
}

/// Reads the policy file; a file that cannot be read or parsed refuses everything (its
/// line and field named), since a policy that silently did nothing would be worse.
pub fn load_file() -> Result<PolicyFile, ToolError> {
    let Some(path) = policy_path() else {
        return Ok(PolicyFile::default());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ToolError::Refused(format!("policy file {}: {e}", path.display())))?;
    toml::from_str(&text)
        .map_err(|e| ToolError::Refused(format!("policy file {}: {e}", path.display())))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

struct Rules {
    forbidden_apps: Vec<String>,
    require_approval: Vec<String>,
    approved: Vec<String>,
    /// Canonical forms ([`Combo::canonical`]).
    combos: Vec<Combo>,
    output_roots: Vec<String>,
}

/// The rules in force: `config` (the caller's effective config values) and the policy file.
fn rules(config: &Map<String, Value>) -> Result<Rules, ToolError> {
    let file = load_file()?;
    let both = |key: &str, from_file: &[String]| {
        let mut v = strings(config.get(key).unwrap_or(&Value::Null));
        v.extend(from_file.iter().cloned());
        v
    };
    Ok(Rules {
        forbidden_apps: both("policy.forbidden_apps", &file.forbidden_apps),
        require_approval: both(
            "policy.require_approval_for_app",
            &file.require_approval_for_app,
        ),
        approved: both("policy.approved_apps", &file.approved_apps),
        combos: both("policy.forbidden_key_combos", &file.forbidden_key_combos)
            .iter()
            .map(|c| {
                Combo::parse(c).map(|c| c.canonical()).ok_or_else(|| {
                    // Dropping it would leave the combo allowed: refuse until it is fixed.
                    ToolError::Refused(format!(
                        "policy: forbidden_key_combos: `{c}` is not a key combo (modifiers, then one key: \"ctrl+w\", \"⌘Q\", \"alt+f4\")"
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
        output_roots: both("policy.output_roots", &file.output_roots),
    })
}

/// Names the target app goes by: executable, window app names, launch name.
async fn app_names(
    desktop: impl Future<Output = Option<Arc<dyn Platform>>>,
    tool: &str,
    args: &Value,
) -> Option<Vec<String>> {
    if tool == "launch_app" {
        let names: Vec<String> = ["name", "desktop_id", "path"]
            .iter()
            .filter_map(|k| args.get(*k).and_then(Value::as_str))
            .flat_map(|s| {
                let base = std::path::Path::new(s)
                    .file_name()
                    .map(|b| b.to_string_lossy().into_owned());
                [Some(s.to_string()), base].into_iter().flatten()
            })
            .collect();
        return (!names.is_empty()).then_some(names);
    }
    let pid = args.get("pid").and_then(Value::as_u64)? as u32;
    let mut names = Vec::new();
    if let Some(platform) = desktop.await {
        if let Some(exe) = platform.process_executable(pid) {
            names.push(exe);
        }
        if let Ok(list) = platform.list_windows().await {
            names.extend(
                list.windows
                    .into_iter()
                    .filter(|w| w.pid == Some(pid))
                    .map(|w| w.app_name),
            );
        }
    }
    (!names.is_empty()).then_some(names)
}

fn listed(names: &[String], list: &[String]) -> Option<String> {
    names
        .iter()
        .find(|n| list.iter().any(|l| l.eq_ignore_ascii_case(n)))
        .cloned()
}

/// The combos a call presses, read as the tools read them (arguments a tool would refuse
/// press nothing), plus the combos written out in type_text's text.
fn pressed(tool: &str, args: &Value) -> Vec<Combo> {
    match tool {
        "press_key" => args
            .get("key")
            .and_then(Value::as_str)
            .and_then(|key| {
                Combo::from_parts(key, &strings(args.get("modifiers").unwrap_or(&Value::Null))).ok()
            })
            .into_iter()
            .collect(),
        "hotkey" => Combo::from_keys(&strings(args.get("keys").unwrap_or(&Value::Null)))
            .ok()
            .into_iter()
            .collect(),
        "type_text" => args
            .get("text")
            .and_then(Value::as_str)
            .map(|t| {
                t.split_whitespace()
                    .filter_map(Combo::parse)
                    .filter(|c| !c.mods.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Where a tool may write what an agent named in `field`: `~` expanded; inside one of
/// `policy.output_roots` when any are set (links resolved, so none can lead out); and, for
/// a file (`folder` false), in an existing folder, replacing an existing file only when it
/// is an image (PNG or JPEG) or empty: an agent's path must never destroy a document. A
/// folder (`folder` true: a recording's output_dir) may not exist yet.
pub fn output_path(
    config: &Map<String, Value>,
    field: &str,
    path: &str,
    folder: bool,
) -> Result<PathBuf, ToolError> {
    let p = crate::files::expand_home(path);
    let p = if p.is_absolute() {
        p
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let target = if folder {
        resolve_new_path(&p).ok_or_else(|| {
            ToolError::invalid(format!(
                "`{field}`: `{path}` has `..` after the part that exists"
            ))
        })?
    } else {
        let name = p
            .file_name()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| ToolError::invalid(format!("`{field}`: `{path}` names no file")))?
            .to_owned();
        let parent = p.parent().unwrap_or(std::path::Path::new("/"));
        // A file is replaced by a rename, never written through a link: only its folder
        // is resolved.
        std::fs::canonicalize(parent)
            .map_err(|_| {
                ToolError::invalid(format!(
                    "`{field}`: directory `{}` does not exist",
                    parent.display()
                ))
            })?
            .join(name)
    };
    let roots = rules(config)?.output_roots;
    if !roots.is_empty() {
        let inside = roots.iter().any(|r| {
            std::fs::canonicalize(crate::files::expand_home(r))
                .is_ok_and(|root| target.starts_with(root))
        });
        if !inside {
            return Err(ToolError::Refused(format!(
                "policy: `{field}`: `{}` is outside policy.output_roots ({})",
                target.display(),
                roots.join(", ")
            )));
        }
    }
    if !folder {
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() => {
                return Err(ToolError::invalid(format!(
                    "`{field}`: `{}` is a directory",
                    target.display()
                )));
            }
            Ok(m) if m.len() > 0 && !(m.is_file() && holds_an_image(&target)) => {
                return Err(ToolError::Refused(format!(
                    "policy: `{field}`: `{}` exists and is not an image; cua only replaces images (choose a new name)",
                    target.display()
                )));
            }
            _ => {}
        }
    }
    Ok(target)
}

/// `p` with its longest existing ancestor resolved (links followed) and the rest appended;
/// None when the rest holds `..` (it could climb out of what was resolved).
fn resolve_new_path(p: &std::path::Path) -> Option<PathBuf> {
    let mut existing = p.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::canonicalize(&existing).is_err() {
        rest.push(existing.file_name()?.to_owned());
        existing = existing.parent()?.to_path_buf();
    }
    if rest.iter().any(|c| c == "..") {
        return None;
    }
    let mut resolved = std::fs::canonicalize(&existing).ok()?;
    resolved.extend(rest.iter().rev());
    Some(resolved)
}

/// Whether the file starts like a PNG or a JPEG.
fn holds_an_image(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = f.read(&mut head).unwrap_or(0);
    head[..n].starts_with(b"\x89PNG\r\n\x1a\n") || head[..n].starts_with(&[0xff, 0xd8, 0xff])
}

/// Refuses the call when the policy forbids it. `config` is the caller's effective config;
/// `desktop` connects to the desktop, awaited only when app rules need the target's names.
pub async fn check(
    config: &Map<String, Value>,
    desktop: impl Future<Output = Option<Arc<dyn Platform>>>,
    tool: &str,
    args: &Value,
) -> Result<(), ToolError> {
    if tool == "type_text" {
        if let Some(text) = args.get("text").and_then(Value::as_str) {
            if let Some(c) = text.chars().find(|c| crate::keys::is_c0_control(*c)) {
                return Err(ToolError::Refused(format!(
                    "policy: `text` holds the control character U+{:04X}; only \\n and \\t are allowed",
                    c as u32
                )));
            }
        }
    }
    let rules = rules(config)?;
    let app_rules = !rules.forbidden_apps.is_empty() || !rules.require_approval.is_empty();
    let targets_app = tool == "launch_app" || args.get("pid").is_some();
    if app_rules && targets_app {
        let Some(names) = app_names(desktop, tool, args).await else {
            return Err(ToolError::Refused(
                "policy: app rules are set and the target app cannot be identified (refused to be safe)"
                    .into(),
            ));
        };
        if let Some(app) = listed(&names, &rules.forbidden_apps) {
            return Err(ToolError::Refused(format!(
                "policy: {app} is a forbidden app"
            )));
        }
        if let Some(app) = listed(&names, &rules.require_approval) {
            if listed(&names, &rules.approved).is_none() {
                return Err(ToolError::Refused(format!(
                    "policy: approval required for {app} (approve it with set_config policy.approved_apps)"
                )));
            }
        }
    }
    if !rules.combos.is_empty() {
        let pressed = pressed(tool, args);
        if let Some(c) = pressed
            .iter()
            .map(Combo::canonical)
            .find(|c| rules.combos.contains(c))
        {
            return Err(ToolError::Refused(format!(
                "policy: the key combo {} is forbidden",
                c.label()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{MODIFIER_NAMES, Modifier, NAMED};
    use proptest::prelude::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn forbids(forbidden: &str, tool: &str, args: Value) -> bool {
        let rule = Combo::parse(forbidden).unwrap().canonical();
        pressed(tool, &args).iter().any(|c| c.canonical() == rule)
    }

    #[test]
    fn the_bypasses_seen_are_refused() {
        let ctrl_w = json!({"key": "0x77", "modifiers": ["ctrl"]});
        assert!(forbids("Ctrl+W", "press_key", ctrl_w));
        assert!(forbids(
            "Ctrl+W",
            "hotkey",
            json!({"keys": ["ctrl", "U+0077"]})
        ));
        assert!(forbids("Alt+F4", "hotkey", json!({"keys": ["meta", "f4"]})));
        assert!(forbids("⌘Q", "hotkey", json!({"keys": ["super", "Q"]})));
        assert!(forbids(
            "ctrl+shift+w",
            "press_key",
            json!({"key": "0x57", "modifiers": ["ctrl"]})
        ));
        assert!(forbids(
            "ctrl++",
            "hotkey",
            json!({"keys": ["ctrl", "plus"]})
        ));
        assert!(forbids(
            "Command-Q",
            "type_text",
            json!({"text": "press ⌘Q now"})
        ));
        // Other combos pass.
        assert!(!forbids(
            "Ctrl+W",
            "hotkey",
            json!({"keys": ["ctrl", "shift", "w"]})
        ));
        assert!(!forbids("Ctrl+W", "press_key", json!({"key": "w"})));
        assert!(!forbids("Ctrl+W", "type_text", json!({"text": "ctrl w"})));
    }

    #[test]
    fn policy_notations_parse_and_non_combos_do_not() {
        for (text, want) in [
            ("⌘Q", "super+q"),
            ("Cmd+Q", "super+q"),
            ("command-Q", "super+q"),
            ("^Q", "ctrl+q"),
            ("⌥⇧T", "alt+shift+t"),
            ("shift+alt+t", "alt+shift+t"),
            // As in the tools: `Delete` is X's Delete key, `delete` the reference's
            // (BackSpace).
            ("Ctrl+Alt+Delete", "ctrl+alt+forwarddelete"),
            ("ctrl+alt+delete", "ctrl+alt+delete"),
            ("ctrl+alt+forwarddelete", "ctrl+alt+forwarddelete"),
            ("meta+F4", "alt+f4"),
            ("ctrl+-", "ctrl+minus"),
            ("ctrl++", "ctrl+plus"),
            ("F4", "f4"),
        ] {
            let c = Combo::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(c.canonical().label(), want, "{text}");
        }
        for text in ["ctrl+", "a+b", "", "ctrl+hyperjump", "shift+ctrl"] {
            assert_eq!(Combo::parse(text), None, "{text}");
        }
    }

    /// Every way the tools accept to write a key: its names, its character in either
    /// case, its keysym in hex, its code point.
    fn key_notations(keysym: u32) -> Vec<String> {
        let mut out: Vec<String> = NAMED
            .iter()
            .filter(|(_, k)| *k == keysym)
            .map(|(n, _)| n.to_string())
            .collect();
        out.push(format!("0x{keysym:x}"));
        out.push(format!("0X{keysym:04X}"));
        if let Some(c) = char::from_u32(keysym).filter(|c| c.is_ascii_graphic()) {
            out.push(c.to_string());
            out.push(c.to_ascii_uppercase().to_string());
            out.push(format!("U+{:04X}", keysym));
            out.push(format!("u+{keysym:x}"));
            out.push(format!("0x{:x}", 0x0100_0000 + keysym));
        }
        if (0xffbe..=0xffc9).contains(&keysym) {
            out.push(format!("F{}", keysym - 0xffbe + 1));
        }
        out
    }

    fn modifier_names(m: Modifier) -> Vec<&'static str> {
        MODIFIER_NAMES
            .iter()
            .filter(|(_, x)| *x == m)
            .map(|(n, _)| *n)
            .collect()
    }

    fn cased(name: &str, upper: bool) -> String {
        if upper {
            name.to_ascii_uppercase()
        } else {
            name.to_string()
        }
    }

    /// A forbidden combo, written in any policy notation, is refused in press_key and
    /// hotkey whatever notation they use for its modifiers (any alias, any case, any
    /// order, repeated) and for its key; the same call with another key goes through.
    #[test]
    fn a_forbidden_combo_is_refused_in_every_notation() {
        use proptest::sample::{Index, subsequence};
        use proptest::test_runner::{Config, TestRunner};
        let all_mods = vec![
            Modifier::Ctrl,
            Modifier::Alt,
            Modifier::Shift,
            Modifier::Super,
        ];
        let keys = [
            0x77u32, 0x71, 0x74, 0x31, 0xffc0, 0xff0d, 0xff1b, 0xffff, 0xff08, 0x2b, 0x2d, 0xff09,
        ];
        let strategy = (
            proptest::sample::select(keys.to_vec()),
            subsequence(all_mods, 1..=3),
            proptest::collection::vec(any::<Index>(), 4),
            proptest::collection::vec(any::<bool>(), 4),
            0usize..3,
            any::<bool>(),
            any::<bool>(),
        );
        let cases = AtomicUsize::new(0);
        let mut runner = TestRunner::new(Config {
            cases: 10_000,
            ..Config::default()
        });
        runner
            .run(
                &strategy,
                |(keysym, mods, pick, upper, style, repeat_first, reverse)| {
                    cases.fetch_add(1, Ordering::Relaxed);
                    let combo = Combo {
                        mods: mods.clone(),
                        keysym,
                    };
                    // The policy's notation: "ctrl+alt+w", "Ctrl-Alt-w" or glyphs ("⌃⌥w").
                    // (Key names keep their case: `Delete` and `delete` are two keys.)
                    let key = Combo {
                        mods: vec![],
                        keysym,
                    }
                    .label();
                    let forbidden = match style {
                        0 => combo.label(),
                        1 => mods
                            .iter()
                            .map(|m| m.name()[..1].to_uppercase() + &m.name()[1..])
                            .chain([key])
                            .collect::<Vec<_>>()
                            .join("-"),
                        _ => {
                            let glyph = |m: &Modifier| match m {
                                Modifier::Ctrl => "⌃",
                                Modifier::Alt => "⌥",
                                Modifier::Shift => "⇧",
                                Modifier::Super => "⌘",
                            };
                            mods.iter().map(glyph).collect::<String>() + &key
                        }
                    };
                    prop_assert_eq!(
                        Combo::parse(&forbidden).map(|c| c.canonical()),
                        Some(combo.canonical()),
                        "{}",
                        forbidden
                    );
                    // The call's notation.
                    let mut names: Vec<String> = mods
                        .iter()
                        .enumerate()
                        .map(|(i, m)| {
                            let aliases = modifier_names(*m);
                            cased(aliases[pick[i].index(aliases.len())], upper[i])
                        })
                        .collect();
                    if repeat_first {
                        names.push(names[0].clone());
                    }
                    if reverse {
                        names.reverse();
                    }
                    let notations = key_notations(keysym);
                    let key = notations[pick[3].index(notations.len())].clone();
                    let mut hotkey = names.clone();
                    hotkey.push(key.clone());
                    let press = json!({"key": key, "modifiers": names});
                    prop_assert!(
                        forbids(&forbidden, "press_key", press),
                        "press_key {} {:?} vs {}",
                        key,
                        names,
                        forbidden
                    );
                    prop_assert!(
                        forbids(&forbidden, "hotkey", json!({"keys": hotkey})),
                        "hotkey {:?} vs {}",
                        hotkey,
                        forbidden
                    );
                    let other = json!({"key": "a", "modifiers": names});
                    prop_assert!(!forbids(&forbidden, "press_key", other));
                    Ok(())
                },
            )
            .unwrap();
        println!(
            "forbidden combo notations: {} cases, all refused",
            cases.load(Ordering::Relaxed)
        );
    }
}
