//! Architecture invariants that can be checked by reading the source
//! (ARCHITECTURE.md, "Architecture invariants").

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("reading the host's sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found
}

/// The files under `host/src` whose code (comments aside) names `word`,
/// as paths relative to `host/src`.
fn files_naming(word: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut naming: Vec<String> = sources(&root)
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).expect("reading a source file");
            text.lines()
                .any(|line| !line.trim_start().starts_with("//") && line.contains(word))
        })
        .map(|path| {
            let relative = path.strip_prefix(&root).expect("under src");
            relative.to_string_lossy().replace('\\', "/")
        })
        .collect();
    naming.sort();
    naming
}

#[test]
fn only_the_connector_runtime_touches_wasmtime() {
    let outside: Vec<String> = files_naming("wasmtime")
        .into_iter()
        .filter(|path| !path.starts_with("connectors/runtime/") && path != "invariants.rs")
        .collect();
    assert!(
        outside.is_empty(),
        "wasmtime is used outside connectors/runtime: {outside:?}"
    );
}
