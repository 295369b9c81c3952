//! The shape of the source tree, checked: top-level modules import each other in one
//! direction only (no cycle), and nothing outside the platform names its Linux backend.
//! A module "imports" another when its files name `crate::other` anywhere, doc links
//! included: a link is a dependency a reader follows too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → the modules it names → the files that name each.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file under src/ belongs to (None: the crate root and binaries).
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" | "bin" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// Every module `crate::` names in `text`: `crate::a::…` and `crate::{a, b::c}`.
fn named_modules(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            // Top-level names of the braced list: the first word after `{` or a `,` at depth 0.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in list.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_alphanumeric() || c == '_') => {
                        out.insert(ident(&list[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

fn graph() -> Graph {
    let root = src();
    let files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
        .into_iter()
        .map(|e| e.expect("read src/").into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_of(f.strip_prefix(&root).unwrap()))
        .collect();
    let mut graph = Graph::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap();
        let Some(from) = module_of(relative) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for to in named_modules(&text) {
            if to != from && modules.contains(&to) {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(relative.display().to_string());
            }
        }
    }
    graph
}

/// A cycle through `graph` as a path of modules, if there is one (depth-first search).
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flat_map(|m| m.keys()) {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn modules_import_each_other_in_one_direction_only() {
    let graph = graph();
    assert!(
        graph.len() > 15,
        "the scan found too few modules: {:?}",
        graph.keys()
    );
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("  {} -> {}: {:?}", w[0], w[1], graph[&w[0]][&w[1]]))
            .collect();
        panic!(
            "modules import each other in a circle: {}\n{}",
            cycle.join(" -> "),
            steps.join("\n")
        );
    }
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    // The check itself, on a made-up graph: a -> b -> c -> a.
    let mut graph = Graph::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph
            .entry(from.into())
            .or_default()
            .entry(to.into())
            .or_default()
            .insert(format!("{from}.rs"));
    }
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    graph.get_mut("c").unwrap().remove("a");
    assert_eq!(find_cycle(&graph), None);
    assert_eq!(
        named_modules("use crate::{tools::{A, B}, errors::E};\nlet x = crate::replay::run();"),
        ["errors", "replay", "tools"]
            .into_iter()
            .map(String::from)
            .collect()
    );
}

#[test]
fn only_the_platform_names_its_linux_backend() {
    let root = src();
    let mut offenders = Vec::new();
    for entry in walkdir::WalkDir::new(&root) {
        let path = entry.unwrap().into_path();
        let relative = path.strip_prefix(&root).unwrap();
        // The platform itself, and the video helper binary, which is the Linux recorder.
        if relative.starts_with("platform") || relative == Path::new("bin/cua-video.rs") {
            continue;
        }
        if path.extension().is_some_and(|e| e == "rs")
            && std::fs::read_to_string(&path)
                .unwrap()
                .contains("platform::linux")
        {
            offenders.push(relative.display().to_string());
        }
    }
    assert!(
        offenders.is_empty(),
        "these files name platform::linux: {offenders:?}"
    );
}
