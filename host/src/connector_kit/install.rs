//! `quarry connector install PATH`: check, then hand the pair to a server.
//!
//! A running server watches its plugins folder (`connectors/registry.rs`)
//! and loads a new or changed `<id>.wasm` + `<id>.toml` pair without a
//! restart. Each file is written under a temporary name in that folder
//! and renamed into place, so the server never reads half a file; the
//! component goes first and the manifest last, so a new connector appears
//! whole. When a version is replaced, the watcher may see the new
//! component beside the old manifest for one poll; it reloads when the
//! manifest lands, and refuses nothing the check accepted.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::check::{self, Report};
use super::{EXIT_OK, EXIT_PROBLEMS, Target};
use crate::connectors::Manifest;

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// A component (`<id>.wasm`, with `<id>.toml` beside it), or a connector
    /// crate folder built by tools/plugin-builder.
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
    let report = check::check(target)?;
    if !report.loads() {
        return Ok(Err(report));
    }
    let manifest_text = std::fs::read_to_string(&target.toml)
        .with_context(|| format!("reading {}", target.toml.display()))?;
    let wasm_bytes = std::fs::read(&target.wasm)
        .with_context(|| format!("reading {}", target.wasm.display()))?;
    let wasm = plugins_dir.join(format!("{}.wasm", target.id));
    let toml = plugins_dir.join(format!("{}.toml", target.id));
    let replaced = std::fs::read_to_string(&toml)
        .ok()
        .and_then(|text| Manifest::parse(&text).ok())
        .map(|m| m.version);
    write_atomically(&wasm, &wasm_bytes)?;
    write_atomically(&toml, manifest_text.as_bytes())?;
    Ok(Ok(Installed {
        id: target.id.clone(),
        version: report.version.clone().unwrap_or_default(),
        wasm,
        toml,
        replaced,
        report,
    }))
}

/// Writes `bytes` to a temporary file in `path`'s folder (a name the
/// registry ignores), flushes it to disk, and renames it to `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("a file in a folder")?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .context("a UTF-8 file name")?;
    let tmp = dir.join(format!(".{name}.{}.installing", std::process::id()));
    let result = (|| -> Result<()> {
        let mut file =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        file.write_all(bytes)
            .with_context(|| format!("writing {}", tmp.display()))?;
        file.sync_all()
            .with_context(|| format!("flushing {}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
