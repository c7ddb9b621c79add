//! Builds connector crates into components.
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
//! `plugin` profile (the workspace's, or the crate's own).
//!
//! The wasm32 standard library comes from rustup's target when it is
//! installed. Otherwise Debian's `rustc-web`, `cargo-web`, `rust-web-src` and
//! `lld-19` build it from source (`-Z build-std`, with `RUSTC_BOOTSTRAP=1`);
//! missing packages are installed with apt-get.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

const TARGET: &str = "wasm32-unknown-unknown";
const PROFILE: &str = "plugin";
const DEBIAN_PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src", "lld-19"];
const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_WASM_LD: &str = "/usr/lib/llvm-19/bin/wasm-ld";

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
    if crates.is_empty() {
        crates = connector_crates(&root.join("plugins"))?;
    }
    let test_crates = match &test_out {
        Some(_) => connector_crates(&root.join("tests/plugins"))?,
        None => Vec::new(),
    };
    ensure!(!crates.is_empty(), "no connector crates found");
    let toolchain = Toolchain::find()?;
    let all: Vec<&PathBuf> = crates.iter().chain(&test_crates).collect();
    let packages: Vec<String> = all
        .iter()
        .map(|dir| package_name(dir))
        .collect::<Result<_>>()?;
    let mut members = Vec::new();
    for (dir, package) in all.iter().zip(&packages) {
        if is_standalone(dir)? {
            toolchain.build(&root, Build::Standalone(dir))?;
        } else {
            members.push(package.clone());
        }
    }
    if !members.is_empty() {
        toolchain.build(&root, Build::Members(&members))?;
    }
    let module_of = |package: &str| {
        root.join("target/wasm")
            .join(TARGET)
            .join(PROFILE)
            .join(format!("{}.wasm", package.replace('-', "_")))
    };
    for (dir, package) in crates.iter().zip(&packages) {
        let id = install(dir, &module_of(package), &out)?;
        println!("built {id}: {}", out.join(format!("{id}.wasm")).display());
    }
    if let Some(test_out) = &test_out {
        for (dir, package) in all.iter().zip(&packages) {
            let id = install(dir, &module_of(package), test_out)?;
            println!(
                "built {id} (for tests): {}",
                test_out.join(format!("{id}.wasm")).display()
            );
        }
    }
    Ok(())
}

/// What one cargo run builds.
enum Build<'a> {
    /// Packages of this workspace.
    Members(&'a [String]),
    /// A crate that is a workspace of its own.
    Standalone(&'a Path),
}

/// Which compiler builds the wasm32 modules.
enum Toolchain {
    /// rustup's `wasm32-unknown-unknown` target.
    Rustup,
    /// Debian's web toolchain, building std from source.
    DebianBuildStd,
}

impl Toolchain {
    fn find() -> Result<Toolchain> {
        let installed = Command::new("rustup")
            .args(["target", "list", "--installed"])
            .output();
        if let Ok(output) = installed
            && String::from_utf8_lossy(&output.stdout)
                .lines()
                .any(|l| l.trim() == TARGET)
        {
            return Ok(Toolchain::Rustup);
        }
        if !(Path::new(DEBIAN_CARGO).exists()
            && Path::new(DEBIAN_WASM_LD).exists()
            && Path::new("/usr/lib/rustlib/src/rust/library").exists())
        {
            eprintln!(
                "rustup has no {TARGET} target: installing Debian's {}",
                DEBIAN_PACKAGES.join(" ")
            );
            apt_install(DEBIAN_PACKAGES)?;
        }
        Ok(Toolchain::DebianBuildStd)
    }

    fn build(&self, root: &Path, what: Build) -> Result<()> {
        let mut command = match self {
            Toolchain::Rustup => Command::new("cargo"),
            Toolchain::DebianBuildStd => {
                let mut c = Command::new(DEBIAN_CARGO);
                c.env("RUSTC", DEBIAN_RUSTC)
                    .env("RUSTC_BOOTSTRAP", "1")
                    .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", DEBIAN_WASM_LD)
                    // rustup's proxies must not pick the toolchain for Debian's cargo.
                    .env_remove("RUSTUP_TOOLCHAIN")
                    .env_remove("CARGO")
                    .env_remove("RUSTDOC");
                c
            }
        };
        command
            .current_dir(root)
            .env("CARGO_TARGET_DIR", root.join("target/wasm"))
            .env_remove("RUSTFLAGS")
            .args(["build", "--target", TARGET, "--profile", PROFILE]);
        if let Toolchain::DebianBuildStd = self {
            command.args(["-Z", "build-std=std,panic_abort"]);
        }
        match what {
            Build::Members(packages) => {
                for package in packages {
                    command.args(["-p", package]);
                }
            }
            Build::Standalone(dir) => {
                command.arg("--manifest-path").arg(dir.join("Cargo.toml"));
            }
        }
        let status = command
            .status()
            .context("running cargo for the wasm32 build")?;
        ensure!(status.success(), "the wasm32 build failed");
        Ok(())
    }
}

fn apt_install(packages: &[&str]) -> Result<()> {
    let sudo = if is_root() { None } else { Some("sudo") };
    let run = |args: &[&str]| -> Result<()> {
        let mut command = match sudo {
            Some(s) => {
                let mut c = Command::new(s);
                c.arg("apt-get");
                c
            }
            None => Command::new("apt-get"),
        };
        let status = command
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(args)
            .status()
            .context("running apt-get")?;
        ensure!(status.success(), "apt-get {} failed", args.join(" "));
        Ok(())
    };
    run(&["update", "-q"])?;
    let mut args = vec!["install", "-y", "-q"];
    args.extend_from_slice(packages);
    run(&args)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false)
}

/// Turns the core module into a component and installs it with its manifest.
fn install(crate_dir: &Path, module_path: &Path, out: &Path) -> Result<String> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let manifest_path = crate_dir.join("connector.toml");
    let manifest = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("reading {}", manifest_path.display()))?;
    let id = toml::from_str::<toml::Table>(&manifest)?
        .get("id")
        .and_then(|v| v.as_str().map(String::from))
        .with_context(|| format!("{} has no id", manifest_path.display()))?;
    let module =
        std::fs::read(module_path).with_context(|| format!("reading {}", module_path.display()))?;
    let component = wit_component::ComponentEncoder::default()
        .module(&module)
        .context(
            "the module has no component type section: is it built with quarry-connector-sdk?",
        )?
        .validate(true)
        .encode()
        .context("making the component")?;
    // Written through a rename so a running host never loads half a file.
    write_atomically(&out.join(format!("{id}.toml")), manifest.as_bytes())?;
    write_atomically(&out.join(format!("{id}.wasm")), &component)?;
    Ok(id)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}

/// Every folder under `dir` with a `connector.toml` and a `Cargo.toml`.
fn connector_crates(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if !dir.exists() {
        return Ok(found);
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.join("connector.toml").exists() && path.join("Cargo.toml").exists() {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// Whether the crate is a workspace of its own (not a member of ours).
fn is_standalone(crate_dir: &Path) -> Result<bool> {
    let text = std::fs::read_to_string(crate_dir.join("Cargo.toml"))
        .with_context(|| format!("{} has no Cargo.toml", crate_dir.display()))?;
    let table: toml::Table = toml::from_str(&text)?;
    Ok(table.contains_key("workspace"))
}

fn package_name(crate_dir: &Path) -> Result<String> {
    let text = std::fs::read_to_string(crate_dir.join("Cargo.toml"))
        .with_context(|| format!("{} has no Cargo.toml", crate_dir.display()))?;
    let table: toml::Table = toml::from_str(&text)?;
    table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(String::from)
        .with_context(|| format!("{}/Cargo.toml has no package name", crate_dir.display()))
}

fn workspace_root() -> Result<PathBuf> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    Ok(here
        .parent()
        .and_then(Path::parent)
        .context("the builder lives in tools/plugin-builder")?
        .to_path_buf())
}
