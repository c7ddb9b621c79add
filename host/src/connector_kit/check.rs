//! `quarry connector check PATH`: the host's load path, run to the end.
//!
//! Nothing here decides what is wrong: the manifest's validation, the
//! import allow-list, the contract checks and the linking are the ones the
//! registry runs ([`registry::inspect`]). The registry stops at the first
//! stage that fails; the check goes on and prints every problem, and the
//! warnings the host does not act on (no revocation endpoint, a contract
//! minor other than the component's, a component older than its sources).

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use super::{EXIT_OK, EXIT_PROBLEMS, Target};
use crate::connectors::registry;
use crate::connectors::{Problem, Runtime, RuntimeConfig, Severity};

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A component (`<id>.wasm`, with `<id>.toml` beside it), or a connector
    /// crate folder built by `quarry connector build`.
    pub path: PathBuf,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Count warnings as errors (exit status 1).
    #[arg(long)]
    pub deny_warnings: bool,
}

/// What the check found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub id: String,
    pub manifest_path: PathBuf,
    pub component_path: PathBuf,
    /// From the manifest, when it could be read.
    pub label: Option<String>,
    pub version: Option<String>,
    pub wit: Option<String>,
    /// The component's size in bytes.
    pub component_bytes: Option<u64>,
    /// SHA-256 of the component.
    pub digest: Option<String>,
    /// The contract version of the component's `search` export.
    pub contract: Option<String>,
    pub imports: Vec<String>,
    pub exports: Vec<String>,
    /// Compiling, checking and linking the component, in milliseconds.
    pub load_ms: Option<f64>,
    pub errors: usize,
    pub warnings: usize,
    pub problems: Vec<Problem>,
}

impl Report {
    /// Whether the host would load the connector.
    pub fn loads(&self) -> bool {
        self.errors == 0
    }
}

/// Checks the pair `target` names with a runtime configured like the
/// server's by default.
pub fn check(target: &Target) -> Result<Report> {
    let runtime = Runtime::new(RuntimeConfig::default())?;
    Ok(check_with(&runtime, target))
}

/// Checks the pair `target` names with `runtime`.
pub fn check_with(runtime: &Runtime, target: &Target) -> Report {
    check_copy(runtime, target, target)
}

/// Checks `copy`, a copy of `target`'s files (what `install` is about to
/// put in place), and reports as if for `target`.
pub fn check_copy(runtime: &Runtime, target: &Target, copy: &Target) -> Report {
    let found = registry::inspect(runtime, &target.id, &copy.wasm, &copy.toml, true);
    let (copy_wasm, copy_toml) = (
        copy.wasm.display().to_string(),
        copy.toml.display().to_string(),
    );
    let mut problems: Vec<Problem> = found
        .problems
        .into_iter()
        .map(|mut problem| {
            problem.message = problem
                .message
                .replace(&copy_wasm, &target.wasm.display().to_string())
                .replace(&copy_toml, &target.toml.display().to_string());
            problem
        })
        .collect();
    if target.is_stale() {
        problems.push(Problem::warning(
            "stale-build",
            format!(
                "{} is older than the crate's sources: rebuild it with \
                 `quarry connector build {}`",
                target.wasm.display(),
                target
                    .crate_dir
                    .as_deref()
                    .unwrap_or(Path::new("CRATE_DIR"))
                    .display()
            ),
        ));
    }
    let manifest = found.manifest.as_ref();
    let component = found.component.as_ref();
    Report {
        id: target.id.clone(),
        manifest_path: target.toml.clone(),
        component_path: target.wasm.clone(),
        label: manifest.map(|m| m.label.clone()),
        version: manifest.map(|m| m.version.clone()),
        wit: manifest.map(|m| m.wit.clone()),
        component_bytes: std::fs::metadata(&copy.wasm).ok().map(|m| m.len()),
        digest: component
            .map(|c| c.digest.clone())
            .filter(|d| !d.is_empty()),
        contract: component.and_then(|c| c.contract.clone()),
        imports: component.map(|c| c.imports.clone()).unwrap_or_default(),
        exports: component.map(|c| c.exports.clone()).unwrap_or_default(),
        load_ms: component
            .filter(|c| !c.digest.is_empty())
            .map(|c| c.load_time.as_secs_f64() * 1000.0),
        errors: problems.iter().filter(|p| p.is_error()).count(),
        warnings: problems.iter().filter(|p| !p.is_error()).count(),
        problems,
    }
}

pub fn run(args: &CheckArgs) -> Result<i32> {
    let target = Target::resolve(&args.path)?;
    let report = check(&target)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    let failed = report.errors > 0 || (args.deny_warnings && report.warnings > 0);
    Ok(if failed { EXIT_PROBLEMS } else { EXIT_OK })
}

/// The report as a person reads it.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!(
        "checking {} {}",
        report.id,
        report.version.as_deref().unwrap_or("(version unknown)")
    ));
    line(format!("  manifest   {}", report.manifest_path.display()));
    let mut component = format!("  component  {}", report.component_path.display());
    if let Some(bytes) = report.component_bytes {
        component.push_str(&format!(" ({})", human_size(bytes)));
    }
    line(component);
    if let Some(digest) = &report.digest {
        let mut facts = format!("  sha256     {digest}");
        if let Some(ms) = report.load_ms {
            facts.push_str(&format!(" (compiled and linked in {ms:.0} ms)"));
        }
        line(facts);
    }
    if let (Some(wit), contract) = (&report.wit, &report.contract) {
        line(format!(
            "  contract   manifest wit {wit}, component exports search@{}",
            contract.as_deref().unwrap_or("(none)")
        ));
    }
    if !report.imports.is_empty() {
        line(format!(
            "  imports    {}",
            summarize_imports(&report.imports)
        ));
    }
    for problem in &report.problems {
        let kind = match problem.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        line(format!("{kind}[{}]: {}", problem.code, problem.message));
    }
    let verdict = if report.loads() {
        "the host would load this connector"
    } else {
        "the host would refuse this connector"
    };
    line(format!(
        "{} error(s), {} warning(s): {verdict}",
        report.errors, report.warnings
    ));
    out
}

/// The contract's imports by name, WASI as a count.
fn summarize_imports(imports: &[String]) -> String {
    let (wasi, other): (Vec<&String>, Vec<&String>) =
        imports.iter().partition(|i| i.starts_with("wasi:"));
    let mut parts: Vec<String> = other.iter().map(|s| s.to_string()).collect();
    if !wasi.is_empty() {
        parts.push(format!(
            "{} WASI interface(s) (deny-all context)",
            wasi.len()
        ));
    }
    parts.join(", ")
}

fn human_size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// Checks a `.wasm` + `.toml` pair or a crate folder (for tests and
/// `install`).
pub fn check_path(path: &Path) -> Result<(Target, Report)> {
    let target = Target::resolve(path)?;
    let report = check(&target)?;
    Ok((target, report))
}
