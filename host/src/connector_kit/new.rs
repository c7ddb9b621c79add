//! `quarry connector new NAME`: a Rust connector crate that builds as is.
//!
//! The template is `host/templates/connector/`, compiled into the binary.
//! The crate is a workspace of its own (so it builds wherever it is, in
//! this repository or not) and depends on the SDK by path: the
//! `plugins/sdk` of the Quarry checkout it is created in, else of the
//! checkout this `quarry` was built from, or what `--sdk` names (a path,
//! or `git+URL[#REV]`).

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{build_checkout, is_quarry_checkout};
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
    /// Where to create the crate (default: ./NAME). It must not exist, or
    /// be an empty folder.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The SDK: a path to a Quarry checkout's `plugins/sdk`, or
    /// `git+URL[#REV]`. Default: the checkout the crate is created in, else
    /// the one this `quarry` was built from.
    #[arg(long)]
    pub sdk: Option<String>,
}

/// Where the SDK comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sdk {
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
    for file in &files {
        println!("  {}", file.display());
    }
    let shown = dir.display();
    println!(
        "next, from the Quarry repository:\n  \
         cargo run -p quarry-plugin-builder -- {shown}\n  \
         cargo run -p quarry -- connector check {shown}\n  \
         cargo run -p quarry -- connector install {shown} --plugins-dir PLUGINS_DIR\n\
         (docs/connectors.md is the guide)"
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
        bail!("{} already exists and is not empty", dir.display());
    }
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("creating {}", dir.display()))?;
    let absolute = std::path::absolute(dir)?;
    let sdk = match sdk {
        Some(given) => parse_sdk(given)?,
        None => find_sdk(&absolute)?,
    };
    let (dependency, note) = match &sdk {
        Sdk::Path { sdk, checkout } => {
            // Relative inside the checkout (the crate moves with it),
            // absolute outside.
            let inside = checkout.as_deref().is_some_and(|c| absolute.starts_with(c));
            let shown = inside
                .then(|| relative_path(&absolute, sdk))
                .flatten()
                .unwrap_or_else(|| sdk.clone())
                .display()
                .to_string()
                .replace('\\', "/");
            (
                format!("quarry-connector-sdk = {{ path = {shown:?} }}"),
                format!(
                    "the SDK by path ({shown}). Outside a Quarry checkout, point it at one's \
                     `plugins/sdk`, or use a git dependency: \
                     `quarry-connector-sdk = {{ git = \"<Quarry repository URL>\" }}` \
                     (`quarry connector new --sdk git+URL` writes that)."
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
            "the SDK from the Quarry repository by git; a path to a checkout's \
             `plugins/sdk` works as well."
                .to_string(),
        ),
    };
    // How the README names the folder: from the repository's root when the
    // crate is in the checkout, else as given.
    let checkout = match &sdk {
        Sdk::Path { checkout, .. } => checkout.clone(),
        Sdk::Git { .. } => None,
    };
    let shown_dir = checkout
        .as_deref()
        .and_then(|root| absolute.strip_prefix(root).ok())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| absolute.clone());
    let values = [
        ("id", name.to_string()),
        ("label", label(name)),
        ("type_name", type_name(name)),
        ("sdk_dependency", dependency),
        ("sdk_note", note),
        ("dir", shown_dir.display().to_string()),
    ];
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
    // The crate resolves its dependencies to the versions the checkout
    // builds and tests with (cargo keeps what it can of a lock file).
    if let Some(lock) = checkout.map(|root| root.join("Cargo.lock"))
        && lock.is_file()
    {
        let path = dir.join("Cargo.lock");
        std::fs::copy(&lock, &path).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
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
            "--sdk {given}: no Cargo.toml there (name a Quarry checkout's plugins/sdk folder, or git+URL)"
        );
    }
    let checkout = sdk
        .parent()
        .and_then(Path::parent)
        .filter(|root| is_quarry_checkout(root))
        .map(Path::to_path_buf);
    Ok(Sdk::Path { sdk, checkout })
}

/// The checkout `dir` is in, else the one this binary was built from.
fn find_sdk(dir: &Path) -> Result<Sdk> {
    let checkout = dir
        .ancestors()
        .find(|a| is_quarry_checkout(a))
        .map(Path::to_path_buf)
        .or_else(build_checkout);
    match checkout {
        Some(root) => Ok(Sdk::Path {
            sdk: root.join("plugins/sdk"),
            checkout: Some(root),
        }),
        None => bail!(
            "no Quarry checkout found above {} nor where this quarry was built: \
             pass --sdk PATH/TO/quarry/plugins/sdk or --sdk git+URL",
            dir.display()
        ),
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
            ("dir", "x".to_string()),
        ];
        for template in [CARGO_TOML, LIB_RS, CONNECTOR_TOML, README_MD] {
            assert!(!render(template, &values).contains("{{"), "{template}");
        }
    }

    #[test]
    fn git_sdk() {
        assert_eq!(
            parse_sdk("git+https://example.com/quarry.git#abc123").unwrap(),
            Sdk::Git {
                url: "https://example.com/quarry.git".into(),
                rev: Some("abc123".into())
            }
        );
    }
}
