//! Input through the seat: a virtual pointer (`wlr-virtual-pointer`) and a virtual keyboard
//! (`virtual-keyboard`) with a keymap of cua's own (`keymap.rs`: a US keyboard, and spare
//! keys for other characters, so any character types whatever layout the seat has; X11
//! binds spare keycodes for the same end). The compositor sends these to the window under
//! the pointer and the focused window, as a person's input: the target is activated first
//! and the previously active window given back after.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use wayland_client::protocol::wl_pointer;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1;

use super::keymap::{KeyPlace, Keymap, SHIFT_L};
use super::{Session, State};
use crate::platform::{InputEvent, PlatformError, PlatformResult, WindowInfo};

/// Linux input button codes.
const BTN_LEFT: u32 = 0x110;
const BTN_RIGHT: u32 = 0x111;
const BTN_MIDDLE: u32 = 0x112;
const BTN_SIDE: u32 = 0x113;
const BTN_EXTRA: u32 = 0x114;
/// One wheel notch, in the axis units a mouse reports.
pub(super) const WHEEL_STEP: f64 = 15.0;
/// How long keys wait after the keymap changed, for the app to read it (see `map_keys`).
const NEW_KEYMAP_GRACE: Duration = Duration::from_millis(100);
/// How long activating a window may take before input goes ahead anyway.
const ACTIVATE_WAIT: Duration = Duration::from_millis(500);

/// The virtual devices, made on first use, and what they hold down.
#[derive(Default)]
pub struct Devices {
    pointer: Option<ZwlrVirtualPointerV1>,
    keyboard: Option<ZwpVirtualKeyboardV1>,
    keymap: Keymap,
    /// The keymap the compositor has (None: none uploaded yet).
    uploaded: Option<Keymap>,
    /// The modifier bits held down now.
    depressed: u32,
    /// Where this client last put the pointer (Wayland tells no client where it is).
    pub pointer_at: Option<(i32, i32)>,
    /// KWin's fake input was told who sends (once a connection).
    pub fake_authenticated: bool,
    started: Option<Instant>,
}

impl Session {
    /// Sends `events` (window-local) to `window` through the seat, with the window active.
    pub fn send_foreground(
        &mut self,
        window: &WindowInfo,
        events: &[InputEvent],
        toplevel: u64,
    ) -> PlatformResult<()> {
        let before = self.active_handle();
        let pointer_before = self.state.devices.pointer_at;
        if before != Some(toplevel) {
            self.activate(toplevel)?;
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
        if let Some(before) = before.filter(|b| *b != toplevel) {
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

    /// The active window's handle (a toplevel's or a KWin window's number).
    fn active_handle(&self) -> Option<u64> {
        let s = &self.state;
        s.toplevels
            .complete()
            .find(|t| t.activated)
            .map(|t| t.id)
            .or_else(|| s.plasma.list.iter().find(|w| w.active()).map(|w| w.id))
    }

    /// Makes window `id` (a toplevel's or a KWin window's number) the active one and waits
    /// (bounded) until the compositor says so.
    pub fn activate(&mut self, id: u64) -> PlatformResult<()> {
        if let Some(w) = self.state.plasma.by_id(id) {
            use wayland_protocols_plasma::plasma_window_management::client::org_kde_plasma_window_management::State;
            w.handle
                .set_state(State::Active as u32, State::Active as u32);
            return self.read_until("the activation of a window", ACTIVATE_WAIT, |s| {
                s.plasma.by_id(id).is_some_and(|w| w.active())
            });
        }
        let seat = self.state.seat.clone().ok_or_else(no_seat)?;
        let toplevel = self
            .state
            .toplevels
            .by_id(id)
            .ok_or(PlatformError::NoSuchWindow(id))?;
        toplevel.handle.activate(&seat);
        self.read_until("the activation of a window", ACTIVATE_WAIT, |s| {
            s.toplevels.by_id(id).is_some_and(|t| t.activated)
        })
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
        let (w, h) = self.state.output_size;
        if x < 0 || y < 0 || x as u32 >= w || y as u32 >= h {
            return Err(PlatformError::InvalidInput(format!(
                "({x}, {y}) is off the {w}x{h} output"
            )));
        }
        if self.uses_fake_input() {
            return self.fake_move(x, y);
        }
        let pointer = self.pointer()?;
        pointer.motion_absolute(self.state.devices.time(), x as u32, y as u32, w, h);
        pointer.frame();
        self.state.devices.pointer_at = Some((x, y));
        Ok(())
    }

    fn button(&mut self, button: u8, down: bool) -> PlatformResult<()> {
        if self.uses_fake_input() {
            return self.fake_button(button, down);
        }
        let pointer = self.pointer()?;
        let time = self.state.devices.time();
        if let Some((axis, notches)) = wheel(button) {
            if down {
                pointer.axis_source(wl_pointer::AxisSource::Wheel);
                pointer.axis_discrete(time, axis, WHEEL_STEP * notches as f64, notches);
                pointer.frame();
            }
            return Ok(());
        }
        let code = button_code(button)?;
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
        s.devices.uploaded = None;
        Ok(keyboard)
    }

    /// Puts every key of `events` in the keymap, before any is sent.
    ///
    /// An app reads a new keymap when it gets to the event that brings it, and a key read
    /// with an older one is lost. No event says an app has read its keymap, so a changed
    /// keymap alone waits `NEW_KEYMAP_GRACE`: the first keys of a process, and a character
    /// the US keys lack; the rest never wait (X11 binds spare keycodes the same way, for
    /// the same reason).
    pub fn map_keys(&mut self, events: &[InputEvent]) -> PlatformResult<()> {
        let wanted = InputEvent::keysyms(events);
        // KWin's fake input presses the compositor's own keys: no keymap to upload.
        if wanted.is_empty() || self.uses_fake_input() {
            return Ok(());
        }
        let keyboard = self.keyboard()?;
        let devices = &mut self.state.devices;
        devices.keymap.add(&wanted);
        if devices.uploaded.as_ref() != Some(&devices.keymap) {
            upload_keymap(&keyboard, &devices.keymap)?;
            devices.uploaded = Some(devices.keymap.clone());
            self.roundtrip()?;
            std::thread::sleep(NEW_KEYMAP_GRACE);
        }
        Ok(())
    }

    fn key(&mut self, keysym: u32, down: bool) -> PlatformResult<()> {
        if self.uses_fake_input() {
            return self.fake_key(keysym, down);
        }
        let keyboard = self.keyboard()?;
        let devices = &mut self.state.devices;
        let place = devices.keymap.place(keysym).ok_or_else(|| {
            PlatformError::InvalidInput(format!(
                "keysym {keysym:#x} is not in the keymap (too many distinct characters in one call)"
            ))
        })?;
        let time = devices.time();
        let shift = Keymap::modifier_bit(SHIFT_L).unwrap_or(1);
        let add_shift = devices.adds_shift(place);
        let shift_code = devices.keymap.place(SHIFT_L).map_or(42, |p| p.code);
        if add_shift && down {
            keyboard.key(time, shift_code, 1);
            keyboard.modifiers(devices.depressed | shift, 0, 0, 0);
        }
        keyboard.key(time, place.code, down as u32);
        if devices.track_modifier(keysym, down) {
            keyboard.modifiers(devices.depressed, 0, 0, 0);
        }
        if add_shift && !down {
            keyboard.key(time, shift_code, 0);
            keyboard.modifiers(devices.depressed, 0, 0, 0);
        }
        Ok(())
    }
}

impl Devices {
    /// Whether a key at `place` is pressed with shift added: a shifted symbol (`A`, `!`)
    /// is typed with shift held, unless the caller holds it.
    pub(super) fn adds_shift(&self, place: KeyPlace) -> bool {
        let shift = Keymap::modifier_bit(SHIFT_L).unwrap_or(1);
        place.shifted && self.depressed & shift == 0
    }

    /// Follows a modifier key going down or up; whether `keysym` is a modifier.
    pub(super) fn track_modifier(&mut self, keysym: u32, down: bool) -> bool {
        let Some(bit) = Keymap::modifier_bit(keysym) else {
            return false;
        };
        if down {
            self.depressed |= bit;
        } else {
            self.depressed &= !bit;
        }
        true
    }

    /// Event time in milliseconds, as the protocols want it.
    fn time(&mut self) -> u32 {
        let started = *self.started.get_or_insert_with(Instant::now);
        started.elapsed().as_millis() as u32
    }
}

/// X's wheel buttons as an axis and notches: 4 up, 5 down, 6 left, 7 right.
pub(super) fn wheel(button: u8) -> Option<(wl_pointer::Axis, i32)> {
    match button {
        4 => Some((wl_pointer::Axis::VerticalScroll, -1)),
        5 => Some((wl_pointer::Axis::VerticalScroll, 1)),
        6 => Some((wl_pointer::Axis::HorizontalScroll, -1)),
        7 => Some((wl_pointer::Axis::HorizontalScroll, 1)),
        _ => None,
    }
}

/// X's pointer button numbers as Linux input codes.
pub(super) fn button_code(button: u8) -> PlatformResult<u32> {
    match button {
        1 => Ok(BTN_LEFT),
        2 => Ok(BTN_MIDDLE),
        3 => Ok(BTN_RIGHT),
        8 => Ok(BTN_SIDE),
        9 => Ok(BTN_EXTRA),
        other => Err(PlatformError::InvalidInput(format!(
            "no pointer button {other} (1-9)"
        ))),
    }
}

fn is_pointer(event: &InputEvent) -> bool {
    matches!(event, InputEvent::Move { .. } | InputEvent::Button { .. })
}

fn no_seat() -> PlatformError {
    PlatformError::Unsupported("the Wayland compositor has no seat: no input is possible".into())
}

fn upload_keymap(keyboard: &ZwpVirtualKeyboardV1, keymap: &Keymap) -> PlatformResult<()> {
    use std::io::Write;
    let mut text = keymap.text().into_bytes();
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
