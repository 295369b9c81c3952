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
}
