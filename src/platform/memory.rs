//! An in-memory desktop for unit tests of the tools' routing, effect checks and
//! escalation (in addition to the real-app tests, never instead of them): one app with one
//! window, a tree the test writes, the app's quirks, and a journal of what the tools asked
//! for. Actions change the tree as a real toolkit would when the test says they work.

use std::sync::Mutex;

use async_trait::async_trait;

use super::*;

pub const PID: u32 = 100;
pub const WINDOW: u64 = 1;

pub struct MemoryPlatform {
    /// What the app does differently (which background events it ignores...).
    pub quirks: AppQuirks,
    pub nodes: Mutex<Vec<AxNode>>,
    /// Whether element actions take effect (a toggle flips its `checked` state).
    pub actions_work: bool,
    /// Whether the real pointer is over the window (some apps take background pointer
    /// events only then: [`PointerCaveat::UnlessPointerOver`]).
    pub pointer_over: bool,
    /// What the tools asked for, in order: `do_action HANDLE ACTION`, `input MODE EVENTS`.
    pub journal: Mutex<Vec<String>>,
    /// The process its window names (None: a window no process is known for).
    pub window_pid: Option<u32>,
}

impl MemoryPlatform {
    /// A window holding `nodes` under a frame node (index 0), of an app with `quirks`.
    pub fn new(quirks: AppQuirks, nodes: Vec<AxNode>) -> MemoryPlatform {
        let frame = AxNode::test("frame", "Memory")
            .with_frame(Rect::new(0, 0, 200, 100))
            .inert();
        let mut all = vec![frame];
        for (i, mut n) in nodes.into_iter().enumerate() {
            n.parent = Some(0);
            n.handle = format!("/{}", i + 1);
            all[0].children.push(i + 1);
            all.push(n);
        }
        MemoryPlatform {
            quirks,
            nodes: Mutex::new(all),
            actions_work: true,
            pointer_over: false,
            journal: Mutex::new(Vec::new()),
            window_pid: Some(PID),
        }
    }

    pub fn journal(&self) -> Vec<String> {
        self.journal.lock().unwrap().clone()
    }

    fn window(&self) -> WindowInfo {
        WindowInfo {
            window_id: WINDOW,
            pid: self.window_pid,
            app_name: "Memory".into(),
            title: "Memory".into(),
            bounds: Rect::new(0, 0, 200, 100),
            z_index: 1,
            is_on_screen: true,
            space_id: None,
        }
    }

    fn with_node<T>(&self, handle: &str, f: impl FnOnce(&mut AxNode) -> T) -> PlatformResult<T> {
        let mut nodes = self.nodes.lock().unwrap();
        let node = nodes
            .iter_mut()
            .find(|n| n.handle == handle)
            .ok_or_else(|| PlatformError::Accessibility(format!("no element {handle}")))?;
        Ok(f(node))
    }

    fn unsupported<T>(what: &str) -> PlatformResult<T> {
        Err(PlatformError::Unsupported(format!(
            "the memory desktop has no {what}"
        )))
    }
}

/// The one AxNode builder of the unit tests: `role "name"`, actionable, with no states,
/// actions, frame, parent or children; the methods add them.
impl AxNode {
    pub fn test(role: &str, name: &str) -> AxNode {
        AxNode {
            role: role.into(),
            name: name.into(),
            value: None,
            value_unknown: false,
            states: Vec::new(),
            actions: Vec::new(),
            frame: None,
            actionable: true,
            parent: None,
            children: Vec::new(),
            reported_children: None,
            handle: String::new(),
            confidence: None,
        }
    }

    pub fn with_states(mut self, states: &[&str]) -> AxNode {
        self.states = states.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn with_actions(mut self, actions: &[&str]) -> AxNode {
        self.actions = actions.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn with_frame(mut self, frame: Rect) -> AxNode {
        self.frame = Some(frame);
        self
    }

    /// Its place in a tree: its parent's index and its children's.
    pub fn in_tree(mut self, parent: Option<usize>, children: Vec<usize>) -> AxNode {
        self.parent = parent;
        self.children = children;
        self
    }

    /// Not actionable (a frame, a panel, a label).
    pub fn inert(mut self) -> AxNode {
        self.actionable = false;
        self
    }
}

#[async_trait]
impl Platform for MemoryPlatform {
    fn name(&self) -> &'static str {
        "memory"
    }

    async fn check_permissions(&self) -> Vec<PermissionCheck> {
        Vec::new()
    }
}

#[async_trait]
impl Observation for MemoryPlatform {
    async fn screen_size(&self) -> PlatformResult<(u32, u32)> {
        Ok((800, 600))
    }

    async fn cursor_position(&self) -> PlatformResult<(i32, i32)> {
        Ok((0, 0))
    }

    async fn pointer_over(&self, _window_id: u64) -> bool {
        self.pointer_over
    }

    async fn capture_window(&self, _window_id: u64) -> PlatformResult<Capture> {
        Ok(Capture {
            width: 200,
            height: 100,
            rgba: vec![255; 200 * 100 * 4],
        })
    }

    async fn accessibility_tree(&self, _pid: u32, _window: &WindowInfo) -> PlatformResult<AxTree> {
        Ok(AxTree {
            nodes: self.nodes.lock().unwrap().clone(),
            warning: None,
            left_out: Vec::new(),
            absence: None,
        })
    }

    async fn app_quirks(&self, _pid: u32) -> AppQuirks {
        self.quirks.clone()
    }

    async fn value_range(&self, _handle: &str) -> PlatformResult<ValueRange> {
        Self::unsupported("values")
    }

    async fn option_names(&self, _handle: &str) -> PlatformResult<Vec<String>> {
        Self::unsupported("options")
    }

    async fn read_element(&self, handle: &str) -> PlatformResult<ElementReading> {
        self.with_node(handle, |n| ElementReading {
            name: n.name.clone(),
            states: n.states.clone(),
            text: n.value.clone(),
            value: None,
        })
    }

    async fn focus_state(&self) -> PlatformResult<FocusState> {
        Ok(FocusState {
            active_window: Some(WINDOW),
            input_focus: WINDOW,
            stacking: vec![WINDOW],
            pointer: (0, 0),
        })
    }
}

#[async_trait]
impl Input for MemoryPlatform {
    async fn do_action(&self, handle: &str, action: &str) -> PlatformResult<()> {
        self.journal
            .lock()
            .unwrap()
            .push(format!("do_action {handle} {action}"));
        let works = self.actions_work;
        self.with_node(handle, |n| {
            if works && n.role == "check_box" {
                match n.states.iter().position(|s| s == "checked") {
                    Some(i) => {
                        n.states.remove(i);
                    }
                    None => n.states.push("checked".into()),
                }
            }
        })
    }

    async fn insert_text(&self, _handle: &str, _text: &str) -> PlatformResult<TextEdit> {
        Self::unsupported("text")
    }

    async fn set_text(&self, _handle: &str, _text: &str) -> PlatformResult<()> {
        Self::unsupported("text")
    }

    async fn set_value(&self, _handle: &str, _value: f64) -> PlatformResult<()> {
        Self::unsupported("values")
    }

    async fn select_option(&self, _handle: &str, _index: usize) -> PlatformResult<()> {
        Self::unsupported("options")
    }

    async fn send_input(
        &self,
        _window: &WindowInfo,
        events: &[InputEvent],
        delivery: Delivery,
    ) -> PlatformResult<()> {
        self.journal
            .lock()
            .unwrap()
            .push(format!("input {delivery:?} {events:?}"));
        Ok(())
    }

    async fn warp_pointer(&self, _x: i32, _y: i32) -> PlatformResult<()> {
        Ok(())
    }
}

#[async_trait]
impl Windows for MemoryPlatform {
    async fn list_windows(&self) -> PlatformResult<WindowList> {
        Ok(WindowList {
            windows: vec![self.window()],
            current_space_id: None,
        })
    }

    async fn active_pid(&self) -> PlatformResult<Option<u32>> {
        Ok(Some(PID))
    }

    async fn resize_window(&self, _window_id: u64, _w: u32, _h: u32) -> PlatformResult<()> {
        Self::unsupported("window sizes")
    }
}

#[async_trait]
impl Launching for MemoryPlatform {
    async fn installed_apps(&self) -> PlatformResult<Vec<InstalledApp>> {
        Ok(Vec::new())
    }

    async fn running_apps(&self) -> PlatformResult<Vec<RunningApp>> {
        Ok(Vec::new())
    }

    async fn launch(&self, _request: &LaunchRequest) -> PlatformResult<LaunchedApp> {
        Self::unsupported("launcher")
    }
}
