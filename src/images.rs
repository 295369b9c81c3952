//! Image encodings shared by the tools (screenshots), the recorder (turn PNGs) and the diff
//! (diff images): a leaf, so none of them reaches into another for them.

use crate::platform::Capture;

/// PNG of a capture, tuned for speed: RGB, fast deflate, one filter for all rows.
pub fn encode_png(capture: &Capture) -> Result<Vec<u8>, String> {
    let rgb = rgba_to_rgb(&capture.rgba);
    let mut out = Vec::with_capacity(rgb.len() / 4);
    {
        let mut enc = png::Encoder::new(&mut out, capture.width, capture.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        enc.set_filter(png::Filter::Sub);
        let mut writer = enc.write_header().map_err(|e| format!("png encode: {e}"))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| format!("png encode: {e}"))?;
    }
    Ok(out)
}

/// The RGB bytes of RGBA pixels (alpha dropped).
pub fn rgba_to_rgb(rgba: &[u8]) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(rgba.len() / 4 * 3);
    for px in rgba.chunks_exact(4) {
        rgb.extend_from_slice(&px[..3]);
    }
    rgb
}
