//! The agent cursor: shows people where the agent points. This module owns its settings
//! (the `agent_cursor.*` config keys), the glide between pointer actions and the idle
//! hide; [`sprite`] owns its picture.
//!
//! Two places show it. The live overlay, when enabled: a window the platform provides
//! ([`Platform::show_overlay`]) that glides to each pointer action's point before the
//! action lands (the action waits for the glide, and after a click for the dwell). And a
//! recording's video, enabled or not: the video helper draws the cursor at each pointer
//! action's point and a ripple at each click, so a reviewer sees every click without the
//! agent being slowed down (`tools/cursor.rs` sends it the points).

pub mod sprite;

/// Set once by `cua serve --no-overlay` / `cua mcp --no-overlay`: this process never
/// shows the live overlay (recording videos still draw the cursor).
static NO_OVERLAY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// This process draws no live overlay from now on.
pub fn forbid_overlay() {
    NO_OVERLAY.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `--no-overlay` forbade the live overlay in this process.
pub fn overlay_forbidden() -> bool {
    NO_OVERLAY.load(std::sync::atomic::Ordering::Relaxed)
}

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::platform::Platform;
use sprite::{SpriteCache, Style};

/// The overlay moves every this often while it glides (60 Hz).
const FRAME: Duration = Duration::from_millis(16);

/// The glide's path: a cubic Bézier from the last point to the next, bulging sideways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motion {
    pub start_handle: f64,
    pub end_handle: f64,
    pub arc_size: f64,
    pub arc_flow: f64,
}

impl Motion {
    /// The point at `t` (0..=1, eased in and out) of the path from `from` to `to`.
    pub fn point(&self, from: (f64, f64), to: (f64, f64), t: f64) -> (f64, f64) {
        let t = t.clamp(0.0, 1.0);
        let t = if t < 0.5 {
            4.0 * t * t * t
        } else {
            1.0 - (-2.0 * t + 2.0).powi(3) / 2.0
        };
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        let length = (dx * dx + dy * dy).sqrt();
        if length < 1.0 {
            return to;
        }
        // Perpendicular to the line, scaled to the bulge; arc_flow moves the bulge toward
        // the destination (positive) or the origin (negative).
        let bulge = self.arc_size * length;
        let (nx, ny) = (-dy / length * bulge, dx / length * bulge);
        let c1 = (
            from.0 + dx * self.start_handle + nx * (1.0 - self.arc_flow),
            from.1 + dy * self.start_handle + ny * (1.0 - self.arc_flow),
        );
        let c2 = (
            to.0 - dx * self.end_handle + nx * (1.0 + self.arc_flow),
            to.1 - dy * self.end_handle + ny * (1.0 + self.arc_flow),
        );
        let u = 1.0 - t;
        let (a, b, c, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
        (
            a * from.0 + b * c1.0 + c * c2.0 + d * to.0,
            a * from.1 + b * c1.1 + c * c2.1 + d * to.1,
        )
    }
}

/// Every agent-cursor setting, as the config holds them now.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub enabled: bool,
    pub motion: Motion,
    /// Kept for the reference's callers; the arrow here is drawn upright, so nothing
    /// rotates and nothing settles.
    pub spring: f64,
    pub glide: Duration,
    pub dwell: Duration,
    pub idle_hide: Duration,
    pub style: Style,
}

impl Settings {
    /// Reads the settings through `config` (a dotted key's effective value).
    pub fn from_config(config: impl Fn(&str) -> Value) -> Settings {
        let num = |k: &str| config(&format!("agent_cursor.{k}")).as_f64().unwrap_or(0.0);
        let ms = |k: &str| {
            Duration::from_millis(config(&format!("agent_cursor.{k}")).as_u64().unwrap_or(0))
        };
        let text = |k: &str| {
            config(&format!("agent_cursor.style.{k}"))
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        Settings {
            enabled: config("agent_cursor.enabled").as_bool().unwrap_or(false),
            motion: Motion {
                start_handle: num("motion.start_handle"),
                end_handle: num("motion.end_handle"),
                arc_size: num("motion.arc_size"),
                arc_flow: num("motion.arc_flow"),
            },
            spring: num("motion.spring"),
            glide: ms("glide_duration_ms"),
            dwell: ms("dwell_after_click_ms"),
            idle_hide: ms("idle_hide_ms"),
            style: Style {
                gradient_colors: config("agent_cursor.style.gradient_colors")
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|c| c.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
                bloom_color: text("bloom_color"),
                image_path: text("image_path"),
            },
        }
    }

    /// The settings as get_agent_cursor_state reports them (durations in milliseconds).
    pub fn to_json(&self) -> Value {
        json!({
            "enabled": self.enabled,
            "motion": {
                "start_handle": self.motion.start_handle,
                "end_handle": self.motion.end_handle,
                "arc_size": self.motion.arc_size,
                "arc_flow": self.motion.arc_flow,
                "spring": self.spring,
                // cua-driver reports its timings in `motion` too; its clients read them there.
                "glide_duration_ms": self.glide.as_millis() as u64,
                "dwell_after_click_ms": self.dwell.as_millis() as u64,
                "idle_hide_ms": self.idle_hide.as_millis() as u64,
            },
            "glide_duration_ms": self.glide.as_millis() as u64,
            "dwell_after_click_ms": self.dwell.as_millis() as u64,
            "idle_hide_ms": self.idle_hide.as_millis() as u64,
            "style": {
                "gradient_colors": self.style.gradient_colors,
                "bloom_color": self.style.bloom_color,
                "image_path": self.style.image_path,
            },
        })
    }
}

/// The live overlay's state in one session: where it is, its picture, and which pointer
/// action last moved it (an idle hide armed by an earlier one does nothing).
#[derive(Clone, Default)]
pub struct AgentCursor(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    at: Option<(i32, i32)>,
    shown: bool,
    generation: u64,
    sprites: SpriteCache,
}

impl AgentCursor {
    /// Where the overlay last pointed, while it shows.
    pub fn shown_at(&self) -> Option<(i32, i32)> {
        let state = self.0.lock().unwrap();
        state.at.filter(|_| state.shown)
    }

    /// Glides the overlay from where it was (else from the real pointer) to `to` on the
    /// screen, over `settings.glide`; returns when it points there.
    pub async fn glide(
        &self,
        platform: &dyn Platform,
        settings: &Settings,
        to: (i32, i32),
    ) -> Result<(), String> {
        let sprite = self
            .0
            .lock()
            .unwrap()
            .sprites
            .get(&settings.style, |e| {
                tracing::warn!("agent cursor: {e}; drawing the arrow")
            })
            .clone();
        let last = self.0.lock().unwrap().at;
        let from = match last {
            Some(at) => at,
            None => platform.cursor_position().await.unwrap_or(to),
        };
        {
            let mut state = self.0.lock().unwrap();
            state.generation += 1;
            state.shown = true;
        }
        let steps = (settings.glide.as_millis() / FRAME.as_millis()).max(1) as u32;
        let start = tokio::time::Instant::now();
        let (f, t) = ((from.0 as f64, from.1 as f64), (to.0 as f64, to.1 as f64));
        for step in 1..=steps {
            tokio::time::sleep_until(start + settings.glide * step / steps).await;
            let (x, y) = settings.motion.point(f, t, step as f64 / steps as f64);
            let (x, y) = (x.round() as i32, y.round() as i32);
            let (left, top) = (x - sprite.hot.0, y - sprite.hot.1);
            platform
                .show_overlay(&sprite.image, left, top)
                .await
                .map_err(|e| e.to_string())?;
            self.0.lock().unwrap().at = Some((x, y));
        }
        Ok(())
    }

    /// Hides the overlay after `idle` unless a pointer action moves it first.
    pub fn hide_later(&self, platform: Arc<dyn Platform>, idle: Duration) {
        let generation = self.0.lock().unwrap().generation;
        let me = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(idle).await;
            if me.0.lock().unwrap().generation == generation {
                me.hide(platform.as_ref()).await;
            }
        });
    }

    /// Hides the overlay now.
    pub async fn hide(&self, platform: &dyn Platform) {
        let was_shown = {
            let mut state = self.0.lock().unwrap();
            state.generation += 1;
            std::mem::replace(&mut state.shown, false)
        };
        if was_shown {
            platform.hide_overlay().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOTION: Motion = Motion {
        start_handle: 0.3,
        end_handle: 0.3,
        arc_size: 0.25,
        arc_flow: 0.0,
    };

    #[test]
    fn the_glide_starts_and_ends_on_its_points_and_bulges_between() {
        let (from, to) = ((0.0, 0.0), (100.0, 0.0));
        assert_eq!(MOTION.point(from, to, 0.0), from);
        let end = MOTION.point(from, to, 1.0);
        assert!(
            (end.0 - 100.0).abs() < 1e-9 && end.1.abs() < 1e-9,
            "{end:?}"
        );
        let mid = MOTION.point(from, to, 0.5);
        assert!((mid.0 - 50.0).abs() < 1e-9, "{mid:?}");
        assert!(mid.1 > 10.0, "no bulge: {mid:?}");
        let straight = Motion {
            arc_size: 0.0,
            ..MOTION
        };
        assert!(straight.point(from, to, 0.5).1.abs() < 1e-9);
    }

    #[test]
    fn settings_read_every_key_from_the_config() {
        let settings = Settings::from_config(|key| {
            crate::config::KEYS
                .iter()
                .find(|k| k.key == key)
                .map(|k| (k.default)())
                .unwrap_or_else(|| panic!("{key} is no config key"))
        });
        assert_eq!(settings.glide, Duration::from_millis(750));
        assert_eq!(settings.dwell, Duration::from_millis(400));
        assert_eq!(settings.idle_hide, Duration::from_millis(3000));
        assert_eq!(settings.motion, MOTION);
        assert_eq!(settings.to_json()["motion"]["spring"], 0.72);
    }
}
