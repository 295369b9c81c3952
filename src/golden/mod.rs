//! Goldens: `goldens/<scenario>/` holds the expected trajectory (turn folders and
//! session.json); a run that differs leaves its trajectory as the pending
//! `goldens/<scenario>.new/`, which a person accepts or rejects, whole or turn by turn.
//! With `CI` set nothing here writes. Replacing a golden goes through a temporary folder
//! and renames, so an interrupted accept leaves the old golden or the new one, never half.

pub mod web;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::diff::{DiffConfig, TurnStatus, diff_trajectories};
use crate::trajectory::{parse_turn_dir, turn_dir_name};

const CI_REFUSAL: &str =
    "CI is set: nothing under goldens/ is written (unset CI to update goldens)";

pub struct Goldens {
    dir: PathBuf,
}

/// A scenario's golden state, for `cua golden list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldenEntry {
    pub scenario: String,
    pub golden: bool,
    pub pending: bool,
}

impl Goldens {
    pub fn new(dir: &Path) -> Goldens {
        Goldens {
            dir: dir.to_path_buf(),
        }
    }

    pub fn golden(&self, scenario: &str) -> PathBuf {
        self.dir.join(scenario)
    }

    pub fn pending(&self, scenario: &str) -> PathBuf {
        self.dir.join(format!("{scenario}.new"))
    }

    /// Every scenario with a golden or a pending golden.
    pub fn list(&self) -> Vec<GoldenEntry> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .map(|n| n.strip_suffix(".new").map(String::from).unwrap_or(n))
            .collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .map(|scenario| GoldenEntry {
                golden: self.golden(&scenario).is_dir(),
                pending: self.pending(&scenario).is_dir(),
                scenario,
            })
            .collect()
    }

    /// Makes `run_dir`'s trajectory the golden (`cua test --update`).
    pub fn store(&self, scenario: &str, run_dir: &Path) -> Result<PathBuf, String> {
        self.replace_with_copy(run_dir, &self.golden(scenario))
    }

    /// Leaves `run_dir`'s trajectory as the pending golden.
    pub fn store_pending(&self, scenario: &str, run_dir: &Path) -> Result<PathBuf, String> {
        self.replace_with_copy(run_dir, &self.pending(scenario))
    }

    /// The pending golden becomes the golden.
    pub fn accept(&self, scenario: &str) -> Result<PathBuf, String> {
        refuse_in_ci()?;
        let pending = self.pending(scenario);
        if !pending.is_dir() {
            return Err(format!(
                "no pending golden for `{scenario}` ({} does not exist)",
                pending.display()
            ));
        }
        let golden = self.golden(scenario);
        swap_in(&pending, &golden).map_err(|e| format!("{}: {e}", golden.display()))?;
        Ok(golden)
    }

    /// Drops the pending golden.
    pub fn reject(&self, scenario: &str) -> Result<(), String> {
        refuse_in_ci()?;
        let pending = self.pending(scenario);
        if !pending.is_dir() {
            return Err(format!("no pending golden for `{scenario}`"));
        }
        std::fs::remove_dir_all(&pending).map_err(|e| format!("{}: {e}", pending.display()))
    }

    /// Takes turn `turn` of the pending golden into the golden (or removes it from the
    /// golden when the pending run has no such turn).
    pub fn accept_turn(&self, scenario: &str, turn: u32) -> Result<(), String> {
        sync_turn(&self.pending(scenario), &self.golden(scenario), turn)
    }

    /// Keeps the golden's turn `turn`: the pending golden's copy is made equal to it, so the
    /// turn no longer shows as changed.
    pub fn reject_turn(&self, scenario: &str, turn: u32) -> Result<(), String> {
        sync_turn(&self.golden(scenario), &self.pending(scenario), turn)
    }

    fn replace_with_copy(&self, run_dir: &Path, dest: &Path) -> Result<PathBuf, String> {
        refuse_in_ci()?;
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        let name = dest
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let tmp = self.dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        copy_trajectory(run_dir, &tmp)
            .map_err(|e| format!("copying {}: {e}", run_dir.display()))?;
        swap_in(&tmp, dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        Ok(dest.to_path_buf())
    }
}

/// Makes turn `turn` of trajectory `to` what it is in `from` (copied, or removed when
/// `from` has no such turn). The copy's pid and window ids are those of `to`'s run: a turn
/// keeping its own run's ids would make the trajectory act on two apps, which the diff's
/// rebinding check fails.
fn sync_turn(from: &Path, to: &Path, turn: u32) -> Result<(), String> {
    refuse_in_ci()?;
    let name = turn_dir_name(turn);
    let (src, dest) = (from.join(&name), to.join(&name));
    if !src.is_dir() && !dest.is_dir() {
        return Err(format!(
            "`--turn {turn}`: neither the golden nor the pending run has {name}"
        ));
    }
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    if src.is_dir() {
        let tmp = to.join(format!(".{name}.tmp"));
        let _ = std::fs::remove_dir_all(&tmp);
        crate::files::copy_dir(&src, &tmp).map_err(|e| format!("{}: {e}", src.display()))?;
        rebind_ids(&tmp, &id_map(from, to, turn)).map_err(|e| format!("{}: {e}", tmp.display()))?;
        swap_in(&tmp, &dest).map_err(|e| format!("{}: {e}", dest.display()))
    } else {
        std::fs::remove_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))
    }
}

/// Ids that name recorded apps and windows.
const ID_KEYS: [&str; 2] = ["pid", "window_id"];

/// `from`'s ids → `to`'s, paired through the turns both trajectories have (but `skip`).
fn id_map(from: &Path, to: &Path, skip: u32) -> HashMap<(&'static str, u64), u64> {
    let read = |dir: &Path| crate::trajectory::read::action(dir).ok();
    let mut map = HashMap::new();
    let turns = crate::replay::turn_dirs(to).unwrap_or_default();
    for (n, dir) in turns.into_iter().filter(|(n, _)| *n != skip) {
        let (Some(a), Some(b)) = (read(&from.join(turn_dir_name(n))), read(&dir)) else {
            continue;
        };
        let (ids_a, ids_b) = (a.recorded_ids(), b.recorded_ids());
        for (key, x, y) in [("pid", ids_a.0, ids_b.0), ("window_id", ids_a.1, ids_b.1)] {
            if let (Some(x), Some(y)) = (x, y) {
                map.entry((key, x)).or_insert(y);
            }
        }
    }
    map
}

/// Rewrites a turn's ids (its own and its arguments') through `map`, read and written as
/// the one trajectory type.
fn rebind_ids(turn_dir: &Path, map: &HashMap<(&'static str, u64), u64>) -> Result<(), String> {
    let path = turn_dir.join("action.json");
    if !path.is_file() {
        return Ok(()); // a turn without action.json: nothing to rebind
    }
    let mut action = crate::trajectory::read::action(turn_dir)?;
    let new = |key: &'static str, id: u64| map.get(&(key, id)).copied();
    if let Some(pid) = action.pid.and_then(|p| new("pid", u64::from(p))) {
        action.pid = u32::try_from(pid).ok();
    }
    if let Some(window) = action.window_id.and_then(|w| new("window_id", w)) {
        action.window_id = Some(window);
    }
    for key in ID_KEYS {
        let slot = action.arguments.get_mut(key);
        if let Some(slot) = slot {
            if let Some(id) = slot.as_u64().and_then(|id| new(key, id)) {
                *slot = serde_json::json!(id);
            }
        }
    }
    let pretty = serde_json::to_vec_pretty(&action).map_err(|e| e.to_string())?;
    crate::files::write_atomic(&path, &pretty).map_err(|e| e.to_string())
}

/// Whether this is a CI run: goldens are then never written.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn refuse_in_ci() -> Result<(), String> {
    if in_ci() {
        Err(CI_REFUSAL.into())
    } else {
        Ok(())
    }
}

/// Moves folder `new` to `dest`, replacing what was there: the old folder is renamed aside
/// first and removed last.
fn swap_in(new: &Path, dest: &Path) -> std::io::Result<()> {
    let aside = dest.with_file_name(format!(
        ".{}.old-{}",
        dest.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let had_old = dest.exists();
    if had_old {
        let _ = std::fs::remove_dir_all(&aside);
        std::fs::rename(dest, &aside)?;
    }
    if let Err(e) = std::fs::rename(new, dest) {
        if had_old {
            let _ = std::fs::rename(&aside, dest);
        }
        return Err(e);
    }
    if had_old {
        std::fs::remove_dir_all(&aside)?;
    }
    Ok(())
}

/// Copies what a golden keeps of a run: session.json and the turn folders (not the video,
/// not files the app wrote next to them).
fn copy_trajectory(run_dir: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(run_dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if parse_turn_dir(&name).is_some() {
            crate::files::copy_dir(&entry.path(), &to.join(&name))?;
        } else if name == "session.json" {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

/// The scenario file's name of a golden: `x` for `x` and for a backend's own `x@gnome`.
pub fn scenario_of(golden: &str) -> &str {
    golden.split_once('@').map_or(golden, |(name, _)| name)
}

/// Goldens with no scenario file (`goldens/x/` or `goldens/x@backend/` without
/// `harness/x.toml`).
pub fn obsolete_goldens(goldens_dir: &Path, harness_dir: &Path) -> Vec<String> {
    Goldens::new(goldens_dir)
        .list()
        .into_iter()
        .filter(|g| {
            !harness_dir
                .join(format!("{}.toml", scenario_of(&g.scenario)))
                .is_file()
        })
        .map(|g| g.scenario)
        .collect()
}

/// One decision of a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Reject,
    Skip,
    Quit,
}

/// Reviews a scenario's pending golden turn by turn. `decide` is asked per changed turn
/// (after the turn's diff was printed to `out`). The pending golden is removed once no
/// changed turn is left undecided. Returns how many turns were accepted.
pub fn review(
    goldens: &Goldens,
    scenario: &str,
    config: &DiffConfig,
    out: &mut dyn Write,
    decide: &mut dyn FnMut(u32) -> Decision,
) -> Result<usize, String> {
    refuse_in_ci()?;
    let (golden, pending) = (goldens.golden(scenario), goldens.pending(scenario));
    if !pending.is_dir() {
        return Err(format!("no pending golden for `{scenario}`"));
    }
    if !golden.is_dir() {
        let _ = writeln!(
            out,
            "{scenario}: no golden yet; the pending run would become it"
        );
        return match decide(0) {
            Decision::Accept => goldens.accept(scenario).map(|_| 1),
            Decision::Reject => goldens.reject(scenario).map(|_| 0),
            _ => Ok(0),
        };
    }
    let d = diff_trajectories(&golden, &pending, config).map_err(|e| e.to_string())?;
    let (mut accepted, mut undecided) = (0, 0);
    for t in d.failed_turns() {
        let _ = writeln!(
            out,
            "\n{scenario} turn-{:05} {} ({})",
            t.turn,
            t.tool,
            match t.status {
                TurnStatus::Missing => "missing in the new run",
                TurnStatus::Extra => "new in this run",
                _ => "changed",
            }
        );
        for r in &t.reasons {
            let _ = writeln!(out, "  {r}");
        }
        for a in &t.action_diff {
            let _ = writeln!(out, "  action {a}");
        }
        if let Some(tree) = &t.tree_diff {
            for line in tree.lines().take(40) {
                let _ = writeln!(out, "  {line}");
            }
        }
        if let (Some(e), Some(a)) = (&t.expected_dir, &t.actual_dir) {
            let _ = writeln!(
                out,
                "  screenshots: {} vs {}",
                e.join("screenshot.png").display(),
                a.join("screenshot.png").display()
            );
        }
        match decide(t.turn) {
            Decision::Accept => {
                goldens.accept_turn(scenario, t.turn)?;
                accepted += 1;
            }
            Decision::Reject => goldens.reject_turn(scenario, t.turn)?,
            Decision::Skip => undecided += 1,
            Decision::Quit => {
                undecided += 1;
                break;
            }
        }
    }
    if undecided == 0 {
        std::fs::remove_dir_all(&pending).map_err(|e| format!("{}: {e}", pending.display()))?;
        let _ = writeln!(out, "{scenario}: review done, pending golden removed");
    }
    Ok(accepted)
}

/// What deciding one turn did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnDecided {
    /// The golden took the pending run's turn (or, for turn 0, the whole pending run).
    pub accepted: bool,
    /// No changed turn is left undecided, so the pending golden was removed.
    pub review_done: bool,
}

/// Decides one changed turn of a scenario's pending golden, leaving the others undecided:
/// the per-turn path of [`review`] that `cua golden review --turn` and the web review
/// share. Turn 0 is the whole pending run of a scenario with no golden yet. A turn that did
/// not change is an error that lists the turns that did, and nothing is decided.
pub fn decide_turn(
    goldens: &Goldens,
    scenario: &str,
    config: &DiffConfig,
    turn: u32,
    decision: Decision,
) -> Result<TurnDecided, String> {
    if !matches!(decision, Decision::Accept | Decision::Reject) {
        return Err("a turn is decided by accept or reject".into());
    }
    let mut changed = Vec::new();
    let accepted = review(goldens, scenario, config, &mut std::io::sink(), &mut |n| {
        changed.push(n);
        if n == turn || n == 0 {
            decision
        } else {
            Decision::Skip
        }
    })?;
    if !changed.contains(&turn) && !changed.contains(&0) {
        let list: Vec<String> = changed.iter().map(u32::to_string).collect();
        return Err(format!(
            "turn {turn} is not a changed turn of {scenario} (changed: {}); nothing was decided",
            if list.is_empty() {
                "none".into()
            } else {
                list.join(", ")
            }
        ));
    }
    Ok(TurnDecided {
        accepted: accepted > 0,
        review_done: !goldens.pending(scenario).exists(),
    })
}

/// Asks on the terminal: `[a]ccept / [r]eject / [s]kip / [q]uit`.
pub fn ask_terminal(turn: u32) -> Decision {
    let stdin = std::io::stdin();
    loop {
        if turn == 0 {
            eprint!("accept the new golden? [a]ccept / [r]eject / [s]kip: ");
        } else {
            eprint!("turn {turn}: [a]ccept / [r]eject / [s]kip / [q]uit: ");
        }
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            return Decision::Quit;
        }
        match line.trim() {
            "a" | "accept" => return Decision::Accept,
            "r" | "reject" => return Decision::Reject,
            "s" | "skip" | "" => return Decision::Skip,
            "q" | "quit" => return Decision::Quit,
            _ => continue,
        }
    }
}
