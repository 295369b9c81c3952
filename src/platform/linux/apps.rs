//! Installed applications (XDG desktop entries), and launching them.
//!
//! Launching resolves a name, desktop id or path to a command line, adds the flags some
//! apps need (browsers, LibreOffice: see `families`), and starts the process in its
//! own process group so the sandbox can end it by pid.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::families::Family;
use super::process::{basename, process_command_name, process_executable};
use crate::desktop::{AppHome, Backend};
use crate::platform::{InstalledApp, LaunchRequest, PlatformError, PlatformResult};

/// One parsed `.desktop` file.
#[derive(Debug, Clone)]
pub struct DesktopEntry {
    pub id: String,
    pub name: String,
    pub exec: String,
    pub startup_wm_class: Option<String>,
    /// NoDisplay=true: launchable, but not listed as an installed app.
    pub hidden: bool,
}

impl DesktopEntry {
    /// The program the entry runs (basename, without arguments).
    pub fn program(&self) -> String {
        exec_words(&self.exec)
            .first()
            .map(|w| basename(w))
            .unwrap_or_default()
    }
}

fn application_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let home_data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    dirs.extend(home_data);
    let data_dirs = std::env::var("XDG_DATA_DIRS")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    dirs.extend(data_dirs.split(':').map(PathBuf::from));
    dirs.into_iter().map(|d| d.join("applications")).collect()
}

/// Every visible desktop entry, first definition of an id wins (XDG precedence).
pub fn desktop_entries() -> Vec<DesktopEntry> {
    let mut seen: HashMap<String, DesktopEntry> = HashMap::new();
    let mut order = Vec::new();
    for dir in application_dirs() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
        files.sort();
        for path in files {
            if path.extension().and_then(|e| e.to_str()) != Some("desktop") {
                continue;
            }
            let id = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if seen.contains_key(&id) {
                continue;
            }
            if let Some(entry) = parse_desktop_file(&path, &id) {
                order.push(id.clone());
                seen.insert(id, entry);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|id| seen.remove(&id))
        .collect()
}

fn parse_desktop_file(path: &Path, id: &str) -> Option<DesktopEntry> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut in_main = false;
    let mut fields: HashMap<&str, &str> = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_main = line == "[Desktop Entry]";
            continue;
        }
        if !in_main {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            fields.entry(k.trim()).or_insert(v.trim());
        }
    }
    if fields.get("Type") != Some(&"Application") || fields.get("Hidden") == Some(&"true") {
        return None;
    }
    Some(DesktopEntry {
        id: id.to_string(),
        name: fields.get("Name")?.to_string(),
        exec: fields.get("Exec")?.to_string(),
        startup_wm_class: fields.get("StartupWMClass").map(|s| s.to_string()),
        hidden: fields.get("NoDisplay") == Some(&"true"),
    })
}

/// Splits an Exec line into words, honouring double quotes, dropping field codes.
fn exec_words(exec: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = exec.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
        .into_iter()
        .filter(|w| !(w.len() == 2 && w.starts_with('%')))
        .collect()
}

pub fn installed_apps() -> Vec<InstalledApp> {
    desktop_entries()
        .into_iter()
        .filter(|e| !e.hidden)
        .map(|e| InstalledApp {
            name: e.name,
            desktop_id: e.id,
            exec: e.exec,
        })
        .collect()
}

/// A human name for a process: its desktop entry's Name when one runs this program.
pub fn display_name(pid: u32, wm_class: &str, entries: &[DesktopEntry]) -> String {
    let exe = process_executable(pid).unwrap_or_default();
    let cmd = process_command_name(pid).unwrap_or_default();
    // Best match first: the window class the entry declares, then an entry that runs the
    // program bare, then one that runs it with arguments (`mousepad --preferences`).
    let rank = |e: &DesktopEntry| -> Option<u8> {
        if !wm_class.is_empty()
            && e.startup_wm_class
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case(wm_class))
        {
            return Some(0);
        }
        let prog = e.program();
        if prog.is_empty() || (prog != exe && prog != cmd) {
            return None;
        }
        Some(if exec_words(&e.exec).len() == 1 {
            1 + e.hidden as u8
        } else {
            3 + e.hidden as u8
        })
    };
    entries
        .iter()
        .filter_map(|e| rank(e).map(|r| (r, e)))
        .min_by_key(|(r, _)| *r)
        .map(|(_, e)| e.name.clone())
        .unwrap_or_else(|| {
            if wm_class.is_empty() {
                exe
            } else {
                wm_class.to_string()
            }
        })
}

/// A resolved command line ready to spawn.
#[derive(Debug, Clone)]
pub struct LaunchPlan {
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
    /// Started through this page relay, which starts the program itself and holds its
    /// debugging endpoint in this way.
    pub relay: Option<(PathBuf, crate::platform::page_relay::Mode)>,
}

/// `scratch` holds per-launch state (a browser's private profile): the sandbox's folder when
/// there is one, so it goes away with the sandbox.
pub fn plan_launch(
    req: &LaunchRequest,
    scratch: &Path,
    backend: Backend,
) -> PlatformResult<LaunchPlan> {
    let (name, words) = if let Some(path) = &req.path {
        let p = crate::files::expand_home(path);
        if !p.exists() {
            return Err(PlatformError::Launch(format!(
                "path `{}` does not exist",
                p.display()
            )));
        }
        (
            basename(&p.to_string_lossy()),
            vec![p.to_string_lossy().into_owned()],
        )
    } else {
        let entries = desktop_entries();
        let entry = if let Some(id) = &req.desktop_id {
            let id = id.trim_end_matches(".desktop");
            entries.iter().find(|e| e.id == id).ok_or_else(|| {
                PlatformError::Launch(format!("no desktop entry `{id}` (run list_apps)"))
            })?
        } else if let Some(name) = &req.name {
            let lower = name.to_lowercase();
            let found = entries
                .iter()
                .find(|e| e.name.to_lowercase() == lower)
                .or_else(|| entries.iter().find(|e| e.id.to_lowercase() == lower))
                .or_else(|| entries.iter().find(|e| e.program().to_lowercase() == lower))
                .or_else(|| {
                    entries
                        .iter()
                        .find(|e| e.id.to_lowercase().ends_with(&format!(".{lower}")))
                });
            match found {
                Some(e) => e,
                // A program on PATH with no desktop entry still launches by name.
                None if !name.contains('/') && find_on_path(name).is_some() => {
                    return plan_from_words(
                        name.clone(),
                        vec![name.clone()],
                        req,
                        scratch,
                        backend,
                    );
                }
                None => {
                    return Err(PlatformError::Launch(format!(
                        "no installed app named `{name}` (run list_apps for names, or pass path)"
                    )));
                }
            }
        } else {
            return Err(PlatformError::Launch(
                "give one of name, desktop_id or path".into(),
            ));
        };
        (entry.name.clone(), exec_words(&entry.exec))
    };
    plan_from_words(name, words, req, scratch, backend)
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn plan_from_words(
    name: String,
    mut words: Vec<String>,
    req: &LaunchRequest,
    scratch: &Path,
    backend: Backend,
) -> PlatformResult<LaunchPlan> {
    if words.is_empty() {
        return Err(PlatformError::Launch(format!(
            "`{name}` has an empty command line"
        )));
    }
    let program = words.remove(0);
    let mut args = words;
    let family = Family::of(&program);
    let mut relay = None;
    if let Some(f) = family {
        let flags = f.flags(&req.additional_arguments, scratch, backend)?;
        args.extend(flags.args);
        relay = flags.relay;
    }
    args.extend(req.additional_arguments.iter().cloned());
    args.extend(req.urls.iter().cloned());
    if family.is_some_and(Family::is_browser) && req.urls.is_empty() {
        // Without a URL some browser builds start with no window, or with a start page
        // that reaches for the network.
        args.push("about:blank".into());
    }
    Ok(LaunchPlan {
        name,
        program,
        args,
        relay,
    })
}

/// Starts the plan in a new process group with the accessibility bridge enabled; in a
/// sandbox with a home of its own for this launch unless `shared_home`. Returns its pid
/// and, in a sandbox, that home.
pub fn spawn(
    plan: &LaunchPlan,
    desktop: &crate::platform::DesktopEnv,
    shared_home: bool,
) -> PlatformResult<(u32, Option<AppHome>)> {
    use std::os::unix::process::CommandExt;
    let home = match &desktop.sandbox_dir {
        Some(dir) => {
            // A sandbox started by an older cua, or whose folders were cleaned, still gets
            // its shared folders (the runtime folder every launch shares among them).
            let home = crate::desktop::prepare_app_homes(dir).and_then(|()| match shared_home {
                true => Ok(AppHome::shared(dir)),
                false => AppHome::fresh(dir),
            });
            Some(home.map_err(|e| PlatformError::Launch(format!("sandbox app folders: {e}")))?)
        }
        None => None,
    };
    let mut cmd = match &plan.relay {
        Some((relay, mode)) => {
            let mut cmd = Command::new(relay);
            cmd.arg(mode.arg())
                .arg(crate::platform::page_relay::socket_dir())
                .arg(&plan.program);
            cmd
        }
        None => Command::new(&plan.program),
    };
    cmd.args(&plan.args)
        .envs(desktop.app_env_at(home.as_ref()))
        .env_remove("NO_AT_BRIDGE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    // In a sandbox the app's output is kept in its folder (the only place cua writes to):
    // an app that dies on start says why there.
    let log = desktop
        .sandbox_dir
        .as_deref()
        .and_then(|dir| AppLog::create(dir, &plan.program));
    if let Some(log) = &log {
        if let Ok(out) = log.file.try_clone() {
            cmd.stdout(out);
        }
        if let Ok(err) = log.file.try_clone() {
            cmd.stderr(err);
        }
    }
    let child = cmd
        .spawn()
        .map_err(|e| PlatformError::Launch(format!("cannot start `{}`: {e}", plan.program)))?;
    let pid = child.id();
    if let Some(log) = log {
        log.name_after(pid);
    }
    // Reap it in the background so it never lingers as a zombie of ours; how it ended is
    // kept for a launch that fails.
    std::thread::spawn(move || {
        let mut child = child;
        if let Ok(status) = child.wait() {
            EXITS.0.lock().unwrap().insert(pid, status);
            EXITS.1.notify_all();
        }
    });
    if let Some(dir) = &desktop.sandbox_dir {
        crate::desktop::register_pid(dir, pid);
    }
    Ok((pid, home))
}

/// How launched processes ended, by pid (kept for the launch's error message), and a
/// signal for each one noted.
type Exits = (
    std::sync::Mutex<HashMap<u32, std::process::ExitStatus>>,
    std::sync::Condvar,
);
static EXITS: std::sync::LazyLock<Exits> = std::sync::LazyLock::new(Default::default);

/// How a process this launcher started has ended, in words, waiting up to `wait` for its
/// reaper to note it; None while it runs.
pub fn how_it_ended(pid: u32, wait: std::time::Duration) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let (exits, noted) = &*EXITS;
    let exits = noted
        .wait_timeout_while(exits.lock().unwrap(), wait, |e| !e.contains_key(&pid))
        .ok()?
        .0;
    let status = *exits.get(&pid)?;
    Some(match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => "ended".into(),
    })
}

/// Where a launched app's output goes in a sandbox: `app-logs/<program>-<pid>.log`.
struct AppLog {
    file: std::fs::File,
    path: PathBuf,
}

impl AppLog {
    fn create(sandbox: &Path, program: &str) -> Option<AppLog> {
        let dir = app_log_dir(sandbox);
        std::fs::create_dir_all(&dir).ok()?;
        // Named after the pid once there is one.
        let path = dir.join(format!(
            ".{}-starting-{}",
            basename(program),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let file = std::fs::File::create(&path).ok()?;
        Some(AppLog { file, path })
    }

    fn name_after(self, pid: u32) {
        let name = self
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix('.')?.split_once("-starting-"))
            .map(|(program, _)| format!("{program}-{pid}.log"));
        if let Some(name) = name {
            let _ = std::fs::rename(&self.path, self.path.with_file_name(name));
        }
    }
}

fn app_log_dir(sandbox: &Path) -> PathBuf {
    sandbox.join("app-logs")
}

/// The last lines a sandboxed app printed, and where its whole output is.
pub fn output_tail(sandbox: &Path, program: &str, pid: u32) -> Option<(String, PathBuf)> {
    let path = app_log_dir(sandbox).join(format!("{}-{pid}.log", basename(program)));
    let text = std::fs::read_to_string(&path).ok()?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    Some((tail, path))
}
