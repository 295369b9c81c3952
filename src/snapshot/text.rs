//! Observation without a tree: [`window_tree`] is how every reader of a window (the
//! get_window_state tool, the recorder's states, the input tools' read-backs, replay) gets
//! its tree. A window whose accessibility tree holds nothing to act on (Tk, Xt, SDL, Java
//! without its bridge, an app off the bus) is read instead as the text on its pixels
//! ([`crate::ocr`]): each line, and each word of a line of several, becomes an element of
//! role [`OCR_TEXT_ROLE`] with its frame and confidence, acted on at its frame.

use crate::ocr::{self, Line};
use crate::platform::{AxNode, AxTree, OCR_TEXT_ROLE, Platform, PlatformResult, Rect, WindowInfo};

/// What tree_markdown says first when its elements come from OCR.
pub const OCR_NOTE: &str = "Text read off the pixels by OCR: this window has no accessibility tree. Each ocr_text element is clicked at its frame.";

/// The window's accessibility tree; when that holds nothing to act on, the text on the
/// window's pixels as a tree (or the empty tree, saying why, when neither can be read).
/// Web engines are left alone: their trees fill in after the window maps, and the tools
/// wait for them.
pub async fn window_tree(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
) -> PlatformResult<AxTree> {
    window_tree_with(platform, pid, window, false).await
}

/// [`window_tree`], with what does not show too (marked `hidden`) when `with_hidden`
/// (get_window_state's `include_hidden`).
pub async fn window_tree_with(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    with_hidden: bool,
) -> PlatformResult<AxTree> {
    let tree = match with_hidden {
        true => platform.accessibility_tree_with_hidden(pid, window).await?,
        false => platform.accessibility_tree(pid, window).await?,
    };
    if tree.nodes.iter().any(|n| n.actionable) || platform.app_quirks(pid).await.web_engine {
        return Ok(tree);
    }
    let why = tree
        .warning
        .clone()
        .unwrap_or_else(|| "the accessibility walk found no actionable element".to_string());
    let capture = match platform.capture_window(window.window_id).await {
        Ok(c) => c,
        Err(e) => {
            return Ok(with_warning(
                tree,
                format!("{why}; no screenshot to read text from ({e})"),
            ));
        }
    };
    let read = tokio::task::spawn_blocking(move || ocr::read(&capture)).await;
    match read {
        Ok(Ok(lines)) if !lines.is_empty() => Ok(AxTree {
            absence: tree.absence,
            ..text_tree(window, &lines)
        }),
        Ok(Ok(_)) => Ok(with_warning(
            tree,
            format!("{why}; OCR found no text on it"),
        )),
        Ok(Err(e)) => Ok(with_warning(tree, format!("{why}; {e}"))),
        Err(e) => Ok(with_warning(tree, format!("{why}; OCR stopped: {e}"))),
    }
}

fn with_warning(mut tree: AxTree, warning: String) -> AxTree {
    tree.warning = Some(warning);
    tree
}

/// Whether a tree's elements were read by OCR.
pub fn read_by_ocr(tree: &AxTree) -> bool {
    tree.nodes.iter().any(|n| n.role == OCR_TEXT_ROLE)
}

/// get_window_state's `text_source` for a window read by OCR.
pub const OCR_SOURCE: &str = "ocr";

/// Whether a window state (get_window_state's structured result, a turn's state file)
/// was read by OCR.
pub fn state_read_by_ocr(state: &serde_json::Value) -> bool {
    state["text_source"] == OCR_SOURCE
}

/// Whether a state's tree_markdown was read by OCR (it starts with [`OCR_NOTE`]).
pub fn markdown_read_by_ocr(markdown: &str) -> bool {
    markdown.starts_with(OCR_NOTE)
}

/// The window (node 0) holding its lines of text in reading order, and each line of
/// several words its words.
pub fn text_tree(window: &WindowInfo, lines: &[Line]) -> AxTree {
    let area = Rect::new(0, 0, window.bounds.width, window.bounds.height);
    let mut root = text_node("window", &window.title, area, None);
    root.actionable = false;
    let mut nodes = vec![root];
    for line in lines {
        let at = nodes.len();
        nodes[0].children.push(at);
        let mut node = text_node(OCR_TEXT_ROLE, &line.text, line.frame, Some(line.confidence));
        node.parent = Some(0);
        nodes.push(node);
        if line.words.len() > 1 {
            for word in &line.words {
                let mut w = text_node(OCR_TEXT_ROLE, &word.text, word.frame, Some(word.confidence));
                w.parent = Some(at);
                let index = nodes.len();
                nodes[at].children.push(index);
                nodes.push(w);
            }
        }
    }
    AxTree {
        nodes,
        warning: None,
        left_out: Vec::new(),
        absence: None,
    }
}

fn text_node(role: &str, name: &str, frame: Rect, confidence: Option<f32>) -> AxNode {
    AxNode {
        role: role.to_string(),
        name: name.to_string(),
        value: None,
        value_unknown: false,
        states: ["visible", "showing", "enabled"].map(String::from).to_vec(),
        actions: Vec::new(),
        frame: Some(frame),
        actionable: true,
        parent: None,
        children: Vec::new(),
        reported_children: None,
        handle: String::new(),
        confidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ocr::Word;

    fn word(text: &str, x: i32) -> Word {
        Word {
            text: text.into(),
            frame: Rect::new(x, 10, 30, 14),
            confidence: 90.0,
        }
    }

    #[test]
    fn lines_and_the_words_of_longer_lines_become_indexed_elements() {
        let window = WindowInfo {
            window_id: 7,
            pid: Some(70),
            app_name: "Tk".into(),
            title: "cua order form".into(),
            bounds: Rect::new(5, 5, 380, 460),
            z_index: 0,
            is_on_screen: true,
            space_id: None,
        };
        let one = Line {
            text: "Quantity".into(),
            frame: Rect::new(14, 56, 74, 17),
            confidence: 96.0,
            words: vec![word("Quantity", 14)],
        };
        let two = Line {
            text: "Add Clear".into(),
            frame: Rect::new(12, 118, 131, 36),
            confidence: 85.0,
            words: vec![word("Add", 26), word("Clear", 98)],
        };
        let tree = text_tree(&window, &[one, two]);
        assert!(read_by_ocr(&tree));
        let (markdown, elements) = crate::snapshot::render_markdown(&tree);
        let names: Vec<&str> = elements
            .iter()
            .map(|i| tree.nodes[*i].name.as_str())
            .collect();
        assert_eq!(
            names,
            ["Quantity", "Add Clear", "Add", "Clear"],
            "{markdown}"
        );
        assert_eq!(
            tree.nodes[elements[2]].frame,
            Some(Rect::new(26, 10, 30, 14))
        );
        assert_eq!(tree.nodes[elements[2]].parent, Some(elements[1]));
        assert!(markdown.contains("[2] ocr_text \"Add\""), "{markdown}");
    }
}
