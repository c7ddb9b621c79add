//! Architecture invariants that can be checked by reading the source
//! (ARCHITECTURE.md, "Architecture invariants").

mod architecture;
mod imports;

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
pub(crate) fn sources(dir: &Path) -> Vec<PathBuf> {
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

/// The files outside `allowed` (a folder under `host/src`) that name `word`.
fn naming_outside(word: &str, allowed: &str) -> Vec<String> {
    files_naming(word)
        .into_iter()
        .filter(|path| !path.starts_with(allowed) && !path.starts_with("invariants/"))
        .collect()
}

/// The workspace's crates, by their folder, with their manifests.
fn workspace_manifests() -> Vec<(String, toml::Table)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace's manifest");
    let workspace: toml::Table = toml::from_str(&text).expect("TOML");
    let members = workspace["workspace"]["members"]
        .as_array()
        .expect("members");
    members
        .iter()
        .filter_map(|member| member.as_str())
        .map(|member| {
            let text = std::fs::read_to_string(root.join(member).join("Cargo.toml"))
                .expect("a member's manifest");
            (member.to_string(), toml::from_str(&text).expect("TOML"))
        })
        .collect()
}

/// Storage engines, the embedding models and the WebAssembly engine are
/// Cargo facts: no crate of the workspace but `quarry-store` (host/store)
/// depends on redb or PostgreSQL's client, none but `quarry-rank`
/// (host/rank) on candle, ONNX Runtime, the tokenizer or usearch, and
/// none but `quarry-sandbox` (host/sandbox) on wasmtime.
#[test]
fn heavy_dependencies_belong_to_one_crate_each() {
    let owners = [
        (
            "host/store",
            ["redb", "tokio-postgres", "deadpool-postgres", "postgres"].as_slice(),
        ),
        (
            "host/rank",
            [
                "candle-core",
                "candle-nn",
                "candle-transformers",
                "ort",
                "tokenizers",
                "usearch",
            ]
            .as_slice(),
        ),
        ("host/sandbox", ["wasmtime", "wasmtime-wasi"].as_slice()),
    ];
    for (member, manifest) in workspace_manifests() {
        for (owner, dependencies) in owners {
            if member == owner {
                continue;
            }
            for table in ["dependencies", "dev-dependencies"] {
                let Some(declared) = manifest.get(table).and_then(|t| t.as_table()) else {
                    continue;
                };
                for dependency in dependencies {
                    assert!(
                        !declared.contains_key(*dependency),
                        "{member} depends on {dependency}: it is {owner}'s"
                    );
                }
            }
        }
    }
}

/// `cargo build --release -p quarry`, the production binary, links no
/// test fake (fake-saas), no failpoint and no plugin builder: each is an
/// optional dependency that no default feature turns on.
#[test]
fn the_production_binary_links_no_fake_failpoint_or_plugin_builder() {
    let (_, host) = workspace_manifests()
        .into_iter()
        .find(|(member, _)| member == "host")
        .expect("the host's manifest");
    let defaults: Vec<&str> = host["features"]["default"]
        .as_array()
        .expect("default features")
        .iter()
        .filter_map(|feature| feature.as_str())
        .collect();
    for (dependency, feature) in [
        ("fake-saas", "demo"),
        ("libc", "failpoints"),
        ("quarry-plugin-builder", "connector-build"),
    ] {
        let optional = host["dependencies"][dependency]
            .get("optional")
            .and_then(|o| o.as_bool());
        assert_eq!(optional, Some(true), "{dependency} must be optional");
        let enabling = host["features"][feature].as_array().expect("the feature");
        assert!(
            enabling
                .iter()
                .any(|f| f.as_str() == Some(&format!("dep:{dependency}"))),
            "{feature} turns {dependency} on"
        );
        assert!(!defaults.contains(&feature), "{feature} is not a default");
    }
}

#[test]
fn only_coordination_touches_redis() {
    let outside = naming_outside("redis::", "coordination/");
    assert!(
        outside.is_empty(),
        "Redis is used outside coordination/: {outside:?}"
    );
}

fn module_of(relative: &str) -> String {
    let first = relative.split('/').next().unwrap_or(relative);
    first.trim_end_matches(".rs").to_string()
}

/// Which top-level modules each one names (`crate::x`), outside tests.
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: std::collections::BTreeMap<_, std::collections::BTreeSet<_>> =
        Default::default();
    for path in sources(&root) {
        let relative = path
            .strip_prefix(&root)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let from = module_of(&relative);
        if ["lib", "main", "invariants"].contains(&from.as_str()) || relative.ends_with("tests.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("reading a source file");
        // Test modules may reach anywhere.
        let code = text
            .split("#[cfg(test)]\nmod tests {")
            .next()
            .unwrap_or_default();
        let edges = graph.entry(from.clone()).or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let name: String = line[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() && name != from {
                    edges.insert(name);
                }
            }
        }
    }
    graph
}

#[test]
fn top_level_modules_import_each_other_without_cycles() {
    let graph = module_graph();
    // Depth-first search; a module met again on the current path closes a
    // cycle.
    fn visit(
        module: &str,
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if !done.insert(module.to_string()) {
            return None;
        }
        path.push(module.to_string());
        for next in graph.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = Default::default();
    for module in graph.keys() {
        let cycle = visit(module, &graph, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "an import cycle: {}",
            cycle.unwrap().join(" -> ")
        );
    }
}

/// `/v1` (`api`), `/mcp` (`mcp`) and the dashboard stand side by side on
/// the services: none of the three imports another.
#[test]
fn the_front_doors_do_not_import_each_other() {
    let graph = module_graph();
    let doors = ["api", "mcp", "dashboard"];
    for door in doors {
        let crossing: Vec<&String> = graph
            .get(door)
            .into_iter()
            .flatten()
            .filter(|to| doors.contains(&to.as_str()))
            .collect();
        assert!(crossing.is_empty(), "{door} imports {crossing:?}");
    }
}
