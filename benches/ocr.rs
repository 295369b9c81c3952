//! Benchmark: what reading a window without an accessibility tree costs (#43). OCR of a
//! window's screenshot as `get_window_state` does it (`cua::ocr::read`): uncached (a new
//! picture: grey, threshold, rules erased, Tesseract through its C API with the engine
//! kept), and cached (the same picture again: a hash), next to the `tesseract` CLI on the
//! same PNG (one process per read, the engine loaded each time), in the same run. The
//! pictures are the shipped goldens' screenshots: the Tk order form (380×460) and the
//! Swing order form, and the four pasted side by side (a 1516×460 window).
//! Then visual matching as a replayed pixel turn on such a window pays it
//! (`cua::visual`): the patch around a recorded point (the Tk form's Gift wrap box) found
//! in the live window, and in a 1280×800 one.
//! `cargo bench --bench ocr`.

#[path = "support/stats.rs"]
mod stats;
use stats::median_p95;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cua::platform::Capture;

const RUNS: usize = 9;

fn load(path: &Path) -> Capture {
    let img = image::open(path).expect("a golden screenshot").to_rgba8();
    Capture {
        width: img.width(),
        height: img.height(),
        rgba: img.into_raw(),
    }
}

/// Four pictures side by side, for a window four times as wide.
fn wide(parts: &[&Capture]) -> Capture {
    let height = parts.iter().map(|c| c.height).max().unwrap();
    let width: u32 = parts.iter().map(|c| c.width).sum();
    let mut out = image::RgbaImage::from_pixel(width, height, image::Rgba([217, 217, 217, 255]));
    let mut x = 0;
    for c in parts {
        let part = image::RgbaImage::from_raw(c.width, c.height, c.rgba.clone()).unwrap();
        image::imageops::overlay(&mut out, &part, i64::from(x), 0);
        x += c.width;
    }
    Capture {
        width,
        height,
        rgba: out.into_raw(),
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tk = root.join("goldens/order-tk/turn-00001/screenshot.png");
    let swing = root.join("goldens/order-swing/turn-00004/screenshot.png");
    let (tk_c, swing_c) = (load(&tk), load(&swing));
    let wide_c = wide(&[&tk_c, &swing_c, &tk_c, &swing_c]);
    let wide_png = std::env::temp_dir().join(format!("cua-ocr-bench-{}.png", std::process::id()));
    image::RgbaImage::from_raw(wide_c.width, wide_c.height, wide_c.rgba.clone())
        .unwrap()
        .save(&wide_png)
        .unwrap();
    let cli = Command::new("tesseract").arg("--version").output().is_ok();
    println!("OCR of one window, median (p95) of {RUNS} runs, ms\n");
    println!("| window | words | cua uncached | cua cached | tesseract CLI | CLI / cua uncached |");
    println!("|---|---|---|---|---|---|");
    // The engine starts once per process (~100 ms): not part of a read.
    cua::ocr::read_uncached(&tk_c).expect("OCR (is tesseract-ocr-eng installed?)");
    for (name, capture, png) in [
        ("Tk order form", &tk_c, tk.as_path()),
        ("Swing order form", &swing_c, swing.as_path()),
        ("four side by side", &wide_c, wide_png.as_path()),
    ] {
        let mut words = 0;
        let uncached: Vec<f64> = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                let lines = cua::ocr::read_uncached(capture).unwrap();
                words = lines.iter().map(|l| l.words.len()).sum();
                ms(t)
            })
            .collect();
        cua::ocr::read(capture).unwrap();
        let cached: Vec<f64> = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                cua::ocr::read(capture).unwrap();
                ms(t)
            })
            .collect();
        let peer: Option<Vec<f64>> = cli.then(|| {
            (0..RUNS)
                .map(|_| {
                    let t = Instant::now();
                    let out = Command::new("tesseract")
                        .arg(png)
                        .args(["-", "--psm", "11", "tsv"])
                        .output()
                        .unwrap();
                    assert!(out.status.success());
                    ms(t)
                })
                .collect()
        });
        let (u, u95) = median_p95(uncached);
        let (c, c95) = median_p95(cached);
        let (peer_cell, ratio) = match peer {
            Some(p) => {
                let (m, p95) = median_p95(p);
                (format!("{m:.1} ({p95:.1})"), format!("{:.2}×", m / u))
            }
            None => ("not installed".into(), "-".into()),
        };
        println!(
            "| {name} ({}×{}) | {words} | {u:.1} ({u95:.1}) | {c:.2} ({c95:.2}) | {peer_cell} | {ratio} |",
            capture.width, capture.height
        );
    }
    let _ = std::fs::remove_file(&wide_png);
    visual_matching(&tk_c);
}

/// The cost of finding a recorded point's patch in a live window, per pixel turn.
fn visual_matching(tk: &Capture) {
    // The Gift wrap check box of the Tk form (what tests/no_tree.rs clicks by point).
    let (patch, at) = cua::visual::patch_around(tk, 30, 98).expect("inside the window");
    let big = {
        let mut out = image::RgbaImage::from_pixel(1280, 800, image::Rgba([217, 217, 217, 255]));
        let part = image::RgbaImage::from_raw(tk.width, tk.height, tk.rgba.clone()).unwrap();
        image::imageops::overlay(&mut out, &part, 700, 300);
        Capture {
            width: 1280,
            height: 800,
            rgba: out.into_raw(),
        }
    };
    println!(
        "\nVisual matching per pixel turn (the {}×{} patch around a recorded point), median (p95) of {RUNS} runs, ms\n",
        patch.width(),
        patch.height()
    );
    println!("| live window | places found | cua::visual::find_patch |");
    println!("|---|---|---|");
    for (name, live) in [("Tk order form (380×460)", tk), ("1280×800", &big)] {
        let mut places = 0;
        let times: Vec<f64> = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                places = cua::visual::find_patch(live, &patch, at).len();
                ms(t)
            })
            .collect();
        let (m, p95) = median_p95(times);
        println!("| {name} | {places} | {m:.1} ({p95:.1}) |");
    }
}
