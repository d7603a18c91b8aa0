//! The layering rule inside crates: no two modules of a crate import each other, directly or through others
//! (a module that needs part of another and is needed by it means the shared part wants a module of its own).
//! A module is a top-level file or folder of a crate's `src/`; an import is any `crate::name` outside a comment.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The top-level module a file of `src` belongs to (`None` for the crate root).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let first = file.strip_prefix(src).ok()?.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (name != "lib" && name != "main").then_some(name)
}

/// The names after `crate::` in `line`.
fn crate_paths(line: &str) -> Vec<String> {
    line.match_indices("crate::")
        .filter(|(i, _)| !line[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(i, m)| line[i + m.len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .collect()
}

/// The module graph of the crate whose sources are in `src`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = rust_files(src);
    let mut graph: BTreeMap<String, BTreeSet<String>> =
        files.iter().filter_map(|f| module_of(src, f)).map(|m| (m, BTreeSet::new())).collect();
    for file in &files {
        let Some(module) = module_of(src, file) else { continue };
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
            for target in crate_paths(line) {
                if target != module && graph.contains_key(&target) {
                    graph.get_mut(&module).unwrap().insert(target);
                }
            }
        }
    }
    graph
}

/// One cycle of `graph`, if it has any, as the list of its modules.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|p| p == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in &graph[node] {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn the_checker_finds_a_cycle_and_reads_paths() {
    assert_eq!(crate_paths("use crate::a::B; x = crate::c::d(); notcrate::e"), vec!["a", "c"]);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
        ("d".to_owned(), BTreeSet::new()),
    ]
    .into();
    assert_eq!(find_cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    let mut acyclic = graph.clone();
    acyclic.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&acyclic), None);
}

#[test]
fn no_crate_has_modules_that_import_each_other() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        let graph = module_graph(&src);
        assert!(graph.len() > 1, "{}: no modules found", src.display());
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{}: modules import each other: {}", src.display(), cycle.join(" -> "));
        }
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} crates checked");
}

/// The public modules a crate may have: subsystems with a vocabulary of their own, each with curated contents.
/// Everything else is a private module whose public items the crate root re-exports, so each has one path.
const PUBLIC_MODULES: &[(&str, &str)] = &[
    ("act-alfworld", "bridge"),
    ("act-grpo", "icrl"),
    ("act-model", "lora"),
    ("act-sciworld", "py4j"),
    ("act-webshop", "fuzzy"),
    ("act-webshop", "http"),
];

/// The `pub mod` declarations of a Rust source, by name.
fn public_modules(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod ")?.strip_suffix(';').map(str::to_owned))
        .collect()
}

#[test]
fn crates_show_private_modules_behind_a_curated_root() {
    assert_eq!(public_modules("pub mod a;\nmod b;\n    pub mod c;\npub(crate) mod d;\npub mod e {"), ["a", "c"]);
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        let Some(lib) = std::fs::read_to_string(dir.join("src/lib.rs")).ok() else { continue };
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        for module in public_modules(&lib) {
            assert!(
                PUBLIC_MODULES.contains(&(name.as_str(), module.as_str())),
                "{name}: `pub mod {module}` makes its internals public; make it private and re-export what outside users need"
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} crates checked");
}
