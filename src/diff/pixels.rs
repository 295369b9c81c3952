//! Perceptual pixel diff of two RGBA images, in the manner of pixelmatch: colour distance in
//! YIQ space (weighted towards luma, which the eye resolves best), with anti-aliased pixels
//! recognised and, by default, not counted; masked rectangles are ignored; a size mismatch
//! is reported rather than failing. Rows are split across threads.

use crate::platform::Rect;

/// Largest possible YIQ distance (black vs white), for scaling `threshold`.
const MAX_YIQ_DELTA: f64 = 35215.0;

#[derive(Debug, Clone)]
pub struct PixelDiffOptions {
    /// 0..1: how different two colours must be to count; 0.1 is a good default.
    pub threshold: f64,
    /// Count anti-aliased pixels as differences too. Default false.
    pub include_anti_aliased: bool,
    /// Regions to ignore, in image pixels.
    pub masks: Vec<Rect>,
    /// Produce a diff image (changed pixels red, anti-aliasing yellow, the rest faded).
    pub diff_image: bool,
    /// Threads to use (≥ 1).
    pub threads: usize,
}

impl Default for PixelDiffOptions {
    fn default() -> Self {
        PixelDiffOptions {
            threshold: 0.1,
            include_anti_aliased: false,
            masks: Vec::new(),
            diff_image: true,
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        }
    }
}

/// An RGBA image borrowed for diffing.
#[derive(Clone, Copy)]
pub struct ImageRef<'a> {
    pub width: u32,
    pub height: u32,
    pub rgba: &'a [u8],
}

#[derive(Debug, Clone)]
pub struct PixelDiff {
    pub width: u32,
    pub height: u32,
    /// Pixels that differ beyond the threshold (not anti-aliasing, not masked).
    pub diff_pixels: u64,
    pub anti_aliased_pixels: u64,
    pub masked_pixels: u64,
    pub total_pixels: u64,
    /// (expected, actual) sizes when they differ; the overlap is compared and every pixel
    /// outside it counts as different.
    pub size_mismatch: Option<((u32, u32), (u32, u32))>,
    /// RGBA, `width` x `height` (the overlap's size when sizes differ).
    pub diff_image: Option<Vec<u8>>,
}

impl PixelDiff {
    pub fn ratio(&self) -> f64 {
        if self.total_pixels == 0 {
            0.0
        } else {
            self.diff_pixels as f64 / self.total_pixels as f64
        }
    }
}

fn blend(c: f64, a: f64) -> f64 {
    255.0 + (c - 255.0) * a
}

fn rgb_at(img: &ImageRef, i: usize) -> (f64, f64, f64) {
    let p = &img.rgba[i * 4..i * 4 + 4];
    let a = p[3] as f64 / 255.0;
    // Transparent pixels are judged as seen over white.
    (
        blend(p[0] as f64, a),
        blend(p[1] as f64, a),
        blend(p[2] as f64, a),
    )
}

fn luma(r: f64, g: f64, b: f64) -> f64 {
    r * 0.298_895_31 + g * 0.586_622_47 + b * 0.114_482_23
}

/// Squared YIQ distance; negative when the second pixel is lighter (sign used by the
/// anti-aliasing check), or the signed luma difference alone when `y_only`.
fn color_delta(a: &ImageRef, b: &ImageRef, i: usize, j: usize, y_only: bool) -> f64 {
    let (r1, g1, b1) = rgb_at(a, i);
    let (r2, g2, b2) = rgb_at(b, j);
    let y1 = luma(r1, g1, b1);
    let y2 = luma(r2, g2, b2);
    let y = y1 - y2;
    if y_only {
        return y;
    }
    let i1 = r1 * 0.595_977_99 - g1 * 0.274_176_10 - b1 * 0.321_801_89;
    let i2 = r2 * 0.595_977_99 - g2 * 0.274_176_10 - b2 * 0.321_801_89;
    let q1 = r1 * 0.211_470_17 - g1 * 0.522_617_11 + b1 * 0.311_146_94;
    let q2 = r2 * 0.211_470_17 - g2 * 0.522_617_11 + b2 * 0.311_146_94;
    let (di, dq) = (i1 - i2, q1 - q2);
    let delta = 0.5053 * y * y + 0.299 * di * di + 0.1957 * dq * dq;
    if y1 > y2 { -delta } else { delta }
}

fn pixel(img: &ImageRef, x: u32, y: u32) -> u32 {
    let i = ((y * img.width + x) * 4) as usize;
    u32::from_le_bytes([
        img.rgba[i],
        img.rgba[i + 1],
        img.rgba[i + 2],
        img.rgba[i + 3],
    ])
}

/// More than two neighbours of the same colour: part of a flat area, not an edge blend.
fn has_many_siblings(img: &ImageRef, x: u32, y: u32) -> bool {
    let here = pixel(img, x, y);
    let mut zeroes = if x == 0 || y == 0 || x == img.width - 1 || y == img.height - 1 {
        1
    } else {
        0
    };
    for ny in y.saturating_sub(1)..=(y + 1).min(img.height - 1) {
        for nx in x.saturating_sub(1)..=(x + 1).min(img.width - 1) {
            if (nx, ny) != (x, y) && pixel(img, nx, ny) == here {
                zeroes += 1;
                if zeroes > 2 {
                    return true;
                }
            }
        }
    }
    false
}

/// Whether (x, y) in `img` looks like an anti-aliased edge pixel: it lies between a darkest
/// and a brightest neighbour that each sit in flat areas of both images.
fn anti_aliased(img: &ImageRef, x: u32, y: u32, other: &ImageRef) -> bool {
    let (w, h) = (img.width, img.height);
    let here = (y * w + x) as usize;
    let mut zeroes = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
        1
    } else {
        0
    };
    let (mut min, mut max) = (0.0f64, 0.0f64);
    let (mut min_at, mut max_at) = ((0, 0), (0, 0));
    for ny in y.saturating_sub(1)..=(y + 1).min(h - 1) {
        for nx in x.saturating_sub(1)..=(x + 1).min(w - 1) {
            if (nx, ny) == (x, y) {
                continue;
            }
            let delta = color_delta(img, img, here, (ny * w + nx) as usize, true);
            if delta == 0.0 {
                zeroes += 1;
                if zeroes > 2 {
                    return false;
                }
            } else if delta < min {
                min = delta;
                min_at = (nx, ny);
            } else if delta > max {
                max = delta;
                max_at = (nx, ny);
            }
        }
    }
    if min == 0.0 || max == 0.0 {
        return false;
    }
    (has_many_siblings(img, min_at.0, min_at.1) && has_many_siblings(other, min_at.0, min_at.1))
        || (has_many_siblings(img, max_at.0, max_at.1)
            && has_many_siblings(other, max_at.0, max_at.1))
}

#[derive(Default, Clone, Copy)]
struct Counts {
    diff: u64,
    aa: u64,
    masked: u64,
}

/// Compares rows `rows` of two same-size images, writing the diff image rows if given.
fn diff_rows(
    a: &ImageRef,
    b: &ImageRef,
    rows: std::ops::Range<u32>,
    opts: &PixelDiffOptions,
    max_delta: f64,
    mut out: Option<&mut [u8]>,
) -> Counts {
    let mut c = Counts::default();
    let w = a.width;
    let first = rows.start;
    for y in rows {
        for x in 0..w {
            let i = (y * w + x) as usize;
            let o = ((y - first) * w + x) as usize * 4;
            let masked = opts.masks.iter().any(|m| m.contains(x as i32, y as i32));
            let same = a.rgba[i * 4..i * 4 + 4] == b.rgba[i * 4..i * 4 + 4];
            let color = if masked {
                c.masked += 1;
                None
            } else if same {
                None
            } else {
                let delta = color_delta(a, b, i, i, false);
                if delta.abs() > max_delta {
                    if !opts.include_anti_aliased
                        && (anti_aliased(a, x, y, b) || anti_aliased(b, x, y, a))
                    {
                        c.aa += 1;
                        Some([255, 255, 0, 255])
                    } else {
                        c.diff += 1;
                        Some([255, 0, 0, 255])
                    }
                } else {
                    None
                }
            };
            if let Some(out) = out.as_deref_mut() {
                let px = match color {
                    Some(px) => px,
                    None => {
                        // The unchanged picture, faded towards white, for context.
                        let (r, g, bb) = rgb_at(a, i);
                        let v = blend(luma(r, g, bb), 0.1) as u8;
                        if masked {
                            [v / 2 + 64, v / 2 + 64, v / 2 + 128, 255]
                        } else {
                            [v, v, v, 255]
                        }
                    }
                };
                out[o..o + 4].copy_from_slice(&px);
            }
        }
    }
    c
}

/// Compares `expected` with `actual`.
pub fn diff(expected: ImageRef, actual: ImageRef, opts: &PixelDiffOptions) -> PixelDiff {
    let (w, h) = (
        expected.width.min(actual.width),
        expected.height.min(actual.height),
    );
    let size_mismatch = ((expected.width, expected.height) != (actual.width, actual.height))
        .then_some((
            (expected.width, expected.height),
            (actual.width, actual.height),
        ));
    // Compare the overlap as two images of its size.
    let crop = |img: &ImageRef| -> Vec<u8> {
        let mut v = Vec::with_capacity((w * h * 4) as usize);
        for y in 0..h {
            let s = (y * img.width * 4) as usize;
            v.extend_from_slice(&img.rgba[s..s + (w * 4) as usize]);
        }
        v
    };
    let (ea, ab);
    let (a, b) = if size_mismatch.is_some() {
        ea = crop(&expected);
        ab = crop(&actual);
        (
            ImageRef {
                width: w,
                height: h,
                rgba: &ea,
            },
            ImageRef {
                width: w,
                height: h,
                rgba: &ab,
            },
        )
    } else {
        (expected, actual)
    };
    let max_delta = MAX_YIQ_DELTA * opts.threshold * opts.threshold;
    let mut image = opts.diff_image.then(|| vec![0u8; (w * h * 4) as usize]);
    let threads = opts.threads.max(1).min(h.max(1) as usize);
    let per = h.div_ceil(threads as u32).max(1);
    let counts: Vec<Counts> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut rest: Option<&mut [u8]> = image.as_deref_mut();
        for t in 0..threads as u32 {
            let rows = (t * per).min(h)..((t + 1) * per).min(h);
            let chunk = rest.take().map(|r| {
                let (head, tail) = r.split_at_mut(((rows.end - rows.start) * w * 4) as usize);
                rest = Some(tail);
                head
            });
            let (a, b) = (&a, &b);
            handles.push(s.spawn(move || diff_rows(a, b, rows, opts, max_delta, chunk)));
        }
        handles
            .into_iter()
            // A row worker's panic is the caller's (never rows counted as equal).
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let total = counts.iter().fold(Counts::default(), |acc, c| Counts {
        diff: acc.diff + c.diff,
        aa: acc.aa + c.aa,
        masked: acc.masked + c.masked,
    });
    let outside = (expected.width as u64 * expected.height as u64)
        .max(actual.width as u64 * actual.height as u64)
        - (w as u64 * h as u64);
    PixelDiff {
        width: w,
        height: h,
        diff_pixels: total.diff + outside,
        anti_aliased_pixels: total.aa,
        masked_pixels: total.masked,
        total_pixels: (w as u64 * h as u64) + outside,
        size_mismatch,
        diff_image: image,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solid(w: u32, h: u32, px: [u8; 4]) -> Vec<u8> {
        px.iter()
            .copied()
            .cycle()
            .take((w * h * 4) as usize)
            .collect()
    }

    fn set(img: &mut [u8], w: u32, x: u32, y: u32, px: [u8; 4]) {
        let i = ((y * w + x) * 4) as usize;
        img[i..i + 4].copy_from_slice(&px);
    }

    fn r(w: u32, h: u32, v: &[u8]) -> ImageRef<'_> {
        ImageRef {
            width: w,
            height: h,
            rgba: v,
        }
    }

    #[test]
    fn identical_images_have_no_difference() {
        let a = solid(64, 48, [30, 120, 200, 255]);
        let d = diff(r(64, 48, &a), r(64, 48, &a), &PixelDiffOptions::default());
        assert_eq!(
            (d.diff_pixels, d.anti_aliased_pixels, d.size_mismatch),
            (0, 0, None)
        );
        assert_eq!(d.diff_image.unwrap().len(), 64 * 48 * 4);
    }

    #[test]
    fn one_pixel_off_is_one_difference_and_red_in_the_diff_image() {
        let a = solid(64, 48, [255, 255, 255, 255]);
        let mut b = a.clone();
        set(&mut b, 64, 10, 20, [0, 0, 0, 255]);
        let d = diff(r(64, 48, &a), r(64, 48, &b), &PixelDiffOptions::default());
        assert_eq!(d.diff_pixels, 1);
        let img = d.diff_image.unwrap();
        let i = ((20 * 64 + 10) * 4) as usize;
        assert_eq!(&img[i..i + 4], &[255, 0, 0, 255]);
        // A change below the threshold does not count.
        let mut c = a.clone();
        set(&mut c, 64, 10, 20, [250, 250, 250, 255]);
        assert_eq!(
            diff(r(64, 48, &a), r(64, 48, &c), &PixelDiffOptions::default()).diff_pixels,
            0
        );
    }

    #[test]
    fn an_anti_aliased_edge_is_recognised_not_counted() {
        // A black square on white whose edge moves by one blended column: the grey edge
        // pixels are anti-aliasing, not a change.
        let (w, h) = (40, 40);
        let mut a = solid(w, h, [255, 255, 255, 255]);
        let mut b = a.clone();
        for y in 10..30 {
            for x in 10..20 {
                set(&mut a, w, x, y, [0, 0, 0, 255]);
                set(&mut b, w, x, y, [0, 0, 0, 255]);
            }
            set(&mut a, w, 20, y, [255, 255, 255, 255]);
            set(&mut b, w, 20, y, [128, 128, 128, 255]);
        }
        let d = diff(r(w, h, &a), r(w, h, &b), &PixelDiffOptions::default());
        assert_eq!(d.diff_pixels, 0, "edge blend counted as a change");
        assert!(d.anti_aliased_pixels > 10);
        let strict = PixelDiffOptions {
            include_anti_aliased: true,
            ..Default::default()
        };
        assert_eq!(
            diff(r(w, h, &a), r(w, h, &b), &strict).diff_pixels,
            d.anti_aliased_pixels
        );
    }

    #[test]
    fn masked_regions_are_ignored() {
        let a = solid(50, 50, [255, 255, 255, 255]);
        let mut b = a.clone();
        for y in 5..15 {
            for x in 5..15 {
                set(&mut b, 50, x, y, [0, 0, 0, 255]);
            }
        }
        set(&mut b, 50, 40, 40, [0, 0, 0, 255]);
        let opts = PixelDiffOptions {
            masks: vec![Rect {
                x: 5,
                y: 5,
                width: 10,
                height: 10,
            }],
            ..Default::default()
        };
        let d = diff(r(50, 50, &a), r(50, 50, &b), &opts);
        assert_eq!(d.diff_pixels, 1, "only the pixel outside the mask");
        assert_eq!(d.masked_pixels, 100);
    }

    #[test]
    fn a_size_mismatch_is_reported_and_the_extra_area_counts() {
        let a = solid(40, 30, [255, 255, 255, 255]);
        let b = solid(40, 35, [255, 255, 255, 255]);
        let d = diff(r(40, 30, &a), r(40, 35, &b), &PixelDiffOptions::default());
        assert_eq!(d.size_mismatch, Some(((40, 30), (40, 35))));
        assert_eq!(d.diff_pixels, 40 * 5);
        assert_eq!((d.width, d.height), (40, 30));
    }

    #[test]
    fn threads_do_not_change_the_result() {
        let (w, h) = (97, 61);
        let a: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 251) as u8).collect();
        let b: Vec<u8> = (0..w * h * 4)
            .map(|i| (i * 7 % 251) as u8 ^ if i % 53 == 0 { 0xff } else { 0 })
            .collect();
        let one = diff(
            r(w, h, &a),
            r(w, h, &b),
            &PixelDiffOptions {
                threads: 1,
                ..Default::default()
            },
        );
        let four = diff(
            r(w, h, &a),
            r(w, h, &b),
            &PixelDiffOptions {
                threads: 4,
                ..Default::default()
            },
        );
        assert_eq!(
            (one.diff_pixels, one.anti_aliased_pixels),
            (four.diff_pixels, four.anti_aliased_pixels)
        );
        assert_eq!(one.diff_image, four.diff_image);
    }
}
