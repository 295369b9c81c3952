//! Delivery: the route names of raw input, which toolkits ignore synthetic events (and
//! the escalation that says so), and the event sequences of clicks and modifiers.

use super::*;

/// The route name of raw input events in this delivery mode.
pub(super) fn event_path(mode: Delivery) -> Route {
    match mode {
        Delivery::Foreground => Route::ForegroundEvent,
        Delivery::Background => Route::BackgroundEvent,
    }
}

pub(super) fn delivery(mode: Option<Delivery>) -> Delivery {
    mode.unwrap_or(Delivery::Background)
}

/// What a background (synthetic, XSendEvent) input consists of.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Synthetic {
    /// Pointer events to this window.
    Pointer(u64),
    Keys,
}

/// Why a toolkit ignores synthetic events of that kind, if it does; measured in
/// tests/toolkits.rs (whose matrix fails when a route that does nothing is not called out,
/// and when one that worked was) and tests/foreground.rs:
/// - GTK 4 reads keys and pointer through XInput2 and ignores both.
/// - GTK 3 (with the core device events `launch_app` asks for) takes synthetic keys, and
///   synthetic pointer events only while the real pointer is over its window: with the
///   pointer elsewhere a background click at a point with no element, a drag or a wheel
///   scroll did nothing. `pointer_over` is asked only then (an X round trip per window
///   level under the pointer).
/// - Qt, Chromium and Firefox take both, wherever the pointer is.
///
/// `toolkit` is the app's AT-SPI toolkit name and version: "gtk 3.24.38" (GTK 3 spells it
/// in lower case), "GTK 4.8.3", "Qt 5.15.8", "Chromium 1.0", "Gecko 153.7.0".
pub(super) async fn ignores_synthetic(
    toolkit: &str,
    kind: Synthetic,
    pointer_over: impl std::future::Future<Output = bool>,
) -> Option<&'static str> {
    let toolkit = toolkit.to_ascii_lowercase();
    let gtk = |major: &str| toolkit.starts_with(&format!("gtk {major}."));
    match kind {
        Synthetic::Keys if gtk("4") => Some("ignores synthetic key events (it reads XInput2)"),
        Synthetic::Pointer(_) if gtk("4") => {
            Some("ignores synthetic pointer events (it reads XInput2)")
        }
        Synthetic::Pointer(_) if gtk("3") && !pointer_over.await => {
            Some("ignores synthetic pointer events while the real pointer is not over its window")
        }
        _ => None,
    }
}

/// The escalation a background input of `kind` needs on this app: foreground, when its
/// toolkit ignores synthetic events of that kind; none for other toolkits and for apps
/// with no accessibility at all (X clients that read core events).
pub(super) async fn synthetic_caveat(
    platform: &dyn Platform,
    pid: u32,
    kind: Synthetic,
) -> Option<(&'static str, String)> {
    let toolkit = platform.toolkit(pid).await?;
    let pointer_over = async {
        match kind {
            Synthetic::Pointer(window) => platform.pointer_over(window).await,
            Synthetic::Keys => false,
        }
    };
    let why = ignores_synthetic(&toolkit, kind, pointer_over).await?;
    Some((
        "foreground",
        format!("{toolkit} {why}; address an element, or use delivery_mode foreground"),
    ))
}

pub(super) fn mods_down(mods: &[Modifier]) -> Vec<InputEvent> {
    mods.iter()
        .map(|m| InputEvent::Key {
            keysym: m.keysym(),
            down: true,
        })
        .collect()
}

pub(super) fn mods_up(mods: &[Modifier]) -> Vec<InputEvent> {
    mods.iter()
        .rev()
        .map(|m| InputEvent::Key {
            keysym: m.keysym(),
            down: false,
        })
        .collect()
}

/// How long a click holds its button down, as a person's does: GTK 4 dropped half the
/// foreground clicks on a check box whose press and release reached it together (xdotool
/// with no delay between them did the same; with 12 ms, none).
pub(super) const BUTTON_HOLD: Duration = Duration::from_millis(30);

pub(super) fn click_events(
    x: i32,
    y: i32,
    button: u8,
    count: u8,
    mods: &[Modifier],
) -> Vec<InputEvent> {
    let mut ev = vec![InputEvent::Move { x, y }];
    ev.extend(mods_down(mods));
    for i in 0..count {
        if i > 0 {
            ev.push(InputEvent::Pause(Duration::from_millis(60)));
        }
        ev.push(InputEvent::Button {
            x,
            y,
            button,
            down: true,
        });
        ev.push(InputEvent::Pause(BUTTON_HOLD));
        ev.push(InputEvent::Button {
            x,
            y,
            button,
            down: false,
        });
    }
    ev.extend(mods_up(mods));
    ev
}

#[cfg(test)]
mod synthetic_tests {
    use super::{Synthetic, ignores_synthetic};

    #[test]
    fn gtk3_takes_synthetic_pointer_events_only_under_the_real_pointer() {
        let ignores =
            |toolkit: &str, kind, pointer_over: bool| {
                futures::executor::block_on(ignores_synthetic(toolkit, kind, async move {
                    pointer_over
                }))
                .is_some()
            };
        let pointer = Synthetic::Pointer(1);
        assert!(ignores("gtk 3.24.38", pointer, false));
        assert!(!ignores("gtk 3.24.38", pointer, true));
        assert!(!ignores("gtk 3.24.38", Synthetic::Keys, false));
        assert!(ignores("GTK 4.8.3", pointer, true));
        assert!(ignores("GTK 4.8.3", Synthetic::Keys, true));
        for other in ["Qt 5.15.8", "Qt 6.4.2", "Chromium 1.0", "Gecko 153.7.0"] {
            assert!(!ignores(other, pointer, false), "{other}");
            assert!(!ignores(other, Synthetic::Keys, false), "{other}");
        }
    }
}
