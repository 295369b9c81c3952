//! Dispatch: what a tool is ([`ToolSpec`], [`Tool`]), the state calls share
//! ([`ToolContext`], [`Sessions`]), argument schemas, and the one call path
//! ([`ToolRegistry::call`]: the recording layer, then the policy, then the tool).
//!
//! It sits below replay and the tools and above the policy and the recorder, which it
//! calls: neither of those knows a tool or a context, so no module imports in a circle.

mod addressing;
mod context;
mod contract;
mod registry;
mod schema;
pub mod scope;
mod sessions;
mod tokens;
mod tool;

pub use addressing::ZoomOrigin;
pub use context::{Activity, HeldButton, RECENT_SNAPSHOTS, ToolContext, runtime};
pub use contract::{CAPABILITY_VERSION, CONTRACT_SCHEMA_VERSION, Contract, Risk};
pub use registry::ToolRegistry;
pub use schema::{
    SESSION_ARGUMENT, SHARED_ARGUMENTS, for_the_wire, output_schema_of, parse_args, schema_of,
    shared_arguments_text, with_field_names,
};
pub use sessions::{Directory, START_SESSION, SessionEntry, Sessions};
pub use tokens::token_for;
pub use tool::{Tool, ToolSpec};
