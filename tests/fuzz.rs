//! Fuzzing with zero panics: property tests (proptest) over what comes from elsewhere: tool
//! arguments, trajectory folders, and diff configs. Every case must end in a result or a
//! clear error, never a panic or a hang; each target runs 10,000 cases (`CUA_FUZZ_CASES`
//! for more or fewer) and prints how many it ran.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cua::diff::{DiffConfig, diff_trajectories};
use cua::platform::{Capture, DesktopEnv};
use cua::tools::{ToolContext, ToolRegistry};
use cua::trajectory::read;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

/// No case may take longer than this (a hang is a failure too).
const CASE_BUDGET: Duration = Duration::from_secs(10);

fn cases() -> u32 {
    std::env::var("CUA_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
}

/// Panics anywhere in this process, also those the code catches itself (a diff worker's
/// panic becomes that turn's error): a caught panic is still a bug the fuzzer found.
static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            default(info);
        }));
    });
}

fn runner() -> TestRunner {
    count_panics();
    TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    })
}

/// Strings that mean something somewhere: key names and notations, paths, regex syntax,
/// control characters, huge and empty ones.
fn odd_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_+\\-. ]{0,12}",
        any::<String>(),
        prop::sample::select(vec![
            "",
            "ctrl",
            "0x77",
            "U+0077",
            "0xffffffff",
            "u+110000",
            "return",
            "f99",
            "meta",
            "~",
            "../..",
            "/",
            "/proc/self/mem",
            "turn-00001",
            "(",
            "[[",
            "\\",
            "\u{0}",
            "\u{7f}",
            "é✓",
            "1e400",
            "-0",
            "NaN",
            "s00000002:31",
        ])
        .prop_map(str::to_string),
        (0usize..3).prop_map(|n| "x".repeat([1000, 70_000, 300_000][n])),
    ]
}

/// Any JSON value, with numbers at the edges and nesting a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::sample::select(vec![
            0i64,
            -1,
            1,
            255,
            256,
            65_535,
            i32::MAX as i64,
            i32::MIN as i64,
            u32::MAX as i64,
        ])
        .prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        odd_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::vec((odd_string(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A context with no desktop: tools check their arguments and then fail to connect.
fn no_desktop() -> ToolContext {
    ToolContext::for_session(DesktopEnv::default(), "fuzz")
}

/// Tools whose run would act outside the test (start programs, write or replay folders a
/// random path names): only their argument parsing is fuzzed.
const PARSE_ONLY: &[&str] = &["launch_app", "set_recording", "replay_trajectory"];

#[test]
fn tool_arguments_never_panic_or_hang() {
    let rt = cua::tools::runtime().unwrap();
    let registry = ToolRegistry::new();
    let tools: Vec<(&'static str, Vec<String>)> = registry
        .tools()
        .map(|t| {
            let props = t.input_schema()["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            (t.name(), props)
        })
        .collect();
    let ctx = no_desktop();
    let ran = AtomicUsize::new(0);
    let strategy = (
        any::<Index>(),
        prop::collection::vec((any::<Index>(), any::<bool>(), json_value()), 0..8),
        prop::option::weighted(0.05, json_value()),
    );
    runner()
        .run(&strategy, |(tool, fields, whole)| {
            let (name, props) = &tools[tool.index(tools.len())];
            // Mostly objects of the tool's own fields (and a stray one), sometimes anything.
            let args = whole.unwrap_or_else(|| {
                let mut m = serde_json::Map::new();
                for (key, stray, value) in fields {
                    let key = if stray || props.is_empty() {
                        "stray".to_string()
                    } else {
                        props[key.index(props.len())].clone()
                    };
                    m.insert(key, value);
                }
                Value::Object(m)
            });
            ran.fetch_add(1, Ordering::Relaxed);
            let tool = registry.get(name).unwrap();
            if PARSE_ONLY.contains(name) {
                let _ = tool.validate(&args);
                return Ok(());
            }
            let started = Instant::now();
            let outcome = rt.block_on(async {
                tokio::time::timeout(CASE_BUDGET, registry.call(&ctx, name, args.clone())).await
            });
            prop_assert!(outcome.is_ok(), "{name} {args} hung");
            if let Ok(Err(e)) = outcome {
                prop_assert!(!e.to_string().is_empty(), "{name}: empty error");
            }
            prop_assert!(started.elapsed() < CASE_BUDGET);
            Ok(())
        })
        .unwrap();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic was caught");
    println!(
        "fuzz: tool arguments: {} cases, 0 panics, 0 hangs",
        ran.load(Ordering::Relaxed)
    );
}

/// A small valid trajectory: two turns with states and screenshots.
fn valid_trajectory(dir: &Path, shade: u8) {
    let _ = std::fs::remove_dir_all(dir);
    for turn in 1..=2u32 {
        let t = dir.join(format!("turn-{turn:05}"));
        std::fs::create_dir_all(&t).unwrap();
        let action = json!({
            "schema_version": 1, "turn": turn, "tool": "click",
            "arguments": {"pid": 1, "window_id": 2, "element_index": 0},
            "result_summary": "clicked", "result_error": null, "result": {"effect": "confirmed"},
            "timestamp": "2026-01-01T00:00:00.000Z", "t_ms": 0, "pid": 1, "window_id": 2,
            "app": null, "click_point": {"x": 5, "y": 5},
            "target": {"role": "push_button", "name": "OK", "path": [], "frame": null,
                       "states": [], "element_index": 0},
        });
        std::fs::write(t.join("action.json"), action.to_string()).unwrap();
        let state = json!({
            "pid": 1, "window_id": 2, "element_count": 1,
            "tree_markdown": format!("- window \"W\"\n  - [0] push_button \"OK {turn}\"\n"),
            "elements": [{"index": 0, "role": "push_button", "name": "OK",
                          "frame": {"x": 2, "y": 2, "width": 8, "height": 8}}],
        });
        std::fs::write(t.join("before_state.json"), state.to_string()).unwrap();
        std::fs::write(t.join("app_state.json"), state.to_string()).unwrap();
        let png = cua::images::encode_png(&Capture {
            width: 16,
            height: 12,
            rgba: vec![shade; 16 * 12 * 4],
        })
        .unwrap();
        std::fs::write(t.join("screenshot.png"), png).unwrap();
    }
}

/// What one generated file holds.
#[derive(Debug, Clone)]
enum Content {
    Json(Value),
    /// A valid file cut short.
    Truncated(Value, usize),
    Bytes(Vec<u8>),
    /// A folder where a file should be.
    Folder,
}

fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        4 => json_value().prop_map(Content::Json),
        2 => (json_value(), any::<usize>()).prop_map(|(v, n)| Content::Truncated(v, n)),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Content::Bytes),
        1 => Just(Content::Folder),
    ]
}

/// A turn's files, each present or not, with a valid-looking action sometimes.
fn turn_files() -> impl Strategy<Value = Vec<(&'static str, Content)>> {
    let names = vec![
        "action.json",
        "before_state.json",
        "app_state.json",
        "after_state.json",
        "screenshot.png",
    ];
    let action_like = (odd_string(), json_value(), json_value(), json_value()).prop_map(
        |(tool, args, target, version)| {
            Content::Json(json!({"tool": tool, "arguments": args, "target": target,
                                 "schema_version": version, "redacted": ["text"]}))
        },
    );
    let state_like = (json_value(), json_value()).prop_map(|(md, elements)| {
        Content::Json(json!({"tree_markdown": md, "elements": elements}))
    });
    prop::collection::vec(
        (
            prop::sample::select(names),
            prop_oneof![content(), action_like, state_like],
        ),
        0..6,
    )
}

fn folder_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (1u32..4).prop_map(|n| format!("turn-{n:05}")),
        1 => prop::sample::select(vec![
            "turn-99999", "turn-00000", "turn-1", "turn-0000a", ".turn-00001.tmp",
            "session.json", "turn-00001 ",
        ])
        .prop_map(str::to_string),
        1 => "[a-z\\-0-9.]{1,12}",
    ]
}

fn write_content(path: &Path, content: &Content) {
    let _ = match content {
        Content::Json(v) => std::fs::write(path, v.to_string()),
        Content::Truncated(v, n) => {
            let text = v.to_string();
            std::fs::write(path, &text.as_bytes()[..n % (text.len() + 1)])
        }
        Content::Bytes(b) => std::fs::write(path, b),
        Content::Folder => std::fs::create_dir_all(path),
    };
}

#[test]
fn trajectory_folders_never_panic_or_hang() {
    let root = std::env::temp_dir().join(format!("cua-fuzz-traj-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let valid = root.join("valid");
    valid_trajectory(&valid, 200);
    let config = DiffConfig::default();
    let ran = AtomicUsize::new(0);
    let case_dir: PathBuf = root.join("case");
    let strategy = prop::collection::vec(
        (folder_name(), prop::option::weighted(0.9, turn_files())),
        0..5,
    );
    runner()
        .run(&strategy, |entries| {
            ran.fetch_add(1, Ordering::Relaxed);
            let _ = std::fs::remove_dir_all(&case_dir);
            std::fs::create_dir_all(&case_dir).unwrap();
            for (name, files) in &entries {
                let path = case_dir.join(name);
                match files {
                    Some(files) => {
                        let _ = std::fs::create_dir_all(&path);
                        for (file, content) in files {
                            write_content(&path.join(file), content);
                        }
                    }
                    None => {
                        let _ = std::fs::write(&path, b"not a folder");
                    }
                }
            }
            let started = Instant::now();
            // Every reader: the turn list, each turn's files, replay's postcondition, and
            // the diff both ways and against itself.
            if let Ok(turns) = read::turn_folders(&case_dir) {
                for t in turns {
                    let _ = read::action(&t.dir);
                    let _ = read::state(&t.dir, read::State::Before);
                    let _ = read::state(&t.dir, read::State::After);
                    let _ = cua::replay::postcondition::Postcondition::of_turn(
                        &t.dir,
                        Default::default(),
                    );
                }
            }
            for (a, b) in [
                (&case_dir, &valid),
                (&valid, &case_dir),
                (&case_dir, &case_dir),
            ] {
                match diff_trajectories(a, b, &config) {
                    Ok(_) => {}
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }
            prop_assert!(started.elapsed() < CASE_BUDGET, "{entries:?} took too long");
            Ok(())
        })
        .unwrap();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic was caught");
    println!(
        "fuzz: trajectory folders: {} cases, 0 panics, 0 hangs",
        ran.load(Ordering::Relaxed)
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A TOML value as text: numbers at the edges, strings with regex syntax, arrays.
fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "0",
            "-1",
            "2147483647",
            "-2147483648",
            "4294967296",
            "nan",
            "inf",
            "-inf",
            "1e308",
            "0.5",
            "1.5",
            "-0.0",
            "true",
            "false",
            "[]",
            "{}",
            "\"\"",
        ])
        .prop_map(str::to_string),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        odd_string().prop_map(|s| format!("{s:?}")),
    ]
}

fn toml_line() -> impl Strategy<Value = String> {
    let scalar_keys = prop::sample::select(vec![
        "threshold",
        "max_diff_pixels",
        "max_diff_pixel_ratio",
        "include_anti_aliased",
        "compare_screenshots",
        "compare_tree",
        "unknown_key",
    ]);
    let mask_keys = prop::sample::select(vec!["x", "y", "width", "height", "role", "name"]);
    prop_oneof![
        4 => (scalar_keys, toml_value()).prop_map(|(k, v)| format!("{k} = {v}")),
        3 => prop::collection::vec((mask_keys, toml_value()), 0..6).prop_map(|kv| {
            let body: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("[[mask]]\n{}", body.join("\n"))
        }),
        // A whole rectangle, with numbers at the edges of the i32 range.
        3 => prop::collection::vec(
            prop::sample::select(vec![
                -2147483648i64, -5, 0, 1, 3, 8, 2147483647, 2147483646,
            ]),
            4,
        )
        .prop_map(|v| format!(
            "[[mask]]\nx = {}\ny = {}\nwidth = {}\nheight = {}",
            v[0], v[1], v[2], v[3]
        )),
        2 => (odd_string(), prop::option::of(odd_string())).prop_map(|(p, r)| {
            let mut s = format!("[[redact]]\npattern = {p:?}");
            if let Some(r) = r {
                s.push_str(&format!("\nreplacement = {r:?}"));
            }
            s
        }),
        1 => any::<String>(),
    ]
}

#[test]
fn diff_configs_never_panic_or_hang() {
    let root = std::env::temp_dir().join(format!("cua-fuzz-config-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (a, b) = (root.join("a"), root.join("b"));
    valid_trajectory(&a, 200);
    valid_trajectory(&b, 90);
    let ran = AtomicUsize::new(0);
    let parsed = AtomicUsize::new(0);
    runner()
        .run(&prop::collection::vec(toml_line(), 0..6), |lines| {
            ran.fetch_add(1, Ordering::Relaxed);
            let text = lines.join("\n");
            let started = Instant::now();
            match DiffConfig::from_toml(&text, "fuzz.toml") {
                Err(e) => prop_assert!(e.starts_with("fuzz.toml"), "{e}"),
                Ok(config) => {
                    parsed.fetch_add(1, Ordering::Relaxed);
                    let _ = diff_trajectories(&a, &b, &config);
                }
            }
            prop_assert!(started.elapsed() < CASE_BUDGET, "{text} took too long");
            Ok(())
        })
        .unwrap();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic was caught");
    println!(
        "fuzz: diff configs: {} cases ({} valid configs diffed), 0 panics, 0 hangs",
        ran.load(Ordering::Relaxed),
        parsed.load(Ordering::Relaxed)
    );
    let _ = std::fs::remove_dir_all(&root);
}
