//! Sample statistics shared by the benchmarks.
#![allow(dead_code)]

/// The `p` quantile (0..1) of sorted samples, nearest rank.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Median and 95th percentile.
pub fn median_p95(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (percentile(&samples, 0.5), percentile(&samples, 0.95))
}

pub fn median(samples: Vec<f64>) -> f64 {
    median_p95(samples).0
}

/// Median milliseconds of `runs` timed calls of `f` after `warmup` untimed ones, and how
/// many of the timed calls returned false (lost: not counted in the median).
pub fn measure(runs: usize, warmup: usize, mut f: impl FnMut() -> bool) -> (f64, usize) {
    for _ in 0..warmup {
        f();
    }
    let mut times = Vec::new();
    let mut lost = 0;
    for _ in 0..runs {
        let started = std::time::Instant::now();
        if f() {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        } else {
            lost += 1;
        }
    }
    (median(times), lost)
}
