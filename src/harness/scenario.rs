//! A scenario file (`harness/<name>.toml`) read and checked before anything runs: its
//! TOML, the app, each step's tool, arguments (against the tool's schema) and target
//! role (against the role vocabulary), and the diff config. A mistake is bad input (exit
//! 2) named by file, line and field, with the closest valid name when there is one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};
use toml::Spanned;

/// How long, by default, a scenario waits for its app's window and its steps' elements (a
/// browser's cold start on a loaded 2-core machine takes several seconds).
const DEFAULT_TIMEOUT_S: u64 = 30;

use crate::diff::DiffConfig;
use crate::tools::ToolRegistry;

/// `harness/<name>.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default)]
    pub description: String,
    pub app: AppSpec,
    /// Screen size of the scenario's sandbox, `WIDTHxHEIGHT` (default 1280x800).
    pub screen: Option<String>,
    /// The display servers it runs on, each run against the one golden (default
    /// `["x11"]`); the first one's run is what `--update` makes the golden.
    pub backends: Option<Vec<crate::sandbox::Backend>>,
    /// Display servers whose runs are compared with a golden of their own,
    /// `goldens/<scenario>@<backend>`, made by `--update` from that backend's run: for a
    /// desktop that draws the app differently (GNOME draws GTK 3's title bar inside the
    /// window) or sends some input differently (a step escalated to the foreground).
    #[serde(default)]
    pub own_goldens: Vec<crate::sandbox::Backend>,
    /// Seconds the app's window, and each step's target, may take to show (default 30).
    pub timeout: Option<u64>,
    /// Milliseconds a turn's window may take to hold still before its after-state is taken
    /// anyway, as `unsettled` (default 2000).
    pub settle_timeout_ms: Option<u64>,
    /// A turn whose app took longer than this (milliseconds from the action to the settled
    /// window) fails as too slow; none by default.
    pub max_turn_ms: Option<u64>,
    /// A recorded trajectory to replay (relative to the project root)...
    pub trajectory: Option<String>,
    /// ... or inline tool calls.
    #[serde(default)]
    pub step: Vec<Step>,
    #[serde(default)]
    pub diff: DiffConfig,
}

impl ScenarioFile {
    /// The display servers it runs on, in its order (`["x11"]` when it names none).
    fn listed_backends(&self) -> Vec<crate::sandbox::Backend> {
        self.backends
            .clone()
            .unwrap_or_else(|| vec![crate::sandbox::Backend::X11])
    }
}

/// The app a scenario launches (through launch_app).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    /// An app name, desktop id or program (launch_app `name`)...
    pub name: Option<String>,
    /// ... or an executable relative to the project root (launch_app `path`).
    pub path: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Files or URLs handed to the app; relative paths are taken from the project root.
    #[serde(default)]
    pub urls: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Substring of the window title to wait for before the steps start.
    pub window: Option<String>,
    /// Window size to pin, `WIDTHxHEIGHT` in screenshot pixels, for apps whose first
    /// layout varies between launches (gnome-calculator's does by 12 px).
    pub size: Option<String>,
}

/// One inline tool call. `pid` and `window_id` are filled in with the app's; `target`
/// (role and name) is resolved to an `element_index` in a fresh snapshot.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub tool: String,
    #[serde(default)]
    pub args: Option<Value>,
    pub target: Option<TargetSpec>,
    /// `false` for a step meant to change nothing: its turn may then come back
    /// `suspected_noop` (or escalate) without failing the run. Default true.
    pub expect_effect: Option<bool>,
}

/// The element a step acts on: role and exact name; `nth` (from 0, in tree order) picks
/// among several that match.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    pub role: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub nth: usize,
}

/// A scenario, read and checked.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file's name, with `@<backend>` after it for a run on another backend than the
    /// file's first (`fixture@wayland`): names the run and its report.
    pub name: String,
    /// The golden this run is compared with: the file's name, shared by the runs on every
    /// backend, or `<name>@<backend>` for a backend with a golden of its own.
    pub golden: String,
    /// The display server this run uses.
    pub backend: crate::sandbox::Backend,
    /// Whether this run's recording may become its golden (`--update`): the run on the
    /// file's first backend, or on a backend with a golden of its own.
    pub makes_golden: bool,
    pub file: PathBuf,
    pub root: PathBuf,
    pub spec: ScenarioFile,
    pub screen: (u32, u32),
    /// The line of each `[[step]]` table in the file.
    pub step_lines: Vec<usize>,
}

impl Scenario {
    /// One run of the scenario a backend, in the order the file lists them; with `only`,
    /// one run on that backend whatever the file lists.
    pub fn per_backend(self, only: Option<crate::sandbox::Backend>) -> Vec<Scenario> {
        let listed = self.spec.listed_backends();
        let first = listed[0];
        let backends = match only {
            Some(b) => vec![b],
            None => listed,
        };
        backends
            .into_iter()
            .map(|backend| {
                let suffixed = format!("{}@{}", self.golden, backend.name());
                let own = self.spec.own_goldens.contains(&backend);
                Scenario {
                    name: if backend == first {
                        self.golden.clone()
                    } else {
                        suffixed.clone()
                    },
                    golden: if own { suffixed } else { self.golden.clone() },
                    backend,
                    makes_golden: backend == first || own,
                    ..self.clone()
                }
            })
            .collect()
    }

    /// How long the app's window, and each step's target, may take to show.
    pub fn ready_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.spec.timeout.unwrap_or(DEFAULT_TIMEOUT_S))
    }

    /// How long a turn's window may take to hold still (`settle_timeout_ms`).
    pub fn settle_timeout(&self) -> std::time::Duration {
        self.spec
            .settle_timeout_ms
            .map(std::time::Duration::from_millis)
            .unwrap_or(crate::recording::stable::TIMEOUT)
    }

    /// `step N (file:line)`, as errors and reports name a step (N from 1).
    pub fn step_label(&self, index: usize) -> String {
        match self.step_lines.get(index) {
            Some(line) => format!("step {} ({}:{line})", index + 1, self.file.display()),
            None => format!("step {}", index + 1),
        }
    }
}

impl Scenario {
    /// Reads and validates `harness/<name>.toml`; errors name the file, line and field.
    pub fn load(file: &Path) -> Result<Scenario, String> {
        let label = file.display().to_string();
        let text = std::fs::read_to_string(file).map_err(|e| format!("{label}: {e}"))?;
        let spec: ScenarioFile = toml::from_str(&text).map_err(|e| format!("{label}: {e}"))?;
        spec.diff
            .validate()
            .map_err(|e| format!("{label}: [diff] {e}"))?;
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let root = file
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let root = if root.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            root
        };
        if spec.app.name.is_some() == spec.app.path.is_some() {
            return Err(format!(
                "{label}: [app] give exactly one of `name` and `path`"
            ));
        }
        match (&spec.trajectory, spec.step.is_empty()) {
            (Some(_), false) => {
                return Err(format!(
                    "{label}: give `trajectory` or `[[step]]` tables, not both"
                ));
            }
            (None, true) => {
                return Err(format!(
                    "{label}: no steps: give `trajectory = \"trajectories/...\"` or `[[step]]` tables"
                ));
            }
            _ => {}
        }
        if let Some(t) = &spec.trajectory {
            let dir = root.join(t);
            crate::replay::turn_dirs(&dir).map_err(|e| format!("{label}: `trajectory`: {e}"))?;
        }
        let step_lines = check_steps(&label, &text, &spec.step)?;
        if spec.timeout == Some(0) {
            return Err(format!("{label}: `timeout`: give seconds, at least 1"));
        }
        if let Some(p) = &spec.app.path {
            if !root.join(p).is_file() {
                return Err(format!(
                    "{label}: `app.path`: {} does not exist",
                    root.join(p).display()
                ));
            }
        }
        if let Some(size) = &spec.app.size {
            crate::sandbox::parse_size(size).map_err(|e| format!("{label}: `app.size`: {e}"))?;
        }
        let screen = match &spec.screen {
            None => (1280, 800),
            Some(s) => {
                crate::sandbox::parse_size(s).map_err(|e| format!("{label}: `screen`: {e}"))?
            }
        };
        if spec.backends.as_ref().is_some_and(Vec::is_empty) {
            return Err(format!(
                "{label}: `backends`: name at least one (\"x11\", \"wayland\", \"gnome\", \"kde\")"
            ));
        }
        let first = spec.listed_backends()[0];
        if spec.own_goldens.contains(&first) {
            return Err(format!(
                "{label}: `own_goldens`: {} is the first backend, whose run makes the shared golden; list the others",
                first.name()
            ));
        }
        Ok(Scenario {
            golden: name.clone(),
            name,
            backend: crate::sandbox::Backend::X11,
            makes_golden: true,
            file: file.to_path_buf(),
            root,
            spec,
            screen,
            step_lines,
        })
    }
}

/// Where each step and its fields start in the file (the steps as written, read again
/// with their positions).
#[derive(Deserialize)]
struct Positions {
    #[serde(default)]
    step: Vec<Spanned<StepPositions>>,
}

#[derive(Deserialize)]
struct StepPositions {
    tool: Option<Spanned<toml::Value>>,
    args: Option<Spanned<toml::Value>>,
    target: Option<Spanned<TargetPositions>>,
}

#[derive(Deserialize)]
struct TargetPositions {
    role: Option<Spanned<toml::Value>>,
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Each step's tool (known, an action), its arguments (the tool's schema, with what the
/// run fills in: pid, window_id, and element_index for a target) and its target role
/// (the role vocabulary). Steps count from 1, as a reader counts the `[[step]]` tables.
fn check_steps(label: &str, text: &str, steps: &[Step]) -> Result<Vec<usize>, String> {
    let positions: Positions = toml::from_str(text).map_err(|e| format!("{label}: {e}"))?;
    let registry = ToolRegistry::new();
    let roles = crate::platform::role_vocabulary();
    let mut lines = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let at = positions.step.get(i);
        let line = |field: Option<std::ops::Range<usize>>| {
            let start = field
                .or_else(|| at.map(Spanned::span))
                .map(|r| r.start)
                .unwrap_or(0);
            line_of(text, start)
        };
        lines.push(line(None));
        let fields = at.map(Spanned::get_ref);
        let where_ = |field: &str, span: Option<std::ops::Range<usize>>| {
            format!("{label}:{}: step {} `{field}`", line(span), i + 1)
        };
        let tool_at = fields.and_then(|f| f.tool.as_ref()).map(Spanned::span);
        let tool = registry
            .get(&step.tool)
            .map_err(|e| format!("{}: {e}", where_("tool", tool_at.clone())))?;
        if tool.read_only() {
            return Err(format!(
                "{}: {} only observes; steps are actions",
                where_("tool", tool_at),
                step.tool
            ));
        }
        let args_at = fields.and_then(|f| f.args.as_ref()).map(Spanned::span);
        let mut args = match &step.args {
            None => json!({}),
            Some(a) if a.is_object() => a.clone(),
            Some(_) => return Err(format!("{}: must be a table", where_("args", args_at))),
        };
        // What the run fills in, so the check sees the call as it will be made.
        let schema = tool.input_schema();
        let takes = |k: &str| schema["properties"].get(k).is_some();
        let mut filled = vec![("pid", json!(1)), ("window_id", json!(1))];
        if step.target.is_some() {
            filled.push(("element_index", json!(0)));
        }
        for (k, v) in filled {
            if takes(k) && args.get(k).is_none() {
                args[k] = v;
            }
        }
        tool.validate(&args)
            .map_err(|e| format!("{}: {e}", where_("args", args_at.clone())))?;
        if !tool.acts(&args) {
            return Err(format!(
                "{}: this {} call only observes; steps are actions",
                where_("args", args_at),
                step.tool
            ));
        }
        if let Some(target) = &step.target {
            let role_at = fields
                .and_then(|f| f.target.as_ref())
                .and_then(|t| t.get_ref().role.as_ref())
                .map(Spanned::span);
            if !takes("element_index") {
                return Err(format!(
                    "{}: {} does not act on an element",
                    where_("target", role_at),
                    step.tool
                ));
            }
            if !roles.contains(&target.role) {
                let hint =
                    crate::suggest::did_you_mean(&target.role, roles.iter().map(String::as_str));
                return Err(format!(
                    "{}: no role `{}`{hint} (docs/roles.md lists them)",
                    where_("target.role", role_at),
                    target.role
                ));
            }
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(steps: &str) -> Result<(), String> {
        let text = format!("[app]\nname = \"x\"\n{steps}");
        let spec: ScenarioFile = toml::from_str(&text).map_err(|e| e.to_string())?;
        check_steps("s.toml", &text, &spec.step).map(|_| ())
    }

    #[test]
    fn the_shipped_scenarios_read_clean() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
        for file in super::super::discover(&dir).unwrap() {
            Scenario::load(&file).unwrap();
        }
    }

    #[test]
    fn the_scenario_in_the_docs_reads_clean() {
        let doc = include_str!("../../docs/harness.md");
        let start = doc
            .find("```toml\ndescription")
            .expect("a scenario in docs/harness.md")
            + 8;
        let text = &doc[start..start + doc[start..].find("```").unwrap()];
        let dir = std::env::temp_dir().join(format!("cua-doc-scenario-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("harness")).unwrap();
        let file = dir.join("harness/doc.toml");
        std::fs::write(&file, text).unwrap();
        let loaded = Scenario::load(&file);
        let _ = std::fs::remove_dir_all(&dir);
        let scenario = loaded.unwrap();
        assert_eq!(scenario.spec.diff.mask.len(), 1);
        assert_eq!(scenario.step_lines.len(), 2);
    }

    #[test]
    fn a_backend_with_its_own_golden_is_compared_with_and_updates_that_golden() {
        use crate::sandbox::Backend;
        let dir = std::env::temp_dir().join(format!("cua-own-goldens-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("harness")).unwrap();
        let file = dir.join("harness/form.toml");
        let write = |top: &str| {
            let steps =
                "[app]\nname = \"x\"\n[[step]]\ntool = \"press_key\"\nargs = { key = \"a\" }\n";
            std::fs::write(&file, format!("{top}\n{steps}")).unwrap();
            Scenario::load(&file)
        };
        let runs = write("backends = [\"x11\", \"wayland\", \"gnome\"]\nown_goldens = [\"gnome\"]")
            .unwrap()
            .per_backend(None);
        let named: Vec<(&str, &str, bool)> = runs
            .iter()
            .map(|r| (r.name.as_str(), r.golden.as_str(), r.makes_golden))
            .collect();
        assert_eq!(
            named,
            [
                ("form", "form", true),
                ("form@wayland", "form", false),
                ("form@gnome", "form@gnome", true)
            ]
        );
        // `--backend gnome` alone still uses GNOME's golden.
        let only = write("own_goldens = [\"gnome\"]")
            .unwrap()
            .per_backend(Some(Backend::Gnome));
        assert_eq!(only[0].golden, "form@gnome");
        let e = write("backends = [\"gnome\"]\nown_goldens = [\"gnome\"]").unwrap_err();
        assert!(
            e.contains("`own_goldens`: gnome is the first backend"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn steps_are_checked_when_read_naming_line_field_and_closest_name() {
        let ok = "[[step]]\ntool = \"click\"\ntarget = { role = \"check_box\", name = \"Tax\" }\n";
        check(ok).unwrap();
        let e = check(
            "[[step]]\ntool = \"click\"\nargs = { x = 1, y = 1 }\n[[step]]\ntool = \"clik\"\n",
        )
        .unwrap_err();
        assert!(
            e.starts_with("s.toml:7: step 2 `tool`: unknown tool `clik`; did you mean `click`?"),
            "{e}"
        );
        let e =
            check("[[step]]\ntool = \"click\"\ntarget = { role = \"checkbox\", name = \"Tax\" }\n")
                .unwrap_err();
        assert_eq!(
            e,
            "s.toml:5: step 1 `target.role`: no role `checkbox`; did you mean `check_box`? (docs/roles.md lists them)"
        );
        let e = check("[[step]]\ntool = \"type_text\"\nargs = { txt = \"a\" }\n").unwrap_err();
        assert!(
            e.starts_with("s.toml:5: step 1 `args`: invalid arguments:") && e.contains("txt"),
            "{e}"
        );
        // What the tool checks beyond types, when read: a key name.
        let e = check("[[step]]\ntool = \"press_key\"\nargs = { key = \"retrun\" }\n").unwrap_err();
        assert!(
            e.starts_with("s.toml:5: step 1 `args`:") && e.contains("did you mean `return`?"),
            "{e}"
        );
        // A click with nothing to click: no target, no element, no point.
        let e = check("[[step]]\ntool = \"click\"\n").unwrap_err();
        assert!(e.contains("give `element_index`"), "{e}");
        let e = check("[[step]]\ntool = \"get_window_state\"\n").unwrap_err();
        assert!(e.contains("only observes"), "{e}");
        let e = check("[[step]]\ntool = \"move_cursor\"\ntarget = { role = \"button\" }\nargs = { x = 1, y = 1 }\n").unwrap_err();
        assert!(e.contains("does not act on an element"), "{e}");
    }
}
