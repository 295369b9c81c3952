//! KWin's own ways in, where the wlroots protocols are missing:
//!
//! - capture: `org.kde.KWin.ScreenShot2.CaptureArea` on the session bus, which writes the
//!   region's raw pixels into a pipe cua hands over and describes them in its reply;
//! - input: `org_kde_kwin_fake_input` (absolute motion, buttons and wheel, keys by evdev
//!   code): the seat's own pointer and keyboard, a foreground route like the wlroots one;
//!   `input.rs` sends each event here when the compositor offers it instead of virtual
//!   devices.
//!   Keys go by the compositor's keymap (a US one in the sandbox): characters no US key
//!   gives cannot be pressed, and say so.
//!
//! - placing windows: a KWin script loaded through `org.kde.kwin.Scripting`, run and
//!   unloaded (Wayland gives a client no request to move or size another's window; KWin's
//!   scripts may).
//!
//! KWin gives input and capture only to programs it trusts; the KDE sandbox's KWin trusts
//! every client.

use std::io::Read;
use std::os::fd::AsFd;

use super::super::bus_client::BusClient;
use super::keymap::Keymap;
use super::{Session, input};
use crate::platform::{Capture, Concern, PermissionCheck, PlatformError, PlatformResult, Rect};

const KWIN_SERVICE: &str = "org.kde.KWin";
const SCREENSHOT_PATH: &str = "/org/kde/KWin/ScreenShot2";
const SCREENSHOT_IFACE: &str = "org.kde.KWin.ScreenShot2";
/// QImage's ARGB32 (premultiplied or not): B, G, R, A bytes in memory.
const ARGB32_FORMATS: [u32; 2] = [5, 6];
const SCRIPTING_PATH: &str = "/Scripting";
const SCRIPTING_IFACE: &str = "org.kde.kwin.Scripting";
const SCRIPT_IFACE: &str = "org.kde.kwin.Script";
/// The evdev code of the left shift key.
const KEY_LEFTSHIFT: u32 = 42;

/// KWin's interfaces on the session bus.
pub struct KwinBus {
    bus: BusClient,
}

impl KwinBus {
    /// Connects to the session bus at `address`; None when KWin's screenshots do not
    /// answer there.
    pub fn connect(address: &str) -> Option<KwinBus> {
        let bus = BusClient::connect(address, "cua-kwin-bus").ok()?;
        Some(KwinBus { bus })
    }

    /// The screen's pixels in `region`.
    pub fn capture(&self, region: Rect) -> PlatformResult<Capture> {
        let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| PlatformError::Capture(format!("pipe: {e}")))?;
        // KWin writes after (or while) it answers; the read runs beside the call so a full
        // pipe never stalls it.
        let reader = std::thread::spawn(move || {
            let mut data = Vec::new();
            std::fs::File::from(read_end)
                .read_to_end(&mut data)
                .map(|_| data)
        });
        let (x, y, w, h) = (
            region.x,
            region.y,
            region.width as u32,
            region.height as u32,
        );
        let reply = self.bus.call(move |conn| async move {
            let options: std::collections::HashMap<&str, zbus::zvariant::Value<'_>> =
                std::collections::HashMap::new();
            let fd = zbus::zvariant::Fd::from(write_end.as_fd());
            let reply = conn
                .call_method(
                    Some(KWIN_SERVICE),
                    SCREENSHOT_PATH,
                    Some(SCREENSHOT_IFACE),
                    "CaptureArea",
                    &(x, y, w, h, options, fd),
                )
                .await;
            // This side's write end closes here, so the read ends once KWin has written.
            drop(write_end);
            reply?
                .body()
                .deserialize::<std::collections::HashMap<String, zbus::zvariant::OwnedValue>>()
        });
        let reply =
            reply.map_err(|e| PlatformError::Capture(format!("KWin's ScreenShot2: {e}")))?;
        let data = reader
            .join()
            .map_err(|_| PlatformError::Capture("KWin's screenshot reader panicked".into()))?
            .map_err(|e| PlatformError::Capture(format!("KWin's screenshot pipe: {e}")))?;
        let field = |k: &str| {
            reply
                .get(k)
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| PlatformError::Capture(format!("KWin's screenshot has no {k}")))
        };
        let (width, height, stride, format) = (
            field("width")?,
            field("height")?,
            field("stride")?,
            field("format")?,
        );
        if !ARGB32_FORMATS.contains(&format) {
            return Err(PlatformError::Capture(format!(
                "KWin's screenshot is in image format {format}, not ARGB32"
            )));
        }
        if data.len() < (stride * height) as usize || stride < width * 4 {
            return Err(PlatformError::Capture(format!(
                "KWin's screenshot is short: {} bytes for {width}x{height} (stride {stride})",
                data.len()
            )));
        }
        let mut rgba = Vec::with_capacity((width * height * 4) as usize);
        for row in data.chunks(stride as usize).take(height as usize) {
            for px in row[..(width * 4) as usize].chunks_exact(4) {
                rgba.extend_from_slice(&[px[2], px[1], px[0], px[3]]);
            }
        }
        Ok(Capture {
            width,
            height,
            rgba,
        })
    }
}

impl KwinBus {
    /// Sizes the window with KWin's `uuid` to `frame`, and moves it there too when `moved`,
    /// through a KWin script (answered once KWin has run it; the caller reads the result
    /// back).
    pub fn place(&self, uuid: &str, frame: Rect, moved: bool) -> PlatformResult<()> {
        static SCRIPTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SCRIPTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let plugin = format!("cua-place-{}-{n}", std::process::id());
        let file = std::env::temp_dir().join(format!("{plugin}.js"));
        std::fs::write(&file, place_script(uuid, frame, moved))
            .map_err(|e| PlatformError::Other(format!("writing KWin's script: {e}")))?;
        let path = file.to_string_lossy().into_owned();
        let ran = self.bus.call(move |conn| async move {
            let loaded = conn
                .call_method(
                    Some(KWIN_SERVICE),
                    SCRIPTING_PATH,
                    Some(SCRIPTING_IFACE),
                    "loadScript",
                    &(path, plugin.as_str()),
                )
                .await?;
            let id: i32 = loaded.body().deserialize()?;
            // KWin 5 serves a loaded script at /N, KWin 6 at /Scripting/ScriptN.
            let mut run = Err(zbus::Error::Failure(format!("no script {id}")));
            for object in [format!("/{id}"), format!("/Scripting/Script{id}")] {
                run = conn
                    .call_method(
                        Some(KWIN_SERVICE),
                        object.as_str(),
                        Some(SCRIPT_IFACE),
                        "run",
                        &(),
                    )
                    .await
                    .map(drop);
                if run.is_ok() {
                    break;
                }
            }
            let unloaded = conn
                .call_method(
                    Some(KWIN_SERVICE),
                    SCRIPTING_PATH,
                    Some(SCRIPTING_IFACE),
                    "unloadScript",
                    &(plugin.as_str(),),
                )
                .await;
            run.and(unloaded.map(drop))
        });
        let _ = std::fs::remove_file(&file);
        ran.map_err(|e| PlatformError::Other(format!("KWin's scripting (placing a window): {e}")))
    }
}

/// The KWin script that places the window with `uuid` (KWin's `{…}` form or bare), out of
/// full screen and maximized first (KWin keeps such a window's frame otherwise).
fn place_script(uuid: &str, frame: Rect, moved: bool) -> String {
    let bare = uuid.trim_matches(|c| c == '{' || c == '}');
    let (x, y) = if moved {
        (frame.x.to_string(), frame.y.to_string())
    } else {
        ("at.x".into(), "at.y".into())
    };
    format!(
        "const target = workspace.clientList().find(c => c.internalId.toString().replace(/[{{}}]/g, '') === '{bare}');\n\
         if (target) {{\n    target.fullScreen = false;\n    target.setMaximize(false, false);\n    const at = target.frameGeometry;\n    target.frameGeometry = {{ x: {x}, y: {y}, width: {w}, height: {h} }};\n}}\n",
        w = frame.width,
        h = frame.height,
    )
}

impl Session {
    /// Whether input goes through KWin's fake input (no wlroots virtual devices here).
    pub fn uses_fake_input(&self) -> bool {
        self.state.pointer_manager.is_none() && self.state.fake_input.is_some()
    }

    fn fake_input(
        &mut self,
    ) -> PlatformResult<
        wayland_protocols_plasma::fake_input::client::org_kde_kwin_fake_input::OrgKdeKwinFakeInput,
    > {
        let fake = self.state.fake_input.clone().ok_or_else(|| {
            PlatformError::Unsupported(
                "KWin offers no fake input to cua here (org_kde_kwin_fake_input): input at a point or by key is not possible; address an element instead".into(),
            )
        })?;
        if !self.state.devices.fake_authenticated {
            fake.authenticate("cua".into(), "computer use".into());
            self.state.devices.fake_authenticated = true;
        }
        Ok(fake)
    }

    /// Moves the pointer to a point of the output (checked by the caller).
    pub(super) fn fake_move(&mut self, x: i32, y: i32) -> PlatformResult<()> {
        let fake = self.fake_input()?;
        fake.pointer_motion_absolute(f64::from(x), f64::from(y));
        self.state.devices.pointer_at = Some((x, y));
        Ok(())
    }

    pub(super) fn fake_button(&mut self, button: u8, down: bool) -> PlatformResult<()> {
        let fake = self.fake_input()?;
        if let Some((axis, notches)) = input::wheel(button) {
            if down {
                // KWin's axis numbers are wl_pointer's: 0 vertical, 1 horizontal.
                fake.axis(axis as u32, input::WHEEL_STEP * f64::from(notches));
            }
            return Ok(());
        }
        fake.button(input::button_code(button)?, down as u32);
        Ok(())
    }

    pub(super) fn fake_key(&mut self, keysym: u32, down: bool) -> PlatformResult<()> {
        let fake = self.fake_input()?;
        let us = Keymap::default();
        let place = us.place(keysym).ok_or_else(|| {
            PlatformError::InvalidInput(format!(
                "keysym {keysym:#x} is on no key of KWin's keyboard (KWin's fake input presses keys of the compositor's US layout only); type_text into an element instead"
            ))
        })?;
        let devices = &mut self.state.devices;
        let add_shift = devices.adds_shift(place);
        if add_shift && down {
            fake.keyboard_key(KEY_LEFTSHIFT, 1);
        }
        fake.keyboard_key(place.code, down as u32);
        devices.track_modifier(keysym, down);
        if add_shift && !down {
            fake.keyboard_key(KEY_LEFTSHIFT, 0);
        }
        Ok(())
    }
}

wayland_client::delegate_noop!(
    super::State: wayland_protocols_plasma::fake_input::client::org_kde_kwin_fake_input::OrgKdeKwinFakeInput
);

impl super::Wayland {
    /// What KWin offers of what cua uses, one check a route.
    pub(super) fn kwin_checks(&self) -> Vec<PermissionCheck> {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let s = &session.state;
        let trust = "KWin gives it only to programs a .desktop file trusts: `cua permissions grant kde` writes one for this cua (the KDE sandbox's KWin trusts every client)";
        let check = |concern: Concern, name: &str, ok: bool, what: &str| PermissionCheck {
            concern,
            name: name.into(),
            ok,
            detail: format!(
                "{what}: {}",
                if ok { "offered" } else { "not offered to cua" }
            ),
            fix: (!ok).then(|| trust.to_string()),
        };
        vec![
            check(
                Concern::Session,
                "plasma_window_management",
                s.plasma.manager.is_some(),
                "org_kde_plasma_window_management (the window list with pids)",
            ),
            check(
                Concern::Capture,
                "kwin_screenshot",
                self.kwin.is_some(),
                "org.kde.KWin.ScreenShot2 on the session bus (screenshots)",
            ),
            check(
                Concern::Input,
                "fake_input",
                s.fake_input.is_some(),
                "org_kde_kwin_fake_input (pointer and key input)",
            ),
            super::super::display::no_background_input(),
        ]
    }
}
