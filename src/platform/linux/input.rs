//! X11 input: synthetic events sent to one window (background: no focus, stacking or
//! pointer change) and XTest through the real devices (foreground: the window is activated
//! first, and the previous active window and pointer are restored after).
//!
//! GTK3 accepts synthetic events only with core device events (`GDK_CORE_DEVICE_EVENTS=1`,
//! which `launch_app` and the sandbox set), and pointer events only while the real pointer
//! is over its window; GTK4 requires XInput2 and ignores them, which is why element actions
//! go through AT-SPI instead (the input tools say which route can land: tools/input.rs).

use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ButtonPressEvent, ClientMessageEvent, ConnectionExt as _, EventMask, KeyButMask,
    KeyPressEvent, Motion, MotionNotifyEvent, Window,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::wrapper::ConnectionExt as _;

use super::x11::{Keymap, X11};
use crate::platform::{
    Delivery, FocusState, InputEvent, PlatformError, PlatformResult, WindowInfo,
};

const SHIFT: u16 = 1;
const CONTROL: u16 = 4;
const MOD1: u16 = 8;
const MOD4: u16 = 64;

/// How long keys wait after a character was first bound to a spare keycode, for the app
/// to re-read the keyboard map (see `X11::bind_missing`).
const NEW_BINDING_GRACE: Duration = Duration::from_millis(100);

/// The button bits of an X event state (Button1Mask … Button5Mask).
const BUTTON_BITS: u16 = 0x1f00;

fn button_bit(button: u8) -> u16 {
    1u16 << (7 + button.clamp(1, 5))
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

    /// Makes sure `keysym` has a keycode, for a call that sends the keys `wanted`: marks an
    /// existing binding of this connection as used, or binds a spare keycode (reusing the
    /// least recently used binding `wanted` does not need when none is free). Returns a new
    /// binding for the server to be told of.
    fn assign(&mut self, keysym: u32, wanted: &[u32]) -> PlatformResult<Option<(u8, Vec<u32>)>> {
        if let Some((code, _)) = self.lookup(keysym) {
            self.touch(code);
            return Ok(None);
        }
        let code = self
            .spare_keycode()
            .or_else(|| self.reusable(wanted))
            .ok_or_else(|| {
                PlatformError::Unsupported(
                    "no free keycode to type this character (too many different characters the keyboard map lacks in one call)".into(),
                )
            })?;
        let mut syms = vec![0u32; self.per_keycode];
        syms[0] = keysym;
        if self.per_keycode > 1 {
            syms[1] = keysym;
        }
        self.set(code, &syms);
        self.bound.retain(|c| *c != code);
        self.bound.push(code);
        Ok(Some((code, syms)))
    }

    /// A keycode this connection bound that `wanted` does not need, least recently used.
    fn reusable(&self, wanted: &[u32]) -> Option<u8> {
        self.bound.iter().copied().find(|code| {
            let syms = self.syms(*code);
            !wanted.contains(&syms[0])
        })
    }

    fn syms(&self, code: u8) -> &[u32] {
        let start = (code - self.min_keycode) as usize * self.per_keycode;
        &self.keysyms[start..start + self.per_keycode]
    }

    fn set(&mut self, code: u8, syms: &[u32]) {
        let start = (code - self.min_keycode) as usize * self.per_keycode;
        self.keysyms[start..start + self.per_keycode].copy_from_slice(syms);
    }

    /// Marks one of this connection's bindings as just used (a key of the map itself is
    /// not one).
    fn touch(&mut self, code: u8) {
        if let Some(i) = self.bound.iter().position(|c| *c == code) {
            self.bound.remove(i);
            self.bound.push(code);
        }
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

/// Where a synthetic event happens: the window, the point on the screen and in the
/// window, and the buttons and modifiers held.
struct Spot {
    root: Window,
    window: Window,
    screen: (i16, i16),
    local: (i16, i16),
    state: u16,
}

/// One of the X core input events (their fields are the same) at a [`Spot`].
macro_rules! event_at {
    ($kind:ident, $spot:expr, $response:expr, $detail:expr) => {
        $kind {
            response_type: $response,
            detail: $detail,
            sequence: 0,
            time: x11rb::CURRENT_TIME,
            root: $spot.root,
            event: $spot.window,
            child: x11rb::NONE,
            root_x: $spot.screen.0,
            root_y: $spot.screen.1,
            event_x: $spot.local.0,
            event_y: $spot.local.1,
            state: KeyButMask::from($spot.state),
            same_screen: true,
        }
    };
}

impl Spot {
    /// The pointer entering (`true`) or leaving this spot's window.
    fn crossing(&self, enter: bool) -> x11rb::protocol::xproto::EnterNotifyEvent {
        use x11rb::protocol::xproto::{
            ENTER_NOTIFY_EVENT, EnterNotifyEvent, LEAVE_NOTIFY_EVENT, NotifyDetail, NotifyMode,
        };
        EnterNotifyEvent {
            response_type: if enter {
                ENTER_NOTIFY_EVENT
            } else {
                LEAVE_NOTIFY_EVENT
            },
            detail: NotifyDetail::ANCESTOR,
            sequence: 0,
            time: x11rb::CURRENT_TIME,
            root: self.root,
            event: self.window,
            child: x11rb::NONE,
            root_x: self.screen.0,
            root_y: self.screen.1,
            event_x: self.local.0,
            event_y: self.local.1,
            state: KeyButMask::from(self.state),
            mode: NotifyMode::NORMAL,
            same_screen_focus: 0b11,
        }
    }

    fn motion(&self) -> MotionNotifyEvent {
        use x11rb::protocol::xproto::MOTION_NOTIFY_EVENT;
        event_at!(MotionNotifyEvent, self, MOTION_NOTIFY_EVENT, Motion::NORMAL)
    }

    /// A button press or release, and the mask it is sent under.
    fn button(&self, button: u8, down: bool) -> (ButtonPressEvent, EventMask) {
        use x11rb::protocol::xproto::{BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT};
        let (response, mask) = match down {
            true => (BUTTON_PRESS_EVENT, EventMask::BUTTON_PRESS),
            false => (BUTTON_RELEASE_EVENT, EventMask::BUTTON_RELEASE),
        };
        (event_at!(ButtonPressEvent, self, response, button), mask)
    }

    /// A key press or release, and the mask it is sent under.
    fn key(&self, code: u8, down: bool) -> (KeyPressEvent, EventMask) {
        use x11rb::protocol::xproto::{KEY_PRESS_EVENT, KEY_RELEASE_EVENT};
        let (response, mask) = match down {
            true => (KEY_PRESS_EVENT, EventMask::KEY_PRESS),
            false => (KEY_RELEASE_EVENT, EventMask::KEY_RELEASE),
        };
        (event_at!(KeyPressEvent, self, response, code), mask)
    }
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
        // `chunks(0)` panics: a server that maps no keysym per keycode has no keyboard.
        if reply.keysyms_per_keycode == 0 {
            return Err(x_err(
                "keyboard mapping",
                "the X server reports 0 keysyms per keycode (no keyboard to type with)",
            ));
        }
        *guard = Some(Keymap {
            min_keycode: min,
            per_keycode: reply.keysyms_per_keycode as usize,
            keysyms: reply.keysyms,
            bound: Vec::new(),
        });
        Ok(())
    }

    /// Keycode (and whether Shift is needed) for a keysym `bind_missing` made sure of.
    fn keycode_for(&self, keysym: u32) -> PlatformResult<(u8, bool)> {
        self.load_keymap()?;
        let guard = self.keymap.lock().unwrap();
        guard
            .as_ref()
            .unwrap()
            .lookup(keysym)
            .ok_or_else(|| PlatformError::Other(format!("x11: keysym {keysym:#x} has no keycode")))
    }

    /// Binds a spare keycode to every key in `events` the keyboard map lacks (é, ✓, …),
    /// before any key is sent, and keeps the bindings afterwards.
    ///
    /// Why they stay: an app reads a changed map when it gets to the MappingNotify, which
    /// Chromium does lazily; a key it reads with an older map is dropped. Unbinding 50 ms
    /// after the keys lost one character in 5 on a loaded machine. A binding that stays
    /// cannot be read too late; the least recently used one is reused once the spare
    /// keycodes run out (its keys were read back by the call that sent them), and all are
    /// undone when the connection drops. Only a first binding still races the app's map
    /// refresh: there is no event that says an app has re-read its map, so that case
    /// alone waits `NEW_BINDING_GRACE`.
    fn bind_missing(&self, events: &[InputEvent]) -> PlatformResult<()> {
        self.load_keymap()?;
        let mut guard = self.keymap.lock().unwrap();
        let map = guard.as_mut().unwrap();
        let wanted = InputEvent::keysyms(events);
        let mut bound_now = false;
        for keysym in &wanted {
            if let Some((code, syms)) = map.assign(*keysym, &wanted)? {
                self.conn
                    .change_keyboard_mapping(1, code, map.per_keycode as u8, &syms)
                    .map_err(|e| x_err("bind keycode", e))?;
                bound_now = true;
            }
        }
        if bound_now {
            self.conn.sync().map_err(|e| x_err("bind keycode", e))?;
            drop(guard);
            std::thread::sleep(NEW_BINDING_GRACE);
        }
        Ok(())
    }

    /// Undoes this connection's temporary bindings (on drop).
    pub(super) fn unbind_all(&self) {
        let Ok(mut guard) = self.keymap.lock() else {
            return;
        };
        let Some(map) = guard.as_mut() else { return };
        let empty = vec![0u32; map.per_keycode];
        for code in std::mem::take(&mut map.bound) {
            let _ = self
                .conn
                .change_keyboard_mapping(1, code, map.per_keycode as u8, &empty);
            map.set(code, &empty);
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
        self.bind_missing(events)?;
        match delivery {
            Delivery::Background => self.send_synthetic(id, (origin.x, origin.y), events),
            Delivery::Foreground => self.send_xtest(id, (origin.x, origin.y), events),
        }
    }

    fn send_synthetic(
        &self,
        id: Window,
        origin: (i32, i32),
        events: &[InputEvent],
    ) -> PlatformResult<()> {
        // Buttons an earlier call left held are held in these events too.
        let mut state: u16 = self.held.lock().unwrap().mask;
        let mut pos = (0i32, 0i32);
        // Toolkits with a window per widget (Tk, Xt, Motif) read a button's events on
        // the button's own window, as the server would deliver a real click: each pointer
        // event goes to the deepest window under its point (the top-level itself for GTK,
        // Qt and browsers, which draw their widgets in one window).
        // Such a widget takes a click only once the pointer has entered it (a Tk button
        // invokes on release only while "active"), so a window the pointer moves into
        // first gets an EnterNotify.
        let mut under = (id, (0i32, 0i32));
        // A point of the top-level as a spot in `window`, whose origin is at `offset`.
        let spot = |(window, offset): (Window, (i32, i32)), (x, y): (i32, i32), state| Spot {
            root: self.root,
            window,
            screen: ((origin.0 + x) as i16, (origin.1 + y) as i16),
            local: ((x - offset.0) as i16, (y - offset.1) as i16),
            state,
        };
        for ev in events {
            if let InputEvent::Move { x, y } | InputEvent::Button { x, y, .. } = ev {
                let now = self.deepest_window_at(id, (*x, *y));
                if now.0 != under.0 && now.0 != id {
                    self.conn
                        .send_event(
                            true,
                            now.0,
                            EventMask::ENTER_WINDOW,
                            spot(now, (*x, *y), state).crossing(true),
                        )
                        .map_err(|e| x_err("send enter", e))?;
                }
                under = now;
            }
            let at = |point, state| spot(under, point, state);
            let window = under.0;
            match ev {
                InputEvent::Pause(d) => {
                    self.conn.flush().map_err(|e| x_err("flush", e))?;
                    std::thread::sleep(*d);
                }
                InputEvent::Move { x, y } => {
                    pos = (*x, *y);
                    self.conn
                        .send_event(
                            true,
                            window,
                            EventMask::POINTER_MOTION,
                            at(pos, state).motion(),
                        )
                        .map_err(|e| x_err("send motion", e))?;
                }
                InputEvent::Button { x, y, button, down } => {
                    pos = (*x, *y);
                    let (event, mask) = at(pos, state).button(*button, *down);
                    self.conn
                        .send_event(true, window, mask, event)
                        .map_err(|e| x_err("send button", e))?;
                    let bit = button_bit(*button);
                    if *down { state |= bit } else { state &= !bit }
                }
                InputEvent::Key { keysym, down } => {
                    let (code, shift) = self.keycode_for(*keysym)?;
                    let with_shift = state | if shift { SHIFT } else { 0 };
                    let (event, mask) = at(pos, with_shift).key(code, *down);
                    self.conn
                        .send_event(true, id, mask, event)
                        .map_err(|e| x_err("send key", e))?;
                    let m = modifier_mask(*keysym);
                    if *down { state |= m } else { state &= !m }
                }
            }
        }
        // The pointer did not really come: a widget entered above is left again, so it
        // does not stay lit as if hovered (unless a button is still held in a gesture).
        if under.0 != id && state & BUTTON_BITS == 0 {
            let leave = spot(under, pos, state).crossing(false);
            self.conn
                .send_event(true, under.0, EventMask::LEAVE_WINDOW, leave)
                .map_err(|e| x_err("send leave", e))?;
        }
        self.conn.flush().map_err(|e| x_err("flush", e))?;
        self.held.lock().unwrap().mask = state & BUTTON_BITS;
        Ok(())
    }

    /// The deepest mapped window of `top` under `point` (top-local), and its origin in
    /// `top`'s coordinates; `top` itself when no child window holds the point.
    fn deepest_window_at(&self, top: Window, point: (i32, i32)) -> (Window, (i32, i32)) {
        let mut found = (top, (0, 0));
        // Bounded: a window tree is never this deep, and a broken reply must not loop.
        for _ in 0..32 {
            let (window, _) = found;
            let reply = self
                .conn
                .translate_coordinates(top, window, point.0 as i16, point.1 as i16)
                .ok()
                .and_then(|c| c.reply().ok());
            let Some(child) = reply.map(|r| r.child).filter(|c| *c != x11rb::NONE) else {
                break;
            };
            let origin = self
                .conn
                .translate_coordinates(child, top, 0, 0)
                .ok()
                .and_then(|c| c.reply().ok());
            let Some(origin) = origin else { break };
            found = (child, (i32::from(origin.dst_x), i32::from(origin.dst_y)));
        }
        found
    }

    fn send_xtest(
        &self,
        id: Window,
        origin: (i32, i32),
        events: &[InputEvent],
    ) -> PlatformResult<()> {
        // What to restore: as it was before this batch, or before the held gesture began.
        let held_since = self.held.lock().unwrap().restore.take();
        let (previous_active, previous_pointer) = match held_since {
            Some(before) => before,
            None => (self.active_window(), self.cursor_position()?),
        };
        if self.active_window() != Some(id) {
            self.activate(id)?;
        }
        let mut buttons = self.held.lock().unwrap().mask;
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
                        let bit = button_bit(*button);
                        if *down {
                            buttons |= bit
                        } else {
                            buttons &= !bit
                        }
                    }
                    InputEvent::Key { keysym, down } => {
                        let (code, shift) = self.keycode_for(*keysym)?;
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
        // A button still held: the gesture goes on in a later call, which restores.
        if buttons & BUTTON_BITS != 0 && run.is_ok() {
            let mut held = self.held.lock().unwrap();
            held.mask = buttons & BUTTON_BITS;
            held.restore = Some((previous_active, previous_pointer));
            return run;
        }
        // A failed batch must not leave a real button down.
        for button in 1..=5u8 {
            if buttons & button_bit(button) != 0 {
                let _ = self.fake(5, button, 0, 0);
            }
        }
        self.held.lock().unwrap().mask = 0;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Keycodes 8..=11: `a`/`A` and `b`/`B` mapped, two spare.
    fn keymap() -> Keymap {
        Keymap {
            min_keycode: 8,
            per_keycode: 2,
            keysyms: vec![0x61, 0x41, 0x62, 0x42, 0, 0, 0, 0],
            bound: Vec::new(),
        }
    }

    #[test]
    fn missing_characters_keep_their_keycode_and_reuse_the_least_recently_used_one() {
        let mut map = keymap();
        let (e_acute, check, star) = (0xe9, 0x1002713, 0x1002605);
        assert!(
            map.assign(0x61, &[0x61]).unwrap().is_none(),
            "mapped keys stay"
        );
        assert_eq!(map.assign(e_acute, &[e_acute]).unwrap().unwrap().0, 11);
        assert_eq!(map.assign(check, &[check]).unwrap().unwrap().0, 10);
        // é again: still bound, nothing to tell the server; ✓ is now the older one.
        assert!(map.assign(e_acute, &[e_acute]).unwrap().is_none());
        assert_eq!(map.lookup(e_acute), Some((11, false)));
        let (code, syms) = map.assign(star, &[star]).unwrap().unwrap();
        assert_eq!((code, syms), (10, vec![star, star]));
        assert_eq!(map.lookup(check), None);
        // A call that needs all three cannot have them at once, and says so.
        assert!(map.assign(check, &[e_acute, star, check]).is_err());
        assert_eq!(
            map.lookup(0x62),
            Some((9, false)),
            "the map's own keys are never reused"
        );
    }
}
