//! What a person does in the live page, as the tool call an agent would make: a click, a
//! double or right click, a drag or the wheel at a point of the screen goes to the window
//! on top there, by element when an actionable element is under the point (so the turn
//! keeps its locator), by window-local point otherwise; typed text and keys go to the window
//! last acted in. Pointer input that is not an element's action (a point, a double or
//! right click, a drag, the wheel) goes with the sandbox's real pointer ([`FOR_POINTS`]).

use serde::Deserialize;
use serde_json::{Value, json};

use crate::dispatch::{ToolContext, ToolRegistry};

/// How input at a point (no element under it), drags and the wheel are delivered: with the
/// sandbox's real pointer, as the person's own hand would. In background, toolkits such
/// as GTK 3 ignore synthetic pointer events while the real pointer is elsewhere, and a
/// recording must hold what reached the app.
const FOR_POINTS: &str = "foreground";

/// One event from the page, in screen pixels.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    Click {
        x: f64,
        y: f64,
        #[serde(default)]
        button: Button,
        #[serde(default = "one")]
        count: u32,
    },
    Drag {
        x: f64,
        y: f64,
        to_x: f64,
        to_y: f64,
    },
    Scroll {
        x: f64,
        y: f64,
        direction: String,
        #[serde(default = "one")]
        amount: u32,
    },
    /// A burst of typing into one field, as the page gathered it.
    Type { text: String },
    /// A key that is not text (Return, Tab, BackSpace, an arrow), with its modifiers.
    Key {
        key: String,
        #[serde(default)]
        modifiers: Vec<String>,
    },
}

fn one() -> u32 {
    1
}

#[derive(Debug, Default, Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Button {
    #[default]
    Left,
    Right,
    Middle,
}

/// The window an event lands in: its pid and id, and its origin on the screen.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub pid: u64,
    pub window_id: u64,
    origin: (f64, f64),
}

/// What a call made: the tool, its arguments and its result.
pub struct Made {
    pub tool: &'static str,
    pub arguments: Value,
    pub result: Value,
    /// The element a pointer call went to, as `role "name"`.
    pub element: Option<String>,
}

/// Runs `event` as a tool call; `last` is the window last acted in (where keys go), and
/// becomes the event's window.
pub async fn act(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    event: &Event,
    last: &mut Option<Window>,
) -> Result<Made, String> {
    let mut element = None;
    let (tool, arguments) = match event {
        Event::Click {
            x,
            y,
            button,
            count,
        } => {
            let tool = match (button, count) {
                (Button::Right, _) => "right_click",
                (_, 2..) => "double_click",
                _ => "click",
            };
            let (mut args, under) = at_point(ctx, registry, *x, *y, last).await?;
            element = under;
            if *button == Button::Middle {
                args["button"] = json!("middle");
            }
            // A double or right click is pointer input even on an element (no
            // accessibility action stands for it).
            if tool != "click" {
                args["delivery_mode"] = json!(FOR_POINTS);
            }
            (tool, args)
        }
        Event::Drag { x, y, to_x, to_y } => {
            let window = window_at(ctx, registry, *x, *y).await?;
            *last = Some(window);
            let (ox, oy) = window.origin;
            let args = json!({ "pid": window.pid, "window_id": window.window_id,
                "from_x": x - ox, "from_y": y - oy, "to_x": to_x - ox, "to_y": to_y - oy,
                "delivery_mode": FOR_POINTS });
            ("drag", args)
        }
        Event::Scroll {
            x,
            y,
            direction,
            amount,
        } => {
            let window = window_at(ctx, registry, *x, *y).await?;
            *last = Some(window);
            let (ox, oy) = window.origin;
            let args = json!({ "pid": window.pid, "window_id": window.window_id,
                "x": x - ox, "y": y - oy, "direction": direction, "amount": amount,
                "delivery_mode": FOR_POINTS });
            ("scroll", args)
        }
        Event::Type { text } => {
            let window =
                last.ok_or("typing before any click: click the field to type into first")?;
            let args = json!({ "pid": window.pid, "window_id": window.window_id, "text": text });
            ("type_text", args)
        }
        Event::Key { key, modifiers } => {
            let window = last.ok_or("a key before any click: click the window first")?;
            let args = json!({ "pid": window.pid, "window_id": window.window_id,
                "key": key, "modifiers": modifiers });
            ("press_key", args)
        }
    };
    // A call that failed may still be a turn (the recorder keeps failures): the caller
    // learns which from the recorder.
    let result = call(ctx, registry, tool, arguments.clone())
        .await
        .unwrap_or_else(|e| json!({ "error": e, "summary": e }));
    Ok(Made {
        tool,
        arguments,
        result,
        element,
    })
}

/// A pointer tool's address for a screen point: the actionable element under it (with its
/// role and name), or the window-local point.
async fn at_point(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    x: f64,
    y: f64,
    last: &mut Option<Window>,
) -> Result<(Value, Option<String>), String> {
    let under = under_point(ctx, registry, x, y).await?;
    *last = Some(under.window);
    let mut args = json!({ "pid": under.window.pid, "window_id": under.window.window_id });
    let Some(e) = under.element().filter(|e| e["element_index"].is_u64()) else {
        let (lx, ly) = under.local();
        args["x"] = json!(lx);
        args["y"] = json!(ly);
        args["delivery_mode"] = json!(FOR_POINTS);
        return Ok((args, None));
    };
    args["element_index"] = e["element_index"].clone();
    let named = format!(
        "{} {:?}",
        e["role"].as_str().unwrap_or_default(),
        e["name"].as_str().unwrap_or_default()
    );
    Ok((args, Some(named)))
}

/// What is at a screen point: the window on top there, its elements as just read, and the
/// smallest of them whose frame holds the point.
pub struct Under {
    pub window: Window,
    pub elements: Vec<Value>,
    /// The element's place in `elements`.
    pub hit: Option<usize>,
    pub at: (f64, f64),
}

impl Under {
    pub fn element(&self) -> Option<&Value> {
        self.hit.map(|i| &self.elements[i])
    }

    /// The point in the window's own coordinates.
    pub fn local(&self) -> (f64, f64) {
        (
            self.at.0 - self.window.origin.0,
            self.at.1 - self.window.origin.1,
        )
    }
}

/// Reads what is at screen point (`x`, `y`) ([`Under`]).
pub async fn under_point(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    x: f64,
    y: f64,
) -> Result<Under, String> {
    let window = window_at(ctx, registry, x, y).await?;
    let mut state = call(
        ctx,
        registry,
        "get_window_state",
        json!({ "pid": window.pid, "window_id": window.window_id, "include_screenshot": false }),
    )
    .await?;
    let elements = match state["elements"].take() {
        Value::Array(elements) => elements,
        _ => Vec::new(),
    };
    let hit = elements
        .iter()
        .enumerate()
        .filter(|(_, e)| frame_holds(&e["frame"], x, y))
        .min_by_key(|(_, e)| {
            let f = &e["frame"];
            f["w"].as_i64().unwrap_or(i64::MAX) * f["h"].as_i64().unwrap_or(1)
        })
        .map(|(i, _)| i);
    Ok(Under {
        window,
        elements,
        hit,
        at: (x, y),
    })
}

/// Whether a `{x, y, w, h}` frame in screen points holds the point.
fn frame_holds(frame: &Value, x: f64, y: f64) -> bool {
    let at = |k: &str| frame[k].as_f64();
    match (at("x"), at("y"), at("w"), at("h")) {
        (Some(fx), Some(fy), Some(w), Some(h)) => x >= fx && x < fx + w && y >= fy && y < fy + h,
        _ => false,
    }
}

/// The window on top at a screen point.
async fn window_at(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    x: f64,
    y: f64,
) -> Result<Window, String> {
    let listed = call(ctx, registry, "list_windows", json!({})).await?;
    listed["windows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["is_on_screen"] != false && w["pid"].is_u64())
        .filter(|w| frame_holds(&bounds(&w["bounds"]), x, y))
        .max_by_key(|w| w["z_index"].as_u64().unwrap_or(0))
        .map(|w| Window {
            pid: w["pid"].as_u64().unwrap_or(0),
            window_id: w["window_id"].as_u64().unwrap_or(0),
            origin: (
                w["bounds"]["x"].as_f64().unwrap_or(0.0),
                w["bounds"]["y"].as_f64().unwrap_or(0.0),
            ),
        })
        .ok_or_else(|| format!("no window at ({x:.0}, {y:.0}): nothing recorded"))
}

/// A window's `{x, y, width, height}` bounds as a `{x, y, w, h}` frame.
fn bounds(b: &Value) -> Value {
    json!({ "x": b["x"], "y": b["y"], "w": b["width"], "h": b["height"] })
}

async fn call(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    tool: &str,
    args: Value,
) -> Result<Value, String> {
    registry
        .call(ctx, tool, args)
        .await
        .map(|out| {
            let mut v = out.structured;
            if v.get("summary").is_none() {
                v["summary"] = json!(out.summary);
            }
            v
        })
        .map_err(|e| format!("{tool}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_with_defaults_and_name_what_is_wrong() {
        let click: Event = serde_json::from_str(r#"{"kind":"click","x":3,"y":4}"#).unwrap();
        assert!(matches!(
            click,
            Event::Click {
                button: Button::Left,
                count: 1,
                ..
            }
        ));
        let bad = serde_json::from_str::<Event>(r#"{"kind":"click","x":3}"#).unwrap_err();
        assert!(bad.to_string().contains("`y`"), "{bad}");
        let unknown = serde_json::from_str::<Event>(r#"{"kind":"fly"}"#).unwrap_err();
        assert!(unknown.to_string().contains("fly"), "{unknown}");
    }

    #[test]
    fn a_frame_holds_its_inside_only() {
        let f = json!({ "x": 10, "y": 20, "w": 30, "h": 40 });
        assert!(frame_holds(&f, 10.0, 20.0));
        assert!(frame_holds(&f, 39.5, 59.5));
        assert!(!frame_holds(&f, 40.0, 30.0));
        assert!(!frame_holds(&json!(null), 1.0, 1.0));
    }
}
