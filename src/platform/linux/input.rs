//! X11 input: synthetic events sent to one window (background: no focus, stacking or
//! pointer change) and XTest through the real devices (foreground: the window is activated
//! first, and the previous active window and pointer are restored after).
//!
//! GTK3 accepts synthetic events only with core device events (`GDK_CORE_DEVICE_EVENTS=1`,
//! which `launch_app` and the sandbox set); GTK4 requires XInput2 and ignores them, which is
//! why element actions go through AT-SPI instead.

use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ButtonPressEvent, ClientMessageEvent, ConnectionExt as _, EventMask, KeyButMask,
    KeyPressEvent, Motion, MotionNotifyEvent, Window,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::wrapper::ConnectionExt as _;

use super::x11::X11;
use crate::platform::{
    Delivery, FocusState, InputEvent, PlatformError, PlatformResult, WindowInfo,
};

const SHIFT: u16 = 1;
const CONTROL: u16 = 4;
const MOD1: u16 = 8;
const MOD4: u16 = 64;

/// Keycode → keysyms as the server maps them.
pub struct Keymap {
    min_keycode: u8,
    per_keycode: usize,
    keysyms: Vec<u32>,
}

impl Keymap {
    /// The keycode for a keysym and whether Shift selects it.
    fn lookup(&self, keysym: u32) -> Option<(u8, bool)> {
        for (i, syms) in self.keysyms.chunks(self.per_keycode).enumerate() {
            let code = self.min_keycode as usize + i;
            if syms.first() == Some(&keysym) {
                return Some((code as u8, false));
            }
            if syms.get(1) == Some(&keysym) {
                return Some((code as u8, true));
            }
        }
        None
    }

    fn spare_keycode(&self) -> Option<u8> {
        self.keysyms
            .chunks(self.per_keycode)
            .enumerate()
            .rev()
            .find(|(_, syms)| syms.iter().all(|k| *k == 0))
            .map(|(i, _)| (self.min_keycode as usize + i) as u8)
    }
}

fn modifier_mask(keysym: u32) -> u16 {
    match keysym {
        0xffe1 | 0xffe2 => SHIFT,
        0xffe3 | 0xffe4 => CONTROL,
        0xffe9 | 0xffea => MOD1,
        0xffeb | 0xffec => MOD4,
        _ => 0,
    }
}

fn x_err(context: &str, e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Other(format!("x11: {context}: {e}"))
}

impl X11 {
    fn load_keymap(&self) -> PlatformResult<()> {
        let mut guard = self.keymap.lock().unwrap();
        if guard.is_some() {
            return Ok(());
        }
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let reply = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(|e| x_err("keyboard mapping", e))?
            .reply()
            .map_err(|e| x_err("keyboard mapping", e))?;
        *guard = Some(Keymap {
            min_keycode: min,
            per_keycode: reply.keysyms_per_keycode as usize,
            keysyms: reply.keysyms,
        });
        Ok(())
    }

    /// Keycode (and whether Shift is needed) for a keysym, binding a spare keycode for
    /// characters the keyboard map lacks (é, ✓, …). Returns the temporary binding to undo.
    fn keycode_for(&self, keysym: u32) -> PlatformResult<(u8, bool, Option<u8>)> {
        self.load_keymap()?;
        let mut guard = self.keymap.lock().unwrap();
        let map = guard.as_mut().unwrap();
        if let Some((code, shift)) = map.lookup(keysym) {
            return Ok((code, shift, None));
        }
        let spare = map.spare_keycode().ok_or_else(|| {
            PlatformError::Unsupported("no free keycode to type this character".into())
        })?;
        let mut syms = vec![0u32; map.per_keycode];
        syms[0] = keysym;
        if map.per_keycode > 1 {
            syms[1] = keysym;
        }
        self.conn
            .change_keyboard_mapping(1, spare, map.per_keycode as u8, &syms)
            .map_err(|e| x_err("bind keycode", e))?;
        self.conn.sync().map_err(|e| x_err("bind keycode", e))?;
        let start = (spare - map.min_keycode) as usize * map.per_keycode;
        map.keysyms[start..start + map.per_keycode].copy_from_slice(&syms);
        Ok((spare, false, Some(spare)))
    }

    fn unbind(&self, codes: &[u8]) {
        let mut guard = self.keymap.lock().unwrap();
        let Some(map) = guard.as_mut() else { return };
        for code in codes {
            let empty = vec![0u32; map.per_keycode];
            let _ = self
                .conn
                .change_keyboard_mapping(1, *code, map.per_keycode as u8, &empty);
            let start = (*code - map.min_keycode) as usize * map.per_keycode;
            map.keysyms[start..start + map.per_keycode].copy_from_slice(&empty);
        }
        let _ = self.conn.flush();
    }

    pub fn send_input(
        &self,
        window: &WindowInfo,
        events: &[InputEvent],
        delivery: Delivery,
    ) -> PlatformResult<()> {
        let id = window.window_id as Window;
        let origin = self.client_bounds(id)?;
        let mut bound = Vec::new();
        let result = match delivery {
            Delivery::Background => {
                self.send_synthetic(id, (origin.x, origin.y), events, &mut bound)
            }
            Delivery::Foreground => self.send_xtest(id, (origin.x, origin.y), events, &mut bound),
        };
        if !bound.is_empty() {
            // Let the app read the key before its temporary keycode goes away.
            std::thread::sleep(Duration::from_millis(50));
            self.unbind(&bound);
        }
        result
    }

    fn send_synthetic(
        &self,
        id: Window,
        origin: (i32, i32),
        events: &[InputEvent],
        bound: &mut Vec<u8>,
    ) -> PlatformResult<()> {
        let mut state: u16 = 0;
        let mut pos = (0i32, 0i32);
        for ev in events {
            match ev {
                InputEvent::Pause(d) => {
                    self.conn.flush().map_err(|e| x_err("flush", e))?;
                    std::thread::sleep(*d);
                }
                InputEvent::Move { x, y } => {
                    pos = (*x, *y);
                    let event = MotionNotifyEvent {
                        response_type: x11rb::protocol::xproto::MOTION_NOTIFY_EVENT,
                        detail: Motion::NORMAL,
                        sequence: 0,
                        time: x11rb::CURRENT_TIME,
                        root: self.root,
                        event: id,
                        child: x11rb::NONE,
                        root_x: (origin.0 + x) as i16,
                        root_y: (origin.1 + y) as i16,
                        event_x: *x as i16,
                        event_y: *y as i16,
                        state: KeyButMask::from(state),
                        same_screen: true,
                    };
                    self.conn
                        .send_event(true, id, EventMask::POINTER_MOTION, event)
                        .map_err(|e| x_err("send motion", e))?;
                }
                InputEvent::Button { x, y, button, down } => {
                    pos = (*x, *y);
                    let event = ButtonPressEvent {
                        response_type: if *down {
                            x11rb::protocol::xproto::BUTTON_PRESS_EVENT
                        } else {
                            x11rb::protocol::xproto::BUTTON_RELEASE_EVENT
                        },
                        detail: *button,
                        sequence: 0,
                        time: x11rb::CURRENT_TIME,
                        root: self.root,
                        event: id,
                        child: x11rb::NONE,
                        root_x: (origin.0 + x) as i16,
                        root_y: (origin.1 + y) as i16,
                        event_x: *x as i16,
                        event_y: *y as i16,
                        state: KeyButMask::from(state),
                        same_screen: true,
                    };
                    let mask = if *down {
                        EventMask::BUTTON_PRESS
                    } else {
                        EventMask::BUTTON_RELEASE
                    };
                    self.conn
                        .send_event(true, id, mask, event)
                        .map_err(|e| x_err("send button", e))?;
                    let bit = 1u16 << (7 + *button.min(&5));
                    if *down { state |= bit } else { state &= !bit }
                }
                InputEvent::Key { keysym, down } => {
                    let (code, shift, temp) = self.keycode_for(*keysym)?;
                    bound.extend(temp);
                    let event_state = state | if shift { SHIFT } else { 0 };
                    let event = KeyPressEvent {
                        response_type: if *down {
                            x11rb::protocol::xproto::KEY_PRESS_EVENT
                        } else {
                            x11rb::protocol::xproto::KEY_RELEASE_EVENT
                        },
                        detail: code,
                        sequence: 0,
                        time: x11rb::CURRENT_TIME,
                        root: self.root,
                        event: id,
                        child: x11rb::NONE,
                        root_x: (origin.0 + pos.0) as i16,
                        root_y: (origin.1 + pos.1) as i16,
                        event_x: pos.0 as i16,
                        event_y: pos.1 as i16,
                        state: KeyButMask::from(event_state),
                        same_screen: true,
                    };
                    let mask = if *down {
                        EventMask::KEY_PRESS
                    } else {
                        EventMask::KEY_RELEASE
                    };
                    self.conn
                        .send_event(true, id, mask, event)
                        .map_err(|e| x_err("send key", e))?;
                    let m = modifier_mask(*keysym);
                    if *down { state |= m } else { state &= !m }
                }
            }
        }
        self.conn.flush().map_err(|e| x_err("flush", e))?;
        Ok(())
    }

    fn send_xtest(
        &self,
        id: Window,
        origin: (i32, i32),
        events: &[InputEvent],
        bound: &mut Vec<u8>,
    ) -> PlatformResult<()> {
        let previous_active = self.active_window();
        let previous_pointer = self.cursor_position()?;
        if previous_active != Some(id) {
            self.activate(id)?;
        }
        let run = (|| -> PlatformResult<()> {
            for ev in events {
                match ev {
                    InputEvent::Pause(d) => {
                        self.conn.flush().map_err(|e| x_err("flush", e))?;
                        std::thread::sleep(*d);
                    }
                    InputEvent::Move { x, y } => self.fake(6, 0, origin.0 + x, origin.1 + y)?,
                    InputEvent::Button { x, y, button, down } => {
                        self.fake(6, 0, origin.0 + x, origin.1 + y)?;
                        self.fake(if *down { 4 } else { 5 }, *button, 0, 0)?;
                    }
                    InputEvent::Key { keysym, down } => {
                        let (code, shift, temp) = self.keycode_for(*keysym)?;
                        bound.extend(temp);
                        let shift_code = if shift {
                            Some(self.keycode_for(0xffe1)?.0)
                        } else {
                            None
                        };
                        if *down {
                            if let Some(s) = shift_code {
                                self.fake(2, s, 0, 0)?;
                            }
                            self.fake(2, code, 0, 0)?;
                        } else {
                            self.fake(3, code, 0, 0)?;
                            if let Some(s) = shift_code {
                                self.fake(3, s, 0, 0)?;
                            }
                        }
                    }
                }
            }
            self.conn.sync().map_err(|e| x_err("sync", e))
        })();
        // Restore what the user had, whatever happened.
        if let Some(prev) = previous_active.filter(|p| *p != id) {
            let _ = self.activate(prev);
        }
        let _ = self.warp(previous_pointer.0, previous_pointer.1);
        run
    }

    fn fake(&self, kind: u8, detail: u8, x: i32, y: i32) -> PlatformResult<()> {
        self.conn
            .xtest_fake_input(
                kind,
                detail,
                x11rb::CURRENT_TIME,
                self.root,
                x as i16,
                y as i16,
                0,
            )
            .map_err(|e| x_err("xtest", e))?;
        Ok(())
    }

    /// Asks the window manager to activate a window and waits (bounded) until it has.
    pub fn activate(&self, id: Window) -> PlatformResult<()> {
        let current = self.active_window().unwrap_or(0);
        let event =
            ClientMessageEvent::new(32, id, self.atoms.net_active_window, [2, 0, current, 0, 0]);
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )
            .map_err(|e| x_err("activate", e))?;
        self.conn.flush().map_err(|e| x_err("activate", e))?;
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if self.active_window() == Some(id) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(PlatformError::Other(format!(
            "window {id} did not become active"
        )))
    }

    pub fn warp(&self, x: i32, y: i32) -> PlatformResult<()> {
        self.fake(6, 0, x, y)?;
        self.conn.sync().map_err(|e| x_err("warp", e))
    }

    pub fn focus_state(&self) -> PlatformResult<FocusState> {
        let focus = self
            .conn
            .get_input_focus()
            .map_err(|e| x_err("input focus", e))?
            .reply()
            .map_err(|e| x_err("input focus", e))?;
        let stacking = self
            .get_u32s(
                self.root,
                self.atoms.net_client_list_stacking,
                AtomEnum::WINDOW.into(),
            )?
            .into_iter()
            .map(u64::from)
            .collect();
        Ok(FocusState {
            active_window: self.active_window().map(u64::from),
            input_focus: focus.focus as u64,
            stacking,
            pointer: self.cursor_position()?,
        })
    }
}
