//! The toolkits this backend has met, and what each does differently ([`AppQuirks`]),
//! from the AT-SPI toolkit name and version: "gtk 3.24.38" (GTK 3 spells it in lower
//! case), "GTK 4.8.3", "Qt 5.15.8", "Chromium 1.0", "Gecko 153.7.0". Each fact was
//! measured on real apps: tests/toolkits.rs (whose matrix fails when a route that does
//! nothing is not called out, and when one that worked was) and tests/foreground.rs.

use crate::platform::{AppQuirks, PointerCaveat};

/// The AT-SPI toolkit name of Java's accessibility bridge (Swing, AWT).
pub const JAVA_BRIDGE: &str = "J2SE-access-bridge";

/// AT-SPI toolkit names of web engines, whose windows show a page.
pub const WEB_ENGINES: &[&str] = &["Chromium", "Gecko"];

/// - GTK 4 reads keys and pointer through XInput2 and ignores synthetic events of both;
///   its entries do not expose their text.
/// - GTK 3 (with the core device events `launch_app` asks for) takes synthetic keys, and
///   synthetic pointer events only while the real pointer is over its window: with the
///   pointer elsewhere a background click at a point with no element, a drag or a wheel
///   scroll did nothing.
/// - Qt, Chromium and Firefox take both, wherever the pointer is.
/// - Firefox (Gecko) sets a web number input through the Value interface, and a
///   `<select>`'s option through Selection, without firing the page's `input` / `change`
///   events (the conformance fixture's journal showed nothing).
/// - Chromium and Gecko show web pages.
/// - GTK 4 shows an effect ~250 ms after the input (a click's; with no event before it).
/// - Every toolkit shows an effect in its tree within a bound (`effect_latency`).
/// - Swing (Java's bridge) repaints an effect after its tree shows it.
pub fn of_toolkit(toolkit: &str) -> AppQuirks {
    let lower = toolkit.to_ascii_lowercase();
    let gtk = |major: &str| lower.starts_with(&format!("gtk {major}."));
    let web = WEB_ENGINES.iter().any(|w| toolkit.starts_with(w));
    AppQuirks {
        toolkit: Some(toolkit.to_string()),
        ignores_background_keys: gtk("4")
            .then_some("ignores synthetic key events (it reads XInput2)"),
        ignores_background_pointer: if gtk("4") {
            Some(PointerCaveat::Always(
                "ignores synthetic pointer events (it reads XInput2)",
            ))
        } else if gtk("3") {
            Some(PointerCaveat::UnlessPointerOver(
                "ignores synthetic pointer events while the real pointer is not over its window",
            ))
        } else {
            None
        },
        hides_entry_text: gtk("4"),
        silent_value_set: lower.starts_with("gecko"),
        web_engine: web,
        // Measured: ~250 ms from a click to its effect; 400 ms bounds it with a margin.
        late_effects: gtk("4").then_some(std::time::Duration::from_millis(400)),
        // A bound, not a wait: a read-back returns once the effect shows. Measured under
        // the full test suite on 2 cores: GTK 3 and Qt show a click's effect within
        // ~100 ms, GTK 4 ~250-450 ms, browsers' trees follow their pages within ~600 ms.
        effect_latency: Some(std::time::Duration::from_millis(if gtk("4") || web {
            1000
        } else {
            500
        })),
        // Measured: a Swing button's action left the tree at "Total: 3" and the window,
        // a few ms later, still drawing "Total: 0" (1 screenshot in 8). Under one busy
        // core the repaint came over 200 ms after the tree (2 turns in 10 showed Add
        // still pressed): the wait is only paid by a turn no repaint follows and no next
        // action cuts short.
        repaints_after_tree: toolkit
            .starts_with(JAVA_BRIDGE)
            .then_some(std::time::Duration::from_millis(1000)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_toolkit_gets_the_quirks_measured_on_it() {
        let gtk3 = of_toolkit("gtk 3.24.38");
        assert!(matches!(
            gtk3.ignores_background_pointer,
            Some(PointerCaveat::UnlessPointerOver(_))
        ));
        assert!(gtk3.ignores_background_keys.is_none() && !gtk3.hides_entry_text);
        let gtk4 = of_toolkit("GTK 4.8.3");
        assert!(matches!(
            gtk4.ignores_background_pointer,
            Some(PointerCaveat::Always(_))
        ));
        assert!(gtk4.ignores_background_keys.is_some() && gtk4.hides_entry_text);
        for other in ["Qt 5.15.8", "Qt 6.4.2", "Chromium 1.0", "Gecko 153.7.0"] {
            let q = of_toolkit(other);
            assert!(q.ignores_background_pointer.is_none(), "{other}");
            assert!(q.ignores_background_keys.is_none(), "{other}");
        }
        assert!(of_toolkit("Gecko 153.7.0").silent_value_set);
        assert!(!of_toolkit("Chromium 1.0").silent_value_set);
        assert!(of_toolkit("Chromium 1.0").web_engine && of_toolkit("Gecko 153.7.0").web_engine);
        assert!(!of_toolkit("Qt 6.4.2").web_engine);
        assert_eq!(of_toolkit("Qt 6.4.2").toolkit_name(), "Qt 6.4.2");
    }
}
