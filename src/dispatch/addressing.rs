//! cua-driver's other ways to say where an action goes, turned into cua's before the tool
//! runs (like element tokens, tokens.rs), so tools, the recorder and replay know
//! one form:
//! - `cursor_id`: which agent cursor shows the action. cua draws one per session, named
//!   `default` (or the session's id); another id is refused, naming `session`.
//! - `from_zoom: true`: the coordinates are pixels of the last `zoom` image of the window,
//!   mapped back to its screenshot's pixels.
//! - `target {kind: "window", pid, window_id}`: the pid and window, as if given.
//! - `scope: "desktop"` or `target {kind: "desktop", display_id: "primary"}`: the
//!   coordinates are screen pixels (get_desktop_state's), mapped into the window's; keys
//!   without coordinates go to the frontmost window; delivery is foreground unless the
//!   call says otherwise. The result's summary starts with
//!   "desktop scope:" ([`DESKTOP_NOTE`]).

use serde_json::{Map, Value, json};

use super::ToolContext;
use crate::errors::ToolError;

/// Capability tokens whose tools take each argument (`with_shared_arguments` in schema.rs).
pub(super) fn takes_cursor_id(capabilities: &[&str]) -> bool {
    capabilities
        .iter()
        .any(|c| c.starts_with("input.pointer.") || *c == "agent_cursor.move")
}

pub(super) fn takes_from_zoom(capabilities: &[&str]) -> bool {
    capabilities.iter().any(|c| {
        *c == "input.pointer.click" || *c == "input.pointer.drag" || *c == "input.pointer.button"
    })
}

pub(super) fn takes_target(capabilities: &[&str]) -> bool {
    capabilities
        .iter()
        .any(|c| *c == "input.delivery_mode" || *c == "input.pointer.move")
}

/// Where a zoom image's pixels sit in its window's screenshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoomOrigin {
    /// The image's top-left corner in full-size capture pixels.
    pub left: f64,
    pub top: f64,
    /// Screenshot pixels per capture pixel (get_window_state's downscale).
    pub scale: f64,
}

/// The coordinate fields an action may carry.
const POINTS: &[(&str, &str)] = &[("x", "y"), ("from_x", "from_y"), ("to_x", "to_y")];

/// The arguments in cua's own form; `cursor_id`, `from_zoom`, `scope` and `target` are
/// consumed where the tool's schema lists them (elsewhere they stay, and parsing refuses
/// them as unknown). A contradiction or something cua cannot honour is refused, naming
/// the field.
pub async fn expand(
    ctx: &ToolContext,
    mut args: Value,
    schema: &Value,
) -> Result<Value, ToolError> {
    let listed = |k: &str| schema["properties"].get(k).is_some();
    if !["cursor_id", "from_zoom", "scope", "target"]
        .iter()
        .any(|k| listed(k))
    {
        return Ok(args);
    }
    let Some(map) = args.as_object_mut() else {
        return Ok(args);
    };
    if let Some(id) = map.remove("cursor_id") {
        let id = id.as_str().unwrap_or_default();
        if id != "default" && Some(id) != ctx.session() {
            return Err(ToolError::invalid(format!(
                "`cursor_id`: cua draws one agent cursor per session (`default`); pass `session` {id:?} to act with another session's cursor"
            )));
        }
    }
    let target = map.remove("target");
    let scope = map.remove("scope");
    let mut desktop = match scope.as_ref().and_then(Value::as_str) {
        None | Some("window") => false,
        Some("desktop") => true,
        Some(other) => {
            return Err(ToolError::invalid(format!(
                "`scope`: window or desktop, got {other:?}"
            )));
        }
    };
    if let Some(t) = target.filter(|t| !t.is_null()) {
        match t["kind"].as_str() {
            Some("window") => {
                for field in ["pid", "window_id"] {
                    let value = t.get(field).filter(|v| v.is_u64()).ok_or_else(|| {
                        ToolError::invalid(format!(
                            "`target.{field}`: required for a window target"
                        ))
                    })?;
                    agree(map, field, value, "target")?;
                }
            }
            Some("desktop") => {
                let display = t["display_id"].as_str().unwrap_or("primary");
                if display != "primary" {
                    return Err(ToolError::invalid(format!(
                        "`target.display_id`: cua drives one display, \"primary\"; got {display:?}"
                    )));
                }
                desktop = true;
            }
            _ => {
                return Err(ToolError::invalid(
                    "`target.kind`: \"window\" (with pid and window_id) or \"desktop\"",
                ));
            }
        }
    }
    let from_zoom = map.remove("from_zoom").is_some_and(|v| v == true);
    if from_zoom && desktop {
        return Err(ToolError::invalid(
            "`from_zoom`: zoom images are of one window; not with a desktop scope",
        ));
    }
    if from_zoom {
        let window = map
            .get("window_id")
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                ToolError::invalid("`from_zoom`: needs `window_id` (the window that was zoomed)")
            })?;
        let zoom = ctx.zoom_origin(window).ok_or_else(|| {
            ToolError::invalid(format!(
                "`from_zoom`: this session has not zoomed window {window}; call zoom first"
            ))
        })?;
        map_points(map, |x, y| {
            ((zoom.left + x) * zoom.scale, (zoom.top + y) * zoom.scale)
        });
    }
    if desktop {
        to_window_pixels(ctx, map).await?;
        // Input at screen level is the real pointer and keyboard unless asked otherwise.
        if listed("delivery_mode") && map.get("delivery_mode").is_none_or(Value::is_null) {
            map.insert("delivery_mode".into(), json!("foreground"));
        }
    }
    Ok(args)
}

/// What a desktop-scoped action's summary starts with (cua-driver's clients look for it).
pub const DESKTOP_NOTE: &str = "desktop scope: ";

/// Whether a call asks for a desktop scope that [`expand`] resolves.
pub fn is_desktop(args: &Value, schema: &Value) -> bool {
    let listed = |k: &str| schema["properties"].get(k).is_some();
    (listed("scope") && args["scope"] == "desktop")
        || (listed("target") && args["target"]["kind"] == "desktop")
}

/// The output of a desktop-scoped action, its summary saying so.
pub fn noted_as_desktop(mut out: crate::output::ToolOutput) -> crate::output::ToolOutput {
    out.summary.insert_str(0, DESKTOP_NOTE);
    out
}

/// Sets `field` to `value` unless the call already gave another value for it (then the
/// call is refused, naming the field and what `from` says).
pub(super) fn agree(
    map: &mut Map<String, Value>,
    field: &str,
    value: &Value,
    from: &str,
) -> Result<(), ToolError> {
    match map.get(field) {
        Some(given) if !given.is_null() && given != value => Err(ToolError::invalid(format!(
            "`{field}`: {given} conflicts with `{from}`, which names {value}"
        ))),
        _ => {
            map.insert(field.to_string(), value.clone());
            Ok(())
        }
    }
}

fn map_points(map: &mut Map<String, Value>, f: impl Fn(f64, f64) -> (f64, f64)) {
    for (xk, yk) in POINTS {
        if let (Some(x), Some(y)) = (
            map.get(*xk).and_then(Value::as_f64),
            map.get(*yk).and_then(Value::as_f64),
        ) {
            let (nx, ny) = f(x, y);
            map.insert((*xk).into(), json!(nx.round()));
            map.insert((*yk).into(), json!(ny.round()));
        }
    }
}

/// Screen coordinates into the window's screenshot pixels: the given window, else the
/// pid's topmost window under the (first) point.
async fn to_window_pixels(
    ctx: &ToolContext,
    map: &mut Map<String, Value>,
) -> Result<(), ToolError> {
    let point = POINTS
        .iter()
        .find_map(|(xk, yk)| Some((map.get(*xk)?.as_f64()?, map.get(*yk)?.as_f64()?)));
    let platform = ctx.platform().await?;
    let windows = platform.list_windows().await?.windows;
    let Some((px, py)) = point else {
        // Keys in a desktop scope go where the desktop's keyboard goes: the frontmost
        // window (unless the call names one).
        if map.get("window_id").is_some() {
            return Ok(());
        }
        let front = windows
            .into_iter()
            .filter(|w| w.is_on_screen && w.pid.is_some())
            .max_by_key(|w| w.z_index)
            .ok_or_else(|| ToolError::invalid("`scope`: no window is on screen"))?;
        agree(map, "window_id", &json!(front.window_id), "scope")?;
        return agree(map, "pid", &json!(front.pid), "scope");
    };
    let pid = map.get("pid").and_then(Value::as_u64);
    let window = match map.get("window_id").and_then(Value::as_u64) {
        Some(id) => windows.into_iter().find(|w| w.window_id == id),
        None => windows
            .into_iter()
            .filter(|w| w.is_on_screen && pid.is_none_or(|p| w.pid == Some(p as u32)))
            .filter(|w| w.bounds.contains(px as i32, py as i32))
            .max_by_key(|w| w.z_index),
    }
    .ok_or_else(|| {
        ToolError::invalid(format!(
            "`scope`: no window{} at screen point ({px}, {py})",
            pid.map(|p| format!(" of pid {p}")).unwrap_or_default()
        ))
    })?;
    agree(map, "window_id", &json!(window.window_id), "scope")?;
    if let Some(p) = window.pid {
        agree(map, "pid", &json!(p), "scope")?;
    }
    let scale = ctx.image_scale(
        window.bounds.width.max(0) as u32,
        window.bounds.height.max(0) as u32,
        None,
    );
    let (ox, oy) = (window.bounds.x as f64, window.bounds.y as f64);
    map_points(map, |x, y| ((x - ox) * scale, (y - oy) * scale));
    Ok(())
}
