//! The replay mutation suite: one recording of the order form's base build (GTK 3:
//! harness/apps/order_gtk3.py; Qt 5: order_qt.py), replayed on changed builds of it, each
//! three times on a fresh app. Cosmetic builds must heal and say how; breaking builds must fail with a reason
//! that names the element. Whatever the replay says, the app's own journal is the truth:
//! a replay that reports success must have left the recorded order, and no replay may ever
//! press an element outside the recorded flow (Clear, or a look-alike "Add").

mod common;

use std::path::Path;

use common::copy_dir;
use common::order_form::{Form, Run};
use cua::replay::{ReplayOptions, ReplayReport};
use cua::sandbox::Sandbox;
use serde_json::{Value, json};

const RUNS: usize = 3;

/// The recorded flow's end state: the order's lines and total.
fn recorded_order() -> (Vec<String>, i64) {
    (
        vec![
            "3 × apple (gift)".into(),
            "2 × apple".into(),
            "2 × apple".into(),
        ],
        7,
    )
}

/// Replays `dir` on the running form, stopping at the first failed turn.
fn replay_stopping(run: &Run, dir: &Path) -> ReplayReport {
    let opts = ReplayOptions {
        stop_on_error: true,
        ..ReplayOptions::default()
    };
    run.replay(dir, &opts)
}

/// What the app's journal says happened: the order at the end, and every click it got.
struct Journal {
    lines: Vec<String>,
    total: i64,
    clicks: Vec<String>,
}

fn read_journal(path: &Path) -> Journal {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut journal = Journal {
        lines: Vec::new(),
        total: 0,
        clicks: Vec::new(),
    };
    for event in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        match event["event"].as_str() {
            Some("order") => {
                journal.lines = serde_json::from_value(event["lines"].clone()).unwrap();
                journal.total = event["total"].as_i64().unwrap();
            }
            Some("clicked") => journal
                .clicks
                .push(event["widget"].as_str().unwrap().into()),
            _ => {}
        }
    }
    journal
}

/// Records the flow on the base build: an item, a quantity, gift wrap on, Add; gift wrap
/// off, another quantity, Add twice.
fn record(run: &Run, dir: &Path, journal: &Path) {
    let (pid, window) = run.launch("", journal);
    run.call(
        "set_recording",
        json!({ "enabled": true, "output_dir": dir }),
    );
    let act = |tool: &str, role: &str, name: &str, extra: Value| {
        let index = run.element(&pid, &window, role, name)["element_index"].clone();
        let mut args = json!({ "pid": pid, "window_id": window, "element_index": index });
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        run.call(tool, args);
    };
    act("type_text", "text", "Item", json!({ "text": "apple" }));
    act("type_text", "text", "Quantity", json!({ "text": "3" }));
    let check = match run.form.gtk4 {
        true => json!({ "delivery_mode": "foreground" }),
        false => json!({}),
    };
    act("click", "check_box", "Gift wrap", check.clone());
    act("click", "button", "Add", json!({}));
    act("click", "check_box", "Gift wrap", check);
    act("set_value", "text", "Quantity", json!({ "value": "2" }));
    act("click", "button", "Add", json!({}));
    act("click", "button", "Add", json!({}));
    run.call("set_recording", json!({ "enabled": false }));
    run.quit(&pid);
    let made = read_journal(journal);
    assert_eq!(
        (made.lines, made.total),
        recorded_order(),
        "the recording itself"
    );
}

/// Replays the recording on `variant` RUNS times; each run's report and journal.
fn replay_on(
    run: &Run,
    recording: &Path,
    base: &Path,
    variant: &str,
) -> Vec<(ReplayReport, Journal)> {
    (0..RUNS)
        .map(|i| {
            let journal = base.join(format!("{variant}-{i}.jsonl"));
            let (pid, _) = run.launch(variant, &journal);
            let report = replay_stopping(run, recording);
            run.quit(&pid);
            let journal = read_journal(&journal);
            match report.turns.iter().find(|t| !t.ok) {
                None => eprintln!(
                    "{} {variant:>13} run {i}: passed, heals {:?}",
                    run.form.script,
                    heals(&report)
                ),
                Some(t) => eprintln!(
                    "{} {variant:>13} run {i}: turn {} failed: {}",
                    run.form.script, t.turn, t.result_summary
                ),
            }
            // Never a silent incorrect success, never a press outside the flow.
            if report.failed == 0 {
                assert_eq!(
                    (&journal.lines, journal.total),
                    (&recorded_order().0, recorded_order().1),
                    "{variant} run {i}: the replay said yes to a wrong run: {:#?}",
                    report.turns
                );
            }
            assert!(
                journal.clicks.iter().all(|c| c == "Add"),
                "{variant} run {i}: pressed {:?}: {:#?}",
                journal.clicks,
                report.turns
            );
            (report, journal)
        })
        .collect()
}

/// `cua replay --heal` on a healing build writes what it met as the pending change
/// `NAME.new`; accepted (`cua golden accept`), the next replay on that build matches
/// exactly, nothing healed, and leaves the recorded order.
fn heal_is_written_back_and_then_matches(
    run: &Run,
    sandbox: &Sandbox,
    recording: &Path,
    base: &Path,
) -> Result<(), String> {
    let healable = base.join("healable");
    copy_dir(recording, &healable);
    let desktop = sandbox.desktop();
    let cua = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cua"));
        cmd.args(args)
            .env("DISPLAY", desktop.display.clone().unwrap_or_default())
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                desktop.dbus_address.clone().unwrap_or_default(),
            )
            .env(
                "CUA_SANDBOX_DIR",
                desktop.sandbox_dir.clone().unwrap_or_default(),
            )
            .env_remove("CI");
        cmd.output().unwrap()
    };
    let variant = "relabel_gift";
    let (pid, _) = run.launch(variant, &base.join("heal-1.jsonl"));
    let out = cua(&[
        "replay",
        "--heal",
        "--delay-ms",
        "0",
        healable.to_str().unwrap(),
    ]);
    run.quit(&pid);
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !said.contains("healed: the pending change is") {
        return Err(format!("cua replay --heal: {}\n{said}", out.status));
    }
    let accepted = cua(&[
        "golden",
        "accept",
        "healable",
        "--goldens",
        base.to_str().unwrap(),
    ]);
    if !accepted.status.success() || base.join("healable.new").exists() {
        return Err(format!(
            "cua golden accept: {}",
            String::from_utf8_lossy(&accepted.stderr)
        ));
    }
    let journal = base.join("heal-2.jsonl");
    let (pid, _) = run.launch(variant, &journal);
    let report = replay_stopping(run, &healable);
    run.quit(&pid);
    let journal = read_journal(&journal);
    if report.failed > 0 || !heals(&report).is_empty() {
        return Err(format!("after accepting the heal: {:#?}", report.turns));
    }
    if (journal.lines, journal.total) != recorded_order() {
        return Err("after accepting the heal the order is not the recorded one".into());
    }
    Ok(())
}

fn heals(report: &ReplayReport) -> Vec<String> {
    report.turns.iter().filter_map(|t| t.heal.clone()).collect()
}

#[test]
fn gtk3_cosmetic_builds_heal_and_say_how_breaking_builds_fail_naming_the_element() {
    mutation_suite(Form {
        script: "order_gtk3.py",
        args: &[],
        gtk4: false,
    });
}

#[test]
fn gtk4_cosmetic_builds_heal_and_say_how_breaking_builds_fail_naming_the_element() {
    mutation_suite(Form {
        script: "order_gtk4.py",
        args: &[],
        gtk4: true,
    });
}

#[test]
fn qt5_cosmetic_builds_heal_and_say_how_breaking_builds_fail_naming_the_element() {
    mutation_suite(Form {
        script: "order_qt.py",
        args: &["--qt", "5"],
        gtk4: false,
    });
}

fn mutation_suite(form: Form) {
    let (sandbox, run, base) = Run::start("mutations", form);
    let recording = base.join("recorded");
    record(&run, &recording, &base.join("recorded.jsonl"));

    // Cosmetic: every run passes, with the heal named where the element changed (None: an
    // unchanged tree, nothing may be healed; "": the form moved, a heal may be named).
    let cosmetic: &[(&str, Option<&str>)] = &[
        ("", None),
        ("large", None),
        ("dark", None),
        ("tooltips", None),
        (
            "relabel_add",
            Some("button \"Add\" → button \"Add item\" (name contains)"),
        ),
        (
            "case_add",
            Some("button \"Add\" → button \"ADD\" (case, spacing or mnemonic)"),
        ),
        (
            "reorder",
            Some("button \"Add\" found by role and name (its place in the window changed)"),
        ),
        (
            "relabel_gift",
            Some("check_box \"Gift wrap\" → check_box \"Gift wrap (free)\" (name contains)"),
        ),
        ("section", Some("")),
    ];
    let mut failures = Vec::new();
    for (variant, heal) in cosmetic {
        for (i, (report, _)) in replay_on(&run, &recording, &base, variant)
            .iter()
            .enumerate()
        {
            if report.failed > 0 {
                failures.push(format!("{variant} run {i} failed: {:#?}", report.turns));
                continue;
            }
            let healed = heals(report);
            match heal {
                None if !healed.is_empty() => failures.push(format!(
                    "{variant} run {i}: healed an unchanged form: {healed:?}"
                )),
                // Moved, whether its path shows it depends on the toolkit's tree.
                Some("") | None => {}
                Some(h) if !healed.iter().any(|x| x.contains(h)) => {
                    failures.push(format!("{variant} run {i}: no heal {h:?} in {healed:?}"))
                }
                Some(_) => {}
            }
        }
    }

    // Breaking: every run fails, at the turn that meets the change, naming the element.
    let breaking: &[(&str, u32, &[&str])] = &[
        (
            "subtract",
            4,
            &["expected label \"Total: 3\", the app shows label \"Total: -3\""],
        ),
        ("double", 4, &["3 × apple (gift)"]),
        ("wrong_name", 4, &["3 × apple (gift)"]),
        (
            "no_add",
            4,
            &["no button \"Add\"; nearest is button \"Clear\" (not pressed)"],
        ),
        ("disabled_add", 4, &["button \"Add\" is disabled"]),
        ("refuse_qty", 2, &["text \"Quantity\""]),
        ("duplicate_add", 4, &["2 elements fit button \"Add\""]),
    ];
    for (variant, turn, reasons) in breaking {
        for (i, (report, _)) in replay_on(&run, &recording, &base, variant)
            .iter()
            .enumerate()
        {
            let failed = report.turns.iter().find(|t| !t.ok);
            match failed {
                None => failures.push(format!("{variant} run {i} passed: {:#?}", report.turns)),
                Some(t) if t.turn != *turn || !reasons.iter().all(|r| t.result_summary.contains(r)) => {
                    failures.push(format!(
                        "{variant} run {i}: turn {} failed with {:?}; expected turn {turn} naming {reasons:?}",
                        t.turn, t.result_summary
                    ))
                }
                _ => {}
            }
        }
    }
    if let Err(e) = heal_is_written_back_and_then_matches(&run, &sandbox, &recording, &base) {
        failures.push(format!("--heal: {e}"));
    }
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
