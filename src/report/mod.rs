//! Reports of diff and test results: a terminal summary, JSON, JUnit XML (one test case
//! per turn) and a static HTML report ([`html`]). Takes finished results; decides nothing
//! about pass or fail.

pub mod html;
pub mod merge;

use std::time::Duration;

use serde::Serialize;

use crate::diff::{TrajectoryDiff, TurnStatus};

/// The result of one scenario (or of one `cua diff`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ScenarioReport {
    pub name: String,
    pub passed: bool,
    /// Present when the run got as far as a diff.
    pub diff: Option<TrajectoryDiff>,
    /// Why the scenario failed without (or besides) a diff: no golden, app did not start...
    pub error: Option<String>,
    /// What happened to goldens, e.g. `pending golden written to goldens/x.new`.
    pub notes: Vec<String>,
    pub duration_ms: u64,
    /// `cua test --retries`: why each earlier attempt failed. Passed with failed attempts
    /// means flaky.
    pub failed_attempts: Vec<String>,
    /// Turns the run recorded: the count shown when there is no diff (`--update`, or a run
    /// that failed before its diff).
    pub recorded_turns: usize,
    /// What the window showed when a step failed before its turn ran.
    pub failure_state: Option<FailureState>,
    /// How replayed elements were healed (`turn 4: button "Add" → button "Add item"
    /// (name contains)`): every heal is shown, in every report.
    pub heals: Vec<String>,
    /// Replayed turns where more than one live element fitted: every candidate and what
    /// decided (`turn 4: 2 elements fit button "Add": …; [7] chosen by …`).
    #[serde(default)]
    pub look_alikes: Vec<String>,
}

/// The window when a step failed: its screenshot and tree, saved in the run folder.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct FailureState {
    pub screenshot: Option<std::path::PathBuf>,
    pub tree_markdown: String,
}

impl FailureState {
    pub const SCREENSHOT: &'static str = "failure.png";
    pub const TREE: &'static str = "failure-tree.md";

    /// The failure state a run folder holds, if any.
    pub fn read(run_dir: &std::path::Path) -> Option<FailureState> {
        let tree_markdown = std::fs::read_to_string(run_dir.join(Self::TREE)).ok()?;
        let shot = run_dir.join(Self::SCREENSHOT);
        Some(FailureState {
            screenshot: shot.is_file().then_some(shot),
            tree_markdown,
        })
    }
}

impl ScenarioReport {
    /// The report of a finished diff (`cua diff`, the demo).
    pub fn of_diff(name: String, diff: TrajectoryDiff, duration_ms: u64) -> ScenarioReport {
        ScenarioReport {
            name,
            passed: diff.passed,
            recorded_turns: diff.turns.len(),
            diff: Some(diff),
            error: None,
            notes: Vec::new(),
            duration_ms,
            failed_attempts: Vec::new(),
            failure_state: None,
            heals: Vec::new(),
            look_alikes: Vec::new(),
        }
    }

    /// A scenario that failed without a diff.
    pub fn of_error(name: String, error: String) -> ScenarioReport {
        ScenarioReport {
            name,
            passed: false,
            diff: None,
            error: Some(error),
            notes: Vec::new(),
            duration_ms: 0,
            failed_attempts: Vec::new(),
            recorded_turns: 0,
            failure_state: None,
            heals: Vec::new(),
            look_alikes: Vec::new(),
        }
    }

    /// Passed, but only on a retry.
    pub fn flaky(&self) -> bool {
        self.passed && !self.failed_attempts.is_empty()
    }

    /// One line saying why this report failed (for an attempt that is retried).
    pub fn failure_summary(&self) -> String {
        if let Some(e) = &self.error {
            return e.lines().next().unwrap_or("").to_string();
        }
        let turns: Vec<String> = self
            .diff
            .iter()
            .flat_map(|d| &d.turns)
            .filter(|t| !t.passed())
            .map(|t| format!("turn {} ({}): {}", t.turn, t.tool, t.reasons.join("; ")))
            .collect();
        turns.join("; ")
    }

    pub fn turn_count(&self) -> usize {
        self.diff
            .as_ref()
            .map_or(self.recorded_turns, |d| d.turns.len())
    }
}

fn mark(ok: bool) -> &'static str {
    if ok { "✓" } else { "✗" }
}

/// A turn's mark: ✓, ✗, or ~ for a window that never held still.
fn turn_mark(t: &crate::diff::TurnDiff) -> &'static str {
    match t.status {
        TurnStatus::Unsettled => "~",
        _ => mark(t.passed()),
    }
}

/// `1620 ms (golden 310 ms)`: how long the run's app took to settle a turn, beside the
/// golden's; None when the run did not settle each turn.
pub fn latency(t: &crate::diff::TurnDiff) -> Option<String> {
    let run = t.actual_latency_ms?;
    Some(match t.expected_latency_ms {
        Some(golden) => format!("{run} ms (golden {golden} ms)"),
        None => format!("{run} ms"),
    })
}

impl ScenarioReport {
    /// Whether it failed only because a window never held still (no regression shown).
    pub fn unsettled(&self) -> bool {
        !self.passed
            && self.error.is_none()
            && self.diff.as_ref().is_some_and(|d| {
                d.turns.iter().any(|t| t.status == TurnStatus::Unsettled)
                    && d.turns
                        .iter()
                        .all(|t| t.passed() || t.status == TurnStatus::Unsettled)
            })
    }
}

/// ✓, ✗, or ⚠ for a scenario that passed only on a retry.
fn scenario_mark(r: &ScenarioReport) -> &'static str {
    if r.flaky() { "⚠" } else { mark(r.passed) }
}

/// Per scenario a line, then per turn pass / fail with the reasons.
pub fn terminal(reports: &[ScenarioReport]) -> String {
    let mut out = String::new();
    for r in reports {
        out.push_str(&format!(
            "{} {} ({} turns, {:.1} s){}\n",
            scenario_mark(r),
            r.name,
            r.turn_count(),
            r.duration_ms as f64 / 1000.0,
            if r.flaky() { " FLAKY" } else { "" }
        ));
        for (k, why) in r.failed_attempts.iter().enumerate() {
            out.push_str(&format!("    attempt {} failed: {why}\n", k + 1));
        }
        if let Some(e) = &r.error {
            out.push_str(&format!("    error: {e}\n"));
        }
        if let Some(shot) = r.failure_state.as_ref().and_then(|f| f.screenshot.as_ref()) {
            out.push_str(&format!("    the window then: {}\n", shot.display()));
        }
        if let Some(d) = &r.diff {
            for n in &d.not_compared {
                out.push_str(&format!("    not compared: {n}\n"));
            }
            for t in &d.turns {
                out.push_str(&format!(
                    "    {} turn-{:05} {:<14}{}{}\n",
                    turn_mark(t),
                    t.turn,
                    t.tool,
                    latency(t).map(|l| format!(" [{l}]")).unwrap_or_default(),
                    if t.reasons.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", t.reasons.join("; "))
                    }
                ));
                for n in &t.notes {
                    out.push_str(&format!("        note: {n}\n"));
                }
            }
        }
        for h in &r.heals {
            out.push_str(&format!("    healed {h}\n"));
        }
        for c in &r.look_alikes {
            out.push_str(&format!("    look-alikes {c}\n"));
        }
        for n in &r.notes {
            out.push_str(&format!("    {n}\n"));
        }
    }
    let failed = reports.iter().filter(|r| !r.passed).count();
    let flaky = reports.iter().filter(|r| r.flaky()).count();
    let unsettled = reports.iter().filter(|r| r.unsettled()).count();
    out.push_str(&format!(
        "{} scenario(s): {} passed, {failed} failed{}{}\n",
        reports.len(),
        reports.len() - failed,
        if unsettled > 0 {
            format!(" ({unsettled} only because a window never held still)")
        } else {
            String::new()
        },
        if flaky > 0 {
            format!(", {flaky} flaky (passed on a retry)")
        } else {
            String::new()
        }
    ));
    out
}

pub fn json(reports: &[ScenarioReport]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "passed": reports.iter().all(|r| r.passed),
        "scenarios": reports,
    }))
    .unwrap_or_default()
}

/// JUnit XML: a test suite per scenario, a test case per turn; a scenario that failed
/// before any diff is one failed `run` test case.
pub fn junit(reports: &[ScenarioReport]) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("cua");
    for r in reports {
        let mut suite = TestSuite::new(r.name.clone());
        suite.set_time(Duration::from_millis(r.duration_ms));
        if r.flaky() {
            // Passed on a retry: a passing `run` case carrying the failed attempts as
            // <flakyFailure> elements, which CI test views show as flaky.
            let mut status = TestCaseStatus::success();
            for why in &r.failed_attempts {
                let mut rerun = quick_junit::TestRerun::new(NonSuccessKind::Failure);
                rerun.set_message(why.clone());
                status.add_rerun(rerun);
            }
            let mut case = TestCase::new("run", status);
            case.set_classname(r.name.clone());
            suite.add_test_case(case);
        }
        if let Some(e) = &r.error {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(e.clone());
            let mut case = TestCase::new("run", status);
            case.set_classname(r.name.clone());
            suite.add_test_case(case);
        }
        let mut out_lines = Vec::new();
        if let Some(d) = &r.diff {
            for t in &d.turns {
                let status = if t.passed() {
                    TestCaseStatus::success()
                } else {
                    // A window that never held still is no regression of the app: an error.
                    let kind = match t.status {
                        TurnStatus::Unsettled => NonSuccessKind::Error,
                        _ => NonSuccessKind::Failure,
                    };
                    let mut s = TestCaseStatus::non_success(kind);
                    s.set_message(t.reasons.join("; "));
                    s.set_type(match t.status {
                        TurnStatus::Missing => "missing",
                        TurnStatus::Extra => "extra",
                        TurnStatus::Unsettled => "unsettled",
                        _ => "diff",
                    });
                    let mut detail = t.action_diff.join("\n");
                    if let Some(tree) = &t.tree_diff {
                        detail.push('\n');
                        detail.push_str(tree);
                    }
                    s.set_description(detail);
                    s
                };
                let mut case = TestCase::new(format!("turn-{:05} {}", t.turn, t.tool), status);
                case.set_classname(r.name.clone());
                // A turn's time is how long its app took to settle.
                if let Some(ms) = t.actual_latency_ms {
                    case.set_time(Duration::from_millis(ms));
                }
                suite.add_test_case(case);
                if let Some(l) = latency(t) {
                    out_lines.push(format!("turn {} latency {l}", t.turn));
                }
            }
        }
        // Every heal is shown, and every turn's latency: CI views print a suite's
        // system-out beside its cases.
        out_lines.extend(r.heals.iter().map(|h| format!("healed {h}")));
        out_lines.extend(r.look_alikes.iter().map(|c| format!("look-alikes {c}")));
        if !out_lines.is_empty() {
            suite.set_system_out(out_lines.join("\n"));
        }
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_default()
}

/// Where a run's reports go, as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// Folder for index.html (+ images) and report.json.
    pub report_dir: Option<std::path::PathBuf>,
    pub junit: Option<std::path::PathBuf>,
    /// Print JSON instead of the terminal summary.
    pub json: bool,
}

impl Outputs {
    /// Prints the summary (or JSON) and writes the requested files.
    pub fn emit(&self, title: &str, reports: &[ScenarioReport]) -> std::io::Result<()> {
        self.emit_with(title, reports, html::write)
    }

    /// [`Outputs::emit`] with the HTML written by `page` (a merged report's reuses the
    /// images already in its folder).
    pub fn emit_with(
        &self,
        title: &str,
        reports: &[ScenarioReport],
        page: impl Fn(&std::path::Path, &str, &[ScenarioReport]) -> std::io::Result<std::path::PathBuf>,
    ) -> std::io::Result<()> {
        if self.json {
            println!("{}", json(reports));
        } else {
            print!("{}", terminal(reports));
        }
        if let Some(dir) = &self.report_dir {
            let index = page(dir, title, reports)?;
            crate::files::write_atomic(&dir.join("report.json"), json(reports).as_bytes())?;
            if !self.json {
                println!("report: {}", index.display());
            }
        }
        if let Some(path) = &self.junit {
            crate::files::write_atomic(path, junit(reports).as_bytes())?;
        }
        Ok(())
    }
}
