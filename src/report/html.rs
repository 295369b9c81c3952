//! The static HTML report: `index.html` plus the images it shows, copied next to it, so
//! the folder opens from file:// with no server and survives being kept as a CI artifact.
//! Per scenario a film strip of the run; per turn the reasons, expected / actual / diff
//! screenshots side by side, a slider that wipes between expected and actual, click.png,
//! the action diff and the tree diff. [`write_with_review`] adds accept / reject buttons
//! for `cua golden review --web`, which posts them to its `decide` endpoint.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::ScenarioReport;
use crate::diff::TurnDiff;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A name safe as a folder and an HTML id.
pub(super) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

const STYLE: &str = r#"
body{font:14px system-ui,sans-serif;margin:0;padding:16px 24px;background:#f6f7f9;color:#1d2330}
h1{font-size:20px} h2{font-size:17px;margin:28px 0 8px}
h1 .pass,h2.pass,summary.pass{color:#1a7f37} h1 .fail,h2.fail,summary.fail{color:#c62828} h2.flaky{color:#b26a00}
.strip{display:flex;gap:6px;overflow-x:auto;padding:6px 0}
.strip a{flex:none;border:3px solid #1a7f37;border-radius:4px;display:block;text-align:center;font-size:11px;color:#444;text-decoration:none;background:#fff}
.strip a.fail{border-color:#c62828}
.strip img{display:block;height:72px}
details.turn{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin:8px 0;padding:6px 12px}
details.turn.fail{border-left:5px solid #c62828} details.turn.pass{border-left:5px solid #1a7f37}
summary{cursor:pointer;font-weight:600}
.reasons{margin:6px 0;color:#c62828}
.notes{margin:6px 0;color:#555}
.shots{display:flex;gap:12px;flex-wrap:wrap;align-items:flex-start}
figure{margin:0} figcaption{font-size:12px;color:#555}
.shots img{max-width:420px;border:1px solid #ccc;display:block}
.swipe{position:relative;display:inline-block;max-width:420px}
.swipe img{max-width:420px;display:block;border:1px solid #ccc}
.swipe img.top{position:absolute;left:0;top:0;clip-path:inset(0 50% 0 0)}
.swipe input{width:100%}
pre{background:#f0f2f5;padding:8px;overflow-x:auto;font-size:12px}
pre .add{color:#1a7f37;background:#e6f4ea} pre .del{color:#c62828;background:#fdecea}
.note{color:#555} .latency{font-weight:400;color:#555;font-size:12px}
.decide{margin:6px 0} .decide button{font:inherit;padding:3px 12px;margin-right:8px;cursor:pointer}
#status{font-weight:600}
"#;

const SCRIPT: &str = r#"
document.querySelectorAll('.swipe input').forEach(function (r) {
  r.addEventListener('input', function () {
    r.parentElement.querySelector('img.top').style.clipPath = 'inset(0 ' + (100 - r.value) + '% 0 0)';
  });
});
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  document.body.dataset.images = imgs.length;
  document.body.dataset.brokenImages = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; }).length;
  document.body.dataset.failingTurns = document.querySelectorAll('details.turn.fail').length;
  document.body.dataset.rendered = 'yes';
});
"#;

/// The web review's buttons: each posts `{scenario, turn?, decision}` to `decide` (relative
/// to the page, so the server's token path carries over) and reloads the page on success.
const REVIEW_SCRIPT: &str = r#"
document.querySelectorAll('button[data-decision]').forEach(function (b) {
  b.addEventListener('click', function () {
    var all = document.querySelectorAll('button[data-decision]');
    all.forEach(function (x) { x.disabled = true; });
    var status = document.getElementById('status');
    var body = { scenario: b.dataset.scenario, decision: b.dataset.decision };
    if (b.dataset.turn) { body.turn = Number(b.dataset.turn); }
    status.textContent = 'saving…';
    fetch('decide', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json(); })
      .then(function (j) {
        if (j.ok) { status.textContent = j.message; location.reload(); return; }
        status.textContent = 'not saved: ' + j.error;
        all.forEach(function (x) { x.disabled = false; });
      })
      .catch(function (e) {
        status.textContent = 'not saved: the review server did not answer (' + e + ')';
      });
  });
});
"#;

/// Accept / reject buttons for a scenario (`turn` None) or one of its turns.
fn decide_buttons(scenario: &str, turn: Option<u32>) -> String {
    let (what, data_turn) = match turn {
        Some(t) => (format!("turn {t}"), format!(" data-turn=\"{t}\"")),
        None => (format!("all of {scenario}"), String::new()),
    };
    let scenario = esc(scenario);
    format!(
        "<div class=\"decide\"><button data-scenario=\"{scenario}\"{data_turn} data-decision=\"accept\">Accept {what}</button><button data-scenario=\"{scenario}\"{data_turn} data-decision=\"reject\">Reject {what}</button></div>",
        what = esc(&what)
    )
}

/// Copies `src` to `dir/name` when it exists; returns the path relative to the report.
/// Without a source, a merged report ([`Assets::InPlace`]) shows the file already there.
fn copy_asset(
    src: Option<PathBuf>,
    dir: &Path,
    rel: &str,
    name: &str,
    assets: Assets,
) -> std::io::Result<Option<String>> {
    let Some(src) = src.filter(|p| p.is_file()) else {
        let there = assets == Assets::InPlace && dir.join(name).is_file();
        return Ok(there.then(|| format!("{rel}/{name}")));
    };
    std::fs::create_dir_all(dir)?;
    std::fs::copy(&src, dir.join(name))?;
    Ok(Some(format!("{rel}/{name}")))
}

fn colored_diff(text: &str) -> String {
    text.lines()
        .map(|l| {
            let class = if l.starts_with('+') && !l.starts_with("+++") {
                "add"
            } else if l.starts_with('-') && !l.starts_with("---") {
                "del"
            } else {
                ""
            };
            format!("<span class=\"{class}\">{}</span>", esc(l))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

struct TurnAssets {
    expected: Option<String>,
    actual: Option<String>,
    diff: Option<String>,
    click: Option<String>,
}

/// Where a page's images come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assets {
    /// Copied from the run folders the reports name (a report of this machine's run).
    FromRuns,
    /// Already in the report folder (a merge copied them from the shards' reports).
    InPlace,
}

fn write_turn_assets(
    report_dir: &Path,
    scenario: &str,
    t: &TurnDiff,
    assets: Assets,
) -> std::io::Result<TurnAssets> {
    let rel = format!("{}/turn-{:05}", slug(scenario), t.turn);
    let dir = report_dir.join(&rel);
    let expected = copy_asset(
        t.expected_dir.as_ref().map(|d| d.join("screenshot.png")),
        &dir,
        &rel,
        "expected.png",
        assets,
    )?;
    let actual = copy_asset(
        t.actual_dir.as_ref().map(|d| d.join("screenshot.png")),
        &dir,
        &rel,
        "actual.png",
        assets,
    )?;
    let click = copy_asset(
        t.actual_dir
            .as_ref()
            .or(t.expected_dir.as_ref())
            .map(|d| d.join("click.png")),
        &dir,
        &rel,
        "click.png",
        assets,
    )?;
    let diff = match &t.diff_png {
        Some(png) => {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("diff.png"), png)?;
            Some(format!("{rel}/diff.png"))
        }
        None => copy_asset(None, &dir, &rel, "diff.png", assets)?,
    };
    Ok(TurnAssets {
        expected,
        actual,
        diff,
        click,
    })
}

fn figure(src: &Option<String>, caption: &str) -> String {
    match src {
        Some(s) => format!(
            "<figure><img src=\"{}\" alt=\"{caption}\"><figcaption>{caption}</figcaption></figure>",
            esc(s)
        ),
        None => String::new(),
    }
}

/// A scenario's notes of one kind (heals, look-alikes) as a headed list; nothing when
/// there are none.
fn note_list(class: &str, heading: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let items: String = items
        .iter()
        .map(|i| format!("<li>{}</li>", esc(i)))
        .collect();
    format!(
        "<div class=\"{class}\"><p class=\"note\">{}</p><ul>{items}</ul></div>",
        esc(heading)
    )
}

/// Writes `dir/index.html` and its images; returns the index path.
pub fn write(dir: &Path, title: &str, reports: &[ScenarioReport]) -> std::io::Result<PathBuf> {
    write_page(dir, title, reports, false, Assets::FromRuns)
}

/// [`write`] for merged shards, whose images the merge (merge.rs) put in `dir` already.
pub fn write_merged(
    dir: &Path,
    title: &str,
    reports: &[ScenarioReport],
) -> std::io::Result<PathBuf> {
    write_page(dir, title, reports, false, Assets::InPlace)
}

/// [`write`] with accept / reject buttons per scenario and per changed turn, for the web
/// review.
pub fn write_with_review(
    dir: &Path,
    title: &str,
    reports: &[ScenarioReport],
) -> std::io::Result<PathBuf> {
    write_page(dir, title, reports, true, Assets::FromRuns)
}

/// One scenario's section: its verdict, why it failed, its notes, and its turns.
fn scenario_section(
    body: &mut String,
    dir: &Path,
    r: &ScenarioReport,
    review: bool,
    assets: Assets,
) -> std::io::Result<()> {
    let sid = slug(&r.name);
    let (class, mark, flaky) = match (r.flaky(), r.passed) {
        (true, _) => ("flaky", "⚠", " (flaky: passed on a retry)"),
        (false, true) => ("pass", "✓", ""),
        (false, false) => ("fail", "✗", ""),
    };
    let _ = write!(
        body,
        "<section id=\"{sid}\"><h2 class=\"{class}\">{mark} {}{flaky}</h2>",
        esc(&r.name),
    );
    if review {
        body.push_str(&decide_buttons(&r.name, None));
    }
    for (k, why) in r.failed_attempts.iter().enumerate() {
        let _ = write!(
            body,
            "<p class=\"reasons\">attempt {} failed: {}</p>",
            k + 1,
            esc(why)
        );
    }
    if let Some(e) = &r.error {
        let _ = write!(body, "<p class=\"reasons\">{}</p>", esc(e));
    }
    if let Some(f) = &r.failure_state {
        let rel = format!("{sid}/failure");
        let shot = copy_asset(
            f.screenshot.clone(),
            &dir.join(&rel),
            &rel,
            "window.png",
            assets,
        )?;
        let _ = write!(
            body,
            "<div class=\"failure\"><div class=\"shots\">{}</div><details open><summary>tree when it failed</summary><pre class=\"tree\">{}</pre></details></div>",
            figure(&shot, "the window when it failed"),
            esc(&f.tree_markdown)
        );
    }
    body.push_str(&note_list(
        "heals",
        "healed (the recording's element was found another way; review it):",
        &r.heals,
    ));
    body.push_str(&note_list(
        "look-alikes",
        "look-alikes (more than one element fitted; what decided):",
        &r.look_alikes,
    ));
    for n in &r.notes {
        let _ = write!(body, "<p class=\"note\">{}</p>", esc(n));
    }
    if let Some(d) = &r.diff {
        let _ = write!(
            body,
            "<p class=\"note\">expected <code>{}</code>, actual <code>{}</code></p>",
            esc(&d.expected.display().to_string()),
            esc(&d.actual.display().to_string())
        );
        for n in &d.not_compared {
            let _ = write!(body, "<p class=\"note\">not compared: {}</p>", esc(n));
        }
        let mut strip = String::from("<div class=\"strip\">");
        let mut turns = String::new();
        for t in &d.turns {
            let assets = write_turn_assets(dir, &r.name, t, assets)?;
            let anchor = format!("{sid}-turn-{:05}", t.turn);
            strip_entry(&mut strip, t, &assets, &anchor);
            let decide = (review && !t.passed()).then(|| decide_buttons(&r.name, Some(t.turn)));
            turn_details(&mut turns, t, &assets, &anchor, decide);
        }
        strip.push_str("</div>");
        body.push_str(&strip);
        body.push_str(&turns);
    }
    body.push_str("</section>");
    Ok(())
}

/// A turn's thumbnail in the strip across the top of its scenario.
fn strip_entry(strip: &mut String, t: &TurnDiff, assets: &TurnAssets, anchor: &str) {
    let class = if t.passed() { "pass" } else { "fail" };
    let thumb = assets.actual.as_ref().or(assets.expected.as_ref());
    let _ = write!(
        strip,
        "<a class=\"{class}\" href=\"#{anchor}\">{}<span>{} {}</span></a>",
        thumb
            .map(|s| format!("<img src=\"{}\" alt=\"turn {}\">", esc(s), t.turn))
            .unwrap_or_default(),
        t.turn,
        esc(&t.tool)
    );
}

/// A turn's details: its verdict and latency, why it failed, the screenshots (with a wipe
/// between expected and actual where it failed), the action's and the tree's differences.
fn turn_details(
    turns: &mut String,
    t: &TurnDiff,
    assets: &TurnAssets,
    anchor: &str,
    decide: Option<String>,
) {
    let class = if t.passed() { "pass" } else { "fail" };
    let _ = write!(
        turns,
        "<details class=\"turn {class}\" id=\"{anchor}\"{}><summary class=\"{class}\">{} turn-{:05} {}{}</summary>",
        if t.passed() { "" } else { " open" },
        match t.status {
            crate::diff::TurnStatus::Unsettled => "~ unsettled",
            _ if t.passed() => "✓",
            _ => "✗",
        },
        t.turn,
        esc(&t.tool),
        super::latency(t)
            .map(|l| format!(" <span class=\"latency\">latency {}</span>", esc(&l)))
            .unwrap_or_default()
    );
    if !t.reasons.is_empty() {
        let reasons: Vec<String> = t.reasons.iter().map(|s| esc(s)).collect();
        let _ = write!(
            turns,
            "<div class=\"reasons\">{}</div>",
            reasons.join("<br>")
        );
    }
    if !t.notes.is_empty() {
        let notes: Vec<String> = t
            .notes
            .iter()
            .map(|s| format!("note: {}", esc(s)))
            .collect();
        let _ = write!(turns, "<div class=\"notes\">{}</div>", notes.join("<br>"));
    }
    turns.push_str(&decide.unwrap_or_default());
    turns.push_str("<div class=\"shots\">");
    turns.push_str(&figure(&assets.expected, "expected"));
    turns.push_str(&figure(&assets.actual, "actual"));
    turns.push_str(&figure(&assets.diff, "diff"));
    if let (Some(e), Some(a), false) = (&assets.expected, &assets.actual, t.passed()) {
        let _ = write!(
            turns,
            "<figure class=\"swipe\"><img src=\"{}\" alt=\"expected\"><img class=\"top\" src=\"{}\" alt=\"actual\"><input type=\"range\" min=\"0\" max=\"100\" value=\"50\" aria-label=\"wipe between expected and actual\"><figcaption>actual (left of the wipe) over expected</figcaption></figure>",
            esc(e),
            esc(a)
        );
    }
    turns.push_str(&figure(&assets.click, "click"));
    turns.push_str("</div>");
    if !t.action_diff.is_empty() {
        let _ = write!(
            turns,
            "<h4>Action</h4><pre>{}</pre>",
            esc(&t.action_diff.join("\n"))
        );
    }
    if let Some(tree) = &t.tree_diff {
        let _ = write!(
            turns,
            "<h4>Accessibility tree</h4><pre>{}</pre>",
            colored_diff(tree)
        );
    }
    turns.push_str("</details>");
}

fn write_page(
    dir: &Path,
    title: &str,
    reports: &[ScenarioReport],
    review: bool,
    assets: Assets,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let failed = reports.iter().filter(|r| !r.passed).count();
    let mut body = String::new();
    let verdict = if review {
        format!("{} pending golden(s) to review", reports.len())
    } else {
        format!("{failed} of {} scenario(s) failed", reports.len())
    };
    let _ = write!(
        body,
        "<h1>{} <span class=\"{}\">{verdict}</span></h1>",
        esc(title),
        if failed > 0 { "fail" } else { "pass" },
    );
    if review {
        body.push_str("<p id=\"status\" role=\"status\"></p>");
    }
    for r in reports {
        scenario_section(&mut body, dir, r, review, assets)?;
    }
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>{body}<script>{SCRIPT}{}</script></body></html>\n",
        esc(title),
        if review { REVIEW_SCRIPT } else { "" }
    );
    let index = dir.join("index.html");
    crate::files::write_atomic(&index, html.as_bytes())?;
    Ok(index)
}
