//! `quarry connector new NAME`: a Rust connector crate that builds as is.
//!
//! The template is `host/templates/connector/`, compiled into the binary.
//! The crate is a workspace of its own (so it builds wherever it is, in
//! this repository or not). Where its SDK comes from:
//!
//! - inside a Quarry checkout: that checkout's `plugins/sdk`, by relative
//!   path (the crate moves with the checkout);
//! - anywhere else: a copy the binary carries, written into the crate
//!   ([`vendor`]), so that nothing but `quarry` and a Rust toolchain is
//!   needed;
//! - or what `--sdk` names: `vendored`, a path to a `plugins/sdk`, or
//!   `git+URL[#REV]`.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{BUILT_DIR, is_quarry_checkout, vendor};
use crate::connectors::manifest::is_valid_id;

const CARGO_TOML: &str = include_str!("../../templates/connector/Cargo.toml.tmpl");
const LIB_RS: &str = include_str!("../../templates/connector/lib.rs.tmpl");
const CONNECTOR_TOML: &str = include_str!("../../templates/connector/connector.toml.tmpl");
const README_MD: &str = include_str!("../../templates/connector/README.md.tmpl");

#[derive(clap::Args, Debug)]
pub struct NewArgs {
    /// The connector's id: 1-64 characters of a-z, 0-9, '-' and '_',
    /// starting with a letter (e.g. `acme-wiki`).
    pub name: String,
    /// The crate's folder itself (default: ./NAME). It must not exist, or
    /// be an empty folder.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The SDK: `vendored` (a copy this binary carries, written into the
    /// crate), a path to a Quarry checkout's `plugins/sdk`, or
    /// `git+URL[#REV]`. Default: inside a Quarry checkout, its
    /// `plugins/sdk` by relative path; elsewhere, `vendored`.
    #[arg(long)]
    pub sdk: Option<String>,
}

/// Where the SDK comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sdk {
    /// A copy written into the crate (`vendor/quarry-connector-sdk`).
    Vendored,
    /// A `plugins/sdk` folder (in the Quarry checkout `checkout`, if any).
    Path {
        sdk: PathBuf,
        checkout: Option<PathBuf>,
    },
    Git {
        url: String,
        rev: Option<String>,
    },
}

pub fn run(args: &NewArgs) -> Result<()> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    let files = create(&args.name, &dir, args.sdk.as_deref())?;
    println!("created connector {:?} in {}:", args.name, dir.display());
    for file in files.iter().filter(|f| !f.starts_with(dir.join("vendor"))) {
        println!("  {}", file.display());
    }
    if dir.join(vendor::SDK_DIR).is_dir() {
        println!("  {} (the SDK)", dir.join(vendor::SDK_DIR).display());
    }
    println!(
        "next, in {}:\n  \
         cargo test                      # its unit tests, natively\n  \
         quarry connector build          # {BUILT_DIR}/{id}.wasm + {id}.toml\n  \
         quarry connector check .        # what the host would refuse, all at once\n  \
         quarry connector install . --plugins-dir PLUGINS_DIR\n\
         (its README.md, and docs/connectors.md in the Quarry repository, are the guide)",
        dir.display(),
        id = args.name,
    );
    Ok(())
}

/// Writes the crate; returns the files written.
pub fn create(name: &str, dir: &Path, sdk: Option<&str>) -> Result<Vec<PathBuf>> {
    if !is_valid_id(name) {
        bail!(
            "{name:?} cannot be a connector id: use 1-64 characters of a-z, 0-9, '-' and '_', \
             starting with a letter"
        );
    }
    if dir.exists()
        && std::fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} already exists and is not empty: --dir names the crate's folder itself \
             (not the folder to create it in), which must not exist yet or be empty",
            dir.display()
        );
    }
    let absolute = std::path::absolute(dir)?;
    let sdk = match sdk {
        Some(given) => parse_sdk(given)?,
        None => default_sdk(&absolute),
    };
    let (dependency, note) = dependency(&sdk, &absolute);
    let values = [
        ("id", name.to_string()),
        ("label", label(name)),
        ("type_name", type_name(name)),
        ("sdk_dependency", dependency),
        ("sdk_note", note),
    ];
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for (file, template) in [
        ("Cargo.toml", CARGO_TOML),
        ("connector.toml", CONNECTOR_TOML),
        ("src/lib.rs", LIB_RS),
        ("README.md", README_MD),
        (".gitignore", "/target\n"),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, render(template, &values))
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    // The versions Quarry is built and tested with (cargo keeps what
    // applies to this crate).
    let lock = dir.join("Cargo.lock");
    std::fs::write(&lock, vendor::CARGO_LOCK)
        .with_context(|| format!("writing {}", lock.display()))?;
    written.push(lock);
    if sdk == Sdk::Vendored {
        written.extend(vendor::write(dir)?);
    }
    Ok(written)
}

/// The crate's dependency line for the SDK, and a sentence for its README.
fn dependency(sdk: &Sdk, crate_dir: &Path) -> (String, String) {
    match sdk {
        Sdk::Vendored => (
            format!("quarry-connector-sdk = {{ path = {:?} }}", vendor::SDK_DIR),
            format!(
                "a copy of the SDK in `{}/`, with the contract it builds against in \
                 `wit/`, written by the `quarry` that made this crate: it builds anywhere, \
                 with no Quarry checkout. To update both, run a newer `quarry connector new` \
                 elsewhere and copy its `vendor/` and `wit/` over these.",
                vendor::SDK_DIR
            ),
        ),
        Sdk::Path { sdk, checkout } => {
            // Relative inside the checkout (the crate moves with it),
            // absolute outside.
            let inside = checkout
                .as_deref()
                .is_some_and(|c| crate_dir.starts_with(c));
            let shown = inside
                .then(|| relative_path(crate_dir, sdk))
                .flatten()
                .unwrap_or_else(|| sdk.clone())
                .display()
                .to_string()
                .replace('\\', "/");
            (
                format!("quarry-connector-sdk = {{ path = {shown:?} }}"),
                format!(
                    "the SDK by path ({shown}). Outside a Quarry checkout, \
                     `quarry connector new` writes a copy of the SDK into the crate instead \
                     (`--sdk vendored`)."
                ),
            )
        }
        Sdk::Git { url, rev } => (
            match rev {
                Some(rev) => {
                    format!("quarry-connector-sdk = {{ git = {url:?}, rev = {rev:?} }}")
                }
                None => format!("quarry-connector-sdk = {{ git = {url:?} }}"),
            },
            "the SDK from the Quarry repository by git; `quarry connector new --sdk vendored` \
             writes a copy into the crate instead."
                .to_string(),
        ),
    }
}

/// Replaces every `{{name}}`; a placeholder left over is a bug in the
/// template (caught by the tests).
fn render(template: &str, values: &[(&str, String)]) -> String {
    let mut text = template.to_string();
    for (name, value) in values {
        text = text.replace(&format!("{{{{{name}}}}}"), value);
    }
    text
}

fn parse_sdk(given: &str) -> Result<Sdk> {
    if given == "vendored" {
        return Ok(Sdk::Vendored);
    }
    if let Some(rest) = given.strip_prefix("git+") {
        let (url, rev) = match rest.split_once('#') {
            Some((url, rev)) => (url, Some(rev.to_string())),
            None => (rest, None),
        };
        return Ok(Sdk::Git {
            url: url.to_string(),
            rev,
        });
    }
    let sdk = std::path::absolute(given)?;
    if !sdk.join("Cargo.toml").is_file() {
        bail!(
            "--sdk {given}: no Cargo.toml there (name `vendored`, a Quarry checkout's \
             plugins/sdk folder, or git+URL)"
        );
    }
    let checkout = sdk
        .parent()
        .and_then(Path::parent)
        .filter(|root| is_quarry_checkout(root))
        .map(Path::to_path_buf);
    Ok(Sdk::Path { sdk, checkout })
}

/// The SDK of the checkout the crate is made in, else a copy.
fn default_sdk(crate_dir: &Path) -> Sdk {
    match crate_dir.ancestors().find(|a| is_quarry_checkout(a)) {
        Some(root) => Sdk::Path {
            sdk: root.join("plugins/sdk"),
            checkout: Some(root.to_path_buf()),
        },
        None => Sdk::Vendored,
    }
}

/// `to` relative to `from` (both absolute), e.g. `../../plugins/sdk`.
fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
    let (from, to) = (normalize(from), normalize(to));
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    if from.first() != to.first() {
        return None;
    }
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to[common..] {
        path.push(part);
    }
    Some(path)
}

/// Removes `.` and resolves `..` lexically (symlinks are kept as named).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `acme-wiki` → `Acme Wiki`.
fn label(id: &str) -> String {
    words(id).map(capitalize).collect::<Vec<_>>().join(" ")
}

/// `acme-wiki` → `AcmeWiki`.
fn type_name(id: &str) -> String {
    words(id).map(capitalize).collect()
}

fn words(id: &str) -> impl Iterator<Item = &str> {
    id.split(['-', '_']).filter(|w| !w.is_empty())
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(label("acme-wiki_2"), "Acme Wiki 2");
        assert_eq!(type_name("acme-wiki_2"), "AcmeWiki2");
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("/r/plugins/acme"), Path::new("/r/plugins/sdk")).unwrap(),
            Path::new("../sdk")
        );
        assert_eq!(
            relative_path(Path::new("/r/x/./y/../acme"), Path::new("/r/plugins/sdk")).unwrap(),
            Path::new("../../plugins/sdk")
        );
    }

    #[test]
    fn every_placeholder_is_filled() {
        let values = [
            ("id", "x".to_string()),
            ("label", "X".to_string()),
            ("type_name", "X".to_string()),
            ("sdk_dependency", "d".to_string()),
            ("sdk_note", "n".to_string()),
        ];
        for template in [CARGO_TOML, LIB_RS, CONNECTOR_TOML, README_MD] {
            assert!(!render(template, &values).contains("{{"), "{template}");
        }
    }

    #[test]
    fn sdk_choices() {
        assert_eq!(
            parse_sdk("git+https://example.com/quarry.git#abc123").unwrap(),
            Sdk::Git {
                url: "https://example.com/quarry.git".into(),
                rev: Some("abc123".into())
            }
        );
        assert_eq!(parse_sdk("vendored").unwrap(), Sdk::Vendored);
        let error = parse_sdk("/nonexistent/sdk").unwrap_err().to_string();
        assert!(error.contains("no Cargo.toml there"), "{error}");
        // Outside any checkout (the folder need not exist yet), the crate
        // carries its SDK; inside one, it uses the checkout's.
        let outside = std::env::temp_dir().join("quarry-new-test/acme");
        assert_eq!(default_sdk(&outside), Sdk::Vendored);
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert!(matches!(
            default_sdk(&checkout.join("plugins/acme")),
            Sdk::Path { checkout: Some(root), .. } if root == checkout
        ));
    }
}
