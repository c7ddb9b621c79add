//! `quarry connector install PATH`: check, then hand the pair to a server.
//!
//! A running server watches its plugins folder (`connectors/registry.rs`)
//! and loads a new or changed `<id>.wasm` + `<id>.toml` pair without a
//! restart. The pair is read once and written to a hidden folder inside
//! that folder; that copy is what is checked, and it is renamed into
//! place, so the server never reads half a file nor anything the check did
//! not see. The component goes first and the manifest last, so a new
//! connector appears whole. When a version is replaced, the watcher may see the new
//! component beside the old manifest for one poll; it reloads when the
//! manifest lands, and refuses nothing the check accepted.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::check::{self, Report};
use super::{EXIT_OK, EXIT_PROBLEMS, Target};
use crate::connectors::{Manifest, Runtime, RuntimeConfig};

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// A component (`<id>.wasm`, with `<id>.toml` beside it), or a connector
    /// crate folder built by `quarry connector build`.
    pub path: PathBuf,
    /// The server's plugins folder. Default: the `plugins_dir` of the
    /// configuration (--config, QUARRY_PLUGINS_DIR, else `plugins`).
    #[arg(long)]
    pub plugins_dir: Option<PathBuf>,
    /// The server's configuration file, to find its plugins folder.
    #[arg(long, short)]
    pub config: Option<PathBuf>,
}

/// What was installed.
#[derive(Debug)]
pub struct Installed {
    pub id: String,
    pub version: String,
    pub wasm: PathBuf,
    pub toml: PathBuf,
    /// The version that was there before, if any.
    pub replaced: Option<String>,
    pub report: Report,
}

pub fn run(args: &InstallArgs) -> Result<i32> {
    let plugins_dir = match &args.plugins_dir {
        Some(dir) => dir.clone(),
        None => {
            crate::config::Config::load(args.config.as_deref())
                .context("reading the configuration for its plugins_dir (or pass --plugins-dir)")?
                .plugins_dir
        }
    };
    let target = Target::resolve(&args.path)?;
    match install(&target, &plugins_dir)? {
        Ok(installed) => {
            for problem in &installed.report.problems {
                println!("warning[{}]: {}", problem.code, problem.message);
            }
            let replaced = match &installed.replaced {
                Some(old) => format!(" (replacing version {old})"),
                None => String::new(),
            };
            println!(
                "installed {} {}{replaced}:\n  {}\n  {}\na server watching {} loads it at its next look (every second), without a restart",
                installed.id,
                installed.version,
                installed.wasm.display(),
                installed.toml.display(),
                plugins_dir.display(),
            );
            Ok(EXIT_OK)
        }
        Err(report) => {
            print!("{}", check::render(&report));
            println!("not installed: fix the errors above first");
            Ok(EXIT_PROBLEMS)
        }
    }
}

/// Checks `target` and, when the host would load it, copies it into
/// `plugins_dir`. `Ok(Err(report))`: refused, nothing was written.
pub fn install(target: &Target, plugins_dir: &Path) -> Result<Result<Installed, Report>> {
    if !plugins_dir.is_dir() {
        bail!(
            "{} is not a folder: name the server's plugins folder with --plugins-dir \
             (a server creates it when it starts)",
            plugins_dir.display()
        );
    }
    // Every path below is made of the id: Target::resolve checked it, and
    // so does this, for a Target built by other means.
    if !crate::connectors::manifest::is_valid_id(&target.id) {
        bail!("{:?} is not a connector id", target.id);
    }
    // The files are read once: what is checked is what is installed, even
    // if the originals change meanwhile. The copy waits in a hidden folder
    // of the plugins folder (which the registry does not look into) and
    // is renamed into place: component first, manifest last.
    let manifest_text = std::fs::read(&target.toml)
        .with_context(|| format!("reading {}", target.toml.display()))?;
    let wasm_bytes = std::fs::read(&target.wasm)
        .with_context(|| format!("reading {}", target.wasm.display()))?;
    // A random name nobody can predict or pre-create; removed on drop.
    let staging = tempfile::Builder::new()
        .prefix(".installing-")
        .tempdir_in(plugins_dir)
        .with_context(|| format!("creating a staging folder in {}", plugins_dir.display()))?;
    install_from(
        target,
        plugins_dir,
        staging.path(),
        &manifest_text,
        &wasm_bytes,
    )
}

fn install_from(
    target: &Target,
    plugins_dir: &Path,
    staging: &Path,
    manifest_text: &[u8],
    wasm_bytes: &[u8],
) -> Result<Result<Installed, Report>> {
    let copy = Target {
        id: target.id.clone(),
        wasm: staging.join(format!("{}.wasm", target.id)),
        toml: staging.join(format!("{}.toml", target.id)),
        crate_dir: None,
    };
    write_durably(&copy.wasm, wasm_bytes)?;
    write_durably(&copy.toml, manifest_text)?;
    let runtime = Runtime::new(RuntimeConfig::default())?;
    let report = check::check_copy(&runtime, target, &copy);
    if !report.loads() {
        return Ok(Err(report));
    }
    let wasm = in_plugins_dir(plugins_dir, &target.id, "wasm")?;
    let toml = in_plugins_dir(plugins_dir, &target.id, "toml")?;
    let replaced = std::fs::read_to_string(&toml)
        .ok()
        .and_then(|text| Manifest::parse(&text).ok())
        .map(|m| m.version);
    rename(&copy.wasm, &wasm)?;
    rename(&copy.toml, &toml)?;
    Ok(Ok(Installed {
        id: target.id.clone(),
        version: report.version.clone().unwrap_or_default(),
        wasm,
        toml,
        replaced,
        report,
    }))
}

/// `<id>.<extension>` directly inside `plugins_dir`. The id was checked when
/// the target was resolved; this holds the final path to the folder even
/// so, since a path outside it would be written over.
fn in_plugins_dir(plugins_dir: &Path, id: &str, extension: &str) -> Result<PathBuf> {
    let path = plugins_dir.join(format!("{id}.{extension}"));
    if !crate::connectors::manifest::is_valid_id(id) || path.parent() != Some(plugins_dir) {
        bail!(
            "{id:?} is not a connector id: it would be written outside {}",
            plugins_dir.display()
        );
    }
    Ok(path)
}

/// Writes `bytes` to `path` and flushes them to disk.
fn write_durably(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    file.sync_all()
        .with_context(|| format!("flushing {}", path.display()))
}

/// Moves a checked file into place at once (the same file system).
fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to)
        .with_context(|| format!("renaming {} to {}", from.display(), to.display()))
}
