//! Apps a replay starts itself: with `launch`, each recorded app that has no live window
//! (from its recorded executable, its app name, or a desktop entry named like its window
//! title); with an [`AppOverride`], a recorded app is started from another build. What
//! was started is reported ([`Launched`]) and kept beside a recording of the replay.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Value, json};

use crate::dispatch::{Tool, ToolContext, ToolRegistry};
use crate::errors::ToolError;
use crate::output::ToolOutput;
use crate::trajectory::Action;

/// `--app RECORDED=PATH [ARGS]`: the recorded app `RECORDED` (its app name, executable,
/// or a word of its window title) is started from `PATH` with `ARGS`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct AppOverride {
    /// The recorded app: app name, executable or part of its window title (any case).
    pub recorded: String,
    /// The executable of the build to start instead.
    pub path: String,
    /// Arguments for it, passed as they are.
    #[serde(default)]
    pub args: Vec<String>,
}

impl std::str::FromStr for AppOverride {
    type Err = String;

    /// `RECORDED=PATH [ARGS…]`, arguments split on white space.
    fn from_str(s: &str) -> Result<AppOverride, String> {
        let (recorded, command) = s
            .split_once('=')
            .ok_or_else(|| format!("expected RECORDED=PATH [ARGS], got {s:?}"))?;
        let mut words = command.split_whitespace().map(str::to_string);
        let path = words.next().unwrap_or_default();
        if recorded.trim().is_empty() || path.is_empty() {
            return Err(format!(
                "expected RECORDED=PATH [ARGS] with both sides, got {s:?}"
            ));
        }
        Ok(AppOverride {
            recorded: recorded.trim().to_string(),
            path,
            args: words.collect(),
        })
    }
}

/// One app the replay started.
#[derive(Debug, Clone, Serialize)]
pub struct Launched {
    /// The turn that needed it.
    pub turn: u32,
    /// How the recording named the app.
    pub recorded: String,
    /// launch_app's arguments.
    pub arguments: Value,
    pub pid: Option<u64>,
    pub window_id: Option<u64>,
}

impl Launched {
    /// From launch_app's arguments and its structured result.
    pub fn new(turn: u32, recorded: String, arguments: Value, launched: &Value) -> Launched {
        Launched {
            turn,
            recorded,
            arguments,
            pid: launched["pid"].as_u64(),
            window_id: launched
                .pointer("/windows/0/window_id")
                .and_then(Value::as_u64),
        }
    }
}

/// The names a recorded turn gives its app: app name, executable and its file name, the
/// recorded window title and that title's parts (`"*Untitled 1 - Mousepad"` also gives
/// `Untitled 1` and `Mousepad`).
pub fn recorded_names(action: &Action, state_title: Option<&str>) -> Vec<String> {
    let app = action.app.as_ref();
    let field =
        |pick: fn(&crate::trajectory::AppIdentity) -> &str| app.map(pick).filter(|s| !s.is_empty());
    let launch_arg = |k: &str| {
        (action.tool == "launch_app")
            .then(|| action.arguments.get(k)?.as_str())
            .flatten()
    };
    let mut names: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        let s = s.trim().trim_start_matches('*').trim();
        if !s.is_empty() && !names.iter().any(|n| n == s) {
            names.push(s.to_string());
        }
    };
    for exe in [field(|a| &a.executable), launch_arg("path")]
        .into_iter()
        .flatten()
    {
        add(exe);
        add(exe.rsplit('/').next().unwrap_or(exe));
    }
    for name in [
        field(|a| &a.app_name),
        launch_arg("name"),
        launch_arg("desktop_id"),
    ]
    .into_iter()
    .flatten()
    {
        add(name);
    }
    for title in [field(|a| &a.window_title), state_title]
        .into_iter()
        .flatten()
    {
        add(title);
        for part in title.split(" - ") {
            add(part);
        }
    }
    names
}

/// The override whose `recorded` is one of `names`.
pub fn override_for<'a>(overrides: &'a [AppOverride], names: &[String]) -> Option<&'a AppOverride> {
    overrides
        .iter()
        .find(|o| names.iter().any(|n| n.eq_ignore_ascii_case(&o.recorded)))
}

/// launch_app arguments to try in order: the override's build; else the recorded
/// executable, then each recorded name as a desktop entry or program name.
pub fn candidates(names: &[String], action: &Action, chosen: Option<&AppOverride>) -> Vec<Value> {
    if let Some(o) = chosen {
        return vec![json!({ "path": o.path, "additional_arguments": o.args })];
    }
    let mut out = Vec::new();
    if let Some(exe) = action
        .app
        .as_ref()
        .map(|a| a.executable.as_str())
        .filter(|e| e.starts_with('/'))
    {
        out.push(json!({ "path": exe }));
    }
    out.extend(names.iter().map(|n| json!({ "name": n })));
    out
}

/// Starts the first candidate that launches (launch_app's own wait for a window
/// included), not as a recorded turn: a recording of the replay keeps the recording's
/// turns, one for one.
pub async fn start(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    candidates: &[Value],
) -> Result<(Value, Value), String> {
    let tool = registry.get("launch_app").map_err(|e| e.to_string())?;
    let mut errors = Vec::new();
    for args in candidates {
        match tool.call(ctx, args.clone()).await {
            Ok(out) => return Ok((args.clone(), out.structured)),
            Err(e) => errors.push(format!("{args}: {e}")),
        }
    }
    Err(match errors.is_empty() {
        true => "the recording names no app to launch".to_string(),
        false => format!("could not launch the recorded app ({})", errors.join("; ")),
    })
}

/// `launch_app` as `cua test` replays it: a recorded launch binds to the app the scenario
/// already launched (its `[app]`) instead of starting the recorded program, so a recording
/// made against another build still exercises the build under test. Recorded like any
/// launch_app turn, with the scenario's `[app]` as its arguments, so the run's trajectory
/// shows the binding. Its name, schema and argument checks are launch_app's own.
pub struct BoundLaunch<'a> {
    /// The registry's launch_app.
    pub launch: &'a dyn Tool,
    pub pid: u32,
    pub window_id: u64,
    /// What the recording launched, for the summary.
    pub recorded: String,
}

#[async_trait]
impl Tool for BoundLaunch<'_> {
    fn name(&self) -> &'static str {
        self.launch.name()
    }
    fn description(&self) -> &'static str {
        "launch_app bound to the scenario's already running [app] (cua test replays only)."
    }
    fn read_only(&self) -> bool {
        false
    }
    fn recorded(&self) -> bool {
        true
    }
    fn changes_driver(&self) -> bool {
        false
    }
    fn contract(&self) -> crate::dispatch::Contract {
        self.launch.contract()
    }
    fn acts(&self, _args: &Value) -> bool {
        true
    }
    fn input_schema(&self) -> Value {
        self.launch.input_schema()
    }
    fn output_schema(&self) -> Option<Value> {
        self.launch.output_schema()
    }
    fn validate(&self, args: &Value) -> Result<(), ToolError> {
        self.launch.validate(args)
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        self.validate(&args)?;
        ctx.check_policy(self.name(), &args).await?;
        let platform = ctx.platform().await?;
        let windows: Vec<_> = platform
            .list_windows()
            .await?
            .windows
            .into_iter()
            .filter(|w| w.pid == Some(self.pid))
            .collect();
        if !windows.iter().any(|w| w.window_id == self.window_id) {
            return Err(ToolError::failed(format!(
                "the scenario's app (pid {}) no longer shows window {}",
                self.pid, self.window_id
            )));
        }
        let label = ["name", "desktop_id", "path"]
            .iter()
            .find_map(|k| args.get(*k).and_then(Value::as_str))
            .unwrap_or_default();
        let summary = format!(
            "bound to the scenario's [app] {label} (pid {}, window {}); the recording launched {}, which is not run",
            self.pid, self.window_id, self.recorded
        );
        Ok(ToolOutput::new(
            summary,
            json!({
                "pid": self.pid,
                "name": label,
                "executable": platform.process_executable(self.pid).unwrap_or_default(),
                "newly_started": false,
                "bound_to_scenario_app": true,
                "windows": windows,
            }),
        ))
    }
}

/// How long a replayed launch's window may take to hold still before the next turn.
const FIRST_SCREEN_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// A recorded launch_app turn: the app is launched again (from a new build when one is
/// given for it), or bound to the scenario's running app under `cua test`; the recorded
/// pid and window are bound to the live ones.
pub(super) async fn replay_launch(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    action: &Action,
    args: Value,
    opts: &super::ReplayOptions,
    bindings: &mut super::Bindings,
    result: &mut super::TurnResult,
) -> Result<String, String> {
    let tool = "launch_app";
    let names = recorded_names(action, None);
    let new_build = override_for(&opts.apps, &names);
    let out = match &opts.bound_app {
        None => match new_build {
            None => registry.call(ctx, tool, args).await,
            Some(o) => {
                let mut build = candidates(&names, action, Some(o)).remove(0);
                if let Some(urls) = args.get("urls") {
                    build["urls"] = urls.clone();
                }
                let out = registry.call(ctx, tool, build.clone()).await;
                if let Ok(out) = &out {
                    let recorded = o.recorded.clone();
                    let launched = Launched::new(result.turn, recorded, build, &out.structured);
                    bindings.launched.push(launched);
                }
                out
            }
        },
        Some(app) => {
            let recorded = ["path", "name", "desktop_id"]
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_str))
                .unwrap_or("an app")
                .to_string();
            let launch = registry.get(tool).map_err(|e| e.to_string())?;
            let bound = BoundLaunch {
                launch,
                pid: app.pid,
                window_id: app.window_id,
                recorded,
            };
            ToolRegistry::call_tool(ctx, &bound, app.launch_args.clone()).await
        }
    }
    .map_err(|e| e.to_string())?;
    let pid = out.structured["pid"].as_u64();
    let window = out
        .structured
        .pointer("/windows/0/window_id")
        .and_then(Value::as_u64);
    if let (Some(old), Some(new)) = (action.pid.map(u64::from), pid) {
        bindings.pids.insert(old, new);
    }
    if let (Some(old), Some(new)) = (action.window_id, window) {
        bindings.windows.insert(old, new);
    }
    bindings.last_launched = window.or(bindings.last_launched);
    if let (Some(pid), Some(window)) = (pid, window) {
        first_screen(ctx, pid as u32, window).await;
    }
    result.rebinding = Some(match (&opts.bound_app, new_build) {
        (Some(_), _) => format!("bound to the scenario's app, pid {}", pid.unwrap_or(0)),
        (None, Some(o)) => format!(
            "launched the new build {} as pid {}",
            o.path,
            pid.unwrap_or(0)
        ),
        (None, None) => format!("launched pid {}", pid.unwrap_or(0)),
    });
    Ok(out.summary)
}

/// Waits for a launched window to hold still before the next turn reads it, unless the
/// recorder settles every turn already (a recorded replay, `cua test`).
async fn first_screen(ctx: &ToolContext, pid: u32, window_id: u64) {
    if ctx.recorder.is_recording() {
        return;
    }
    let Ok(platform) = ctx.platform().await else {
        return;
    };
    let Ok(list) = platform.list_windows().await else {
        return;
    };
    if let Some(window) = list.windows.into_iter().find(|w| w.window_id == window_id) {
        crate::recording::stable::first_screen(&platform, pid, &window, FIRST_SCREEN_WAIT).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_reads_recorded_path_and_args_or_names_what_is_wrong() {
        let o: AppOverride = "Calculator=/opt/build/calc --debug -v".parse().unwrap();
        assert_eq!(o.recorded, "Calculator");
        assert_eq!(o.path, "/opt/build/calc");
        assert_eq!(o.args, ["--debug", "-v"]);
        for bad in ["Calculator", "=/bin/x", "Calc=", "Calc=  "] {
            assert!(bad.parse::<AppOverride>().is_err(), "{bad}");
        }
    }

    fn action(v: Value) -> Action {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_recorded_app_is_known_by_its_identity_its_launch_or_its_title() {
        let ours = action(
            json!({ "tool": "click", "app": { "app_name": "Calculator", "executable": "/usr/bin/gnome-calculator", "window_title": "Calculator" } }),
        );
        let names = recorded_names(&ours, None);
        assert!(names.contains(&"gnome-calculator".to_string()), "{names:?}");
        let o: AppOverride = "GNOME-calculator=/new/calc".parse().unwrap();
        assert_eq!(override_for(std::slice::from_ref(&o), &names), Some(&o));
        assert_eq!(
            candidates(&names, &ours, None)[0],
            json!({ "path": "/usr/bin/gnome-calculator" })
        );
        assert_eq!(
            candidates(&names, &ours, Some(&o)),
            [json!({ "path": "/new/calc", "additional_arguments": [] })]
        );

        let theirs = action(json!({ "tool": "type_text", "arguments": { "pid": 1 } }));
        let names = recorded_names(&theirs, Some("*Untitled 1 - Mousepad"));
        assert_eq!(names, ["Untitled 1 - Mousepad", "Untitled 1", "Mousepad"]);
        let launch = action(json!({ "tool": "launch_app", "arguments": { "name": "mousepad" } }));
        assert_eq!(recorded_names(&launch, None), ["mousepad"]);
    }
}
