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

/// The state's text as compared: the window title and the tree, redacted. `foreign`:
/// one side was recorded by another driver, which numbers elements its own way and
/// writes its window line differently, so indices are dropped and the window line is
/// compared by role (in one vocabulary) and title.
pub fn state_text(state: Option<&serde_json::Value>, rules: &[Redaction], foreign: bool) -> String {
    let Some(s) = state else {
        return String::new();
    };
    let tree = s["tree_markdown"].as_str().unwrap_or("");
    let lines = crate::snapshot::markdown::parse(tree);
    let window = lines.first().filter(|l| l.depth == 0);
    // cua-driver's states carry no title, only the window line's name: both sides then
    // take that one (the window manager's title can differ from it, e.g. an editor's `*`).
    let title = match foreign {
        true => window.map(|l| l.name.as_str()),
        false => s["title"].as_str(),
    }
    .unwrap_or("");
    let tree = if foreign {
        let index = Regex::new(r"^(\s*- )\[\d+\] ").expect("built-in pattern");
        let mut out = String::new();
        for (k, line) in tree.lines().enumerate() {
            match window.filter(|_| k == 0) {
                Some(w) => out.push_str(&format!(
                    "- {} {:?}",
                    crate::snapshot::markdown::role_key(&w.role),
                    w.name
                )),
                None => out.push_str(&index.replace(line, "$1")),
            }
            out.push('\n');
        }
        out
    } else {
        tree.to_string()
    };
    redact(&format!("title: {title}\n{tree}\n"), rules)
}

/// How the actual turn's change differs from the expected turn's, when the expected one
/// was recorded by another driver: read as replay reads its recorded change
/// ([`crate::replay::postcondition`]), one difference a line; None when the same.
pub fn change_differences(expected: &std::path::Path, actual: &std::path::Path) -> Option<String> {
    use crate::replay::postcondition::{Postcondition, Reading};
    use crate::trajectory::read::{State, state_markdown};
    let states = |dir| {
        Some((
            state_markdown(dir, State::Before)?,
            state_markdown(dir, State::After)?,
        ))
    };
    let (Some((eb, ea)), Some((ab, aa))) = (states(expected), states(actual)) else {
        return None;
    };
    let reading = || Reading {
        other_driver: true,
        ..Reading::default()
    };
    // A turn whose recording shows no change says nothing of the effect (another driver's
    // after-state may be read before a late app showed it): there is nothing to compare.
    let differences = match Postcondition::between(&eb, &ea, reading()) {
        Some(recorded) => recorded.differences_in(&ab, &aa),
        None => Vec::new(),
    };
    (!differences.is_empty()).then(|| differences.join("\n"))
}

/// How far redactions may grow a text: a rule whose replacement a later rule matches
/// again multiplies it (six such rules made a 200-turn tree megabytes long, and the fuzz
/// test's diff ran for 20 minutes). Past this, the remaining rules are not applied, and
/// the text says so.
fn redaction_limit(original: usize) -> usize {
    original.saturating_mul(4).saturating_add(64 * 1024)
}

/// `text` with every rule applied, in order, unless they would grow it past
/// [`redaction_limit`]: then the text ends saying where they stopped.
pub fn redact(text: &str, rules: &[Redaction]) -> String {
    let mut out = text.to_string();
    let limit = redaction_limit(text.len());
    for (i, rule) in rules.iter().enumerate() {
        let matches = rule.pattern.find_iter(&out).count();
        if matches == 0 {
            continue;
        }
        // At most this long once replaced (each match at least one byte gives way).
        let grown = out.len() + matches.saturating_mul(rule.replacement.len());
        if grown > limit {
            out.push_str(&format!(
                "\n<redaction stopped at rule {i}: the rules would grow the text past {limit} bytes>"
            ));
            break;
        }
        out = rule
            .pattern
            .replace_all(&out, rule.replacement.as_str())
            .into_owned();
        // A replacement that repeats its match (`$0$0`) grows past the estimate.
        if out.len() > limit {
            out.push_str(&format!(
                "\n<redaction stopped after rule {i}: the rules grew the text past {limit} bytes>"
            ));
            break;
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
    #[test]
    fn redactions_that_multiply_the_text_stop_at_a_bound_and_say_so() {
        let rule = || super::Redaction {
            pattern: regex::Regex::new("a").unwrap(),
            replacement: "aaaa".into(),
        };
        let text = "a".repeat(100_000);
        let started = std::time::Instant::now();
        let out = super::redact(&text, &[rule(), rule(), rule(), rule(), rule(), rule()]);
        assert!(
            out.len() <= super::redaction_limit(text.len()) + 200,
            "{}",
            out.len()
        );
        assert!(out.ends_with("bytes>"), "{}", &out[out.len() - 120..]);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

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
    fn a_redaction_that_matches_empty_text_is_refused() {
        for pattern in ["x*", "^", "(a|)"] {
            let config = crate::diff::DiffConfig::from_toml(
                &format!("[[redact]]\npattern = '{pattern}'\nreplacement = 'zz'\n"),
                "c.toml",
            );
            let e = config.unwrap_err();
            assert!(
                e.contains("`redact[0].pattern`") && e.contains("matches empty text"),
                "{e}"
            );
        }
        assert!(
            crate::diff::DiffConfig::from_toml("[[redact]]\npattern = 'x+'\n", "c.toml").is_ok()
        );
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

    #[test]
    fn another_drivers_state_compares_without_indices_and_by_its_window_line() {
        let rules = builtin_redactions();
        let theirs = serde_json::json!({ "tree_markdown": "- [0] window \"Calc\" [actions=[activate]]\n  - [3] button \"7\"\n" });
        let ours = serde_json::json!({ "title": "Calc*", "tree_markdown": "- frame \"Calc\"\n  - [2] button \"7\"\n" });
        assert_eq!(
            state_text(Some(&theirs), &rules, true),
            state_text(Some(&ours), &rules, true)
        );
        let changed = serde_json::json!({ "title": "Calc", "tree_markdown": "- frame \"Calc\"\n  - [2] button \"8\"\n" });
        assert_ne!(
            state_text(Some(&theirs), &rules, true),
            state_text(Some(&changed), &rules, true)
        );
        // Between two runs of ours, indices and the title count.
        let mut renumbered = ours.clone();
        renumbered["tree_markdown"] = "- frame \"Calc\"\n  - [5] button \"7\"\n".into();
        assert_ne!(
            state_text(Some(&ours), &rules, false),
            state_text(Some(&renumbered), &rules, false)
        );
    }
}
