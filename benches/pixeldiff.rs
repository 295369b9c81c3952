//! Benchmark: pixel diff of 1080p PNG pairs (identical, ~1% changed, ~50% changed), PNG
//! decoding included, next to pixelmatch (npm pixelmatch + pngjs, in one node process) and
//! odiff (npm odiff-bin, its CLI, one process per diff) on the same files in the same run.
//! The npm peers are installed into target/bench-peers on first use.
//! `cargo bench --bench pixeldiff`.

#[path = "support/stats.rs"]
mod stats;
use stats::median;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cua::diff::pixels::{ImageRef, PixelDiffOptions, diff};

const RUNS: usize = 7;
const W: u32 = 1920;
const H: u32 = 1080;

/// A deterministic UI-like picture: panels, buttons, text-like strokes on a gradient.
fn base_image() -> Vec<u8> {
    let mut img = vec![0u8; (W * H * 4) as usize];
    for y in 0..H {
        for x in 0..W {
            let i = ((y * W + x) * 4) as usize;
            let mut px = [235 - (y / 40) as u8, 238 - (x / 80) as u8, 242, 255];
            if (x / 240 + y / 180) % 3 == 0 && x % 240 > 12 && y % 180 > 12 {
                px = [250, 250, 250, 255];
            }
            if x % 240 > 30 && x % 240 < 200 && y % 180 > 40 && y % 180 < 70 {
                px = [53, 132, 228, 255];
            }
            if y % 180 > 100
                && y % 180 < 112
                && ((x * 7 + y * 3) % 13) < 6
                && x % 240 > 30
                && x % 240 < 210
            {
                px = [40, 40, 40, 255];
            }
            img[i..i + 4].copy_from_slice(&px);
        }
    }
    img
}

fn write_png(path: &Path, rgba: &[u8]) {
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), W, H);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().unwrap().write_image_data(rgba).unwrap();
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    if info.color_type == png::ColorType::Rgb {
        buf = buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
    }
    (info.width, info.height, buf)
}

fn peers_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-peers");
    if !dir.join("node_modules/.bin/odiff").exists()
        || !dir.join("node_modules/pixelmatch").exists()
    {
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("npm")
            .args([
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "pixelmatch@5",
                "pngjs@7",
                "odiff-bin@4",
            ])
            .current_dir(&dir)
            .status()
            .expect("npm");
        assert!(ok.success(), "npm install of the peers failed");
    }
    dir
}

fn main() {
    let peers = peers_dir();
    let dir = std::env::temp_dir().join(format!("cua-bench-pixeldiff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = base_image();
    let mut one = base.clone();
    for y in 300..444 {
        for x in 800..944 {
            let i = ((y * W + x) * 4) as usize;
            one[i..i + 3].copy_from_slice(&[224, 27, 36]);
        }
    }
    let mut half = base.clone();
    for y in 0..H {
        for x in 0..W / 2 {
            let i = ((y * W + x) * 4) as usize;
            half[i] = 255 - half[i];
            half[i + 2] /= 2;
        }
    }
    let a = dir.join("a.png");
    write_png(&a, &base);
    let cases = [
        ("identical", base.clone()),
        ("~1% changed", one),
        ("~50% changed", half),
    ];

    println!(
        "| pair (1920x1080 PNG) | cua p50 | diff px | pixelmatch p50 | odiff p50 (CLI) | pixelmatch / cua | odiff / cua |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, img) in cases {
        let b = dir.join(format!("b-{}.png", name.replace(['~', '%', ' '], "")));
        write_png(&b, &img);
        let mut ours = Vec::new();
        let mut count = 0;
        for _ in 0..RUNS {
            let t = Instant::now();
            let (w1, h1, p1) = decode(&a);
            let (w2, h2, p2) = decode(&b);
            let d = diff(
                ImageRef {
                    width: w1,
                    height: h1,
                    rgba: &p1,
                },
                ImageRef {
                    width: w2,
                    height: h2,
                    rgba: &p2,
                },
                &PixelDiffOptions {
                    threads: 2,
                    ..Default::default()
                },
            );
            ours.push(t.elapsed().as_secs_f64() * 1000.0);
            count = d.diff_pixels;
        }
        let out = Command::new("node")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/support/pixelmatch_bench.js"))
            .args([a.to_str().unwrap(), b.to_str().unwrap(), &RUNS.to_string()])
            .env("NODE_PATH", peers.join("node_modules"))
            .output()
            .expect("node");
        assert!(
            out.status.success(),
            "pixelmatch: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let pm: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let pm_times: Vec<f64> = pm["times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let mut od = Vec::new();
        for _ in 0..RUNS {
            let t = Instant::now();
            let status = Command::new(peers.join("node_modules/.bin/odiff"))
                .args([
                    a.to_str().unwrap(),
                    b.to_str().unwrap(),
                    dir.join("odiff-out.png").to_str().unwrap(),
                    "--threshold",
                    "0.1",
                ])
                .output()
                .expect("odiff");
            od.push(t.elapsed().as_secs_f64() * 1000.0);
            let _ = status;
        }
        let (c, p, o) = (median(ours), median(pm_times), median(od));
        println!(
            "| {name} | {c:.1} ms | {count} | {p:.1} ms ({} px) | {o:.1} ms | {:.1}x | {:.1}x |",
            pm["count"],
            p / c,
            o / c
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
