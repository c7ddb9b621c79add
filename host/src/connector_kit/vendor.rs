//! The SDK a crate made outside a Quarry checkout carries with it.
//!
//! The binary holds its own copy of `plugins/sdk` and of the contract the
//! SDK builds against (compiled in), and writes them into the new crate as
//! `vendor/quarry-connector-sdk/` and `wit/v1.1/`: the same layout as the
//! repository's, so the SDK's bindings find the contract at
//! `../../wit/v1.1` unchanged. The crate then builds wherever it is, with
//! nothing but the `quarry` binary and a Rust toolchain.
//!
//! The SDK's `Cargo.toml` inherits from the repository's workspace; the
//! copy has what it inherits written out, and the workspace's `Cargo.lock`
//! pins the versions Quarry was built and tested with.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use toml::{Table, Value};

/// Where the copy goes, inside the crate.
pub const SDK_DIR: &str = "vendor/quarry-connector-sdk";

/// The SDK's sources, by path inside `plugins/sdk`. A test holds this list
/// to the folder.
const SDK_SOURCES: &[(&str, &str)] = &[
    (
        "src/atlassian.rs",
        include_str!("../../../plugins/sdk/src/atlassian.rs"),
    ),
    (
        "src/common_words.txt",
        include_str!("../../../plugins/sdk/src/common_words.txt"),
    ),
    (
        "src/google.rs",
        include_str!("../../../plugins/sdk/src/google.rs"),
    ),
    (
        "src/http.rs",
        include_str!("../../../plugins/sdk/src/http.rs"),
    ),
    (
        "src/json.rs",
        include_str!("../../../plugins/sdk/src/json.rs"),
    ),
    (
        "src/lib.rs",
        include_str!("../../../plugins/sdk/src/lib.rs"),
    ),
    (
        "src/log.rs",
        include_str!("../../../plugins/sdk/src/log.rs"),
    ),
    (
        "src/microsoft.rs",
        include_str!("../../../plugins/sdk/src/microsoft.rs"),
    ),
    (
        "src/page.rs",
        include_str!("../../../plugins/sdk/src/page.rs"),
    ),
    (
        "src/plan.rs",
        include_str!("../../../plugins/sdk/src/plan.rs"),
    ),
    (
        "src/response.rs",
        include_str!("../../../plugins/sdk/src/response.rs"),
    ),
    (
        "src/testing.rs",
        include_str!("../../../plugins/sdk/src/testing.rs"),
    ),
    (
        "src/text.rs",
        include_str!("../../../plugins/sdk/src/text.rs"),
    ),
    (
        "src/time.rs",
        include_str!("../../../plugins/sdk/src/time.rs"),
    ),
    (
        "src/url.rs",
        include_str!("../../../plugins/sdk/src/url.rs"),
    ),
];
const SDK_CARGO_TOML: &str = include_str!("../../../plugins/sdk/Cargo.toml");
/// The contract the SDK's bindings are generated from.
const CONTRACT: (&str, &str) = (
    "wit/v1.1/connector.wit",
    include_str!("../../../wit/v1.1/connector.wit"),
);
const WORKSPACE_CARGO_TOML: &str = include_str!("../../../Cargo.toml");
/// The versions this binary was built and tested with; cargo keeps what
/// applies to the new crate.
pub const CARGO_LOCK: &str = include_str!("../../../Cargo.lock");

/// Writes the SDK and the contract into `crate_dir`; returns the files.
pub fn write(crate_dir: &Path) -> Result<Vec<PathBuf>> {
    let sdk = crate_dir.join(SDK_DIR);
    let mut files: Vec<(PathBuf, String)> = SDK_SOURCES
        .iter()
        .map(|(path, text)| (sdk.join(path), text.to_string()))
        .collect();
    files.push((sdk.join("Cargo.toml"), sdk_cargo_toml()?));
    files.push((crate_dir.join(CONTRACT.0), CONTRACT.1.to_string()));
    let mut written = Vec::new();
    for (path, text) in files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// The SDK's `Cargo.toml` with what it inherits from the workspace
/// (`edition.workspace = true`, `serde.workspace = true`) written out.
fn sdk_cargo_toml() -> Result<String> {
    let workspace: Table = toml::from_str(WORKSPACE_CARGO_TOML)?;
    let shared = |section: &str| {
        workspace
            .get("workspace")
            .and_then(|w| w.get(section))
            .and_then(Value::as_table)
            .with_context(|| format!("the workspace's Cargo.toml has no [workspace.{section}]"))
    };
    let (package_values, dependencies) = (shared("package")?, shared("dependencies")?);
    let mut sdk: Table = toml::from_str(SDK_CARGO_TOML)?;
    if let Some(package) = sdk.get_mut("package").and_then(Value::as_table_mut) {
        for (key, value) in package.iter_mut() {
            if is_inherited(value) {
                *value = package_values
                    .get(key)
                    .cloned()
                    .with_context(|| format!("the workspace has no package.{key}"))?;
            }
        }
        package.insert("publish".into(), Value::Boolean(false));
    }
    for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
        let Some(own) = sdk.get_mut(section).and_then(Value::as_table_mut) else {
            continue;
        };
        for (name, spec) in own.iter_mut() {
            if is_inherited(spec) {
                let shared = dependencies
                    .get(name)
                    .with_context(|| format!("the workspace has no dependency {name}"))?;
                *spec = inherited_dependency(name, shared, spec)?;
            }
        }
    }
    // [package] first, as people write it.
    let package = sdk
        .remove("package")
        .map(|p| Table::from_iter([("package".into(), p)]));
    let package = package.map(|p| toml::to_string(&p)).transpose()?;
    Ok(format!(
        "# The Quarry connector SDK, copied into this crate by `quarry connector new`\n\
         # (the copy the quarry binary carries), with the contract it builds against\n\
         # in ../../wit/v1.1. Replace both with a newer quarry's to update them.\n\n{}\n{}",
        package.unwrap_or_default(),
        toml::to_string(&sdk)?
    ))
}

fn is_inherited(value: &Value) -> bool {
    value.get("workspace").and_then(Value::as_bool) == Some(true)
}

/// What a member gets when it inherits the workspace's dependency: the
/// workspace's version and features, plus its own features and
/// `optional`.
fn inherited_dependency(name: &str, shared: &Value, own: &Value) -> Result<Value> {
    let mut spec = match shared {
        Value::String(version) => Table::from_iter([("version".into(), version.clone().into())]),
        Value::Table(table) => table.clone(),
        other => bail!("the workspace's dependency {name} is {other}, not a version or a table"),
    };
    if spec.contains_key("path") || spec.contains_key("git") {
        bail!("the workspace's dependency {name} is not from crates.io: it cannot be vendored");
    }
    if let Some(features) = own.get("features").and_then(Value::as_array) {
        let all = spec
            .entry("features")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(all) = all {
            all.extend(features.iter().cloned());
        }
    }
    if let Some(optional) = own.get("optional") {
        spec.insert("optional".into(), optional.clone());
    }
    Ok(Value::Table(spec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sdk_source_is_carried() {
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/sdk/src");
        let mut on_disk: Vec<String> = std::fs::read_dir(&sdk)
            .unwrap()
            .map(|e| format!("src/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        on_disk.sort();
        let carried: Vec<&str> = SDK_SOURCES.iter().map(|(path, _)| *path).collect();
        assert_eq!(
            on_disk, carried,
            "plugins/sdk/src and vendor.rs's SDK_SOURCES differ: add the new file there"
        );
    }

    #[test]
    fn the_sdk_manifest_inherits_nothing() {
        let text = sdk_cargo_toml().unwrap();
        assert!(!text.contains("workspace"), "{text}");
        let manifest: Table = toml::from_str(&text).unwrap();
        assert_eq!(
            manifest["package"]["name"].as_str(),
            Some("quarry-connector-sdk")
        );
        assert_eq!(manifest["package"]["edition"].as_str(), Some("2024"));
        let bindgen = &manifest["dependencies"]["wit-bindgen"];
        assert!(bindgen["version"].as_str().is_some(), "{text}");
        assert_eq!(bindgen["default-features"].as_bool(), Some(false));
        assert!(manifest["dependencies"]["serde_json"]["version"].is_str());
    }
}
