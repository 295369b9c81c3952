//! What /proc says of a running process: its executable, its command name, its parent, its
//! process group, whether it still runs and how long ago it started. The launcher (apps.rs)
//! and the app families (families.rs) both read processes through it.

use std::path::Path;

/// A path's last component (`/usr/bin/gedit` → `gedit`).
pub fn basename(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The executable basename of a running process (`/proc/PID/exe`, else `comm`).
pub fn process_executable(pid: u32) -> Option<String> {
    if let Ok(target) = std::fs::read_link(format!("/proc/{pid}/exe")) {
        // A program replaced while it runs (upgraded, rebuilt) reads "NAME (deleted)".
        let target = target.to_string_lossy();
        return Some(basename(target.trim_end_matches(" (deleted)")));
    }
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Fields of `/proc/PID/stat` the launcher needs: the parent pid, and the start time in
/// seconds since boot.
struct ProcStat {
    ppid: u32,
    pgid: u32,
    started_s: f64,
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields after the last
    // `)` are plain. There, field 4 (ppid) is index 1, field 5 (pgrp) index 2 and field 22
    // (starttime) index 19.
    let rest: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|t| *t > 0)? as f64;
    Some(ProcStat {
        ppid: rest.get(1)?.parse().ok()?,
        pgid: rest.get(2)?.parse().ok()?,
        started_s: rest.get(19)?.parse::<f64>().ok()? / ticks,
    })
}

/// The parent of process `pid`.
pub fn parent_pid(pid: u32) -> Option<u32> {
    proc_stat(pid).map(|s| s.ppid)
}

/// Whether `pid` still runs: it exists and is not a zombie (state Z) or dead (X).
pub fn process_running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state (field 3) is the first field after the command name's last `)`.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| state != "Z" && state != "X")
}

/// How long ago `pid` started.
pub fn process_age(pid: u32) -> Option<std::time::Duration> {
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let age = uptime - proc_stat(pid)?.started_s;
    Some(std::time::Duration::from_secs_f64(age.max(0.0)))
}

/// Whether `pid` belongs to what launching `launched` started: the process itself, a
/// descendant (a launcher script's child), or a process of its process group whose parent
/// has exited (what a forking launcher such as LibreOffice's leaves behind). `spawn` gives
/// every launch its own group.
pub fn in_launch(pid: u32, launched: u32) -> bool {
    descends_from(pid, launched) || proc_stat(pid).is_some_and(|s| s.pgid == launched)
}

/// Libraries whose presence in a process means it speaks AT-SPI: GTK 2/3's bridge module
/// (also Java's ATK wrapper's), GTK 4 (its bridge is built in), and Qt's GUI library (its
/// bridge joins when the bus says accessibility is on, as a sandbox's does).
const ACCESSIBILITY_BRIDGES: [&str; 4] = [
    "/libatk-bridge-2.0.so",
    "/libgtk-4.so",
    "/libQt5Gui.so",
    "/libQt6Gui.so",
];

/// Whether `pid` has an AT-SPI bridge mapped, so it should join the accessibility bus (Tk,
/// Xaw and SDL apps have none: they are read by their pixels).
pub fn carries_accessibility_bridge(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|maps| {
        maps.lines()
            .any(|line| ACCESSIBILITY_BRIDGES.iter().any(|lib| line.contains(lib)))
    })
}

/// Whether any process of process group `pgid` is still running.
pub fn group_alive(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .any(|pid| proc_stat(pid).is_some_and(|s| s.pgid == pgid))
}

/// Whether `pid` is `ancestor` or one of its descendants.
fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut p = pid;
    // Bounded: a pid chain is short, and a bound guards against a read racing a reuse.
    for _ in 0..64 {
        if p == ancestor {
            return true;
        }
        match proc_stat(p) {
            Some(s) if s.ppid > 1 => p = s.ppid,
            _ => return false,
        }
    }
    false
}

/// The first argv word's basename: for script launchers (`chromium` is a shell script)
/// this is what the user typed, not the interpreter.
pub fn process_command_name(pid: u32) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let first = cmdline.split(|b| *b == 0).next()?;
    Some(basename(&String::from_utf8_lossy(first)))
}
