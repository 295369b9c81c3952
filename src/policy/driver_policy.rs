//! cua-driver's permission policy file, named by `CUA_DRIVER_POLICY_FILE` when a server
//! starts (`cua mcp`, `cua serve`): YAML with `allow.tools` (callable as they are),
//! `allow.rules` (a tool callable when its arguments meet each rule's `constraints`, one
//! JSON Schema per argument) and `deny.tools`. Once `allow` names anything, only what it
//! names is callable; `deny` always wins. A denied tool is left out of tools/list too; a
//! tool some rule may allow stays listed.
//!
//! Constraints take the schema keywords `const`, `enum`, `minimum`, `maximum`, `type` and
//! `pattern`; another keyword is refused at start-up, naming it, rather than ignored.

use serde::Deserialize;
use serde_json::{Map, Value};

/// The environment variable cua-driver reads its policy file from.
pub const POLICY_FILE_ENV: &str = "CUA_DRIVER_POLICY_FILE";

/// One `allow.rules` entry: the tool, callable when every constrained argument matches.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub tool: String,
    #[serde(default)]
    pub constraints: Map<String, Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Allow {
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    rules: Vec<Rule>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Deny {
    #[serde(default)]
    tools: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    allow: Allow,
    #[serde(default)]
    deny: Deny,
}

/// What a policy file allows, in the ceiling's terms.
pub struct Parsed {
    pub allow: Vec<String>,
    pub rules: Vec<Rule>,
    pub deny: Vec<String>,
}

const KEYWORDS: &[&str] = &["const", "enum", "minimum", "maximum", "type", "pattern"];

/// The policy file's text, checked: every tool is one `known`, every constraint uses
/// keywords cua evaluates.
pub fn parse(text: &str, known: &[&str]) -> Result<Parsed, String> {
    let file: PolicyFile = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    let named = file
        .allow
        .tools
        .iter()
        .chain(&file.deny.tools)
        .chain(file.allow.rules.iter().map(|r| &r.tool));
    for t in named {
        if !known.contains(&t.as_str()) {
            let hint = crate::suggest::did_you_mean(t, known.iter().copied());
            return Err(format!("unknown tool `{t}`{hint}"));
        }
    }
    for rule in &file.allow.rules {
        for (arg, schema) in &rule.constraints {
            let at = format!("allow.rules[{}].constraints.{arg}", rule.tool);
            let keys = schema
                .as_object()
                .ok_or_else(|| format!("`{at}`: a JSON Schema object"))?;
            if let Some(k) = keys.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
                return Err(format!(
                    "`{at}.{k}`: cua evaluates {} in constraints",
                    KEYWORDS.join(", ")
                ));
            }
            if let Some(p) = keys.get("pattern").and_then(Value::as_str) {
                regex::Regex::new(p).map_err(|e| format!("`{at}.pattern`: {e}"))?;
            }
        }
    }
    Ok(Parsed {
        allow: file.allow.tools,
        rules: file.allow.rules,
        deny: file.deny.tools,
    })
}

/// Whether the call's arguments meet the rule.
pub fn rule_allows(rule: &Rule, args: &Value) -> bool {
    rule.constraints
        .iter()
        .all(|(arg, schema)| meets(&args[arg.as_str()], schema))
}

fn meets(value: &Value, schema: &Value) -> bool {
    let number = value.as_f64();
    schema.as_object().is_some_and(|keys| {
        keys.iter().all(|(k, want)| match k.as_str() {
            "const" => same(value, want),
            "enum" => want
                .as_array()
                .is_some_and(|options| options.iter().any(|o| same(value, o))),
            "minimum" => number.zip(want.as_f64()).is_some_and(|(v, m)| v >= m),
            "maximum" => number.zip(want.as_f64()).is_some_and(|(v, m)| v <= m),
            "type" => match want.as_str() {
                Some("string") => value.is_string(),
                Some("integer") => value.as_f64().is_some_and(|v| v.fract() == 0.0),
                Some("number") => value.is_number(),
                Some("boolean") => value.is_boolean(),
                Some("array") => value.is_array(),
                Some("object") => value.is_object(),
                _ => false,
            },
            "pattern" => match (value.as_str(), want.as_str()) {
                (Some(v), Some(p)) => regex::Regex::new(p).is_ok_and(|re| re.is_match(v)),
                _ => false,
            },
            _ => false,
        })
    })
}

/// JSON equality that reads 0 and 0.0 as one number.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KNOWN: &[&str] = &["get_config", "screenshot", "list_apps"];

    #[test]
    fn rules_allow_only_arguments_that_meet_their_constraints() {
        let text = "allow:\n  tools: [get_config]\n  rules:\n    - tool: screenshot\n      constraints:\n        display_id: {\"const\": 0}\n        scale: {minimum: 0.5, maximum: 2}\ndeny:\n  tools: [list_apps]\n";
        let p = parse(text, KNOWN).unwrap();
        assert_eq!(p.allow, ["get_config"]);
        assert_eq!(p.deny, ["list_apps"]);
        let rule = &p.rules[0];
        assert!(rule_allows(rule, &json!({ "display_id": 0, "scale": 1 })));
        assert!(rule_allows(rule, &json!({ "display_id": 0.0, "scale": 2 })));
        assert!(!rule_allows(rule, &json!({ "display_id": 1, "scale": 1 })));
        assert!(!rule_allows(rule, &json!({ "scale": 1 })));
        assert!(!rule_allows(rule, &json!({ "display_id": 0, "scale": 3 })));
    }

    #[test]
    fn what_cua_cannot_evaluate_is_refused_by_name() {
        let err = parse("deny:\n  tools: [list_app]\n", KNOWN).err().unwrap();
        assert!(
            err.contains("`list_app`") && err.contains("list_apps"),
            "{err}"
        );
        let err = parse(
            "allow:\n  rules:\n    - tool: screenshot\n      constraints:\n        display_id: {multipleOf: 2}\n",
            KNOWN,
        )
        .err()
        .unwrap();
        assert!(err.contains("constraints.display_id.multipleOf"), "{err}");
        assert!(parse("allow:\n  apps: [x]\n", KNOWN).is_err());
    }
}
