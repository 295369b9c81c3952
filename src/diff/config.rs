//! What counts as a difference: the diff config read from TOML (`cua diff --config`, a
//! scenario's `[diff]` table), its masks and redactions.

use super::*;

/// What counts as a difference. Read from TOML (`cua diff --config`, or a scenario's
/// `[diff]` table); every field is optional.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DiffConfig {
    /// 0..1: how different two pixels' colours must be to count (YIQ distance). Default 0.1.
    pub threshold: f64,
    /// A screenshot passes with at most this many differing pixels. Default 0.
    pub max_diff_pixels: u64,
    /// ... or with at most this fraction (0..1) of its pixels differing.
    pub max_diff_pixel_ratio: Option<f64>,
    /// Count anti-aliased pixels as differences. Default false.
    pub include_anti_aliased: bool,
    /// Compare screenshots. Default true.
    pub compare_screenshots: bool,
    /// Compare the post-action accessibility tree. Default true.
    pub compare_tree: bool,
    /// Regions ignored in screenshots.
    pub mask: Vec<MaskRule>,
    /// Volatile text replaced before comparing trees and action results.
    pub redact: Vec<RedactRule>,
    /// Leave busy widgets out (progress bars, spinners, "Saving…" labels: their tree
    /// lines and their frames in screenshots; [`crate::snapshot::busy`]). Default true.
    pub mask_busy: bool,
    /// Leave out what is under toolbars and status bars (their buttons' sensitivity,
    /// their counts: they follow the app's timing, not the turn), unless the turn acts
    /// inside one ([`crate::snapshot::incidental`]). Default true.
    pub mask_incidental: bool,
    /// More roles whose contents are incidental, beside `tool_bar` and `status_bar`.
    pub incidental_roles: Vec<String>,
    /// Leave text carets out of screenshots: thin upright marks inside editable elements,
    /// which blink and move with timing ([`super::caret`]). Default true.
    pub mask_carets: bool,
}

impl Default for DiffConfig {
    fn default() -> Self {
        DiffConfig {
            threshold: 0.1,
            max_diff_pixels: 0,
            max_diff_pixel_ratio: None,
            include_anti_aliased: false,
            compare_screenshots: true,
            compare_tree: true,
            mask: Vec::new(),
            redact: Vec::new(),
            mask_busy: true,
            mask_incidental: true,
            incidental_roles: Vec::new(),
            mask_carets: true,
        }
    }
}

impl DiffConfig {
    /// The incidental regions this config leaves out.
    pub fn incidental(&self) -> crate::snapshot::incidental::Incidental {
        use crate::snapshot::incidental::Incidental;
        match self.mask_incidental {
            true => Incidental::with_roles(&self.incidental_roles),
            false => Incidental::none(),
        }
    }

    /// The configured redactions' patterns: text a replay's check reads as volatile
    /// (validated with the config, so none is left out).
    pub fn volatile_patterns(&self) -> Vec<regex::Regex> {
        self.redact
            .iter()
            .filter_map(|r| regex::Regex::new(&r.pattern).ok())
            .collect()
    }
}

/// A screenshot region to ignore: a rectangle in window pixels (`x, y, width, height`), or
/// the frames of the elements with this `role` and/or `name` (in either run's tree).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaskRule {
    pub x: Option<i32>,
    pub y: Option<i32>,
    pub width: Option<i32>,
    pub height: Option<i32>,
    pub role: Option<String>,
    pub name: Option<String>,
}

/// Every match of the regex `pattern` becomes `replacement` (default `<redacted>`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedactRule {
    pub pattern: String,
    pub replacement: Option<String>,
}

impl DiffConfig {
    /// Parses a TOML config; errors name the file, line and field.
    pub fn from_toml(text: &str, source: &str) -> Result<DiffConfig, String> {
        let config: DiffConfig = toml::from_str(text).map_err(|e| format!("{source}: {e}"))?;
        config.validate().map_err(|e| format!("{source}: {e}"))?;
        Ok(config)
    }

    /// Checks ranges and shapes serde cannot; names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(format!(
                "`threshold` must be within 0..1, got {}",
                self.threshold
            ));
        }
        if let Some(r) = self.max_diff_pixel_ratio {
            if !(0.0..=1.0).contains(&r) {
                return Err(format!(
                    "`max_diff_pixel_ratio` must be within 0..1, got {r}"
                ));
            }
        }
        for (i, m) in self.mask.iter().enumerate() {
            let rect = [m.x, m.y, m.width, m.height];
            let by_rect = rect.iter().all(Option::is_some);
            let some_rect = rect.iter().any(Option::is_some);
            let by_element = m.role.is_some() || m.name.is_some();
            if by_rect == by_element || (some_rect && !by_rect) {
                return Err(format!(
                    "`mask[{i}]`: give either all of x, y, width, height or role and/or name"
                ));
            }
            if by_rect && (m.width.unwrap_or(0) <= 0 || m.height.unwrap_or(0) <= 0) {
                return Err(format!("`mask[{i}]`: width and height must be positive"));
            }
        }
        self.redactions().map(|_| ())
    }

    /// The built-in redactions followed by the configured ones, compiled.
    pub fn redactions(&self) -> Result<Vec<Redaction>, String> {
        let mut rules = tree::builtin_redactions();
        for (i, r) in self.redact.iter().enumerate() {
            let pattern =
                regex::Regex::new(&r.pattern).map_err(|e| format!("`redact[{i}].pattern`: {e}"))?;
            // A pattern that matches empty text puts its replacement between every two
            // characters: each such rule multiplies the text (a few of them made a 2-turn
            // diff take seconds and megabytes). Never meant; refused.
            if pattern.is_match("") {
                return Err(format!(
                    "`redact[{i}].pattern` {:?} matches empty text, so it would insert its replacement between every two characters; make it match at least one character",
                    r.pattern
                ));
            }
            rules.push(Redaction {
                pattern,
                replacement: r.replacement.clone().unwrap_or_else(|| "<redacted>".into()),
            });
        }
        Ok(rules)
    }
}
