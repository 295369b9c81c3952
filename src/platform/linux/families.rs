//! App families that need more than their command line to be driven: browsers (an
//! accessibility tree, a private profile, no first-run pages, no network chatter) and
//! LibreOffice (no splash window standing in for the document's).

use std::path::{Path, PathBuf};

use super::apps::basename;
use crate::platform::{PlatformError, PlatformResult};

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

    /// Flags to put before the caller's own arguments. A profile the caller chose is kept;
    /// otherwise each launch gets a fresh one under `scratch` (the sandbox's folder).
    pub fn flags(self, user_args: &[String], scratch: &Path) -> PlatformResult<Vec<String>> {
        match self {
            Family::Chromium => chromium_flags(user_args, scratch),
            Family::Firefox => firefox_flags(user_args, scratch),
            // The splash is a window of its own, shown first; restoring documents from an
            // earlier crash would open dialogs.
            Family::LibreOffice => Ok(vec!["--nologo".into(), "--norestore".into()]),
        }
    }
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

fn chromium_flags(user_args: &[String], scratch: &Path) -> PlatformResult<Vec<String>> {
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
    if nix::unistd::geteuid().is_root() && !user_args.iter().any(|a| a == "--no-sandbox") {
        flags.push("--no-sandbox".into());
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
    Ok(flags)
}

/// Firefox exports its accessibility tree whenever the AT-SPI bus is enabled (a cua
/// sandbox enables it). `--no-remote` keeps a launch from handing its URLs to another
/// running Firefox, whose window would then not be the launched process's.
fn firefox_flags(user_args: &[String], scratch: &Path) -> PlatformResult<Vec<String>> {
    let mut flags = vec!["--no-remote".to_string()];
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
    Ok(flags)
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
        let flags = Family::Chromium.flags(&[], &scratch).unwrap();
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
            .flags(&["--user-data-dir=/tmp/mine".into()], &scratch)
            .unwrap();
        assert!(!chosen.iter().any(|f| f.starts_with("--user-data-dir=")));
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn firefox_gets_a_fresh_profile_with_quiet_prefs_unless_one_is_chosen() {
        let scratch = fresh_dir(&std::env::temp_dir(), "families-test");
        let flags = Family::Firefox.flags(&[], &scratch).unwrap();
        assert_eq!(flags[0], "--no-remote");
        let profile = PathBuf::from(&flags[2]);
        assert!(profile.starts_with(&scratch));
        let prefs = std::fs::read_to_string(profile.join("user.js")).unwrap();
        assert!(prefs.contains("user_pref(\"datareporting.policy.firstRunURL\", \"\");"));
        let chosen = Family::Firefox
            .flags(&["-P".into(), "work".into()], &scratch)
            .unwrap();
        assert_eq!(chosen, vec!["--no-remote".to_string()]);
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}
