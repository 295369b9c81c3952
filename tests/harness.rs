//! The regression loop as a user runs it, through the `cua` binary: `cua test` over the
//! shipped scenarios (each in its own sandbox) against the checked-in goldens; a
//! deliberately changed fixture app failing with the right turn and reason, checked in the
//! terminal summary, JUnit, and the HTML report rendered by headless Chromium; review,
//! accept and reject; CI never writing goldens; and bad input to `cua diff` / `cua test`
//! exiting 2 with nothing written.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cua(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cua"));
    cmd.args(args)
        .env_remove("CI")
        .env_remove("CUA_FIXTURE_VARIANT");
    cmd
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cua-harness-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `cua test` on a temporary project `dir` (its `harness/`, `goldens/` and `work/`), with
/// `extra` arguments after.
fn cua_test_in(dir: &Path, extra: &[&str]) -> Output {
    let [harness, goldens, work] = ["harness", "goldens", "work"].map(|d| dir.join(d));
    let mut args = vec![
        "test",
        "--harness",
        harness.to_str().unwrap(),
        "--goldens",
        goldens.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
    ];
    args.extend(extra);
    cua(&args).output().unwrap()
}

/// Every path under `dir`, folders included.
fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        out.push(e.path());
        if e.path().is_dir() {
            out.extend(walkdir(&e.path()));
        }
    }
    out
}

/// Every file under `dir` with its size and modification time.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        if m.is_dir() {
            out.extend(listing(&e.path()));
        } else {
            out.push((e.path(), m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

/// Renders a report in headless Chromium and returns the <body> tag after the page's
/// load handler ran (it counts images, broken images and failing turns).
fn rendered_body(index: &Path) -> String {
    let profile = temp("chromium-profile");
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            &format!("--user-data-dir={}", profile.display()),
            "--virtual-time-budget=5000",
            "--dump-dom",
            &format!("file://{}", index.display()),
        ])
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = dom.find("<body").expect("a body in the rendered DOM");
    let end = start + dom[start..].find('>').unwrap();
    format!("{}\n{}", &dom[start..=end], dom)
}

#[test]
fn shipped_scenarios_pass_against_their_goldens_and_ci_writes_nothing_under_goldens() {
    let root = project();
    let before = listing(&root.join("goldens"));
    let sources = listing(&root.join("harness"));
    // The user's home, as cua and the apps would write to it if they leaked: it must stay
    // empty (sandboxed apps get private homes inside their sandbox).
    let home = temp("home");
    let report = root.join("target/cua-report");
    let _ = std::fs::remove_dir_all(&report);
    let junit = report.join("junit.xml");
    let out = cua(&[
        "test",
        "--jobs",
        "2",
        "--report",
        report.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ])
    .current_dir(&root)
    .env("CI", "1")
    .env("HOME", &home)
    .env_remove("XDG_CONFIG_HOME")
    .env_remove("XDG_DATA_HOME")
    .env_remove("XDG_STATE_HOME")
    .env_remove("XDG_CACHE_HOME")
    .output()
    .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let written: Vec<_> = walkdir(&home);
    assert!(
        written.is_empty(),
        "a full cua test wrote into the user's home: {written:?}"
    );
    assert_eq!(
        listing(&root.join("harness")),
        sources,
        "a full cua test wrote beside the scenario sources (bytecode caches?)"
    );
    for scenario in [
        "calculator",
        "calculator-agent",
        "chromium-page",
        "editor-gtk4",
        "fixture",
        "fixture-firefox",
        "fixture-gtk4",
        "fixture-qt5",
        "gnumeric",
        "kcalc",
        "libreoffice-calc",
        "mousepad",
        "mousepad-cua-driver",
        "order-swing",
        "order-tk",
        "widget-factory",
        "xcalc",
        "xcalc-live",
    ] {
        assert!(
            said.contains(&format!("✓ {scenario} (")),
            "{scenario}: {said}"
        );
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"0\""), "{xml}");
    assert!(xml.matches("<testcase").count() >= 18, "{xml}");
    assert!(report.join("index.html").is_file());
    assert_eq!(
        listing(&root.join("goldens")),
        before,
        "CI is set: nothing under goldens/ may change"
    );
}

/// The fixture's scenario and app, copied into a project folder of a test's own.
fn copy_fixture_scenario(dir: &Path) {
    std::fs::create_dir_all(dir.join("harness/apps")).unwrap();
    for f in [
        "harness/fixture.toml",
        "harness/apps/fixture.py",
        "harness/apps/journal.py",
    ] {
        std::fs::copy(project().join(f), dir.join(f)).unwrap();
    }
}

/// A scenario that lists four display servers runs on each: the shipped golden (recorded
/// on X11) passes on sway and KWin, whose runs are named `fixture@wayland` and
/// `fixture@kde` and journal in folders of their own; GNOME, which draws GTK's title bar
/// inside the window, is compared with its own golden (`own_goldens`). A regression fails
/// on all four, on the same turn, with no pending golden written in CI.
#[test]
fn a_scenario_on_four_backends_passes_each_against_its_golden_and_fails_each_on_a_regression() {
    const RUNS: [&str; 4] = ["fixture", "fixture@wayland", "fixture@kde", "fixture@gnome"];
    let dir = temp("both-backends");
    copy_fixture_scenario(&dir);
    for golden in ["fixture", "fixture@gnome"] {
        common::copy_dir(
            &project().join("goldens").join(golden),
            &dir.join("goldens").join(golden),
        );
    }
    let work = dir.join("runs");
    let test = |variant: Option<&str>| {
        let mut cmd = cua(&["test", "fixture", "--work-dir", work.to_str().unwrap()]);
        cmd.current_dir(&dir).env("CI", "true");
        if let Some(v) = variant {
            cmd.env("CUA_FIXTURE_VARIANT", v);
        }
        cmd.output().unwrap()
    };
    let out = test(None);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    for run in RUNS {
        assert!(said.contains(&format!("✓ {run} (5 turns")), "{said}");
    }
    // The other backends' runs drove their own apps: their journals have the effects.
    for run in &RUNS[1..] {
        let journal = std::fs::read_to_string(work.join(run).join("journal.jsonl")).unwrap();
        assert!(
            journal.contains("\"widget\": \"Level\""),
            "{run}: {journal}"
        );
    }

    let out = test(Some("relabel"));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for run in RUNS {
        assert!(said.contains(&format!("✗ {run} (")), "{said}");
    }
    assert_eq!(
        said.matches("label \"Count: 1\" → label \"Total: 1\"")
            .count(),
        RUNS.len(),
        "{said}"
    );
    assert!(!dir.join("goldens/fixture.new").exists());
    assert!(!dir.join("goldens/fixture@gnome.new").exists());
}

#[test]
fn a_changed_fixture_fails_on_the_right_turn_and_accepting_the_change_makes_it_pass() {
    let dir = temp("e2e");
    copy_fixture_scenario(&dir);
    let work = dir.join("runs");
    let test = |variant: Option<&str>, ci: bool, extra: &[&str]| {
        // On X11 alone: the run on both backends has a test of its own.
        let mut args = vec![
            "test",
            "fixture",
            "--backend",
            "x11",
            "--work-dir",
            work.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let mut cmd = cua(&args);
        cmd.current_dir(&dir);
        if let Some(v) = variant {
            cmd.env("CUA_FIXTURE_VARIANT", v);
        }
        if ci {
            cmd.env("CI", "true");
        }
        cmd.output().unwrap()
    };
    let journal = || -> Vec<serde_json::Value> {
        std::fs::read_to_string(work.join("fixture/journal.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };

    // First run: no golden yet → fails and leaves a pending golden; --update makes one.
    let out = test(None, false, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no golden"), "{}", text(&out));
    assert!(dir.join("goldens/fixture.new").is_dir());
    let out = test(None, false, &["--update"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(dir.join("goldens/fixture/turn-00005").is_dir());
    assert!(
        !dir.join("goldens/fixture.new").exists(),
        "a passing run drops the stale pending golden... or --update replaced it"
    );

    // The steps reached the app: its own journal has every effect, in order.
    let events: Vec<(String, String)> = journal()
        .iter()
        .filter(|e| e["event"] != "started" && e["event"] != "button-press")
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_string(),
                e["widget"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("clicked", "Increment"),
        ("clicked", "Increment"),
        ("toggled", "Enable feature"),
        ("changed", "Name"),
        ("value-changed", "Level"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(events, expected);
    let j = journal();
    assert_eq!(
        j.iter().rfind(|e| e["widget"] == "Increment").unwrap()["count"],
        2
    );
    assert_eq!(
        j.iter().rfind(|e| e["widget"] == "Name").unwrap()["text"],
        "cua"
    );
    assert_eq!(
        j.iter().rfind(|e| e["widget"] == "Level").unwrap()["value"],
        40.0
    );

    // A clean second run passes.
    let out = test(None, false, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // A layout change: the two buttons swap places. The reason names the moves before
    // the pixel count.
    let out = test(Some("moved"), true, &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("; layout: button ")
            && said.contains("button \"Increment\" moved (")
            && said.contains("button \"Reset\" moved ("),
        "{said}"
    );

    // The regression, under CI: fails on turn 1 with the label change named; nothing written.
    let goldens_before = listing(&dir.join("goldens"));
    let junit = dir.join("junit.xml");
    let out = test(Some("relabel"), true, &["--junit", junit.to_str().unwrap()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("✗ turn-00001 click"), "{said}");
    assert!(
        said.contains("label \"Count: 1\" → label \"Total: 1\""),
        "{said}"
    );
    assert!(
        said.contains("CI is set: no pending golden written"),
        "{said}"
    );
    assert_eq!(listing(&dir.join("goldens")), goldens_before);
    assert!(!dir.join("goldens/fixture.new").exists());
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"5\"") && xml.contains("failures=\"5\""),
        "{xml}"
    );
    assert!(xml.contains("Total: 1"), "{xml}");
    let out = cua(&["golden", "accept", "fixture"])
        .current_dir(&dir)
        .env("CI", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // Outside CI: a pending golden and an HTML report that renders the failing turns.
    let report = dir.join("report");
    let out = test(
        Some("relabel"),
        false,
        &["--report", report.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(dir.join("goldens/fixture.new/turn-00005").is_dir());
    let body = rendered_body(&report.join("index.html"));
    assert!(body.contains("data-rendered=\"yes\""), "{body}");
    assert!(body.contains("data-failing-turns=\"5\""), "{body}");
    assert!(body.contains("data-broken-images=\"0\""), "{body}");
    assert!(
        body.contains("+  - label \"Total: 1\""),
        "the tree diff of a failing turn"
    );
    assert!(report.join("fixture/turn-00001/diff.png").is_file());

    // Review one turn without a terminal: rejecting turn 1 keeps the golden's turn and the
    // rest stays pending.
    let out = cua(&["golden", "review", "fixture", "--turn", "1", "--reject"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(dir.join("goldens/fixture.new").is_dir());
    let out = cua(&["golden", "review", "fixture"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "no terminal: {}", text(&out));

    // Drop the half-reviewed pending golden and make a fresh one to accept whole.
    let out = cua(&["golden", "reject", "fixture"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = test(Some("relabel"), false, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // Accept the change: the changed app passes, the old one now fails.
    let out = cua(&["golden", "accept", "fixture"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!dir.join("goldens/fixture.new").exists());
    let out = test(Some("relabel"), false, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = test(None, false, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = cua(&["golden", "reject", "fixture"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!dir.join("goldens/fixture.new").exists());

    // A golden whose scenario is gone is reported as obsolete; a backend's own golden
    // belongs to its scenario's file.
    std::fs::create_dir_all(dir.join("goldens/removed-scenario/turn-00001")).unwrap();
    std::fs::create_dir_all(dir.join("goldens/fixture@gnome/turn-00001")).unwrap();
    let out = cua(&["golden", "list"]).current_dir(&dir).output().unwrap();
    let listed = text(&out);
    let line = |name: &str| {
        listed
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed: {listed}"))
            .to_string()
    };
    assert!(line("removed-scenario").contains("obsolete"), "{listed}");
    assert!(line("fixture@gnome").contains("golden"), "{listed}");
    assert!(!line("fixture@gnome").contains("obsolete"), "{listed}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_to_diff_and_test_exits_2_names_the_problem_and_writes_nothing() {
    let dir = temp("bad");
    let golden = project().join("goldens/fixture");
    let good = dir.join("good");
    common::copy_dir(&golden, &good);
    let report = dir.join("report");
    let diff = |a: &Path, b: &Path, extra: &[&str]| {
        let mut args = vec![
            "diff".to_string(),
            a.display().to_string(),
            b.display().to_string(),
            "--report".into(),
            report.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cua(&refs).output().unwrap()
    };

    let out = diff(&golden, &good, &[]);
    assert_eq!(out.status.code(), Some(0), "identical: {}", text(&out));
    std::fs::remove_dir_all(&report).unwrap();

    let check = |out: Output, wanted: &[&str]| {
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        for w in wanted {
            assert!(said.contains(w), "wanted `{w}` in: {said}");
        }
        assert!(!report.exists(), "nothing written on bad input");
    };
    check(diff(&dir.join("nope"), &good, &[]), &["expected", "nope"]);
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    check(
        diff(&golden, &dir.join("empty"), &[]),
        &["holds no turn-NNNNN folders"],
    );

    let corrupt = dir.join("corrupt");
    common::copy_dir(&golden, &corrupt);
    std::fs::write(
        corrupt.join("turn-00003/action.json"),
        "{\"tool\": \"click\",\n  \"arguments\": {",
    )
    .unwrap();
    std::fs::write(
        corrupt.join("turn-00004/screenshot.png"),
        b"\x89PNG not really",
    )
    .unwrap();
    let out = diff(&golden, &corrupt, &[]);
    check(out, &["turn-00003/action.json: corrupt JSON", "line 2"]);
    std::fs::copy(
        golden.join("turn-00003/action.json"),
        corrupt.join("turn-00003/action.json"),
    )
    .unwrap();
    check(
        diff(&golden, &corrupt, &[]),
        &["turn-00004/screenshot.png: unreadable PNG"],
    );

    let config = dir.join("diff.toml");
    std::fs::write(&config, "threshold = 0.1\nmax_diff_pixles = 4\n").unwrap();
    check(
        diff(&golden, &good, &["--config", config.to_str().unwrap()]),
        &["diff.toml", "line 2", "max_diff_pixles"],
    );
    std::fs::write(&config, "[[mask]]\nx = 3\n").unwrap();
    check(
        diff(&golden, &good, &["--config", config.to_str().unwrap()]),
        &["mask[0]"],
    );

    // A bad scenario file: its line and field, exit 2, nothing run.
    std::fs::create_dir_all(dir.join("harness")).unwrap();
    std::fs::write(
        dir.join("harness/broken.toml"),
        "[app]\nname = \"Calculator\"\n\n[[step]]\ntool = \"clik\"\n",
    )
    .unwrap();
    let out = cua(&["test", "broken"]).current_dir(&dir).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("broken.toml:5: step 1 `tool`: unknown tool `clik`; did you mean `click`?"),
        "{said}"
    );
    // Roles, and arguments against the tool's schema, are checked when read too; a
    // scenario may be named by its path.
    std::fs::write(
        dir.join("harness/broken.toml"),
        "[app]\nname = \"Calculator\"\n\n[[step]]\ntool = \"click\"\ntarget = { role = \"button\", name = \"7\" }\n\n[[step]]\ntool = \"click\"\ntarget = { role = \"checkbox\", name = \"Tax\" }\n",
    )
    .unwrap();
    let out = cua(&["test", "harness/broken.toml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains(
            "broken.toml:10: step 2 `target.role`: no role `checkbox`; did you mean `check_box`?"
        ),
        "{said}"
    );
    std::fs::write(
        dir.join("harness/broken.toml"),
        "[app]\nname = \"Calculator\"\n\n[[step]]\ntool = \"type_text\"\nargs = { txt = \"7\" }\n",
    )
    .unwrap();
    let out = cua(&["test", "broken"]).current_dir(&dir).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("broken.toml:6: step 1 `args`") && said.contains("`txt`"),
        "{said}"
    );
    // type_text's own limits too: a control character, a delay out of bounds.
    for (args, field) in [
        (
            "{ text = \"a\\u0007b\" }",
            "`text`: control character U+0007",
        ),
        (
            "{ text = \"7\", delay_ms = 900 }",
            "`delay_ms`: at most 200",
        ),
    ] {
        std::fs::write(
            dir.join("harness/broken.toml"),
            format!(
                "[app]\nname = \"Calculator\"\n\n[[step]]\ntool = \"type_text\"\nargs = {args}\n"
            ),
        )
        .unwrap();
        let out = cua(&["test", "broken"]).current_dir(&dir).output().unwrap();
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(
            said.contains("broken.toml:6: step 1") && said.contains(field),
            "{said}"
        );
    }
    // Outside a project: where it looked.
    let out = cua(&["test"])
        .current_dir(dir.join("harness"))
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("looked for a harness folder at") && said.contains("harness/harness"),
        "{said}"
    );
    let out = cua(&["golden", "list"])
        .current_dir(dir.join("harness"))
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("looked for a harness folder at"), "{said}");
    std::fs::write(dir.join("harness/broken.toml"), "[app]\nname = 3\n").unwrap();
    let out = cua(&["test", "broken"]).current_dir(&dir).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("line 2") && said.contains("name"), "{said}");
    let out = cua(&["test", "no-such-scenario"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no scenario `no-such-scenario`"));
    let out = cua(&["test", "--update"])
        .current_dir(&dir)
        .env("CI", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!dir.join("goldens").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interactive_review_accepts_and_rejects_turn_by_turn_on_a_terminal() {
    let dir = temp("review");
    let goldens = dir.join("goldens");
    common::copy_dir(&project().join("goldens/fixture"), &goldens.join("fixture"));
    common::copy_dir(
        &project().join("goldens/fixture"),
        &goldens.join("fixture.new"),
    );
    let change = |turn: &str, from: &str, to: &str| {
        let path = goldens
            .join("fixture.new")
            .join(turn)
            .join("app_state.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{turn} has {from}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
    };
    change("turn-00002", "Count: 2", "Total: 2");
    change("turn-00004", "Count: 2", "Sum: 2");
    // `script` gives the review a terminal; the answers come through it: accept turn 2,
    // reject turn 4.
    let out = Command::new("script")
        .args([
            "-qec",
            &format!(
                "{} golden review fixture --goldens {} --harness {}",
                env!("CARGO_BIN_EXE_cua"),
                goldens.display(),
                dir.join("harness").display()
            ),
            "/dev/null",
        ])
        .env_remove("CI")
        .stdin(
            std::fs::File::open({
                let answers = dir.join("answers");
                std::fs::write(&answers, "a\nr\n").unwrap();
                answers
            })
            .unwrap(),
        )
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("turn-00002") && said.contains("Total: 2"),
        "{said}"
    );
    assert!(said.contains("1 turn(s) accepted"), "{said}");
    let golden = |turn: &str| {
        std::fs::read_to_string(goldens.join("fixture").join(turn).join("app_state.json")).unwrap()
    };
    assert!(
        golden("turn-00002").contains("Total: 2"),
        "accepted turn taken"
    );
    assert!(
        golden("turn-00004").contains("Count: 2"),
        "rejected turn kept"
    );
    assert!(
        !goldens.join("fixture.new").exists(),
        "every turn decided: pending removed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_step_that_errored_fails_the_run_and_never_becomes_a_golden() {
    // (A misspelt argument or key name no longer gets this far: scenarios are checked when
    // read. An index is the live window's to judge.)
    let dir = temp("unhonoured");
    std::fs::create_dir_all(dir.join("harness")).unwrap();
    std::fs::write(
        dir.join("harness/typo.toml"),
        format!(
            r#"
[app]
path = "{}"
window = "cua fixture"

[[step]]
tool = "click"
target = {{ role = "button", name = "Increment" }}

[[step]]
tool = "click"
args = {{ element_index = 9999 }}
"#,
            project().join("harness/apps/fixture.py").display()
        ),
    )
    .unwrap();
    let goldens = dir.join("goldens");
    let run = |extra: &[&str]| cua_test_in(&dir, extra);
    for extra in [&["--update"][..], &[][..]] {
        let out = run(extra);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains("turn 2 (click): ") && said.contains("out of range"),
            "{said}"
        );
        assert!(
            !goldens.join("typo").exists(),
            "no golden from a failed step: {said}"
        );
        assert!(
            !goldens.join("typo.new").exists(),
            "no pending golden either: {said}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_recorded_launch_binds_to_the_scenario_app_so_the_build_under_test_is_the_one_tested() {
    let dir = temp("bound");
    // The recording was made against another build (`old/`); the scenario's [app] is the
    // project's own copy, which a change then breaks.
    common::copy_dir(&project().join("harness/apps"), &dir.join("old"));
    common::copy_dir(&project().join("harness/apps"), &dir.join("harness/apps"));
    let trajectory = dir.join("trajectories/recorded");
    let turn = |n: u32, action: serde_json::Value| {
        let t = trajectory.join(format!("turn-{n:05}"));
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("action.json"), action.to_string()).unwrap();
    };
    turn(
        1,
        serde_json::json!({"schema_version": 1, "turn": 1, "tool": "launch_app",
            "arguments": {"path": dir.join("old/fixture.py"), "creates_new_application_instance": true},
            "result_error": null, "pid": 1, "window_id": 2}),
    );
    turn(
        2,
        serde_json::json!({"schema_version": 1, "turn": 2, "tool": "click",
            "arguments": {"pid": 1, "window_id": 2, "element_index": 3},
            "result_error": null, "pid": 1, "window_id": 2,
            "app": {"app_name": "fixture.py", "executable": "python3", "window_title": "cua fixture"},
            "target": {"role": "button", "name": "Increment", "path": [], "frame": null, "states": [], "element_index": 3}}),
    );
    std::fs::write(
        dir.join("harness/bound.toml"),
        "trajectory = \"trajectories/recorded\"\n\n[app]\npath = \"harness/apps/fixture.py\"\nwindow = \"cua fixture\"\nenv = { CUA_FIXTURE_JOURNAL = \"{run_dir}/journal.jsonl\" }\n",
    )
    .unwrap();
    let work = dir.join("work");
    let run = |extra: &[&str]| cua_test_in(&dir, extra);
    let out = run(&["--update"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The run's trajectory says what its launch turn bound to, as the scenario writes it.
    let launch: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(work.join("bound/turn-00001/action.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        launch["arguments"],
        serde_json::json!({"path": "harness/apps/fixture.py"}),
        "{launch}"
    );
    assert!(
        launch["result_summary"]
            .as_str()
            .unwrap()
            .contains("bound to the scenario's [app]"),
        "{launch}"
    );
    // One fixture process ran, and it was the scenario's: its journal has the click.
    let journal = std::fs::read_to_string(work.join("bound/journal.jsonl")).unwrap();
    assert_eq!(journal.matches("\"started\"").count(), 1, "{journal}");
    assert!(journal.contains("\"Increment\""), "{journal}");

    // The build under test renames the button: the same recording must now fail.
    let fixture = dir.join("harness/apps/fixture.py");
    let source = std::fs::read_to_string(&fixture).unwrap();
    std::fs::write(
        &fixture,
        source.replace("label=\"Increment\"", "label=\"Add\""),
    )
    .unwrap();
    let out = run(&[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    // Never the button of another name in its place: refused, naming it.
    assert!(
        said.contains("no button \"Increment\"; the window has ")
            && said.contains("button \"Add\"")
            && said.contains("(none pressed)"),
        "{said}"
    );
    let journal = std::fs::read_to_string(work.join("bound/journal.jsonl")).unwrap();
    assert!(!journal.contains("\"Reset\""), "{journal}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn per_turn_review_rejects_turns_of_another_run_and_names_a_turn_that_did_not_change() {
    let dir = temp("turn-review");
    let goldens = dir.join("goldens");
    common::copy_dir(&project().join("goldens/fixture"), &goldens.join("fixture"));
    let pending = goldens.join("fixture.new");
    common::copy_dir(&project().join("goldens/fixture"), &pending);
    // The pending golden is another run: another pid and window id in every turn...
    let first: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(goldens.join("fixture/turn-00001/action.json")).unwrap(),
    )
    .unwrap();
    let (pid, window) = (first["pid"].to_string(), first["window_id"].to_string());
    for turn in std::fs::read_dir(&pending).unwrap().flatten() {
        for file in std::fs::read_dir(turn.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if file.path().extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(file.path()).unwrap();
                let text = text.replace(&pid, "4242424").replace(&window, "77777777");
                std::fs::write(file.path(), text).unwrap();
            }
        }
    }
    // ... and turns 4 and 5 show another counter.
    for turn in ["turn-00004", "turn-00005"] {
        let path = pending.join(turn).join("app_state.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("Count: 2"), "{turn}");
        std::fs::write(&path, text.replace("Count: 2", "Sum: 2")).unwrap();
    }
    let review = |turn: &str| {
        let out = cua(&[
            "golden",
            "review",
            "fixture",
            "--goldens",
            &goldens.display().to_string(),
            "--harness",
            &dir.join("harness").display().to_string(),
            "--turn",
            turn,
            "--reject",
        ])
        .output()
        .unwrap();
        (out.status.code(), text(&out))
    };
    let (code, said) = review("99");
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("`--turn`: turn 99 is not a changed turn of fixture (changed: 4, 5)"),
        "{said}"
    );
    let (code, said) = review("4");
    assert_eq!(code, Some(0), "{said}");
    assert!(pending.exists(), "turn 5 is still undecided: {said}");
    let (code, said) = review("5");
    assert_eq!(code, Some(0), "{said}");
    assert!(
        !pending.exists(),
        "both changed turns rejected: the pending golden goes: {said}"
    );
    let golden =
        std::fs::read_to_string(goldens.join("fixture/turn-00004/app_state.json")).unwrap();
    assert!(golden.contains("Count: 2"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn in_a_sandbox_a_step_that_needs_the_foreground_is_escalated_and_the_run_says_so() {
    // GTK 4 ignores synthetic X events: background keys come back with an escalation to
    // foreground, which cua test takes on its own inside its sandbox.
    let dir = temp("escalate");
    std::fs::create_dir_all(dir.join("harness")).unwrap();
    std::fs::write(
        dir.join("harness/keys.toml"),
        "[app]\nname = \"gnome-calculator\"\n\n[[step]]\ntool = \"press_key\"\nargs = { key = \"7\" }\n\n[[step]]\ntool = \"press_key\"\nargs = { key = \"8\" }\n",
    )
    .unwrap();
    let work = dir.join("work");
    let out = cua_test_in(&dir, &["--update"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let turn = |n: u32| -> serde_json::Value {
        let file = work.join(format!("keys/turn-{n:05}/action.json"));
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
    };
    for (background, foreground) in [(1, 2), (3, 4)] {
        let (b, f) = (turn(background), turn(foreground));
        assert_eq!(
            b["result"]["escalation"]["recommended"], "foreground",
            "{b}"
        );
        assert_eq!(f["arguments"]["delivery_mode"], "foreground", "{f}");
        assert_eq!(f["result"]["escalation"], serde_json::Value::Null, "{f}");
    }
    // The calculator got both keys, once each.
    let state = std::fs::read_to_string(work.join("keys/turn-00004/app_state.json")).unwrap();
    assert!(state.contains("value=\\\"78\\\""), "{state}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flakes_are_named_retries_report_flaky_and_repeats_show_what_moved() {
    let dir = temp("flaky");
    common::copy_dir(&project().join("harness/apps"), &dir.join("harness/apps"));
    // The app's first launch after `fail-next` appears shows another counter label: a
    // failure that goes away on the next run, as a flake does.
    let wrapper = dir.join("harness/apps/flaky.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\nd=$(dirname \"$0\")\nif [ -e \"$d/fail-next\" ]; then rm \"$d/fail-next\"; export CUA_FIXTURE_VARIANT=relabel; fi\nexec /usr/bin/python3 \"$d/fixture.py\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        dir.join("harness/flaky.toml"),
        "[app]\npath = \"harness/apps/flaky.sh\"\nwindow = \"cua fixture\"\n\n[[step]]\ntool = \"click\"\ntarget = { role = \"button\", name = \"Increment\" }\n",
    )
    .unwrap();
    let junit = dir.join("junit.xml");
    let run = |extra: &[&str]| {
        let mut args = vec!["--junit", junit.to_str().unwrap()];
        args.extend(extra);
        cua_test_in(&dir, &args)
    };
    let out = run(&["--update"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let fail_next = || std::fs::write(dir.join("harness/apps/fail-next"), "").unwrap();

    fail_next();
    let out = run(&["--retries", "2"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("⚠ flaky") && said.contains("FLAKY"), "{said}");
    assert!(said.contains("attempt 1 failed: turn 1 (click)"), "{said}");
    assert!(said.contains("1 flaky (passed on a retry)"), "{said}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<flakyFailure"), "{xml}");

    fail_next();
    let out = run(&["--retries", "1", "--fail-on-flaky"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // Without retries the same flake is a plain failure.
    fail_next();
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // --repeat names the turn that moved between runs, and fails the scenario...
    fail_next();
    let out = run(&["--repeat", "2"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("1 turn(s) differed between repeats"),
        "{said}"
    );
    assert!(
        said.contains("repeat 2 differs from repeat 1 at turn 1 (click): tree:")
            && said.contains("Total: 1"),
        "{said}"
    );
    // ... and passes when the runs agree.
    let out = run(&["--repeat", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scenario's mistakes that only a run can show say what was there, quickly: a window
/// title that matches nothing lists the titles showing, and a target that is not in a
/// quiet tree fails after the quiet spell (not the whole timeout), naming the step by
/// number and line and the closest elements.
#[test]
fn a_wrong_window_title_or_target_says_what_was_there_and_a_quiet_tree_fails_fast() {
    let dir = temp("said");
    common::copy_dir(&project().join("harness/apps"), &dir.join("harness/apps"));
    let scenario = |window: &str, timeout: u64, name: &str| {
        std::fs::write(
            dir.join("harness/typo.toml"),
            format!(
                "timeout = {timeout}\n\n[app]\npath = \"harness/apps/fixture.py\"\nwindow = \"{window}\"\n\n[[step]]\ntool = \"click\"\ntarget = {{ role = \"button\", name = \"{name}\" }}\n"
            ),
        )
        .unwrap();
    };
    scenario("cua fixtrue", 6, "Increment");
    let out = cua_test_in(&dir, &["typo"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("its windows showing: \"cua fixture\""),
        "{said}"
    );

    scenario("cua fixture", 120, "Incremnt");
    let started = std::time::Instant::now();
    let report = dir.join("report");
    let out = cua_test_in(&dir, &["typo", "--report", report.to_str().unwrap()]);
    let took = started.elapsed();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("step 1 (") && said.contains("typo.toml:7)"),
        "{said}"
    );
    assert!(
        said.contains("changed nothing for 5 s") && said.contains("button \"Increment\""),
        "{said}"
    );
    assert!(took < std::time::Duration::from_secs(40), "took {took:?}");
    // The report shows the window as it was: its screenshot and tree, beside the error.
    assert!(said.contains("the window then:"), "{said}");
    let body = rendered_body(&report.join("index.html"));
    assert!(body.contains("data-broken-images=\"0\""), "{body}");
    assert!(body.contains("the window when it failed"), "{body}");
    assert!(body.contains("button \"Increment\""), "the tree: {body}");
    assert!(report.join("typo/failure/window.png").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
