//! The command line: `cua <tool> '<json>'`, `cua call`, `cua list-tools`, `cua describe`,
//! `cua sandbox …` and `cua demo`. Tools are looked up in the registry; nothing here knows
//! a tool by name.
//!
//! Exit codes: 0 success, 1 the tool (or command) reported an error, 2 bad usage or input.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use clap::{Parser, Subcommand};
use serde_json::Value;

use crate::replay::ReplayOptions;
use crate::sandbox::{self, Sandbox, SandboxOptions};
use crate::tools::{ToolContext, ToolOutput, ToolRegistry};

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
    Call {
        tool: String,
        /// Arguments as a JSON object (default {}).
        args: Option<String>,
        #[command(flatten)]
        output: OutputFlags,
    },
    /// List every tool with its one-line description.
    ListTools,
    /// Print a tool's JSON Schema and description.
    Describe { tool: String },
    /// Manage headless desktops (Xvfb + D-Bus + AT-SPI + openbox).
    #[command(subcommand)]
    Sandbox(SandboxCommand),
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
    },
    /// Serve MCP over stdio: every tool, with its schema, for agents.
    Mcp {
        /// Forward calls to the `cua serve` daemon listening on this socket.
        #[arg(long)]
        socket: Option<PathBuf>,
    },
    /// Run the daemon that keeps tool state (element caches, the recorder) between CLI calls.
    Serve {
        /// Unix socket to listen on (default: per display under /run/user/UID/cua, or $CUA_STATE_DIR).
        #[arg(long)]
        socket: Option<PathBuf>,
    },
    /// Replay a recorded trajectory against the apps running now (exit 1 if any turn fails).
    Replay {
        dir: PathBuf,
        /// Go on after a failed turn.
        #[arg(long)]
        no_stop_on_error: bool,
        /// At least this many milliseconds between turn starts (pacing; each turn already
        /// waits for its recorded change to show, so 0 is correct and fastest).
        #[arg(long, default_value_t = 500)]
        delay_ms: u64,
        /// Record the replay into this folder (the trajectory to diff against the original).
        #[arg(long, value_name = "OUT")]
        record_to: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Also run the trajectory's set_config and set_recording turns (refused by
        /// default: they change the driver itself, and a trajectory is input from elsewhere).
        #[arg(long)]
        allow_config: bool,
        /// Start each recorded app that has no live window, before the first turn in the order
        /// the turns first use them (from its recorded executable, app name, or a desktop
        /// entry named like its window title).
        #[arg(long)]
        launch: bool,
        /// Start the recorded app RECORDED (its app name, executable, or window title or a
        /// part of it) from another build: `--app 'Calculator=/opt/build/calc --flag'`.
        /// Repeatable.
        #[arg(long, value_name = "RECORDED=PATH [ARGS]")]
        app: Vec<crate::replay::AppOverride>,
    },
    /// Record trajectories through the daemon (started when none runs).
    #[command(subcommand)]
    Record(RecordCommand),
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

#[derive(Subcommand, Debug)]
enum SandboxCommand {
    /// Start a desktop and print its environment as shell exports: eval "$(cua sandbox start)"
    Start {
        /// Screen size, WIDTHxHEIGHT.
        #[arg(long, default_value = "1920x1080", value_parser = crate::sandbox::parse_size)]
        size: (u32, u32),
    },
    /// Run a command inside a desktop (a running sandbox, or a new one for the command's lifetime).
    Exec {
        /// Use the sandbox on this display number.
        #[arg(long)]
        display: Option<u32>,
        /// Screen size when a new sandbox is started.
        #[arg(long, default_value = "1920x1080", value_parser = crate::sandbox::parse_size)]
        size: (u32, u32),
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
        Command::Call { tool, args, output } => run_tool(&tool, args.as_deref(), &output),
        Command::Tool(words) => {
            let Some((tool, rest)) = words.split_first() else {
                return fail(2, "no tool given");
            };
            match parse_tool_words(rest) {
                Ok((args, output)) => run_tool(tool, args.as_deref(), &output),
                Err(msg) => fail(2, msg),
            }
        }
        Command::ListTools => {
            let registry = ToolRegistry::new();
            for t in registry.tools() {
                let first = t.description().split(". ").next().unwrap_or("");
                out(&format!(
                    "{:<20} {}{}",
                    t.name(),
                    if t.read_only() { "" } else { "[acts] " },
                    first.trim_end_matches('.')
                ));
            }
            0
        }
        Command::Describe { tool } => {
            let registry = ToolRegistry::new();
            match registry.get(&tool) {
                Ok(t) => {
                    let doc = serde_json::json!({
                        "name": t.name(),
                        "description": t.description(),
                        "read_only": t.read_only(),
                        "input_schema": t.input_schema(),
                    });
                    out(&serde_json::to_string_pretty(&doc).unwrap_or_default());
                    0
                }
                Err(e) => fail(e.exit_code(), e),
            }
        }
        Command::Sandbox(cmd) => run_sandbox(cmd),
        Command::Serve { socket } => {
            let socket = socket.unwrap_or_else(crate::daemon::default_socket);
            let runtime = match runtime() {
                Ok(r) => r,
                Err(code) => return code,
            };
            match runtime.block_on(crate::daemon::serve(&socket)) {
                Ok(()) => 0,
                Err(e) => fail(1, e),
            }
        }
        Command::Record(cmd) => run_record(cmd),
        Command::Mcp { socket } => {
            let runtime = match runtime() {
                Ok(r) => r,
                Err(code) => return code,
            };
            match runtime.block_on(crate::mcp::serve_stdio(socket)) {
                Ok(()) => 0,
                Err(e) => fail(1, e),
            }
        }
        Command::Replay {
            dir,
            no_stop_on_error,
            delay_ms,
            record_to,
            json,
            allow_config,
            launch,
            app,
        } => run_replay(
            &dir,
            ReplayOptions {
                delay_ms,
                stop_on_error: !no_stop_on_error,
                bound_app: None,
                allow_driver_changes: allow_config,
                launch,
                apps: app,
            },
            record_to.as_deref(),
            json,
        ),
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
            retries,
            fail_on_flaky,
            repeat,
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
                retries,
                repeat,
                work_dir: work_dir.clone().unwrap_or_else(default_work_dir),
            },
            &outputs.outputs(),
            work_dir.is_none(),
            fail_on_flaky,
        ),
        Command::Golden(cmd) => run_golden(cmd),
        Command::Demo { out: dir } => crate::demo::run(dir),
        Command::Docs {
            schemas: None,
            roles: false,
        } => {
            out(&crate::docs::tools_markdown(&ToolRegistry::new()));
            0
        }
        Command::Docs {
            schemas: None,
            roles: true,
        } => {
            out(&crate::docs::roles_markdown(
                &crate::platform::role_vocabulary(),
            ));
            0
        }
        Command::Docs {
            schemas: Some(dir), ..
        } => {
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
    }
}

/// Splits `cua <tool> [JSON] [--json] [--screenshot-out-file PATH]`.
fn parse_tool_words(words: &[String]) -> Result<(Option<String>, OutputFlags), String> {
    let mut flags = OutputFlags::default();
    let mut args = None;
    let mut it = words.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--json" => flags.json = true,
            "--screenshot-out-file" => {
                let p = it.next().ok_or("--screenshot-out-file needs a path")?;
                flags.screenshot_out_file = Some(PathBuf::from(p));
            }
            s if s.starts_with("--screenshot-out-file=") => {
                flags.screenshot_out_file =
                    Some(PathBuf::from(&s["--screenshot-out-file=".len()..]));
            }
            s if s.starts_with("--") => return Err(format!("unknown flag `{s}`")),
            s if args.is_none() => args = Some(s.to_string()),
            s => {
                return Err(format!(
                    "unexpected argument `{s}` (pass tool arguments as one JSON object)"
                ));
            }
        }
    }
    Ok((args, flags))
}

fn run_tool(name: &str, args: Option<&str>, flags: &OutputFlags) -> i32 {
    let registry = ToolRegistry::new();
    let tool = match registry.get(name) {
        Ok(t) => t,
        Err(e) => return fail(e.exit_code(), e),
    };
    let args: Value = match args.map(serde_json::from_str).transpose() {
        Ok(v) => v.unwrap_or(Value::Object(Default::default())),
        Err(e) => {
            return fail(
                2,
                format!(
                    "arguments are not valid JSON: {e} (pass one JSON object, e.g. '{{\"pid\": 123}}')"
                ),
            );
        }
    };
    // Nothing runs (no desktop is touched) until the arguments are valid.
    if let Err(e) = tool.validate(&args) {
        return fail(e.exit_code(), e);
    }
    // A running daemon owns the state (element caches, recording): go through it.
    let result = match crate::daemon::call(&crate::daemon::default_socket(), name, &args) {
        Some(result) => result,
        None => {
            let runtime = match runtime() {
                Ok(r) => r,
                Err(code) => return code,
            };
            let ctx = ToolContext::new().one_shot();
            // Through the registry, so a recording (in-process) would see it too.
            runtime.block_on(registry.call(&ctx, name, args))
        }
    };
    match result {
        Ok(output) => print_output(&output, flags),
        Err(e) => fail(e.exit_code(), e),
    }
}

fn print_output(output: &ToolOutput, flags: &OutputFlags) -> i32 {
    let mut structured = output.structured.clone();
    let mut note = None;
    if let Some(image) = &output.image {
        match &flags.screenshot_out_file {
            Some(path) => {
                if let Err(e) = crate::files::write_atomic(path, &image.data) {
                    return fail(1, format!("cannot write `{}`: {e}", path.display()));
                }
                structured["screenshot_file_path"] = Value::String(path.display().to_string());
                note = Some(format!("image written to {}", path.display()));
            }
            None if flags.json => {
                structured["image"] = serde_json::json!({
                    "mime": image.mime,
                    "base64": base64::engine::general_purpose::STANDARD.encode(&image.data),
                });
            }
            None => {
                note = Some("image not shown: pass --screenshot-out-file PATH to save it".into())
            }
        }
    }
    if flags.json {
        out(&serde_json::to_string_pretty(&structured).unwrap_or_default());
    } else {
        out(output.summary.trim_end());
        if let Some(n) = note {
            out(&format!("({n})"));
        }
    }
    0
}

fn run_sandbox(cmd: SandboxCommand) -> i32 {
    match cmd {
        SandboxCommand::Start { size } => {
            match Sandbox::start_detached(SandboxOptions {
                width: size.0,
                height: size.1,
            }) {
                Ok(sb) => {
                    for (k, v) in sb.env() {
                        out(&format!("export {k}={}", shell_quote(&v)));
                    }
                    eprintln!(
                        "cua sandbox on display {} ({}x{}); stop it with: cua sandbox stop --display {}",
                        sb.display_name(),
                        size.0,
                        size.1,
                        sb.display()
                    );
                    0
                }
                Err(e) => fail(1, e),
            }
        }
        SandboxCommand::Exec {
            display,
            size,
            command,
        } => {
            let existing = if display.is_some() || !sandbox::list_running().is_empty() {
                match Sandbox::find(display) {
                    Ok((state, dir)) => Some(Sandbox::attach(state, dir)),
                    Err(e) => return fail(1, e),
                }
            } else {
                None
            };
            let sb = match existing {
                Some(sb) => sb,
                None => match Sandbox::start(SandboxOptions {
                    width: size.0,
                    height: size.1,
                }) {
                    Ok(sb) => sb,
                    Err(e) => return fail(1, e),
                },
            };
            let mut child = sb.command(&command[0]);
            child.args(&command[1..]);
            match child.status() {
                Ok(status) => status.code().unwrap_or(1),
                Err(e) => fail(1, format!("cannot run `{}`: {e}", command[0])),
            }
        }
        SandboxCommand::Status => {
            let running = sandbox::list_running();
            if running.is_empty() {
                out("no cua sandbox is running");
            }
            for (state, dir) in running {
                out(&format!(
                    "display :{}  {}x{}  {} processes  started {}  state {}",
                    state.display,
                    state.width,
                    state.height,
                    state.processes.len(),
                    state.created,
                    dir.display()
                ));
            }
            0
        }
        SandboxCommand::Stop { display, all } => {
            let targets = if all {
                sandbox::list_running()
            } else {
                match Sandbox::find(display) {
                    Ok(found) => vec![found],
                    Err(e) => return fail(1, e),
                }
            };
            for (state, dir) in &targets {
                sandbox::stop_sandbox(state, dir);
                out(&format!("stopped sandbox on display :{}", state.display));
            }
            0
        }
        SandboxCommand::HoldComposite => {
            let display = std::env::var("DISPLAY").unwrap_or_default();
            sandbox::hold_composite_redirect(&display);
            0
        }
    }
}

fn run_replay(
    dir: &std::path::Path,
    opts: ReplayOptions,
    record_to: Option<&std::path::Path>,
    json: bool,
) -> i32 {
    use crate::replay::{replay, turn_dirs};
    let total = match turn_dirs(dir) {
        Ok(t) => t.len(),
        Err(e) => return fail(e.exit_code(), e),
    };
    let runtime = match runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let ctx = ToolContext::new();
    let registry = ToolRegistry::new();
    if let Some(out_dir) = record_to {
        let args = serde_json::json!({ "enabled": true, "output_dir": out_dir });
        if let Err(e) = runtime.block_on(registry.call(&ctx, "set_recording", args)) {
            return fail(e.exit_code(), e);
        }
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} turns {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let report = runtime.block_on(replay(&ctx, &registry, dir, &opts, |t| {
        bar.set_message(format!(
            "turn {} {} {}",
            t.turn,
            t.tool,
            if t.ok { "ok" } else { "FAILED" }
        ));
        bar.inc(1);
    }));
    bar.finish_and_clear();
    if record_to.is_some() {
        let _ = runtime.block_on(registry.call(
            &ctx,
            "set_recording",
            serde_json::json!({ "enabled": false }),
        ));
    }
    let report = match report {
        Ok(r) => r,
        Err(e) => return fail(e.exit_code(), e),
    };
    // Beside the replay's recording: what it replayed, and the apps it started itself.
    if let Some(out_dir) = record_to {
        let note = serde_json::json!({
            "replayed": report.directory,
            "launch": opts.launch,
            "apps": opts.apps,
            "launched": report.launched,
        });
        let bytes = serde_json::to_vec_pretty(&note).unwrap_or_default();
        if let Err(e) = crate::files::write_atomic(&out_dir.join("replay.json"), &bytes) {
            eprintln!("warning: cannot write replay.json: {e}");
        }
    }
    if json {
        out(&serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        out(&format!(
            "{:<6} {:<18} {:<6} {:>7}  {:<14} details",
            "turn", "tool", "result", "ms", "match"
        ));
        for t in &report.turns {
            out(&format!(
                "{:<6} {:<18} {:<6} {:>7}  {:<14} {}{}",
                t.turn,
                t.tool,
                if t.ok { "ok" } else { "FAILED" },
                t.duration_ms,
                t.locator_match.as_deref().unwrap_or("-"),
                t.result_summary.lines().next().unwrap_or(""),
                t.rebinding
                    .as_ref()
                    .map(|r| format!(" [{r}]"))
                    .unwrap_or_default()
            ));
        }
        for l in &report.launched {
            out(&format!(
                "started for turn {}: {} ({}), pid {}",
                l.turn,
                l.recorded,
                l.arguments,
                l.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into())
            ));
        }
        out(&format!(
            "{} of {total} turns attempted: {} succeeded, {} failed{}",
            report.attempted,
            report.succeeded,
            report.failed,
            report
                .first_failure
                .map(|n| format!(" (first failure: turn {n})"))
                .unwrap_or_default()
        ));
    }
    if report.failed > 0 { 1 } else { 0 }
}

fn run_record(cmd: RecordCommand) -> i32 {
    let socket = crate::daemon::default_socket();
    let (tool, args) = match &cmd {
        RecordCommand::Start { dir, video, append } => {
            let dir = if dir.is_absolute() {
                dir.clone()
            } else {
                std::env::current_dir().unwrap_or_default().join(dir)
            };
            if std::os::unix::net::UnixStream::connect(&socket).is_err() {
                if let Err(e) = crate::daemon::spawn_daemon(&socket) {
                    return fail(1, e);
                }
            }
            (
                "set_recording",
                serde_json::json!({ "enabled": true, "output_dir": dir, "append": append, "video_experimental": video }),
            )
        }
        RecordCommand::Stop => ("set_recording", serde_json::json!({ "enabled": false })),
        RecordCommand::Status => ("get_recording_state", serde_json::json!({})),
    };
    match crate::daemon::call(&socket, tool, &args) {
        Some(Ok(out)) => print_output(&out, &OutputFlags::default()),
        Some(Err(e)) => fail(e.exit_code(), e),
        None => {
            out("not recording (no cua daemon runs for this display)");
            0
        }
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Reads a diff config file, or the defaults.
pub fn read_diff_config(path: Option<&Path>) -> Result<crate::diff::DiffConfig, String> {
    match path {
        None => Ok(crate::diff::DiffConfig::default()),
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| format!("--config {}: {e}", p.display()))?;
            crate::diff::DiffConfig::from_toml(&text, &p.display().to_string())
        }
    }
}

fn run_diff(
    expected: &Path,
    actual: &Path,
    config: Option<&Path>,
    outputs: &crate::report::Outputs,
) -> i32 {
    let started = std::time::Instant::now();
    let config = match read_diff_config(config) {
        Ok(c) => c,
        Err(e) => return fail(2, e),
    };
    let diff = match crate::diff::diff_trajectories(expected, actual, &config) {
        Ok(d) => d,
        Err(e) => return fail(2, e),
    };
    let name = expected
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trajectory".into());
    let report =
        crate::report::ScenarioReport::of_diff(name, diff, started.elapsed().as_millis() as u64);
    let passed = report.passed;
    if let Err(e) = outputs.emit("cua diff", std::slice::from_ref(&report)) {
        return fail(1, format!("writing the report: {e}"));
    }
    if passed { 0 } else { 1 }
}

/// Per invocation: two `cua test` runs at once must not record into the same folders.
fn default_work_dir() -> PathBuf {
    std::env::temp_dir().join(format!("cua-test-{}", std::process::id()))
}

fn run_test(
    opts: crate::harness::TestOptions,
    outputs: &crate::report::Outputs,
    own_work_dir: bool,
    fail_on_flaky: bool,
) -> i32 {
    if opts.update && crate::golden::in_ci() {
        return fail(
            2,
            "--update: CI is set, and nothing under goldens/ is written under CI",
        );
    }
    if opts.jobs == 0 {
        return fail(2, "--jobs must be at least 1");
    }
    if opts.repeat == 0 {
        return fail(2, "--repeat must be at least 1");
    }
    if opts.repeat > 1 && (opts.update || opts.retries > 0) {
        return fail(
            2,
            "--repeat runs each scenario as it is: not with --update or --retries",
        );
    }
    let scenarios = match crate::harness::select(&opts) {
        Ok(s) => s,
        Err(problems) => return fail(2, problems.join("\n       ")),
    };
    eprintln!(
        "running {} scenario(s) with {} job(s); runs in {}",
        scenarios.len(),
        opts.jobs,
        opts.work_dir.display()
    );
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let reports = crate::harness::run_all(&scenarios, &opts, |r| {
        let n = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        eprintln!(
            "[{n}/{}] {} {} in {:.1} s",
            scenarios.len(),
            r.name,
            if r.flaky() {
                "passed on a retry (FLAKY)"
            } else if r.passed {
                "passed"
            } else {
                "FAILED"
            },
            r.duration_ms as f64 / 1000.0
        );
    });
    if opts.scenarios.is_empty() {
        for name in crate::harness::obsolete_goldens(&opts.goldens_dir, &opts.harness_dir) {
            eprintln!(
                "warning: obsolete golden {} (no {}.toml in {})",
                opts.goldens_dir.join(&name).display(),
                name,
                opts.harness_dir.display()
            );
        }
    }
    if let Err(e) = outputs.emit("cua test", &reports) {
        return fail(1, format!("writing the report: {e}"));
    }
    let passed = reports.iter().all(|r| r.passed);
    if passed && own_work_dir {
        let _ = std::fs::remove_dir_all(&opts.work_dir);
    } else if !passed {
        eprintln!("runs kept in {}", opts.work_dir.display());
    }
    if !passed {
        return 1;
    }
    if fail_on_flaky && reports.iter().any(|r| r.flaky()) {
        eprintln!("--fail-on-flaky: a scenario passed only on a retry");
        return 1;
    }
    0
}

/// The diff config a scenario declares, or the defaults when it has no file.
fn scenario_config(dirs: &HarnessDirs, scenario: &str) -> Result<crate::diff::DiffConfig, String> {
    let file = dirs.harness.join(format!("{scenario}.toml"));
    if !file.is_file() {
        return Ok(crate::diff::DiffConfig::default());
    }
    crate::harness::Scenario::load(&file).map(|s| s.spec.diff)
}

fn run_golden(cmd: GoldenCommand) -> i32 {
    use crate::golden::{Decision, Goldens};
    match cmd {
        GoldenCommand::List { dirs } => {
            let goldens = Goldens::new(&dirs.goldens);
            let obsolete = crate::harness::obsolete_goldens(&dirs.goldens, &dirs.harness);
            let scenarios = match crate::harness::discover(&dirs.harness) {
                Ok(s) => s,
                // Outside a project there is nothing to list: say where it looked.
                Err(e) if !dirs.goldens.is_dir() => return fail(2, e),
                Err(_) => Vec::new(),
            };
            let mut names: Vec<String> = scenarios
                .iter()
                .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect();
            names.extend(obsolete.iter().cloned());
            names.sort();
            names.dedup();
            for name in names {
                let mut state = Vec::new();
                state.push(if goldens.golden(&name).is_dir() {
                    "golden"
                } else {
                    "no golden"
                });
                if goldens.pending(&name).is_dir() {
                    state.push("pending");
                }
                if obsolete.contains(&name) {
                    state.push("obsolete (no scenario)");
                }
                out(&format!("{name:<24} {}", state.join(", ")));
            }
            0
        }
        GoldenCommand::Accept {
            scenarios,
            all,
            dirs,
        }
        | GoldenCommand::Reject {
            scenarios,
            all,
            dirs,
        } if scenarios.is_empty() && !all => {
            let _ = dirs;
            fail(2, "name the scenarios, or give --all")
        }
        GoldenCommand::Accept {
            scenarios,
            all,
            dirs,
        } => each_scenario(&dirs, scenarios, all, |goldens, name| {
            goldens
                .accept(name)
                .map(|p| format!("accepted: {}", p.display()))
        }),
        GoldenCommand::Reject {
            scenarios,
            all,
            dirs,
        } => each_scenario(&dirs, scenarios, all, |goldens, name| {
            goldens
                .reject(name)
                .map(|()| format!("rejected: {}", goldens.pending(name).display()))
        }),
        GoldenCommand::Review {
            scenario,
            turn,
            accept,
            reject,
            web,
            dirs,
        } => {
            let goldens = Goldens::new(&dirs.goldens);
            let names = match scenario {
                Some(s) => vec![s],
                None => pending_names(&goldens),
            };
            if names.is_empty() {
                out(&format!("no pending goldens in {}", dirs.goldens.display()));
                return 0;
            }
            if web {
                let mut scenarios = Vec::new();
                for name in names {
                    match scenario_config(&dirs, &name) {
                        Ok(c) => scenarios.push((name, c)),
                        Err(e) => return fail(2, e),
                    }
                }
                let served = crate::golden::web::serve(&goldens, scenarios, |url| {
                    out(&format!("review in the browser: {url}"));
                    out("(Ctrl-C stops the review; it also stops once nothing is left)");
                });
                return match served {
                    Ok(()) => 0,
                    Err(e) => fail(2, e),
                };
            }
            if turn.is_none() && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                return fail(
                    2,
                    "review asks on a terminal; without one use --turn N --accept|--reject, or cua golden accept|reject",
                );
            }
            if turn.is_some() && !accept && !reject {
                return fail(2, "--turn needs --accept or --reject");
            }
            for name in names {
                let config = match scenario_config(&dirs, &name) {
                    Ok(c) => c,
                    Err(e) => return fail(2, e),
                };
                let mut stdout = std::io::stdout();
                let result = match turn {
                    Some(t) => {
                        let wanted = if accept {
                            Decision::Accept
                        } else {
                            Decision::Reject
                        };
                        crate::golden::decide_turn(&goldens, &name, &config, t, wanted)
                            .map_err(|e| format!("`--turn`: {e}"))
                            .map(|done| {
                                out(&format!(
                                    "{name} turn {t}: {}",
                                    if done.accepted {
                                        "accepted into the golden"
                                    } else {
                                        "kept as in the golden"
                                    }
                                ));
                                if done.review_done {
                                    out(&format!(
                                        "{name}: no changed turn left undecided, pending golden removed"
                                    ));
                                }
                            })
                    }
                    None => crate::golden::review(
                        &goldens,
                        &name,
                        &config,
                        &mut stdout,
                        &mut crate::golden::ask_terminal,
                    )
                    .map(|n| out(&format!("{name}: {n} turn(s) accepted"))),
                };
                if let Err(e) = result {
                    return fail(2, e);
                }
            }
            0
        }
    }
}

/// Runs `op` for the named scenarios (or every one with a pending golden); exit 2 if any
/// failed.
fn each_scenario(
    dirs: &HarnessDirs,
    scenarios: Vec<String>,
    all: bool,
    op: impl Fn(&crate::golden::Goldens, &str) -> Result<String, String>,
) -> i32 {
    let goldens = crate::golden::Goldens::new(&dirs.goldens);
    let names = if all {
        pending_names(&goldens)
    } else {
        scenarios
    };
    let mut code = 0;
    for name in names {
        match op(&goldens, &name) {
            Ok(done) => out(&done),
            Err(e) => code = fail(2, e),
        }
    }
    code
}

fn pending_names(goldens: &crate::golden::Goldens) -> Vec<String> {
    goldens
        .list()
        .into_iter()
        .filter(|g| g.pending)
        .map(|g| g.scenario)
        .collect()
}
