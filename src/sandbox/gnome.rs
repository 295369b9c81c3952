//! The GNOME sandbox: a headless GNOME Shell (`--headless --wayland --no-x11
//! --virtual-monitor WxH`), with the session bus and accessibility bus every sandbox has,
//! and cua's Shell extension loaded through a session mode of its own (`cua`: GNOME's user
//! session without the welcome dialog and notifications, whose banners would cover
//! windows in screenshots). Apps started in it are native Wayland clients.
//!
//! The shell dies without a system bus (it asks logind and others there): a private bus
//! of the sandbox's stands in for it, so nothing of the machine's is reached. The shell's
//! settings come from the sandbox's keyfile, as its apps' do (no animations).

use std::path::Path;
use std::process::Command;

use super::wayland::{private_dir, wait_for_listener};
use super::{Sandbox, SandboxError};
use crate::platform::gnome_shell::{EXTENSION_JS, EXTENSION_METADATA, EXTENSION_UUID, GnomeShell};

/// The session mode cua's sandbox runs the shell in.
const SESSION_MODE: &str = "cua";

impl Sandbox {
    pub(super) fn boot_gnome(
        &mut self,
        root: &Path,
        unique: &str,
        owned: bool,
    ) -> Result<(), SandboxError> {
        self.claim_wayland_number(root, unique)?;
        self.start_session_bus(owned)?;
        let system_bus = self.start_stand_in_system_bus(owned)?;

        let runtime = self.dir.join("compositor-runtime");
        private_dir(&runtime)?;
        let data = self.dir.join("shell-data");
        write_shell_data(&data)?;

        let mut shell = self.command("gnome-shell");
        shell
            .args(["--headless", "--wayland", "--no-x11", "--virtual-monitor"])
            .arg(format!("{}x{}", self.state.width, self.state.height))
            .arg(format!("--mode={SESSION_MODE}"))
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_DATA_DIRS", data_dirs(&data))
            .env("DBUS_SYSTEM_BUS_ADDRESS", system_bus)
            .env("GSETTINGS_BACKEND", "keyfile")
            .env("CUA_GNOME_SANDBOX", "1");
        let pid = self.spawn("gnome-shell", shell, owned)?;
        // Ready once cua's extension answers on the session bus (it claims its name when
        // the desktop shows).
        let bus = self.state.dbus_address.clone();
        let socket = wait_for_listener(
            "gnome-shell",
            runtime.join("wayland-0"),
            pid,
            &self.dir,
            "listen with cua's extension",
            |_| GnomeShell::connect(&bus).is_ok(),
        )?;
        self.state.wayland_socket = Some(socket);
        self.save_state()?;
        Ok(())
    }

    /// A bus of the sandbox's own where the shell looks for the system bus.
    fn start_stand_in_system_bus(&mut self, owned: bool) -> Result<String, SandboxError> {
        let dbus = Command::new("dbus-daemon");
        self.start_bus("dbus-daemon (system stand-in)", dbus, "system-bus", owned)
    }
}

/// The shell's data folder: the `cua` session mode and cua's extension.
fn write_shell_data(data: &Path) -> std::io::Result<()> {
    let shell = data.join("gnome-shell");
    let extension = shell.join("extensions").join(EXTENSION_UUID);
    std::fs::create_dir_all(&extension)?;
    std::fs::write(extension.join("metadata.json"), EXTENSION_METADATA)?;
    std::fs::write(extension.join("extension.js"), EXTENSION_JS)?;
    std::fs::create_dir_all(shell.join("modes"))?;
    let mode = serde_json::json!({
        "parentMode": "user",
        "showWelcomeDialog": false,
        "hasNotifications": false,
        "enabledExtensions": [EXTENSION_UUID],
    });
    std::fs::write(
        shell.join("modes").join(format!("{SESSION_MODE}.json")),
        mode.to_string(),
    )
}

/// The data folders the shell searches: the sandbox's first, then the system's.
fn data_dirs(data: &Path) -> String {
    let system = std::env::var("XDG_DATA_DIRS")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    format!("{}:{system}", data.display())
}
