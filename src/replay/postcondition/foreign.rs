//! How another driver's recorded tree lines (cua-driver's) are read for a turn's change:
//! its raw newlines, the roles it names by their text, the values it did not record, and
//! the unnamed structural nodes it shows where cua's tree folds them away.

use super::{markdown, quoted_name, role_key};

/// Roles whose element another driver may name by the text it holds.
pub(super) const TEXT_ROLES: &[&str] = &[
    "text",
    "entry",
    "password_text",
    "paragraph",
    "document_text",
];

/// Roles of unnamed nodes another driver shows and cua's tree folds away.
pub(super) const FOLDED_UNNAMED: &[&str] = &["widget", "group", "scroll_bar", "grouping"];

/// Lines of a tree, a line that does not start an item (`- `) joined to the one before with
/// a newline: cua-driver writes a name's newlines raw (`text "Hello` + `" [actions=[]]`).
pub(super) fn joined_continuations(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in markdown.lines() {
        match out.last_mut() {
            Some(last) if !line.trim_start().starts_with("- ") => {
                last.push('\n');
                last.push_str(line);
            }
            _ => out.push(line.to_string()),
        }
    }
    out
}

/// A line without a name whose role the other driver named by its text (and whose values
/// it did not record), named by its value: cua-driver names an element by its text where
/// it has no name (its `label`), so its `text "Hello"` is cua's `text value="Hello"`. Roles
/// it named otherwise (a widget class, `text box "GtkTextView"`) stay as they are.
pub(super) fn named_by_value(
    line: &str,
    valued: &std::collections::HashSet<String>,
    text_named: &std::collections::HashSet<String>,
) -> String {
    let Some(parsed) = markdown::parse(line).into_iter().next() else {
        return line.to_string();
    };
    let role = role_key(&parsed.role);
    if !parsed.name.is_empty() || valued.contains(&role) || !text_named.contains(&role) {
        return line.to_string();
    }
    let Some(at) = line.find(" value=\"") else {
        return line.to_string();
    };
    // The value as a quoted tail (` "…"`), so it splits as a name does.
    let tail = format!(" {}", &line[at + " value=".len()..]);
    let (value, rest) = markdown::split_name(&tail);
    match value.filter(|v| !v.is_empty()) {
        Some(v) => format!("{}{}{rest}", &line[..at], quoted_name(&v)),
        None => line.to_string(),
    }
}

/// A normalized line without its ` value="…"` when its role is not among `valued`.
pub(super) fn without_unrecorded_value(
    line: &str,
    valued: &std::collections::HashSet<String>,
) -> String {
    let role = markdown::parse(line)
        .first()
        .map(|l| role_key(&l.role))
        .unwrap_or_default();
    if valued.contains(&role) {
        return line.to_string();
    }
    let Some(at) = line.find(" value=\"") else {
        return line.to_string();
    };
    let rest = &line[at + " value=\"".len()..];
    // The value ends at its closing quote (escaped quotes inside are skipped).
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return format!("{}{}", &line[..at], &rest[i + 1..]),
            _ => escaped = false,
        }
    }
    line[..at].to_string()
}
