//! A window's popups in its screenshot: open menus, popovers and drop-down lists are
//! windows of their own (override-redirect, children of the root, stacked above the
//! window), so a capture of the window alone leaves out what a person sees over it.
//!
//! A popup belongs to the window when the same X client made it (the resource id base the
//! server gave that client), it is mapped, and it is stacked above the window's frame. Its
//! part inside the window's area is painted over the capture: copied from a 24-bit window,
//! blended from a 32-bit one (premultiplied alpha: GTK 4 popovers draw their shadow so).
//! What lies outside the window's area is not in the screenshot.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, MapState, Window};

use super::x11::X11;
use crate::platform::{Capture, Rect};

impl X11 {
    /// Mapped override-redirect windows of `client_window`'s X client stacked above
    /// `frame`, bottom to top, with their bounds on the screen.
    pub(super) fn popups_above(&self, frame: Window, client_window: Window) -> Vec<(Window, Rect)> {
        let mask = self.conn.setup().resource_id_mask;
        let client = client_window & !mask;
        let Some(tree) = self
            .conn
            .query_tree(self.root)
            .ok()
            .and_then(|c| c.reply().ok())
        else {
            return Vec::new();
        };
        let Some(at) = tree.children.iter().position(|w| *w == frame) else {
            return Vec::new();
        };
        tree.children[at + 1..]
            .iter()
            .filter(|w| **w & !mask == client)
            .filter_map(|w| {
                let attrs = self.conn.get_window_attributes(*w).ok()?.reply().ok()?;
                if !attrs.override_redirect || attrs.map_state != MapState::VIEWABLE {
                    return None;
                }
                let geo = self.conn.get_geometry(*w).ok()?.reply().ok()?;
                let bounds = Rect {
                    x: geo.x as i32,
                    y: geo.y as i32,
                    width: geo.width as i32,
                    height: geo.height as i32,
                };
                Some((*w, bounds))
            })
            .collect()
    }

    /// The popups of `client_window` a person opened (menus, popovers, drop-down lists):
    /// [`Self::popups_above`] without tooltips, which show by themselves when the pointer
    /// rests (a click's read-back would take one for the click's effect).
    pub fn opened_popups(&self, frame: Window, client_window: Window) -> Vec<(Window, Rect)> {
        let (kind, tooltip) = (
            self.atoms.net_wm_window_type,
            self.atoms.net_wm_window_type_tooltip,
        );
        self.popups_above(frame, client_window)
            .into_iter()
            .filter(|(w, _)| {
                !self
                    .get_u32s(*w, kind, AtomEnum::ATOM.into())
                    .is_ok_and(|types| types.contains(&tooltip))
            })
            .collect()
    }

    /// Paints the popups of the window captured at `bounds` (on the screen) over
    /// `capture`. A popup that cannot be read is left out.
    pub(super) fn paint_popups(
        &self,
        frame: Window,
        client_window: Window,
        bounds: &Rect,
        capture: &mut Capture,
    ) {
        for (popup, at) in self.popups_above(frame, client_window) {
            let Some(part) = intersection(&at, bounds) else {
                continue;
            };
            let Ok(pixels) = self.read_window_pixels(
                popup,
                (part.x - at.x) as i16,
                (part.y - at.y) as i16,
                part.width as u32,
                part.height as u32,
            ) else {
                continue;
            };
            if pixels.depth < 24 {
                continue;
            }
            let blend = pixels.depth == 32;
            for row in 0..part.height {
                for col in 0..part.width {
                    let src = ((row * part.width + col) * 4) as usize;
                    let (x, y) = (part.x - bounds.x + col, part.y - bounds.y + row);
                    let dst = ((y * capture.width as i32 + x) * 4) as usize;
                    let [b, g, r, a] = [
                        pixels.bgrx[src],
                        pixels.bgrx[src + 1],
                        pixels.bgrx[src + 2],
                        pixels.bgrx[src + 3],
                    ];
                    let out = &mut capture.rgba[dst..dst + 3];
                    if blend {
                        let keep = 255 - u16::from(a);
                        for (o, c) in out.iter_mut().zip([r, g, b]) {
                            *o = (u16::from(c) + u16::from(*o) * keep / 255).min(255) as u8;
                        }
                    } else {
                        out.copy_from_slice(&[r, g, b]);
                    }
                }
            }
        }
    }
}

/// The part two rectangles share, if any.
fn intersection(a: &Rect, b: &Rect) -> Option<Rect> {
    let (x, y) = (a.x.max(b.x), a.y.max(b.y));
    let right = a.right().min(b.right());
    let bottom = a.bottom().min(b.bottom());
    (right > x as i64 && bottom > y as i64).then(|| Rect {
        x,
        y,
        width: (right - x as i64).min(i32::MAX as i64) as i32,
        height: (bottom - y as i64).min(i32::MAX as i64) as i32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_popup_paints_only_where_it_overlaps_the_window() {
        let window = Rect {
            x: 100,
            y: 100,
            width: 400,
            height: 300,
        };
        let menu = Rect {
            x: 450,
            y: 120,
            width: 100,
            height: 50,
        };
        let part = intersection(&menu, &window).unwrap();
        assert_eq!(
            (part.x, part.y, part.width, part.height),
            (450, 120, 50, 50)
        );
        let away = Rect {
            x: 600,
            y: 0,
            width: 10,
            height: 10,
        };
        assert!(intersection(&away, &window).is_none());
    }
}
