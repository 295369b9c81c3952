//! The live page's picture of the desktop: the screen captured, and sent as a JPEG only
//! when it differs from the last one sent.

use std::hash::{Hash, Hasher};

use crate::platform::{Capture, Platform};

/// JPEG quality of a frame: text stays readable at 1280×800, a frame stays near 100 kB.
const QUALITY: u8 = 75;

/// The last frame sent, by a hash of its pixels.
#[derive(Default)]
pub struct Frames {
    last: Option<u64>,
}

impl Frames {
    /// The screen as a JPEG when it changed since the last one this returned; None when it
    /// did not (or cannot be captured now).
    pub async fn next(&mut self, platform: &dyn Platform) -> Option<Vec<u8>> {
        let capture = platform.capture_screen().await.ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        capture.rgba.hash(&mut h);
        let hash = h.finish();
        if self.last == Some(hash) {
            return None;
        }
        let jpeg = encode(&capture)?;
        self.last = Some(hash);
        Some(jpeg)
    }
}

fn encode(capture: &Capture) -> Option<Vec<u8>> {
    let rgb: Vec<u8> = capture
        .rgba
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, QUALITY)
        .encode(
            &rgb,
            capture.width,
            capture.height,
            image::ExtendedColorType::Rgb8,
        )
        .ok()?;
    Some(out)
}
