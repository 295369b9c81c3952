//! What the agent cursor looks like: the arrow (or the user's image) as an RGBA sprite
//! with a hot spot, and the click ripple. The live overlay shows the sprite as a window;
//! the video helper paints the same sprite and ripple into its frames (BGRX), so both
//! look alike.

use serde::{Deserialize, Serialize};

use crate::config::parse_color;
use crate::platform::Capture;

/// The arrow's fill, tip to tail, when no gradient is set.
pub const DEFAULT_GRADIENT: [&str; 2] = ["#D946EF", "#7C3AED"];
/// The ripple's color when no bloom color is set.
pub const DEFAULT_BLOOM: &str = "#D946EF";
/// An image cursor is drawn at most this many pixels wide or tall.
pub const IMAGE_MAX: u32 = 32;
/// How long a click's ripple lasts.
pub const RIPPLE_MS: u64 = 500;

/// The `agent_cursor.style.*` settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Style {
    #[serde(default)]
    pub gradient_colors: Vec<String>,
    #[serde(default)]
    pub bloom_color: String,
    #[serde(default)]
    pub image_path: String,
}

impl Style {
    /// The ripple's color.
    pub fn bloom(&self) -> [u8; 3] {
        parse_color(&self.bloom_color)
            .or_else(|| parse_color(DEFAULT_BLOOM))
            .unwrap_or([255, 0, 255])
    }
}

/// The cursor's picture; the hot spot (the pixel that points) at `hot` inside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sprite {
    pub image: Capture,
    pub hot: (i32, i32),
}

/// The classic pointer outline, tip at (0, 0), in arrow units (scaled by ARROW_SCALE).
const ARROW: [(f64, f64); 7] = [
    (0.0, 0.0),
    (0.0, 17.0),
    (4.0, 13.0),
    (7.0, 20.0),
    (10.0, 19.0),
    (7.0, 12.0),
    (12.0, 12.0),
];
const ARROW_SCALE: f64 = 1.5;
/// Room around the outline for its dark edge.
const MARGIN: f64 = 2.0;

impl Sprite {
    /// The sprite `style` asks for: its image, else the arrow in its colors.
    pub fn for_style(style: &Style) -> Result<Sprite, String> {
        if style.image_path.is_empty() {
            let colors: Vec<[u8; 3]> = style
                .gradient_colors
                .iter()
                .filter_map(|c| parse_color(c))
                .collect();
            let colors = if colors.is_empty() {
                DEFAULT_GRADIENT
                    .iter()
                    .filter_map(|c| parse_color(c))
                    .collect()
            } else {
                colors
            };
            Ok(arrow(&colors))
        } else {
            image(&crate::files::expand_home(&style.image_path))
        }
    }

    /// Paints the sprite with its hot spot at (`x`, `y`) into a BGRX frame.
    pub fn paint_bgrx(&self, pixels: &mut [u8], width: u32, height: u32, x: i32, y: i32) {
        let (left, top) = (x - self.hot.0, y - self.hot.1);
        for sy in 0..self.image.height as i32 {
            for sx in 0..self.image.width as i32 {
                let at = ((sy as u32 * self.image.width + sx as u32) * 4) as usize;
                let rgba = &self.image.rgba[at..at + 4];
                blend_bgrx(pixels, width, height, left + sx, top + sy, rgba);
            }
        }
    }
}

/// The sprite of the last style asked for, drawn once per style (the overlay and the
/// video helper each keep one).
#[derive(Default)]
pub struct SpriteCache(Option<(Style, Sprite)>);

impl SpriteCache {
    /// The picture for `style`. An image that no longer reads falls back to the arrow,
    /// and `warn` hears why (set_agent_cursor_style checked it when it was set).
    pub fn get(&mut self, style: &Style, warn: impl FnOnce(&str)) -> &Sprite {
        if !matches!(&self.0, Some((s, _)) if s == style) {
            let sprite = Sprite::for_style(style).unwrap_or_else(|e| {
                warn(&e);
                Sprite::for_style(&Style::default()).expect("the arrow needs no file")
            });
            self.0 = Some((style.clone(), sprite));
        }
        &self.0.as_ref().expect("just drawn").1
    }
}

/// Paints a click ripple `age_ms` old centred on (`cx`, `cy`) into a BGRX frame: a ring
/// that widens and fades over [`RIPPLE_MS`].
pub fn paint_ripple_bgrx(
    pixels: &mut [u8],
    width: u32,
    height: u32,
    (cx, cy): (i32, i32),
    age_ms: u64,
    color: [u8; 3],
) {
    if age_ms >= RIPPLE_MS {
        return;
    }
    let t = age_ms as f64 / RIPPLE_MS as f64;
    let radius = 8.0 + 22.0 * t;
    let alpha = (255.0 * (1.0 - t)) as u8;
    let reach = radius as i32 + 3;
    for dy in -reach..=reach {
        for dx in -reach..=reach {
            let d = ((dx * dx + dy * dy) as f64).sqrt();
            if (d - radius).abs() <= 1.5 {
                let rgba = [color[0], color[1], color[2], alpha];
                blend_bgrx(pixels, width, height, cx + dx, cy + dy, &rgba);
            }
        }
    }
}

fn blend_bgrx(pixels: &mut [u8], width: u32, height: u32, x: i32, y: i32, rgba: &[u8]) {
    if x < 0 || y < 0 || x >= width as i32 || y >= height as i32 || rgba[3] == 0 {
        return;
    }
    let at = ((y as u32 * width + x as u32) * 4) as usize;
    let Some(px) = pixels.get_mut(at..at + 3) else {
        return;
    };
    let a = rgba[3] as u32;
    for (dst, src) in px.iter_mut().zip([rgba[2], rgba[1], rgba[0]]) {
        *dst = ((src as u32 * a + *dst as u32 * (255 - a)) / 255) as u8;
    }
}

/// The arrow filled with `colors` from tip to tail, a white rim inside its outline and a
/// dark edge outside, so it reads on light and dark windows alike. Every pixel is opaque
/// or transparent (the overlay window is shaped, without alpha).
fn arrow(colors: &[[u8; 3]]) -> Sprite {
    let points: Vec<(f64, f64)> = ARROW
        .iter()
        .map(|(x, y)| (x * ARROW_SCALE + MARGIN, y * ARROW_SCALE + MARGIN))
        .collect();
    let width = (12.0 * ARROW_SCALE + 2.0 * MARGIN).ceil() as u32 + 1;
    let height = (20.0 * ARROW_SCALE + 2.0 * MARGIN).ceil() as u32 + 1;
    let mut rgba = vec![0u8; (width * height * 4) as usize];
    for y in 0..height {
        for x in 0..width {
            let p = (x as f64 + 0.5, y as f64 + 0.5);
            let inside = contains(&points, p);
            let edge = edge_distance(&points, p);
            let color = if inside && edge >= 1.6 {
                let t = ((p.1 - MARGIN) / (20.0 * ARROW_SCALE)).clamp(0.0, 1.0);
                Some(gradient(colors, t))
            } else if inside {
                Some([255, 255, 255])
            } else if edge < 1.2 {
                Some([26, 26, 26])
            } else {
                None
            };
            if let Some([r, g, b]) = color {
                let at = ((y * width + x) * 4) as usize;
                rgba[at..at + 4].copy_from_slice(&[r, g, b, 255]);
            }
        }
    }
    Sprite {
        image: Capture {
            width,
            height,
            rgba,
        },
        hot: (MARGIN as i32, MARGIN as i32),
    }
}

fn gradient(colors: &[[u8; 3]], t: f64) -> [u8; 3] {
    if colors.len() == 1 {
        return colors[0];
    }
    let span = t * (colors.len() - 1) as f64;
    let i = (span.floor() as usize).min(colors.len() - 2);
    let f = span - i as f64;
    let (a, b) = (colors[i], colors[i + 1]);
    [0, 1, 2].map(|c| (a[c] as f64 + (b[c] as f64 - a[c] as f64) * f).round() as u8)
}

/// Even-odd point-in-polygon test.
fn contains(points: &[(f64, f64)], (x, y): (f64, f64)) -> bool {
    let mut inside = false;
    let mut j = points.len() - 1;
    for i in 0..points.len() {
        let ((xi, yi), (xj, yj)) = (points[i], points[j]);
        if (yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi {
            inside = !inside;
        }
        j = i;
    }
    inside
}

fn edge_distance(points: &[(f64, f64)], (x, y): (f64, f64)) -> f64 {
    let mut best = f64::MAX;
    for i in 0..points.len() {
        let (a, b) = (points[i], points[(i + 1) % points.len()]);
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let t = (((x - a.0) * dx + (y - a.1) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
        let (px, py) = (a.0 + t * dx, a.1 + t * dy);
        best = best.min(((x - px).powi(2) + (y - py).powi(2)).sqrt());
    }
    best
}

/// A PNG or JPEG, scaled down to fit [`IMAGE_MAX`]; its hot spot is its top-left corner.
/// Pixels are made opaque or transparent, as the overlay window shows them.
fn image(path: &std::path::Path) -> Result<Sprite, String> {
    let mut img = image::open(path)
        .map_err(|e| format!("cannot read cursor image {}: {e}", path.display()))?
        .to_rgba8();
    if img.width() > IMAGE_MAX || img.height() > IMAGE_MAX {
        img = image::imageops::thumbnail(&img, IMAGE_MAX, IMAGE_MAX);
    }
    let (width, height) = img.dimensions();
    let mut rgba = img.into_raw();
    for px in rgba.chunks_exact_mut(4) {
        px[3] = if px[3] >= 128 { 255 } else { 0 };
    }
    Ok(Sprite {
        image: Capture {
            width,
            height,
            rgba,
        },
        hot: (0, 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixel(s: &Sprite, x: i32, y: i32) -> [u8; 4] {
        let at = ((y as u32 * s.image.width + x as u32) * 4) as usize;
        s.image.rgba[at..at + 4].try_into().unwrap()
    }

    #[test]
    fn the_arrow_points_from_its_hot_spot_in_its_colors() {
        let style = Style {
            gradient_colors: vec!["#00FF00".into()],
            ..Style::default()
        };
        let s = Sprite::for_style(&style).unwrap();
        // Just inside the tip: the rim or the edge, never empty.
        assert_eq!(pixel(&s, s.hot.0, s.hot.1)[3], 255);
        // The body, a few pixels down and right of the tip: the fill.
        assert_eq!(pixel(&s, s.hot.0 + 4, s.hot.1 + 12), [0, 255, 0, 255]);
        // Right of the tip, outside the arrow: transparent.
        assert_eq!(pixel(&s, s.image.width as i32 - 1, s.hot.1)[3], 0);
    }

    #[test]
    fn painting_clips_at_the_frame_and_the_ripple_fades() {
        let s = Sprite::for_style(&Style::default()).unwrap();
        let (w, h) = (40u32, 30u32);
        let mut frame = vec![0u8; (w * h * 4) as usize];
        s.paint_bgrx(&mut frame, w, h, 35, 25);
        s.paint_bgrx(&mut frame, w, h, -100, -100);
        assert!(frame.iter().any(|b| *b != 0));
        let mut ring = vec![0u8; (w * h * 4) as usize];
        paint_ripple_bgrx(&mut ring, w, h, (20, 15), RIPPLE_MS, [255, 0, 0]);
        assert!(ring.iter().all(|b| *b == 0), "a ripple past its time shows");
        paint_ripple_bgrx(&mut ring, w, h, (20, 15), 0, [255, 0, 0]);
        let at = ((15 * w + 28) * 4) as usize;
        assert!(
            ring[at + 2] > 200,
            "the ring starts 8 px out: {:?}",
            &ring[at..at + 4]
        );
    }

    #[test]
    fn a_missing_image_is_named() {
        let style = Style {
            image_path: "/nonexistent/cursor.png".into(),
            ..Style::default()
        };
        let e = Sprite::for_style(&style).unwrap_err();
        assert!(e.contains("/nonexistent/cursor.png"), "{e}");
    }
}
