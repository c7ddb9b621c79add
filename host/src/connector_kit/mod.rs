//! `quarry connector`: the connector kit, for authors and operators.
//!
//! - [`new`]: scaffolds a Rust connector crate that builds as is,
//!   wherever it is;
//! - [`build`]: builds a connector crate into the pair the host loads;
//! - [`check`]: loads a component and its manifest exactly as the host
//!   would (the registry's own load path, [`crate::connectors::registry::inspect`])
//!   and reports every problem, not just the first;
//! - [`install`]: checks, then copies the pair into a running server's
//!   plugins folder, which hot-loads it.
//!
//! Exit status: 0 when all is well (warnings allowed), 1 when the check
//! found an error (and `install` installed nothing), 2 when the command
//! could not run (a path that does not exist, a crate that was not built,
//! an unwritable folder, bad arguments).

pub mod build;
pub mod check;
pub mod install;
pub mod new;
mod vendor;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};

/// Exit status: everything is fine.
pub const EXIT_OK: i32 = 0;
/// Exit status: the connector has errors (the host would refuse it).
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit status: the command could not do its job.
pub const EXIT_FAILED: i32 = 2;

/// Where `quarry connector build` writes a crate's pair, inside the crate.
pub const BUILT_DIR: &str = "target/connector";

#[derive(clap::Subcommand, Debug)]
pub enum ConnectorCommand {
    /// Scaffold a Rust connector crate (Cargo.toml, src/lib.rs, connector.toml,
    /// README.md; outside a Quarry checkout, a copy of the SDK) that builds
    /// as is, wherever it is.
    New(new::NewArgs),
    /// Build a connector crate into `<id>.wasm` + `<id>.toml`, in the
    /// crate's target/connector/ (or --out DIR).
    Build(build::BuildArgs),
    /// Load a connector exactly as the host would and report every problem
    /// (exit 1 on any error, 2 when the check cannot run).
    Check(check::CheckArgs),
    /// Check a connector, then copy it into a server's plugins folder,
    /// which a running server hot-loads (no restart).
    Install(install::InstallArgs),
}

/// Runs one `quarry connector` command; returns the process's exit status.
pub fn run(command: ConnectorCommand) -> i32 {
    let outcome = match command {
        ConnectorCommand::New(args) => new::run(&args).map(|()| EXIT_OK),
        ConnectorCommand::Build(args) => build::run(&args).map(|()| EXIT_OK),
        ConnectorCommand::Check(args) => check::run(&args),
        ConnectorCommand::Install(args) => install::run(&args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            EXIT_FAILED
        }
    }
}

/// The two files of a connector, found from what the user named.
#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    pub wasm: PathBuf,
    pub toml: PathBuf,
    /// The crate folder, when a crate was named.
    pub crate_dir: Option<PathBuf>,
}

impl Target {
    /// `PATH` is a component (`<id>.wasm`, its manifest `<id>.toml`
    /// beside it) or a connector crate folder (`connector.toml` +
    /// `Cargo.toml`) that was built: its component is found in the crate's
    /// `target/connector/` (`quarry connector build`), else in the nearest
    /// `target/plugins/` above it (tools/plugin-builder), or in the current
    /// folder's, or in that of the checkout this `quarry` was built from.
    pub fn resolve(path: &Path) -> Result<Target> {
        if path.is_dir() {
            return Target::from_crate(path);
        }
        if !path.exists() {
            bail!("{} does not exist", path.display());
        }
        if path.extension().and_then(|e| e.to_str()) != Some("wasm") {
            bail!(
                "{} is neither a component (<id>.wasm) nor a connector crate folder",
                path.display()
            );
        }
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .context("the component's file name is not UTF-8")?
            .to_string();
        let id = checked_id(id, path)?;
        Ok(Target {
            id,
            wasm: path.to_path_buf(),
            toml: path.with_extension("toml"),
            crate_dir: None,
        })
    }

    fn from_crate(dir: &Path) -> Result<Target> {
        let toml = dir.join("connector.toml");
        if !toml.exists() {
            bail!(
                "{} has no connector.toml: name a connector crate folder or a built <id>.wasm",
                dir.display()
            );
        }
        let text = std::fs::read_to_string(&toml)
            .with_context(|| format!("reading {}", toml.display()))?;
        let id = manifest_id(&text).with_context(|| {
            format!(
                "{} names no id, so its component cannot be found",
                toml.display()
            )
        })?;
        // The id names every file found or written from here on: it is
        // checked before any path is made of it.
        let id = checked_id(id, &toml)?;
        let candidates = built_candidates(dir, &id);
        let Some(wasm) = candidates.iter().find(|p| p.exists()).cloned() else {
            bail!(
                "no built component for {id:?}: build it with `quarry connector build {}` \
                 (looked for {})",
                dir.display(),
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        Ok(Target {
            id,
            wasm,
            toml,
            crate_dir: Some(dir.to_path_buf()),
        })
    }

    /// Whether the component is older than the crate's sources.
    pub fn is_stale(&self) -> bool {
        let Some(dir) = &self.crate_dir else {
            return false;
        };
        let Ok(built) = std::fs::metadata(&self.wasm).and_then(|m| m.modified()) else {
            return false;
        };
        newest_source(dir).is_some_and(|newest| newest > built)
    }
}

/// `id` when it is a connector id, which can never be a path (lowercase
/// letters, digits, `-` and `_`, starting with a letter); else the error,
/// naming `source`, where it was read.
fn checked_id(id: String, source: &Path) -> Result<String> {
    if !crate::connectors::manifest::is_valid_id(&id) {
        bail!(
            "{}: id {id:?} is not a connector id (lowercase letters, digits, - and _, \
             starting with a letter)",
            source.display()
        );
    }
    Ok(id)
}

/// The `id` of a manifest, read leniently (the check reports what is
/// wrong with the rest).
fn manifest_id(text: &str) -> Option<String> {
    if let Ok(table) = toml::from_str::<toml::Table>(text) {
        return table.get("id")?.as_str().map(String::from);
    }
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "id").then(|| value.trim().trim_matches('"').to_string())
    })
}

/// Where `quarry connector build` or tools/plugin-builder may have put
/// `<id>.wasm` for a crate in `dir`.
fn built_candidates(dir: &Path, id: &str) -> Vec<PathBuf> {
    let file = format!("target/plugins/{id}.wasm");
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut candidates = vec![absolute.join(BUILT_DIR).join(format!("{id}.wasm"))];
    for ancestor in absolute.ancestors() {
        candidates.push(ancestor.join(&file));
    }
    if let Ok(cwd) = std::env::current_dir() {
        candidates.push(cwd.join(&file));
    }
    if let Some(checkout) = build_checkout() {
        candidates.push(checkout.join(&file));
    }
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|p| seen.insert(p.clone()));
    candidates
}

/// The Quarry checkout this binary was built from, if it is still there.
pub fn build_checkout() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    is_quarry_checkout(root).then(|| root.to_path_buf())
}

/// Whether `dir` is the root of a Quarry repository.
pub fn is_quarry_checkout(dir: &Path) -> bool {
    dir.join("wit/v1/connector.wit").is_file() && dir.join("plugins/sdk/Cargo.toml").is_file()
}

fn newest_source(dir: &Path) -> Option<SystemTime> {
    let mut newest = std::fs::metadata(dir.join("Cargo.toml"))
        .and_then(|m| m.modified())
        .ok();
    let mut stack = vec![dir.join("src")];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(modified) = entry.metadata().and_then(|m| m.modified()) {
                newest = newest.max(Some(modified));
            }
        }
    }
    newest
}
