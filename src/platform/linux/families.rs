//! App families that need more than their command line to be driven: browsers (an
//! accessibility tree, a private profile, no first-run pages, no network chatter, a
//! debugging endpoint on the loopback for the `page` tool) and LibreOffice (no splash
//! window standing in for the document's).
//!
//! A browser's debugging endpoint is found again from its process alone
//! ([`page_endpoint`]): its command line names its profile, where the browser wrote the
//! port it chose (Chromium: `DevToolsActivePort`; Firefox: `WebDriverBiDiServer.json`).

use std::path::{Path, PathBuf};

use super::process::{basename, parent_pid, process_executable};
use crate::desktop::Backend;
use crate::platform::page_relay as relay;
use crate::platform::{PageEndpoint, PageProtocol, PlatformError, PlatformResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Chromium,
    Firefox,
    LibreOffice,
}

const CHROMIUM_NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "chrome",
    "brave-browser",
    "microsoft-edge",
];

const FIREFOX_NAMES: &[&str] = &["firefox", "firefox-esr"];

const LIBREOFFICE_NAMES: &[&str] = &[
    "libreoffice",
    "soffice",
    "localc",
    "lowriter",
    "loimpress",
    "lodraw",
    "lobase",
    "lomath",
];

/// Preferences of a Firefox profile made for cua: no welcome or privacy tabs, no update,
/// telemetry or captive-portal traffic (the sandbox has no network), no session restore,
/// no animated scroll bars.
const FIREFOX_PREFS: &[(&str, &str)] = &[
    ("browser.shell.checkDefaultBrowser", "false"),
    ("browser.startup.homepage_override.mstone", "\"ignore\""),
    ("browser.startup.page", "0"),
    ("browser.aboutwelcome.enabled", "false"),
    ("startup.homepage_welcome_url", "\"\""),
    ("startup.homepage_welcome_url.additional", "\"\""),
    ("datareporting.policy.dataSubmissionEnabled", "false"),
    ("datareporting.policy.firstRunURL", "\"\""),
    ("datareporting.healthreport.uploadEnabled", "false"),
    ("toolkit.telemetry.reportingpolicy.firstRun", "false"),
    ("app.update.auto", "false"),
    ("extensions.update.enabled", "false"),
    ("browser.sessionstore.resume_from_crash", "false"),
    ("browser.tabs.warnOnClose", "false"),
    ("network.captive-portal-service.enabled", "false"),
    ("network.connectivity-service.enabled", "false"),
    ("browser.safebrowsing.malware.enabled", "false"),
    ("browser.safebrowsing.phishing.enabled", "false"),
    ("browser.safebrowsing.downloads.enabled", "false"),
    ("browser.translations.automaticallyPopup", "false"),
    ("signon.rememberSignons", "false"),
    ("browser.uitour.enabled", "false"),
    ("browser.newtabpage.enabled", "false"),
    // Screenshots that agree run to run: scroll bars that stay, no fading or smooth motion.
    ("widget.gtk.overlay-scrollbars.enabled", "false"),
    ("ui.prefersReducedMotion", "1"),
    ("general.smoothScroll", "false"),
];

impl Family {
    /// The family a program belongs to, by its file name.
    pub fn of(program: &str) -> Option<Family> {
        let b = basename(program);
        let named = |names: &[&str]| {
            names
                .iter()
                .any(|n| b == *n || b.starts_with(&format!("{n}-")))
        };
        if named(CHROMIUM_NAMES) {
            Some(Family::Chromium)
        } else if named(FIREFOX_NAMES) {
            Some(Family::Firefox)
        } else if named(LIBREOFFICE_NAMES) {
            Some(Family::LibreOffice)
        } else {
            None
        }
    }

    pub fn is_browser(self) -> bool {
        matches!(self, Family::Chromium | Family::Firefox)
    }

    /// Flags to put before the caller's own arguments, and the relay to start the program
    /// through. A profile the caller chose is kept; otherwise each launch gets a fresh one
    /// under `scratch` (the sandbox's folder).
    /// On `backend`'s desktop: a browser is a native client of it (Firefox reads
    /// MOZ_ENABLE_WAYLAND from the app environment; Chromium takes only a flag, and
    /// without it looks for X).
    pub fn flags(
        self,
        user_args: &[String],
        scratch: &Path,
        backend: Backend,
    ) -> PlatformResult<Flags> {
        match self {
            Family::Chromium => chromium_flags(user_args, scratch, backend),
            Family::Firefox => firefox_flags(user_args, scratch),
            // The splash is a window of its own, shown first; restoring documents from an
            // earlier crash would open dialogs.
            Family::LibreOffice => Ok(Flags {
                args: vec!["--nologo".into(), "--norestore".into()],
                relay: None,
            }),
        }
    }
}

/// What a family's launch adds.
pub struct Flags {
    /// Before the caller's own arguments.
    pub args: Vec<String>,
    /// The page relay ([`crate::platform::page_relay`]) the browser is started through, and how it
    /// holds the browser's debugging endpoint.
    pub relay: Option<(PathBuf, relay::Mode)>,
}

fn fresh_dir(scratch: &Path, family: &str) -> PathBuf {
    scratch.join(format!(
        "cua-{family}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ))
}

/// Preferences of a Chromium profile made for cua, in its `Local State` and its default
/// profile's `Preferences` (Chromium reads this one from either, by version): a tab's
/// accessible name without the memory figure its hover card shows ("… - Memory usage -
/// 24.1 MB"), which came and went between runs and changed every few seconds.
const CHROMIUM_PREFS: &str = r#"{"browser":{"hovercard":{"memory_usage_enabled":false}}}"#;

fn chromium_flags(user_args: &[String], scratch: &Path, backend: Backend) -> PlatformResult<Flags> {
    let mut flags = vec![
        "--force-renderer-accessibility".to_string(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-gpu".into(),
        "--password-store=basic".into(),
        // Automation mode: no infobar about the flags above.
        "--test-type".into(),
    ];
    if backend.is_wayland() && !user_args.iter().any(|a| a.starts_with("--ozone-platform")) {
        flags.push("--ozone-platform=wayland".into());
    }
    if nix::unistd::geteuid().is_root() && !user_args.iter().any(|a| a == "--no-sandbox") {
        flags.push("--no-sandbox".into());
    }
    // The `page` tool's endpoint: a pipe the relay holds and serves to this user alone;
    // without the relay, a port the browser picks on 127.0.0.1 (which any local user could
    // dial) and writes into the profile as `DevToolsActivePort`.
    let mut relay = None;
    if !user_args
        .iter()
        .any(|a| a.starts_with("--remote-debugging-"))
    {
        match crate::files::helper(relay::HELPER, relay::HELPER_ENV) {
            Ok(helper) => {
                flags.push("--remote-debugging-pipe".into());
                relay = Some((helper, relay::Mode::CdpPipe));
            }
            Err(e) => {
                tracing::warn!("Chromium's debugging endpoint falls back to a loopback port: {e}");
                flags.push("--remote-debugging-port=0".into());
            }
        }
    }
    if !user_args.iter().any(|a| a.starts_with("--user-data-dir")) {
        let dir = fresh_dir(scratch, "chromium");
        std::fs::create_dir_all(dir.join("Default"))
            .and_then(|()| std::fs::write(dir.join("Local State"), CHROMIUM_PREFS))
            .and_then(|()| std::fs::write(dir.join("Default/Preferences"), CHROMIUM_PREFS))
            .map_err(|e| {
                PlatformError::Launch(format!("Chromium profile in {}: {e}", dir.display()))
            })?;
        flags.push(format!("--user-data-dir={}", dir.display()));
    }
    Ok(Flags { args: flags, relay })
}

/// Firefox exports its accessibility tree whenever the AT-SPI bus is enabled (a cua
/// sandbox enables it). `--no-remote` keeps a launch from handing its URLs to another
/// running Firefox, whose window would then not be the launched process's.
fn firefox_flags(user_args: &[String], scratch: &Path) -> PlatformResult<Flags> {
    let mut flags = vec!["--no-remote".to_string()];
    // The `page` tool's endpoint: WebDriver BiDi on a port Firefox picks on 127.0.0.1 and
    // writes into the profile as `WebDriverBiDiServer.json`. While it listens, Firefox
    // stripes its address bar and shows a robot icon, in screenshots too. In a profile of
    // cua's own, the relay opens Firefox's one session and holds it, so no other user can.
    let own_port = !user_args
        .iter()
        .any(|a| a.starts_with("--remote-debugging-port"));
    if own_port {
        flags.push("--remote-debugging-port=0".into());
    }
    let chose_profile = user_args.iter().any(|a| {
        matches!(
            a.as_str(),
            "--profile" | "-profile" | "-P" | "--ProfileManager"
        )
    });
    if !chose_profile {
        let dir = fresh_dir(scratch, "firefox");
        let prefs: String = FIREFOX_PREFS
            .iter()
            .map(|(k, v)| format!("user_pref(\"{k}\", {v});\n"))
            .collect();
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("user.js"), prefs))
            .map_err(|e| {
                PlatformError::Launch(format!("Firefox profile in {}: {e}", dir.display()))
            })?;
        flags.push("--profile".into());
        flags.push(dir.to_string_lossy().into_owned());
    }
    let mut relay = None;
    if own_port && !chose_profile {
        match crate::files::helper(relay::HELPER, relay::HELPER_ENV) {
            Ok(helper) => relay = Some((helper, relay::Mode::BidiSession)),
            Err(e) => tracing::warn!("Firefox's BiDi session is not held for this user: {e}"),
        }
    }
    Ok(Flags { args: flags, relay })
}

/// How to get a browser whose pages cua can read.
const RELAUNCH: &str = "launch it through launch_app, which starts browsers with a debugging endpoint (Chromium: CDP on a pipe only this user can reach; Firefox: WebDriver BiDi on 127.0.0.1)";

/// The debugging endpoint of browser process `pid`, from its command line and profile.
pub fn page_endpoint(pid: u32) -> PlatformResult<PageEndpoint> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map_err(|_| PlatformError::InvalidInput(format!("no process {pid}")))?;
    let mut args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    // Chromium rewrites its process title: one string, its arguments joined by spaces.
    if args.len() == 1 {
        args = args[0].split(' ').map(str::to_string).collect();
    }
    let program = std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| args.first().cloned().unwrap_or_default());
    let not_reachable = |why: String| PlatformError::Unsupported(format!("{why}; {RELAUNCH}"));
    let family = Family::of(&program);
    if family.is_some_and(Family::is_browser) {
        if let Some(endpoint) = relay_endpoint(pid) {
            return Ok(endpoint);
        }
    }
    match family {
        Some(Family::Chromium) if args.iter().any(|a| a == "--remote-debugging-pipe") => {
            Err(not_reachable(format!(
                "Chromium pid {pid} holds a debugging pipe that another program started it on"
            )))
        }
        Some(Family::Chromium) => {
            let dir = args
                .iter()
                .find_map(|a| a.strip_prefix("--user-data-dir="))
                .ok_or_else(|| {
                    not_reachable(format!("Chromium pid {pid} runs without --user-data-dir"))
                })?;
            let file = Path::new(dir).join("DevToolsActivePort");
            let text = std::fs::read_to_string(&file).map_err(|_| {
                not_reachable(format!(
                    "Chromium pid {pid} was started without a debugging port (no {})",
                    file.display()
                ))
            })?;
            let mut lines = text.lines();
            match (lines.next().map(str::parse::<u16>), lines.next()) {
                (Some(Ok(port)), Some(path)) if path.starts_with('/') => Ok(PageEndpoint {
                    protocol: PageProtocol::Cdp,
                    url: format!("ws://127.0.0.1:{port}{path}"),
                }),
                _ => Err(PlatformError::Other(format!(
                    "{} does not hold a port and a path: {text:?}",
                    file.display()
                ))),
            }
        }
        Some(Family::Firefox) => {
            let dir = args
                .iter()
                .position(|a| a == "--profile" || a == "-profile")
                .and_then(|i| args.get(i + 1))
                .ok_or_else(|| {
                    not_reachable(format!("Firefox pid {pid} runs without --profile"))
                })?;
            let file = Path::new(dir).join("WebDriverBiDiServer.json");
            let text = std::fs::read_to_string(&file).map_err(|_| {
                not_reachable(format!(
                    "Firefox pid {pid} was started without --remote-debugging-port (no {})",
                    file.display()
                ))
            })?;
            let server: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            match (server["ws_host"].as_str(), server["ws_port"].as_u64()) {
                (Some(host), Some(port)) => Ok(PageEndpoint {
                    protocol: PageProtocol::Bidi,
                    url: format!("ws://{host}:{port}/session"),
                }),
                _ => Err(PlatformError::Other(format!(
                    "{} does not name a host and port: {text:?}",
                    file.display()
                ))),
            }
        }
        _ => Err(PlatformError::InvalidInput(format!(
            "pid {pid} ({}) is not a browser cua can read pages of (Chromium or Firefox)",
            basename(&program)
        ))),
    }
}

/// The socket of the relay that started browser `pid`: the relay is its parent, and its
/// command line names how it holds the browser and the socket's folder.
fn relay_endpoint(pid: u32) -> Option<PageEndpoint> {
    let parent = parent_pid(pid)?;
    if process_executable(parent)? != relay::HELPER {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{parent}/cmdline")).ok()?;
    let mut words = cmdline
        .split(|b| *b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned());
    let mode = relay::Mode::parse(&words.nth(1)?)?;
    let socket = relay::socket_path(Path::new(&words.next()?), parent);
    Some(PageEndpoint {
        protocol: match mode {
            relay::Mode::CdpPipe => PageProtocol::Cdp,
            relay::Mode::BidiSession => PageProtocol::Bidi,
        },
        url: format!("unix:{}", socket.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_told_by_file_name() {
        assert_eq!(Family::of("/usr/bin/chromium"), Some(Family::Chromium));
        assert_eq!(Family::of("google-chrome-stable"), Some(Family::Chromium));
        assert_eq!(Family::of("/usr/bin/firefox-esr"), Some(Family::Firefox));
        assert_eq!(Family::of("firefox"), Some(Family::Firefox));
        assert_eq!(Family::of("/usr/bin/localc"), Some(Family::LibreOffice));
        assert_eq!(Family::of("/usr/bin/mousepad"), None);
    }

    #[test]
    fn chromium_gets_a_fresh_profile_without_memory_figures_unless_one_is_chosen() {
        let scratch = fresh_dir(&std::env::temp_dir(), "families-test");
        let flags = Family::Chromium
            .flags(&[], &scratch, Backend::X11)
            .unwrap()
            .args;
        let dir = flags
            .iter()
            .find_map(|f| f.strip_prefix("--user-data-dir="))
            .map(PathBuf::from)
            .expect("a fresh user data dir");
        assert!(dir.starts_with(&scratch));
        for file in ["Local State", "Default/Preferences"] {
            let prefs: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
            assert_eq!(prefs["browser"]["hovercard"]["memory_usage_enabled"], false);
        }
        let chosen = Family::Chromium
            .flags(
                &["--user-data-dir=/tmp/mine".into()],
                &scratch,
                Backend::X11,
            )
            .unwrap()
            .args;
        assert!(!chosen.iter().any(|f| f.starts_with("--user-data-dir=")));
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn chromium_is_a_wayland_client_on_wayland_unless_told_otherwise() {
        let scratch = fresh_dir(&std::env::temp_dir(), "families-ozone");
        let ozone = |args: &[String], backend| {
            Family::Chromium
                .flags(args, &scratch, backend)
                .unwrap()
                .args
                .into_iter()
                .filter(|f| f.starts_with("--ozone-platform"))
                .collect::<Vec<_>>()
        };
        assert_eq!(ozone(&[], Backend::Wayland), ["--ozone-platform=wayland"]);
        assert!(ozone(&[], Backend::X11).is_empty());
        assert!(ozone(&["--ozone-platform=x11".into()], Backend::Wayland).is_empty());
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn firefox_gets_a_fresh_profile_with_quiet_prefs_unless_one_is_chosen() {
        let scratch = fresh_dir(&std::env::temp_dir(), "families-test");
        let flags = Family::Firefox
            .flags(&[], &scratch, Backend::X11)
            .unwrap()
            .args;
        assert_eq!(flags[0], "--no-remote");
        assert_eq!(flags[1], "--remote-debugging-port=0");
        let profile = PathBuf::from(&flags[3]);
        assert!(profile.starts_with(&scratch));
        let prefs = std::fs::read_to_string(profile.join("user.js")).unwrap();
        assert!(prefs.contains("user_pref(\"datareporting.policy.firstRunURL\", \"\");"));
        let chosen = Family::Firefox
            .flags(&["-P".into(), "work".into()], &scratch, Backend::X11)
            .unwrap()
            .args;
        assert_eq!(chosen, vec!["--no-remote", "--remote-debugging-port=0"]);
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}
