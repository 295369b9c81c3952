//! The command line: `cua <tool> '<json>'`, `cua call`, `cua list-tools`, `cua describe`,
//! `cua sandbox …` and `cua demo`. Tools are looked up in the registry; nothing here knows
//! a tool by name.
//!
//! Exit codes: 0 success, 1 the tool (or command) reported an error, 2 bad usage or input.
//!
//! This file holds the clap definitions, the dispatch and the output helpers; each
//! command family runs in its own file (`tool`, `sandboxes`, `replay`, `harness`).

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use clap::{Parser, Subcommand};
use serde_json::Value;

use crate::replay::ReplayOptions;
use crate::sandbox::{self, Sandbox, SandboxOptions};
use crate::tools::{ToolContext, ToolOutput, ToolRegistry};

mod driver;
mod harness;
mod replay;
mod sandboxes;
mod tool;

use driver::*;
pub use harness::read_diff_config;
use harness::*;
use replay::*;
use sandboxes::*;
use tool::*;

#[derive(Parser, Debug)]
#[command(
    name = "cua",
    version,
    about = "Computer-use driver: drive real desktop apps, record, replay and regression-test GUI automation",
    after_help = "Run a tool: cua <tool> '<json-args>' [--json] [--screenshot-out-file PATH]\nList tools: cua list-tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Call a tool: cua call <tool> '<json-args>' [--json] [--screenshot-out-file PATH]
    /// (JSON whenever stdout is not a terminal)
    Call {
        tool: String,
        /// Arguments as a JSON object (default {}).
        json_args: Option<String>,
        #[command(flatten)]
        output: OutputFlags,
        /// Call the daemon listening on this socket (default: the display's, when one runs).
        #[arg(long)]
        socket: Option<PathBuf>,
    },
    /// Describe this binary for launchers (cua-driver's manifest): its version, how to
    /// start its MCP server, and every subcommand with its flags, as JSON.
    Manifest {
        /// Indent the JSON.
        #[arg(long)]
        pretty: bool,
    },
    /// Stop the daemon (`cua serve`): recordings are finalized first. Exit 0 also when
    /// none was running.
    Stop {
        /// The daemon's socket (default: the display's).
        #[arg(long)]
        socket: Option<PathBuf>,
    },
    /// Whether a daemon answers (exit 0, its pid and sessions as JSON) or not (exit 1).
    Status {
        /// The daemon's socket (default: the display's).
        #[arg(long)]
        socket: Option<PathBuf>,
    },
    /// List every tool with its one-line description.
    ListTools,
    /// Print a tool's JSON Schema and description.
    Describe { tool: String },
    /// Manage headless desktops (Xvfb + D-Bus + AT-SPI + openbox; or a headless sway, GNOME Shell or KWin).
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// What this desktop lets cua do (status: check_permissions), or let your own GNOME or
    /// KDE session trust this cua with its windows, pixels and input (grant) and undo it
    /// (revoke): cua-driver's `permissions status | grant`, for Linux desktops.
    Permissions {
        /// status (default), grant or revoke.
        #[arg(value_enum, default_value = "status")]
        subcommand: PermissionsAction,
        /// The desktop to grant or revoke: gnome (installs and enables cua's Shell
        /// extension; it loads at your next login) or kde (a desktop file KWin trusts; in
        /// effect within seconds).
        #[arg(value_enum, required_if_eq_any([("subcommand", "grant"), ("subcommand", "revoke")]))]
        desktop: Option<SessionDesktop>,
        /// Print the whole result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run regression scenarios (harness/<name>.toml), each in its own sandbox, and diff
    /// every run against its golden. Exit 0 all pass, 1 any fails, 2 bad input.
    Test {
        /// Scenario names (default: every harness/*.toml).
        scenarios: Vec<String>,
        /// Scenarios run in parallel, each with its own desktop.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Run only this part of the scenarios, I/N (from 1), for a CI matrix.
        #[arg(long, value_name = "I/N", value_parser = crate::harness::parse_shard)]
        shard: Option<(usize, usize)>,
        /// Make each run the new golden instead of comparing (refused when CI is set).
        #[arg(long)]
        update: bool,
        /// A scenario that replays a recording, passes and healed elements writes its run
        /// back as the recording's pending change `<trajectory>.new`, to review and accept
        /// like a golden. Nothing is written with CI set.
        #[arg(long, conflicts_with = "update")]
        heal: bool,
        /// Run a failing scenario again up to N times; a pass on a retry is reported flaky.
        #[arg(long, value_name = "N", default_value_t = 0)]
        retries: usize,
        /// Exit 1 when a scenario passed only on a retry.
        #[arg(long)]
        fail_on_flaky: bool,
        /// Run each scenario N times and report every turn that differed between the runs
        /// (with the fields that moved); such a scenario fails.
        #[arg(long, value_name = "N", default_value_t = 1)]
        repeat: usize,
        /// Run every scenario on this display server only (x11, wayland, gnome or kde), whatever
        /// its `backends` list; each run is compared with the scenario's golden (the
        /// backend's own where `own_goldens` lists it).
        #[arg(long, value_enum)]
        backend: Option<sandbox::Backend>,
        #[command(flatten)]
        dirs: HarnessDirs,
        /// Where runs are recorded (default: a new $TMPDIR/cua-test-<pid>, removed when every
        /// scenario passed).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<PathBuf>,
        #[command(flatten)]
        outputs: ReportFlags,
    },
    /// Review, accept or reject pending goldens (goldens/<scenario>.new).
    #[command(subcommand)]
    Golden(GoldenCommand),
    /// Start a headless desktop, drive a real app, observe it, and leave the artifacts in a folder.
    Demo {
        /// Where to write the artifacts (default: ./artifacts/demo-<timestamp>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The desktop's display server: x11 (Xvfb and openbox) or wayland (a headless sway).
        #[arg(long, value_enum, default_value = "x11")]
        backend: sandbox::Backend,
    },
    /// Serve MCP over stdio: every tool, with its schema, for agents.
    Mcp(McpArgs),
    /// Run the daemon that keeps tool state (element caches, the recorder) between CLI calls.
    Serve(ServeArgs),
    /// Replay a recorded trajectory against the apps running now (exit 1 if any turn fails).
    Replay(ReplayArgs),
    /// Record trajectories through the daemon (started when none runs), or by doing:
    /// `cua record --live DIR --app NAME`.
    Record(RecordArgs),
    /// Reports of `cua test` runs.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Compare two trajectories turn by turn: action, accessibility tree, screenshot.
    /// Exit 0 within tolerances, 1 when they differ, 2 on bad input (nothing written).
    Diff {
        expected: PathBuf,
        actual: PathBuf,
        /// Diff config (TOML): threshold, max_diff_pixels, max_diff_pixel_ratio, mask, redact.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        outputs: ReportFlags,
    },
    /// Print generated documentation (docs/tools.md, or with --roles docs/roles.md) to
    /// stdout, or write the trajectory JSON Schemas into a folder (docs/schema).
    #[command(hide = true)]
    Docs {
        #[arg(long, value_name = "DIR")]
        schemas: Option<PathBuf>,
        #[arg(long, conflicts_with = "schemas")]
        roles: bool,
    },
    #[command(external_subcommand)]
    Tool(Vec<String>),
}

/// `cua replay`'s arguments.
#[derive(clap::Args, Debug)]
pub(super) struct ReplayArgs {
    pub(super) dir: PathBuf,
    /// Go on after a failed turn.
    #[arg(long)]
    pub(super) no_stop_on_error: bool,
    /// At least this many milliseconds between turn starts (pacing; each turn already
    /// waits for its recorded change to show, so 0 is correct and fastest).
    #[arg(long, default_value_t = 500)]
    pub(super) delay_ms: u64,
    /// Record the replay into this folder (the trajectory to diff against the original).
    #[arg(long, value_name = "OUT")]
    pub(super) record_to: Option<PathBuf>,
    /// When the replay passes and healed any element, write what it met (its recording:
    /// healed locators, new names, the new build's trees) as the pending change
    /// `DIR.new`, to review and accept like a golden (`cua golden review NAME --goldens
    /// PARENT`). Nothing is written when a turn fails, or with CI set.
    #[arg(long, conflicts_with = "record_to")]
    pub(super) heal: bool,
    /// Text that changes by itself (a clock, a counter), a regex; its matches are no
    /// part of a turn's change. Repeatable.
    #[arg(long, value_name = "REGEX", value_parser = parse_volatile)]
    pub(super) volatile: Vec<regex::Regex>,
    /// A role whose contents follow the app's timing, not the turn, beside `tool_bar`
    /// and `status_bar`: what is under it is no part of a turn's change unless the turn
    /// acts inside it. Repeatable.
    #[arg(long, value_name = "ROLE", conflicts_with = "no_incidental")]
    pub(super) incidental_role: Vec<String>,
    /// Compare what is under toolbars and status bars too.
    #[arg(long)]
    pub(super) no_incidental: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub(super) json: bool,
    /// Also run the trajectory's set_config and set_recording turns (refused by
    /// default: they change the driver itself, and a trajectory is input from elsewhere).
    #[arg(long)]
    pub(super) allow_config: bool,
    /// Start each recorded app that has no live window, before the first turn in the order
    /// the turns first use them (from its recorded executable, app name, or a desktop
    /// entry named like its window title).
    #[arg(long)]
    pub(super) launch: bool,
    /// Start the recorded app RECORDED (its app name, executable, or window title or a
    /// part of it) from another build: `--app 'Calculator=/opt/build/calc --flag'`.
    /// Repeatable.
    #[arg(long, value_name = "RECORDED=PATH [ARGS]")]
    pub(super) app: Vec<crate::replay::AppOverride>,
    /// Print the steps the replay would drive (which turns are skipped or folded into a
    /// retry, and why), and drive nothing; with --json as JSON.
    #[arg(long)]
    pub(super) plan: bool,
    /// Replay every turn as recorded: a turn recorded as failed or refused is sent again,
    /// and an attempt is not folded into its retry (what every replay did before replay by
    /// intent).
    #[arg(long)]
    pub(super) raw: bool,
}

/// `cua mcp`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct McpArgs {
    /// Forward calls to the `cua serve` daemon listening on this socket.
    #[arg(long)]
    pub(super) socket: Option<PathBuf>,
    /// Declare an embedding host (cua-driver's flag): cua never prompts or relaunches
    /// itself, so this changes nothing; with --socket, calls go to that daemon only.
    #[arg(long)]
    pub(super) embedded: bool,
    /// Pre-authorize a boundary of cua-driver's standard mode (existing-profile). cua
    /// has no such boundary (it never attaches to a browser's existing profile), so any
    /// value is refused.
    #[arg(long, value_name = "BOUNDARY")]
    pub(super) grant: Vec<String>,
    /// Never show the live agent-cursor overlay (headless and CI runs); recording
    /// videos still draw the cursor.
    #[arg(long)]
    pub(super) no_overlay: bool,
}

/// `cua serve`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct ServeArgs {
    /// Unix socket to listen on (default: per display under /run/user/UID/cua, or $CUA_STATE_DIR).
    #[arg(long)]
    pub(super) socket: Option<PathBuf>,
    /// Fixed for the daemon's life: standard (cua-driver's standard profile: no
    /// kill_app, no page JavaScript), bounded (only what --capability-manifest allows)
    /// or unrestricted (needs --dangerously-bypass-approvals). Default: the policy file
    /// alone decides.
    #[arg(long, value_name = "MODE")]
    pub(super) permission_mode: Option<crate::policy::authority::PermissionMode>,
    /// Select unrestricted mode and acknowledge its risk.
    #[arg(long)]
    pub(super) dangerously_bypass_approvals: bool,
    /// A capability manifest (YAML, version 3): allow.tools / deny.tools narrow what
    /// the daemon serves, in any mode; required in bounded mode.
    #[arg(long, value_name = "FILE")]
    pub(super) capability_manifest: Option<PathBuf>,
    /// The launcher's confirmation that the capability manifest was reviewed.
    #[arg(long)]
    pub(super) approve_capability_manifest: bool,
    /// Declare an embedding host (cua-driver's flag): cua never prompts or relaunches
    /// itself, so this changes nothing.
    #[arg(long)]
    pub(super) embedded: bool,
    /// cua-driver skips macOS's permission gate with this; Linux has none, so this
    /// changes nothing.
    #[arg(long)]
    pub(super) no_permissions_gate: bool,
    /// Never show the live agent-cursor overlay (headless and CI runs); recording
    /// videos still draw the cursor.
    #[arg(long)]
    pub(super) no_overlay: bool,
}

#[derive(clap::Args, Debug, Clone)]
struct HarnessDirs {
    /// Folder of scenario files.
    #[arg(long, value_name = "DIR", default_value = "harness")]
    harness: PathBuf,
    /// Folder of goldens.
    #[arg(long, value_name = "DIR", default_value = "goldens")]
    goldens: PathBuf,
}

#[derive(Subcommand, Debug)]
enum ReportCommand {
    /// Merge the report folders of sharded runs (`cua test --shard I/N --report DIR`) into
    /// one report: every scenario, failures first. Exit 0 all passed, 1 any failed, 2 bad
    /// input (a folder without report.json, a corrupt one, a scenario in two shards).
    Merge {
        /// The shards' report folders.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        #[command(flatten)]
        outputs: ReportFlags,
    },
}

#[derive(Subcommand, Debug)]
enum GoldenCommand {
    /// Scenarios with their golden state: golden, no golden, pending, obsolete (no scenario).
    List {
        #[command(flatten)]
        dirs: HarnessDirs,
    },
    /// Go through a pending golden's changed turns: accept, reject or skip each.
    Review {
        /// Scenario (default: every one with a pending golden).
        scenario: Option<String>,
        /// Decide one turn without asking (with --accept or --reject).
        #[arg(long, requires = "scenario")]
        turn: Option<u32>,
        #[arg(long, requires = "turn", conflicts_with = "reject")]
        accept: bool,
        #[arg(long, requires = "turn")]
        reject: bool,
        /// Review in the browser: serve the report on 127.0.0.1 with accept / reject
        /// buttons (the URL carries a one-time token); stops once nothing is left.
        #[arg(long, conflicts_with = "turn")]
        web: bool,
        #[command(flatten)]
        dirs: HarnessDirs,
    },
    /// Make pending goldens the goldens.
    Accept {
        scenarios: Vec<String>,
        #[arg(long, conflicts_with = "scenarios")]
        all: bool,
        #[command(flatten)]
        dirs: HarnessDirs,
    },
    /// Drop pending goldens.
    Reject {
        scenarios: Vec<String>,
        #[arg(long, conflicts_with = "scenarios")]
        all: bool,
        #[command(flatten)]
        dirs: HarnessDirs,
    },
}

/// `--volatile REGEX`: a pattern that must match some text, never the empty text (which it
/// would match everywhere).
fn parse_volatile(s: &str) -> Result<regex::Regex, String> {
    let pattern = regex::Regex::new(s).map_err(|e| e.to_string())?;
    if pattern.is_match("") {
        return Err(format!(
            "{s:?} matches empty text; make it match at least one character"
        ));
    }
    Ok(pattern)
}

#[derive(clap::Args, Debug, Default)]
struct ReportFlags {
    /// Write the HTML report (index.html, images) and report.json into DIR.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Write JUnit XML (a test case per turn) to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Print the results as JSON instead of the summary.
    #[arg(long)]
    json: bool,
}

impl ReportFlags {
    fn outputs(&self) -> crate::report::Outputs {
        crate::report::Outputs {
            report_dir: self.report.clone(),
            junit: self.junit.clone(),
            json: self.json,
        }
    }
}

#[derive(clap::Args, Debug, Default)]
struct OutputFlags {
    /// Print the whole structured result as JSON instead of the summary.
    #[arg(long)]
    json: bool,
    /// Write the tool's image (screenshot, zoom) to this file.
    #[arg(long, value_name = "PATH")]
    screenshot_out_file: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
struct RecordArgs {
    /// Record by doing into DIR: launch --app in a sandbox and serve a page on the loopback
    /// that shows its screen live; clicks, drags, the wheel, typing and keys there become
    /// recorded turns. Prints the page's URL; Ctrl-C (or the app exiting) ends it.
    #[arg(long, value_name = "DIR")]
    live: Option<PathBuf>,
    /// With --live: the app to launch and record: a launch_app name or desktop id, or a
    /// program's path (anything with a `/`, e.g. ./harness/apps/fixture.py).
    #[arg(long, requires = "live")]
    app: Option<String>,
    /// With --live: use the running sandbox on this display instead of starting one of
    /// its own (without it, a sandbox of its own is started whatever else runs, and
    /// stopped at the end).
    #[arg(long, requires = "live")]
    display: Option<u32>,
    /// With --live: leave the recorded app running when the recording ends (Ctrl-C); by
    /// default it is stopped, so a replay on the same desktop starts it afresh.
    #[arg(long, requires = "live")]
    keep_app: bool,
    /// With --live: the new sandbox's screen size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x800", value_parser = crate::sandbox::parse_size)]
    size: (u32, u32),
    /// With --live: the new sandbox's display server.
    #[arg(long, value_enum, default_value = "x11")]
    backend: sandbox::Backend,
    /// With --live: where "Save as scenario" writes `<name>.toml` (its parent is the
    /// project root the scenario's trajectory is named from).
    #[arg(long, value_name = "DIR", default_value = "harness")]
    harness: PathBuf,
    #[command(subcommand)]
    command: Option<RecordCommand>,
}

#[derive(Subcommand, Debug)]
enum RecordCommand {
    /// Start recording every action into DIR.
    Start {
        dir: PathBuf,
        /// Also record the display as H.264 video.
        #[arg(long)]
        video: bool,
        /// Continue after the turns already in DIR.
        #[arg(long)]
        append: bool,
    },
    /// Stop recording (finalizes session.json).
    Stop,
    /// Show the recorder's state.
    Status,
}

/// What `cua permissions` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PermissionsAction {
    Status,
    Grant,
    Revoke,
}

/// The desktops whose own sessions cua can be let into.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SessionDesktop {
    Gnome,
    Kde,
}

#[derive(Subcommand, Debug)]
enum SandboxCommand {
    /// Start a desktop and print its environment as shell exports: eval "$(cua sandbox start)"
    Start {
        /// Screen size, WIDTHxHEIGHT.
        #[arg(long, default_value = "1920x1080", value_parser = crate::sandbox::parse_size)]
        size: (u32, u32),
        /// The display server: x11 (Xvfb and openbox) or wayland (a headless sway).
        #[arg(long, value_enum, default_value = "x11")]
        backend: sandbox::Backend,
    },
    /// Run a command inside a desktop (a running sandbox, or a new one for the command's lifetime).
    Exec {
        /// Use the sandbox on this display number.
        #[arg(long)]
        display: Option<u32>,
        /// Screen size when a new sandbox is started.
        #[arg(long, default_value = "1920x1080", value_parser = crate::sandbox::parse_size)]
        size: (u32, u32),
        /// The display server when a new sandbox is started: x11, wayland, gnome or kde.
        #[arg(long, value_enum, default_value = "x11")]
        backend: sandbox::Backend,
        #[arg(trailing_var_arg = true, required = true, num_args = 1..)]
        command: Vec<String>,
    },
    /// List running sandboxes.
    Status,
    /// Stop a sandbox and every process it started.
    Stop {
        #[arg(long, conflicts_with = "all")]
        display: Option<u32>,
        /// Stop every sandbox.
        #[arg(long)]
        all: bool,
    },
    /// Hold the Composite redirect for a sandbox (started by `sandbox start`).
    #[command(hide = true)]
    HoldComposite,
    /// Hold a pointer and a keyboard on a Wayland sandbox's seat (started by `sandbox start`).
    #[command(hide = true)]
    HoldSeat,
}

/// Writes to stdout; a closed pipe (`cua … | head`) is not an error.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// The async runtime tools run on; on failure, the exit code after reporting it.
fn runtime() -> Result<tokio::runtime::Runtime, i32> {
    crate::tools::runtime().map_err(|e| fail(1, format!("cannot start the async runtime: {e}")))
}

/// The policy file cua-driver's launchers name in `CUA_DRIVER_POLICY_FILE`, if any.
fn policy_file_from_env() -> Option<std::path::PathBuf> {
    std::env::var_os(crate::policy::driver_policy::POLICY_FILE_ENV)
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
}

/// Fixes a server's authority from its launch flags (none given: the policy file alone
/// decides, as cua always has); on failure, the exit code after reporting why.
fn install_authority(mut flags: crate::policy::authority::LaunchFlags) -> Result<(), i32> {
    let registry = ToolRegistry::new();
    flags.tools = registry.tools().map(|t| t.name()).collect();
    match crate::policy::authority::from_flags(&flags) {
        Ok(a) if a.mode.is_none() && a.ceiling.is_none() && a.policy.is_none() => Ok(()),
        Ok(a) => crate::policy::authority::install(a).map_err(|e| fail(1, e)),
        Err(e) => Err(fail(2, e)),
    }
}

fn fail(code: i32, msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {msg}");
    code
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Call {
            tool,
            json_args,
            output,
            socket,
        } => run_tool(&tool, json_args.as_deref(), &output, socket.as_deref()),
        Command::Manifest { pretty } => run_manifest(pretty),
        Command::Stop { socket } => run_stop(socket),
        Command::Status { socket } => run_status(socket),
        Command::Tool(words) => {
            let Some((tool, rest)) = words.split_first() else {
                return fail(2, "no tool given");
            };
            match parse_tool_words(rest) {
                Ok((args, output)) => run_tool(tool, args.as_deref(), &output, None),
                Err(msg) => fail(2, msg),
            }
        }
        Command::ListTools => list_tools(),
        Command::Describe { tool } => describe(&tool),
        Command::Sandbox(cmd) => run_sandbox(cmd),
        Command::Permissions {
            subcommand,
            desktop,
            json,
        } => run_permissions(subcommand, desktop, json),
        Command::Serve(a) => run_serve(a),
        Command::Record(a) => match (a.command, a.live) {
            (Some(cmd), _) => run_record(cmd),
            (None, Some(dir)) => run_live(
                &dir,
                a.app.as_deref(),
                a.display,
                a.size,
                a.backend,
                &a.harness,
                a.keep_app,
            ),
            (None, None) => fail(
                2,
                "cua record: give start DIR, stop or status, or --live DIR --app NAME",
            ),
        },
        Command::Mcp(a) => run_mcp(a),
        Command::Replay(a) => replay_command(a),
        Command::Diff {
            expected,
            actual,
            config,
            outputs,
        } => run_diff(&expected, &actual, config.as_deref(), &outputs.outputs()),
        Command::Test {
            scenarios,
            jobs,
            shard,
            update,
            heal,
            retries,
            fail_on_flaky,
            repeat,
            backend,
            dirs,
            work_dir,
            outputs,
        } => run_test(
            crate::harness::TestOptions {
                harness_dir: dirs.harness,
                goldens_dir: dirs.goldens,
                scenarios,
                jobs,
                shard,
                update,
                heal,
                retries,
                repeat,
                work_dir: work_dir.clone().unwrap_or_else(default_work_dir),
                backend,
            },
            &outputs.outputs(),
            work_dir.is_none(),
            fail_on_flaky,
        ),
        Command::Golden(cmd) => run_golden(cmd),
        Command::Report(ReportCommand::Merge { dirs, outputs }) => {
            harness::run_report_merge(&dirs, &outputs.outputs())
        }
        Command::Demo { out: dir, backend } => crate::demo::run(dir, backend),
        Command::Docs { schemas, roles } => run_docs(schemas, roles),
    }
}

/// `cua docs`: docs/tools.md on stdout, the role vocabulary (`--roles`), or the trajectory
/// format's JSON Schemas written into a folder (`--schemas DIR`).
fn run_docs(schemas: Option<PathBuf>, roles: bool) -> i32 {
    let Some(dir) = schemas else {
        out(&match roles {
            true => crate::docs::roles_markdown(&crate::platform::role_vocabulary()),
            false => crate::docs::tools_markdown(&ToolRegistry::new()),
        });
        return 0;
    };
    for (name, schema) in crate::trajectory::schemas() {
        let text = serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n";
        if let Err(e) =
            std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(dir.join(name), text))
        {
            return fail(1, format!("cannot write {}: {e}", dir.join(name).display()));
        }
    }
    0
}
