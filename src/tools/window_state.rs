//! `get_window_state`: a window's accessibility tree as indexed Markdown plus its
//! screenshot. The snapshot it takes is what element indices in later actions refer to.

use crate::dispatch::{Contract, Risk};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::capture::encode_png;
use super::{ImageBlock, ToolContext, ToolOutput, ToolSpec, window_of, write_out_file};
use crate::dispatch::token_for;
use crate::errors::ToolError;
use crate::platform::{Absence, AxTree, LeftOut, Platform, WindowInfo};
use crate::snapshot::{bounded, element_index, filter_markdown, indices_in_markdown, state_of};

/// Browsers map their window before the page's document is built, and a read then shows
/// an empty document. A document still `busy`, or empty and unnamed in an app that started
/// moments ago, is read again until it has content, within this bound.
const DOCUMENT_WAIT: Duration = Duration::from_secs(4);
const DOCUMENT_REREAD: Duration = Duration::from_millis(100);
/// An app younger than this may still be loading the page it was started with.
const YOUNG_APP: Duration = Duration::from_secs(20);
const DOCUMENT_ROLES: &[&str] = &["document_web", "document_frame"];

/// Roles a web page's person operates; each has an action and, when showing, a frame once
/// the browser has filled them in.
const WEB_OPERABLE_ROLES: &[&str] = &[
    "push_button",
    "button",
    "toggle_button",
    "check_box",
    "radio_button",
    "link",
    "combo_box",
];

/// Whether a document in the tree is still being built: `busy`, or, in a young app, empty,
/// not there yet (Firefox's content frame holds nothing until the page starts; a loaded
/// Chromium maps its window before the page's document exists), or holding controls that
/// have no actions, or no frame though showing, yet (Firefox fills both in after the
/// nodes).
fn document_pending(tree: &AxTree, young: bool, web_engine: bool) -> bool {
    let has_document = || {
        tree.nodes
            .iter()
            .any(|n| DOCUMENT_ROLES.contains(&n.role.as_str()))
    };
    if young && web_engine && !has_document() {
        return true;
    }
    let in_document = |mut i: usize| {
        while let Some(p) = tree.nodes[i].parent {
            if DOCUMENT_ROLES.contains(&tree.nodes[p].role.as_str()) {
                return true;
            }
            i = p;
        }
        false
    };
    tree.nodes.iter().enumerate().any(|(i, n)| {
        let document = DOCUMENT_ROLES.contains(&n.role.as_str());
        (document && n.states.iter().any(|s| s == "busy"))
            || (young && (document || n.role == "internal_frame") && n.children.is_empty())
            || (young
                && WEB_OPERABLE_ROLES.contains(&n.role.as_str())
                && (n.actions.is_empty()
                    || (n.frame.is_none() && n.states.iter().any(|s| s == "showing")))
                && in_document(i))
    })
}

/// The window's tree, once any document in it has been built (bounded by DOCUMENT_WAIT).
async fn read_settled_tree(
    platform: &dyn Platform,
    pid: u32,
    window: &WindowInfo,
    first_read: bool,
    with_hidden: bool,
) -> Result<AxTree, ToolError> {
    let deadline = Instant::now() + DOCUMENT_WAIT;
    // A young browser builds a page's tree in pieces (Firefox's first read once held the
    // page's list and nothing above it): the first read of its window stands once the next
    // one has as many nodes (later reads do not pay for it).
    let mut previous_count = None;
    loop {
        let tree =
            crate::snapshot::text::window_tree_with(platform, pid, window, with_hidden).await?;
        let young = platform
            .process_age(pid)
            .await
            .is_some_and(|a| a < YOUNG_APP);
        let web_engine = young && platform.app_quirks(pid).await.web_engine;
        let growing = web_engine && first_read && previous_count != Some(tree.nodes.len());
        if !(document_pending(&tree, young, web_engine) || growing) || Instant::now() >= deadline {
            return Ok(tree);
        }
        previous_count = Some(tree.nodes.len());
        tokio::time::sleep(DOCUMENT_REREAD).await;
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetWindowStateArgs {
    /// Process id that owns the window (0 for a window whose process is unknown: list_windows shows its pid as null).
    pub pid: u32,
    /// Window id (from list_windows or launch_app). Must belong to pid.
    pub window_id: u64,
    /// Keep only tree lines whose text (not their element index) holds this substring (any case), with their ancestors; indices unchanged.
    pub query: Option<String>,
    /// Capture the window's screenshot too. Default true; false returns the tree only (faster).
    pub include_screenshot: Option<bool>,
    /// List the elements that do not show too (hidden widgets, a closed menu's items), each marked (hidden). Default false: they are left out.
    pub include_hidden: Option<bool>,
    /// Write the screenshot PNG to this path instead of returning it inline. The directory must exist.
    pub screenshot_out_file: Option<String>,
    /// Downscale the screenshot to this longest side (0: full size; default from config); frames then use the downscaled pixels.
    pub max_image_dimension: Option<u32>,
    /// Deprecated and ignored (accepted for compatibility): the tree and the screenshot are both returned.
    #[allow(dead_code)] // accepted so callers written for other drivers keep working
    pub capture_mode: Option<String>,
    /// Put elements[] in the structured result. Default true.
    #[allow(dead_code)] // read by the MCP server, which shapes the response
    pub include_elements: Option<bool>,
    /// Keep only this many levels below the window (deeply nested apps).
    #[schemars(range(min = 1))]
    pub max_depth: Option<usize>,
    /// Keep only this many tree nodes, in walk order (huge web or Electron trees).
    #[schemars(range(min = 1))]
    pub max_elements: Option<usize>,
}

pub struct GetWindowState;

#[async_trait]
impl ToolSpec for GetWindowState {
    type Args = GetWindowStateArgs;
    const NAME: &'static str = "get_window_state";
    const DESCRIPTION: &'static str = "Walk one window's accessibility tree: tree_markdown tags every actionable element with its index (`- [N] role \"name\" value=\"…\" [actions=[press]]`; `value=?` where the toolkit does not expose a value it shows, e.g. GTK 4.8's entries: unknown, not empty); also snapshot_id, total_element_count, the window's screenshot (PNG, with its open menus and popups) and elements[] (element_index, element_token, role, name, label, value (null with value_known: false where unknown), states, actions, frame {x, y, w, h} in screen points, pixel_frame {x, y, w, h} in the screenshot's pixels, whose centre a pixel click takes as x, y). Elements not showing are left out (hidden widgets, a closed menu's items, GTK 4 widgets laid out with no area; include_hidden lists them, marked (hidden)); an element its view scrolled out of sight is kept and shows `(offscreen)`, without a frame: act on it by element, or scroll it into view first. Indices and tokens refer to this snapshot: read again after anything changed. window_id must belong to pid. degraded: true means nothing actionable was found: act by pixel. Every element is returned, however big the window; where a bound left something out (a spreadsheet's cells out of view, max_depth or max_elements), truncated {returned, total, where: [{element, returned, total, why}]} says what, in tree nodes. tree_source says where the elements come from: accessibility, ocr (no bridge), ocr (on the bus, nothing exported after N ms), ocr (tree exported, nothing to act on in it), or empty.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(
        Risk::R3,
        &[
            "accessibility.window_state",
            "accessibility.tree",
            "accessibility.tree.structured",
            "accessibility.tree.bounded",
            "accessibility.element_tokens",
            "screen.capture",
            "screen.capture.window",
        ],
    );

    async fn run(
        &self,
        ctx: &ToolContext,
        args: GetWindowStateArgs,
    ) -> Result<ToolOutput, ToolError> {
        let platform = ctx.platform().await?;
        let window = window_of(platform.as_ref(), Some(args.pid), args.window_id).await?;
        let include_screenshot = args.include_screenshot.unwrap_or(true);

        // Capture and encode on another worker while the tree is read.
        let scale = ctx.image_scale(
            window.bounds.width.max(0) as u32,
            window.bounds.height.max(0) as u32,
            args.max_image_dimension,
        );
        let shot = include_screenshot.then(|| {
            let platform = platform.clone();
            let id = args.window_id;
            tokio::spawn(async move {
                let capture = platform.capture_window(id).await.map_err(ToolError::from)?;
                let capture = super::capture::downscale(capture, scale);
                let png = encode_png(&capture)?;
                Ok::<_, ToolError>((capture.width, capture.height, png))
            })
        });
        let first_read = ctx.snapshot(args.pid, window.window_id).is_none();
        let read_started = std::time::Instant::now();
        let with_hidden = args.include_hidden.unwrap_or(false);
        let mut tree = read_settled_tree(
            platform.as_ref(),
            args.pid,
            &window,
            first_read,
            with_hidden,
        )
        .await?;
        let read_nodes = tree.nodes.len();
        let cut = bounded(&tree, args.max_depth, args.max_elements);
        let was_cut = cut.is_some();
        if let Some(cut) = cut {
            tree = cut;
        }
        let (mut structured, elements) = state_of(args.pid, &window, &tree);
        structured["tree_source"] = json!(tree_source(&tree));
        if let Some(truncated) = truncation(&tree, read_nodes, &args) {
            structured["truncated"] = truncated;
        }
        // A reading with hidden elements is no after-state: a turn's states list what shows.
        if ctx.recorder.is_recording() && !was_cut && !with_hidden {
            // A turn's settle may take this reading as its after-state.
            ctx.recorder
                .observed(window.window_id, read_started, structured.clone());
        }
        if was_cut {
            structured["tree_bounded"] = json!(true);
        }
        place_frames(&mut structured, &window.bounds, scale);
        let element_count = elements.len();
        let snapshot = ctx.store_snapshot(args.pid, args.window_id, tree, elements);
        structured["snapshot_id"] = json!(snapshot.snapshot_id);
        structured["total_element_count"] = json!(element_count);
        if let Some(elements) = structured["elements"].as_array_mut() {
            for (i, e) in elements.iter_mut().enumerate() {
                e["element_token"] = json!(token_for(&snapshot.snapshot_id, i));
            }
        }
        if let Some(q) = &args.query {
            keep_matching(&mut structured, q);
        }
        structured["returned_element_count"] =
            json!(structured["elements"].as_array().map_or(0, Vec::len));
        let mut summary = summary_line(&window, element_count, &structured);
        let image = match shot {
            Some(task) => {
                let shot = task
                    .await
                    .map_err(|e| ToolError::failed(format!("screenshot task: {e}")))??;
                let out_file = args.screenshot_out_file.as_deref();
                attach_screenshot(ctx, shot, scale, out_file, &mut structured, &mut summary)?
            }
            None => None,
        };
        summary.push('\n');
        summary.push_str(structured["tree_markdown"].as_str().unwrap_or(""));
        Ok(ToolOutput {
            summary,
            structured,
            image,
        })
    }
}

/// The summary's first line: the window, its element count, and what the structured
/// result says of how it was read (degraded, by OCR, truncated).
fn summary_line(window: &WindowInfo, element_count: usize, structured: &Value) -> String {
    let mut line = format!(
        "{} \"{}\" (pid {}, window {}): {element_count} elements",
        window.app_name, window.title, structured["pid"], window.window_id
    );
    if let Some(reason) = structured["degraded_reason"].as_str() {
        line.push_str(&format!(" (degraded: {reason})"));
    }
    if let Some(source) = structured["tree_source"]
        .as_str()
        .filter(|s| *s != ACCESSIBILITY)
    {
        line.push_str(&format!(" (read by {source})"));
    }
    if let Some(t) = structured.get("truncated") {
        line.push_str(&truncated_summary(t));
    }
    line
}

/// `tree_source` of a window read from its accessibility tree.
const ACCESSIBILITY: &str = "accessibility";

/// Where the answer's elements come from (`tree_source`): the app's accessibility tree;
/// OCR standing in for one, saying for what (no bridge on the bus; connected but nothing
/// exported; exported with nothing to act on); or nothing at all (`empty`).
fn tree_source(tree: &AxTree) -> String {
    if !crate::snapshot::text::read_by_ocr(tree) {
        return match tree.nodes.is_empty() {
            true => "empty".into(),
            false => ACCESSIBILITY.into(),
        };
    }
    match tree.absence {
        Some(Absence::NoBridge) => "ocr (no bridge)".into(),
        Some(Absence::NothingExported { after_ms }) => {
            format!("ocr (on the bus, nothing exported after {after_ms} ms)")
        }
        None => "ocr (tree exported, nothing to act on in it)".into(),
    }
}

/// What the answer left out, when anything was (None: the whole window is in it):
/// `{returned, total, where: [{element, returned, total, why}]}`, counting tree nodes;
/// `where` names each element a bound cut under (a table read by its cells in view) and
/// the caller's own `max_depth` / `max_elements`.
fn truncation(tree: &AxTree, read_nodes: usize, args: &GetWindowStateArgs) -> Option<Value> {
    let mut places: Vec<LeftOut> = tree.left_out.clone();
    if tree.nodes.len() < read_nodes {
        let bounds: Vec<String> = [
            ("max_depth", args.max_depth),
            ("max_elements", args.max_elements),
        ]
        .into_iter()
        .filter_map(|(name, v)| Some(format!("{name} = {}", v?)))
        .collect();
        places.push(LeftOut {
            element: "the window".into(),
            returned: tree.nodes.len() as u64,
            total: read_nodes as u64,
            why: format!("the call's {}", bounds.join(" and ")),
        });
    }
    if places.is_empty() {
        return None;
    }
    let returned = tree.nodes.len() as u64;
    let missing: u64 = places
        .iter()
        .map(|p| p.total.saturating_sub(p.returned))
        .sum();
    Some(json!({
        "returned": returned,
        "total": returned.saturating_add(missing),
        "where": places,
    }))
}

/// `truncated` in the summary's first line: ` (truncated: 403 of 1073741827 nodes
/// returned; 400 of 1073741824 under table "Sheet1": …)`.
fn truncated_summary(t: &Value) -> String {
    let places: Vec<String> = t["where"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            format!(
                "{} of {} under {}: {}",
                w["returned"],
                w["total"],
                w["element"].as_str().unwrap_or(""),
                w["why"].as_str().unwrap_or("")
            )
        })
        .collect();
    format!(
        " (truncated: {} of {} nodes returned; {})",
        t["returned"],
        t["total"],
        places.join("; ")
    )
}

/// Only the tree lines and elements that match `query` (and their ancestors' lines).
fn keep_matching(structured: &mut Value, query: &str) {
    let filtered = filter_markdown(structured["tree_markdown"].as_str().unwrap_or(""), query);
    let shown = indices_in_markdown(&filtered);
    if let Some(elements) = structured["elements"].as_array_mut() {
        elements.retain(|e| element_index(e).is_some_and(|i| shown.contains(&i)));
    }
    structured["tree_markdown"] = json!(filtered);
}

/// The screenshot's fields in the result, and the image itself: returned, or written to
/// `out_file` (then its path is returned instead).
fn attach_screenshot(
    ctx: &ToolContext,
    (width, height, png): (u32, u32, Vec<u8>),
    scale: f64,
    out_file: Option<&str>,
    structured: &mut Value,
    summary: &mut String,
) -> Result<Option<ImageBlock>, ToolError> {
    structured["screenshot"] =
        json!({ "width": width, "height": height, "scale": scale, "format": "png" });
    // cua-driver's flat names for the same, which its clients read.
    structured["screenshot_width"] = json!(width);
    structured["screenshot_height"] = json!(height);
    structured["screenshot_mime_type"] = json!("image/png");
    summary.push_str(&format!(", screenshot {width}x{height}"));
    let Some(path) = out_file else {
        return Ok(Some(ImageBlock {
            mime: "image/png",
            data: png,
        }));
    };
    let written = write_out_file(ctx, "screenshot_out_file", path, &png)?;
    structured["screenshot_file_path"] = json!(written);
    summary.push_str(&format!(" written to {}", written.display()));
    Ok(None)
}

/// Each element's `frame` in screen points (cua-driver's meaning, which its clients read)
/// and `pixel_frame` in the returned screenshot's pixels (window-local, downscaled by
/// max_image_dimension): the centre of a pixel_frame is the x, y a pixel click takes.
fn place_frames(structured: &mut serde_json::Value, window: &crate::platform::Rect, scale: f64) {
    let Some(elements) = structured["elements"].as_array_mut() else {
        return;
    };
    for e in elements {
        let Some(local) = e.get("frame").filter(|f| f.is_object()).cloned() else {
            continue;
        };
        let at = |k: &str| local[k].as_f64().unwrap_or(0.0);
        let scaled = |v: f64| (v * scale).round() as i64;
        e["pixel_frame"] = json!({ "x": scaled(at("x")), "y": scaled(at("y")),
                                   "w": scaled(at("w")), "h": scaled(at("h")) });
        e["frame"] = json!({ "x": at("x") as i64 + i64::from(window.x),
                             "y": at("y") as i64 + i64::from(window.y),
                             "w": at("w") as i64, "h": at("h") as i64 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::tests::sensitive;

    /// frame → document → button, with the button's actions and the document's states.
    fn page(button_actions: bool, document_states: &[&str]) -> AxTree {
        let mut frame = sensitive("frame", "Browser", false, vec![1]);
        frame.frame = Some(crate::platform::Rect {
            x: 0,
            y: 0,
            width: 100,
            height: 100,
        });
        let mut document = sensitive("document_web", "page", false, vec![2]);
        document.parent = Some(0);
        document.states = document_states.iter().map(|s| s.to_string()).collect();
        let mut button = sensitive("button", "Go", button_actions, vec![]);
        button.parent = Some(1);
        button.frame = frame.frame;
        button.states = vec!["showing".into()];
        AxTree {
            nodes: vec![frame, document, button],
            warning: None,
            left_out: Vec::new(),
            absence: None,
        }
    }

    #[test]
    fn what_a_bound_left_out_is_counted_and_named() {
        let args = |max_elements: Option<usize>| -> GetWindowStateArgs {
            serde_json::from_value(
                json!({ "pid": 1, "window_id": 2, "max_elements": max_elements }),
            )
            .unwrap()
        };
        let mut tree = page(true, &[]);
        assert_eq!(truncation(&tree, 3, &args(None)), None, "nothing left out");
        tree.left_out.push(LeftOut {
            element: "table \"Sheet1\"".into(),
            returned: 400,
            total: 1_000_000,
            why: "cells in view".into(),
        });
        let t = truncation(&tree, 3, &args(None)).unwrap();
        assert_eq!(t["returned"], 3);
        assert_eq!(t["total"], 3 + 1_000_000 - 400);
        assert_eq!(t["where"][0]["element"], "table \"Sheet1\"");
        // The caller's own bound: 2 of the 5 nodes read.
        tree.left_out.clear();
        tree.nodes.truncate(2);
        let t = truncation(&tree, 5, &args(Some(2))).unwrap();
        assert_eq!(
            (t["returned"].as_u64(), t["total"].as_u64()),
            (Some(2), Some(5))
        );
        assert_eq!(t["where"][0]["why"], "the call's max_elements = 2");
    }

    #[test]
    fn a_document_is_pending_while_busy_or_while_a_young_app_fills_it_in() {
        assert!(!document_pending(&page(true, &[]), true, true));
        assert!(document_pending(&page(true, &["busy"]), false, true));
        // Controls without actions yet: waited for in a young app only.
        assert!(document_pending(&page(false, &[]), true, true));
        assert!(!document_pending(&page(false, &[]), false, true));
        // An empty document, or a showing control without a frame yet.
        let mut empty = page(true, &[]);
        empty.nodes[1].children.clear();
        empty.nodes.truncate(2);
        assert!(document_pending(&empty, true, true));
        let mut frameless = page(true, &[]);
        frameless.nodes[2].frame = None;
        assert!(document_pending(&frameless, true, true));
        // Not showing (scrolled away): no frame is expected.
        frameless.nodes[2].states.clear();
        assert!(!document_pending(&frameless, true, true));
        // A young browser window without its page's document yet; other apps have none.
        let mut no_document = page(true, &[]);
        no_document.nodes[0].children.clear();
        no_document.nodes.truncate(1);
        assert!(document_pending(&no_document, true, true));
        assert!(!document_pending(&no_document, true, false));
        assert!(!document_pending(&no_document, false, true));
    }
}
