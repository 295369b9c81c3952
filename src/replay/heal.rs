//! The healing ladder: finding a recorded element (its [`Locator`]) in a live snapshot of
//! a build that may have changed, and saying how. Each rung is tried in order and the
//! first that finds anything decides:
//!
//! 1. exact path: every step's role, name and place among its siblings (no heal), while
//!    the window shows as many elements of the element's role and name as recorded;
//! 2. role + name anywhere in the window (it moved);
//! 3. role + loose name: case, spacing and mnemonics aside, or one name holding the
//!    other's words in order (`Add` → `Add item`);
//! 4. the same name under another role (a button that became a menu item).
//!
//! An element whose name fits none of these is never pressed: the turn is refused naming
//! the nearest element it did not press. When several elements fit one rung, the recorded
//! ancestors' names, then the element's recorded neighbours on both sides, tell them apart; if a tie
//! remains, the turn fails naming every candidate, never a coin toss. Position is not used
//! to break a tie between named elements: a duplicate inserted before the recorded element
//! takes its recorded place. (Unnamed elements have nothing else: among those the nearest
//! to the recorded frame, within 40 px, is taken.)

use crate::snapshot::Snapshot;
use crate::snapshot::markdown::{self, Line};
use crate::trajectory::{Locator, PathStep};

use super::locate::same_name;

/// The rung that found an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocatorRule {
    ExactPath,
    RoleName,
    LooseName,
    SameName,
}

impl LocatorRule {
    pub fn as_str(self) -> &'static str {
        match self {
            LocatorRule::ExactPath => "exact_path",
            LocatorRule::RoleName => "role_name",
            LocatorRule::LooseName => "loose_name",
            LocatorRule::SameName => "same_name",
        }
    }
}

/// The element a locator found, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub index: usize,
    pub rule: LocatorRule,
    /// The heal, for a reader: `button "Add" → button "Add item" (name contains)`;
    /// None for an exact path.
    pub heal: Option<String>,
    /// The live element's role and name (a heal's new names).
    pub role: String,
    pub name: String,
    /// When more than one live element fitted: every candidate and what decided, for a
    /// reviewer (`2 elements fit button "Add": [3] … , [7] …; [7] chosen by its recorded
    /// neighbours`).
    pub look_alikes: Option<String>,
}

/// The recorded element's surroundings in its before-state tree, when the recording kept
/// its tree: the sibling lines just before and after it, and how many elements of its
/// role and name the window showed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbours {
    pub before: Option<(String, String)>,
    pub after: Option<(String, String)>,
    pub look_alikes: usize,
}

impl Neighbours {
    /// Element `index`'s neighbours in a tree_markdown.
    pub fn in_markdown(md: &str, index: usize) -> Neighbours {
        let lines = markdown::parse(md);
        Self::of_lines(&lines, index)
    }

    fn of_lines(lines: &[Line], index: usize) -> Neighbours {
        let Some(at) = lines.iter().position(|l| l.index == Some(index)) else {
            return Neighbours::default();
        };
        let depth = lines[at].depth;
        let key = lines[at].key();
        let look_alikes = lines
            .iter()
            .filter(|l| l.index.is_some() && l.key() == key)
            .count();
        let sibling = |mut range: Box<dyn Iterator<Item = &Line> + '_>| {
            range
                .find(|l| l.depth <= depth)
                .filter(|l| l.depth == depth)
                .map(Line::key)
        };
        Neighbours {
            before: sibling(Box::new(lines[..at].iter().rev())),
            after: sibling(Box::new(lines[at + 1..].iter())),
            look_alikes,
        }
    }

    /// Whether `live` shows both recorded neighbours beside its element (none on a side
    /// where none was recorded: being first or last is a fact too).
    fn same_as(&self, live: &Neighbours) -> bool {
        let same = |r: &Option<(String, String)>, l: &Option<(String, String)>| match (r, l) {
            (None, None) => true,
            (Some(r), Some(l)) => r.0 == l.0 && same_name(&r.1, &l.1),
            _ => false,
        };
        same(&self.before, &live.before) && same(&self.after, &live.after)
    }
}

/// A name as the loose rung compares it: lower case, mnemonic marks (`_`, `&`) and
/// trailing `:`/`…` dropped, runs of spaces as one.
fn loose(name: &str) -> String {
    let mut out = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        let mnemonic = (c == '_' || c == '&') && chars.peek().is_some_and(|n| n.is_alphanumeric());
        if !mnemonic {
            out.extend(c.to_lowercase());
        }
    }
    let words: Vec<&str> = out.split_whitespace().collect();
    words
        .join(" ")
        .trim_end_matches(['…', ':', '.'])
        .trim_end()
        .to_string()
}

/// Why `live` is loosely `recorded`'s name, if it is.
fn loose_match(recorded: &str, live: &str) -> Option<&'static str> {
    let (r, l) = (loose(recorded), loose(live));
    if r.is_empty() || l.is_empty() {
        return None;
    }
    if r == l {
        return Some("case, spacing or mnemonic");
    }
    let words = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
    let holds = |long: &[String], short: &[String]| long.windows(short.len()).any(|w| w == short);
    let (rw, lw) = (words(&r), words(&l));
    if lw.len() > rw.len() && holds(&lw, &rw) {
        Some("name contains")
    } else if rw.len() > lw.len() && holds(&rw, &lw) {
        Some("name contained")
    } else {
        None
    }
}

/// Whether an element's states say it takes input (AT-SPI's `sensitive`, a browser's
/// `enabled`).
pub fn enabled(states: &[String]) -> bool {
    states.iter().any(|s| s == "sensitive" || s == "enabled")
}

/// Why an element that was enabled when recorded is not pressed.
pub fn disabled_message(role: &str, name: &str) -> String {
    format!(
        "{} is disabled in the app (it was enabled when recorded); not pressed",
        describe(role, name)
    )
}

/// `role "name"`, as reports show an element.
pub fn describe(role: &str, name: &str) -> String {
    if name.is_empty() {
        role.to_string()
    } else {
        format!("{role} \"{name}\"")
    }
}

/// Whether a recorded locator path is the live one, step by step: role, place, and name
/// ([`same_name`]; a container's name as cua reads names today, so a class name an
/// earlier cua recorded, `AdwLeaflet`, is the unnamed container it is).
fn same_path(recorded: &[PathStep], live: &[PathStep]) -> bool {
    recorded.len() == live.len()
        && recorded.iter().zip(live).all(|(r, l)| {
            r.role == l.role
                && r.index == l.index
                && (same_name(&r.name, &l.name) || crate::names::readable(&r.name) == l.name)
        })
}

/// A snapshot seen by the ladder: its elements' nodes, paths and places.
struct Live<'a> {
    snapshot: &'a Snapshot,
}

impl Live<'_> {
    fn node(&self, i: usize) -> &crate::platform::AxNode {
        &self.snapshot.tree.nodes[self.snapshot.elements[i]]
    }
    fn count(&self) -> usize {
        self.snapshot.elements.len()
    }
    fn path(&self, i: usize) -> Vec<PathStep> {
        Locator::of(&self.snapshot.tree, self.snapshot.elements[i], i).path
    }
    fn ancestor_names(&self, i: usize) -> Vec<&str> {
        let nodes = &self.snapshot.tree.nodes;
        let mut names = Vec::new();
        let mut at = nodes[self.snapshot.elements[i]].parent;
        while let Some(p) = at {
            names.push(nodes[p].name.as_str());
            at = nodes[p].parent;
        }
        names
    }
    fn distance(&self, i: usize, loc: &Locator) -> i64 {
        let (Some(f), Some(r)) = (self.node(i).frame, loc.frame) else {
            return i64::MAX / 2;
        };
        let ((x, y), (cx, cy)) = (f.center(), r.center());
        (x as i64 - cx as i64).abs() + (y as i64 - cy as i64).abs()
    }
    fn brief(&self, i: usize) -> String {
        let n = self.node(i);
        let at = n
            .frame
            .map(|f| format!(" at ({}, {})", f.x, f.y))
            .unwrap_or_default();
        format!("[{i}] {}{at}", describe(&n.role, &n.name))
    }
}

/// Finds the element a locator designates in `snapshot`, climbing the ladder; the error
/// names what was not pressed and why.
pub fn find(
    snapshot: &Snapshot,
    loc: &Locator,
    neighbours: Option<&Neighbours>,
) -> Result<Found, String> {
    let live = Live { snapshot };
    let found = |index: usize, rule: LocatorRule, why: Option<&str>, look_alikes| {
        let n = live.node(index);
        let heal = match rule {
            LocatorRule::ExactPath => None,
            LocatorRule::RoleName => Some(format!(
                "{} found by role and name (its place in the window changed)",
                describe(&loc.role, &loc.name)
            )),
            _ => Some(format!(
                "{} → {} ({})",
                describe(&loc.role, &loc.name),
                describe(&n.role, &n.name),
                why.unwrap_or("")
            )),
        };
        Found {
            index,
            rule,
            heal,
            role: n.role.clone(),
            name: n.name.clone(),
            look_alikes,
        }
    };
    // A path's sibling places are positions: with look-alikes added or gone, the element
    // in the recorded place may be another one (a duplicate inserted before it).
    let look_alikes: Vec<usize> = (0..live.count())
        .filter(|&i| live.node(i).role == loc.role && same_name(&loc.name, &live.node(i).name))
        .collect();
    let places_hold = neighbours.is_none_or(|n| n.look_alikes == look_alikes.len());
    if loc.path.len() > 1 && places_hold {
        let exact = (0..live.count()).find(|&i| {
            let n = live.node(i);
            n.role == loc.role
                && same_name(&loc.name, &n.name)
                && same_path(&loc.path, &live.path(i))
        });
        if let Some(i) = exact {
            let choice = choice(
                &live,
                loc,
                &look_alikes,
                i,
                "its recorded place (the exact path)",
            );
            return Ok(found(i, LocatorRule::ExactPath, None, choice));
        }
    }
    for rule in [
        LocatorRule::RoleName,
        LocatorRule::LooseName,
        LocatorRule::SameName,
    ] {
        let candidates: Vec<(usize, &'static str)> = (0..live.count())
            .filter_map(|i| fits(rule, live.node(i), loc).map(|why| (i, why)))
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let (pick, decided_by) = tell_apart(&live, loc, neighbours, &candidates)?;
        let why = candidates.iter().find(|(i, _)| *i == pick).map(|(_, w)| *w);
        let all: Vec<usize> = candidates.iter().map(|(i, _)| *i).collect();
        let choice = choice(&live, loc, &all, pick, decided_by);
        return Ok(found(pick, rule, why, choice));
    }
    Err(not_found(&live, loc))
}

/// Whether live element `n` fits a rung of the ladder for `loc`, and why.
fn fits(rule: LocatorRule, n: &crate::platform::AxNode, loc: &Locator) -> Option<&'static str> {
    rung_fits(rule, (&loc.role, &loc.name), (&n.role, &n.name))
}

/// Whether a live (role, name) fits a rung of the ladder for a recorded (role, name), and
/// why: the rule every element the ladder climbs to is held to, a window's or a browser
/// tab's (`replay::browser`). The exact path is no rung of names.
pub fn rung_fits(
    rule: LocatorRule,
    (role, name): (&str, &str),
    (live_role, live_name): (&str, &str),
) -> Option<&'static str> {
    match rule {
        LocatorRule::ExactPath => None,
        LocatorRule::RoleName => {
            (live_role == role && same_name(name, live_name)).then_some("role and name")
        }
        LocatorRule::LooseName => (live_role == role)
            .then(|| loose_match(name, live_name))
            .flatten(),
        LocatorRule::SameName => {
            (!name.is_empty() && live_role != role && same_name(name, live_name))
                .then_some("same name, another role")
        }
    }
}

/// The note naming every candidate and what decided, when there was more than one.
fn choice(
    live: &Live,
    loc: &Locator,
    candidates: &[usize],
    pick: usize,
    decided_by: &str,
) -> Option<String> {
    (candidates.len() > 1).then(|| {
        format!(
            "{} elements fit {}: {}; [{pick}] chosen by {decided_by}",
            candidates.len(),
            describe(&loc.role, &loc.name),
            candidates
                .iter()
                .map(|&i| live.brief(i))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// One of several candidates, told apart by the recorded ancestors' names, then the
/// recorded neighbours; unnamed elements by the nearest frame. A tie is an error naming
/// every candidate. With the pick, what decided it.
fn tell_apart(
    live: &Live,
    loc: &Locator,
    neighbours: Option<&Neighbours>,
    candidates: &[(usize, &str)],
) -> Result<(usize, &'static str), String> {
    let mut left: Vec<usize> = candidates.iter().map(|(i, _)| *i).collect();
    let recorded_ancestors: Vec<&str> = loc.path[..loc.path.len().saturating_sub(1)]
        .iter()
        .map(|s| s.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let keep_best = |left: &mut Vec<usize>, score: &dyn Fn(usize) -> usize| {
        let best = left.iter().map(|&i| score(i)).max().unwrap_or(0);
        left.retain(|&i| score(i) == best);
    };
    let mut decided_by = "being the only one";
    keep_best(&mut left, &|i| {
        let names = live.ancestor_names(i);
        recorded_ancestors
            .iter()
            .filter(|a| names.contains(a))
            .count()
    });
    if left.len() == 1 && candidates.len() > 1 {
        decided_by = "its recorded ancestors' names";
    }
    if let (Some(recorded), true) = (neighbours, left.len() > 1) {
        // Only a candidate between both recorded neighbours is told apart by them: with
        // one side each, a look-alike inserted beside the element has as good a claim.
        // Element i is line [i] of the snapshot's own Markdown.
        let lines = markdown::parse(&crate::snapshot::render_markdown(&live.snapshot.tree).0);
        let between: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&i| recorded.same_as(&Neighbours::of_lines(&lines, i)))
            .collect();
        if between.len() == 1 {
            left = between;
            decided_by = "its recorded neighbours (the elements just before and after it)";
        }
    }
    if left.len() > 1 && loc.name.is_empty() {
        let near: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&i| live.distance(i, loc) < 40)
            .collect();
        if let Some(&nearest) = near.iter().min_by_key(|&&i| live.distance(i, loc)) {
            left = vec![nearest];
            decided_by = "the nearest to its recorded place (it has no name)";
        }
    }
    match left.as_slice() {
        [one] => Ok((*one, decided_by)),
        _ => Err(format!(
            "{} elements fit {} and nothing recorded tells them apart: {}; none pressed",
            left.len(),
            describe(&loc.role, &loc.name),
            left.iter()
                .map(|&i| live.brief(i))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The refusal when no rung finds anything: the nearest element of the recorded role
/// (of any role when none has it), which was not pressed.
fn not_found(live: &Live, loc: &Locator) -> String {
    // Some toolkits (Qt) drop a disabled control from the elements (it offers no
    // action): it is still the recorded element, and the reason is that it is disabled.
    let disabled = live
        .snapshot
        .tree
        .nodes
        .iter()
        .find(|n| n.role == loc.role && same_name(&loc.name, &n.name) && !enabled(&n.states));
    if let (Some(n), true) = (disabled, enabled(&loc.states)) {
        return disabled_message(&n.role, &n.name);
    }
    let same_role: Vec<usize> = (0..live.count())
        .filter(|&i| live.node(i).role == loc.role)
        .collect();
    let pool: Vec<usize> = if same_role.is_empty() {
        (0..live.count()).collect()
    } else {
        same_role
    };
    let wanted = describe(&loc.role, &loc.name);
    if pool.is_empty() {
        return format!("no {wanted}; the window has no elements");
    }
    if loc.frame.is_none() {
        // No recorded place to be near to: say what is there instead.
        let shown: Vec<String> = pool
            .iter()
            .take(3)
            .map(|&i| describe(&live.node(i).role, &live.node(i).name))
            .collect();
        let more = match pool.len().saturating_sub(3) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        return format!(
            "no {wanted}; the window has {}{more} (none pressed)",
            shown.join(", ")
        );
    }
    let nearest = pool.iter().copied().min_by_key(|&i| live.distance(i, loc));
    let n = live.node(nearest.unwrap_or(pool[0]));
    format!(
        "no {wanted}; nearest is {} (not pressed)",
        describe(&n.role, &n.name)
    )
}

#[cfg(test)]
mod tests;
