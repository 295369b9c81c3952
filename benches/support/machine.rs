//! The machine's state, as benchmarks wait for it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Waits (at most 30 s) until the machine's CPUs were busy under 10% of one second: a
/// browser's first seconds go to its own start-up, and a peer measured after cua's calls
/// would otherwise leave cua alone to pay for them.
pub fn wait_until_quiet() {
    // (busy, total) jiffies of all CPUs, from /proc/stat's first line.
    let sample = || -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let fields: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
        let total: u64 = fields.iter().take(8).sum();
        (total - idle, total)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let (busy0, total0) = sample();
        std::thread::sleep(Duration::from_secs(1));
        let (busy1, total1) = sample();
        if (busy1 - busy0) * 10 < (total1 - total0).max(1) {
            return;
        }
    }
}
