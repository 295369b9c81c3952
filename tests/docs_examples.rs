//! The docs' examples, run as a reader would: the README's shell blocks marked
//! `<!-- run by tests/docs_examples.rs -->` line by line, and docs/tools.md's examples in
//! order, each against a sandbox of its own with Debian 12's Calculator. Every command must
//! succeed, and where the docs say what `--json` prints (a shape in backticks,
//! `{field, field: [{…}], …}`), the printed JSON must have every field it names: a renamed
//! or moved output field fails here, not in someone's script.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;

const MARKER: &str = "<!-- run by tests/docs_examples.rs -->";

/// A field the docs promise: its name, and what its value holds when the docs say.
#[derive(Debug)]
struct Field {
    name: String,
    /// `name?`: absent or null at times; when there, it holds `inner`.
    optional: bool,
    inner: Option<Shape>,
}

#[derive(Debug)]
enum Shape {
    Object(Vec<Field>),
    ArrayOf(Box<Shape>),
}

/// Parses `{a, b: {c}, d?: [{e, …}]}`; `…` (more fields) is skipped.
fn parse_shape(text: &str) -> Shape {
    let tokens: Vec<String> = tokenize(text);
    let mut at = 0;
    let shape = parse_value(&tokens, &mut at);
    assert_eq!(at, tokens.len(), "trailing text in shape `{text}`");
    shape
}

fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    tokens
}

fn parse_value(tokens: &[String], at: &mut usize) -> Shape {
    let open = tokens[*at].as_str();
    *at += 1;
    if open == "[" {
        let inner = parse_value(tokens, at);
        assert_eq!(tokens[*at], "]", "expected ] in shape");
        *at += 1;
        return Shape::ArrayOf(Box::new(inner));
    }
    assert_eq!(open, "{", "a shape is an object or an array of one");
    let mut fields = Vec::new();
    while tokens[*at] != "}" {
        let name = tokens[*at].clone();
        *at += 1;
        let optional = tokens[*at] == "?";
        if optional {
            *at += 1;
        }
        let inner = (tokens[*at] == ":").then(|| {
            *at += 1;
            parse_value(tokens, at)
        });
        if name != "…" {
            fields.push(Field {
                name,
                optional,
                inner,
            });
        }
        if tokens[*at] == "," {
            *at += 1;
        }
    }
    *at += 1;
    Shape::Object(fields)
}

/// Every field `shape` names that `value` lacks, by path (`windows[0].bounds.x`).
fn missing(value: &Value, shape: &Shape, path: &str) -> Vec<String> {
    match shape {
        Shape::ArrayOf(item) => match value.as_array() {
            Some(items) if !items.is_empty() => items
                .iter()
                .enumerate()
                .flat_map(|(i, v)| missing(v, item, &format!("{path}[{i}]")))
                .collect(),
            _ => vec![format!("{path} (not a non-empty array: {value})")],
        },
        Shape::Object(fields) => {
            let Some(object) = value.as_object() else {
                return vec![format!("{path} (not an object: {value})")];
            };
            fields
                .iter()
                .flat_map(|f| {
                    let here = format!("{path}.{}", f.name);
                    match (object.get(&f.name), &f.inner) {
                        (None | Some(Value::Null), _) if f.optional => vec![],
                        (None, _) => vec![here],
                        (Some(v), Some(inner)) => missing(v, inner, &here),
                        (Some(_), None) => vec![],
                    }
                })
                .collect()
        }
    }
}

#[test]
fn the_shape_check_names_what_is_missing() {
    let shape = parse_shape("{a, b: {c, …}, d: [{e, f?: {g}}]}");
    let good = serde_json::json!({"a": 1, "b": {"c": 2, "z": 0}, "d": [{"e": 1, "f": null}, {"e": 2, "f": {"g": 0}}]});
    assert!(missing(&good, &shape, "").is_empty());
    let bad = serde_json::json!({"b": {"z": 0}, "d": [{"e": 1, "f": {}}, {}]});
    assert_eq!(
        missing(&bad, &shape, ""),
        [".a", ".b.c", ".d[0].f.g", ".d[1].e"]
    );
    assert_eq!(
        missing(
            &serde_json::json!({"a": 1, "b": {"c": 1}, "d": []}),
            &shape,
            ""
        ),
        [".d (not a non-empty array: [])"]
    );
}

/// A shell of the reader's: a private HOME and working directory, `cua` on PATH, and the
/// variables `eval "$(cua sandbox start)"` exported; stops what it started when dropped.
struct ReaderShell {
    dir: PathBuf,
    env: BTreeMap<String, String>,
    /// Each started sandbox's variables, to stop it (and its daemon) afterwards.
    sandboxes: Vec<BTreeMap<String, String>>,
    /// PID and WID: the last launch_app's pid and first window.
    placeholders: BTreeMap<&'static str, String>,
}

impl ReaderShell {
    fn new(name: &str) -> ReaderShell {
        let dir = std::env::temp_dir().join(format!("cua-docs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let bin = Path::new(env!("CARGO_BIN_EXE_cua")).parent().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let env = BTreeMap::from([
            ("PATH".to_string(), path),
            ("HOME".to_string(), dir.display().to_string()),
            (
                "CUA_STATE_DIR".to_string(),
                dir.join("state").display().to_string(),
            ),
        ]);
        ReaderShell {
            dir,
            env,
            sandboxes: Vec::new(),
            placeholders: BTreeMap::new(),
        }
    }

    /// `line` as bash runs it here, PID and WID replaced; fails the test unless it exits 0.
    fn run(&mut self, line: &str) -> Output {
        if line.starts_with("eval \"$(cua sandbox start") {
            let start = line.trim_start_matches("eval \"$(").trim_end_matches(")\"");
            let out = self.bash(start);
            for export in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((k, v)) = export
                    .strip_prefix("export ")
                    .and_then(|e| e.split_once('='))
                {
                    self.env.insert(k.into(), v.trim_matches('\'').into());
                }
            }
            self.sandboxes.push(self.env.clone());
            return out;
        }
        let mut command = line.to_string();
        for (name, value) in &self.placeholders {
            command = command.replace(name, value);
        }
        let out = self.bash(&command);
        if command.starts_with("cua launch_app") && command.contains("--json") {
            let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
            self.placeholders.insert("PID", reply["pid"].to_string());
            let window = reply["windows"][0]["window_id"].to_string();
            self.placeholders.insert("WID", window);
        }
        out
    }

    fn bash(&self, command: &str) -> Output {
        let out = Command::new("bash")
            .args(["-c", command])
            .current_dir(&self.dir)
            .env_clear()
            .envs(&self.env)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}` failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// `command --json` (`--json` added unless there), its output checked against `shape`.
    fn check_shape(&mut self, command: &str, shape: &str, source: &str) {
        let json_command = match command.contains("--json") {
            true => command.to_string(),
            false => format!("{command} --json"),
        };
        let out = self.run(&json_command);
        let printed: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{source}: `{json_command}` printed no JSON ({e})"));
        let lacking = missing(&printed, &parse_shape(shape), "");
        assert!(
            lacking.is_empty(),
            "{source} says `{json_command}` prints `{shape}`; it printed no {}:\n{}",
            lacking.join(", "),
            serde_json::to_string_pretty(&redacted(printed)).unwrap()
        );
    }
}

/// The output without its base64 image and its tree text, for a readable failure.
fn redacted(mut printed: Value) -> Value {
    if let Some(o) = printed.as_object_mut() {
        o.remove("screenshot_png_b64");
        o.remove("tree_markdown");
        if let Some(elements) = o.get_mut("elements").and_then(Value::as_array_mut) {
            elements.truncate(2);
        }
    }
    printed
}

impl Drop for ReaderShell {
    fn drop(&mut self) {
        for env in &self.sandboxes {
            for stop in ["cua stop", "cua sandbox stop"] {
                let _ = Command::new("bash")
                    .args(["-c", stop])
                    .env_clear()
                    .envs(env)
                    .output();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// The README's marked blocks: each line's command, and the shape its comment gives.
fn readme_commands(readme: &str) -> Vec<(String, Option<String>)> {
    let mut commands = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.trim() != MARKER {
            continue;
        }
        assert_eq!(
            lines.next().map(str::trim),
            Some("```sh"),
            "a marked block is sh"
        );
        for line in lines.by_ref().take_while(|l| l.trim() != "```") {
            let (command, comment) = line.split_once("  #").unwrap_or((line, ""));
            let shape = comment
                .split('`')
                .skip(1)
                .step_by(2)
                .find(|quoted| quoted.starts_with('{'))
                .map(str::to_string);
            if !command.trim().is_empty() {
                commands.push((command.trim().to_string(), shape));
            }
        }
    }
    commands
}

#[test]
fn the_readmes_examples_run_and_print_what_it_says() {
    let commands = readme_commands(&doc("README.md"));
    let shapes = commands.iter().filter(|(_, s)| s.is_some()).count();
    assert!(
        commands.len() >= 10 && shapes >= 2,
        "the README has {} marked commands ({shapes} with a shape): the marker moved?",
        commands.len()
    );
    let mut shell = ReaderShell::new("readme");
    for (command, shape) in &commands {
        eprintln!("$ {command}");
        shell.run(command);
        if let Some(shape) = shape {
            shell.check_shape(command, shape, "README.md");
        } else if command.starts_with("cua launch_app") {
            shell.run(&format!("{command} --json"));
        }
    }
}

/// docs/tools.md's examples: (the tool whose section holds it, command, shape).
fn tools_md_examples(tools_md: &str) -> Vec<(String, String, String)> {
    let mut examples = Vec::new();
    let mut section = String::new();
    let mut lines = tools_md.lines();
    while let Some(line) = lines.next() {
        if let Some(tool) = line.strip_prefix("## ") {
            section = tool.to_string();
        }
        if line != "```sh" {
            continue;
        }
        let command = lines.next().unwrap().to_string();
        assert_eq!(lines.next(), Some("```"), "one command per example");
        let shape = lines
            .find_map(|l| l.strip_prefix("prints `"))
            .and_then(|s| s.strip_suffix('`'))
            .expect("an example says what it prints");
        examples.push((section.clone(), command, shape.to_string()));
    }
    examples
}

#[test]
fn the_tool_docs_examples_run_and_print_what_they_say() {
    let examples = tools_md_examples(&doc("docs/tools.md"));
    assert!(
        examples.len() >= 15,
        "docs/tools.md has {} examples",
        examples.len()
    );
    let mut shell = ReaderShell::new("tools");
    shell.run("eval \"$(cua sandbox start)\"");
    let socket = shell.dir.join("daemon.sock");
    shell
        .env
        .insert("CUA_SOCKET".into(), socket.display().to_string());
    let mut serve = Command::new(env!("CARGO_BIN_EXE_cua"));
    serve.env_clear().envs(&shell.env);
    let _daemon = common::Daemon::spawn(serve, &socket);
    for (section, command, shape) in &examples {
        assert!(
            command.starts_with(&format!("cua {section} ")),
            "the example under ## {section} runs another tool: {command}"
        );
        eprintln!("$ {command}");
        shell.check_shape(command, shape, "docs/tools.md");
    }
}
