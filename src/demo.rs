//! `cua demo`: the README's main job. Starts an embedded headless desktop, launches real
//! apps, observes them through the tools (tree + screenshots), records a calculation on the
//! calculator, relaunches it and replays the recording (recorded again), diffs the two
//! trajectories into an HTML + JUnit report, and finally shows the harness catching a
//! deliberate regression in the fixture app. Every artifact stays in a folder it prints.

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

pub fn run(out: Option<PathBuf>, backend: crate::sandbox::Backend) -> i32 {
    let out = out.unwrap_or_else(|| {
        PathBuf::from("artifacts").join(format!(
            "demo-{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S")
        ))
    });
    match run_inner(&out, backend) {
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

fn run_inner(out: &Path, backend: crate::sandbox::Backend) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    eprintln!(
        "starting a headless desktop ({})...",
        match backend {
            crate::sandbox::Backend::X11 => "Xvfb, D-Bus, AT-SPI, openbox",
            crate::sandbox::Backend::Wayland => "a headless sway, D-Bus, AT-SPI",
            crate::sandbox::Backend::Gnome => "a headless GNOME Shell, D-Bus, AT-SPI",
            crate::sandbox::Backend::Kde => "a headless KWin, D-Bus, AT-SPI",
        }
    );
    let sandbox = Sandbox::start(SandboxOptions {
        width: 1280,
        height: 800,
        backend,
    })
    .map_err(|e| e.to_string())?;
    eprintln!("desktop up on display {}", sandbox.display_name());
    let runtime = crate::tools::runtime().map_err(|e| e.to_string())?;
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

        record_replay_diff(&mut demo, calc_pid).await
    })?;
    drop(sandbox);
    regression(out, backend)
}

/// The display text of the calculator (its editable text's value).
async fn calculator_display(demo: &mut Demo, pid: u64, window: u64) -> Result<String, String> {
    let state = demo
        .call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
        )
        .await?;
    Ok(state.structured["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| {
            e["role"] == "text"
                && e["states"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|s| s == "editable"))
        })
        .and_then(|e| e["value"].as_str())
        .unwrap_or("")
        .to_string())
}

/// Waits (bounded) for the calculator to show `want`: GTK4 shows effects a little later.
async fn expect_display(demo: &mut Demo, pid: u64, window: u64, want: &str) -> Result<(), String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let shown = calculator_display(demo, pid, window).await?;
        if shown == want {
            eprintln!("    the calculator shows {shown}");
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(format!("the calculator shows {shown:?}, expected {want:?}"));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Quits the calculator and starts a new one (focused, on top), optionally resized: the
/// recording and the replay start from the same conditions.
async fn fresh_calculator(
    demo: &mut Demo,
    old_pid: u64,
    size: Option<(u32, u32)>,
) -> Result<(u64, u64), String> {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(old_pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let (pid, window) = demo.launch("Calculator").await?;
    // gnome-calculator's first layout varies by a few pixels between launches: give the
    // new window the recorded size so the screenshots compare.
    if let Some(size) = size {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        crate::harness::pin_size(&demo.ctx, window, size, deadline).await?;
    }
    Ok((pid, window))
}

async fn record_replay_diff(demo: &mut Demo, pid: u64) -> Result<(), String> {
    let recording = demo.out.join("recording");
    let replayed = demo.out.join("replay");
    eprintln!(
        "record: a fresh calculator, 7 × 6 =, into {}",
        recording.display()
    );
    let (pid, window) = fresh_calculator(demo, pid, None).await?;
    demo.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": recording }),
    )
    .await?;
    let state = demo
        .call(
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
        )
        .await?;
    for key in ["7", "×", "6", "="] {
        let index = state.structured["elements"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["role"] == "button" && e["name"] == key)
            .and_then(crate::snapshot::element_index)
            .ok_or_else(|| format!("no button {key}"))?;
        demo.call(
            "click",
            json!({ "pid": pid, "window_id": window, "element_index": index }),
        )
        .await?;
    }
    demo.call("set_recording", json!({ "enabled": false }))
        .await?;
    expect_display(demo, pid, window, "42").await?;

    eprintln!("replay: quit the calculator, start it again, re-drive the recording");
    let size = image::image_dimensions(recording.join("turn-00001/before.png")).ok();
    let (pid, window) = fresh_calculator(demo, pid, size).await?;
    demo.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": replayed }),
    )
    .await?;
    let report = crate::replay::replay(
        &demo.ctx,
        &demo.registry,
        &recording,
        &crate::replay::ReplayOptions {
            delay_ms: 0,
            stop_on_error: true,
            bound_app: None,
            allow_driver_changes: false,
            launch: false,
            apps: Vec::new(),
            volatile: Vec::new(),
            raw: false,
            incidental: Default::default(),
        },
        |t| {
            eprintln!(
                "    turn {} {}: {} ({})",
                t.turn,
                t.tool,
                if t.ok { "ok" } else { "FAILED" },
                t.locator_match.as_deref().unwrap_or("-")
            )
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    demo.call("set_recording", json!({ "enabled": false }))
        .await?;
    if report.failed > 0 {
        return Err(format!("replay failed at turn {:?}", report.first_failure));
    }
    expect_display(demo, pid, window, "42").await?;

    eprintln!("diff: recording vs replay");
    let diff = crate::diff::diff_trajectories(&recording, &replayed, &Default::default())
        .map_err(|e| e.to_string())?;
    let passed = diff.passed;
    let scenario =
        crate::report::ScenarioReport::of_diff("calculator record vs replay".into(), diff, 0);
    crate::report::Outputs {
        report_dir: Some(demo.out.join("report")),
        junit: Some(demo.out.join("report/junit.xml")),
        json: false,
    }
    .emit("cua demo: record, replay, diff", &[scenario])
    .map_err(|e| e.to_string())?;
    if !passed {
        return Err("the replay differs from the recording (see the report)".into());
    }
    Ok(())
}

/// The harness catching a regression: the fixture app's golden is made, then the app is
/// changed (its counter label reads "Total" instead of "Count") and the run fails.
fn regression(out: &Path, backend: crate::sandbox::Backend) -> Result<(), String> {
    let file = Path::new("harness/fixture.toml");
    if !file.is_file() {
        eprintln!("(no harness/fixture.toml here: skipping the regression part)");
        return Ok(());
    }
    eprintln!("regression: the fixture scenario, then the same with a changed label");
    let mut scenario = crate::harness::Scenario::load(file)?;
    scenario.backend = backend;
    let opts = crate::harness::TestOptions {
        harness_dir: PathBuf::from("harness"),
        goldens_dir: out.join("goldens"),
        scenarios: vec!["fixture".into()],
        jobs: 1,
        shard: None,
        update: !crate::golden::in_ci(),
        retries: 0,
        repeat: 1,
        work_dir: out.join("runs"),
        heal: false,
        backend: None,
    };
    if opts.update {
        let made = crate::harness::run_scenario(&scenario, &opts);
        if !made.passed {
            return Err(format!(
                "fixture golden: {}",
                made.error.unwrap_or_default()
            ));
        }
    } else {
        eprintln!("(CI is set: goldens are not written, using the project's goldens)");
    }
    scenario
        .spec
        .app
        .env
        .insert("CUA_FIXTURE_VARIANT".into(), "relabel".into());
    let opts = crate::harness::TestOptions {
        update: false,
        goldens_dir: if opts.update {
            opts.goldens_dir
        } else {
            PathBuf::from("goldens")
        },
        ..opts
    };
    let changed = crate::harness::run_scenario(&scenario, &opts);
    crate::report::Outputs {
        report_dir: Some(out.join("regression-report")),
        junit: Some(out.join("regression-report/junit.xml")),
        json: false,
    }
    .emit(
        "cua demo: a caught regression",
        std::slice::from_ref(&changed),
    )
    .map_err(|e| e.to_string())?;
    if changed.passed {
        return Err("the changed fixture app passed: the regression was not caught".into());
    }
    eprintln!("    the regression was caught, as it should be");
    Ok(())
}
