//! Builds this repository's connector crates into components.
//!
//! ```text
//! cargo run -p quarry-plugin-builder -- [--out DIR] [--test-out DIR] [CRATE_DIR ...]
//! ```
//!
//! For each crate (default: every crate under `plugins/` with a
//! `connector.toml`), it compiles a `wasm32-unknown-unknown` module, turns it
//! into a component with `wit-component`, and writes `<id>.wasm` and
//! `<id>.toml` into the output folder (default `target/plugins`). With
//! `--test-out`, the plugins under `tests/plugins/` (which attack or probe
//! the sandbox) are built too, and every plugin is written to that folder:
//! test plugins never land in a folder a server loads by default.
//!
//! A crate may be a member of this workspace (the repository's connectors)
//! or a workspace of its own (a `[workspace]` table in its Cargo.toml, as
//! `quarry connector new` writes, anywhere on disk): members are built in
//! one cargo run, the others each with `--manifest-path`. Either needs a
//! `plugin` profile (the workspace's, or the crate's own). Every wasm32
//! build goes to `target/wasm`.
//!
//! The work is the library's (`src/lib.rs`), which `quarry connector build`
//! shares: that command builds one crate anywhere, with no checkout.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use quarry_plugin_builder::{
    Build, Toolchain, componentize, connector_crates, is_standalone, module_path, package_name,
};

fn main() -> Result<()> {
    let root = workspace_root()?;
    let mut out = root.join("target/plugins");
    let mut crates = Vec::new();
    let mut test_out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = PathBuf::from(args.next().context("--out needs a folder")?),
            "--test-out" => {
                test_out = Some(PathBuf::from(
                    args.next().context("--test-out needs a folder")?,
                ))
            }
            "-h" | "--help" => {
                println!("usage: plugin-builder [--out DIR] [--test-out DIR] [CRATE_DIR ...]");
                return Ok(());
            }
            other if other.starts_with('-') => bail!("unknown option {other}"),
            // Absolute: cargo runs from the workspace root, not from here.
            dir => crates.push(std::path::absolute(dir).context("a crate folder")?),
        }
    }
    // Building every crate into the builder's own folders, a pair whose
    // crate is gone (renamed, split: microsoft-365) is removed from them:
    // a server loading the folder must not keep serving an old build.
    let every_crate = crates.is_empty();
    let default_out = out == root.join("target/plugins");
    if every_crate {
        crates = connector_crates(&root.join("plugins"))?;
    }
    let test_crates = match &test_out {
        Some(_) => connector_crates(&root.join("tests/plugins"))?,
        None => Vec::new(),
    };
    ensure!(!crates.is_empty(), "no connector crates found");
    let toolchain = Toolchain::find()?;
    let target_dir = root.join("target/wasm");
    let all: Vec<&PathBuf> = crates.iter().chain(&test_crates).collect();
    let packages: Vec<String> = all
        .iter()
        .map(|dir| package_name(dir))
        .collect::<Result<_>>()?;
    let mut members = Vec::new();
    for (dir, package) in all.iter().zip(&packages) {
        if is_standalone(dir)? {
            toolchain.build(&root, &target_dir, Build::Crate(dir))?;
        } else {
            members.push(package.clone());
        }
    }
    if !members.is_empty() {
        toolchain.build(&root, &target_dir, Build::Members(&members))?;
    }
    let mut built = Vec::new();
    for (dir, package) in crates.iter().zip(&packages) {
        let id = componentize(dir, &module_path(&target_dir, package), &out)?;
        println!("built {id}: {}", out.join(format!("{id}.wasm")).display());
        built.push(id);
    }
    if every_crate && default_out {
        remove_stale_pairs(&out, &built)?;
    }
    if let Some(test_out) = &test_out {
        let mut built = Vec::new();
        for (dir, package) in all.iter().zip(&packages) {
            let id = componentize(dir, &module_path(&target_dir, package), test_out)?;
            println!(
                "built {id} (for tests): {}",
                test_out.join(format!("{id}.wasm")).display()
            );
            built.push(id);
        }
        if every_crate {
            remove_stale_pairs(test_out, &built)?;
        }
    }
    Ok(())
}

/// Removes the `<id>.wasm` + `<id>.toml` pairs in `dir` of ids not `built`.
fn remove_stale_pairs(dir: &Path, built: &[String]) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let wasm = entry?.path();
        let Some(id) = wasm.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let toml = wasm.with_extension("toml");
        let pair = wasm.extension().is_some_and(|e| e == "wasm") && toml.is_file();
        if pair && !built.iter().any(|b| b == id) {
            std::fs::remove_file(&wasm).with_context(|| format!("removing {}", wasm.display()))?;
            std::fs::remove_file(&toml).with_context(|| format!("removing {}", toml.display()))?;
            println!("removed {id}: its crate is gone");
        }
    }
    Ok(())
}

fn workspace_root() -> Result<PathBuf> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    Ok(here
        .parent()
        .and_then(Path::parent)
        .context("the builder lives in tools/plugin-builder")?
        .to_path_buf())
}
