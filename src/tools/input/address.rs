//! Where an input tool acts and how: [`Address`], the arguments every addressed input tool
//! shares (the process, its window, an element or a point, the delivery mode and the wait
//! for the effect). Each tool flattens it into its own arguments, so these fields, their
//! schema and their docs are written once, and checked once ([`Address::check`]).
//! `element_token` is not here: dispatch turns it into `window_id` + `element_index`
//! before a tool runs.

use super::*;

/// Where an input action goes, and how it is delivered.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Address {
    /// Target process id.
    pub pid: u32,
    /// Window of element_index (required with it) or of x/y; default the pid's frontmost window.
    pub window_id: Option<u64>,
    /// Element index from the last get_window_state of (pid, window_id): the action goes through the accessibility API.
    pub element_index: Option<usize>,
    /// Snapshot element_index comes from (default: the latest); refused if that element changed since.
    pub snapshot_id: Option<String>,
    /// X in window-local screenshot pixels (with y).
    pub x: Option<f64>,
    /// Y in window-local screenshot pixels (with x).
    pub y: Option<f64>,
    /// background (default): never changes focus, stacking or the pointer; foreground: real input, then restores.
    pub delivery_mode: Option<Delivery>,
    /// Wait up to this many milliseconds for the effect to show before returning. Default 0 (a click: until the window changes, at most the toolkit's latency, then `no_change`).
    pub settle_ms: Option<u64>,
}

impl Address {
    /// A window of a process, nothing in it addressed (drag's coordinates are its own).
    pub(super) fn of_window(
        pid: u32,
        window_id: Option<u64>,
        delivery_mode: Option<Delivery>,
        settle_ms: Option<u64>,
    ) -> Self {
        Address {
            pid,
            window_id,
            delivery_mode,
            settle_ms,
            ..Address::default()
        }
    }

    /// An element of a window's snapshot (set_value, which takes nothing else).
    pub(super) fn of_element(
        pid: u32,
        window_id: u64,
        element_index: usize,
        snapshot_id: Option<String>,
        settle_ms: Option<u64>,
    ) -> Self {
        Address {
            pid,
            window_id: Some(window_id),
            element_index: Some(element_index),
            snapshot_id,
            settle_ms,
            ..Address::default()
        }
    }

    /// The checks that need no desktop: exclusive and paired fields, their ranges.
    pub(super) fn check(&self) -> Result<(), ToolError> {
        if self.element_index.is_some() && (self.x.is_some() || self.y.is_some()) {
            return Err(ToolError::invalid(
                "give either `element_index` or `x`/`y`, not both",
            ));
        }
        match (self.x, self.y) {
            (Some(_), None) => {
                return Err(ToolError::invalid("`y`: missing (x and y go together)"));
            }
            (None, Some(_)) => {
                return Err(ToolError::invalid("`x`: missing (x and y go together)"));
            }
            _ => {}
        }
        for (name, v) in [("x", self.x), ("y", self.y)] {
            if let Some(v) = v.filter(|v| !v.is_finite() || *v < 0.0) {
                return Err(ToolError::invalid(format!(
                    "`{name}`: must be a non-negative number, got {v}"
                )));
            }
        }
        if self.element_index.is_some() && self.window_id.is_none() {
            return Err(ToolError::invalid(
                "`window_id`: required with `element_index` (indices belong to one window's snapshot)",
            ));
        }
        self.element()?;
        check_settle(self.settle_ms).map(|_| ())
    }

    /// The element `element_index` and `snapshot_id` name (a snapshot id alone is a mistake).
    pub(super) fn element(&self) -> Result<Option<ElementRef<'_>>, ToolError> {
        element_ref(self.element_index, self.snapshot_id.as_deref())
    }

    pub(super) fn mode(&self) -> Delivery {
        self.delivery_mode.unwrap_or(Delivery::Background)
    }

    /// Whether a point (x, y) is given.
    pub(super) fn has_point(&self) -> bool {
        self.x.is_some()
    }
}

/// `settle_ms`, checked: at most [`MAX_SETTLE_MS`], 0 when not given.
pub(super) fn check_settle(settle_ms: Option<u64>) -> Result<u64, ToolError> {
    let s = settle_ms.unwrap_or(0);
    if s > MAX_SETTLE_MS {
        return Err(ToolError::invalid(format!(
            "`settle_ms`: at most {MAX_SETTLE_MS}, got {s}"
        )));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Address says the shared words (dispatch::SHARED_ARGUMENTS), so tools/list leaves
    /// them out of every input tool's schema and says them once.
    #[test]
    fn the_shared_arguments_are_said_in_the_shared_words() {
        let schema = crate::dispatch::schema_of::<Address>();
        for name in [
            "pid",
            "window_id",
            "element_index",
            "snapshot_id",
            "x",
            "y",
            "delivery_mode",
            "settle_ms",
        ] {
            let shared = crate::dispatch::SHARED_ARGUMENTS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, d)| *d);
            assert_eq!(
                schema["properties"][name]["description"].as_str(),
                shared,
                "`{name}`"
            );
        }
    }
}
