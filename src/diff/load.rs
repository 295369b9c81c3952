//! Reading the two trajectories for a diff: each turn folder through the one trajectory
//! reader, with what its action designated, and its screenshots decoded.

use super::*;

/// One turn folder, read.
pub(super) struct LoadedTurn {
    pub(super) number: u32,
    pub(super) dir: PathBuf,
    pub(super) action: crate::trajectory::Action,
    /// The post-action window state (`app_state.json`, or the reference driver's
    /// `after_state.json`).
    pub(super) state: Option<Value>,
    pub(super) designated: Designated,
    /// The roles of the element its action targeted and of that element's ancestors, in
    /// its before-state ([`crate::snapshot::incidental::lineage`]).
    pub(super) target_lineage: Vec<String>,
    /// The frames of its after-state's busy widgets and incidental elements, masked in its
    /// screenshot (empty when the config compares them).
    pub(super) busy_frames: Vec<Rect>,
}

impl LoadedTurn {
    /// Leaves its after-state's busy widgets out of the comparison ([`crate::snapshot::busy`]).
    pub(super) fn without_busy(&mut self) {
        if let Some(state) = &self.state {
            self.busy_frames = crate::snapshot::busy::frames(state);
            self.state = Some(crate::snapshot::busy::without_busy(state));
        }
    }

    /// Leaves out what is under its after-state's incidental regions, unless its action
    /// targets one ([`crate::snapshot::incidental`]); their elements' frames are masked.
    pub(super) fn without_incidental(&mut self, rules: &crate::snapshot::incidental::Incidental) {
        let Some(state) = &self.state else {
            return;
        };
        let (state, masked) = rules.for_lineage(&self.target_lineage).without(state);
        self.state = Some(state);
        self.busy_frames.extend(masked);
    }

    /// How the run settled this turn, when it settled each turn.
    pub(super) fn settle(&self) -> Option<crate::trajectory::Settle> {
        self.action.settle.clone()
    }
}

/// What a turn's action designated beyond its literal arguments.
#[derive(Debug, Default)]
pub(super) struct Designated {
    /// For an element turn without a locator: `role "name"` of its line in the
    /// before-state's tree_markdown (what its index stood for).
    pub(super) element: Option<String>,
    /// Where its points fell.
    pub(super) places: Vec<points::Place>,
}

/// Reads a trajectory's turns through [`crate::trajectory::read`]; every problem goes to
/// `problems`, named by trajectory and file.
pub(super) fn load(dir: &Path, label: &str, problems: &mut Vec<String>) -> Vec<LoadedTurn> {
    use crate::trajectory::read;
    let turns = match read::turn_folders(dir) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("{label} {e}"));
            return Vec::new();
        }
    };
    turns
        .into_iter()
        .filter_map(|t| {
            let action = read::action(&t.dir)
                .map_err(|e| problems.push(format!("{label} {e}")))
                .ok()?;
            let state = read::state(&t.dir, read::State::After)
                .map_err(|e| problems.push(format!("{label} {e}")))
                .ok()
                .flatten();
            let before = read::state(&t.dir, read::State::Before).ok().flatten();
            let before_tree = before.as_ref().and_then(|b| b["tree_markdown"].as_str());
            let frames = before
                .as_ref()
                .map(crate::trajectory::points::frames_of)
                .unwrap_or_default();
            let target = crate::trajectory::points::target_index(&action, &frames);
            let target_lineage = crate::snapshot::incidental::lineage(before_tree, target);
            let designated = Designated {
                element: markdown_element(before_tree, &action),
                places: points::places(&t.dir, before.as_ref(), &frames, &action, element_words),
            };
            Some(LoadedTurn {
                number: t.number,
                dir: t.dir,
                action,
                state,
                designated,
                target_lineage,
                busy_frames: Vec::new(),
            })
        })
        .collect()
}

/// `role "name"` of an element turn's line in its before-state, when it has no locator.
pub(super) fn markdown_element(
    before_tree: Option<&str>,
    action: &crate::trajectory::Action,
) -> Option<String> {
    use crate::snapshot::markdown;
    if action.target.is_some() {
        return None;
    }
    let index = action.element_index()? as usize;
    let lines = markdown::parse(before_tree?);
    let (line, _) = markdown::element_with_ancestors(&lines, index)?;
    Some(element_words(&line.role, &line.name))
}

/// An element as both drivers can say it: the role in one vocabulary, and the name.
pub(super) fn element_words(role: &str, name: &str) -> String {
    format!("{} {name:?}", crate::snapshot::markdown::role_key(role))
}

pub(super) fn decode_png(path: &Path) -> Result<(u32, u32, Vec<u8>), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .map_err(|e| format!("{}: unreadable PNG: {e}", path.display()))?;
    let rgba = img.to_rgba8();
    Ok((rgba.width(), rgba.height(), rgba.into_raw()))
}
