//! Benchmark: `cua diff` of a 100-turn trajectory (target ≤ 3 s), as a user runs it (the
//! release binary, PNG decoding and all), without and with the HTML report. The
//! trajectory is built from the checked-in goldens (widget factory 1367x742 and calculator
//! windows), cycled to 100 turns; the actual run differs in every 10th screenshot (a
//! painted block) and every 20th tree (a changed label).
//! `cargo bench --bench diff`.

#[path = "support/stats.rs"]
mod stats;
use stats::median_p95;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const TURNS: usize = 100;
const RUNS: usize = 5;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn build(root: &Path) -> (PathBuf, PathBuf) {
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources: Vec<PathBuf> = ["goldens/widget-factory", "goldens/calculator"]
        .iter()
        .flat_map(|g| {
            let mut turns: Vec<PathBuf> = std::fs::read_dir(project.join(g))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            turns.sort();
            turns
        })
        .collect();
    let (expected, actual) = (root.join("expected"), root.join("actual"));
    let _ = std::fs::remove_dir_all(root);
    for n in 1..=TURNS {
        let src = &sources[(n - 1) % sources.len()];
        let name = format!("turn-{n:05}");
        copy_dir(src, &expected.join(&name));
        copy_dir(src, &actual.join(&name));
        if n % 10 == 0 {
            let shot = actual.join(&name).join("screenshot.png");
            let mut img = image::open(&shot).unwrap().to_rgba8();
            for y in 20..60 {
                for x in 20..60 {
                    img.put_pixel(x, y, image::Rgba([220, 20, 60, 255]));
                }
            }
            img.save(&shot).unwrap();
        }
        if n % 20 == 0 {
            let state = actual.join(&name).join("app_state.json");
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
            let md = v["tree_markdown"].as_str().unwrap().to_string();
            v["tree_markdown"] = serde_json::json!(format!("{md}\n- label \"changed\""));
            std::fs::write(&state, serde_json::to_string(&v).unwrap()).unwrap();
        }
    }
    (expected, actual)
}

fn time_diff(expected: &Path, actual: &Path, report: Option<&Path>) -> (f64, f64) {
    let mut samples = Vec::new();
    for _ in 0..RUNS {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cua"));
        cmd.arg("diff").arg(expected).arg(actual);
        if let Some(r) = report {
            let _ = std::fs::remove_dir_all(r);
            cmd.arg("--report").arg(r);
        }
        let t = Instant::now();
        let out = cmd.output().unwrap();
        samples.push(t.elapsed().as_secs_f64());
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(said.matches("✗ turn-").count(), TURNS / 10, "{said}");
    }
    median_p95(samples)
}

fn main() {
    let root = std::env::temp_dir().join(format!("cua-bench-diff-{}", std::process::id()));
    let (expected, actual) = build(&root);
    println!("| `cua diff`, {TURNS} turns | p50 | p95 | target |");
    println!("|---|---|---|---|");
    let (p50, p95) = time_diff(&expected, &actual, None);
    println!("| terminal summary | {p50:.2} s | {p95:.2} s | ≤ 3 s |");
    let (p50, p95) = time_diff(&expected, &actual, Some(&root.join("report")));
    println!("| + HTML report (images copied, diff PNGs) | {p50:.2} s | {p95:.2} s | ≤ 3 s |");
    let _ = std::fs::remove_dir_all(&root);
}
