//! Text read off a window's pixels, for windows that have no accessibility tree (Tk, Xt,
//! SDL, canvas-drawn apps, Java without its bridge): [`read`] takes a [`Capture`] and gives
//! its [`Line`]s of [`Word`]s, each with a frame in the capture's pixels and Tesseract's
//! confidence. `snapshot::text` turns them into elements.
//!
//! Tesseract (through its C API, the `tesseract` crate; the `ocr` cargo feature) reads
//! screen text badly at its size, so the capture is read in grey, upscaled [`UPSCALE`]
//! times, dark text on light. Reading takes ~100-300 ms a window; results are kept per
//! picture ([`CACHED_PICTURES`] of them, keyed by a hash of the pixels), so a window read
//! again unchanged costs a hash.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use crate::platform::{Capture, Rect};

/// How many times the capture is enlarged before reading: screen text is ~9-12 px high,
/// and Tesseract reads best at 20-30.
pub const UPSCALE: u32 = 2;
/// The neighbourhood (capture pixels each side) a pixel is compared with to tell ink from
/// background.
const THRESHOLD_RADIUS: u32 = 6;
/// No stroke of a letter runs straight for longer than this (capture pixels); a longer
/// run of ink is a widget's border or a rule, which Tesseract reads into the text beside
/// it ("_Add", "|") or loses the text for.
const LONGEST_STROKE: u32 = 20;
/// Text is at least this high (capture pixels).
const SMALLEST_TEXT: i32 = 6;
/// Pictures whose text is kept (a turn's before and after, a settle loop's reads).
pub const CACHED_PICTURES: usize = 16;
/// Words read with less confidence (0-100) are dropped: at this size they are borders,
/// icons and shadows read as letters.
pub const MIN_CONFIDENCE: f32 = 45.0;
/// A word of symbols only ("+", "=", "×") is kept only above this confidence.
pub const MIN_SYMBOL_CONFIDENCE: f32 = 75.0;

/// One word on screen: its text, frame (capture pixels) and confidence (0-100).
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    pub text: String,
    pub frame: Rect,
    pub confidence: f32,
}

/// One line of words, as Tesseract grouped them: its text (the words joined by spaces),
/// frame (the words' union) and confidence (the lowest of its words').
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub text: String,
    pub frame: Rect,
    pub confidence: f32,
    pub words: Vec<Word>,
}

/// Why text could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OcrError {
    #[error("this cua was built without OCR (the `ocr` cargo feature)")]
    NotBuilt,
    #[error("Tesseract could not start ({0}): install tesseract-ocr and tesseract-ocr-eng")]
    Engine(String),
    #[error("Tesseract failed reading the picture: {0}")]
    Read(String),
}

/// The text of a picture, read once per distinct picture.
pub fn read(capture: &Capture) -> Result<Arc<Vec<Line>>, OcrError> {
    let key = picture_key(capture);
    if let Some(hit) = cached(key) {
        return Ok(hit);
    }
    let lines = Arc::new(read_uncached(capture)?);
    remember(key, lines.clone());
    Ok(lines)
}

/// The text of a picture, read now (what a cache miss costs; benches measure it).
pub fn read_uncached(capture: &Capture) -> Result<Vec<Line>, OcrError> {
    let (grey, width, height) = prepared(capture);
    let tsv = engine::recognise(&grey, width, height)?;
    Ok(lines_of_tsv(&tsv, UPSCALE))
}

fn picture_key(c: &Capture) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (c.width, c.height).hash(&mut h);
    c.rgba.hash(&mut h);
    h.finish()
}

type Cache = VecDeque<(u64, Arc<Vec<Line>>)>;
static CACHE: Mutex<Cache> = Mutex::new(VecDeque::new());

fn cached(key: u64) -> Option<Arc<Vec<Line>>> {
    let cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.clone())
}

fn remember(key: u64, lines: Arc<Vec<Line>>) {
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= CACHED_PICTURES {
        cache.pop_front();
    }
    cache.push_back((key, lines));
}

/// The capture in grey, dark text on light (a dark theme is inverted), enlarged
/// [`UPSCALE`] times: its bytes, width and height.
fn prepared(c: &Capture) -> (Vec<u8>, u32, u32) {
    let grey: Vec<u8> = c
        .rgba
        .chunks_exact(4)
        .map(|p| {
            ((u32::from(p[0]) * 299 + u32::from(p[1]) * 587 + u32::from(p[2]) * 114) / 1000) as u8
        })
        .collect();
    let mean = grey.iter().map(|v| u64::from(*v)).sum::<u64>() / grey.len().max(1) as u64;
    let image = image::GrayImage::from_raw(c.width, c.height, grey).unwrap_or_default();
    let mut image = image::imageops::resize(
        &image,
        c.width * UPSCALE,
        c.height * UPSCALE,
        image::imageops::FilterType::Triangle,
    );
    if mean < 110 {
        image::imageops::invert(&mut image);
    }
    // Black where a pixel is clearly darker than what surrounds it, else white: left to
    // itself, Tesseract splits a light grey window from its white fields and reads the
    // grey as ink, losing every label on it.
    let mut image = imageproc::contrast::adaptive_threshold(&image, THRESHOLD_RADIUS * UPSCALE, 12);
    erase_rules(&mut image, LONGEST_STROKE * UPSCALE);
    let (w, h) = image.dimensions();
    (image.into_raw(), w, h)
}

/// Whitens every straight horizontal or vertical run of black longer than `longest`.
fn erase_rules(image: &mut image::GrayImage, longest: u32) {
    let (w, h) = image.dimensions();
    let mut rules = Vec::new();
    let mut scan = |len: u32, count: u32, at: &dyn Fn(u32, u32) -> (u32, u32)| {
        for line in 0..count {
            let mut start = 0;
            for i in 0..=len {
                let ink = i < len && {
                    let (x, y) = at(line, i);
                    image.get_pixel(x, y).0[0] == 0
                };
                if ink {
                    continue;
                }
                if i - start > longest {
                    rules.extend((start..i).map(|j| at(line, j)));
                }
                start = i + 1;
            }
        }
    };
    scan(w, h, &|row, i| (i, row));
    scan(h, w, &|column, i| (column, i));
    for (x, y) in rules {
        image.put_pixel(x, y, image::Luma([255]));
    }
}

/// Lines of words from Tesseract's TSV (level 5 rows are words: level, page, block,
/// paragraph, line, word, left, top, width, height, confidence, text), frames divided
/// back by `scale`.
pub fn lines_of_tsv(tsv: &str, scale: u32) -> Vec<Line> {
    let mut lines: Vec<((u32, u32, u32), Line)> = Vec::new();
    for row in tsv.lines() {
        let cols: Vec<&str> = row.split('\t').collect();
        if cols.len() < 12 || cols[0] != "5" {
            continue;
        }
        let num = |i: usize| cols[i].trim().parse::<i64>().unwrap_or(0);
        let confidence = cols[10].trim().parse::<f32>().unwrap_or(0.0);
        let text = without_bars(cols[11].trim());
        if !worth_keeping(text, confidence) {
            continue;
        }
        let s = i64::from(scale.max(1));
        let (x, y) = (num(6) / s, num(7) / s);
        let (right, bottom) = ((num(6) + num(8) + s - 1) / s, (num(7) + num(9) + s - 1) / s);
        let frame = Rect::new(x as i32, y as i32, (right - x) as i32, (bottom - y) as i32);
        if frame.height < SMALLEST_TEXT {
            // A sliver: a corner or a shadow, not a letter.
            continue;
        }
        let word = Word {
            text: text.to_string(),
            frame,
            confidence,
        };
        let key = (num(2) as u32, num(3) as u32, num(4) as u32);
        match lines.iter_mut().find(|(k, _)| *k == key) {
            Some((_, line)) => {
                line.text.push(' ');
                line.text.push_str(text);
                line.frame = union(line.frame, frame);
                line.confidence = line.confidence.min(confidence);
                line.words.push(word);
            }
            None => lines.push((
                key,
                Line {
                    text: text.to_string(),
                    frame,
                    confidence,
                    words: vec![word],
                },
            )),
        }
    }
    lines.into_iter().map(|(_, line)| line).collect()
}

/// Widget borders read as bars: never text on a screen.
fn without_bars(text: &str) -> &str {
    text.trim_matches(|c| matches!(c, '|' | '¦' | '_' | '[' | ']'))
}

fn worth_keeping(text: &str, confidence: f32) -> bool {
    if text.is_empty() || confidence < MIN_CONFIDENCE {
        return false;
    }
    text.chars().any(char::is_alphanumeric) || confidence >= MIN_SYMBOL_CONFIDENCE
}

fn union(a: Rect, b: Rect) -> Rect {
    let (x, y) = (a.x.min(b.x), a.y.min(b.y));
    let right = (a.x + a.width).max(b.x + b.width);
    let bottom = (a.y + a.height).max(b.y + b.height);
    Rect::new(x, y, right - x, bottom - y)
}

#[cfg(feature = "ocr")]
mod engine {
    //! One Tesseract engine, started once (loading its model takes ~100 ms) and lent to
    //! one read at a time.
    use super::OcrError;
    use std::sync::Mutex;
    use tesseract::{PageSegMode, Tesseract};

    static ENGINE: Mutex<Option<Tesseract>> = Mutex::new(None);

    /// Tesseract's TSV for a grey picture.
    pub fn recognise(grey: &[u8], width: u32, height: u32) -> Result<String, OcrError> {
        let mut slot = ENGINE.lock().unwrap_or_else(|p| p.into_inner());
        let engine = match slot.take() {
            Some(engine) => engine,
            None => started()?,
        };
        let read = |e: String| OcrError::Read(e);
        let mut engine = engine
            .set_frame(grey, width as i32, height as i32, 1, width as i32)
            .map_err(|e| read(e.to_string()))?
            .set_source_resolution(300)
            .recognize()
            .map_err(|e| read(e.to_string()))?;
        let tsv = engine.get_tsv_text(0).map_err(|e| read(e.to_string()))?;
        *slot = Some(engine);
        Ok(tsv)
    }

    /// Ends the engine when the process exits: Tesseract left running then complains on
    /// stderr of its "leaked" model (a CLI user would read that after every call).
    extern "C" fn end_at_exit() {
        if let Ok(mut slot) = ENGINE.lock() {
            slot.take();
        }
    }

    fn started() -> Result<Tesseract, OcrError> {
        let mut engine =
            Tesseract::new(None, Some("eng")).map_err(|e| OcrError::Engine(e.to_string()))?;
        // After the engine started: exit handlers run last-registered first, and the
        // engine must end before Tesseract's own cache (registered as it started) does.
        static AT_EXIT: std::sync::Once = std::sync::Once::new();
        // SAFETY: registers a plain function with no arguments, as atexit asks.
        AT_EXIT.call_once(|| unsafe {
            libc::atexit(end_at_exit);
        });
        // Screens hold scattered labels and buttons, not pages of prose.
        engine.set_page_seg_mode(PageSegMode::PsmSparseText);
        // The picture is already dark on light: reading each line inverted too, as
        // Tesseract does by default for doubtful lines, only costs time.
        engine
            .set_variable("tessedit_do_invert", "0")
            .map_err(|e| OcrError::Engine(e.to_string()))
    }
}

#[cfg(not(feature = "ocr"))]
mod engine {
    use super::OcrError;

    pub fn recognise(_grey: &[u8], _width: u32, _height: u32) -> Result<String, OcrError> {
        Err(OcrError::NotBuilt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_words_group_into_lines_scaled_back_and_noise_is_dropped() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   5\t1\t1\t1\t1\t1\t30\t60\t60\t30\t96.5\tGift\n\
                   5\t1\t1\t1\t1\t2\t99\t60\t63\t39\t91.0\twrap\n\
                   5\t1\t2\t1\t1\t1\t300\t300\t9\t30\t20.0\t|\n\
                   5\t1\t3\t1\t1\t1\t300\t390\t30\t30\t88.0\t=\n\
                   5\t1\t4\t1\t1\t1\t300\t450\t30\t30\t50.0\t-\n";
        let lines = lines_of_tsv(tsv, 3);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0].text, "Gift wrap");
        assert_eq!(lines[0].frame, Rect::new(10, 20, 44, 13));
        assert_eq!(lines[0].confidence, 91.0);
        assert_eq!(lines[0].words[1].frame, Rect::new(33, 20, 21, 13));
        assert_eq!(lines[1].text, "=");
    }
}
