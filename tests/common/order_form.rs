//! The order form (harness/apps/order_gtk3.py, order_gtk4.py, order_qt.py and their
//! builds, order.py) driven in a sandbox of its own, for the replay suites
//! (tests/replay_mutations.rs, tests/replay_guard.rs): start a build journaling to a file,
//! find an element, replay, quit; the journal says what the app did.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cua::replay::{ReplayOptions, ReplayReport};
use cua::sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};

/// One toolkit's order form.
#[derive(Clone, Copy)]
pub struct Form {
    /// Its script in harness/apps, and its first arguments.
    pub script: &'static str,
    pub args: &'static [&'static str],
    /// GTK 4: check boxes offer no accessible action, so they are clicked in the
    /// foreground, as an agent does after the escalation.
    pub gtk4: bool,
}

/// A session on a sandbox, driving one form.
pub struct Run {
    pub session: super::Session,
    pub form: Form,
}

impl Run {
    /// A sandbox for `form`, the run on it, and an empty folder of its own named after
    /// `label` (two tests of one form in one binary do not share it).
    pub fn start(label: &str, form: Form) -> (Sandbox, Run, PathBuf) {
        let sandbox = Sandbox::start(SandboxOptions {
            width: 1280,
            height: 900,
            ..Default::default()
        })
        .expect("sandbox");
        let base = std::env::temp_dir().join(format!(
            "cua-{label}-{}-{}",
            form.script.trim_end_matches(".py"),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let run = Run {
            session: super::Session::for_desktop(sandbox.desktop()),
            form,
        };
        (sandbox, run, base)
    }

    pub fn call(&self, tool: &str, args: Value) -> Value {
        self.session.ok(tool, args)
    }

    /// The form's script.
    pub fn script_path(&self) -> String {
        format!(
            "{}/harness/apps/{}",
            env!("CARGO_MANIFEST_DIR"),
            self.form.script
        )
    }

    /// Its arguments for build `variant`, journaling to `journal`.
    pub fn app_args(&self, variant: &str, journal: &Path) -> Vec<String> {
        let mut a: Vec<String> = self.form.args.iter().map(|s| s.to_string()).collect();
        a.extend([
            "--journal".into(),
            journal.display().to_string(),
            "--variant".into(),
            variant.into(),
        ]);
        a
    }

    /// Starts the form's build `variant`, journaling to `journal`: its pid and window.
    pub fn launch(&self, variant: &str, journal: &Path) -> (Value, Value) {
        let out = self.call(
            "launch_app",
            json!({
                "path": self.script_path(),
                "additional_arguments": self.app_args(variant, journal),
                "creates_new_application_instance": true,
            }),
        );
        (out["pid"].clone(), out["windows"][0]["window_id"].clone())
    }

    /// The element of this role and name, as get_window_state lists it.
    pub fn element(&self, pid: &Value, window: &Value, role: &str, name: &str) -> Value {
        self.session
            .element(pid, window, |e| e["role"] == role && e["name"] == name)
    }

    pub fn replay(&self, dir: &Path, opts: &ReplayOptions) -> ReplayReport {
        self.session.replay(dir, opts)
    }

    /// Ends the app and waits until its window is gone.
    pub fn quit(&self, pid: &Value) {
        let raw = pid.as_i64().unwrap() as i32;
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(raw),
            nix::sys::signal::Signal::SIGTERM,
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.call("list_windows", json!({}))["windows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["pid"] == raw)
        {
            assert!(Instant::now() < deadline, "the form did not quit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Every widget a form's journal says was clicked, in order.
pub fn clicks(journal: &Path) -> Vec<String> {
    super::journal(journal)
        .iter()
        .filter(|e| e["event"] == "clicked")
        .map(|e| e["widget"].as_str().unwrap_or("").to_string())
        .collect()
}
