//! Input through the seat: a virtual pointer (`wlr-virtual-pointer`) and a virtual keyboard
//! (`virtual-keyboard`) whose keymap is made here: one key a keysym, added as text asks for
//! them, so any character types whatever layout the seat has (X11 remaps a spare keycode
//! for the same end). The compositor sends these to the window under the pointer and the
//! focused window, as a person's input: the target is activated first and the previously
//! active window given back after.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use wayland_client::protocol::wl_pointer;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1;

use super::{Session, State};
use crate::platform::{InputEvent, PlatformError, PlatformResult, WindowInfo};

/// Modifier keysyms and the real modifier (its bit in the xkb state) each sets. They hold
/// the first keycodes of every keymap made here.
const MODIFIERS: [(u32, &str, u32); 10] = [
    (0xffe1, "Shift", 1 << 0),   // Shift_L
    (0xffe2, "Shift", 1 << 0),   // Shift_R
    (0xffe3, "Control", 1 << 2), // Control_L
    (0xffe4, "Control", 1 << 2), // Control_R
    (0xffe9, "Mod1", 1 << 3),    // Alt_L
    (0xffea, "Mod1", 1 << 3),    // Alt_R
    (0xffe7, "Mod1", 1 << 3),    // Meta_L
    (0xffeb, "Mod4", 1 << 6),    // Super_L
    (0xffec, "Mod4", 1 << 6),    // Super_R
    (0xfe03, "Mod5", 1 << 7),    // ISO_Level3_Shift
];
pub const SHIFT_L: u32 = 0xffe1;
/// XKB keycodes run 8-255 for every client to understand them; 8 is never used.
const FIRST_KEYCODE: u32 = 9;
const LAST_KEYCODE: u32 = 255;
/// Linux input button codes.
const BTN_LEFT: u32 = 0x110;
const BTN_RIGHT: u32 = 0x111;
const BTN_MIDDLE: u32 = 0x112;
const BTN_SIDE: u32 = 0x113;
const BTN_EXTRA: u32 = 0x114;
/// One wheel notch, in the axis units a mouse reports.
const WHEEL_STEP: f64 = 15.0;
/// How long keys wait after the keymap changed, for the app to read it (see `map_keys`).
const NEW_KEYMAP_GRACE: Duration = Duration::from_millis(100);
/// How long activating a window may take before input goes ahead anyway.
const ACTIVATE_WAIT: Duration = Duration::from_millis(500);

/// The virtual devices, made on first use, and what they hold down.
#[derive(Default)]
pub struct Devices {
    pointer: Option<ZwlrVirtualPointerV1>,
    keyboard: Option<ZwpVirtualKeyboardV1>,
    /// The keymap's keysyms, keycode `FIRST_KEYCODE + i` for entry `i`.
    keysyms: Vec<u32>,
    /// How many of `keysyms` the compositor has in its copy of the keymap.
    uploaded: usize,
    /// The modifier bits held down now.
    depressed: u32,
    /// Where this client last put the pointer (Wayland tells no client where it is).
    pub pointer_at: Option<(i32, i32)>,
    started: Option<Instant>,
}

impl Session {
    /// Sends `events` (window-local) to `window` through the seat, with the window active.
    pub fn send_foreground(
        &mut self,
        window: &WindowInfo,
        events: &[InputEvent],
        toplevel: Option<u64>,
    ) -> PlatformResult<()> {
        let before = self
            .state
            .toplevels
            .complete()
            .find(|t| t.activated)
            .map(|t| t.id);
        let pointer_before = self.state.devices.pointer_at;
        if let Some(id) = toplevel.filter(|id| Some(*id) != before) {
            self.activate(id)?;
        }
        self.map_keys(events)?;
        let origin = (window.bounds.x, window.bounds.y);
        for event in events {
            match event {
                InputEvent::Pause(d) => {
                    self.conn
                        .flush()
                        .map_err(|e| PlatformError::Other(format!("Wayland: {e}")))?;
                    std::thread::sleep(*d);
                }
                other => self.send(other, origin)?,
            }
        }
        self.roundtrip()?;
        // Give the user's foreground back: the window that was active, the pointer where
        // it was.
        if let Some(before) = before.filter(|b| Some(*b) != toplevel) {
            let _ = self.activate(before);
        }
        if let (Some((x, y)), true) = (pointer_before, events.iter().any(is_pointer)) {
            self.move_pointer(x, y)?;
            self.roundtrip()?;
        }
        Ok(())
    }

    /// Moves the pointer to a point of the output.
    pub fn warp(&mut self, x: i32, y: i32) -> PlatformResult<()> {
        self.move_pointer(x, y)?;
        self.roundtrip()
    }

    /// Makes toplevel `id` the active window and waits (bounded) until it says so.
    pub fn activate(&mut self, id: u64) -> PlatformResult<()> {
        let seat = self.state.seat.clone().ok_or_else(no_seat)?;
        let toplevel = self
            .state
            .toplevels
            .by_id(id)
            .ok_or(PlatformError::NoSuchWindow(id))?;
        toplevel.handle.activate(&seat);
        let deadline = Instant::now() + ACTIVATE_WAIT;
        while Instant::now() < deadline {
            self.roundtrip()?;
            if self.state.toplevels.by_id(id).is_some_and(|t| t.activated) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(PlatformError::Other(format!(
            "the compositor did not activate window {id} within {} ms",
            ACTIVATE_WAIT.as_millis()
        )))
    }

    fn send(&mut self, event: &InputEvent, (ox, oy): (i32, i32)) -> PlatformResult<()> {
        match *event {
            InputEvent::Move { x, y } => self.move_pointer(ox + x, oy + y),
            InputEvent::Button { x, y, button, down } => {
                self.move_pointer(ox + x, oy + y)?;
                self.button(button, down)
            }
            InputEvent::Key { keysym, down } => self.key(keysym, down),
            InputEvent::Pause(_) => Ok(()),
        }
    }

    pub fn pointer(&mut self) -> PlatformResult<ZwlrVirtualPointerV1> {
        if let Some(p) = &self.state.devices.pointer {
            return Ok(p.clone());
        }
        let s = &mut self.state;
        let manager = s.pointer_manager.as_ref().ok_or_else(|| {
            PlatformError::Unsupported(
                "this Wayland compositor offers no virtual pointer (zwlr_virtual_pointer_manager_v1): input at a point is not possible here; address an element instead".into(),
            )
        })?;
        let seat = s.seat.as_ref().ok_or_else(no_seat)?;
        let pointer = if wayland_client::Proxy::version(manager) >= 2 {
            manager.create_virtual_pointer_with_output(Some(seat), s.output.as_ref(), &s.qh, ())
        } else {
            manager.create_virtual_pointer(Some(seat), &s.qh, ())
        };
        s.devices.pointer = Some(pointer.clone());
        // The compositor sets a new device up when it reads the request: events sent in
        // the same burst went to the old pointer position (the first click of a process
        // landed at the output's centre).
        self.roundtrip()?;
        Ok(pointer)
    }

    fn move_pointer(&mut self, x: i32, y: i32) -> PlatformResult<()> {
        let pointer = self.pointer()?;
        let (w, h) = self.state.output_size;
        if x < 0 || y < 0 || x as u32 >= w || y as u32 >= h {
            return Err(PlatformError::InvalidInput(format!(
                "({x}, {y}) is off the {w}x{h} output"
            )));
        }
        pointer.motion_absolute(self.state.devices.time(), x as u32, y as u32, w, h);
        pointer.frame();
        self.state.devices.pointer_at = Some((x, y));
        Ok(())
    }

    fn button(&mut self, button: u8, down: bool) -> PlatformResult<()> {
        let pointer = self.pointer()?;
        let time = self.state.devices.time();
        // X's wheel buttons: 4 up, 5 down, 6 left, 7 right; a notch on press, none on release.
        let wheel = match button {
            4 => Some((wl_pointer::Axis::VerticalScroll, -1)),
            5 => Some((wl_pointer::Axis::VerticalScroll, 1)),
            6 => Some((wl_pointer::Axis::HorizontalScroll, -1)),
            7 => Some((wl_pointer::Axis::HorizontalScroll, 1)),
            _ => None,
        };
        if let Some((axis, notches)) = wheel {
            if down {
                pointer.axis_source(wl_pointer::AxisSource::Wheel);
                pointer.axis_discrete(time, axis, WHEEL_STEP * notches as f64, notches);
                pointer.frame();
            }
            return Ok(());
        }
        let code = match button {
            1 => BTN_LEFT,
            2 => BTN_MIDDLE,
            3 => BTN_RIGHT,
            8 => BTN_SIDE,
            9 => BTN_EXTRA,
            other => {
                return Err(PlatformError::InvalidInput(format!(
                    "no pointer button {other} (1-9)"
                )));
            }
        };
        let state = if down {
            wl_pointer::ButtonState::Pressed
        } else {
            wl_pointer::ButtonState::Released
        };
        pointer.button(time, code, state);
        pointer.frame();
        Ok(())
    }

    fn keyboard(&mut self) -> PlatformResult<ZwpVirtualKeyboardV1> {
        if let Some(k) = &self.state.devices.keyboard {
            return Ok(k.clone());
        }
        let s = &mut self.state;
        let manager = s.keyboard_manager.as_ref().ok_or_else(|| {
            PlatformError::Unsupported(
                "this Wayland compositor offers no virtual keyboard (zwp_virtual_keyboard_manager_v1): key input is not possible here; type_text into an element instead".into(),
            )
        })?;
        let seat = s.seat.as_ref().ok_or_else(no_seat)?;
        let keyboard = manager.create_virtual_keyboard(seat, &s.qh, ());
        s.devices.keyboard = Some(keyboard.clone());
        s.devices.keysyms = MODIFIERS.iter().map(|m| m.0).collect();
        s.devices.uploaded = 0;
        Ok(keyboard)
    }

    /// Puts every key of `events` in the keymap, before any is sent.
    ///
    /// An app reads a new keymap when it gets to the event that brings it; a key it reads
    /// before that is dropped (the first key of each new keymap was, every time, on GTK 4).
    /// No event says an app has read its keymap, so a changed keymap alone waits
    /// `NEW_KEYMAP_GRACE`; keys already in it never wait (X11 binds spare keycodes the
    /// same way, for the same reason).
    pub fn map_keys(&mut self, events: &[InputEvent]) -> PlatformResult<()> {
        let wanted: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                InputEvent::Key { keysym, .. } => Some(*keysym),
                _ => None,
            })
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let keyboard = self.keyboard()?;
        let devices = &mut self.state.devices;
        let missing: Vec<u32> = wanted
            .iter()
            .copied()
            .filter(|k| !devices.keysyms.contains(k))
            .collect();
        let room = (LAST_KEYCODE - FIRST_KEYCODE + 1) as usize;
        if devices.keysyms.len() + missing.len() > room {
            // Full: start over with the modifiers and this call's keys.
            devices.keysyms.truncate(MODIFIERS.len());
        }
        for k in wanted {
            if !devices.keysyms.contains(&k) && devices.keysyms.len() < room {
                devices.keysyms.push(k);
            }
        }
        if devices.uploaded != devices.keysyms.len() {
            upload_keymap(&keyboard, &devices.keysyms)?;
            devices.uploaded = devices.keysyms.len();
            self.roundtrip()?;
            std::thread::sleep(NEW_KEYMAP_GRACE);
        }
        Ok(())
    }

    fn key(&mut self, keysym: u32, down: bool) -> PlatformResult<()> {
        let keyboard = self.keyboard()?;
        let devices = &mut self.state.devices;
        let index = devices
            .keysyms
            .iter()
            .position(|k| *k == keysym)
            .ok_or_else(|| {
                PlatformError::InvalidInput(format!(
                    "keysym {keysym:#x} does not fit in the keymap (more than {} distinct keys in one call)",
                    LAST_KEYCODE - FIRST_KEYCODE + 1
                ))
            })?;
        let time = devices.time();
        // Wayland key codes are evdev codes: XKB's minus 8.
        keyboard.key(time, FIRST_KEYCODE + index as u32 - 8, down as u32);
        if let Some((_, _, bit)) = MODIFIERS.iter().find(|m| m.0 == keysym) {
            if down {
                devices.depressed |= bit;
            } else {
                devices.depressed &= !bit;
            }
            keyboard.modifiers(devices.depressed, 0, 0, 0);
        }
        Ok(())
    }
}

impl Devices {
    /// Event time in milliseconds, as the protocols want it.
    fn time(&mut self) -> u32 {
        let started = *self.started.get_or_insert_with(Instant::now);
        started.elapsed().as_millis() as u32
    }
}

fn is_pointer(event: &InputEvent) -> bool {
    matches!(event, InputEvent::Move { .. } | InputEvent::Button { .. })
}

fn no_seat() -> PlatformError {
    PlatformError::Unsupported("the Wayland compositor has no seat: no input is possible".into())
}

/// The keymap text: each keysym on a key of its own, one level, the modifiers mapped.
pub fn keymap_text(keysyms: &[u32]) -> String {
    let code = |i: usize| FIRST_KEYCODE as usize + i;
    let mut text =
        String::from("xkb_keymap {\nxkb_keycodes \"cua\" {\nminimum = 8;\nmaximum = 255;\n");
    for i in 0..keysyms.len() {
        text.push_str(&format!("<K{}> = {};\n", code(i), code(i)));
    }
    text.push_str("};\nxkb_types \"cua\" { include \"complete\" };\nxkb_compatibility \"cua\" { include \"complete\" };\nxkb_symbols \"cua\" {\n");
    for (i, keysym) in keysyms.iter().enumerate() {
        text.push_str(&format!("key <K{}> {{ [ {:#x} ] }};\n", code(i), keysym));
    }
    for (i, (keysym, modifier, _)) in MODIFIERS.iter().enumerate() {
        if keysyms.get(i) == Some(keysym) {
            text.push_str(&format!("modifier_map {modifier} {{ <K{}> }};\n", code(i)));
        }
    }
    text.push_str("};\n};\n");
    text
}

fn upload_keymap(keyboard: &ZwpVirtualKeyboardV1, keysyms: &[u32]) -> PlatformResult<()> {
    use std::io::Write;
    let mut text = keymap_text(keysyms).into_bytes();
    text.push(0);
    let fd = nix::sys::memfd::memfd_create("cua-keymap", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
        .map_err(|e| PlatformError::Other(format!("memfd: {e}")))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(&text)
        .map_err(|e| PlatformError::Other(format!("keymap: {e}")))?;
    // Format 1: XKB text, version 1.
    keyboard.keymap(1, file.as_fd(), text.len() as u32);
    Ok(())
}

wayland_client::delegate_noop!(State: ignore ZwlrVirtualPointerV1);
wayland_client::delegate_noop!(State: ignore ZwpVirtualKeyboardV1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keymap_maps_modifiers_and_writes_keysyms_in_hex() {
        let mut keysyms: Vec<u32> = MODIFIERS.iter().map(|m| m.0).collect();
        keysyms.push(0x41);
        keysyms.push(0x100263a);
        let text = keymap_text(&keysyms);
        assert!(text.contains("key <K9> { [ 0xffe1 ] };"), "{text}");
        assert!(text.contains("modifier_map Shift { <K9> };"), "{text}");
        assert!(text.contains("modifier_map Control { <K11> };"), "{text}");
        assert!(text.contains("key <K19> { [ 0x41 ] };"), "{text}");
        assert!(text.contains("key <K20> { [ 0x100263a ] };"), "{text}");
        assert!(text.contains("<K20> = 20;"), "{text}");
    }
}
