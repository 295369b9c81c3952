//! Finding a picture in a picture: where the patch of a recorded screenshot around a
//! point shows in a live window ([`find_patch`]). Replay uses it for a pixel turn on a
//! window without an accessibility tree, whose point has no element to follow: the point
//! goes where its patch is, once and only once, or nowhere.
//!
//! The search runs on both pictures halved (16× fewer comparisons: a 380×460 window
//! takes a few ms), and each candidate is checked again at full size around its place.

use crate::platform::{Capture, Rect};
use image::GrayImage;
use imageproc::template_matching::{MatchTemplateMethod, match_template};

/// Half the patch's width and height around a point (capture pixels): a check box with a
/// little of its label, a button's edge with part of its text.
pub const PATCH_HALF: (u32, u32) = (24, 14);
/// The largest root-mean-square difference (grey levels, 0-255) between the patch and a
/// place still taken as the patch: a sandbox draws the same widget the same way (0), and
/// a changed colour, font or label (anything a person would see) differs by far more. A
/// plain background is no match for a patch holding a widget's edges (a normalised
/// difference took the grey between two buttons for a check box).
pub const MATCH_AT_MOST: f32 = 6.0;
/// The same at half size, where halving blurs edges.
const COARSE_AT_MOST: f32 = 24.0;

/// One place the patch shows: the point's live position and how close it matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub x: i32,
    pub y: i32,
    pub score: f32,
}

/// The patch of `recorded` around (x, y), and where the point sits in it.
pub fn patch_around(recorded: &Capture, x: i32, y: i32) -> Option<(GrayImage, (i32, i32))> {
    patch_around_scaled(recorded, x, y, 1)
}

/// The patch `scale` times as wide and high as [`patch_around`]'s: more of the context,
/// which tells apart places that look alike up close (two empty entries).
pub fn patch_around_scaled(
    recorded: &Capture,
    x: i32,
    y: i32,
    scale: u32,
) -> Option<(GrayImage, (i32, i32))> {
    let (w, h) = (recorded.width as i32, recorded.height as i32);
    if x < 0 || y < 0 || x >= w || y >= h {
        return None;
    }
    let (hx, hy) = ((PATCH_HALF.0 * scale) as i32, (PATCH_HALF.1 * scale) as i32);
    let area = Rect::new(x - hx, y - hy, 2 * hx, 2 * hy).intersection(&Rect::new(0, 0, w, h))?;
    let grey = grey_of(recorded);
    let patch = image::imageops::crop_imm(
        &grey,
        area.x as u32,
        area.y as u32,
        area.width as u32,
        area.height as u32,
    )
    .to_image();
    Some((patch, (x - area.x, y - area.y)))
}

/// Every place in `live` the patch shows (at most MATCH_AT_MOST apart), best first, as
/// the position the point would have there; places closer than half the patch to a
/// better one are the same place.
pub fn find_patch(live: &Capture, patch: &GrayImage, point_in_patch: (i32, i32)) -> Vec<Found> {
    let live = grey_of(live);
    let (pw, ph) = patch.dimensions();
    if pw < 4 || ph < 4 || live.width() < pw || live.height() < ph {
        return Vec::new();
    }
    let half = |g: &GrayImage| {
        image::imageops::resize(
            g,
            (g.width() / 2).max(1),
            (g.height() / 2).max(1),
            image::imageops::FilterType::Triangle,
        )
    };
    let small = half(patch);
    let coarse = match_template(
        &half(&live),
        &small,
        MatchTemplateMethod::SumOfSquaredErrors,
    );
    // Candidates at half size, with a looser bound (halving blurs), checked at full size.
    let mut candidates: Vec<(u32, u32, f32)> = coarse
        .enumerate_pixels()
        .map(|(x, y, s)| (x * 2, y * 2, rms(s.0[0], &small)))
        .filter(|(_, _, d)| *d <= COARSE_AT_MOST)
        .collect();
    candidates.sort_by(|a, b| a.2.total_cmp(&b.2));
    let mut found: Vec<Found> = Vec::new();
    for (cx, cy, _) in candidates.into_iter().take(200) {
        let Some((x, y, score)) = best_near(&live, patch, cx, cy) else {
            continue;
        };
        if score > MATCH_AT_MOST {
            continue;
        }
        let at = Found {
            x: x as i32 + point_in_patch.0,
            y: y as i32 + point_in_patch.1,
            score,
        };
        let same_place = |f: &Found| {
            (f.x - at.x).unsigned_abs() < pw / 2 && (f.y - at.y).unsigned_abs() < ph / 2
        };
        if !found.iter().any(same_place) {
            found.push(at);
        }
    }
    found.sort_by(|a, b| a.score.total_cmp(&b.score));
    found
}

/// Whether the patch still shows in `live` with its point at (x, y): the same place, not
/// one of its look-alikes (within 2 px, as a match elsewhere is).
pub fn shows_at(
    live: &Capture,
    patch: &GrayImage,
    point_in_patch: (i32, i32),
    x: i32,
    y: i32,
) -> bool {
    let (left, top) = (x - point_in_patch.0, y - point_in_patch.1);
    if left < 0 || top < 0 || left as u32 >= live.width || top as u32 >= live.height {
        return false;
    }
    best_near(&grey_of(live), patch, left as u32, top as u32)
        .is_some_and(|(_, _, score)| score <= MATCH_AT_MOST)
}

/// The best full-size placement of the patch within 2 px of (x, y).
fn best_near(live: &GrayImage, patch: &GrayImage, x: u32, y: u32) -> Option<(u32, u32, f32)> {
    let (pw, ph) = patch.dimensions();
    let x0 = x.saturating_sub(2);
    let y0 = y.saturating_sub(2);
    let w = (pw + 4).min(live.width() - x0);
    let h = (ph + 4).min(live.height() - y0);
    if w < pw || h < ph {
        return None;
    }
    let around = image::imageops::crop_imm(live, x0, y0, w, h).to_image();
    let scores = match_template(&around, patch, MatchTemplateMethod::SumOfSquaredErrors);
    scores
        .enumerate_pixels()
        .map(|(dx, dy, s)| (x0 + dx, y0 + dy, rms(s.0[0], patch)))
        .min_by(|a, b| a.2.total_cmp(&b.2))
}

/// A sum of squared differences over `patch` as a root-mean-square difference per pixel.
fn rms(sum_of_squares: f32, patch: &GrayImage) -> f32 {
    let pixels = (patch.width() * patch.height()).max(1) as f32;
    (sum_of_squares / pixels).sqrt()
}

fn grey_of(c: &Capture) -> GrayImage {
    let rgba = image::RgbaImage::from_raw(c.width, c.height, c.rgba.clone()).unwrap_or_default();
    image::DynamicImage::ImageRgba8(rgba).to_luma8()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grey window with a dark square at (x, y) holding a light bar (a "check box").
    fn window(w: u32, h: u32, boxes: &[(u32, u32)]) -> Capture {
        let mut img = image::RgbaImage::from_pixel(w, h, image::Rgba([217, 217, 217, 255]));
        for &(bx, by) in boxes {
            for y in by..by + 13 {
                for x in bx..bx + 13 {
                    let edge = x == bx || y == by || x == bx + 12 || y == by + 12;
                    let mark = (by + 5..by + 8).contains(&y) && (bx + 3..bx + 10).contains(&x);
                    let v = if edge || mark { 40 } else { 255 };
                    img.put_pixel(x, y, image::Rgba([v, v, v, 255]));
                }
            }
        }
        Capture {
            width: w,
            height: h,
            rgba: img.into_raw(),
        }
    }

    #[test]
    fn a_patch_is_found_where_it_moved_once_twice_or_not_at_all() {
        let recorded = window(200, 150, &[(40, 30)]);
        let (patch, at) = patch_around(&recorded, 46, 36).unwrap();
        let moved = find_patch(&window(200, 150, &[(40, 90)]), &patch, at);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!((moved[0].x, moved[0].y), (46, 96));
        let twice = find_patch(&window(200, 150, &[(40, 30), (120, 100)]), &patch, at);
        assert_eq!(twice.len(), 2, "{twice:?}");
        assert!(find_patch(&window(200, 150, &[]), &patch, at).is_empty());
    }

    #[test]
    fn a_patch_that_shows_in_several_places_still_shows_at_its_own() {
        let recorded = window(200, 60, &[(20, 20), (120, 20)]);
        let (patch, at) = patch_around(&recorded, 26, 26).unwrap();
        assert_eq!(find_patch(&recorded, &patch, at).len(), 2);
        assert!(shows_at(&recorded, &patch, at, 26, 26));
        assert!(shows_at(&recorded, &patch, at, 126, 26));
        assert!(!shows_at(&recorded, &patch, at, 70, 26));
        assert!(
            !shows_at(&recorded, &patch, at, 900, 26),
            "outside the window"
        );
    }
}
