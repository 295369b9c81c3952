//! "Did you mean": the closest of the names a field takes to a misspelt one (tools, keys,
//! roles). A leaf: it knows no vocabulary, callers hand theirs in.

/// The candidate closest to `word` (edit distance, case ignored), when it is close enough
/// to be the likely intent: at most a third of the word's length, and at least 2.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&word, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` when a close candidate exists, else nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_is_suggested_and_a_stranger_is_not() {
        let tools = ["click", "double_click", "type_text", "press_key"];
        assert_eq!(closest("clik", tools), Some("click"));
        assert_eq!(closest("Type_Txt", tools), Some("type_text"));
        assert_eq!(closest("screenshot", tools), None);
        assert_eq!(
            closest("checkbox", ["check_box", "combo_box"]),
            Some("check_box")
        );
        assert_eq!(did_you_mean("zzz", tools), "");
    }
}
