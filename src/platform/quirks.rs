//! What an app's toolkit is known to do differently, as facts the tools act on
//! ([`AppQuirks`]). The backend knows its toolkits (Linux: from the AT-SPI toolkit name and
//! version, in `linux/quirks.rs`) and fills these in; nothing above the trait names a
//! toolkit.

/// When an app drops background (synthetic) pointer events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointerCaveat {
    /// Always: why.
    Always(&'static str),
    /// Only while the real pointer is not over its window: why.
    UnlessPointerOver(&'static str),
}

/// An app's known departures from what the tools expect. The default: none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppQuirks {
    /// How the app names its toolkit and version ("GTK 4.8.3"), for messages.
    pub toolkit: Option<String>,
    /// Background key events do nothing: why.
    pub ignores_background_keys: Option<&'static str>,
    /// Background pointer events do nothing, always or while the pointer is elsewhere.
    pub ignores_background_pointer: Option<PointerCaveat>,
    /// Its text entries do not expose their text, so an insert cannot be read back.
    pub hides_entry_text: bool,
    /// A value or selection set through the accessibility interface is not announced to
    /// the app's own scripts (a web page never learns of it).
    pub silent_value_set: bool,
    /// It shows web pages, whose trees are built after the window maps.
    pub web_engine: bool,
    /// Its effects show up to this long after the input that caused them, with no event
    /// before (GTK 4.8: a click's ~250 ms later). Input sent sooner, while one is still
    /// on its way, can vanish, and a state read then shows the previous action's effect
    /// late: the next action to such an app waits (bounded) for the previous effect.
    pub late_effects: Option<std::time::Duration>,
    /// How long after an input its effect can take to show in the app's accessibility
    /// tree, on a loaded machine: a click's read-back waits this long at most when the
    /// caller gave no `settle_ms`, and says `no_change` after. None: not known (no read-back).
    pub effect_latency: Option<std::time::Duration>,
    /// Its window shows an effect some time after its tree does (Swing repaints on its
    /// event thread once the listeners have run, after holding a pressed button 68 ms): a
    /// turn's screenshot waits up to this long for a repaint after its tree was read.
    pub repaints_after_tree: Option<std::time::Duration>,
}

impl AppQuirks {
    /// The toolkit's name for messages, or "the app" when it gave none.
    pub fn toolkit_name(&self) -> &str {
        self.toolkit.as_deref().unwrap_or("the app")
    }
}
