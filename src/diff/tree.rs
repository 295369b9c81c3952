//! Text side of a turn diff: redaction of volatile text (ids, clocks, anything a config
//! rule names) and unified line diffs of the post-action accessibility tree.

use regex::Regex;

/// A compiled redaction rule: every match of `pattern` becomes `replacement`.
#[derive(Debug, Clone)]
pub struct Redaction {
    pub pattern: Regex,
    pub replacement: String,
}

/// Rules every diff applies to compared text: pids and window ids differ between any two
/// runs. (Snapshot ids and timestamps live in fields the diff never compares.)
pub fn builtin_redactions() -> Vec<Redaction> {
    [
        (r"\bpid \d+", "pid <pid>"),
        (r"\bwindow(_id)? \d+", "window <window>"),
    ]
    .into_iter()
    .map(|(p, r)| Redaction {
        pattern: Regex::new(p).expect("built-in pattern"),
        replacement: r.to_string(),
    })
    .collect()
}

/// `text` with every rule applied, in order.
pub fn redact(text: &str, rules: &[Redaction]) -> String {
    let mut out = text.to_string();
    for rule in rules {
        if rule.pattern.is_match(&out) {
            out = rule
                .pattern
                .replace_all(&out, rule.replacement.as_str())
                .into_owned();
        }
    }
    out
}

/// Unified diff of two texts (3 lines of context), or None when they are equal.
pub fn unified(
    expected: &str,
    actual: &str,
    expected_name: &str,
    actual_name: &str,
) -> Option<String> {
    if expected == actual {
        return None;
    }
    let diff = similar::TextDiff::from_lines(expected, actual);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header(expected_name, actual_name)
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_ids_and_configured_volatile_text() {
        let mut rules = builtin_redactions();
        rules.push(Redaction {
            pattern: Regex::new(r"\d\d:\d\d(:\d\d)?").unwrap(),
            replacement: "<time>".into(),
        });
        let a = "- [3] label \"Clock 12:41:07\"\nclicked in Calculator (pid 4242, window 16777220)";
        let b = "- [3] label \"Clock 09:02:55\"\nclicked in Calculator (pid 99, window 8388612)";
        assert_eq!(redact(a, &rules), redact(b, &rules));
        assert!(redact(a, &rules).contains("Clock <time>"));
        // Text that is not volatile survives.
        assert!(redact(a, &rules).contains("- [3] label"));
    }

    #[test]
    fn unified_diff_names_the_changed_line_only() {
        let expected = "- [0] push_button \"7\"\n- [1] push_button \"8\"\n- [2] label \"42\"\n";
        let actual = "- [0] push_button \"7\"\n- [1] push_button \"8\"\n- [2] label \"41\"\n";
        assert_eq!(unified(expected, expected, "a", "b"), None);
        let d = unified(expected, actual, "expected", "actual").unwrap();
        assert!(d.contains("-- [2] label \"42\""), "{d}");
        assert!(d.contains("+- [2] label \"41\""), "{d}");
        assert!(
            d.contains("--- expected") && d.contains("+++ actual"),
            "{d}"
        );
        assert_eq!(
            d.lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .count(),
            1
        );
    }
}
