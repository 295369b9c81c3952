//! Safety policy, checked before every action tool runs (after its arguments parsed):
//! forbidden apps, apps that need an explicit approval, forbidden key combos (in any
//! notation: ⌘Q, Cmd+Q, command-Q → cmd+q; ^Q → ctrl+q; ⌥⇧T → alt+shift+t; also matched
//! inside type_text on token boundaries), and C0 control characters in type_text (other
//! than \n and \t). Rules come from the config keys `policy.*` (session override > global)
//! and from a policy file (TOML, same keys without the prefix): `$CUA_POLICY`, else
//! `$XDG_CONFIG_HOME/cua/policy.toml` when present. When app rules exist and the target
//! app cannot be identified, the action is refused (fail closed). A refusal is a
//! [`ToolError::Refused`]; while recording it is a turn marked refused.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::errors::ToolError;
use crate::tools::ToolContext;

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

/// A key combo in canonical form: modifiers in the order cmd, ctrl, alt, shift, then the
/// key, lower case, joined by `+`. None when `text` is no combo (no modifier, or no key).
pub fn normalize_combo(text: &str) -> Option<String> {
    let mut mods = [false; 4]; // cmd ctrl alt shift
    let mut rest = String::new();
    // Symbol modifiers may be glued to the key (⌘Q, ^Q, ⌥⇧T).
    for c in text.trim().chars() {
        match c {
            '⌘' => mods[0] = true,
            '⌃' | '^' => mods[1] = true,
            '⌥' => mods[2] = true,
            '⇧' => mods[3] = true,
            _ => rest.push(c),
        }
    }
    let parts: Vec<&str> = rest
        .split(['+', '-'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let mut key = None;
    for (i, part) in parts.iter().enumerate() {
        match part.to_ascii_lowercase().as_str() {
            "cmd" | "command" | "super" | "win" | "logo" | "meta" => mods[0] = true,
            "ctrl" | "control" | "ctl" => mods[1] = true,
            "alt" | "option" | "opt" => mods[2] = true,
            "shift" => mods[3] = true,
            k if i == parts.len() - 1 => key = Some(k.to_string()),
            _ => return None,
        }
    }
    let key = key?;
    if !mods.iter().any(|m| *m) {
        return None;
    }
    let names = ["cmd", "ctrl", "alt", "shift"];
    let mut out: Vec<String> = names
        .iter()
        .zip(mods)
        .filter(|(_, on)| *on)
        .map(|(n, _)| n.to_string())
        .collect();
    out.push(key);
    Some(out.join("+"))
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
    combos: Vec<String>,
}

fn rules(ctx: &ToolContext) -> Result<Rules, ToolError> {
    let file = load_file()?;
    let (config, _) = ctx.config_snapshot();
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
            .filter_map(|c| normalize_combo(c))
            .collect(),
    })
}

/// Names the target app goes by: executable, window app names, launch name.
async fn app_names(ctx: &ToolContext, tool: &str, args: &Value) -> Option<Vec<String>> {
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
    if let Some(exe) = crate::platform::linux::apps::process_executable(pid) {
        names.push(exe);
    }
    if let Ok(platform) = ctx.platform().await {
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

/// Refuses the call when the policy forbids it.
pub async fn check(ctx: &ToolContext, tool: &str, args: &Value) -> Result<(), ToolError> {
    if tool == "type_text" {
        if let Some(text) = args.get("text").and_then(Value::as_str) {
            if let Some(c) = text.chars().find(|c| crate::tools::keys::is_c0_control(*c)) {
                return Err(ToolError::Refused(format!(
                    "policy: `text` holds the control character U+{:04X}; only \\n and \\t are allowed",
                    c as u32
                )));
            }
        }
    }
    let rules = rules(ctx)?;
    let app_rules = !rules.forbidden_apps.is_empty() || !rules.require_approval.is_empty();
    let targets_app = tool == "launch_app" || args.get("pid").is_some();
    if app_rules && targets_app {
        let Some(names) = app_names(ctx, tool, args).await else {
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
        let pressed: Vec<String> = match tool {
            "press_key" => {
                let mut parts = strings(args.get("modifiers").unwrap_or(&Value::Null));
                parts.extend(args.get("key").and_then(Value::as_str).map(String::from));
                normalize_combo(&parts.join("+")).into_iter().collect()
            }
            "hotkey" => {
                normalize_combo(&strings(args.get("keys").unwrap_or(&Value::Null)).join("+"))
                    .into_iter()
                    .collect()
            }
            "type_text" => args
                .get("text")
                .and_then(Value::as_str)
                .map(|t| t.split_whitespace().filter_map(normalize_combo).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        if let Some(c) = pressed.iter().find(|c| rules.combos.contains(c)) {
            return Err(ToolError::Refused(format!(
                "policy: the key combo {c} is forbidden"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combos_normalize_from_every_notation() {
        for (text, want) in [
            ("⌘Q", "cmd+q"),
            ("Cmd+Q", "cmd+q"),
            ("command-Q", "cmd+q"),
            ("^Q", "ctrl+q"),
            ("⌥⇧T", "alt+shift+t"),
            ("shift+alt+t", "alt+shift+t"),
            ("Ctrl+Alt+Delete", "ctrl+alt+delete"),
            ("super+l", "cmd+l"),
        ] {
            assert_eq!(normalize_combo(text).as_deref(), Some(want), "{text}");
        }
        for text in ["q", "hello", "ctrl+", "a+b", ""] {
            assert_eq!(normalize_combo(text), None, "{text}");
        }
    }
}
