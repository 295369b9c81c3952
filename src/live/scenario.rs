//! "Save as scenario": the live recording as `harness/<name>.toml`, a scenario that replays
//! it on the app it launched, at the recording's screen and window size, ready for
//! `cua test <name> --update`.

use std::path::{Path, PathBuf};

/// The app `--app` named: a launch_app name, or a program's path (absolute).
#[derive(Debug, Clone)]
pub enum App {
    Name(String),
    Path(PathBuf),
}

impl App {
    /// `--app`'s value: a path when it names a file (it has a `/`), else a name.
    pub fn from_arg(arg: &str) -> Result<App, String> {
        if !arg.contains('/') {
            return Ok(App::Name(arg.to_string()));
        }
        let path = std::path::absolute(arg).map_err(|e| format!("--app {arg}: {e}"))?;
        if !path.is_file() {
            return Err(format!("--app {arg}: no such file (a name has no `/`)"));
        }
        Ok(App::Path(path))
    }

    /// launch_app's arguments for it.
    pub fn launch_args(&self) -> serde_json::Value {
        match self {
            App::Name(name) => serde_json::json!({ "name": name }),
            App::Path(path) => serde_json::json!({ "path": path }),
        }
    }

    fn shown(&self) -> String {
        match self {
            App::Name(name) => name.clone(),
            App::Path(path) => path.display().to_string(),
        }
    }
}

/// What a scenario of this recording says.
pub struct Recorded {
    /// The trajectory's folder.
    pub dir: PathBuf,
    /// The folder of scenario files (its parent is the project root).
    pub harness: PathBuf,
    pub app: App,
    /// The app's first window: its title when launched, and its id.
    pub window_title: String,
    pub window_id: u64,
    pub screen: (u32, u32),
}

/// Writes `<harness>/<name>.toml`, pinning the window at `window_size` (its screenshot's
/// size now: a first layout may differ by a few pixels, and the window's minimum size
/// holds it there); never over an existing file. The path written.
pub fn save(r: &Recorded, name: &str, window_size: (u32, u32)) -> Result<PathBuf, String> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(format!(
            "`name`: {name:?} is not a scenario name (letters, digits, - and _)"
        ));
    }
    let file = r.harness.join(format!("{name}.toml"));
    if file.exists() {
        return Err(format!(
            "{} exists already: pick another name (a scenario is never overwritten)",
            file.display()
        ));
    }
    std::fs::create_dir_all(&r.harness)
        .map_err(|e| format!("creating {}: {e}", r.harness.display()))?;
    let toml = scenario_toml(r, window_size);
    let tmp = file.with_extension("toml.tmp");
    std::fs::write(&tmp, toml)
        .and_then(|()| std::fs::rename(&tmp, &file))
        .map_err(|e| format!("writing {}: {e}", file.display()))?;
    Ok(file)
}

fn scenario_toml(r: &Recorded, window_size: (u32, u32)) -> String {
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    let launch = match &r.app {
        App::Name(name) => format!("name = {}", quoted(name)),
        App::Path(path) => format!("path = {}", quoted(&relative_to_root(path, &r.harness))),
    };
    format!(
        "description = {}\ntrajectory = {}\nscreen = \"{}x{}\"\n\n[app]\n{launch}\nwindow = {}\nsize = \"{}x{}\"\n",
        quoted(&format!(
            "{}: recorded by doing (cua record --live)",
            r.app.shown()
        )),
        quoted(&relative_to_root(&r.dir, &r.harness)),
        r.screen.0,
        r.screen.1,
        quoted(&r.window_title),
        window_size.0,
        window_size.1,
    )
}

/// `dir` as a scenario names a trajectory or an app's program: relative to the project
/// root (the harness folder's parent) when inside it, else absolute.
fn relative_to_root(dir: &Path, harness: &Path) -> String {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let root = absolute(harness)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let dir = absolute(dir);
    dir.strip_prefix(&root)
        .map(Path::to_path_buf)
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(root: &Path) -> Recorded {
        Recorded {
            dir: root.join("trajectories/calc"),
            harness: root.join("harness"),
            app: App::Name("Calculator".into()),
            window_title: "Calc \"x\"".into(),
            window_id: 7,
            screen: (1280, 800),
        }
    }

    #[test]
    fn a_scenario_names_its_trajectory_from_the_root_and_is_never_overwritten() {
        let root = std::env::temp_dir().join(format!("cua-live-save-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let r = recorded(&root);
        let file = save(&r, "calc-live", (365, 496)).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let spec: crate::harness::ScenarioFile = toml::from_str(&text).unwrap();
        assert_eq!(spec.trajectory.as_deref(), Some("trajectories/calc"));
        assert_eq!(spec.app.window.as_deref(), Some("Calc \"x\""));
        assert_eq!(spec.app.size.as_deref(), Some("365x496"));
        assert_eq!(spec.screen.as_deref(), Some("1280x800"));
        let again = save(&r, "calc-live", (365, 496)).unwrap_err();
        assert!(again.contains("exists already"), "{again}");
        assert!(save(&r, "../up", (1, 1)).unwrap_err().contains("`name`"));
        // A program's path is named from the root, as a scenario's `path` is.
        let program = Recorded {
            app: App::Path(root.join("harness/apps/fixture.py")),
            ..recorded(&root)
        };
        let text = std::fs::read_to_string(save(&program, "fixture-live", (1, 1)).unwrap());
        let spec: crate::harness::ScenarioFile = toml::from_str(&text.unwrap()).unwrap();
        assert_eq!(spec.app.path.as_deref(), Some("harness/apps/fixture.py"));
        assert_eq!(spec.app.name, None);
        let _ = std::fs::remove_dir_all(&root);
    }
}
