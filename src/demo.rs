//! `cua demo`: the README's main job. Starts an embedded headless desktop, launches real
//! apps, observes them through the tools (tree + screenshots), and leaves every artifact in
//! a folder it prints. Later stages (record, replay, diff) extend this same flow.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::sandbox::{Sandbox, SandboxOptions};
use crate::tools::{ToolContext, ToolOutput, ToolRegistry};

struct Demo {
    registry: ToolRegistry,
    ctx: ToolContext,
    out: PathBuf,
    step: usize,
}

impl Demo {
    async fn call(&mut self, tool: &str, args: Value) -> Result<ToolOutput, String> {
        self.step += 1;
        eprintln!("[{}] {tool} {args}", self.step);
        self.registry
            .call(&self.ctx, tool, args)
            .await
            .map_err(|e| format!("{tool} failed: {e}"))
    }

    fn save(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let path = self.out.join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// get_window_state of an app's first window, saved as tree, JSON and screenshot.
    async fn observe(&mut self, label: &str, pid: u64, window_id: u64) -> Result<Value, String> {
        let state = self
            .call(
                "get_window_state",
                json!({ "pid": pid, "window_id": window_id }),
            )
            .await?;
        let tree = state.structured["tree_markdown"]
            .as_str()
            .unwrap_or("")
            .to_string();
        self.save(&format!("{label}-tree.md"), tree.as_bytes())?;
        self.save(
            &format!("{label}-state.json"),
            serde_json::to_string_pretty(&state.structured)
                .unwrap_or_default()
                .as_bytes(),
        )?;
        if let Some(img) = &state.image {
            self.save(&format!("{label}-screenshot.png"), &img.data)?;
        }
        eprintln!(
            "    {} elements, screenshot {}x{}",
            state.structured["element_count"],
            state.structured["screenshot"]["width"],
            state.structured["screenshot"]["height"]
        );
        Ok(state.structured)
    }

    async fn launch(&mut self, name: &str) -> Result<(u64, u64), String> {
        let launched = self.call("launch_app", json!({ "name": name })).await?;
        let pid = launched.structured["pid"]
            .as_u64()
            .ok_or("launch_app returned no pid")?;
        let window = launched.structured["windows"][0]["window_id"]
            .as_u64()
            .ok_or_else(|| format!("{name} showed no window"))?;
        eprintln!("    pid {pid}, window {window}");
        Ok((pid, window))
    }
}

pub fn run(out: Option<PathBuf>) -> i32 {
    let out = out.unwrap_or_else(|| {
        PathBuf::from("artifacts").join(format!(
            "demo-{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S")
        ))
    });
    match run_inner(&out) {
        Ok(()) => {
            println!("demo finished; artifacts in {}", out.display());
            0
        }
        Err(e) => {
            eprintln!("error: demo failed: {e}");
            eprintln!("(partial artifacts in {})", out.display());
            1
        }
    }
}

fn run_inner(out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    eprintln!("starting a headless desktop (Xvfb, D-Bus, AT-SPI, openbox)...");
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
    })
    .map_err(|e| e.to_string())?;
    eprintln!("desktop up on display {}", sandbox.display_name());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut demo = Demo {
        registry: ToolRegistry::new(),
        ctx: ToolContext::for_desktop(sandbox.desktop()),
        out: out.to_path_buf(),
        step: 0,
    };
    runtime.block_on(async {
        let perms = demo.call("check_permissions", json!({})).await?;
        demo.save("permissions.txt", perms.summary.as_bytes())?;

        let (calc_pid, calc_win) = demo.launch("Calculator").await?;
        let calc = demo.observe("calculator", calc_pid, calc_win).await?;
        let digits = calc["elements"]
            .as_array()
            .map(|e| {
                e.iter()
                    .filter(|el| {
                        el["role"] == "button"
                            && el["name"].as_str().is_some_and(|n| n.starts_with('7'))
                    })
                    .count()
            })
            .unwrap_or(0);
        if digits == 0 {
            return Err("the calculator tree has no button 7".to_string());
        }

        let (wf_pid, wf_win) = demo.launch("gtk3-widget-factory").await?;
        demo.observe("widget-factory", wf_pid, wf_win).await?;

        // The widget factory now covers the calculator; its screenshot must still be right.
        let covered = demo
            .call("screenshot", json!({ "window_id": calc_win }))
            .await?;
        if let Some(img) = &covered.image {
            demo.save("calculator-covered.png", &img.data)?;
        }
        let windows = demo.call("list_windows", json!({})).await?;
        demo.save("windows.txt", windows.summary.as_bytes())?;
        Ok::<(), String>(())
    })?;
    drop(sandbox);
    Ok(())
}
