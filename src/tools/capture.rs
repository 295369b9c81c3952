//! `screenshot` and `zoom`, plus the image encoders the other tools share.

use crate::dispatch::{Contract, Risk};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ImageBlock, ToolContext, ToolOutput, ToolSpec, window_of, write_out_file};
use crate::errors::ToolError;
use crate::platform::Capture;

/// PNG of a capture (see [`crate::images::encode_png`]), failing as a tool does.
pub fn encode_png(capture: &Capture) -> Result<Vec<u8>, ToolError> {
    crate::images::encode_png(capture).map_err(ToolError::failed)
}

/// The capture scaled by `scale` (≤ 1; 1 returns it as is), for max_image_dimension.
pub fn downscale(capture: Capture, scale: f64) -> Capture {
    if scale >= 1.0 {
        return capture;
    }
    let (w, h) = (
        ((capture.width as f64 * scale).round() as u32).max(1),
        ((capture.height as f64 * scale).round() as u32).max(1),
    );
    let Some(img) = image::RgbaImage::from_raw(capture.width, capture.height, capture.rgba) else {
        return Capture {
            width: 0,
            height: 0,
            rgba: Vec::new(),
        };
    };
    let small = image::imageops::resize(&img, w, h, image::imageops::FilterType::Triangle);
    Capture {
        width: w,
        height: h,
        rgba: small.into_raw(),
    }
}

fn encode_jpeg(capture: &Capture, quality: u8) -> Result<Vec<u8>, ToolError> {
    let rgb = crate::images::rgba_to_rgb(&capture.rgba);
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode(
            &rgb,
            capture.width,
            capture.height,
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| ToolError::failed(format!("jpeg encode: {e}")))?;
    Ok(out)
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Png,
    Jpeg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// Window id to capture (from list_windows).
    pub window_id: u64,
    /// Image format. Default png.
    pub format: Option<ImageFormat>,
    /// JPEG quality 1-95; ignored for png. Default 85.
    pub quality: Option<u8>,
    /// Write the image to this path instead of returning it inline.
    pub screenshot_out_file: Option<String>,
    /// Downscale so the longest side fits (overrides the config key of that name; 0: full size).
    pub max_image_dimension: Option<u32>,
}

pub struct Screenshot;

#[async_trait]
impl ToolSpec for Screenshot {
    type Args = ScreenshotArgs;
    const NAME: &'static str = "screenshot";
    const DESCRIPTION: &'static str = "Capture one window's client area as PNG (default) or JPEG; covered windows come out right.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract =
        Contract::reads(Risk::R3, &["screen.capture", "screen.capture.window"]);

    async fn run(&self, ctx: &ToolContext, args: ScreenshotArgs) -> Result<ToolOutput, ToolError> {
        let format = args.format.unwrap_or(ImageFormat::Png);
        if let Some(q) = args.quality {
            if !(1..=95).contains(&q) {
                return Err(ToolError::invalid(format!(
                    "`quality`: must be 1-95, got {q}"
                )));
            }
        }
        let platform = ctx.platform().await?;
        let window = window_of(platform.as_ref(), None, args.window_id).await?;
        let capture = platform.capture_window(args.window_id).await?;
        let scale = ctx.image_scale(capture.width, capture.height, args.max_image_dimension);
        let capture = downscale(capture, scale);
        let (data, mime) = match format {
            ImageFormat::Png => (encode_png(&capture)?, "image/png"),
            ImageFormat::Jpeg => (
                encode_jpeg(&capture, args.quality.unwrap_or(85))?,
                "image/jpeg",
            ),
        };
        let mut structured = json!({
            "window_id": args.window_id,
            "width": capture.width,
            "height": capture.height,
            "scale": scale,
            "format": if format == ImageFormat::Png { "png" } else { "jpeg" },
            "bytes": data.len(),
        });
        let mut summary = format!(
            "screenshot of {} \"{}\": {}x{} {}",
            window.app_name, window.title, capture.width, capture.height, mime
        );
        let image = if let Some(path) = &args.screenshot_out_file {
            let written = write_out_file(ctx, "screenshot_out_file", path, &data)?;
            structured["screenshot_file_path"] = json!(written);
            summary.push_str(&format!(", written to {}", written.display()));
            None
        } else {
            Some(ImageBlock { mime, data })
        };
        Ok(ToolOutput {
            summary,
            structured,
            image,
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZoomArgs {
    /// Target process id (owner of window_id).
    pub pid: u32,
    /// Window whose screenshot the coordinates refer to.
    pub window_id: u64,
    /// Left edge of the region, in screenshot pixels.
    pub x1: f64,
    /// Top edge of the region, in screenshot pixels.
    pub y1: f64,
    /// Right edge of the region, in screenshot pixels.
    pub x2: f64,
    /// Bottom edge of the region, in screenshot pixels.
    pub y2: f64,
}

pub struct Zoom;

#[async_trait]
impl ToolSpec for Zoom {
    type Args = ZoomArgs;
    const NAME: &'static str = "zoom";
    const DESCRIPTION: &'static str = "A region of a window's screenshot at native resolution (20% padding, clamped), in get_window_state's screenshot pixels.";
    const READ_ONLY: bool = true;
    const CONTRACT: Contract = Contract::reads(
        Risk::R2,
        &[
            "screen.capture",
            "screen.capture.window",
            "screen.capture.region",
        ],
    );

    async fn run(&self, ctx: &ToolContext, a: ZoomArgs) -> Result<ToolOutput, ToolError> {
        for (name, v) in [("x1", a.x1), ("y1", a.y1), ("x2", a.x2), ("y2", a.y2)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ToolError::invalid(format!(
                    "`{name}`: must be a non-negative number, got {v}"
                )));
            }
        }
        if a.x2 <= a.x1 {
            return Err(ToolError::invalid(format!(
                "`x2` ({}) must be greater than `x1` ({})",
                a.x2, a.x1
            )));
        }
        if a.y2 <= a.y1 {
            return Err(ToolError::invalid(format!(
                "`y2` ({}) must be greater than `y1` ({})",
                a.y2, a.y1
            )));
        }
        let platform = ctx.platform().await?;
        window_of(platform.as_ref(), Some(a.pid), a.window_id).await?;
        let capture = platform.capture_window(a.window_id).await?;
        // The region is in get_window_state's (possibly downscaled) pixels; the crop comes
        // from the full-size capture.
        let scale = ctx.image_scale(capture.width, capture.height, None);
        let (x1, y1, x2, y2) = (a.x1 / scale, a.y1 / scale, a.x2 / scale, a.y2 / scale);
        let (w, h) = (capture.width as f64, capture.height as f64);
        if x1 >= w || y1 >= h {
            return Err(ToolError::invalid(format!(
                "region starts outside the {}x{} screenshot",
                (w * scale).round(),
                (h * scale).round()
            )));
        }
        let pad_x = (x2 - x1) * 0.2;
        let pad_y = (y2 - y1) * 0.2;
        let left = (x1 - pad_x).max(0.0).floor() as u32;
        let top = (y1 - pad_y).max(0.0).floor() as u32;
        let right = (x2 + pad_x).min(w).ceil() as u32;
        let bottom = (y2 + pad_y).min(h).ceil() as u32;
        let crop = crop(&capture, left, top, right - left, bottom - top);
        let data = encode_png(&crop)?;
        ctx.zoomed(
            a.window_id,
            crate::dispatch::ZoomOrigin {
                left: left as f64,
                top: top as f64,
                scale,
            },
        );
        Ok(ToolOutput {
            summary: format!(
                "zoom of ({left}, {top})-({right}, {bottom}): {}x{} png",
                crop.width, crop.height
            ),
            structured: json!({
                "x": left, "y": top, "width": crop.width, "height": crop.height,
                "screenshot_scale": scale,
            }),
            image: Some(ImageBlock {
                mime: "image/png",
                data,
            }),
        })
    }
}

/// A sub-rectangle of a capture (caller keeps it inside the image).
pub fn crop(c: &Capture, x: u32, y: u32, width: u32, height: u32) -> Capture {
    let mut rgba = Vec::with_capacity((width * height * 4) as usize);
    for row in y..y + height {
        let start = ((row * c.width + x) * 4) as usize;
        rgba.extend_from_slice(&c.rgba[start..start + (width * 4) as usize]);
    }
    Capture {
        width,
        height,
        rgba,
    }
}
