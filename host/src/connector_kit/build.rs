//! `quarry connector build [CRATE_DIR] [--out DIR]`: a connector crate
//! made into the pair the host loads, wherever the crate is.
//!
//! The work is `quarry-plugin-builder`'s library, the same the
//! repository's own connectors are built with: a `wasm32-unknown-unknown`
//! build with the crate's `plugin` profile (into cargo's target folder,
//! under `wasm/`), then the component, written with the manifest as
//! `<id>.wasm` and `<id>.toml` into `CRATE_DIR/target/connector/` (where
//! `check` and `install` look first) or `--out DIR`.

use std::path::PathBuf;

use anyhow::Result;

use super::BUILT_DIR;

#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// The connector crate's folder (its Cargo.toml and connector.toml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Where to write `<id>.wasm` and `<id>.toml`. Default: the crate's
    /// `target/connector/`.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: &BuildArgs) -> Result<()> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.path.join(BUILT_DIR));
    let id = build_crate(&args.path, &out)?;
    let wasm = out.join(format!("{id}.wasm"));
    println!(
        "built {id}:\n  {}\n  {}",
        wasm.display(),
        out.join(format!("{id}.toml")).display()
    );
    // `check` finds the default place from the crate folder; another
    // folder is named by its component.
    let next = match &args.out {
        None => args.path.display().to_string(),
        Some(_) => wasm.display().to_string(),
    };
    println!("next: quarry connector check {next}");
    Ok(())
}

#[cfg(feature = "connector-build")]
fn build_crate(path: &std::path::Path, out: &std::path::Path) -> Result<String> {
    quarry_plugin_builder::build_crate(path, out)
}

/// The production binary carries no plugin builder.
#[cfg(not(feature = "connector-build"))]
fn build_crate(_: &std::path::Path, _: &std::path::Path) -> Result<String> {
    anyhow::bail!(
        "this quarry was built without the connector builder: use a quarry built with \
         `--features connector-build` (the demo's build has it), or, in a checkout, \
         `cargo run -p quarry --features connector-build -- connector build`"
    )
}
