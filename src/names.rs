//! How an element's name is read, as a person reads it: trimmed; GTK 4's doubled label
//! (`"7 7"`: the button's label and its label child's, joined) said once; and a widget
//! class name (`GtkSourceView`, `AdwLeaflet`, which GTK 4 gives an element with no label of
//! its own) is no name. The Linux backend reads live names this way; replay reads names
//! recorded by earlier versions of cua, which kept the toolkit's raw names, the same way,
//! so an old recording and a live tree speak one vocabulary.

/// GTK 4's doubled label said once: two equal halves around one space (`"7 7"`), or the
/// label with its mnemonic mark and then its text (`"_ADD ADD"`). The backend applies it
/// to GTK 4 apps only; a recorded name from any app may carry it.
pub fn undoubled(name: &str) -> &str {
    let name = name.trim();
    let (half, odd) = (name.len() / 2, name.len() % 2 == 1);
    if odd
        && name.is_char_boundary(half)
        && name[half..].starts_with(' ')
        && name[..half] == name[half + 1..]
    {
        return &name[..half];
    }
    // The marked label is one byte (`_`) longer than its text.
    if let Some(text_len) = name.len().checked_sub(2).map(|n| n / 2) {
        let (marked, text) = (text_len + 1, name.len() - text_len);
        if name.len() % 2 == 0
            && text_len > 0
            && name.is_char_boundary(marked)
            && name.is_char_boundary(text)
            && name[marked..].starts_with(' ')
            && name[..marked].replacen('_', "", 1) == name[text..]
        {
            return &name[text..];
        }
    }
    name
}

/// Whether `name` is a GTK / libadwaita widget class name (`GtkButton`, `AdwLeaflet`).
pub fn is_widget_class_name(name: &str) -> bool {
    ["Gtk", "Adw", "Hdy"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|rest| {
            rest.starts_with(|c: char| c.is_ascii_uppercase())
                && rest.chars().all(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// A name that may have been recorded raw, as cua reads names today: undoubled, and a
/// widget class name read as no name.
pub fn readable(name: &str) -> &str {
    let name = undoubled(name);
    if is_widget_class_name(name) { "" } else { name }
}

/// A name as two trees of one window are compared when binding a recorded window to a
/// live one (not for finding an element, where the exact name is the locator): read as
/// today ([`readable`]); cut at a tab or a run of spaces, which pad a menu item's name
/// towards its accelerator (`"New      "`, `"Save\tCtrl+S"`); without mnemonic marks
/// (`_File`, `&File`); inner whitespace single; case folded.
pub fn comparable(name: &str) -> String {
    let name = readable(name);
    let name = name.split('\t').next().unwrap_or(name);
    let name = name.split("  ").next().unwrap_or(name);
    let mut out = String::with_capacity(name.len());
    let mut chars = name.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('_' | '&', Some(next)) if next.is_alphanumeric() => continue,
            ('&', Some('&')) => continue,
            (c, _) if c.is_whitespace() => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            (c, _) => out.extend(c.to_lowercase()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_a_person_reads_them() {
        assert_eq!(undoubled("7 7"), "7");
        assert_eq!(undoubled("= ="), "=");
        assert_eq!(undoubled("mod mod"), "mod");
        assert_eq!(undoubled("× ×"), "×");
        assert_eq!(undoubled("Walla Walla x"), "Walla Walla x");
        assert_eq!(undoubled("a  a"), "a  a");
        assert_eq!(undoubled("Open…   "), "Open…");
        assert_eq!(undoubled("_ADD ADD"), "ADD");
        assert_eq!(undoubled("Save _as Save as"), "Save as");
        assert_eq!(undoubled("_A B"), "_A B");
        assert_eq!(undoubled("AB A"), "AB A");
        assert!(is_widget_class_name("GtkButton"));
        assert!(is_widget_class_name("AdwLeaflet"));
        assert!(!is_widget_class_name("Gtk"));
        assert!(!is_widget_class_name("Gtk Button"));
        assert!(!is_widget_class_name("Gtkfoo"));
        assert!(!is_widget_class_name("Save"));
        assert_eq!(readable("GtkSourceView"), "");
        assert_eq!(readable(" 7 7 "), "7");
        assert_eq!(readable("Total: 3"), "Total: 3");
    }

    #[test]
    fn names_compare_without_padding_mnemonics_or_case() {
        assert_eq!(comparable("New      "), "new");
        assert_eq!(comparable("Save As...      Shift+Ctrl+S"), "save as...");
        assert_eq!(comparable("Save\tCtrl+S"), "save");
        assert_eq!(comparable("_File"), "file");
        assert_eq!(comparable("&Edit"), "edit");
        assert_eq!(comparable("Fish && Chips"), "fish & chips");
        assert_eq!(comparable("snake_case"), "snakecase");
        assert_eq!(comparable(" Open\nRecent "), "open recent");
        assert_eq!(comparable("7 7"), "7");
        assert_eq!(comparable("GtkButton"), "");
    }
}
