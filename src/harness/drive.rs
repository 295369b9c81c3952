//! Driving one scenario: its sandbox started, the app launched (window size pinned), and
//! the steps run with recording on, each inline step waiting for its window and target
//! (failing fast with what was there instead).

use super::*;

/// What driving a scenario showed besides its run's turns.
#[derive(Default)]
pub(super) struct Driven {
    /// Replayed turns that never reached their tool (window or element not found: they
    /// leave no turn in the run) or did not make their recorded change.
    pub unhonoured: Vec<verdict::Unhonoured>,
    /// Turns of steps that say `expect_effect = false`.
    pub quiet: Vec<u32>,
    /// The replay's heals, `turn N: …`, for the report.
    pub heals: Vec<String>,
    /// The replay's choices among look-alikes, `turn N: …`.
    pub look_alikes: Vec<String>,
    /// The recording's turns the replay did not send, and why (skipped, or folded into
    /// the retry that did the work): shown in every report.
    pub not_replayed: Vec<String>,
}

/// Starts the sandbox, launches the app, and records the steps into `run_dir` (which
/// also receives files the app writes there, such as the fixture's journal; the diff reads
/// only turn folders). With the `golden` the run is compared with, each inline step's turn
/// waits for its golden turn's change before its after-state is read ([`inline_steps`]).
pub(super) fn drive(
    scenario: &Scenario,
    run_dir: &Path,
    golden: Option<&Path>,
) -> Result<Driven, String> {
    if run_dir.exists() {
        std::fs::remove_dir_all(run_dir)
            .map_err(|e| format!("cannot empty {}: {e}", run_dir.display()))?;
    }
    std::fs::create_dir_all(run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let run_dir = run_dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let sandbox = Sandbox::start(SandboxOptions {
        width: scenario.screen.0,
        height: scenario.screen.1,
        backend: scenario.backend,
    })
    .map_err(|e| format!("sandbox: {e}"))?;
    let mut desktop = sandbox.desktop();
    desktop.app_env = scenario
        .spec
        .app
        .env
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.replace("{run_dir}", &run_dir.to_string_lossy()),
            )
        })
        .collect();
    let ctx = ToolContext::for_desktop(desktop);
    let registry = ToolRegistry::new();
    let runtime = crate::tools::runtime().map_err(|e| format!("async runtime: {e}"))?;
    let result = runtime.block_on(async {
        let (pid, window) = launch(&ctx, &registry, scenario).await?;
        registry
            .call(
                &ctx,
                "set_recording",
                json!({ "enabled": true, "output_dir": run_dir }),
            )
            .await
            .map_err(|e| format!("set_recording: {e}"))?;
        // Compared with goldens: each turn's after-state is the stable window; a replayed
        // turn's is read once its recorded change has shown (as `cua replay` checks it), an
        // inline step's once its golden turn's change has.
        ctx.recorder.settle_each_turn(crate::recording::EachTurn {
            timeout: scenario.settle_timeout(),
            after_check: scenario.spec.trajectory.is_some() || golden.is_some(),
            incidental: scenario.spec.diff.incidental(),
        });
        let steps = match &scenario.spec.trajectory {
            Some(t) => {
                let app = crate::replay::BoundApp {
                    pid,
                    window_id: window,
                    launch_args: app_as_written(&scenario.spec.app),
                };
                let volatile = scenario.spec.diff.volatile_patterns();
                let incidental = scenario.spec.diff.incidental();
                replay_steps(
                    &ctx,
                    &registry,
                    &scenario.root.join(t),
                    app,
                    volatile,
                    incidental,
                )
                .await
            }
            None => inline_steps(&ctx, &registry, scenario, (pid, window), golden)
                .await
                .map(|quiet| Driven {
                    quiet,
                    ..Driven::default()
                }),
        };
        let stopped = registry
            .call(&ctx, "set_recording", json!({ "enabled": false }))
            .await
            .map_err(|e| format!("set_recording off: {e}"));
        if steps.is_err() {
            keep_failure_state(&ctx, &registry, pid, window, &run_dir).await;
        }
        stopped.and(steps)
    });
    drop(sandbox);
    result
}

pub(super) async fn launch(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    scenario: &Scenario,
) -> Result<(u32, u64), String> {
    let app = &scenario.spec.app;
    let mut args = serde_json::Map::new();
    if let Some(n) = &app.name {
        args.insert("name".into(), json!(n));
    }
    if let Some(p) = &app.path {
        args.insert(
            "path".into(),
            json!(
                scenario
                    .root
                    .join(p)
                    .canonicalize()
                    .map_err(|e| format!("app.path: {e}"))?
            ),
        );
    }
    if !app.args.is_empty() {
        args.insert("additional_arguments".into(), json!(app.args));
    }
    if !app.urls.is_empty() {
        let urls: Vec<String> = app
            .urls
            .iter()
            .map(|u| {
                let local = scenario.root.join(u);
                if !u.contains("://") && local.exists() {
                    local
                        .canonicalize()
                        .map(|p| format!("file://{}", p.display()))
                        .unwrap_or_else(|_| u.clone())
                } else {
                    u.clone()
                }
            })
            .collect();
        args.insert("urls".into(), json!(urls));
    }
    args.insert("creates_new_application_instance".into(), json!(true));
    let label = app.name.as_deref().or(app.path.as_deref()).unwrap_or("app");
    // An app that never shows an accessible window is started once more: on a loaded
    // machine a first start can miss (seen once in CI: GTK3 widget factory, no tree in
    // 30 s). Both attempts' last observations go into the error.
    let mut seen = Vec::new();
    for _attempt in 0..2 {
        let wait = scenario.ready_timeout() / 2;
        match launch_once(ctx, registry, app, Value::Object(args.clone()), wait).await {
            Ok(found) => return Ok(found),
            Err((pid, why)) => {
                seen.push(why);
                if let Some(pid) = pid {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
        }
    }
    Err(format!("{label}: {}", seen.join("; then, started again: ")))
}

/// The window of `pid` whose title holds `title`, from list_windows' answer; else, where
/// windows show, which ones (a misspelt `window` is then plain to see).
fn window_titled(listed: &Value, pid: u32, title: &str) -> (Option<u64>, Option<String>) {
    let windows: Vec<&Value> = listed["windows"].as_array().into_iter().flatten().collect();
    let ours: Vec<&Value> = windows
        .iter()
        .copied()
        .filter(|w| w["pid"].as_u64() == Some(pid as u64))
        .collect();
    let found = ours
        .iter()
        .find(|w| w["title"].as_str().is_some_and(|t| t.contains(title)))
        .and_then(|w| w["window_id"].as_u64());
    if found.is_some() || windows.is_empty() {
        return (found, None);
    }
    let (whose, shown) = match ours.is_empty() {
        true => ("other apps' windows", &windows),
        false => ("its windows", &ours),
    };
    let titles: Vec<String> = shown
        .iter()
        .map(|w| format!("\"{}\"", w["title"].as_str().unwrap_or("")))
        .collect();
    (
        None,
        Some(format!("{whose} showing: {}", titles.join(", "))),
    )
}

/// One launch and the wait for its window and tree; on failure the pid (to stop it) and
/// what was last seen.
pub(super) async fn launch_once(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    app: &AppSpec,
    args: Value,
    wait: Duration,
) -> Result<(u32, u64), (Option<u32>, String)> {
    let out = registry
        .call(ctx, "launch_app", args)
        .await
        .map_err(|e| (None, format!("launch_app: {e}")))?;
    let pid = out.structured["pid"]
        .as_u64()
        .ok_or((None, "launch_app returned no pid".to_string()))? as u32;
    let deadline = Instant::now() + wait;
    let title = app.window.clone().unwrap_or_default();
    let mut last = String::from("no window yet");
    loop {
        let listed = registry
            .call(ctx, "list_windows", json!({}))
            .await
            .map_err(|e| (Some(pid), format!("list_windows: {e}")))?;
        let (found, showing) = window_titled(&listed.structured, pid, &title);
        if let Some(showing) = showing {
            last = showing;
        }
        if let Some(window) = found {
            // The window is there; wait for its accessibility tree too.
            let state = registry
                .call(
                    ctx,
                    "get_window_state",
                    json!({ "pid": pid, "window_id": window, "include_screenshot": false }),
                )
                .await;
            match state {
                Ok(s) if s.structured["element_count"].as_u64().unwrap_or(0) > 0 => {
                    if let Some(size) = &app.size {
                        let size = crate::sandbox::parse_size(size).map_err(|e| (Some(pid), e))?;
                        pin_size(ctx, window, size, deadline + wait)
                            .await
                            .map_err(|e| (Some(pid), format!("`app.size`: {e}")))?;
                    }
                    return Ok((pid, window));
                }
                Ok(s) => {
                    last = format!(
                        "window {window} has no accessible element ({})",
                        s.structured["degraded_reason"]
                            .as_str()
                            .unwrap_or("empty tree")
                    )
                }
                Err(e) => last = format!("window {window}: get_window_state: {e}"),
            }
        } else if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err((None, format!("pid {pid} exited before showing a window")));
        }
        if Instant::now() >= deadline {
            return Err((
                Some(pid),
                format!(
                    "no window{} with an accessibility tree after {} s (last seen: {last})",
                    if title.is_empty() {
                        String::new()
                    } else {
                        format!(" titled \"…{title}…\"")
                    },
                    wait.as_secs()
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Resizes the window and waits until its screenshot has that size.
pub async fn pin_size(
    ctx: &ToolContext,
    window: u64,
    (width, height): (u32, u32),
    deadline: Instant,
) -> Result<(), String> {
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    loop {
        let shot = platform
            .capture_window(window)
            .await
            .map_err(|e| format!("capture: {e}"))?;
        if (shot.width, shot.height) == (width, height) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the window stays {}x{}, not {width}x{height}",
                shot.width, shot.height
            ));
        }
        platform
            .resize_window(window, width, height)
            .await
            .map_err(|e| format!("resize: {e}"))?;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The scenario's `[app]` as launch_app arguments, paths as the scenario writes them
/// (relative to the project root), so a run's trajectory reads the same in every checkout.
pub(super) fn app_as_written(app: &AppSpec) -> Value {
    let mut args = serde_json::Map::new();
    if let Some(n) = &app.name {
        args.insert("name".into(), json!(n));
    }
    if let Some(p) = &app.path {
        args.insert("path".into(), json!(p));
    }
    if !app.args.is_empty() {
        args.insert("additional_arguments".into(), json!(app.args));
    }
    if !app.urls.is_empty() {
        args.insert("urls".into(), json!(app.urls));
    }
    Value::Object(args)
}

/// Replays a scenario's recording against its running app. Dispatched turns are recorded
/// (the verdict and the diff judge them); turns that never ran, or whose recorded change
/// did not happen, are handed back, and so are the heals.
pub(super) async fn replay_steps(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    dir: &Path,
    app: crate::replay::BoundApp,
    volatile: Vec<regex::Regex>,
    incidental: crate::snapshot::incidental::Incidental,
) -> Result<Driven, String> {
    let opts = ReplayOptions {
        bound_app: Some(app),
        volatile,
        incidental,
        ..ReplayOptions::default()
    };
    let report = crate::replay::replay(ctx, registry, dir, &opts, |_| {})
        .await
        .map_err(|e| format!("replay {}: {e}", dir.display()))?;
    let heals = report
        .turns
        .iter()
        .filter_map(|t| Some(format!("turn {}: {}", t.turn, t.heal.as_ref()?)))
        .collect();
    let look_alikes = report
        .turns
        .iter()
        .filter_map(|t| Some(format!("turn {}: {}", t.turn, t.look_alikes.as_ref()?)))
        .collect();
    let not_replayed = report
        .turns
        .iter()
        .flat_map(|t| t.left_out())
        .map(|line| format!("not replayed: {line}"))
        .collect();
    let unhonoured = report
        .turns
        .into_iter()
        .filter(|t| !t.ok)
        .map(|t| verdict::Unhonoured {
            turn: t.turn,
            tool: t.tool,
            reason: if t.dispatched {
                format!("the recording's turn ran, but {}", t.result_summary)
            } else {
                format!("the recording's turn was never run: {}", t.result_summary)
            },
        })
        .collect();
    Ok(Driven {
        unhonoured,
        heals,
        look_alikes,
        not_replayed,
        ..Driven::default()
    })
}

/// Saves what the window shows (screenshot and tree) in the run folder, for the report of
/// a step that failed before its turn ran. Best effort: the window may be gone.
pub(super) async fn keep_failure_state(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    pid: u32,
    window: u64,
    run_dir: &Path,
) {
    use crate::report::FailureState;
    let shot = run_dir.join(FailureState::SCREENSHOT);
    let state = registry
        .call(
            ctx,
            "get_window_state",
            json!({ "pid": pid, "window_id": window, "screenshot_out_file": shot, "max_image_dimension": 0 }),
        )
        .await;
    if let Ok(state) = state {
        let tree = state.structured["tree_markdown"].as_str().unwrap_or("");
        let _ = crate::files::write_atomic(&run_dir.join(FailureState::TREE), tree.as_bytes());
    }
}

/// Runs the steps; returns the turns of steps that expect no effect. Recording starts
/// after the launch, so turn 1 is the first step's; a step escalated to the foreground
/// takes two turns. A step whose target never shows ends the run, named by number and line.
///
/// With a `golden`, each step waits (bounded, as a replay checks its turns) for the change
/// its golden turn made before its after-state is read: an app that shows part of a change
/// late and without an event (Gnumeric's `Sum =` label) is read once it has, not between.
/// The wait gives no verdict: the diff against the golden does.
pub(super) async fn inline_steps(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    scenario: &Scenario,
    (pid, window): (u32, u64),
    golden: Option<&Path>,
) -> Result<Vec<u32>, String> {
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    use crate::replay::postcondition::{Postcondition, Reading};
    let reading = Reading {
        volatile: scenario.spec.diff.volatile_patterns(),
        incidental: scenario.spec.diff.incidental(),
        ..Default::default()
    };
    let mut turn = 1;
    let mut quiet = Vec::new();
    for (i, step) in scenario.spec.step.iter().enumerate() {
        let mut args = step.args.clone().unwrap_or(json!({}));
        let schema = registry
            .get(&step.tool)
            .map_err(|e| e.to_string())?
            .input_schema();
        let takes = |k: &str| schema["properties"].get(k).is_some();
        if takes("pid") && args.get("pid").is_none() {
            args["pid"] = json!(pid);
        }
        if takes("window_id") && args.get("window_id").is_none() {
            args["window_id"] = json!(window);
        }
        if let Some(target) = &step.target {
            let wait = scenario.ready_timeout();
            let index = wait_for_target(ctx, registry, pid, window, target, wait)
                .await
                .map_err(|e| format!("{}: {e}", scenario.step_label(i)))?;
            args["element_index"] = json!(index);
            // The target was resolved in the snapshot just taken.
            if let Some(fields) = args.as_object_mut() {
                fields.remove("snapshot_id");
            }
        }
        // Only what happens after the call counts: the window as it is just before.
        let golden_turn = |n: u32| golden.map(|g| g.join(crate::trajectory::turn_dir_name(n)));
        let waited_turn = |n: u32| golden_turn(n).filter(|t| tree_waited_for(t, scenario));
        let first_turn = turn;
        let expected = waited_turn(turn);
        let live_before = match expected {
            Some(_) => window_markdown(platform.as_ref(), pid, window).await,
            None => None,
        };
        // A failed step is recorded as a failed turn; the verdict and the diff judge it.
        let calls = crate::replay::escalate::call(ctx, registry, &step.tool, args, None)
            .await
            .calls;
        if step.expect_effect == Some(false) {
            quiet.extend(turn..turn + calls);
        }
        turn += calls;
        if golden.is_some() {
            // The step's last call is the turn whose after-state is read (an escalated
            // step's second, whose golden turn is looked at only now).
            let last = match turn - 1 == first_turn {
                true => expected,
                false => waited_turn(turn - 1),
            };
            let change = last.and_then(|t| Postcondition::of_turn(&t, reading.clone()));
            let mut shown = None;
            if let (Some(change), Some((info, before))) = (change, &live_before) {
                if change
                    .wait(platform.as_ref(), pid, info, before)
                    .await
                    .is_ok()
                {
                    shown = Some(Instant::now());
                }
            }
            ctx.recorder.turn_checked(shown).await;
        }
    }
    Ok(quiet)
}

/// Whether an inline step waits for its golden turn's change in the tree: not when the
/// scenario does not compare trees, nor when the golden read the window by OCR (a glyph
/// read two ways is no change to wait for).
fn tree_waited_for(golden_turn: &Path, scenario: &Scenario) -> bool {
    use crate::trajectory::read::{State, state};
    let before = state(golden_turn, State::Before).ok().flatten();
    scenario.spec.diff.compare_tree
        && before.is_some_and(|b| !crate::snapshot::text::state_read_by_ocr(&b))
}

/// The window and its tree as it reads now; None when it cannot be read (the step's turn
/// then records what happened).
async fn window_markdown(
    platform: &dyn crate::platform::Platform,
    pid: u32,
    window: u64,
) -> Option<(crate::platform::WindowInfo, String)> {
    let info = crate::tools::window_of(platform, Some(pid), window)
        .await
        .ok()?;
    let markdown = crate::snapshot::window_markdown(platform, pid, &info)
        .await
        .ok()?;
    Some((info, markdown))
}

/// The element index of a step's target, waiting (bounded by `wait`) for it to show. The
/// wait ends early when nothing matches and the app has been quiet for [`TARGET_QUIET`]:
/// no accessibility event from it, and its tree reads the same, unless an element of the
/// target's role still has no name.
pub(super) async fn wait_for_target(
    ctx: &ToolContext,
    registry: &ToolRegistry,
    pid: u32,
    window: u64,
    target: &TargetSpec,
    wait: Duration,
) -> Result<usize, String> {
    let started = Instant::now();
    let deadline = started + wait;
    let platform = ctx.platform().await.map_err(|e| e.to_string())?;
    // The last sign of life: an accessibility event from the app, or a tree that read
    // differently from the read before (for apps whose events are not seen).
    let mut changed = started;
    let mut last_tree = String::new();
    loop {
        let (state, snapshot) = registry
            .read_window(ctx, pid, window)
            .await
            .map_err(|e| format!("get_window_state: {e}"))?;
        let tree = state.structured["tree_markdown"].as_str().unwrap_or("");
        if tree != last_tree {
            changed = Instant::now();
            last_tree = tree.to_string();
        }
        let matches: Vec<usize> = (0..snapshot.elements.len())
            .filter(|&i| {
                let n = &snapshot.tree.nodes[snapshot.elements[i]];
                n.role == target.role && n.name == target.name
            })
            .collect();
        if let Some(&i) = matches.get(target.nth) {
            return Ok(i);
        }
        if let Some(event) = platform.app_activity(pid).await.and_then(|a| a.last) {
            changed = changed.max(event);
        }
        // An unnamed element of the target's role may be the target before the app named
        // it: Chromium once left a labelled check box nameless for over 5 s of quiet under
        // CI load. A quiet tree is conclusive only without one; else the full wait runs.
        let unnamed_kin = !target.name.is_empty()
            && snapshot.elements.iter().any(|&n| {
                let n = &snapshot.tree.nodes[n];
                n.role == target.role && n.name.is_empty()
            });
        let gave_up = if Instant::now() >= deadline {
            Some(format!("after {} s", wait.as_secs()))
        } else {
            (!unnamed_kin && changed.elapsed() >= TARGET_QUIET).then(|| {
                format!(
                    "and the app has changed nothing for {} s",
                    TARGET_QUIET.as_secs()
                )
            })
        };
        if let Some(why) = gave_up {
            return Err(format!(
                "target {} {:?} (nth {}): {} match(es) {why}; closest: {}",
                target.role,
                target.name,
                target.nth,
                matches.len(),
                closest_elements(&snapshot, target)
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Up to five elements nearest a target: the same role or name first, then names close
/// to it.
pub(super) fn closest_elements(snapshot: &crate::tools::Snapshot, target: &TargetSpec) -> String {
    let mut scored: Vec<(usize, usize, &crate::platform::AxNode)> = snapshot
        .elements
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let node = &snapshot.tree.nodes[n];
            let distance = strsim::levenshtein(&node.role, &target.role)
                + strsim::levenshtein(&node.name, &target.name);
            (distance, i, node)
        })
        .collect();
    scored.sort_by_key(|(d, i, _)| (*d, *i));
    let near: Vec<String> = scored
        .iter()
        .take(5)
        .map(|(_, i, n)| format!("[{i}] {} {:?}", n.role, n.name))
        .collect();
    if near.is_empty() {
        "none (the window has no elements)".into()
    } else {
        near.join(", ")
    }
}
