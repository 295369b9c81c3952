//! The shape of the source tree, checked: top-level modules import each other in one
//! direction only (no cycle), and so do files; no function outside tests is longer than
//! 100 lines but the listed exceptions; nothing outside the platform names its Linux
//! backend. A module "imports" another when its files name `crate::other` anywhere, doc
//! links included: a link is a dependency a reader follows too. A file imports another
//! when it names that file's module (`crate::a::b`, `super::sibling`); a module and the
//! files inside it are one room, so a folder's mod.rs sharing its items with its children
//! (`use super::*`) is no circle.

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

/// The longest a function outside tests may be.
const MAX_FUNCTION_LINES: usize = 100;

/// Functions over [`MAX_FUNCTION_LINES`] that stay for now, each with why: (file, name, why).
/// One that has been shortened must leave the list (the test says so).
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[];

/// Every .rs file under src/ that is not a test module's file.
fn source_files() -> Vec<PathBuf> {
    walkdir::WalkDir::new(src())
        .into_iter()
        .map(|e| e.expect("read src/").into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| {
            p.file_name().is_none_or(|n| n != "tests.rs")
                && !p.components().any(|c| c.as_os_str() == "tests")
        })
        .collect()
}

/// Whether attributes mark an item as test code: `#[test]`, `#[tokio::test]`, `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        path.segments.last().is_some_and(|s| s.ident == "test")
            || (path.is_ident("cfg")
                && matches!(&a.meta, syn::Meta::List(l) if l.tokens.to_string() == "test"))
    })
}

/// The functions of one file, outside test code: (name, lines from `fn` to its closing brace).
#[derive(Default)]
struct Functions(Vec<(String, usize)>);

impl Functions {
    fn add(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature, block: &syn::Block) {
        if is_test(attrs) {
            return;
        }
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        self.0.push((sig.ident.to_string(), end + 1 - start));
    }
}

impl<'a> syn::visit::Visit<'a> for Functions {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        self.add(&f.attrs, &f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        self.add(&f.attrs, &f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.add(&f.attrs, &f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// Every function over [`MAX_FUNCTION_LINES`]: (file under src/, name, lines).
fn long_functions() -> Vec<(String, String, usize)> {
    let root = src();
    let mut long = Vec::new();
    for path in source_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut found = Functions::default();
        syn::visit::Visit::visit_file(&mut found, &file);
        let relative = format!("src/{}", path.strip_prefix(&root).unwrap().display());
        for (name, lines) in found.0 {
            if lines > MAX_FUNCTION_LINES {
                long.push((relative.clone(), name, lines));
            }
        }
    }
    long.sort();
    long
}

#[test]
fn no_function_outside_tests_is_longer_than_100_lines() {
    let long = long_functions();
    let listed = |file: &str, name: &str| {
        LONG_FUNCTIONS
            .iter()
            .any(|(f, n, _)| *f == file && *n == name)
    };
    let over: Vec<String> = long
        .iter()
        .filter(|(file, name, _)| !listed(file, name))
        .map(|(file, name, lines)| format!("  {file}: {name} ({lines} lines)"))
        .collect();
    let shortened: Vec<String> = LONG_FUNCTIONS
        .iter()
        .filter(|(f, n, _)| !long.iter().any(|(file, name, _)| file == f && name == n))
        .map(|(f, n, _)| format!("  {f}: {n}"))
        .collect();
    assert!(
        over.is_empty() && shortened.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them, or list them in LONG_FUNCTIONS with why):\n{}\n\
         listed in LONG_FUNCTIONS but no longer over (take them off):\n{}",
        over.join("\n"),
        shortened.join("\n")
    );
}

#[test]
fn the_length_check_measures_from_fn_to_its_closing_brace() {
    let body = "    let x = 1;\n".repeat(3);
    let text = format!(
        "fn short() {{\n{body}}}\n#[cfg(test)]\nmod tests {{\n    fn skipped() {{}}\n}}\nimpl A {{\n    /// doc\n    pub fn method(\n        &self,\n    ) {{\n{body}    }}\n}}\n"
    );
    let file = syn::parse_file(&text).unwrap();
    let mut found = Functions::default();
    syn::visit::Visit::visit_file(&mut found, &file);
    assert_eq!(
        found.0,
        [("short".to_string(), 5), ("method".to_string(), 7)]
    );
}

/// A module path (`["platform", "linux", "apps"]`) for each file under src/, and back.
fn module_files() -> BTreeMap<Vec<String>, String> {
    let root = src();
    let mut modules = BTreeMap::new();
    for path in source_files() {
        let relative = path.strip_prefix(&root).unwrap();
        let mut module: Vec<String> = relative
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module.first().is_some_and(|m| m == "bin") {
            continue;
        }
        if module
            .last()
            .is_some_and(|m| m == "mod" || m == "lib" || m == "main")
        {
            module.pop();
        }
        modules.insert(module, relative.display().to_string());
    }
    modules
}

/// The paths `text` names from `crate::` or `super::` (braced lists expanded), each as
/// its segments after the root, and for `super` how many steps up (0 for `crate`).
fn named_paths(text: &str) -> Vec<(Option<usize>, Vec<String>)> {
    fn ident(s: &str) -> &str {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    }
    /// Reads a use-tree at the start of `s` into `out`; returns what it consumed.
    fn tree(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
        let mut at = 0;
        let mut path = prefix.to_vec();
        loop {
            let rest = s[at..].trim_start();
            at = s.len() - rest.len();
            if let Some(list) = rest.strip_prefix('{') {
                at += 1;
                let mut inner = list;
                loop {
                    let used = tree(inner, &path, out);
                    at += used;
                    inner = &inner[used..];
                    let trimmed = inner.trim_start();
                    at += inner.len() - trimmed.len();
                    inner = trimmed;
                    match inner.chars().next() {
                        Some(',') => {
                            at += 1;
                            inner = &inner[1..];
                        }
                        Some('}') => return at + 1,
                        _ => return at,
                    }
                }
            }
            let name = ident(rest);
            if name.is_empty() {
                out.push(path);
                return at;
            }
            path.push(name.to_string());
            at += name.len();
            match s[at..].strip_prefix("::") {
                Some(_) => at += 2,
                None => {
                    out.push(path);
                    return at;
                }
            }
        }
    }
    let mut found = Vec::new();
    for (root, up) in [("crate::", None), ("super::", Some(1))] {
        for (at, _) in text.match_indices(root) {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = &text[at + root.len()..];
            let mut steps = up;
            while let (Some(n), Some(r)) = (steps, rest.strip_prefix("super::")) {
                steps = Some(n + 1);
                rest = r;
            }
            let mut paths = Vec::new();
            tree(rest, &[], &mut paths);
            found.extend(paths.into_iter().map(|p| (steps, p)));
        }
    }
    found
}

/// File → the files it names (not counting its own room: ancestors and descendants).
fn file_graph() -> Graph {
    let modules = module_files();
    let mut graph = Graph::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(src().join(file)).unwrap();
        for (up, path) in named_paths(&text) {
            let mut full = match up {
                None => Vec::new(),
                Some(n) => module[..module.len().saturating_sub(n)].to_vec(),
            };
            full.extend(path);
            // The file of the longest prefix that is a module.
            let Some(target) = (0..=full.len())
                .rev()
                .find_map(|n| modules.get_key_value(&full[..n]))
            else {
                continue;
            };
            let (to_module, to_file) = target;
            if to_module.starts_with(module) || module.starts_with(to_module) {
                continue;
            }
            graph
                .entry(file.clone())
                .or_default()
                .entry(to_file.clone())
                .or_default()
                .insert(file.clone());
        }
    }
    graph
}

#[test]
fn files_import_each_other_in_one_direction_only() {
    let graph = file_graph();
    assert!(
        graph.len() > 100,
        "the scan found too few files: {:?}",
        graph.keys()
    );
    // Every circle, not just the first: each found one's first step is set aside and the
    // search goes on.
    let mut rest = graph.clone();
    let mut circles = Vec::new();
    while let Some(cycle) = find_cycle(&rest) {
        circles.push(format!("  {}", cycle.join(" -> ")));
        rest.get_mut(&cycle[0]).unwrap().remove(&cycle[1]);
    }
    assert!(
        circles.is_empty(),
        "files import each other in a circle (a doc link counts: a reader follows it too):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_file_scan_reads_braced_and_relative_paths() {
    let text = "use crate::{tools::{A, input::B}, errors::E};\nuse super::super::x::Y;\nlet a = super::sib::f(); // xcrate::no";
    assert_eq!(
        named_paths(text),
        [
            (None, vec!["tools".to_string(), "A".into()]),
            (None, vec!["tools".into(), "input".into(), "B".into()]),
            (None, vec!["errors".into(), "E".into()]),
            (Some(2), vec!["x".into(), "Y".into()]),
            (Some(1), vec!["sib".into(), "f".into()]),
        ]
    );
}

/// How a reader picks a field out of a turn's action.json by hand, as JSON, where the one
/// trajectory type (`trajectory::Action`) names it.
const HAND_READS: &[&str] = &[
    "action[\"",
    "action.get(\"",
    "action.pointer(\"",
    "[\"arguments\"]",
    "\"/arguments/",
    "[\"result_error\"]",
    "[\"recorded_by\"]",
];

/// The one place that reads another driver's action.json as JSON: its adapter, which maps
/// it into the type.
const FOREIGN_ADAPTER: &str = "trajectory/cua_driver.rs";

#[test]
fn no_trajectory_field_is_read_by_hand_outside_the_one_type() {
    let root = src();
    let mut found = Vec::new();
    for path in source_files() {
        let relative = path.strip_prefix(&root).unwrap().display().to_string();
        if relative == FOREIGN_ADAPTER {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // A file's own test module may build actions as JSON.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if HAND_READS.iter().any(|p| line.contains(p)) {
                found.push(format!("  src/{relative}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "read these through trajectory::Action (src/trajectory/mod.rs) instead:\n{}",
        found.join("\n")
    );
}
