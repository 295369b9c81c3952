//! A replayed turn's postcondition: the change between the turn's recorded before-state
//! and after-state (`before_state.json`, `app_state.json`), which the live app must make
//! again, exactly. Replay reads the live window just before dispatching the turn and waits
//! (bounded, on the app's accessibility events) until the change from that reading to the
//! live window is the recorded change; so `--delay-ms 0` is as correct as a slow replay,
//! and only what happened after the dispatch counts, never a state that was already there.
//!
//! A change is compared as tree lines without their element indices (indices shift when
//! elements come and go), each with the count it gained or lost. The turn passes only when
//! every recorded line changed by its recorded count and nothing else changed. Otherwise it
//! fails, element by element: a live line in the recorded line's place (same depth and
//! role) that shows another name or value is a contradiction (`expected label "Total: 3",
//! the app shows label "Total: -3"`); a recorded line with no counterpart is missing; a
//! line the recording did not change is an unrecorded change. No "partly shown" pass.
//!
//! Roles are read in one vocabulary ([`role_key`]: `frame` and `window`, `push button` and
//! `button` are one), so a recording from another driver compares with the live tree.
//! What is not a turn's effect is left out of every line: the focus and the actions an
//! element offers (both follow how an action was delivered), tool tips (they follow the
//! pointer), text the caller marks volatile (a clock; a scenario's `[diff]` redactions), and
//! UUIDs, which an app mints anew each run (a browser names a download by one).
//! A healed element's recorded role and name are read as its live ones ([`Rename`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use regex::Regex;

use crate::platform::{Platform, WindowInfo};
use crate::snapshot::incidental::Incidental;
use crate::snapshot::markdown::{self, role_key};

/// How long a turn's change may take to show.
pub const WAIT: Duration = Duration::from_secs(3);
/// The app sent nothing for this long after a reading: its change is as done as it gets.
const QUIET: Duration = Duration::from_millis(150);
/// Without an event feed, read again this often.
const POLL: Duration = Duration::from_millis(50);
/// At most this many differences are named.
const NAMED: usize = 3;
/// Roles whose lines (and everything under them) follow the pointer, not the action.
const VOLATILE_ROLES: &[&str] = &["tool_tip"];

/// A healed element: its recorded role and name are read as the live ones in the
/// recorded lines, so a relabelled check box that toggled is its recorded change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    pub from_role: String,
    pub from_name: String,
    pub to_role: String,
    pub to_name: String,
}

impl Rename {
    /// The recorded line `line` (a normalized line's body, `role "name"…`) as the live
    /// app names it, or None when it is not this element's line.
    fn apply(&self, body: &str) -> Option<String> {
        let quoted = |role: &str, name: &str| format!("{}{}", role_key(role), quoted_name(name));
        let from = quoted(&self.from_role, &self.from_name);
        let rest = body.strip_prefix(&from)?;
        // The name must end there: `button "Add"` is not `button "Add"` + more name.
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        Some(format!("{}{rest}", quoted(&self.to_role, &self.to_name)))
    }
}

/// A UUID, in any case: minted anew each run, never a turn's recorded effect as such.
static UUID: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
        .expect("a valid pattern")
});

/// How lines are read for the check: volatile text and the renames of healed elements.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// Each match becomes `<volatile>` on every line, recorded and live.
    pub volatile: Vec<Regex>,
    /// Applied to recorded lines only.
    pub renames: Vec<Rename>,
    /// The recording comes from another driver (cua-driver): it keeps every structural
    /// level cua's tree folds away, so lines compare without their depth, and lines of
    /// nodes cua's tree never shows (unnamed structural nodes) are left out, on both sides.
    pub other_driver: bool,
    /// With another driver's recording: the roles whose values it recorded; the values of
    /// other roles are left out of every line (it did not read them, cua does).
    pub valued_roles: Option<std::collections::HashSet<String>>,
    /// With another driver's recording: the roles it named by their text (a text view's
    /// content as its name); cua's unnamed elements of these roles are named by value.
    pub text_named_roles: std::collections::HashSet<String>,
    /// What is under these regions' lines follows the app's timing, not the turn: left
    /// out on both sides ([`Incidental`]; the default roles unless set).
    pub incidental: Incidental,
    /// Text an agent's recording saw still changing ([`still_changing`]): a recorded
    /// gained line one of these matches is shown by any live line in its place that the
    /// same pattern matches (its before-state is still compared exactly).
    pub moments: Vec<Regex>,
}

/// A tree as counted lines.
type Counts = HashMap<String, i64>;

/// A markdown tree line as a turn's effect is compared: without its `[N] ` index, its
/// `[actions=…]` and its `focused` state, indentation kept (it is the depth).
fn normalize(line: &str) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let rest = trimmed.strip_prefix("- ").unwrap_or(trimmed);
    let rest = match rest.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((n, tail)) if n.chars().all(|c| c.is_ascii_digit()) => tail,
        _ => rest,
    };
    // Roles and names in one vocabulary: a recording from another driver says `window` or
    // `push button` where the live tree says `frame` or `button`, and one from an earlier
    // cua kept raw names (`"7 7"`, `"GtkSourceView"`) where the live tree reads `"7"` or none.
    let (role, tail) = markdown::split_role(rest);
    let (name, tail) = markdown::split_name(tail);
    format!(
        "{indent}- {}{}{}",
        role_key(role),
        quoted_name(name.as_deref().unwrap_or("")),
        without_incidentals(tail)
    )
}

/// ` "name"` as a line quotes a name read as today ([`crate::names::readable`]); nothing
/// for no name.
fn quoted_name(name: &str) -> String {
    match crate::names::readable(name) {
        "" => String::new(),
        name => format!(" \"{}\"", crate::snapshot::escape_name(name)),
    }
}

/// The line without its `[actions=…]`, and with `focused` taken out of its states group.
fn without_incidentals(rest: &str) -> String {
    let head = match rest.find(" [actions=") {
        Some(i) => &rest[..i],
        None => rest,
    };
    markdown::without_states(head, &["focused"])
}

/// Patterns that leave out, for one turn, the text of what an agent's recording saw still
/// changing when it stopped reading (its `settle.changing`: `tree: - [3] paragraph
/// "Ticks: 5"`, `tree: + [3] paragraph "Ticks: 6"`). Each lost line paired with the next
/// gained line of the same role yields their common start up to where they differ (at
/// least the role and the opening quote), then anything up to a closing quote: `paragraph
/// "Ticks: [^"]*`. What the recording holds there is one moment of that text, so the turn's
/// check takes any moment of it ([`Reading::moments`]). A role that changed, or a line with
/// no partner, yields nothing.
pub fn still_changing(changing: &[String]) -> Vec<Regex> {
    let lines: Vec<(bool, String)> = changing
        .iter()
        .filter_map(|c| {
            let rest = c.strip_prefix("tree: ")?;
            let (sign, line) = (rest.chars().next()?, rest.get(1..)?.trim());
            Some((sign == '+', body(&normalize(line)).to_string()))
        })
        .collect();
    let role = |line: &str| markdown::split_role(line).0.to_string();
    let mut out = Vec::new();
    for (i, (gained, lost)) in lines.iter().enumerate() {
        if *gained {
            continue;
        }
        let Some((_, partner)) = lines[i + 1..]
            .iter()
            .find(|(g, l)| *g && role(l) == role(lost))
        else {
            continue;
        };
        let common: String = lost
            .chars()
            .zip(partner.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect();
        if common.len() < role(lost).len() + 2 || !common.contains('"') {
            continue;
        }
        if let Ok(pattern) = Regex::new(&format!("{}[^\"]*", regex::escape(&common))) {
            out.push(pattern);
        }
    }
    out
}

/// The body of a normalized line: `role "name"…` without its indentation and dash.
fn body(line: &str) -> &str {
    line.trim_start().trim_start_matches("- ")
}

impl Reading {
    /// A tree's lines, counted; `recorded` applies the renames.
    fn counts(&self, markdown: &str, recorded: bool) -> Counts {
        let mut out = HashMap::new();
        let mut volatile_depth: Option<usize> = None;
        // Under an incidental region's line (the line itself counts).
        let mut region_depth: Option<usize> = None;
        let lines = match self.other_driver {
            true => joined_continuations(markdown),
            false => markdown.lines().map(str::to_string).collect(),
        };
        for raw in lines.iter().filter(|l| !l.trim().is_empty()) {
            let depth = (raw.len() - raw.trim_start().len()) / 2;
            if volatile_depth.is_some_and(|d| depth > d) {
                continue;
            }
            volatile_depth = None;
            if region_depth.is_some_and(|d| depth > d) {
                continue;
            }
            region_depth = None;
            let mut line = normalize(raw);
            if self.other_driver {
                let folded = markdown::parse(&line).first().is_some_and(|l| {
                    let role = role_key(&l.role);
                    l.name.is_empty()
                        && (FOLDED_UNNAMED.contains(&role.as_str())
                            || crate::snapshot::STRUCTURAL_ROLES.contains(&role.as_str()))
                });
                if folded {
                    continue;
                }
                line = format!("- {}", body(&line));
                if let Some(valued) = &self.valued_roles {
                    line = named_by_value(&line, valued, &self.text_named_roles);
                    line = without_unrecorded_value(&line, valued);
                }
            }
            let parsed = markdown::parse(&line);
            if parsed
                .first()
                .is_some_and(|l| VOLATILE_ROLES.contains(&role_key(&l.role).as_str()))
            {
                volatile_depth = Some(depth);
                continue;
            }
            if parsed
                .first()
                .is_some_and(|l| self.incidental.is_region(&l.role))
            {
                region_depth = Some(depth);
            }
            if recorded {
                if let Some(renamed) = self.renames.iter().find_map(|r| r.apply(body(&line))) {
                    let indent = if self.other_driver { 0 } else { depth };
                    line = format!("{}- {renamed}", "  ".repeat(indent));
                }
            }
            for pattern in self.volatile.iter().chain([&*UUID]) {
                line = pattern.replace_all(&line, "<volatile>").into_owned();
            }
            *out.entry(line).or_insert(0) += 1;
        }
        out
    }
}

/// The lines that changed from `before` to `after` as `reading` reads them (focus,
/// actions and tool tips aside), gained ones as `+ line`, lost ones as `- line`.
pub fn changed_lines(before: &str, after: &str, reading: &Reading) -> Vec<String> {
    delta(
        &reading.counts(before, false),
        &reading.counts(after, false),
    )
    .into_iter()
    .map(|(line, d)| format!("{} {}", if d > 0 { '+' } else { '-' }, body(&line)))
    .collect()
}

/// How many elements of the change from `before` to `after` are under incidental
/// regions, which `reading` leaves out: what a turn's check did not compare, for its
/// report. (A changed element is a line lost and a line gained: the larger side counts.)
pub fn incidental_changes(before: &str, after: &str, reading: &Reading) -> usize {
    if reading.incidental.is_none() {
        return 0;
    }
    let strict = Reading {
        incidental: Incidental::none(),
        ..reading.clone()
    };
    let compared = delta(&reading.counts(before, true), &reading.counts(after, true));
    let (mut gained, mut lost) = (0, 0);
    for (line, d) in delta(&strict.counts(before, true), &strict.counts(after, true)) {
        if compared.get(&line) != Some(&d) {
            match d > 0 {
                true => gained += d,
                false => lost -= d,
            }
        }
    }
    gained.max(lost) as usize
}

/// What changed from `before` to `after`: each line's gain (or loss, negative).
fn delta(before: &Counts, after: &Counts) -> BTreeMap<String, i64> {
    before
        .keys()
        .chain(after.keys())
        .map(|line| {
            let n = |c: &Counts| c.get(line).copied().unwrap_or(0);
            (line.clone(), n(after) - n(before))
        })
        .filter(|(_, d)| *d != 0)
        .collect()
}

/// A reading of the live window's tree, and when it was taken: while the app has sent no
/// event since, it is still the window's state (the next turn's before-state, without
/// reading the window again).
#[derive(Debug, Clone)]
pub struct LiveState {
    pub markdown: String,
    pub read_at: Instant,
}

impl LiveState {
    /// Whether the window is still as read: the app has an event feed and sent nothing since.
    pub async fn still_current(&self, platform: &dyn Platform, pid: u32) -> bool {
        platform
            .app_activity(pid)
            .await
            .is_some_and(|a| a.events > 0 && a.last.is_some_and(|t| t <= self.read_at))
    }
}

#[derive(Debug, Clone)]
pub struct Postcondition {
    /// The recorded change, each line's gain or loss.
    recorded: BTreeMap<String, i64>,
    /// How often the recorded after-state shows each line.
    recorded_after: HashMap<String, i64>,
    reading: Reading,
}

impl Postcondition {
    /// The recorded change of the turn in `turn_dir`, read as `reading` says; None when it
    /// recorded no states or no change.
    pub fn of_turn(turn_dir: &Path, reading: Reading) -> Option<Postcondition> {
        use crate::trajectory::read::{State, state_markdown};
        let before = state_markdown(turn_dir, State::Before)?;
        let after = state_markdown(turn_dir, State::After)?;
        Self::between(&before, &after, reading)
    }

    pub fn between(before: &str, after: &str, mut reading: Reading) -> Option<Postcondition> {
        if reading.other_driver {
            reading.valued_roles = Some(
                before
                    .lines()
                    .chain(after.lines())
                    .filter(|l| l.contains(" value="))
                    .filter_map(|l| markdown::parse(&normalize(l)).into_iter().next())
                    .map(|l| role_key(&l.role))
                    .collect(),
            );
        }
        if reading.other_driver {
            // Roles the recording names with a readable name and no value: their text.
            reading.text_named_roles = joined_continuations(before)
                .iter()
                .chain(joined_continuations(after).iter())
                .filter(|l| !l.contains(" value="))
                .filter_map(|l| markdown::parse(&normalize(l)).into_iter().next())
                .filter(|l| !l.name.is_empty() && TEXT_ROLES.contains(&role_key(&l.role).as_str()))
                .map(|l| role_key(&l.role))
                .collect();
        }
        let after = reading.counts(after, true);
        let recorded = delta(&reading.counts(before, true), &after);
        (!recorded.is_empty()).then_some(Postcondition {
            recorded,
            recorded_after: after.into_iter().collect(),
            reading,
        })
    }

    /// The recorded change this reading can check. Another driver's recording shows parts
    /// of the app cua's tree does not (a closed menu's items, a hidden toolbar): a recorded
    /// loss of a line the live window did not show before, and the gain that took its
    /// place, cannot be seen either way here and are left out; everything else is checked.
    fn checkable(&self, live_before: &Counts) -> BTreeMap<String, i64> {
        if !self.reading.other_driver {
            return self.recorded.clone();
        }
        let mut unseen: Vec<(&String, i64)> = self
            .recorded
            .iter()
            .filter(|(line, want)| **want < 0 && live_before.get(*line).copied().unwrap_or(0) == 0)
            .map(|(line, _)| (line, 1))
            .collect();
        let mut left_out: Vec<String> = unseen.iter().map(|(l, _)| (*l).clone()).collect();
        for (line, &want) in &self.recorded {
            if want > 0 && take_partner(line, &mut unseen).is_some() {
                left_out.push(line.clone());
            }
        }
        self.recorded
            .iter()
            .filter(|(line, _)| !left_out.contains(line))
            .map(|(l, d)| (l.clone(), *d))
            .collect()
    }

    /// How the change from `live_before` to `live_after` differs from the recorded one,
    /// each difference as a sentence naming the element; empty when it is the same.
    fn differences(&self, live_before: &Counts, live_after: &Counts) -> Vec<String> {
        let recorded = self.checkable(live_before);
        let live = delta(live_before, live_after);
        let got = |line: &str| live.get(line).copied().unwrap_or(0);
        // A gained line the live window already showed as often as the recording ends with
        // (a list that shows one of several identical rows: a second "7×6 = 42" in GTK 4's
        // calculator history) is the recorded state, not a missing change, once the turn
        // made its own change: another recorded line changed exactly as recorded.
        let own = recorded.iter().any(|(line, &want)| got(line) == want);
        let already_shown = |line: &String, want: i64| {
            own && want > 0
                && got(line) == 0
                && live_after.get(line).copied().unwrap_or(0)
                    >= self.recorded_after.get(line).copied().unwrap_or(i64::MAX)
        };
        let mut unrecorded: Vec<(&String, i64)> = live
            .iter()
            .filter(|(line, _)| !recorded.contains_key(*line))
            .map(|(line, &d)| (line, d))
            .collect();
        // Recorded losses that did not happen: the element may still show its old line.
        let mut unchanged: Vec<(&String, i64)> = self
            .recorded
            .iter()
            .filter(|(line, want)| **want < 0 && got(line) == 0)
            .map(|(line, _)| (line, 1))
            .collect();
        // First the gains that did not show, each with what stands in its place: a line
        // the recording never had (the same element showing something else), or its old
        // line, still there.
        let mut out = Vec::new();
        let mut paired_losses: Vec<&String> = Vec::new();
        for (line, &want) in &recorded {
            if want <= 0 || got(line) > 0 || already_shown(line, want) {
                continue;
            }
            if let Some(shown) = take_partner(line, &mut unrecorded) {
                let same_moment = self
                    .reading
                    .moments
                    .iter()
                    .any(|m| m.is_match(line) && m.is_match(shown));
                if same_moment {
                    continue;
                }
                out.push(format!(
                    "expected {}, the app shows {}",
                    body(line),
                    body(shown)
                ));
            } else if let Some(old) = take_partner(line, &mut unchanged) {
                paired_losses.push(old);
                out.push(format!(
                    "expected {}, the app still shows {}",
                    body(line),
                    body(old)
                ));
            } else {
                out.push(format!("expected {}, not shown", body(line)));
            }
        }
        // A recorded loss of a line the live window never showed, whose element already
        // shows its recorded end (a gain shown already, above) was the app finishing its own
        // start in the recording, not the turn: Calc laid out a button while the agent read
        // it, then showed it; a fresh Calc shows it from the first.
        let mut shown_already: Vec<(&String, i64)> = recorded
            .iter()
            .filter(|(line, want)| already_shown(line, **want))
            .map(|(line, _)| (line, 1))
            .collect();
        let never_shown = |line: &String| live_before.get(line).copied().unwrap_or(0) == 0;
        for (line, &want) in &recorded {
            let got = got(line);
            let ended_before = want < 0
                && got == 0
                && never_shown(line)
                && take_partner(line, &mut shown_already).is_some();
            let told = (want > 0 && got <= 0) || paired_losses.contains(&line) || ended_before;
            if want != got && !told {
                let shown_after = live_after.get(line).copied().unwrap_or(0);
                out.push(describe_off(body(line), want, got, shown_after));
            }
        }
        for (line, d) in unrecorded {
            // A line the recording held all through, which the live window showed only now
            // (or let go of, where the recording ends without it), ends as recorded once the
            // turn made its own change: gnome-calculator's history list, laid out with no
            // area until its first row (so not shown), is in a cua-driver recording's
            // states before and after "=".
            if own && self.ends_as_recorded(line, live_after) {
                continue;
            }
            out.push(if d > 0 {
                format!("the app also shows {} (not recorded)", body(line))
            } else {
                format!("{} went away (not recorded)", body(line))
            });
        }
        out
    }

    /// Whether the live change contradicts the recorded one, not merely lacks part of it:
    /// a line the recording did not change came or went, or a recorded line changed the
    /// other way or more often than recorded. A recorded line that has not changed (or not
    /// as often) yet may still.
    fn contradicted(&self, live_before: &Counts, live_after: &Counts) -> bool {
        let recorded = self.checkable(live_before);
        let moment = |line: &str| self.reading.moments.iter().any(|m| m.is_match(line));
        delta(live_before, live_after)
            .iter()
            .any(|(line, &got)| match recorded.get(line) {
                Some(&want) => got.signum() != want.signum() || got.abs() > want.abs(),
                None => !moment(line) && !self.ends_as_recorded(line, live_after),
            })
    }

    /// Whether the live window shows `line` as often as the recorded after-state does.
    fn ends_as_recorded(&self, line: &str, live_after: &Counts) -> bool {
        live_after.get(line).copied().unwrap_or(0)
            == self.recorded_after.get(line).copied().unwrap_or(0)
    }

    /// How the change from `before` to `after` (another run's states of the same turn)
    /// differs from the recorded one: empty when it is the same.
    pub fn differences_in(&self, before: &str, after: &str) -> Vec<String> {
        let before = self.reading.counts(before, false);
        let after = self.reading.counts(after, false);
        self.differences(&before, &after)
    }

    /// Waits (bounded by [`WAIT`]) until the change from `live_before` shows in the live
    /// window as recorded; the reading that showed it. Fails naming the differences when
    /// the app went quiet with another change, or when the time is up.
    pub async fn wait(
        &self,
        platform: &dyn Platform,
        pid: u32,
        window: &WindowInfo,
        live_before: &str,
    ) -> Result<LiveState, String> {
        let deadline = Instant::now() + WAIT;
        let live_before = self.reading.counts(live_before, false);
        let mut quiet_readings = 0;
        loop {
            let read_at = Instant::now();
            let live = crate::snapshot::window_state_json(platform, pid, window).await;
            let markdown = live["tree_markdown"].as_str().unwrap_or("");
            let live_after = self.reading.counts(markdown, false);
            let differences = self.differences(&live_before, &live_after);
            if differences.is_empty() {
                return Ok(LiveState {
                    markdown: markdown.to_string(),
                    read_at,
                });
            }
            let contradicted = self.contradicted(&live_before, &live_after);
            let event = next_event(platform, pid, read_at, deadline).await;
            quiet_readings = if event { 0 } else { quiet_readings + 1 };
            // The app changed something the recording did not and then went quiet twice
            // over: that is its answer. While what is missing may still come, wait on: with
            // nothing changed yet (GTK 4 shows a click's ~250 ms later, with no event before
            // it), or part of the change shown and the rest not yet (Gnumeric updates its
            // `Sum =` label up to ~300 ms after the cell it sums, with no event).
            if Instant::now() >= deadline || (contradicted && quiet_readings >= 2) {
                let changed = !delta(&live_before, &live_after).is_empty();
                let lead = if changed {
                    "the app's change is not the recorded one".to_string()
                } else {
                    format!(
                        "the recorded change never showed within {} s",
                        WAIT.as_secs()
                    )
                };
                return Err(format!("{lead}: {}", name(&differences)));
            }
        }
    }
}

/// Takes from `unrecorded` the gained line that stands where `expected` would: same depth
/// and role, the same name first (its value or states differ), else any name.
fn take_partner<'a>(expected: &str, unrecorded: &mut Vec<(&'a String, i64)>) -> Option<&'a String> {
    let key = |line: &str| {
        let depth = (line.len() - line.trim_start().len()) / 2;
        let parsed = markdown::parse(line).into_iter().next();
        parsed.map(|l| (depth, role_key(&l.role), l.name))
    };
    let (depth, role, name) = key(expected)?;
    let fits = |same_name: bool| {
        unrecorded.iter().position(|(line, d)| {
            *d > 0
                && key(line).is_some_and(|(d2, r2, n2)| {
                    d2 == depth && r2 == role && (!same_name || n2 == name)
                })
        })
    };
    let at = fits(true).or_else(|| fits(false))?;
    Some(unrecorded.remove(at).0)
}

/// A recorded line that changed by `got` instead of `want`, with no line in its place;
/// `shown_after` is how often the live window shows it now.
fn describe_off(line: &str, want: i64, got: i64, shown_after: i64) -> String {
    match (want > 0, got) {
        (true, g) if g <= 0 => format!("expected {line}, not shown"),
        (true, g) if want == 1 => format!("expected {line} once more, the app added it {g} times"),
        (true, g) => format!("expected {line} {want} times more, the app added it {g} times"),
        (false, g) if g < 0 => format!("expected {} of {line} to go, {} went", -want, -g),
        (false, _) if shown_after == 0 => {
            format!("expected {line} to go, the app did not show it before the turn")
        }
        (false, _) => format!("expected {line} to go, the app still shows it"),
    }
}

/// Whether the app sent an event after `since` within QUIET (before `deadline`); without
/// an event feed, sleeps POLL and says yes (read again).
async fn next_event(platform: &dyn Platform, pid: u32, since: Instant, deadline: Instant) -> bool {
    if platform
        .app_activity(pid)
        .await
        .is_none_or(|a| a.events == 0)
    {
        tokio::time::sleep(POLL).await;
        return true;
    }
    let until = (since + QUIET).max(Instant::now()).min(deadline);
    crate::platform::event_after(platform, pid, since, until).await
}

/// The first few differences, and how many more.
pub fn name(differences: &[String]) -> String {
    let mut shown: Vec<String> = differences.iter().take(NAMED).cloned().collect();
    if differences.len() > NAMED {
        shown.push(format!("and {} more", differences.len() - NAMED));
    }
    shown.join("; ")
}

mod foreign;
pub mod pixels;
#[cfg(test)]
mod tests;

use foreign::{
    FOLDED_UNNAMED, TEXT_ROLES, joined_continuations, named_by_value, without_unrecorded_value,
};
