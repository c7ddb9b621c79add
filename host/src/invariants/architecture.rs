//! ARCHITECTURE.md's code map names only files and folders that exist.
//!
//! Under each `### `folder/`` heading of the code map, every name in
//! backticks that ends in `.rs` or `/` is a file or folder somewhere under
//! that heading's folder (`gate/` and `limit.rs` under `host/` hold when
//! `host/src/api/gate/limit.rs` exists), or a path from the repository's
//! root (`tests/mcp/`, `host/src/connectors/credential.rs`). A file moved
//! or renamed without the map following fails here. Folders the build
//! makes (`target/`, the fetched `models/`) are not files of the tree.

use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ is in the repository")
        .to_path_buf()
}

/// Every path under `dir` (relative to it, `/`-separated), folders with a
/// trailing `/`; build output and dependencies left out.
fn everything_under(dir: &Path, prefix: &str, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if ["target", "node_modules", ".git"].contains(&name.as_str()) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            let relative = format!("{prefix}{name}/");
            found.push(relative.clone());
            everything_under(&path, &relative, found);
        } else {
            found.push(format!("{prefix}{name}"));
        }
    }
}

/// The code map's sections: each heading's folder and the names in
/// backticks under it that look like files or folders.
fn code_map(text: &str) -> Vec<(String, Vec<String>)> {
    let map = text
        .split("\n## Code map")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("ARCHITECTURE.md has a code map");
    let mut sections = Vec::new();
    for section in map.split("\n### ").skip(1) {
        let heading = section.lines().next().unwrap_or_default();
        let Some(folder) = heading.split('`').nth(1) else {
            continue;
        };
        let names = section
            .split('`')
            .skip(1)
            .step_by(2)
            .skip(1)
            .filter(|name| {
                (name.ends_with(".rs") || name.ends_with('/'))
                    && !name.contains(' ')
                    && !name.contains("://")
                    && !name.contains('*')
                    && !name.contains('<')
                    && !name.starts_with("target/")
                    && *name != "models/"
                    && !name.starts_with('/')
            })
            .map(str::to_string)
            .collect();
        sections.push((folder.to_string(), names));
    }
    sections
}

#[test]
fn the_code_map_names_files_that_exist() {
    let repository = repository();
    let text =
        std::fs::read_to_string(repository.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let sections = code_map(&text);
    assert!(sections.len() >= 5, "the code map's sections: {sections:?}");
    let mut missing = Vec::new();
    let mut everything = Vec::new();
    everything_under(&repository, "", &mut everything);
    for (folder, names) in &sections {
        let mut under = Vec::new();
        everything_under(&repository.join(folder), "", &mut under);
        for name in names {
            let exists = everything.contains(name)
                || under
                    .iter()
                    .any(|path| path == name || path.ends_with(&format!("/{name}")));
            if !exists {
                missing.push(format!("{folder}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map names what does not exist: {missing:#?}"
    );
}
