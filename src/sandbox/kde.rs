//! The KDE sandbox: a headless KWin (`kwin_wayland --virtual`, one output of the sandbox's
//! size), with the session bus and accessibility bus every sandbox has. Apps started in it
//! are native Wayland clients.
//!
//! KWin gives its privileged protocols (the window list with pids, fake input) and its
//! screenshots only to programs a `.desktop` file of the machine's names; the sandbox's
//! KWin is started with its test switches that give them to every client, which in a
//! sandbox are cua and the apps it started. The packaged binary carries file capabilities
//! that a container refuses to exec (EPERM): the sandbox runs a copy of it, which has none.
//! Its configuration lives in the sandbox's home (no animations, focus on new windows).

use std::path::Path;

use super::wayland::{private_dir, wait_for_listener};
use super::{Sandbox, SandboxError};

/// The socket name KWin listens on, in its runtime folder.
const SOCKET: &str = "wayland-0";

impl Sandbox {
    pub(super) fn boot_kde(
        &mut self,
        root: &Path,
        unique: &str,
        owned: bool,
    ) -> Result<(), SandboxError> {
        self.claim_wayland_number(root, unique)?;
        self.start_session_bus(owned)?;

        let runtime = self.dir.join("compositor-runtime");
        private_dir(&runtime)?;
        let kwin = self.dir.join("kwin_wayland");
        copy_without_capabilities(&kwin)?;
        let config = self.dir.join("kwin-config");
        write_config(&config)?;

        let mut cmd = self.command(kwin.to_str().unwrap_or("kwin_wayland"));
        cmd.args(["--virtual", "--no-lockscreen", "--no-global-shortcuts"])
            .arg("--width")
            .arg(self.state.width.to_string())
            .arg("--height")
            .arg(self.state.height.to_string())
            .args(["--socket", SOCKET])
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_CONFIG_HOME", &config)
            .env("KWIN_WAYLAND_NO_PERMISSION_CHECKS", "1")
            .env("KWIN_SCREENSHOT_NO_PERMISSION_CHECKS", "1")
            .env("QT_QPA_PLATFORM", "offscreen");
        let pid = self.spawn("kwin_wayland", cmd, owned)?;
        // Listening is enough: KWin serves its protocols and D-Bus interfaces from the
        // start.
        let socket = wait_for_listener(
            "kwin_wayland",
            runtime.join(SOCKET),
            pid,
            &self.dir,
            "listen",
            |s| std::os::unix::net::UnixStream::connect(s).is_ok(),
        )?;
        self.state.wayland_socket = Some(socket);
        self.save_state()?;
        Ok(())
    }
}

/// Copies the packaged `kwin_wayland` to `to`: a plain copy has no file capabilities.
fn copy_without_capabilities(to: &Path) -> Result<(), SandboxError> {
    let packaged = super::find_program("kwin_wayland").ok_or_else(|| SandboxError::Missing {
        program: "kwin_wayland".into(),
        package: "kwin-wayland".into(),
    })?;
    std::fs::copy(&packaged, to)?;
    Ok(())
}

/// KWin's settings for the sandbox: no animations, windows placed in the screen's middle.
fn write_config(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("kwinrc"),
        "[Compositing]\nAnimationSpeed=0\n\n[Windows]\nPlacement=Centered\nFocusStealingPreventionLevel=0\n\n[Plugins]\nkwin4_effect_fadeEnabled=false\nkwin4_effect_scaleEnabled=false\n",
    )?;
    std::fs::write(dir.join("kdeglobals"), "[KDE]\nAnimationDurationFactor=0\n")
}
