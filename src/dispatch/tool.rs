//! What a tool is: [`ToolSpec`] (typed arguments, name, whether it acts) and the
//! object-safe [`Tool`] the registry holds, derived from it. A call parses its arguments
//! against the schema, then passes the policy when it acts, then runs.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ToolContext;
use super::schema::{parse_args, schema_of, with_shared_arguments};
use crate::errors::ToolError;
use crate::output::ToolOutput;

/// A tool defined by its typed arguments; [`Tool`] is derived from it.
#[async_trait]
pub trait ToolSpec: Send + Sync + 'static {
    type Args: DeserializeOwned + JsonSchema + Send;
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// Read-only tools observe; the others act on the desktop.
    const READ_ONLY: bool;
    /// Capability tokens, risk class and hints, as cua-driver's clients read them.
    const CONTRACT: super::Contract;
    /// Whether a call is a turn of a recording (replay acts, but its inner calls are the turns).
    const RECORDED: bool = !Self::READ_ONLY;
    /// Whether this call acts on the desktop (checked by the policy, recorded as a turn):
    /// every call of a tool that is not read-only, unless the tool tells its calls apart
    /// (`page` acts only to run JavaScript).
    fn acts(_args: &Self::Args) -> bool {
        !Self::READ_ONLY
    }
    /// Whether the tool changes the driver itself (its config, its recorder, a replay)
    /// rather than the desktop: a trajectory's turn may not run it unless asked.
    const CHANGES_DRIVER: bool = false;
    /// What the argument types cannot say and needs no desktop (key names, combinations,
    /// bounds between fields): checked by [`Tool::validate`], so a scenario's mistakes show
    /// when it is read. `run` makes the same checks as it goes.
    fn check(_args: &Self::Args) -> Result<(), ToolError> {
        Ok(())
    }
    /// The JSON Schema of the structured result, where a type produces it
    /// ([`output_schema_of`]); None where the result is still assembled as JSON.
    fn output_schema() -> Option<Value> {
        None
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError>;
}

/// The object-safe view of a tool that the registry dispatches to.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn read_only(&self) -> bool;
    fn recorded(&self) -> bool;
    fn changes_driver(&self) -> bool;
    fn contract(&self) -> super::Contract;
    /// [`ToolSpec::acts`] for raw arguments (arguments that do not parse: as the tool).
    fn acts(&self, args: &Value) -> bool;
    fn input_schema(&self) -> Value;
    fn output_schema(&self) -> Option<Value>;
    /// Parses and validates arguments without running anything.
    fn validate(&self, args: &Value) -> Result<(), ToolError>;
    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError>;
}

#[async_trait]
impl<T: ToolSpec> Tool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }
    fn read_only(&self) -> bool {
        T::READ_ONLY
    }
    fn recorded(&self) -> bool {
        T::RECORDED
    }
    fn changes_driver(&self) -> bool {
        T::CHANGES_DRIVER
    }
    fn contract(&self) -> super::Contract {
        T::CONTRACT
    }
    fn acts(&self, args: &Value) -> bool {
        T::Args::deserialize(args)
            .map(|a| T::acts(&a))
            .unwrap_or(!T::READ_ONLY)
    }
    fn input_schema(&self) -> Value {
        with_shared_arguments(schema_of::<T::Args>(), T::CONTRACT.capabilities)
    }
    fn output_schema(&self) -> Option<Value> {
        T::output_schema()
    }
    fn validate(&self, args: &Value) -> Result<(), ToolError> {
        let schema = self.input_schema();
        let shaped = super::schema::as_resolved(args, &schema)?;
        T::check(&parse_args::<T::Args>(&shaped, &schema)?)
    }
    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let typed = parse_args::<T::Args>(&args, &self.input_schema())?;
        if T::acts(&typed) {
            ctx.check_policy(T::NAME, &args).await?;
        }
        self.run(ctx, typed).await
    }
}
