//! `get_config` and `set_config`: the driver configuration (src/config). From a session
//! (an MCP connection) set_config is an in-memory override for that session only; from the
//! anonymous CLI it writes the persisted global default.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetConfigArgs {}

pub struct GetConfig;

#[async_trait]
impl ToolSpec for GetConfig {
    type Args = GetConfigArgs;
    const NAME: &'static str = "get_config";
    const DESCRIPTION: &'static str = "Report the effective driver config: this session's overrides over the global default ($XDG_CONFIG_HOME/cua/config.json); overridden lists the keys this session set.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["system.config.read"]);

    async fn run(&self, ctx: &ToolContext, _a: GetConfigArgs) -> Result<ToolOutput, ToolError> {
        let (values, overridden) = ctx.config_snapshot();
        let mut doc = crate::config::nested(&values);
        doc["session"] = json!(ctx.session());
        doc["overridden"] = json!(overridden);
        doc["path"] = json!(crate::config::global_path());
        let summary = values
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(ToolOutput::new(summary, doc))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetConfigArgs {
    /// Dotted snake_case key, e.g. max_image_dimension, agent_cursor.enabled, policy.forbidden_apps.
    pub key: Option<String>,
    /// The new value; its JSON type depends on the key.
    pub value: Option<Value>,
    /// cua-driver's per-field form of key max_image_dimension (instead of key + value).
    pub max_image_dimension: Option<u32>,
    /// cua-driver's per-field form; deprecated there and ignored here: get_window_state always returns the tree and the screenshot.
    #[allow(dead_code)] // accepted so callers written for cua-driver keep working
    pub capture_mode: Option<String>,
    /// Refused: cua has no picture-in-picture preview.
    pub experimental_pip: Option<Value>,
    /// Refused: cua has no picture-in-picture preview.
    pub experimental_pip_geometry: Option<Value>,
}

pub struct SetConfig;

#[async_trait]
impl ToolSpec for SetConfig {
    type Args = SetConfigArgs;
    const NAME: &'static str = "set_config";
    const DESCRIPTION: &'static str = "Set one config key: over MCP an in-memory override for this session; from the CLI the global default ($XDG_CONFIG_HOME/cua/config.json). A call's own argument wins over both.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::idempotent(Risk::R2, &["system.config.write"]);
    const RECORDED: bool = false;
    const CHANGES_DRIVER: bool = true;

    fn check(a: &SetConfigArgs) -> Result<(), ToolError> {
        key_and_value(a).map(|_| ())
    }

    async fn run(&self, ctx: &ToolContext, a: SetConfigArgs) -> Result<ToolOutput, ToolError> {
        let (key, value) = key_and_value(&a)?;
        let place = ctx.set_config(&key, &value)?;
        let value = ctx.config(&key);
        Ok(ToolOutput::new(
            format!("{key} = {value} ({place})"),
            json!({ "key": key, "value": value, "stored_in": place }),
        ))
    }
}

/// The one key a call sets: `key` + `value`, or cua-driver's per-field form.
fn key_and_value(a: &SetConfigArgs) -> Result<(String, Value), ToolError> {
    for (field, given) in [
        ("experimental_pip", &a.experimental_pip),
        ("experimental_pip_geometry", &a.experimental_pip_geometry),
    ] {
        if given.is_some() {
            return Err(ToolError::invalid(format!(
                "`{field}`: cua has no picture-in-picture preview"
            )));
        }
    }
    match (&a.key, &a.value, a.max_image_dimension) {
        // cua-driver retired its persistent capture scope; its clients read the code.
        (Some(key), _, None) if key == "capture_scope" => Err(ToolError::Refusal {
            code: "config_key_retired".into(),
            message: "`key`: capture_scope is retired: choose window or desktop per action (`target` / `scope`), or per session with start_session's capture_scope".into(),
            details: json!({ "key": "capture_scope", "replacement": "action.target" }),
        }),
        (Some(key), Some(value), None) => Ok((key.clone(), value.clone())),
        (None, None, Some(max)) => Ok(("max_image_dimension".into(), json!(max))),
        (None, None, None) if a.capture_mode.is_some() => Err(ToolError::invalid(
            "`capture_mode`: deprecated and ignored (get_window_state returns the tree and the screenshot); nothing to set",
        )),
        (Some(_), None, _) => Err(ToolError::invalid("`value`: required with `key`")),
        (None, Some(_), _) => Err(ToolError::invalid("`key`: required with `value`")),
        _ => Err(ToolError::invalid(
            "give `key` and `value`, or one per-field setting such as `max_image_dimension`",
        )),
    }
}
