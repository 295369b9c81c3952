//! Letting a person's own GNOME or KDE session in (`cua permissions grant|revoke gnome|kde`):
//! what each desktop reads before it trusts a program with its windows, pixels and input,
//! written and removed. Neither desktop has a consent dialog for this; each trusts what its
//! user installed:
//!
//! - KDE's KWin gives its window list, fake input and screenshots to an executable that a
//!   `.desktop` file names with `X-KDE-Wayland-Interfaces` and
//!   `X-KDE-DBUS-Restricted-Interfaces` (as it does for Spectacle and KRfb). KWin rereads
//!   the desktop files within seconds: no new login.
//! - GNOME Shell lets only code inside it list windows, take screenshots and send input:
//!   cua's Shell extension, installed into the user's extensions and enabled in
//!   `org.gnome.shell enabled-extensions`. On Wayland the shell loads a new extension only
//!   at login. Outside cua's sandbox the extension answers only the executables listed
//!   beside it (this cua's, written here).
//!
//! Every file is written whole (a temporary file renamed into place), so a crash leaves
//! the old file or the new, never half of one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::desktop::{Backend, DesktopEnv};

/// KWin's desktop file for cua, in the user's applications folder.
const KDE_DESKTOP_FILE: &str = "cua.desktop";
/// What KWin gives the executable the desktop file names.
const KWIN_INTERFACES: &str = "org_kde_plasma_window_management,org_kde_kwin_fake_input";
const KWIN_DBUS_INTERFACES: &str = "org.kde.KWin.ScreenShot2";
/// How long `grant kde` waits for a running KWin to reread the desktop files.
const KWIN_REREAD_WAIT: Duration = Duration::from_secs(20);
/// The file beside cua's extension that lists the executables it answers outside the
/// sandbox, one path a line.
pub const ALLOWED_CALLERS: &str = "allowed-callers";
/// The GNOME Shell versions cua's extension is written for (the `imports` module style
/// that GNOME 45 removed).
const GNOME_VERSIONS: &[u32] = &[43, 44];

/// The desktops whose own sessions cua can be let into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desktop {
    Gnome,
    Kde,
}

/// What was done, one line a step, for the person to read.
pub type Steps = Vec<String>;

/// Writes what `desktop` reads to trust this cua, and says whether it took effect.
pub fn grant(desktop: Desktop) -> Result<Steps, String> {
    let cua = this_executable()?;
    match desktop {
        Desktop::Kde => enable_kde(&cua),
        Desktop::Gnome => enable_gnome(&cua),
    }
}

/// Removes what [`grant`] wrote (other programs' settings are left as they are).
pub fn revoke(desktop: Desktop) -> Result<Steps, String> {
    match desktop {
        Desktop::Kde => {
            let file = kde_desktop_file();
            remove(&file)?;
            let mut steps = vec![format!("removed {}", file.display())];
            steps.extend(rebuild_kde_service_cache());
            Ok(steps)
        }
        Desktop::Gnome => {
            let mut steps = Vec::new();
            let mut enabled = gsettings_list("enabled-extensions")?;
            if enabled.iter().any(|e| e == uuid()) {
                enabled.retain(|e| e != uuid());
                gsettings_set_list("enabled-extensions", &enabled)?;
                steps.push(format!(
                    "disabled {} (org.gnome.shell enabled-extensions)",
                    uuid()
                ));
            }
            let folder = extension_folder();
            if folder.exists() {
                std::fs::remove_dir_all(&folder)
                    .map_err(|e| format!("removing {}: {e}", folder.display()))?;
            }
            steps.push(format!("removed {}", folder.display()));
            steps.push("GNOME Shell unloads it now; the files are gone".into());
            Ok(steps)
        }
    }
}

fn this_executable() -> Result<PathBuf, String> {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("where this cua is: {e}"))
}

/// `$XDG_DATA_HOME`, else `~/.local/share`.
fn data_home() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/share")
        })
}

fn kde_desktop_file() -> PathBuf {
    data_home().join("applications").join(KDE_DESKTOP_FILE)
}

fn enable_kde(cua: &Path) -> Result<Steps, String> {
    let file = kde_desktop_file();
    let text = format!(
        "[Desktop Entry]\nType=Application\nName=cua\nComment=Lets cua list, capture and drive windows (cua permissions grant kde)\nExec={}\nNoDisplay=true\nX-KDE-Wayland-Interfaces={KWIN_INTERFACES}\nX-KDE-DBUS-Restricted-Interfaces={KWIN_DBUS_INTERFACES}\n",
        cua.display()
    );
    write_whole(&file, text.as_bytes())?;
    let mut steps = vec![format!(
        "wrote {}: KWin trusts {} with its window list, fake input and screenshots",
        file.display(),
        cua.display()
    )];
    steps.extend(rebuild_kde_service_cache());
    steps.push(wait_until_in(Backend::Kde, KWIN_REREAD_WAIT).unwrap_or_else(|| {
        "no KWin session answers here: it takes effect in the next Plasma session (`cua check_permissions` there says what cua has)".into()
    }));
    Ok(steps)
}

/// Runs KDE's service cache rebuild, where installed, so KWin sees the file at once
/// (it notices a changed folder by itself within seconds otherwise).
fn rebuild_kde_service_cache() -> Option<String> {
    ["kbuildsycoca6", "kbuildsycoca5"].iter().find_map(|tool| {
        let ran = Command::new(tool).output().ok()?;
        Some(if ran.status.success() {
            format!("ran {tool} (KDE's service cache)")
        } else {
            format!(
                "{tool} failed ({}); KWin rereads the folder by itself",
                ran.status
            )
        })
    })
}

/// Waits (bounded) until cua, connecting afresh, drives `backend` on the desktop this
/// process names: the line saying so, or None when no such session answers here.
fn wait_until_in(backend: Backend, wait: Duration) -> Option<String> {
    let desktop = DesktopEnv::from_process_env();
    desktop.wayland_display.as_ref()?;
    let deadline = Instant::now() + wait;
    let mut told = false;
    loop {
        let now = crate::platform::connect(&desktop)
            .ok()
            .and_then(|p| p.display_backend());
        if now == Some(backend) {
            return Some(format!(
                "cua reaches this session's {} now",
                if backend == Backend::Kde {
                    "KWin"
                } else {
                    "GNOME Shell"
                }
            ));
        }
        if Instant::now() >= deadline {
            return Some(format!(
                "this session did not let cua in within {} s; `cua check_permissions` says what is missing",
                wait.as_secs()
            ));
        }
        if !told {
            eprintln!("waiting for the desktop to reread its settings…");
            told = true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn uuid() -> &'static str {
    crate::platform::gnome_shell::EXTENSION_UUID
}

fn extension_folder() -> PathBuf {
    data_home()
        .join("gnome-shell/extensions")
        .join(crate::platform::gnome_shell::EXTENSION_UUID)
}

fn enable_gnome(cua: &Path) -> Result<Steps, String> {
    let mut steps = Vec::new();
    if let Some(version) = gnome_shell_version() {
        if !GNOME_VERSIONS.contains(&version) {
            return Err(format!(
                "cua's Shell extension is written for GNOME Shell {GNOME_VERSIONS:?}, and this is GNOME Shell {version}: it would not load. Drive this session's XWayland apps through X11, or cua's headless GNOME sandbox (`cua sandbox start --backend gnome`)"
            ));
        }
    }
    let folder = extension_folder();
    let shell = crate::platform::gnome_shell::EXTENSION_JS;
    let metadata = crate::platform::gnome_shell::EXTENSION_METADATA;
    write_whole(&folder.join("metadata.json"), metadata.as_bytes())?;
    write_whole(&folder.join("extension.js"), shell.as_bytes())?;
    let allowed = folder.join(ALLOWED_CALLERS);
    let mut callers: Vec<String> = std::fs::read_to_string(&allowed)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let me = cua.to_string_lossy().into_owned();
    if !callers.contains(&me) {
        callers.push(me);
    }
    write_whole(&allowed, format!("{}\n", callers.join("\n")).as_bytes())?;
    steps.push(format!(
        "installed {} in {} (it answers {} only)",
        uuid(),
        folder.display(),
        callers.join(", ")
    ));
    let mut enabled = gsettings_list("enabled-extensions")?;
    if !enabled.iter().any(|e| e == uuid()) {
        enabled.push(uuid().into());
        gsettings_set_list("enabled-extensions", &enabled)?;
    }
    steps.push(format!(
        "enabled {} (org.gnome.shell enabled-extensions)",
        uuid()
    ));
    if gsettings_get("disable-user-extensions")?.trim() == "true" {
        steps.push("user extensions are switched off in this session (org.gnome.shell disable-user-extensions): cua's will not load until they are on (the Extensions app, or gsettings set org.gnome.shell disable-user-extensions false)".into());
    }
    steps.push(wait_until_in(Backend::Gnome, Duration::from_secs(2)).map_or_else(
        || "it loads in the next GNOME session".into(),
        |line| {
            if line.contains("now") {
                line
            } else {
                "GNOME Shell on Wayland loads a new extension only at login: log out and in once, then `cua check_permissions` shows gnome_shell ok".into()
            }
        },
    ));
    Ok(steps)
}

/// The running or installed GNOME Shell's major version, where one answers.
fn gnome_shell_version() -> Option<u32> {
    let out = Command::new("gnome-shell").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .last()?
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn gsettings(args: &[&str]) -> Result<String, String> {
    let out = Command::new("gsettings")
        .args(args)
        .output()
        .map_err(|e| format!("gsettings (GLib's settings tool, package libglib2.0-bin): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "gsettings {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn gsettings_get(key: &str) -> Result<String, String> {
    gsettings(&["get", "org.gnome.shell", key])
}

fn gsettings_list(key: &str) -> Result<Vec<String>, String> {
    Ok(parse_string_list(&gsettings_get(key)?))
}

fn gsettings_set_list(key: &str, items: &[String]) -> Result<(), String> {
    gsettings(&["set", "org.gnome.shell", key, &format_string_list(items)]).map(drop)
}

/// A GVariant string list as gsettings prints it (`['a', 'b']`, or `@as []` when empty).
/// Extension uuids hold no quotes or commas.
fn parse_string_list(text: &str) -> Vec<String> {
    let text = text.trim().trim_start_matches("@as").trim();
    text.trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|s| s.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn format_string_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
    format!("[{}]", quoted.join(", "))
}

fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::files::write_atomic(path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn remove(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("removing {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gsettings_string_lists_read_and_write_back() {
        assert!(parse_string_list("@as []\n").is_empty());
        let read = parse_string_list("['a@b.c', 'cua-shell@cua.dev']\n");
        assert_eq!(read, ["a@b.c", "cua-shell@cua.dev"]);
        assert_eq!(parse_string_list(&format_string_list(&read)), read);
        assert_eq!(format_string_list(&[]), "[]");
    }
}
