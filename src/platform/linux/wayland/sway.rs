//! sway's IPC (the i3 protocol over a Unix socket): what no Wayland protocol tells a
//! client, a window's pid and where it sits on the output, and the commands to place it.
//! Used where the compositor is sway (the Wayland sandbox's); other compositors leave
//! windows without pid or position.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::platform::{PlatformError, PlatformResult, Rect};

const MAGIC: &[u8] = b"i3-ipc";
const RUN_COMMAND: u32 = 0;
const GET_TREE: u32 = 4;
const GET_INPUTS: u32 = 100;
const ANSWER_WAIT: Duration = Duration::from_secs(5);

pub struct Ipc {
    path: PathBuf,
}

/// A window as sway's tree shows it.
#[derive(Debug, Clone)]
pub struct SwayWindow {
    pub con_id: u64,
    pub pid: Option<u32>,
    pub app_id: String,
    pub title: String,
    /// The window's content on the output.
    pub rect: Rect,
    pub visible: bool,
}

#[derive(Deserialize)]
struct Node {
    id: u64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    app_id: Option<String>,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    visible: Option<bool>,
    rect: IpcRect,
    #[serde(default)]
    window_rect: Option<IpcRect>,
    #[serde(default)]
    shell: Option<String>,
    #[serde(default)]
    nodes: Vec<Node>,
    #[serde(default)]
    floating_nodes: Vec<Node>,
}

#[derive(Deserialize, Clone, Copy)]
struct IpcRect {
    x: i32,
    y: i32,
    width: i32,
    height: i32,
}

impl Ipc {
    pub fn new(path: &Path) -> Ipc {
        Ipc {
            path: path.to_path_buf(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every window (a node with a shell), in the tree's order.
    pub fn windows(&self) -> PlatformResult<Vec<SwayWindow>> {
        let tree: Node = serde_json::from_slice(&self.call(GET_TREE, "")?)
            .map_err(|e| PlatformError::Other(format!("sway IPC tree: {e}")))?;
        let mut out = Vec::new();
        collect(&tree, &mut out);
        Ok(out)
    }

    /// The kinds of the seat's input devices (`pointer`, `keyboard`, ...).
    pub fn input_kinds(&self) -> PlatformResult<Vec<String>> {
        #[derive(Deserialize)]
        struct Input {
            #[serde(rename = "type")]
            kind: String,
        }
        let inputs: Vec<Input> = serde_json::from_slice(&self.call(GET_INPUTS, "")?)
            .map_err(|e| PlatformError::Other(format!("sway IPC inputs: {e}")))?;
        Ok(inputs.into_iter().map(|i| i.kind).collect())
    }

    /// Runs a sway command on one window; says what sway refused.
    pub fn command(&self, con_id: u64, command: &str) -> PlatformResult<()> {
        let reply = self.call(RUN_COMMAND, &format!("[con_id={con_id}] {command}"))?;
        #[derive(Deserialize)]
        struct Outcome {
            success: bool,
            #[serde(default)]
            error: Option<String>,
        }
        let outcomes: Vec<Outcome> = serde_json::from_slice(&reply)
            .map_err(|e| PlatformError::Other(format!("sway IPC reply: {e}")))?;
        match outcomes.into_iter().find(|o| !o.success) {
            None => Ok(()),
            Some(o) => Err(PlatformError::Other(format!(
                "sway refused `{command}`: {}",
                o.error.unwrap_or_default()
            ))),
        }
    }

    fn call(&self, kind: u32, payload: &str) -> PlatformResult<Vec<u8>> {
        let fail = |e: std::io::Error| {
            PlatformError::Other(format!("sway IPC at {}: {e}", self.path.display()))
        };
        let mut stream = UnixStream::connect(&self.path).map_err(fail)?;
        stream.set_read_timeout(Some(ANSWER_WAIT)).map_err(fail)?;
        let mut message = MAGIC.to_vec();
        message.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
        message.extend_from_slice(&kind.to_ne_bytes());
        message.extend_from_slice(payload.as_bytes());
        stream.write_all(&message).map_err(fail)?;
        let mut header = [0u8; 14];
        stream.read_exact(&mut header).map_err(fail)?;
        if &header[..6] != MAGIC {
            return Err(PlatformError::Other(format!(
                "{} does not speak sway's IPC",
                self.path.display()
            )));
        }
        let len = u32::from_ne_bytes([header[6], header[7], header[8], header[9]]) as usize;
        let mut body = vec![0u8; len];
        stream.read_exact(&mut body).map_err(fail)?;
        Ok(body)
    }
}

fn collect(node: &Node, out: &mut Vec<SwayWindow>) {
    if node.shell.is_some() {
        // `rect` is the container with its border; `window_rect` the window inside it,
        // relative to the container.
        let rect = match node.window_rect {
            Some(w) if w.width > 0 => {
                Rect::new(node.rect.x + w.x, node.rect.y + w.y, w.width, w.height)
            }
            _ => Rect::new(node.rect.x, node.rect.y, node.rect.width, node.rect.height),
        };
        out.push(SwayWindow {
            con_id: node.id,
            pid: node.pid,
            app_id: node.app_id.clone().unwrap_or_default(),
            title: node.name.clone().unwrap_or_default(),
            rect,
            visible: node.visible.unwrap_or(true),
        });
    }
    for child in node.nodes.iter().chain(&node.floating_nodes) {
        collect(child, out);
    }
}
