//! The virtual keyboard's keymap, made here: a US keyboard (each key at its evdev keycode,
//! with its shifted symbol on level two), plus one spare key per other character a text
//! asks for (é, ✓), added as they come.
//!
//! The US keys never move: every cua process uploads them at the same keycodes. Apps
//! cache which keycodes give a symbol (GTK 3's shortcut table is not rebuilt when a keymap
//! changes): with keycodes handed out in order of use, a ctrl+a sent after a keymap that
//! had put `a` elsewhere was not taken as a shortcut. Web pages read the key's position
//! too (`KeyboardEvent.code`), which is then a real keyboard's.

/// A key of the US layout: XKB keycode (evdev + 8), its symbol, its shifted symbol.
const US: &[(u32, u32, Option<u32>)] = &[
    (9, 0xff1b, None),      // Escape
    (10, 0x31, Some(0x21)), // 1 !
    (11, 0x32, Some(0x40)), // 2 @
    (12, 0x33, Some(0x23)), // 3 #
    (13, 0x34, Some(0x24)), // 4 $
    (14, 0x35, Some(0x25)), // 5 %
    (15, 0x36, Some(0x5e)), // 6 ^
    (16, 0x37, Some(0x26)), // 7 &
    (17, 0x38, Some(0x2a)), // 8 *
    (18, 0x39, Some(0x28)), // 9 (
    (19, 0x30, Some(0x29)), // 0 )
    (20, 0x2d, Some(0x5f)), // - _
    (21, 0x3d, Some(0x2b)), // = +
    (22, 0xff08, None),     // BackSpace
    (23, 0xff09, None),     // Tab
    (24, 0x71, Some(0x51)), // q Q
    (25, 0x77, Some(0x57)), // w W
    (26, 0x65, Some(0x45)), // e E
    (27, 0x72, Some(0x52)), // r R
    (28, 0x74, Some(0x54)), // t T
    (29, 0x79, Some(0x59)), // y Y
    (30, 0x75, Some(0x55)), // u U
    (31, 0x69, Some(0x49)), // i I
    (32, 0x6f, Some(0x4f)), // o O
    (33, 0x70, Some(0x50)), // p P
    (34, 0x5b, Some(0x7b)), // [ {
    (35, 0x5d, Some(0x7d)), // ] }
    (36, 0xff0d, None),     // Return
    (37, 0xffe3, None),     // Control_L
    (38, 0x61, Some(0x41)), // a A
    (39, 0x73, Some(0x53)), // s S
    (40, 0x64, Some(0x44)), // d D
    (41, 0x66, Some(0x46)), // f F
    (42, 0x67, Some(0x47)), // g G
    (43, 0x68, Some(0x48)), // h H
    (44, 0x6a, Some(0x4a)), // j J
    (45, 0x6b, Some(0x4b)), // k K
    (46, 0x6c, Some(0x4c)), // l L
    (47, 0x3b, Some(0x3a)), // ; :
    (48, 0x27, Some(0x22)), // ' "
    (49, 0x60, Some(0x7e)), // ` ~
    (50, 0xffe1, None),     // Shift_L
    (51, 0x5c, Some(0x7c)), // \ |
    (52, 0x7a, Some(0x5a)), // z Z
    (53, 0x78, Some(0x58)), // x X
    (54, 0x63, Some(0x43)), // c C
    (55, 0x76, Some(0x56)), // v V
    (56, 0x62, Some(0x42)), // b B
    (57, 0x6e, Some(0x4e)), // n N
    (58, 0x6d, Some(0x4d)), // m M
    (59, 0x2c, Some(0x3c)), // , <
    (60, 0x2e, Some(0x3e)), // . >
    (61, 0x2f, Some(0x3f)), // / ?
    (62, 0xffe2, None),     // Shift_R
    (63, 0xffaa, None),     // KP_Multiply
    (64, 0xffe9, None),     // Alt_L
    (65, 0x20, None),       // space
    (66, 0xffe5, None),     // Caps_Lock
    (67, 0xffbe, None),     // F1
    (68, 0xffbf, None),     // F2
    (69, 0xffc0, None),     // F3
    (70, 0xffc1, None),     // F4
    (71, 0xffc2, None),     // F5
    (72, 0xffc3, None),     // F6
    (73, 0xffc4, None),     // F7
    (74, 0xffc5, None),     // F8
    (75, 0xffc6, None),     // F9
    (76, 0xffc7, None),     // F10
    (77, 0xff7f, None),     // Num_Lock
    (78, 0xff14, None),     // Scroll_Lock
    (82, 0xffad, None),     // KP_Subtract
    (86, 0xffab, None),     // KP_Add
    (92, 0xfe03, None),     // ISO_Level3_Shift
    (95, 0xffc8, None),     // F11
    (96, 0xffc9, None),     // F12
    (104, 0xff8d, None),    // KP_Enter
    (105, 0xffe4, None),    // Control_R
    (106, 0xffaf, None),    // KP_Divide
    (107, 0xff61, None),    // Print
    (108, 0xffea, None),    // Alt_R
    (110, 0xff50, None),    // Home
    (111, 0xff52, None),    // Up
    (112, 0xff55, None),    // Prior
    (113, 0xff51, None),    // Left
    (114, 0xff53, None),    // Right
    (115, 0xff57, None),    // End
    (116, 0xff54, None),    // Down
    (117, 0xff56, None),    // Next
    (118, 0xff63, None),    // Insert
    (119, 0xffff, None),    // Delete
    (127, 0xff13, None),    // Pause
    (133, 0xffeb, None),    // Super_L
    (134, 0xffec, None),    // Super_R
    (135, 0xff67, None),    // Menu
];

/// Modifier keysyms and the real modifier each sets: its name in the keymap and its bit
/// in the state a client is sent.
const MODIFIERS: &[(u32, &str, u32)] = &[
    (0xffe1, "Shift", 1 << 0),   // Shift_L
    (0xffe2, "Shift", 1 << 0),   // Shift_R
    (0xffe3, "Control", 1 << 2), // Control_L
    (0xffe4, "Control", 1 << 2), // Control_R
    (0xffe9, "Mod1", 1 << 3),    // Alt_L
    (0xffea, "Mod1", 1 << 3),    // Alt_R
    (0xffe7, "Mod1", 1 << 3),    // Meta_L (a spare key)
    (0xffeb, "Mod4", 1 << 6),    // Super_L
    (0xffec, "Mod4", 1 << 6),    // Super_R
    (0xfe03, "Mod5", 1 << 7),    // ISO_Level3_Shift
];

pub const SHIFT_L: u32 = 0xffe1;
/// Spare keys for characters the US layout lacks (a keycode above 255 is not one every
/// client takes).
const SPARE: std::ops::RangeInclusive<u32> = 160..=255;

/// Where a keysym is on the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPlace {
    /// Wayland's key code (evdev: XKB's minus 8).
    pub code: u32,
    /// Shift must be down for it.
    pub shifted: bool,
}

/// The keymap: the US keys, and the spare keys given out so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Keymap {
    /// Keysyms on spare keys, keycode `SPARE.start() + i` for entry `i`.
    extras: Vec<u32>,
}

impl Keymap {
    /// Where `keysym` is, if the keymap has it.
    pub fn place(&self, keysym: u32) -> Option<KeyPlace> {
        if let Some((code, base, _)) = US.iter().find(|k| k.1 == keysym || k.2 == Some(keysym)) {
            return Some(KeyPlace {
                code: code - 8,
                shifted: *base != keysym,
            });
        }
        let i = self.extras.iter().position(|k| *k == keysym)?;
        Some(KeyPlace {
            code: SPARE.start() + i as u32 - 8,
            shifted: false,
        })
    }

    /// Gives each of `keysyms` the keymap lacks a spare key; says whether the keymap
    /// changed. When the spare keys run out, the ones this call does not need go.
    pub fn add(&mut self, keysyms: &[u32]) -> bool {
        let missing: Vec<u32> = keysyms
            .iter()
            .copied()
            .filter(|k| self.place(*k).is_none())
            .collect();
        if missing.is_empty() {
            return false;
        }
        let room = SPARE.clone().count();
        if self.extras.len() + missing.len() > room {
            self.extras.retain(|k| keysyms.contains(k));
        }
        for k in missing {
            if !self.extras.contains(&k) && self.extras.len() < room {
                self.extras.push(k);
            }
        }
        true
    }

    /// The modifier bit a keysym sets, if it is a modifier.
    pub fn modifier_bit(keysym: u32) -> Option<u32> {
        MODIFIERS.iter().find(|m| m.0 == keysym).map(|m| m.2)
    }

    /// The keymap in XKB's text format.
    pub fn text(&self) -> String {
        let mut keys: Vec<(u32, Vec<u32>)> = US
            .iter()
            .map(|(code, base, shifted)| (*code, std::iter::once(*base).chain(*shifted).collect()))
            .collect();
        keys.extend(
            self.extras
                .iter()
                .enumerate()
                .map(|(i, k)| (SPARE.start() + i as u32, vec![*k])),
        );
        // Meta_L has no US key: a spare key past the extras' room would be lost, so it
        // takes the first keycode the US table leaves free.
        let meta = (8..*SPARE.start())
            .find(|c| !US.iter().any(|k| k.0 == *c))
            .unwrap_or(8);
        keys.push((meta, vec![0xffe7]));
        let mut text =
            String::from("xkb_keymap {\nxkb_keycodes \"cua\" {\nminimum = 8;\nmaximum = 255;\n");
        for (code, _) in &keys {
            text.push_str(&format!("<K{code}> = {code};\n"));
        }
        text.push_str("};\nxkb_types \"cua\" { include \"complete\" };\nxkb_compatibility \"cua\" { include \"complete\" };\nxkb_symbols \"cua\" {\n");
        for (code, syms) in &keys {
            let syms: Vec<String> = syms.iter().map(|s| format!("{s:#x}")).collect();
            text.push_str(&format!("key <K{code}> {{ [ {} ] }};\n", syms.join(", ")));
        }
        for (keysym, modifier, _) in MODIFIERS {
            if let Some((code, _)) = keys.iter().find(|(_, syms)| syms == &[*keysym]) {
                text.push_str(&format!("modifier_map {modifier} {{ <K{code}> }};\n"));
            }
        }
        text.push_str("};\n};\n");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn us_keys_sit_at_their_evdev_codes_and_capitals_need_shift() {
        let map = Keymap::default();
        assert_eq!(
            map.place(0x61),
            Some(KeyPlace {
                code: 30,
                shifted: false
            })
        );
        assert_eq!(
            map.place(0x41),
            Some(KeyPlace {
                code: 30,
                shifted: true
            })
        );
        assert_eq!(
            map.place(0x21),
            Some(KeyPlace {
                code: 2,
                shifted: true
            })
        );
        assert_eq!(
            map.place(0xff0d),
            Some(KeyPlace {
                code: 28,
                shifted: false
            })
        );
        assert_eq!(map.place(0xe9), None);
    }

    #[test]
    fn other_characters_get_spare_keys_that_stay() {
        let mut map = Keymap::default();
        assert!(map.add(&[0x61, 0xe9, 0x1002713]));
        assert!(!map.add(&[0xe9]), "already there");
        assert_eq!(
            map.place(0xe9),
            Some(KeyPlace {
                code: 152,
                shifted: false
            })
        );
        assert_eq!(
            map.place(0x1002713),
            Some(KeyPlace {
                code: 153,
                shifted: false
            })
        );
        let text = map.text();
        assert!(text.contains("key <K38> { [ 0x61, 0x41 ] };"), "{text}");
        assert!(text.contains("key <K160> { [ 0xe9 ] };"), "{text}");
        assert!(text.contains("modifier_map Control { <K37> };"), "{text}");
        assert!(text.contains("modifier_map Shift { <K50> };"), "{text}");
        assert!(text.contains("<K161> = 161;"), "{text}");
    }

    #[test]
    fn when_spare_keys_run_out_the_unneeded_ones_go() {
        let mut map = Keymap::default();
        let many: Vec<u32> = (0..96).map(|i| 0x1000100 + i).collect();
        map.add(&many);
        assert!(map.place(0x1000100).is_some());
        map.add(&[0x10003ff]);
        assert!(map.place(0x10003ff).is_some());
        assert!(map.place(0x1000100).is_none());
    }
}
