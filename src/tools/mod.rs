//! Tools: the product's surface. Each tool is a type implementing [`ToolSpec`] with a typed
//! argument struct; the struct's JSON Schema (schemars) is the single source of truth for
//! validation, `cua describe`, docs/tools.md and the MCP tool list.
//!
//! [`ToolRegistry`] owns every tool and dispatches by name; the CLI (and later the daemon
//! and MCP server) are thin shells over it and know no tool by name. [`ToolContext`] holds
//! the platform connection and the per-(pid, window) element cache.

mod apps;
mod capture;
mod config;
mod cursor;
mod input;
mod page;
mod permissions;
mod recording;
mod replay;
mod screen;
mod window_state;
mod windows;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::OnceCell;

use crate::errors::ToolError;
use crate::platform::{AxTree, DesktopEnv, Platform};

pub use apps::BoundLaunch;
pub use replay::ReplayTrajectory;
pub use window_state::{render_markdown, window_state_json};

/// An image a tool returns (screenshot, zoom).
#[derive(Debug, Clone)]
pub struct ImageBlock {
    pub mime: &'static str,
    pub data: Vec<u8>,
}

/// What a tool returns: a one-paragraph summary for people, the structured result for
/// programs, and optionally an image.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub summary: String,
    pub structured: Value,
    pub image: Option<ImageBlock>,
}

impl ToolOutput {
    pub fn new(summary: impl Into<String>, structured: Value) -> Self {
        ToolOutput {
            summary: summary.into(),
            structured,
            image: None,
        }
    }
}

/// An accessibility snapshot of one (pid, window), which element indices refer to.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub snapshot_id: String,
    pub pid: u32,
    pub window_id: u64,
    pub tree: AxTree,
    /// element_index → node index in `tree.nodes`.
    pub elements: Vec<usize>,
}

/// How many snapshots an action can still name by `snapshot_id`.
pub const RECENT_SNAPSHOTS: usize = 16;

/// Shared state for tool calls in one process (CLI invocation, daemon, MCP server).
#[derive(Default)]
pub struct ToolContext {
    desktop: DesktopEnv,
    platform: OnceCell<Arc<dyn Platform>>,
    snapshots: Mutex<HashMap<(u32, u64), Arc<Snapshot>>>,
    /// The last RECENT_SNAPSHOTS snapshots of any window, oldest first: an action that
    /// names its `snapshot_id` is resolved in that one.
    recent_snapshots: Mutex<std::collections::VecDeque<Arc<Snapshot>>>,
    snapshot_counter: std::sync::atomic::AtomicU64,
    /// The trajectory recorder of this context (one per process or MCP session).
    pub recorder: crate::recording::Recorder,
    /// The session this context serves (an MCP connection); None for the anonymous CLI,
    /// whose set_config writes the global default.
    session: Option<String>,
    /// set_config values of this session, by dotted key (never written to disk).
    config_overrides: Mutex<serde_json::Map<String, Value>>,
    /// The agent cursor's state (where it was last shown, its pending hide).
    pub cursor: crate::cursor::AgentCursor,
    /// A one-shot CLI call: it ends before an overlay could be seen, so it draws none.
    one_shot: bool,
}

impl ToolContext {
    /// A context for the desktop named by this process's environment.
    pub fn new() -> Self {
        Self::for_desktop(DesktopEnv::from_process_env())
    }

    /// A context for a given desktop (a sandbox in tests and the demo).
    pub fn for_desktop(desktop: DesktopEnv) -> Self {
        ToolContext {
            desktop,
            ..Self::default()
        }
    }

    /// A context over an already connected platform (tests, benchmarks).
    pub fn with_platform(platform: Arc<dyn Platform>) -> Self {
        let ctx = Self::default();
        let _ = ctx.platform.set(platform);
        ctx
    }

    /// The desktop this context talks to.
    pub fn desktop(&self) -> &DesktopEnv {
        &self.desktop
    }

    /// A context serving session `id`: its set_config stays in memory, for it alone.
    pub fn for_session(desktop: DesktopEnv, id: impl Into<String>) -> Self {
        ToolContext {
            desktop,
            session: Some(id.into()),
            ..Self::default()
        }
    }

    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The context of one CLI call in its own process (no daemon): it draws no overlay.
    pub fn one_shot(mut self) -> Self {
        self.one_shot = true;
        self
    }

    pub fn is_one_shot(&self) -> bool {
        self.one_shot
    }

    /// The effective value of a config key: session override, else the global default
    /// (as stored, else as this desktop wants it).
    pub fn config(&self, key: &str) -> Value {
        self.config_snapshot().0.remove(key).unwrap_or(Value::Null)
    }

    /// Defaults that depend on the desktop: the agent cursor is on where a person watches,
    /// off inside a cua sandbox (headless runs and CI, which its glide would only slow).
    fn desktop_default(&self, key: &str) -> Option<Value> {
        (key == "agent_cursor.enabled").then(|| json!(self.desktop.sandbox_dir.is_none()))
    }

    /// Every key's effective value (one read of the config file), and the keys this
    /// session overrides.
    pub fn config_snapshot(&self) -> (serde_json::Map<String, Value>, Vec<String>) {
        let stored = crate::config::load_stored();
        let mut values = serde_json::Map::new();
        for spec in crate::config::KEYS {
            let value = stored
                .get(spec.key)
                .cloned()
                .or_else(|| self.desktop_default(spec.key))
                .unwrap_or_else(spec.default);
            values.insert(spec.key.to_string(), value);
        }
        let overrides = self.config_overrides.lock().unwrap();
        for (k, v) in overrides.iter() {
            values.insert(k.clone(), v.clone());
        }
        (values, overrides.keys().cloned().collect())
    }

    /// Sets a key: in a session, an in-memory override; otherwise the persisted default.
    /// Returns where it went.
    pub fn set_config(&self, key: &str, value: &Value) -> Result<String, ToolError> {
        let value = crate::config::validate(key, value)?;
        match &self.session {
            Some(id) => {
                self.config_overrides
                    .lock()
                    .unwrap()
                    .insert(key.to_string(), value);
                Ok(format!("session {id} (in memory)"))
            }
            None => crate::config::save_global(key, value).map(|p| p.display().to_string()),
        }
    }

    /// The factor screenshots of a `width` x `height` window are scaled by (≤ 1), from
    /// max_image_dimension (a call's own argument wins over the config).
    pub fn image_scale(&self, width: u32, height: u32, max_dimension: Option<u32>) -> f64 {
        let max = max_dimension
            .map(u64::from)
            .unwrap_or_else(|| self.config("max_image_dimension").as_u64().unwrap_or(0));
        let longest = width.max(height) as f64;
        if max == 0 || longest <= max as f64 {
            1.0
        } else {
            max as f64 / longest
        }
    }

    /// The desktop, connected on first use so tools that need none never touch it.
    pub async fn platform(&self) -> Result<Arc<dyn Platform>, ToolError> {
        self.platform
            .get_or_try_init(|| async {
                crate::platform::connect(&self.desktop).map_err(ToolError::from)
            })
            .await
            .cloned()
    }

    pub fn store_snapshot(
        &self,
        pid: u32,
        window_id: u64,
        tree: AxTree,
        elements: Vec<usize>,
    ) -> Arc<Snapshot> {
        let n = self
            .snapshot_counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let snap = Arc::new(Snapshot {
            snapshot_id: format!("{pid}-{window_id}-{n}"),
            pid,
            window_id,
            tree,
            elements,
        });
        {
            let mut recent = self.recent_snapshots.lock().unwrap();
            if recent.len() == RECENT_SNAPSHOTS {
                recent.pop_front();
            }
            recent.push_back(snap.clone());
        }
        self.snapshots
            .lock()
            .unwrap()
            .insert((pid, window_id), snap.clone());
        snap
    }

    /// One of the recent snapshots, by its id.
    pub fn snapshot_by_id(&self, snapshot_id: &str) -> Option<Arc<Snapshot>> {
        self.recent_snapshots
            .lock()
            .unwrap()
            .iter()
            .find(|s| s.snapshot_id == snapshot_id)
            .cloned()
    }

    pub fn snapshot(&self, pid: u32, window_id: u64) -> Option<Arc<Snapshot>> {
        self.snapshots
            .lock()
            .unwrap()
            .get(&(pid, window_id))
            .cloned()
    }

    /// The (pid, window) pairs this context holds a snapshot of.
    pub fn snapshot_keys(&self) -> Vec<(u32, u64)> {
        self.snapshots.lock().unwrap().keys().copied().collect()
    }
}

/// The async runtime tools run on, as every entry point builds it (two workers: the
/// machines this runs on have two cores, and captures run beside tree walks).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Tool contexts by session id, for servers that serve several sessions at once (the
/// daemon, the MCP server): a call's `session` argument picks its context, created on first
/// use; calls without one use the server's default context.
pub struct Sessions {
    default: Arc<ToolContext>,
    by_id: Mutex<HashMap<String, Arc<ToolContext>>>,
}

impl Sessions {
    pub fn new(default: Arc<ToolContext>) -> Self {
        Sessions {
            default,
            by_id: Mutex::new(HashMap::new()),
        }
    }

    /// The context a call runs in; a `session` that is not a short string is refused.
    pub fn for_call(&self, args: &Value) -> Result<Arc<ToolContext>, ToolError> {
        let Some(session) = args.get("session") else {
            return Ok(self.default.clone());
        };
        let id = session
            .as_str()
            .filter(|s| !s.is_empty() && s.len() <= 128)
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "`session`: expected a non-empty string of at most 128 characters, got {session}"
                ))
            })?;
        Ok(self
            .by_id
            .lock()
            .unwrap()
            .entry(id.to_string())
            .or_insert_with(|| {
                Arc::new(ToolContext::for_session(self.default.desktop().clone(), id))
            })
            .clone())
    }

    /// Ends session `id` (its client is gone): its recording is finalized and its caches,
    /// recorder and config overrides dropped.
    pub async fn end(&self, id: &str) {
        let ended = self.by_id.lock().unwrap().remove(id);
        if let Some(ctx) = ended {
            ctx.recorder.stop_when_done().await;
        }
    }

    /// Finalizes every session's recording (server shutdown, client gone).
    pub async fn finalize_all(&self) {
        let all: Vec<Arc<ToolContext>> = std::iter::once(self.default.clone())
            .chain(self.by_id.lock().unwrap().values().cloned())
            .collect();
        for ctx in all {
            ctx.recorder.stop_when_done().await;
        }
    }
}

/// A tool defined by its typed arguments; [`Tool`] is derived from it.
#[async_trait]
pub trait ToolSpec: Send + Sync + 'static {
    type Args: DeserializeOwned + JsonSchema + Send;
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// Read-only tools observe; the others act on the desktop.
    const READ_ONLY: bool;
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
    fn acts(&self, args: &Value) -> bool {
        T::Args::deserialize(args)
            .map(|a| T::acts(&a))
            .unwrap_or(!T::READ_ONLY)
    }
    fn input_schema(&self) -> Value {
        schema_of::<T::Args>()
    }
    fn output_schema(&self) -> Option<Value> {
        T::output_schema()
    }
    fn validate(&self, args: &Value) -> Result<(), ToolError> {
        T::check(&parse_args::<T::Args>(args, &self.input_schema())?)
    }
    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let typed = parse_args::<T::Args>(&args, &self.input_schema())?;
        if T::acts(&typed) {
            crate::policy::check(ctx, T::NAME, &args).await?;
        }
        self.run(ctx, typed).await
    }
}

/// What every tool takes besides its own arguments, said once (the MCP server's
/// instructions, docs/tools.md) rather than in every schema.
pub const SESSION_ARGUMENT: &str = "Every tool also takes an optional `session` (string): calls with the same session share element caches, the recorder and set_config overrides, apart from other sessions. Default: the connection's own session.";

/// The output schema of a result type: its fields (as [`schema_of`] writes them, without
/// descriptions, which an agent reads in the tool's description), and, since a failed call
/// carries `{error, message}` as its structured result, that shape as the alternative.
pub fn output_schema_of<A: JsonSchema>() -> Value {
    let mut schema = schema_of::<A>();
    strip_descriptions(&mut schema);
    let required = schema
        .as_object_mut()
        .and_then(|m| m.remove("required"))
        .unwrap_or(json!([]));
    schema["anyOf"] = json!([{ "required": required }, { "required": ["error", "message"] }]);
    schema
}

fn strip_descriptions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("description").is_some_and(Value::is_string) {
                m.remove("description");
            }
            m.values_mut().for_each(strip_descriptions);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// The JSON Schema of an argument type, as a person would write it: clients read it and
/// models pay for every character. Unknown arguments are refused by the server (naming
/// the ones a tool takes), not by the schema. Optional fields are optional by not being required,
/// so their `null` goes; integer `format`s (Rust's widths) go; definitions are inlined
/// (the property's own description wins) and `$defs` go.
pub fn schema_of<A: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(A)).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        // The server refuses an unknown argument itself, naming the ones it takes.
        map.remove("additionalProperties");
        let defs = map.remove("$defs").unwrap_or(Value::Null);
        map.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        map.insert("type".into(), Value::String("object".into()));
        if let Some(Value::Object(props)) = map.get_mut("properties") {
            for prop in props.values_mut() {
                tidy_property(prop, &defs);
            }
        }
    }
    schema
}

fn tidy_property(prop: &mut Value, defs: &Value) {
    let Value::Object(p) = prop else { return };
    p.remove("format");
    // Unsigned is what a Rust type says; a count, an id or a size is never negative anyway.
    if p.get("minimum") == Some(&Value::from(0)) {
        p.remove("minimum");
    }
    // `anyOf: [X, {type: null}]` (an Option of a defined type) is X.
    if let Some(Value::Array(any)) = p.get("anyOf") {
        let kept: Vec<Value> = any
            .iter()
            .filter(|v| v.get("type") != Some(&Value::String("null".into())))
            .cloned()
            .collect();
        if let [only] = kept.as_slice() {
            let only = only.clone();
            p.remove("anyOf");
            merge_inlined(p, &only, defs);
        }
    }
    if p.contains_key("$ref") {
        let reference = Value::Object(std::mem::take(p));
        let description = reference.get("description").cloned();
        merge_inlined(p, &reference, defs);
        if let Some(d) = description {
            p.insert("description".into(), d);
        }
    }
    // `type: [T, "null"]` is T.
    if let Some(Value::Array(types)) = p.get("type") {
        let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [only] = kept.as_slice() {
            let only = (*only).clone();
            p.insert("type".into(), only);
        }
    }
    if let Some(items) = p.get_mut("items") {
        tidy_property(items, defs);
        // The array's own description says what its items are.
        if let Value::Object(i) = items {
            i.remove("description");
        }
    }
}

/// Copies `from` into `p`, a `$ref` replaced by its definition (whose own description
/// gives way to the property's).
fn merge_inlined(p: &mut Map<String, Value>, from: &Value, defs: &Value) {
    let Value::Object(from) = from else { return };
    for (k, v) in from {
        if k == "$ref" {
            let name = v.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
            if let Some(Value::Object(def)) = name.and_then(|n| defs.get(n)) {
                for (dk, dv) in def {
                    if dk != "description" || !p.contains_key("description") {
                        p.entry(dk.clone()).or_insert_with(|| dv.clone());
                    }
                }
            }
        } else {
            p.insert(k.clone(), v.clone());
        }
    }
    p.remove("format");
}

/// Keys every tool accepts besides its own: the session id and private `_`-prefixed keys.
fn is_ambient_key(key: &str) -> bool {
    key == "session" || key.starts_with('_')
}

/// Turns raw JSON into typed arguments, naming the offending field on failure.
pub fn parse_args<A: DeserializeOwned>(args: &Value, schema: &Value) -> Result<A, ToolError> {
    let mut object = match args {
        Value::Null => Map::new(),
        Value::Object(m) => m.clone(),
        other => {
            return Err(ToolError::invalid(format!(
                "arguments must be a JSON object, got {}",
                json_type_name(other)
            )));
        }
    };
    object.retain(|k, _| !is_ambient_key(k));
    let known: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if let Some(unknown) = object.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ToolError::invalid(if known.is_empty() {
            format!("unknown argument `{unknown}` (this tool takes no arguments)")
        } else {
            format!(
                "unknown argument `{unknown}` (expected one of: {})",
                known.join(", ")
            )
        }));
    }
    let value = Value::Object(object);
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            ToolError::invalid(inner)
        } else {
            ToolError::invalid(format!("`{path}`: {inner}"))
        }
    })
}

fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Every tool, in the order docs list them.
pub struct ToolRegistry {
    tools: Vec<Box<dyn Tool>>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    pub fn new() -> Self {
        ToolRegistry {
            tools: vec![
                Box::new(permissions::CheckPermissions),
                Box::new(apps::ListApps),
                Box::new(apps::LaunchApp),
                Box::new(windows::ListWindows),
                Box::new(window_state::GetWindowState),
                Box::new(capture::Screenshot),
                Box::new(capture::Zoom),
                Box::new(screen::GetScreenSize),
                Box::new(screen::GetCursorPosition),
                Box::new(input::Click),
                Box::new(input::DoubleClick),
                Box::new(input::RightClick),
                Box::new(input::TypeText),
                Box::new(input::PressKey),
                Box::new(input::Hotkey),
                Box::new(input::SetValue),
                Box::new(input::Scroll),
                Box::new(input::Drag),
                Box::new(input::MoveCursor),
                Box::new(page::Page),
                Box::new(recording::SetRecording),
                Box::new(recording::GetRecordingState),
                Box::new(replay::ReplayTrajectory),
                Box::new(config::GetConfig),
                Box::new(config::SetConfig),
                Box::new(cursor::GetAgentCursorState),
                Box::new(cursor::SetAgentCursorEnabled),
                Box::new(cursor::SetAgentCursorMotion),
                Box::new(cursor::SetAgentCursorStyle),
            ],
        }
    }

    pub fn tools(&self) -> impl Iterator<Item = &dyn Tool> {
        self.tools.iter().map(|t| t.as_ref())
    }

    pub fn get(&self, name: &str) -> Result<&dyn Tool, ToolError> {
        self.tools().find(|t| t.name() == name).ok_or_else(|| {
            let hint = crate::suggest::did_you_mean(name, self.tools().map(|t| t.name()));
            ToolError::UnknownTool(format!(
                "unknown tool `{name}`{hint} (run `cua list-tools`)"
            ))
        })
    }

    /// A fresh tree read of one window (no screenshot): its get_window_state result and
    /// the snapshot it left in `ctx`, which element indices resolve against.
    pub async fn read_window(
        &self,
        ctx: &ToolContext,
        pid: u32,
        window_id: u64,
    ) -> Result<(ToolOutput, Arc<Snapshot>), ToolError> {
        let args =
            serde_json::json!({ "pid": pid, "window_id": window_id, "include_screenshot": false });
        let out = self.call(ctx, "get_window_state", args).await?;
        let snapshot = ctx.snapshot(pid, window_id).ok_or_else(|| {
            ToolError::failed(format!(
                "no snapshot of pid {pid} window {window_id} after reading it"
            ))
        })?;
        Ok((out, snapshot))
    }

    /// Runs a tool; while recording, action tools are recorded as turns.
    pub async fn call(
        &self,
        ctx: &ToolContext,
        name: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self.get(name)?;
        Self::call_tool(ctx, tool, args).await
    }

    /// Runs a tool that need not be registered (replay's [`BoundLaunch`]), recorded when
    /// recording is on, like [`ToolRegistry::call`].
    pub async fn call_tool(
        ctx: &ToolContext,
        tool: &dyn Tool,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        if !tool.recorded() || !tool.acts(&args) || !ctx.recorder.is_recording() {
            return tool.call(ctx, args).await;
        }
        crate::recording::record_call(ctx, tool, args).await
    }
}

/// Writes bytes to a path an agent gave in `field`, where the policy allows
/// ([`crate::policy::output_path`]), whole or not at all.
pub(crate) fn write_out_file(
    ctx: &ToolContext,
    field: &str,
    path: &str,
    bytes: &[u8],
) -> Result<std::path::PathBuf, ToolError> {
    let p = crate::policy::output_path(ctx, field, path, false)?;
    crate::files::write_atomic(&p, bytes)
        .map_err(|e| ToolError::failed(format!("cannot write `{}`: {e}", p.display())))?;
    Ok(p)
}

/// Finds a window by id and checks it belongs to `pid` (never falls back to another window).
pub(crate) async fn window_of(
    platform: &dyn Platform,
    pid: Option<u32>,
    window_id: u64,
) -> Result<crate::platform::WindowInfo, ToolError> {
    let list = platform.list_windows().await?;
    let window = list
        .windows
        .into_iter()
        .find(|w| w.window_id == window_id)
        .ok_or_else(|| {
            ToolError::failed(format!("window {window_id} not found (run list_windows)"))
        })?;
    if let Some(pid) = pid {
        if window.pid != Some(pid) {
            return Err(ToolError::failed(format!(
                "window {window_id} belongs to {} (pid {}), not pid {pid}; run list_windows with pid {pid}",
                window.app_name,
                window
                    .pid
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "unknown".into())
            )));
        }
    }
    Ok(window)
}
