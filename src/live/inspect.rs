//! The live page's inspector: what is under the pointer (its role, name, index and frame)
//! and the scenario step that acts on it, as TOML ready to paste into
//! `harness/<name>.toml`. Inspecting reads the window; it never records a turn.

use serde_json::{Value, json};

use super::input;
use crate::dispatch::{ToolContext, ToolRegistry};

/// The page's answer for screen point (`x`, `y`).
pub async fn inspect(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    x: f64,
    y: f64,
) -> Result<Value, String> {
    let under = input::under_point(ctx, registry, x, y).await?;
    let Some((hit, element)) = under.hit.zip(under.element()) else {
        let (lx, ly) = under.local();
        return Ok(json!({ "kind": "inspected", "x": x, "y": y,
            "locator": format!("no element: the window's point ({lx:.0}, {ly:.0})"),
            "step": point_step(lx, ly) }));
    };
    let role = element["role"].as_str().unwrap_or_default();
    let name = element["name"].as_str().unwrap_or_default();
    // `nth` counts in tree order, as a scenario's target is resolved.
    let nth = under.elements[..hit]
        .iter()
        .filter(|e| e["role"] == role && e["name"] == name)
        .count();
    let mut locator = format!("{role} {name:?}");
    if nth > 0 {
        locator.push_str(&format!(" (nth {nth})"));
    }
    Ok(
        json!({ "kind": "inspected", "x": x, "y": y, "role": role, "name": name,
        "element_index": element["element_index"], "frame": element["frame"],
        "locator": locator, "step": element_step(role, name, nth) }),
    )
}

/// A `[[step]]` that clicks the element with this role, exact name and place among its
/// look-alikes.
fn element_step(role: &str, name: &str, nth: usize) -> String {
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    let nth = if nth > 0 {
        format!(", nth = {nth}")
    } else {
        String::new()
    };
    format!(
        "[[step]]\ntool = \"click\"\ntarget = {{ role = {}, name = {}{nth} }}\n",
        quoted(role),
        quoted(name)
    )
}

/// A `[[step]]` that clicks a window-local point (nothing is under it).
fn point_step(x: f64, y: f64) -> String {
    format!("[[step]]\ntool = \"click\"\nargs = {{ x = {x:.0}, y = {y:.0} }}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_back_as_the_scenario_target_it_names() {
        #[derive(serde::Deserialize)]
        struct File {
            step: Vec<crate::harness::Step>,
        }
        let toml = element_step("button", "Say \"hi\"", 2) + &point_step(12.4, 30.0);
        let file: File = toml::from_str(&toml).unwrap();
        let target = file.step[0].target.as_ref().unwrap();
        assert_eq!(
            (target.role.as_str(), target.name.as_str(), target.nth),
            ("button", "Say \"hi\"", 2)
        );
        assert_eq!(file.step[1].args.as_ref().unwrap()["x"], 12);
        assert!(file.step[1].target.is_none());
    }
}
