//! The server's authority, fixed when it starts (`cua serve --permission-mode …`,
//! `--capability-manifest …`), in cua-driver's terms so the clients that launch it get
//! what they ask for:
//! - `standard`: cua-driver's standard profile for what cua does: process termination
//!   (kill_app) and changing a page (execute_javascript, click_element, insert_text) are
//!   refused;
//! - `bounded`: only what an approved capability manifest allows;
//! - `unrestricted`: everything (needs `--dangerously-bypass-approvals`, as cua-driver's).
//!
//! A capability manifest (YAML, version 3) narrows any mode, never widens it: `allow.tools`
//! (when given, the only tools callable) and `deny.tools`. Its resource grants (apps,
//! windows, files, processes, browser profiles) are not enforced by cua, so a manifest that
//! declares any is refused at start-up, naming the field, rather than half-honoured.
//! Without a mode the server runs as cua always has: the policy file alone decides.

use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use super::driver_policy::Rule;
use crate::errors::ToolError;

/// cua-driver's permission modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionMode {
    Standard,
    Bounded,
    Unrestricted,
}

impl std::str::FromStr for PermissionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "standard" => Ok(PermissionMode::Standard),
            "bounded" => Ok(PermissionMode::Bounded),
            "unrestricted" => Ok(PermissionMode::Unrestricted),
            other => Err(format!(
                "`--permission-mode`: standard, bounded or unrestricted, got {other:?}"
            )),
        }
    }
}

impl PermissionMode {
    pub fn name(self) -> &'static str {
        match self {
            PermissionMode::Standard => "standard",
            PermissionMode::Bounded => "bounded",
            PermissionMode::Unrestricted => "unrestricted",
        }
    }
}

/// The tools a capability manifest or a policy file lets through.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCeiling {
    /// When this and `rules` are empty, every tool not denied; else only these, and the
    /// tools of the rules a call's arguments meet.
    pub allow: Vec<String>,
    pub rules: Vec<Rule>,
    pub deny: Vec<String>,
}

impl ToolCeiling {
    /// Why the call is refused, if it is.
    fn refusal(&self, tool: &str, args: &Value) -> Option<String> {
        if self.deny.iter().any(|t| t == tool) {
            return Some(format!("{tool} is in deny.tools"));
        }
        let open = self.allow.is_empty() && self.rules.is_empty();
        let allowed = open
            || self.allow.iter().any(|t| t == tool)
            || self
                .rules
                .iter()
                .any(|r| r.tool == tool && super::driver_policy::rule_allows(r, args));
        match (allowed, self.rules.iter().any(|r| r.tool == tool)) {
            (true, _) => None,
            (false, true) => Some(format!(
                "{tool}'s arguments meet none of its allow.rules constraints"
            )),
            (false, false) => Some(format!("{tool} is not in allow.tools or allow.rules")),
        }
    }

    /// Whether tools/list shows the tool: not denied, and allowed or allowable by a rule.
    fn lists(&self, tool: &str) -> bool {
        !self.deny.iter().any(|t| t == tool)
            && ((self.allow.is_empty() && self.rules.is_empty())
                || self.allow.iter().any(|t| t == tool)
                || self.rules.iter().any(|r| r.tool == tool))
    }
}

/// What the server may do, for its whole life.
#[derive(Debug, Clone, PartialEq)]
pub struct Authority {
    pub mode: Option<PermissionMode>,
    /// From `--capability-manifest`.
    pub ceiling: Option<ToolCeiling>,
    /// From the policy file `CUA_DRIVER_POLICY_FILE` names ([`super::driver_policy`]).
    pub policy: Option<ToolCeiling>,
}

/// The launch flags, as given.
#[derive(Debug, Default)]
pub struct LaunchFlags<'a> {
    /// Every tool the server serves (a manifest naming another is refused).
    pub tools: Vec<&'a str>,
    pub mode: Option<PermissionMode>,
    pub bypass_approvals: bool,
    pub manifest: Option<&'a Path>,
    pub manifest_approved: bool,
    /// The policy file `CUA_DRIVER_POLICY_FILE` names.
    pub policy_file: Option<&'a Path>,
}

/// cua-driver's launch configuration in the environment, for launchers that cannot pass
/// flags (an MCP client that starts `cua mcp`): the same authority, read once at start.
pub const MODE_ENV: &str = "CUA_DRIVER_PERMISSION_MODE";
pub const MANIFEST_ENV: &str = "CUA_DRIVER_CAPABILITY_MANIFEST_FILE";
pub const MANIFEST_APPROVED_ENV: &str = "CUA_DRIVER_CAPABILITY_MANIFEST_APPROVED";
pub const BYPASS_ENV: &str = "CUA_DRIVER_DANGEROUSLY_BYPASS_APPROVALS";

/// What the environment asks for (see [`MODE_ENV`] and its siblings).
#[derive(Debug, Default, PartialEq)]
pub struct LaunchEnv {
    pub mode: Option<PermissionMode>,
    pub manifest: Option<std::path::PathBuf>,
    pub manifest_approved: bool,
    pub bypass_approvals: bool,
}

/// Reads the launch configuration from `var` (the process environment, in use). As in
/// cua-driver, the environment form is not normalised as the flags are: each mode needs
/// its other half spelled out (unrestricted its acknowledgement, bounded an approved
/// manifest), and a missing half fails start-up rather than falling back to standard.
pub fn launch_env(var: impl Fn(&str) -> Option<String>) -> Result<LaunchEnv, String> {
    let set = |k: &str| var(k).filter(|v| !v.trim().is_empty());
    let flag = |k: &str| -> Result<bool, String> {
        match set(k).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("0" | "false" | "no" | "off") => Ok(false),
            Some("1" | "true" | "yes" | "on") => Ok(true),
            Some(other) => Err(format!(
                "{k}={other:?}: expected 1, true, yes or on (or 0, false, no, off)"
            )),
        }
    };
    let mode = match set(MODE_ENV) {
        None => None,
        Some(v) => Some(v.trim().parse::<PermissionMode>().map_err(|_| {
            format!("{MODE_ENV}={v:?}: expected standard, bounded or unrestricted")
        })?),
    };
    let env = LaunchEnv {
        mode,
        manifest: set(MANIFEST_ENV).map(std::path::PathBuf::from),
        manifest_approved: flag(MANIFEST_APPROVED_ENV)?,
        bypass_approvals: flag(BYPASS_ENV)?,
    };
    match env.mode {
        Some(PermissionMode::Unrestricted) if !env.bypass_approvals => {
            return Err(format!(
                "{MODE_ENV}=unrestricted needs {BYPASS_ENV}=1 (acknowledging its risk)"
            ));
        }
        Some(PermissionMode::Bounded) if env.manifest.is_none() => {
            return Err(format!(
                "{MODE_ENV}=bounded needs {MANIFEST_ENV} (and {MANIFEST_APPROVED_ENV}=1)"
            ));
        }
        Some(PermissionMode::Standard | PermissionMode::Bounded) | None if env.bypass_approvals => {
            return Err(format!(
                "{BYPASS_ENV}=1 goes with {MODE_ENV}=unrestricted, and that is not set"
            ));
        }
        _ => {}
    }
    if let Some(path) = &env.manifest
        && !env.manifest_approved
    {
        return Err(format!(
            "{MANIFEST_ENV}={} needs {MANIFEST_APPROVED_ENV}=1 (the launcher's word that it was reviewed)",
            path.display()
        ));
    }
    Ok(env)
}

static AUTHORITY: OnceLock<Authority> = OnceLock::new();

/// The authority the launch flags ask for, or why they cannot be honoured.
pub fn from_flags(flags: &LaunchFlags) -> Result<Authority, String> {
    if flags.bypass_approvals
        && flags
            .mode
            .is_some_and(|m| m != PermissionMode::Unrestricted)
    {
        return Err(
            "`--dangerously-bypass-approvals` selects unrestricted mode; it contradicts `--permission-mode`"
                .into(),
        );
    }
    let mode = if flags.bypass_approvals {
        Some(PermissionMode::Unrestricted)
    } else {
        flags.mode
    };
    if mode == Some(PermissionMode::Unrestricted) && !flags.bypass_approvals {
        return Err(
            "`--permission-mode unrestricted` needs `--dangerously-bypass-approvals` (acknowledging its risk)"
                .into(),
        );
    }
    let ceiling = match flags.manifest {
        Some(path) => {
            if !flags.manifest_approved {
                return Err(format!(
                    "`--capability-manifest {}` needs `--approve-capability-manifest` (the launcher's word that it was reviewed)",
                    path.display()
                ));
            }
            Some(read_manifest(path, &flags.tools)?)
        }
        None if mode == Some(PermissionMode::Bounded) => {
            return Err("`--permission-mode bounded` needs `--capability-manifest FILE`".into());
        }
        None => None,
    };
    let policy = match flags.policy_file {
        Some(path) => Some(read_policy_file(path, &flags.tools)?),
        None => None,
    };
    Ok(Authority {
        mode,
        ceiling,
        policy,
    })
}

/// The ceiling of cua-driver's policy file.
fn read_policy_file(path: &Path, known: &[&str]) -> Result<ToolCeiling, String> {
    let at = format!(
        "policy file {} ({})",
        path.display(),
        super::driver_policy::POLICY_FILE_ENV
    );
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at}: {e}"))?;
    let p = super::driver_policy::parse(&text, known).map_err(|e| format!("{at}: {e}"))?;
    Ok(ToolCeiling {
        allow: p.allow,
        rules: p.rules,
        deny: p.deny,
    })
}

/// Whether tools/list shows the tool under the authority in force.
pub fn lists(tool: &str) -> bool {
    current().is_none_or(|a| {
        [&a.ceiling, &a.policy]
            .into_iter()
            .flatten()
            .all(|c| c.lists(tool))
    })
}

/// Fixes this process's authority (once: a second call is refused).
pub fn install(authority: Authority) -> Result<(), String> {
    AUTHORITY
        .set(authority)
        .map_err(|_| "the server's authority is already set".to_string())
}

/// The authority in force (None: the policy file alone decides).
pub fn current() -> Option<&'static Authority> {
    AUTHORITY.get()
}

/// Refuses a call the server's authority does not allow.
pub fn check(tool: &str, args: &Value) -> Result<(), ToolError> {
    match current() {
        Some(a) => a.check(tool, args),
        None => Ok(()),
    }
}

impl Authority {
    pub fn check(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        if let Some(why) = self.ceiling.as_ref().and_then(|c| c.refusal(tool, args)) {
            return Err(ToolError::Refused(format!("capability manifest: {why}")));
        }
        // cua-driver's clients look for its words, "Permission denied".
        if let Some(why) = self.policy.as_ref().and_then(|c| c.refusal(tool, args)) {
            return Err(ToolError::Refused(format!(
                "Permission denied by the policy file ({}): {why}",
                super::driver_policy::POLICY_FILE_ENV
            )));
        }
        // As in cua-driver, in every mode: an agent's call never raises the system's
        // permission prompts; the host that launched the server does that.
        if self.mode.is_some() && tool == "check_permissions" && args["prompt"] == true {
            return Err(ToolError::RefusedAs {
                code: "os_permission_prompt_requires_trusted_host".into(),
                message: format!(
                    "{} permission mode: operating-system permission prompts are started by the trusted host that launched cua, never by an agent's call; call check_permissions with prompt false to read the state",
                    self.mode.map(PermissionMode::name).unwrap_or_default()
                ),
            });
        }
        if self.mode == Some(PermissionMode::Standard) {
            if tool == "kill_app" {
                return Err(ToolError::Refused(
                    "standard permission mode: kill_app needs bounded (a manifest) or unrestricted mode"
                        .into(),
                ));
            }
            let page_acts = ["execute_javascript", "click_element", "insert_text"]
                .iter()
                .any(|a| args["action"] == *a);
            if tool == "page" && page_acts {
                return Err(ToolError::Refused(format!(
                    "standard permission mode: page {} changes the page and needs unrestricted mode",
                    args["action"].as_str().unwrap_or_default()
                )));
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    version: u32,
    #[serde(default)]
    mode: Option<Value>,
    #[serde(default)]
    expires_after: Option<Value>,
    #[serde(default)]
    idle_timeout: Option<Value>,
    #[serde(default)]
    resources: Option<serde_yaml_ng::Mapping>,
    #[serde(default)]
    allow: Tools,
    #[serde(default)]
    deny: Tools,
    #[serde(default)]
    ask: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Tools {
    #[serde(default)]
    tools: Vec<String>,
}

/// A capability manifest's tool ceiling; what cua cannot enforce is refused by name.
pub fn read_manifest(path: &Path, known: &[&str]) -> Result<ToolCeiling, String> {
    let at = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("capability manifest {at}: {e}"))?;
    parse_manifest(&text, known).map_err(|e| format!("capability manifest {at}: {e}"))
}

fn parse_manifest(text: &str, known: &[&str]) -> Result<ToolCeiling, String> {
    let m: Manifest = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    if m.version != 3 {
        return Err(format!(
            "version {}: cua reads capability manifest version 3",
            m.version
        ));
    }
    for (field, given) in [
        ("mode", m.mode.is_some()),
        ("expires_after", m.expires_after.is_some()),
        ("idle_timeout", m.idle_timeout.is_some()),
        ("ask", m.ask.is_some()),
    ] {
        if given {
            return Err(format!("`{field}`: not part of a version 3 manifest"));
        }
    }
    if let Some(resources) = m.resources {
        let declared: Vec<String> = resources
            .iter()
            .filter(|(_, v)| !is_empty_yaml(v))
            .filter_map(|(k, _)| k.as_str().map(String::from))
            .collect();
        if !declared.is_empty() {
            return Err(format!(
                "`resources.{}`: cua does not enforce resource grants; only allow.tools and deny.tools bound it",
                declared.join("`, `resources.")
            ));
        }
    }
    for t in m.allow.tools.iter().chain(&m.deny.tools) {
        if !known.contains(&t.as_str()) {
            let hint = crate::suggest::did_you_mean(t, known.iter().copied());
            return Err(format!("unknown tool `{t}`{hint}"));
        }
    }
    Ok(ToolCeiling {
        allow: m.allow.tools,
        rules: Vec::new(),
        deny: m.deny.tools,
    })
}

fn is_empty_yaml(v: &serde_yaml_ng::Value) -> bool {
    match v {
        serde_yaml_ng::Value::Null => true,
        serde_yaml_ng::Value::Bool(b) => !b,
        serde_yaml_ng::Value::Sequence(s) => s.is_empty(),
        serde_yaml_ng::Value::Mapping(m) => m.values().all(is_empty_yaml),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOOLS: &[&str] = &["get_config", "click", "zoom"];

    fn env(pairs: &[(&str, &str)]) -> Result<LaunchEnv, String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        launch_env(|k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn the_environment_sets_a_mode_with_its_other_half_spelled_out() {
        assert_eq!(env(&[]).unwrap(), LaunchEnv::default());
        let standard = env(&[(MODE_ENV, "standard")]).unwrap();
        assert_eq!(standard.mode, Some(PermissionMode::Standard));
        let unrestricted = env(&[(MODE_ENV, "unrestricted"), (BYPASS_ENV, "yes")]).unwrap();
        assert!(unrestricted.bypass_approvals);
        let bounded = env(&[
            (MODE_ENV, "bounded"),
            (MANIFEST_ENV, "/m.yaml"),
            (MANIFEST_APPROVED_ENV, "1"),
        ])
        .unwrap();
        assert_eq!(bounded.manifest.as_deref(), Some(Path::new("/m.yaml")));
        for (pairs, names) in [
            (vec![(MODE_ENV, "yolo")], MODE_ENV),
            (vec![(MODE_ENV, "unrestricted")], BYPASS_ENV),
            (vec![(MODE_ENV, "bounded")], MANIFEST_ENV),
            (vec![(BYPASS_ENV, "1")], MODE_ENV),
            (
                vec![(MODE_ENV, "standard"), (BYPASS_ENV, "maybe")],
                BYPASS_ENV,
            ),
            (vec![(MANIFEST_ENV, "/m.yaml")], MANIFEST_APPROVED_ENV),
        ] {
            let e = env(&pairs).unwrap_err();
            assert!(e.contains(names), "{pairs:?}: {e}");
        }
    }

    #[test]
    fn a_permission_prompt_is_refused_in_every_mode_and_a_read_is_not() {
        for mode in [
            PermissionMode::Standard,
            PermissionMode::Bounded,
            PermissionMode::Unrestricted,
        ] {
            let a = Authority {
                mode: Some(mode),
                ceiling: None,
                policy: None,
            };
            let e = a
                .check("check_permissions", &json!({ "prompt": true }))
                .unwrap_err();
            assert_eq!(
                e.refusal_code(),
                Some("os_permission_prompt_requires_trusted_host")
            );
            assert!(
                a.check("check_permissions", &json!({ "prompt": false }))
                    .is_ok()
            );
            assert!(a.check("check_permissions", &json!({})).is_ok());
        }
    }

    #[test]
    fn a_manifest_narrows_tools_and_what_cua_cannot_enforce_is_refused_by_name() {
        let c = parse_manifest(
            "version: 3\nallow:\n  tools: [get_config, click]\ndeny:\n  tools: [click]\n",
            TOOLS,
        )
        .unwrap();
        let a = Authority {
            mode: Some(PermissionMode::Bounded),
            ceiling: Some(c),
            policy: None,
        };
        assert!(a.check("get_config", &json!({})).is_ok());
        assert!(
            a.check("click", &json!({}))
                .unwrap_err()
                .to_string()
                .contains("deny.tools")
        );
        assert!(
            a.check("zoom", &json!({}))
                .unwrap_err()
                .to_string()
                .contains("allow.tools")
        );
        let err = parse_manifest(
            "version: 3\nresources:\n  processes:\n    terminate: [12]\n",
            TOOLS,
        )
        .unwrap_err();
        assert!(err.contains("resources.processes"), "{err}");
        assert!(parse_manifest("version: 3\nresources:\n  files: {read: []}\n", TOOLS).is_ok());
        assert!(
            parse_manifest("version: 2\n", TOOLS)
                .unwrap_err()
                .contains("version 3")
        );
        assert!(
            parse_manifest("version: 3\nallow:\n  tools: [clik]\n", TOOLS)
                .unwrap_err()
                .contains("did you mean `click`")
        );
        assert!(
            parse_manifest("version: 3\nmode: bounded\n", TOOLS)
                .unwrap_err()
                .contains("`mode`")
        );
    }

    #[test]
    fn modes_need_their_acknowledgements_and_standard_refuses_what_cua_driver_refuses() {
        let unrestricted = LaunchFlags {
            mode: Some(PermissionMode::Unrestricted),
            ..Default::default()
        };
        assert!(
            from_flags(&unrestricted)
                .unwrap_err()
                .contains("--dangerously-bypass-approvals")
        );
        let bounded = LaunchFlags {
            mode: Some(PermissionMode::Bounded),
            ..Default::default()
        };
        assert!(
            from_flags(&bounded)
                .unwrap_err()
                .contains("--capability-manifest")
        );
        let contradictory = LaunchFlags {
            mode: Some(PermissionMode::Standard),
            bypass_approvals: true,
            ..Default::default()
        };
        assert!(from_flags(&contradictory).is_err());
        let standard = from_flags(&LaunchFlags {
            mode: Some(PermissionMode::Standard),
            ..Default::default()
        })
        .unwrap();
        assert!(standard.check("kill_app", &json!({ "pid": 1 })).is_err());
        assert!(
            standard
                .check("page", &json!({ "action": "execute_javascript" }))
                .is_err()
        );
        assert!(
            standard
                .check("page", &json!({ "action": "click_element" }))
                .is_err()
        );
        assert!(
            standard
                .check("page", &json!({ "action": "get_text" }))
                .is_ok()
        );
        assert!(standard.check("click", &json!({})).is_ok());
        let bypass = from_flags(&LaunchFlags {
            bypass_approvals: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(bypass.mode, Some(PermissionMode::Unrestricted));
        assert!(bypass.check("kill_app", &json!({})).is_ok());
    }

    #[test]
    fn a_policy_file_hides_denied_tools_and_refuses_calls_its_rules_do_not_allow() {
        let dir = std::env::temp_dir().join(format!("cua-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("policy.yaml");
        std::fs::write(
            &path,
            "allow:\n  tools: [get_config]\n  rules:\n    - tool: zoom\n      constraints:\n        window_id: {\"const\": 7}\ndeny:\n  tools: [click]\n",
        )
        .unwrap();
        let a = from_flags(&LaunchFlags {
            tools: TOOLS.to_vec(),
            policy_file: Some(&path),
            ..Default::default()
        })
        .unwrap();
        let c = a.policy.as_ref().unwrap();
        assert!(c.lists("get_config") && c.lists("zoom") && !c.lists("click"));
        assert!(a.check("get_config", &json!({})).is_ok());
        assert!(a.check("zoom", &json!({ "window_id": 7 })).is_ok());
        let err = a.check("zoom", &json!({ "window_id": 8 })).unwrap_err();
        assert!(err.to_string().contains("Permission denied"), "{err}");
        assert!(a.check("click", &json!({})).is_err());
        std::fs::write(&path, "deny:\n  tools: [clik]\n").unwrap();
        let err = from_flags(&LaunchFlags {
            tools: TOOLS.to_vec(),
            policy_file: Some(&path),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            err.contains("CUA_DRIVER_POLICY_FILE") && err.contains("`clik`"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
