//! Redaction: what a recording must not keep. Password fields (role `password_text`) and
//! elements whose name `redaction.names` lists are secret: their frames are painted over
//! in every PNG of a turn and in the video, their values are blanked in the recorded
//! states, and text an action typed or set into one is replaced in action.json (the
//! argument and the summary). On by default; `redaction.enabled = false` turns it off.
//!
//! A replay of a redacted turn needs the text back: `CUA_SECRET_TURN_<N>` gives turn N's.

use serde_json::Value;

use crate::platform::{Capture, Rect};

/// What stands in for a redacted text.
pub const REDACTED: &str = "[redacted]";

/// The colour secret frames are painted with (opaque black).
const MASK: [u8; 4] = [0, 0, 0, 255];

/// Which elements are secret, from the session's config.
#[derive(Debug, Clone)]
pub struct Rules {
    enabled: bool,
    names: Vec<String>,
}

impl Rules {
    /// The rules of a session whose effective config is `config`.
    pub fn of(config: &serde_json::Map<String, Value>) -> Rules {
        Rules {
            enabled: config
                .get("redaction.enabled")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            names: config
                .get("redaction.names")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|n| n.as_str().map(str::to_lowercase))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether an element (get_window_state's `elements[]` shape: role, name) is secret.
    pub fn is_secret(&self, element: &Value) -> bool {
        if !self.enabled {
            return false;
        }
        let name = element["name"].as_str().unwrap_or("").to_lowercase();
        element["role"] == "password_text" || (!name.is_empty() && self.names.contains(&name))
    }

    /// The window-local frames of a state's secret elements.
    pub fn secret_frames(&self, state: &Value) -> Vec<Rect> {
        secret_elements(self, state)
            .filter_map(|e| serde_json::from_value::<Rect>(e["frame"].clone()).ok())
            .filter(|r| !r.is_empty())
            .collect()
    }

    /// A state as it may be written: secret elements' values blanked, in `elements[]` and
    /// on their `tree_markdown` lines.
    pub fn scrub_state(&self, state: &mut Value) {
        let indices: Vec<u64> = secret_elements(self, state)
            .filter_map(crate::snapshot::element_index)
            .collect();
        if indices.is_empty() {
            return;
        }
        if let Some(elements) = state["elements"].as_array_mut() {
            for e in elements.iter_mut() {
                if crate::snapshot::element_index(e).is_some_and(|i| indices.contains(&i))
                    && !e["value"].is_null()
                {
                    e["value"] = Value::String(REDACTED.into());
                }
            }
        }
        if let Some(markdown) = state["tree_markdown"].as_str() {
            let scrubbed: Vec<String> = markdown
                .lines()
                .map(|line| {
                    let secret = indices
                        .iter()
                        .any(|i| line.trim_start().starts_with(&format!("- [{i}] ")));
                    if secret {
                        scrub_value(line)
                    } else {
                        line.to_string()
                    }
                })
                .collect();
            let mut joined = scrubbed.join("\n");
            if markdown.ends_with('\n') {
                joined.push('\n');
            }
            state["tree_markdown"] = Value::String(joined);
        }
    }
}

fn secret_elements<'a>(rules: &'a Rules, state: &'a Value) -> impl Iterator<Item = &'a Value> {
    state["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| rules.is_secret(e))
}

/// A Markdown element line with its `value="…"` replaced.
fn scrub_value(line: &str) -> String {
    const KEY: &str = " value=\"";
    let Some(start) = line.find(KEY) else {
        return line.to_string();
    };
    let body = start + KEY.len();
    // The value ends at the first quote not escaped with a backslash.
    let mut end = None;
    let mut escaped = false;
    for (i, c) in line[body..].char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                end = Some(body + i);
                break;
            }
            _ => escaped = false,
        }
    }
    match end {
        Some(end) => format!("{}{REDACTED}{}", &line[..body], &line[end..]),
        None => format!("{}{REDACTED}\"", &line[..body]),
    }
}

/// Paints `frames` (in the capture's pixels) over with the mask colour (imageproc clips
/// them to the image).
pub fn paint(capture: &mut Capture, frames: &[Rect]) {
    let (width, height) = (capture.width, capture.height);
    let Some(mut image) =
        image::RgbaImage::from_raw(width, height, std::mem::take(&mut capture.rgba))
    else {
        return;
    };
    for r in frames.iter().filter(|r| !r.is_empty()) {
        let rect = imageproc::rect::Rect::at(r.x, r.y).of_size(r.width as u32, r.height as u32);
        imageproc::drawing::draw_filled_rect_mut(&mut image, rect, image::Rgba(MASK));
    }
    capture.rgba = image.into_raw();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(names: &[&str]) -> Rules {
        Rules {
            enabled: true,
            names: names.iter().map(|n| n.to_lowercase()).collect(),
        }
    }

    #[test]
    fn password_fields_and_named_elements_are_scrubbed_and_others_kept() {
        let mut state = json!({
            "elements": [
                {"index": 0, "role": "password_text", "name": "Password", "value": "••••", "frame": {"x": 1, "y": 2, "width": 30, "height": 10}},
                {"index": 1, "role": "entry", "name": "Card number", "value": "4111 \"1\"", "frame": {"x": 5, "y": 20, "width": 30, "height": 10}},
                {"index": 2, "role": "entry", "name": "User", "value": "ann", "frame": {"x": 5, "y": 40, "width": 30, "height": 10}},
            ],
            "tree_markdown": "- window \"W\"\n  - [0] password_text \"Password\" value=\"••••\"\n  - [1] entry \"Card number\" value=\"4111 \\\"1\\\"\" [actions=[activate]]\n  - [2] entry \"User\" value=\"ann\"\n",
        });
        let r = rules(&["card NUMBER"]);
        assert_eq!(r.secret_frames(&state).len(), 2);
        r.scrub_state(&mut state);
        assert_eq!(state["elements"][0]["value"], REDACTED);
        assert_eq!(state["elements"][1]["value"], REDACTED);
        assert_eq!(state["elements"][2]["value"], "ann");
        let md = state["tree_markdown"].as_str().unwrap();
        assert!(!md.contains("••••") && !md.contains("4111"), "{md}");
        assert!(
            md.contains("[1] entry \"Card number\" value=\"[redacted]\" [actions=[activate]]"),
            "{md}"
        );
        assert!(md.contains("value=\"ann\"") && md.ends_with('\n'), "{md}");
        let off = Rules {
            enabled: false,
            names: Vec::new(),
        };
        assert!(off.secret_frames(&state).is_empty());
    }

    #[test]
    fn painting_covers_the_frame_clamped_to_the_image() {
        let mut c = Capture {
            width: 4,
            height: 3,
            rgba: vec![255; 4 * 3 * 4],
        };
        paint(
            &mut c,
            &[Rect {
                x: 2,
                y: -1,
                width: 10,
                height: 2,
            }],
        );
        let black = |x: usize, y: usize| c.rgba[(y * 4 + x) * 4] == 0;
        assert!(black(2, 0) && black(3, 0));
        assert!(!black(1, 0) && !black(2, 1));
    }
}
