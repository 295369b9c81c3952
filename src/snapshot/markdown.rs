//! Reads a `tree_markdown` (as [`super::render_markdown`] writes it, or a recording keeps it) back into lines: depth, index, role and name. It is
//! how replay finds an element (and a window) in a recording that kept no locator: ours
//! without one, and the reference driver's, whose states hold only the markdown. Both
//! write one element per line, `- [N] role "name" …`, two spaces per level; names escape
//! `"`, `\`, newlines and tabs.

/// One line of a tree_markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub depth: usize,
    pub index: Option<usize>,
    pub role: String,
    pub name: String,
}

impl Line {
    /// Role and name as one comparable key, with the role in [`role_key`] form.
    pub fn key(&self) -> (String, String) {
        (role_key(&self.role), self.name.clone())
    }
}

/// The lines that parse; others (blank, or not a `- ` item) are skipped.
pub fn parse(markdown: &str) -> Vec<Line> {
    markdown.lines().filter_map(parse_line).collect()
}

fn parse_line(raw: &str) -> Option<Line> {
    let body = raw.trim_start_matches(' ');
    let depth = (raw.len() - body.len()) / 2;
    let mut rest = body.strip_prefix("- ")?;
    let mut index = None;
    if let Some(after) = rest.strip_prefix('[') {
        if let Some((n, tail)) = after.split_once("] ") {
            if let Ok(n) = n.parse() {
                index = Some(n);
                rest = tail;
            }
        }
    }
    let (role, _) = split_role(rest);
    let end = role.len();
    let role = role.trim();
    if role.is_empty() || role.contains('"') {
        return None;
    }
    // `role "name"`, or cua-driver's `role = "text"` for an element that only shows text.
    let name = split_name(&rest[end..]).0.unwrap_or_default();
    Some(Line {
        depth,
        index,
        role: role.to_string(),
        name,
    })
}

/// A line's body (after `- ` and its index) as its role and the rest: the role runs to the
/// name's quote or the first annotation; it may hold spaces (AT-SPI's own role names do:
/// "push button").
pub fn split_role(body: &str) -> (&str, &str) {
    // ` = "…"` is cua-driver's form of a label's text (`label = "42"`).
    let end = [" = \"", " \"", " value=", " (", " [", " id="]
        .iter()
        .filter_map(|mark| body.find(mark))
        .min()
        .unwrap_or(body.len());
    body.split_at(end)
}

/// A line's tail after its role: its name (quoted, escapes undone), if it has one, and the
/// rest after the name's closing quote.
pub fn split_name(tail: &str) -> (Option<String>, &str) {
    let Some(quoted) = tail
        .strip_prefix(" \"")
        .or_else(|| tail.strip_prefix(" = \""))
    else {
        return (None, tail);
    };
    let mut escaped = false;
    for (i, c) in quoted.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return (Some(unquote(quoted)), &quoted[i + 1..]),
            _ => escaped = false,
        }
    }
    (Some(unquote(quoted)), "")
}

/// The text of a quoted name up to its closing quote, escapes undone.
fn unquote(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    out
}

/// The line of element `index`, and its ancestors' lines from the root down.
pub fn element_with_ancestors(lines: &[Line], index: usize) -> Option<(&Line, Vec<&Line>)> {
    let at = lines.iter().position(|l| l.index == Some(index))?;
    let mut ancestors = Vec::new();
    let mut depth = lines[at].depth;
    for line in lines[..at].iter().rev() {
        if line.depth < depth {
            ancestors.push(line);
            depth = line.depth;
        }
    }
    ancestors.reverse();
    Some((&lines[at], ancestors))
}

/// What [`without_subtrees`] does with a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    Keep,
    /// The line and everything under it go.
    Line,
    /// The line stays; everything under it goes.
    Under,
}

/// A tree_markdown without the lines `cut` takes out (and what is under them), the indices
/// of the elements left renumbered from 0 so that lines coming and going there shift
/// nothing elsewhere; and the old indices of the elements taken out. None when nothing
/// was taken out.
pub fn without_subtrees(
    tree: &str,
    cut: impl Fn(&Line, &str) -> Cut,
) -> Option<(String, Vec<usize>)> {
    let mut out = String::new();
    let mut dropped = Vec::new();
    let mut dropped_any = false;
    let mut inside: Option<usize> = None;
    let mut next_index = 0usize;
    for raw in tree.lines() {
        let parsed = parse_line(raw);
        let depth = (raw.len() - raw.trim_start_matches(' ').len()) / 2;
        if inside.is_some_and(|d| depth > d) {
            dropped.extend(parsed.and_then(|l| l.index));
            dropped_any = true;
            continue;
        }
        inside = None;
        let how = parsed.as_ref().map_or(Cut::Keep, |l| cut(l, raw));
        if how != Cut::Keep {
            inside = Some(depth);
        }
        if how == Cut::Line {
            dropped.extend(parsed.and_then(|l| l.index));
            dropped_any = true;
            continue;
        }
        match parsed.as_ref().and_then(|l| l.index) {
            Some(old) => {
                let from = format!("[{old}] ");
                out.push_str(&raw.replacen(&from, &format!("[{next_index}] "), 1));
                next_index += 1;
            }
            None => out.push_str(raw),
        }
        out.push('\n');
    }
    dropped_any.then_some((out, dropped))
}

/// How many lines before `line` (in document order) have its role and name: the
/// element's rank among look-alikes, for telling identical buttons apart.
pub fn rank(lines: &[Line], line: &Line) -> usize {
    let key = line.key();
    lines
        .iter()
        .take_while(|l| !std::ptr::eq(*l, line))
        .filter(|l| l.key() == key)
        .count()
}

/// The line with the states in `drop` taken out of its states group, the `(…)` that ends
/// the line before its `[actions=…]` (names and values are quoted, so a `)` there is the
/// group's); the group goes when nothing is left in it.
pub fn without_states(line: &str, drop: &[&str]) -> String {
    let (head, actions) = match line.find(" [actions=") {
        Some(i) => line.split_at(i),
        None => (line, ""),
    };
    let Some(open) = head.strip_suffix(')').and_then(|h| h.rfind(" (")) else {
        return line.to_string();
    };
    let states: Vec<&str> = head[open + 2..head.len() - 1]
        .split(", ")
        .filter(|s| !drop.contains(s))
        .collect();
    let group = if states.is_empty() {
        String::new()
    } else {
        format!(" ({})", states.join(", "))
    };
    format!("{}{group}{actions}", &head[..open])
}

/// A role in one vocabulary across drivers and toolkits: lower case, words joined by `_`,
/// macOS's `AX` prefix dropped, and the synonyms drivers use for the same thing.
pub fn role_key(role: &str) -> String {
    let plain = role.strip_prefix("AX").unwrap_or(role);
    let mut key = String::new();
    for (i, c) in plain.chars().enumerate() {
        if c == ' ' || c == '-' {
            key.push('_');
        } else if c.is_uppercase() {
            if i > 0 && !key.ends_with('_') {
                key.push('_');
            }
            key.extend(c.to_lowercase());
        } else {
            key.push(c);
        }
    }
    match key.as_str() {
        "frame" | "dialog" | "window" => "window".into(),
        "push_button" => "button".into(),
        "text_field" | "entry" | "text_area" | "text_view" => "text".into(),
        "static_text" => "label".into(),
        "check_box" | "checkbox" => "check_box".into(),
        "radio_button" | "radio" => "radio_button".into(),
        _ => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "- [0] window \"Calculator\" [actions=[activate]]\n  - filler \"keypad\"\n    - [1] button \"7 7\" [actions=[click]]\n    - [2] button \"say \\\"hi\\\"\\\\n\" value=\"x\"\n  - filler \"keypad\"\n    - [3] button \"7 7\" (focused)\n      - label \"7\"\n";

    #[test]
    fn without_states_takes_only_the_named_states_out_of_the_group() {
        let drop = &["focused", "pressed"];
        assert_eq!(
            without_states("- [3] button \"7 (x)\" (focused) [actions=[click]]", drop),
            "- [3] button \"7 (x)\" [actions=[click]]"
        );
        assert_eq!(
            without_states("  - check_box \"Gift\" (checked, focused)", drop),
            "  - check_box \"Gift\" (checked)"
        );
        let untouched = "- label \"a (b)\" value=\"(c)\"";
        assert_eq!(without_states(untouched, drop), untouched);
    }

    #[test]
    fn lines_read_depth_index_role_and_escaped_names() {
        let lines = parse(MD);
        assert_eq!(lines.len(), 7);
        assert_eq!(
            lines[0],
            Line {
                depth: 0,
                index: Some(0),
                role: "window".into(),
                name: "Calculator".into()
            }
        );
        assert_eq!(lines[3].name, "say \"hi\"\\n");
        assert_eq!((lines[6].depth, lines[6].index), (3, None));
        assert_eq!(lines[6].name, "7");
        assert!(parse("not a line\n\n-\n- \n").is_empty());
        let spaced = parse("- [4] push button \"OK\" (focused)\n- [5] toggle button (checked)");
        assert_eq!(
            (spaced[0].role.as_str(), spaced[0].name.as_str()),
            ("push button", "OK")
        );
        assert_eq!(
            (spaced[1].role.as_str(), spaced[1].name.as_str()),
            ("toggle button", "")
        );
        // cua-driver names a window, and an element that only shows text, `role = "…"`.
        let theirs = parse("- frame = \"*Untitled 1 - Mousepad\"\n        - label = \"42\"");
        assert_eq!(
            (
                theirs[0].role.as_str(),
                theirs[0].name.as_str(),
                theirs[0].depth
            ),
            ("frame", "*Untitled 1 - Mousepad", 0)
        );
        assert_eq!(
            (theirs[1].role.as_str(), theirs[1].name.as_str()),
            ("label", "42")
        );
    }

    #[test]
    fn an_element_comes_with_its_ancestors_and_its_rank_among_look_alikes() {
        let lines = parse(MD);
        let (line, ancestors) = element_with_ancestors(&lines, 3).unwrap();
        assert_eq!(line.name, "7 7");
        let chain: Vec<&str> = ancestors.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(chain, ["Calculator", "keypad"]);
        assert_eq!(rank(&lines, line), 1);
        assert!(element_with_ancestors(&lines, 9).is_none());
    }

    #[test]
    fn a_tail_splits_into_its_name_and_the_rest() {
        assert_eq!(
            split_name(" \"say \\\"hi\\\"\" value=\"x\" (checked)"),
            (Some("say \"hi\"".to_string()), " value=\"x\" (checked)")
        );
        assert_eq!(split_name(" value=\"x\""), (None, " value=\"x\""));
        assert_eq!(split_name(" \"open"), (Some("open".to_string()), ""));
    }

    #[test]
    fn roles_compare_across_vocabularies() {
        assert_eq!(role_key("frame"), role_key("window"));
        assert_eq!(role_key("push button"), "button");
        assert_eq!(role_key("AXButton"), "button");
        assert_eq!(role_key("AXCheckBox"), "check_box");
        assert_eq!(role_key("check_box"), "check_box");
        assert_eq!(role_key("menu_item"), "menu_item");
    }
}
