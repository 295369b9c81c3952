//! `get_screen_size` and `get_cursor_position`.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use serde_json::json;

use super::{NoArgs, ToolContext, ToolOutput, ToolSpec};
use crate::errors::ToolError;

pub struct GetScreenSize;

#[async_trait]
impl ToolSpec for GetScreenSize {
    type Args = NoArgs;
    const NAME: &'static str = "get_screen_size";
    const DESCRIPTION: &'static str =
        "Return the size of the screen in points and its scale factor (always 1.0 on X11).";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["screen.dimensions"]);

    async fn run(&self, ctx: &ToolContext, _args: NoArgs) -> Result<ToolOutput, ToolError> {
        let (width, height) = ctx.platform().await?.screen_size().await?;
        Ok(ToolOutput::new(
            format!("screen {width}x{height} points, scale 1.0"),
            json!({ "width": width, "height": height, "scale_factor": 1.0 }),
        ))
    }
}

pub struct GetCursorPosition;

#[async_trait]
impl ToolSpec for GetCursorPosition {
    type Args = NoArgs;
    const NAME: &'static str = "get_cursor_position";
    const DESCRIPTION: &'static str =
        "Return the mouse pointer position in screen points (origin top-left).";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(Risk::R0, &["screen.cursor.position"]);

    async fn run(&self, ctx: &ToolContext, _args: NoArgs) -> Result<ToolOutput, ToolError> {
        let (x, y) = ctx.platform().await?.cursor_position().await?;
        Ok(ToolOutput::new(
            format!("cursor at ({x}, {y})"),
            json!({ "x": x, "y": y }),
        ))
    }
}
