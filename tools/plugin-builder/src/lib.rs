//! Connector crates into components: the wasm32 build and the component's
//! encoding, shared by the `plugin-builder` binary (this repository's
//! connectors, into `target/plugins`) and `quarry connector build` (one
//! crate, wherever it is, into its own `target/connector/`).
//!
//! A crate is compiled to a `wasm32-unknown-unknown` core module with the
//! `plugin` profile (the workspace's, or the crate's own), and that module
//! becomes a component with `wit-component`: the component type the SDK's
//! bindings embed says what it imports and exports.
//!
//! The wasm32 standard library comes from rustup's target when it is
//! installed. Otherwise Debian's `rustc-web`, `cargo-web`, `rust-web-src` and
//! `lld-19` build it from source (`-Z build-std`, with `RUSTC_BOOTSTRAP=1`);
//! missing packages are installed with apt-get.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

pub const TARGET: &str = "wasm32-unknown-unknown";
pub const PROFILE: &str = "plugin";
const DEBIAN_PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src", "lld-19"];
const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_WASM_LD: &str = "/usr/lib/llvm-19/bin/wasm-ld";

/// What one cargo run builds.
pub enum Build<'a> {
    /// Packages of the workspace cargo runs in.
    Members(&'a [String]),
    /// One crate, by its folder (a workspace of its own, or a member).
    Crate(&'a Path),
}

/// Which compiler builds the wasm32 modules.
pub enum Toolchain {
    /// rustup's `wasm32-unknown-unknown` target.
    Rustup,
    /// Debian's web toolchain, building std from source.
    DebianBuildStd,
}

impl Toolchain {
    /// rustup's target if it is installed, else Debian's toolchain
    /// (installed with apt-get when it is missing).
    pub fn find() -> Result<Toolchain> {
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

    /// A cargo command of this toolchain.
    fn cargo(&self) -> Command {
        match self {
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
        }
    }

    /// Builds `what` from the folder `cwd` into `target_dir` (where
    /// [`module_path`] finds the modules).
    pub fn build(&self, cwd: &Path, target_dir: &Path, what: Build) -> Result<()> {
        let mut command = self.cargo();
        command
            .current_dir(cwd)
            .env("CARGO_TARGET_DIR", target_dir)
            .env_remove("RUSTFLAGS")
            // A compiler wrapper the caller set for its own crates
            // (tools/test's clippy-driver) is not this toolchain's: it
            // would compile the guest with the host's compiler and sysroot.
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CLIPPY_ARGS")
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
            Build::Crate(dir) => {
                command.arg("--manifest-path").arg(dir.join("Cargo.toml"));
            }
        }
        let status = command
            .status()
            .context("running cargo for the wasm32 build")?;
        ensure!(status.success(), "the wasm32 build failed");
        Ok(())
    }

    /// The target folder cargo uses for the crate in `dir` (its workspace's
    /// `target`, or what `CARGO_TARGET_DIR` or a cargo configuration say).
    pub fn target_dir(&self, dir: &Path) -> Result<PathBuf> {
        let output = self
            .cargo()
            .current_dir(dir)
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--manifest-path",
            ])
            .arg(dir.join("Cargo.toml"))
            .output()
            .context("running cargo metadata")?;
        ensure!(
            output.status.success(),
            "cargo metadata failed on {}: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        let metadata: serde_json::Value =
            serde_json::from_slice(&output.stdout).context("reading cargo metadata")?;
        metadata["target_directory"]
            .as_str()
            .map(PathBuf::from)
            .context("cargo metadata names no target_directory")
    }
}

/// Where a build into `target_dir` leaves `package`'s core module.
pub fn module_path(target_dir: &Path, package: &str) -> PathBuf {
    target_dir
        .join(TARGET)
        .join(PROFILE)
        .join(format!("{}.wasm", package.replace('-', "_")))
}

/// Builds the connector crate in `dir` and writes `<id>.wasm` and
/// `<id>.toml` into `out`; returns the id. The wasm32 build goes to
/// `<cargo's target folder>/wasm`, apart from the crate's native builds.
pub fn build_crate(dir: &Path, out: &Path) -> Result<String> {
    let dir = std::path::absolute(dir).context("the crate folder")?;
    ensure!(
        dir.join("connector.toml").is_file() && dir.join("Cargo.toml").is_file(),
        "{} is not a connector crate: it needs a Cargo.toml and a connector.toml",
        dir.display()
    );
    let package = package_name(&dir)?;
    let toolchain = Toolchain::find()?;
    let target_dir = toolchain.target_dir(&dir)?.join("wasm");
    toolchain.build(&dir, &target_dir, Build::Crate(&dir))?;
    componentize(&dir, &module_path(&target_dir, &package), out)
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

/// Turns the core module into a component and writes it with its manifest
/// into `out` as `<id>.wasm` and `<id>.toml`; returns the id.
pub fn componentize(crate_dir: &Path, module_path: &Path, out: &Path) -> Result<String> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let manifest_path = crate_dir.join("connector.toml");
    let manifest = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("reading {}", manifest_path.display()))?;
    let id = toml::from_str::<toml::Table>(&manifest)
        .with_context(|| format!("{} is not valid TOML", manifest_path.display()))?
        .get("id")
        .and_then(|v| v.as_str().map(String::from))
        .with_context(|| format!("{} has no id", manifest_path.display()))?;
    // The id names the files written below: never a path of its own.
    ensure!(
        quarry_guard::manifest::is_valid_id(&id),
        "{}: id {id:?} is not a connector id (lowercase letters, digits, - and _, starting with a letter)",
        manifest_path.display()
    );
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
pub fn connector_crates(dir: &Path) -> Result<Vec<PathBuf>> {
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
pub fn is_standalone(crate_dir: &Path) -> Result<bool> {
    Ok(cargo_toml(crate_dir)?.contains_key("workspace"))
}

pub fn package_name(crate_dir: &Path) -> Result<String> {
    cargo_toml(crate_dir)?
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(String::from)
        .with_context(|| format!("{}/Cargo.toml has no package name", crate_dir.display()))
}

fn cargo_toml(crate_dir: &Path) -> Result<toml::Table> {
    let path = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{} has no Cargo.toml", crate_dir.display()))?;
    toml::from_str(&text).with_context(|| format!("{} is not valid TOML", path.display()))
}
