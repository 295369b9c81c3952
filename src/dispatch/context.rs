//! The state tool calls share in one process or session: [`ToolContext`] (the desktop
//! connection, the element snapshots, config overrides, the recorder, the agent cursor)
//! and [`Sessions`], which gives each server session its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::OnceCell;

use crate::errors::ToolError;
use crate::platform::{AxTree, DesktopEnv, Platform};
use crate::snapshot::Snapshot;

/// How many snapshots an action can still name by `snapshot_id`.
pub const RECENT_SNAPSHOTS: usize = 16;

/// Shared state for tool calls in one process (CLI invocation, daemon, MCP server).
#[derive(Default)]
pub struct ToolContext {
    desktop: DesktopEnv,
    platform: OnceCell<Arc<dyn Platform>>,
    snapshots: Mutex<HashMap<(u32, u64), Arc<Snapshot>>>,
    /// The last RECENT_SNAPSHOTS snapshots of any window, oldest first: an action that
    /// names its `snapshot_id` is resolved in that one.
    recent_snapshots: Mutex<std::collections::VecDeque<Arc<Snapshot>>>,
    snapshot_counter: std::sync::atomic::AtomicU64,
    /// The trajectory recorder of this context (one per process or MCP session).
    pub recorder: crate::recording::Recorder,
    /// The session this context serves (an MCP connection); None for the anonymous CLI,
    /// whose set_config writes the global default.
    session: Option<String>,
    /// set_config values of this session, by dotted key (never written to disk).
    config_overrides: Mutex<serde_json::Map<String, Value>>,
    /// The agent cursor's state (where it was last shown, its pending hide).
    pub cursor: crate::cursor::AgentCursor,
    /// A one-shot CLI call: it ends before an overlay could be seen, so it draws none.
    one_shot: bool,
    /// When input whose effect was not read back was last sent to each app that shows
    /// effects late ([`crate::platform::AppQuirks::late_effects`]), and how late they get.
    /// For an app without an accessibility tree, the window whose repaint shows it.
    pending_effects: Mutex<HashMap<u32, PendingEffect>>,
    /// Each app's quirks, asked once (an app not on the accessibility bus takes the
    /// platform's registration wait to answer).
    quirks: Mutex<HashMap<u32, crate::platform::AppQuirks>>,
    /// The sessions this context is one of, when a server keeps several
    /// ([`super::Sessions`]); session tools read and end them through it.
    directory: std::sync::OnceLock<std::sync::Weak<super::sessions::Directory>>,
    /// When this context was made and last served a call (session tools report both).
    pub activity: Activity,
    /// The capture scope start_session set, if any ([`super::scope`]).
    pub capture_scope: Mutex<Option<super::scope::ScopePolicy>>,
    /// A pointer button this session holds between calls (mouse_button_down …
    /// mouse_button_up); released when the session ends.
    pub held_button: Mutex<Option<HeldButton>>,
    /// The browser targets, tabs and refs this session's browser tools minted.
    pub browser: crate::web::browser::Bindings,
    /// Where each window's last zoom image sits in its screenshot (`from_zoom`).
    zooms: Mutex<HashMap<u64, super::ZoomOrigin>>,
}

/// When a context was made and last served a call.
/// A pointer button held down between calls, and where.
#[derive(Debug, Clone)]
pub struct HeldButton {
    pub pid: u32,
    pub window: crate::platform::WindowInfo,
    pub button: u8,
    /// The pointer's place, window-local event pixels.
    pub at: (i32, i32),
    pub mode: crate::platform::Delivery,
}

pub struct Activity {
    pub created: std::time::Instant,
    last_call: Mutex<std::time::Instant>,
    /// Made by start_session for a name that had been ended.
    pub revived: std::sync::atomic::AtomicBool,
}

/// Input whose effect was not read back, which the next input to the same app waits for.
#[derive(Debug, Clone, Copy)]
struct PendingEffect {
    sent: std::time::Instant,
    latest: std::time::Duration,
    /// The window whose repaint shows the effect (an app without a tree); None: the app's
    /// accessibility events show it.
    window: Option<u64>,
}

/// How long the next input to an app without a tree waits for the previous one's repaint.
pub const TREE_LESS_EFFECT_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

impl Default for Activity {
    fn default() -> Self {
        let now = std::time::Instant::now();
        Activity {
            created: now,
            last_call: Mutex::new(now),
            revived: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Activity {
    pub fn touch(&self) {
        *self.last_call.lock().unwrap() = std::time::Instant::now();
    }

    pub fn idle(&self) -> std::time::Duration {
        self.last_call.lock().unwrap().elapsed()
    }
}

impl ToolContext {
    /// A context for the desktop named by this process's environment.
    pub fn new() -> Self {
        Self::for_desktop(DesktopEnv::from_process_env())
    }

    /// A context for a given desktop (a sandbox in tests and the demo).
    pub fn for_desktop(desktop: DesktopEnv) -> Self {
        ToolContext {
            desktop,
            ..Self::default()
        }
    }

    /// A context over an already connected platform (tests, benchmarks).
    pub fn with_platform(platform: Arc<dyn Platform>) -> Self {
        let ctx = Self::default();
        let _ = ctx.platform.set(platform);
        ctx
    }

    /// Before acting on app `pid`: when the last input sent to it may still be on its way
    /// (an app that shows effects late, and its effect not read back), waits until the app
    /// shows something after it (its accessibility events), or until that effect's latest.
    /// So input never lands while the previous effect is pending (GTK 4 drops a click sent
    /// then) and a state read next shows it.
    pub async fn await_pending_effect(&self, pid: u32) {
        let pending = self
            .pending_effects
            .lock()
            .ok()
            .and_then(|p| p.get(&pid).copied());
        let Some(PendingEffect {
            sent,
            latest,
            window,
        }) = pending
        else {
            return;
        };
        let until = sent + latest;
        if std::time::Instant::now() < until {
            if let Ok(platform) = self.platform().await {
                let p = platform.as_ref();
                match window {
                    Some(id) => crate::platform::repaint_after(p, id, sent, until).await,
                    None => crate::platform::event_after(p, pid, sent, until).await,
                };
            }
        }
        if let Ok(mut p) = self.pending_effects.lock() {
            p.remove(&pid);
        }
    }

    /// Input was sent to app `pid` at `sent` and its effect was not read back: the next
    /// action waits for it when the app shows effects late.
    /// An app without an accessibility tree (none known for it) has no event to say its
    /// effect showed: the next input to it waits for `window` to repaint after this one,
    /// at most [`TREE_LESS_EFFECT_WAIT`] (a fast agent's next click cut an SDL app's
    /// previous turn before its effect showed, and the turn recorded the state before).
    pub async fn effect_pending(&self, pid: u32, sent: std::time::Instant, window: Option<u64>) {
        let quirks = self.app_quirks(pid).await;
        let pending = match (quirks.late_effects, quirks.toolkit.is_none(), window) {
            (Some(latest), _, _) => Some(PendingEffect {
                sent,
                latest,
                window: None,
            }),
            (None, true, Some(id)) => Some(PendingEffect {
                sent,
                latest: TREE_LESS_EFFECT_WAIT,
                window: Some(id),
            }),
            _ => None,
        };
        if let (Some(pending), Ok(mut p)) = (pending, self.pending_effects.lock()) {
            p.insert(pid, pending);
        }
    }

    /// What app `pid`'s toolkit does differently, asked of the platform once per app.
    pub async fn app_quirks(&self, pid: u32) -> crate::platform::AppQuirks {
        if let Some(known) = self.quirks.lock().unwrap().get(&pid) {
            return known.clone();
        }
        let Ok(platform) = self.platform().await else {
            return Default::default();
        };
        let quirks = platform.app_quirks(pid).await;
        self.quirks.lock().unwrap().insert(pid, quirks.clone());
        quirks
    }

    /// The last zoom of a window: actions with `from_zoom` map its image's pixels back.
    pub fn zoomed(&self, window_id: u64, origin: super::ZoomOrigin) {
        self.zooms.lock().unwrap().insert(window_id, origin);
    }

    pub fn zoom_origin(&self, window_id: u64) -> Option<super::ZoomOrigin> {
        self.zooms.lock().unwrap().get(&window_id).copied()
    }

    /// The sessions this context is one of (None for a lone context: a CLI call, a test).
    pub fn directory(&self) -> Option<Arc<super::sessions::Directory>> {
        self.directory.get().and_then(std::sync::Weak::upgrade)
    }

    pub(super) fn join(&self, directory: &Arc<super::sessions::Directory>) {
        let _ = self.directory.set(Arc::downgrade(directory));
    }

    /// Releases a button this session left held (its session ends, its client left): a
    /// pressed button must not outlive the gesture that pressed it.
    pub async fn release_held_button(&self) {
        let held = self.held_button.lock().unwrap().take();
        let (Some(h), Ok(platform)) = (held, self.platform().await) else {
            return;
        };
        let release = crate::platform::InputEvent::Button {
            x: h.at.0,
            y: h.at.1,
            button: h.button,
            down: false,
        };
        if let Err(e) = platform.send_input(&h.window, &[release], h.mode).await {
            tracing::warn!(error = %e, "could not release a held pointer button");
        }
    }

    /// Forgets what this context read (snapshots, pending effects): an ended session that
    /// cannot be dropped (a connection's own) starts over.
    pub(super) fn forget(&self) {
        self.snapshots.lock().unwrap().clear();
        self.recent_snapshots.lock().unwrap().clear();
        self.pending_effects.lock().unwrap().clear();
        *self.capture_scope.lock().unwrap() = None;
    }

    /// The desktop this context talks to.
    pub fn desktop(&self) -> &DesktopEnv {
        &self.desktop
    }

    /// A context serving session `id`: its set_config stays in memory, for it alone.
    pub fn for_session(desktop: DesktopEnv, id: impl Into<String>) -> Self {
        ToolContext {
            desktop,
            session: Some(id.into()),
            ..Self::default()
        }
    }

    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The context of one CLI call in its own process (no daemon): it draws no overlay.
    pub fn one_shot(mut self) -> Self {
        self.one_shot = true;
        self
    }

    pub fn is_one_shot(&self) -> bool {
        self.one_shot
    }

    /// The effective value of a config key: session override, else the global default
    /// (as stored, else as this desktop wants it).
    pub fn config(&self, key: &str) -> Value {
        self.config_snapshot().0.remove(key).unwrap_or(Value::Null)
    }

    /// Defaults that depend on the desktop: the agent cursor is on where a person watches,
    /// off inside a cua sandbox (headless runs and CI, which its glide would only slow).
    fn desktop_default(&self, key: &str) -> Option<Value> {
        (key == "agent_cursor.enabled").then(|| json!(self.desktop.sandbox_dir.is_none()))
    }

    /// Every key's effective value (one read of the config file), and the keys this
    /// session overrides.
    pub fn config_snapshot(&self) -> (serde_json::Map<String, Value>, Vec<String>) {
        let stored = crate::config::load_stored();
        let mut values = serde_json::Map::new();
        for spec in crate::config::KEYS {
            let value = stored
                .get(spec.key)
                .cloned()
                .or_else(|| self.desktop_default(spec.key))
                .unwrap_or_else(spec.default);
            values.insert(spec.key.to_string(), value);
        }
        let overrides = self.config_overrides.lock().unwrap();
        for (k, v) in overrides.iter() {
            values.insert(k.clone(), v.clone());
        }
        (values, overrides.keys().cloned().collect())
    }

    /// Sets a key: in a session, an in-memory override; otherwise the persisted default.
    /// Returns where it went.
    pub fn set_config(&self, key: &str, value: &Value) -> Result<String, ToolError> {
        let value = crate::config::validate(key, value)?;
        match &self.session {
            Some(id) => {
                self.config_overrides
                    .lock()
                    .unwrap()
                    .insert(key.to_string(), value);
                Ok(format!("session {id} (in memory)"))
            }
            None => crate::config::save_global(key, value).map(|p| p.display().to_string()),
        }
    }

    /// The factor screenshots of a `width` x `height` window are scaled by (≤ 1), from
    /// max_image_dimension (a call's own argument wins over the config).
    pub fn image_scale(&self, width: u32, height: u32, max_dimension: Option<u32>) -> f64 {
        let max = max_dimension
            .map(u64::from)
            .unwrap_or_else(|| self.config("max_image_dimension").as_u64().unwrap_or(0));
        let longest = width.max(height) as f64;
        if max == 0 || longest <= max as f64 {
            1.0
        } else {
            max as f64 / longest
        }
    }

    /// The desktop, connected on first use so tools that need none never touch it.
    pub async fn platform(&self) -> Result<Arc<dyn Platform>, ToolError> {
        self.platform
            .get_or_try_init(|| async {
                crate::platform::connect(&self.desktop).map_err(ToolError::from)
            })
            .await
            .cloned()
    }

    pub fn store_snapshot(
        &self,
        pid: u32,
        window_id: u64,
        tree: AxTree,
        elements: Vec<usize>,
    ) -> Arc<Snapshot> {
        let n = self
            .snapshot_counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let snap = Arc::new(Snapshot {
            snapshot_id: super::tokens::snapshot_id(n),
            pid,
            window_id,
            tree,
            elements,
        });
        {
            let mut recent = self.recent_snapshots.lock().unwrap();
            if recent.len() == RECENT_SNAPSHOTS {
                recent.pop_front();
            }
            recent.push_back(snap.clone());
        }
        self.snapshots
            .lock()
            .unwrap()
            .insert((pid, window_id), snap.clone());
        snap
    }

    /// One of the recent snapshots, by its id.
    pub fn snapshot_by_id(&self, snapshot_id: &str) -> Option<Arc<Snapshot>> {
        self.recent_snapshots
            .lock()
            .unwrap()
            .iter()
            .find(|s| s.snapshot_id == snapshot_id)
            .cloned()
    }

    pub fn snapshot(&self, pid: u32, window_id: u64) -> Option<Arc<Snapshot>> {
        self.snapshots
            .lock()
            .unwrap()
            .get(&(pid, window_id))
            .cloned()
    }

    /// The element a call names (`pid`, `window_id`, `element_index`), as a locator in
    /// that window's snapshot.
    pub fn element_locator(&self, args: &Value) -> Option<crate::trajectory::Locator> {
        let arg = |k: &str| args.get(k).and_then(Value::as_u64);
        let (pid, window_id, index) = (arg("pid")?, arg("window_id")?, arg("element_index")?);
        let snapshot = self.snapshot(pid as u32, window_id)?;
        let node = *snapshot.elements.get(index as usize)?;
        Some(crate::trajectory::Locator::of(
            &snapshot.tree,
            node,
            index as usize,
        ))
    }

    /// Refuses an action the policy forbids, under this session's config.
    pub async fn check_policy(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        let desktop = async { self.platform().await.ok() };
        crate::policy::check(&self.config_snapshot().0, desktop, tool, args).await
    }

    /// Where a tool may write the path an agent gave in `field`, under this session's
    /// policy ([`crate::policy::output_path`]).
    pub fn output_path(
        &self,
        field: &str,
        path: &str,
        folder: bool,
    ) -> Result<std::path::PathBuf, ToolError> {
        crate::policy::output_path(&self.config_snapshot().0, field, path, folder)
    }

    /// The (pid, window) pairs this context holds a snapshot of.
    pub fn snapshot_keys(&self) -> Vec<(u32, u64)> {
        self.snapshots.lock().unwrap().keys().copied().collect()
    }
}

/// The async runtime tools run on, as every entry point builds it (two workers: the
/// machines this runs on have two cores, and captures run beside tree walks).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}
