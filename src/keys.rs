//! The one key vocabulary: the reference driver's key names (return, tab, escape, arrows,
//! space, delete, home, end, pageup, pagedown, f1-f12, letters, digits) plus X keysym
//! names, `0x` keysyms and `U+` code points, resolved to keysyms; modifier names; and key
//! combos ([`Combo`]) as the tools send them and as the policy forbids them, so both read
//! every notation the same way. Keysyms are the neutral key space here: Unicode characters
//! map to them directly, and a backend translates them to its own key codes.
//!
//! As in the reference (macOS naming), `delete` is the key left of backspace's position on
//! a Mac keyboard, i.e. BackSpace; `forwarddelete` is the Delete key.

use crate::errors::ToolError;

/// A modifier held during a key or pointer event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Modifier {
    Ctrl,
    Alt,
    Shift,
    Super,
}

impl Modifier {
    pub fn parse(name: &str) -> Option<Modifier> {
        let lower = name.to_ascii_lowercase();
        MODIFIER_NAMES
            .iter()
            .find(|(n, _)| *n == lower)
            .map(|(_, m)| *m)
    }

    /// The name used in labels and messages.
    pub fn name(self) -> &'static str {
        match self {
            Modifier::Ctrl => "ctrl",
            Modifier::Alt => "alt",
            Modifier::Shift => "shift",
            Modifier::Super => "super",
        }
    }

    pub fn keysym(self) -> u32 {
        match self {
            Modifier::Ctrl => 0xffe3,
            Modifier::Alt => 0xffe9,
            Modifier::Shift => 0xffe1,
            Modifier::Super => 0xffeb,
        }
    }
}

/// Modifier names (matched case-insensitively). `meta` is Alt, as X11 keymaps bind it.
pub const MODIFIER_NAMES: &[(&str, Modifier)] = &[
    ("ctrl", Modifier::Ctrl),
    ("control", Modifier::Ctrl),
    ("ctl", Modifier::Ctrl),
    ("^", Modifier::Ctrl),
    ("⌃", Modifier::Ctrl),
    ("alt", Modifier::Alt),
    ("option", Modifier::Alt),
    ("opt", Modifier::Alt),
    ("meta", Modifier::Alt),
    ("⌥", Modifier::Alt),
    ("shift", Modifier::Shift),
    ("⇧", Modifier::Shift),
    ("cmd", Modifier::Super),
    ("command", Modifier::Super),
    ("super", Modifier::Super),
    ("win", Modifier::Super),
    ("logo", Modifier::Super),
    ("⌘", Modifier::Super),
];

/// Named keys: the reference vocabulary first, then X keysym names (case-sensitive).
pub const NAMED: &[(&str, u32)] = &[
    ("return", 0xff0d),
    ("enter", 0xff0d),
    ("tab", 0xff09),
    ("escape", 0xff1b),
    ("esc", 0xff1b),
    ("up", 0xff52),
    ("down", 0xff54),
    ("left", 0xff51),
    ("right", 0xff53),
    ("space", 0x20),
    ("delete", 0xff08),
    ("backspace", 0xff08),
    ("forwarddelete", 0xffff),
    ("forward_delete", 0xffff),
    ("home", 0xff50),
    ("end", 0xff57),
    ("pageup", 0xff55),
    ("page_up", 0xff55),
    ("pagedown", 0xff56),
    ("page_down", 0xff56),
    ("insert", 0xff63),
    ("menu", 0xff67),
    ("print", 0xff61),
    // X keysym names.
    ("Return", 0xff0d),
    ("Tab", 0xff09),
    ("ISO_Left_Tab", 0xfe20),
    ("Escape", 0xff1b),
    ("BackSpace", 0xff08),
    ("Delete", 0xffff),
    ("Home", 0xff50),
    ("End", 0xff57),
    ("Left", 0xff51),
    ("Up", 0xff52),
    ("Right", 0xff53),
    ("Down", 0xff54),
    ("Prior", 0xff55),
    ("Page_Up", 0xff55),
    ("Next", 0xff56),
    ("Page_Down", 0xff56),
    ("Insert", 0xff63),
    ("Menu", 0xff67),
    ("Print", 0xff61),
    ("Pause", 0xff13),
    ("Scroll_Lock", 0xff14),
    ("Caps_Lock", 0xffe5),
    ("Num_Lock", 0xff7f),
    ("KP_Enter", 0xff8d),
    ("KP_Add", 0xffab),
    ("KP_Subtract", 0xffad),
    ("KP_Multiply", 0xffaa),
    ("KP_Divide", 0xffaf),
    ("KP_Decimal", 0xffae),
    ("KP_Equal", 0xffbd),
    ("Shift_L", 0xffe1),
    ("Shift_R", 0xffe2),
    ("Control_L", 0xffe3),
    ("Control_R", 0xffe4),
    ("Alt_L", 0xffe9),
    ("Alt_R", 0xffea),
    ("Super_L", 0xffeb),
    ("Super_R", 0xffec),
    ("space", 0x20),
    ("exclam", 0x21),
    ("quotedbl", 0x22),
    ("numbersign", 0x23),
    ("dollar", 0x24),
    ("percent", 0x25),
    ("ampersand", 0x26),
    ("apostrophe", 0x27),
    ("parenleft", 0x28),
    ("parenright", 0x29),
    ("asterisk", 0x2a),
    ("plus", 0x2b),
    ("comma", 0x2c),
    ("minus", 0x2d),
    ("period", 0x2e),
    ("slash", 0x2f),
    ("colon", 0x3a),
    ("semicolon", 0x3b),
    ("less", 0x3c),
    ("equal", 0x3d),
    ("greater", 0x3e),
    ("question", 0x3f),
    ("at", 0x40),
    ("bracketleft", 0x5b),
    ("backslash", 0x5c),
    ("bracketright", 0x5d),
    ("asciicircum", 0x5e),
    ("underscore", 0x5f),
    ("grave", 0x60),
    ("braceleft", 0x7b),
    ("bar", 0x7c),
    ("braceright", 0x7d),
    ("asciitilde", 0x7e),
];

/// The keysym of a character: Latin-1 maps directly, the rest of Unicode to 0x01000000 + code point.
pub fn char_keysym(c: char) -> u32 {
    match c {
        '\n' => 0xff0d,
        '\t' => 0xff09,
        c if (' '..='~').contains(&c) || ('\u{a0}'..='\u{ff}').contains(&c) => c as u32,
        c => 0x0100_0000 + c as u32,
    }
}

/// Resolves a key name to a keysym; `field` names the argument in the error.
pub fn parse_key(name: &str, field: &str) -> Result<u32, ToolError> {
    if let Some((_, k)) = NAMED.iter().find(|(n, _)| *n == name) {
        return Ok(*k);
    }
    let lower = name.to_ascii_lowercase();
    if let Some((_, k)) = NAMED.iter().find(|(n, _)| *n == lower) {
        return Ok(*k);
    }
    if let Some(n) = lower.strip_prefix('f').and_then(|d| d.parse::<u32>().ok()) {
        if (1..=24).contains(&n) {
            return Ok(0xffbe + n - 1);
        }
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if !c.is_control() {
            // A single letter means the key: "a" and "A" are both the A key (use shift).
            return Ok(char_keysym(c.to_ascii_lowercase()));
        }
    }
    if let Some(hex) = lower
        .strip_prefix("u+")
        .or_else(|| lower.strip_prefix("0x"))
    {
        if let Ok(v) = u32::from_str_radix(hex, 16) {
            return Ok(if lower.starts_with("u+") {
                char_keysym(char::from_u32(v).unwrap_or('?'))
            } else {
                v
            });
        }
    }
    if Modifier::parse(name).is_some() {
        return Err(ToolError::invalid(format!(
            "`{field}`: `{name}` is a modifier, not a key (put modifiers in `modifiers`, or use hotkey)"
        )));
    }
    let hint = crate::suggest::did_you_mean(name, NAMED.iter().map(|(n, _)| *n));
    Err(ToolError::invalid(format!(
        "`{field}`: unknown key `{name}`{hint} (use return, tab, escape, up, down, left, right, space, delete, forwarddelete, home, end, pageup, pagedown, f1-f12, a letter or digit, or an X keysym name such as KP_Add)"
    )))
}

/// Resolves modifier names; `field` names the argument in the error.
pub fn parse_modifiers(names: &[String], field: &str) -> Result<Vec<Modifier>, ToolError> {
    let mut mods = Vec::new();
    for n in names {
        let m = Modifier::parse(n).ok_or_else(|| {
            ToolError::invalid(format!(
                "`{field}`: unknown modifier `{n}` (use cmd/super, ctrl, shift, alt/option)"
            ))
        })?;
        if !mods.contains(&m) {
            mods.push(m);
        }
    }
    Ok(mods)
}

/// A C0 control character other than newline and tab: a keystroke, not text.
pub fn is_c0_control(c: char) -> bool {
    c < ' ' && c != '\n' && c != '\t'
}

/// The most characters one type_text or set_value takes (an agent's paste of a whole
/// document fits; a runaway string gets a clear error, not minutes of work).
pub const MAX_INPUT_CHARS: usize = 100_000;

/// The most characters typed key by key (at the default 30 ms apart, about 5 minutes).
pub const MAX_KEYED_CHARS: usize = 10_000;

/// Refuses text longer than [`MAX_INPUT_CHARS`], and C0 control characters other than
/// newline and tab, and DEL: they are keystrokes, not text.
pub fn check_text(text: &str, field: &str) -> Result<(), ToolError> {
    let count = text.chars().count();
    if count > MAX_INPUT_CHARS {
        return Err(ToolError::invalid(format!(
            "`{field}`: at most {MAX_INPUT_CHARS} characters, got {count}"
        )));
    }
    if let Some((i, c)) = text
        .chars()
        .enumerate()
        .find(|(_, c)| is_c0_control(*c) || *c == '\u{7f}')
    {
        return Err(ToolError::invalid(format!(
            "`{field}`: control character U+{:04X} at position {i} is not text (send keys with press_key or hotkey)",
            c as u32
        )));
    }
    Ok(())
}

/// A key combination: the modifiers held (no repeats) and one key's keysym. The tools
/// send it; the policy compares [`Combo::canonical`] forms, so a forbidden combo is
/// refused in every notation the tools accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combo {
    pub mods: Vec<Modifier>,
    pub keysym: u32,
}

impl Combo {
    /// press_key's `key` and `modifiers`.
    pub fn from_parts(key: &str, modifiers: &[String]) -> Result<Combo, ToolError> {
        Ok(Combo {
            keysym: parse_key(key, "key")?,
            mods: parse_modifiers(modifiers, "modifiers")?,
        })
    }

    /// hotkey's `keys`: modifiers first, one key last.
    pub fn from_keys(keys: &[String]) -> Result<Combo, ToolError> {
        let Some((key, mod_names)) = keys.split_last() else {
            return Err(ToolError::invalid(
                "`keys`: give modifiers and one key, e.g. [\"ctrl\", \"a\"]",
            ));
        };
        let mut mods = Vec::new();
        for (i, name) in mod_names.iter().enumerate() {
            let m = Modifier::parse(name).ok_or_else(|| {
                ToolError::invalid(format!(
                    "`keys[{i}]`: `{name}` is not a modifier (modifiers first, one key last)"
                ))
            })?;
            if !mods.contains(&m) {
                mods.push(m);
            }
        }
        let field = format!("keys[{}]", keys.len() - 1);
        if Modifier::parse(key).is_some() {
            return Err(ToolError::invalid(format!(
                "`{field}`: `{key}` is a modifier; the last of `keys` is the key pressed with the modifiers before it, e.g. [\"{key}\", \"a\"]"
            )));
        }
        let keysym = parse_key(key, &field)?;
        Ok(Combo { mods, keysym })
    }

    /// A combo as people write one: `Ctrl+W`, `ctrl-w`, `Cmd+Q`, `⌘Q`, `^Q`, `⌥⇧T`,
    /// `alt+F4`, `ctrl+0x77`, `ctrl++`. The key is any key [`parse_key`] takes; None when
    /// `text` is not modifiers followed by one key (a combo may have no modifier: `F4`).
    pub fn parse(text: &str) -> Option<Combo> {
        let mut mods = Vec::new();
        let mut rest = String::new();
        // Symbol modifiers may be glued to the key (⌘Q, ^Q, ⌥⇧T).
        for c in text.trim().chars() {
            match c {
                '⌘' | '⌃' | '^' | '⌥' | '⇧' => mods.extend(Modifier::parse(&c.to_string())),
                _ => rest.push(c),
            }
        }
        // The key may be a separator itself: `ctrl++`, `ctrl--`, or a lone `+`.
        let (head, key) = match rest.char_indices().last() {
            Some((i, c @ ('+' | '-'))) if i == 0 || rest[..i].ends_with(['+', '-']) => {
                (&rest[..i], c.to_string())
            }
            _ => match rest.rfind(['+', '-']) {
                Some(i) => (&rest[..i], rest[i + 1..].trim().to_string()),
                None => ("", rest.trim().to_string()),
            },
        };
        for part in head
            .split(['+', '-'])
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            mods.push(Modifier::parse(part)?);
        }
        if key.is_empty() || Modifier::parse(&key).is_some() {
            return None;
        }
        let keysym = parse_key(&key, "key").ok()?;
        let mut unique = Vec::new();
        for m in mods {
            if !unique.contains(&m) {
                unique.push(m);
            }
        }
        Some(Combo {
            mods: unique,
            keysym,
        })
    }

    /// What the app receives, for comparing combos: modifiers sorted, a keysym written as
    /// a Unicode code point (`0x01000077`) as its Latin-1 keysym, and an upper-case letter
    /// as Shift + the letter (the sender holds Shift for it, so `ctrl+0x57` is
    /// `ctrl+shift+w`).
    pub fn canonical(&self) -> Combo {
        let mut mods = self.mods.clone();
        let mut keysym = self.keysym;
        if (0x0100_0000..0x0100_0100).contains(&keysym) {
            keysym -= 0x0100_0000;
        }
        let upper_latin =
            (0x41..=0x5a).contains(&keysym) || ((0xc0..=0xde).contains(&keysym) && keysym != 0xd7);
        if upper_latin {
            keysym += 0x20;
            mods.push(Modifier::Shift);
        }
        mods.sort();
        mods.dedup();
        Combo { mods, keysym }
    }

    /// `ctrl+shift+w`: modifiers, then the key's name in the reference vocabulary where it
    /// has one, else the character, else the keysym in hex.
    pub fn label(&self) -> String {
        let key = NAMED
            .iter()
            .find(|(_, k)| *k == self.keysym)
            .map(|(n, _)| n.to_string())
            .or_else(|| {
                (0xffbe..=0xffd5)
                    .contains(&self.keysym)
                    .then(|| format!("f{}", self.keysym - 0xffbe + 1))
            })
            .or_else(|| {
                char::from_u32(self.keysym)
                    .filter(|c| !c.is_control() && self.keysym < 0x100)
                    .map(String::from)
            })
            .unwrap_or_else(|| format!("0x{:x}", self.keysym));
        let mut parts: Vec<String> = self.mods.iter().map(|m| m.name().to_string()).collect();
        parts.push(key);
        parts.join("+")
    }
}

/// The widget action a key combination stands for, where toolkits export shortcuts as
/// named actions on AT-SPI (GTK 4 text widgets list `selection.select-all`,
/// `clipboard.copy`, ...): GTK 4 ignores synthetic key events, but runs these in the
/// background. `keysym` is the key's X keysym (lower-case letters).
pub fn widget_action(mods: &[Modifier], keysym: u32) -> Option<&'static str> {
    let ctrl = mods.contains(&Modifier::Ctrl);
    let shift = mods.contains(&Modifier::Shift);
    if !ctrl
        || mods
            .iter()
            .any(|m| matches!(m, Modifier::Alt | Modifier::Super))
    {
        return None;
    }
    Some(
        match (char::from_u32(keysym)?.to_ascii_lowercase(), shift) {
            ('a', false) => "selection.select-all",
            ('c', false) => "clipboard.copy",
            ('x', false) => "clipboard.cut",
            ('v', false) => "clipboard.paste",
            ('z', false) => "text.undo",
            ('z', true) => "text.redo",
            _ => return None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_and_keysym_names_resolve() {
        assert_eq!(parse_key("return", "key").unwrap(), 0xff0d);
        assert_eq!(parse_key("Return", "key").unwrap(), 0xff0d);
        assert_eq!(parse_key("f12", "key").unwrap(), 0xffc9);
        let e = parse_key("retrun", "key").unwrap_err().to_string();
        assert!(e.contains("did you mean `return`?"), "{e}");
        let e = Combo::from_keys(&["ctrl".into()]).unwrap_err().to_string();
        assert!(
            e.contains("`keys[0]`: `ctrl` is a modifier") && !e.contains("use hotkey"),
            "{e}"
        );
        assert_eq!(parse_key("a", "key").unwrap(), 'a' as u32);
        assert_eq!(parse_key("A", "key").unwrap(), 'a' as u32);
        assert_eq!(parse_key("7", "key").unwrap(), '7' as u32);
        assert_eq!(parse_key("KP_Add", "key").unwrap(), 0xffab);
        assert_eq!(parse_key("delete", "key").unwrap(), 0xff08);
        assert_eq!(parse_key("forwarddelete", "key").unwrap(), 0xffff);
        assert_eq!(parse_key("é", "key").unwrap(), 0xe9);
        assert_eq!(parse_key("✓", "key").unwrap(), 0x0100_2713);
    }

    #[test]
    fn unknown_keys_and_modifiers_name_the_field() {
        let e = parse_key("hyperjump", "keys[1]").unwrap_err().to_string();
        assert!(e.contains("`keys[1]`") && e.contains("hyperjump"), "{e}");
        let e = parse_key("ctrl", "key").unwrap_err().to_string();
        assert!(e.contains("modifier"), "{e}");
        let e = parse_modifiers(&["ctrl".into(), "hyper".into()], "modifiers")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`modifiers`") && e.contains("hyper"), "{e}");
        assert_eq!(
            parse_modifiers(&["cmd".into(), "option".into(), "Control".into()], "m").unwrap(),
            vec![Modifier::Super, Modifier::Alt, Modifier::Ctrl]
        );
    }

    #[test]
    fn control_characters_are_refused_except_newline_and_tab() {
        assert!(check_text("héllo → ✓\n\tx", "text").is_ok());
        let e = check_text("a\u{1b}b", "text").unwrap_err().to_string();
        assert!(e.contains("U+001B") && e.contains("position 1"), "{e}");
    }

    #[test]
    fn text_longer_than_the_cap_is_refused_naming_the_field() {
        assert!(check_text(&"é".repeat(MAX_INPUT_CHARS), "value").is_ok());
        let e = check_text(&"x".repeat(MAX_INPUT_CHARS + 1), "value")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`value`") && e.contains("100001"), "{e}");
    }
}
