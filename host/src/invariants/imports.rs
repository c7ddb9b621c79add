//! No import circles between the host's files.
//!
//! The graph is read from the source: a file imports another when its code
//! (outside `#[cfg(test)] mod tests`) names a path that leads to an item of
//! that file: `crate::a::b`, `super::x`, `self::y`, a child module by its
//! bare name, and each path of a `use` group. Two kinds of naming are not
//! imports: a folder's `mod.rs` handing its children's names on
//! (`pub use self::child::Item`: the folder's face), and a file naming an
//! item of a folder it stands in (its ancestors' `mod.rs`, which the
//! children share). Everything else must point one way.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path below the crate root (`["api", "gate", "limit"]`).
type ModulePath = Vec<String>;

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module of a file under `src` (`api/gate/mod.rs` is `api::gate`).
fn module_of_file(relative: &str) -> ModulePath {
    let mut parts: Vec<String> = relative
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file that holds `module`, if it is a module of the crate.
fn file_of_module(module: &[String], files: &BTreeSet<String>) -> Option<String> {
    if module.is_empty() {
        return Some("lib.rs".to_string());
    }
    let joined = module.join("/");
    [format!("{joined}.rs"), format!("{joined}/mod.rs")]
        .into_iter()
        .find(|candidate| files.contains(candidate))
}

/// The code of a file without its comments, its test module and its
/// re-exports.
fn code_of(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or_default();
    let mut code = String::new();
    let mut in_reexport = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("pub use ") || trimmed.starts_with("pub(crate) use ") {
            in_reexport = true;
        }
        if !in_reexport {
            code.push_str(line);
            code.push('\n');
        }
        if in_reexport && trimmed.ends_with(';') {
            in_reexport = false;
        }
    }
    code
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or(&tree).to_string()];
    };
    let prefix = &tree[..open];
    let close = tree
        .rfind('}')
        .filter(|close| *close > open)
        .unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .flat_map(|part| expand_use(&format!("{prefix}{part}")))
        .collect()
}

/// Every path the code names: those of its `use` items, expanded, and
/// those written in place (`crate::store::now()`).
fn paths_named(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    // `use` items: a line that starts one (`use …;`, `pub(crate) use …;`),
    // to its semicolon.
    let mut statement: Option<String> = None;
    for line in code.lines() {
        let trimmed = line.trim_start();
        let starts = trimmed.starts_with("use ")
            || (trimmed.starts_with("pub") && trimmed.contains(" use "));
        if statement.is_none() && starts {
            let from = trimmed.find("use ").map_or(0, |at| at + 4);
            statement = Some(String::new());
            statement
                .as_mut()
                .expect("just set")
                .push_str(&trimmed[from..]);
        } else if let Some(text) = statement.as_mut() {
            text.push_str(trimmed);
        }
        if statement.as_ref().is_some_and(|text| text.contains(';')) {
            let text = statement.take().expect("a statement");
            let tree = text.split(';').next().unwrap_or_default();
            paths.extend(expand_use(tree));
        }
    }
    let bytes = code.as_bytes();
    for (at, _) in code.match_indices("::") {
        // The identifier just before `::`, when nothing path-like precedes it.
        let start = code[..at]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        if start == at || (start >= 2 && &bytes[start - 2..start] == b"::") {
            continue;
        }
        let end = code[at..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(code.len(), |i| at + i);
        paths.push(code[start..end].trim_end_matches(':').to_string());
    }
    paths
}

/// The module a path leads to, from the file of module `here`.
fn resolve(path: &str, here: &ModulePath, files: &BTreeSet<String>) -> Option<String> {
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (mut module, rest): (ModulePath, &[&str]) = match segments.first()? {
        &"crate" | &"quarry" => (Vec::new(), &segments[1..]),
        &"self" => (here.clone(), &segments[1..]),
        &"super" => {
            let supers = segments.iter().take_while(|s| **s == "super").count();
            let mut module = here.clone();
            for _ in 0..supers {
                module.pop()?;
            }
            (module, &segments[supers..])
        }
        // A bare name: a child module of this one, or nothing of ours.
        _ => (here.clone(), &segments[..]),
    };
    let mut descended = false;
    for segment in rest {
        let mut next = module.clone();
        next.push(segment.to_string());
        if file_of_module(&next, files).is_none() {
            break;
        }
        module = next;
        descended = true;
    }
    let bare = !matches!(segments[0], "crate" | "quarry" | "self" | "super");
    if bare && !descended {
        return None;
    }
    file_of_module(&module, files)
}

/// Each file's imports (paths relative to `src`).
fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = root();
    let files: BTreeSet<String> = super::sources(&root)
        .iter()
        .map(|path| {
            let relative = path.strip_prefix(&root).expect("under src");
            relative.to_string_lossy().replace('\\', "/")
        })
        .filter(|relative| !relative.starts_with("invariants/"))
        .collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let here = module_of_file(file);
        let text = std::fs::read_to_string(root.join(file)).expect("reading a source file");
        let imports: BTreeSet<String> = paths_named(&code_of(&text))
            .iter()
            .filter_map(|path| resolve(path, &here, &files))
            .filter(|target| {
                // Not itself, and not a folder it stands in.
                let target_module = module_of_file(target);
                target != file && !here.starts_with(&target_module)
            })
            .collect();
        graph.insert(file.clone(), imports);
    }
    graph
}

/// The circles of `graph`: its strongly connected parts of more than one
/// file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        circles: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, file: &'g str) {
            let at = self.index.len();
            self.index.insert(file, at);
            self.low.insert(file, at);
            self.stack.push(file);
            for next in self.graph.get(file).into_iter().flatten() {
                if !self.index.contains_key(next.as_str()) {
                    self.visit(next);
                    let low = self.low[file].min(self.low[next.as_str()]);
                    self.low.insert(file, low);
                } else if self.stack.contains(&next.as_str()) {
                    let low = self.low[file].min(self.index[next.as_str()]);
                    self.low.insert(file, low);
                }
            }
            if self.low[file] == self.index[file] {
                let from = self
                    .stack
                    .iter()
                    .position(|f| *f == file)
                    .expect("on the stack");
                let part: Vec<String> = self.stack.drain(from..).map(str::to_string).collect();
                if part.len() > 1 {
                    self.circles.push(part);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        circles: Vec::new(),
    };
    for file in graph.keys() {
        if !walk.index.contains_key(file.as_str()) {
            walk.visit(file);
        }
    }
    walk.circles
}

#[test]
fn no_two_files_of_the_host_import_each_other_in_a_circle() {
    let graph = file_graph();
    let found = circles(&graph);
    let described: Vec<String> = found
        .iter()
        .map(|circle| {
            let ties: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|to| circle.contains(to))
                        .map(move |to| format!("{from} -> {to}"))
                })
                .collect();
            ties.join(", ")
        })
        .collect();
    assert!(found.is_empty(), "import circles: {described:#?}");
}

#[test]
fn the_reader_of_imports_sees_the_forms_the_code_uses() {
    let files: BTreeSet<String> = [
        "lib.rs",
        "api/mod.rs",
        "api/gate/mod.rs",
        "api/gate/limit.rs",
        "store/mod.rs",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    let here = module_of_file("api/gate/body.rs");
    let code = "use super::{Gate, limit};\nuse crate::store::{now, Store};\nfn f() { crate::api::gate::limit::charge(); }\n";
    let targets: BTreeSet<String> = paths_named(code)
        .iter()
        .filter_map(|path| resolve(path, &here, &files))
        .collect();
    let expected: BTreeSet<String> = ["api/gate/mod.rs", "api/gate/limit.rs", "store/mod.rs"]
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(targets, expected);
    // A circle of three is found, a chain is not.
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
            .into_iter()
            .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
            .collect();
    assert_eq!(circles(&graph).len(), 1);
    assert_eq!(circles(&graph)[0].len(), 3);
}
