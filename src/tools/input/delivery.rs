//! Delivery: the route names of raw input, which toolkits ignore synthetic events (and
//! the escalation that says so), and the event sequences of clicks and modifiers.

use super::*;
use crate::platform::PointerCaveat;

/// The route name of raw input events in this delivery mode.
pub(super) fn event_path(mode: Delivery) -> Route {
    match mode {
        Delivery::Foreground => Route::ForegroundEvent,
        Delivery::Background => Route::BackgroundEvent,
    }
}

/// What a background input (events addressed to the window) consists of.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Synthetic {
    /// Pointer events to this window.
    Pointer(u64),
    Keys,
}

/// The escalation a background input of `kind` needs on this app: foreground, when its
/// toolkit ignores synthetic events of that kind; none for other toolkits and for apps
/// with no accessibility at all (X clients that read core events).
pub(super) async fn synthetic_caveat(
    platform: &dyn Platform,
    pid: u32,
    kind: Synthetic,
) -> Option<(&'static str, String)> {
    let quirks = platform.app_quirks(pid).await;
    let why = match kind {
        Synthetic::Keys => quirks.ignores_background_keys?,
        Synthetic::Pointer(window) => match quirks.ignores_background_pointer? {
            PointerCaveat::Always(why) => why,
            PointerCaveat::UnlessPointerOver(why) => {
                if platform.pointer_over(window).await {
                    return None;
                }
                why
            }
        },
    };
    let toolkit = quirks.toolkit_name();
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
