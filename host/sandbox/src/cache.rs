//! Compiled components, cached as wasmtime's serialized artifacts.
//!
//! Compiling a component takes from tens of milliseconds (a Rust connector)
//! to seconds (a Python one); loading its artifact takes milliseconds. The
//! cache key is the component's SHA-256 plus the engine's compatibility
//! hash, so a new wasmtime or a changed engine setting never loads a stale
//! artifact.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Returns the compiled component and the SHA-256 of `wasm`.
pub fn compile(
    engine: &Engine,
    cache_dir: Option<&Path>,
    wasm: &[u8],
) -> Result<(Component, String)> {
    let digest = hex::encode(Sha256::digest(wasm));
    let Some(dir) = cache_dir else {
        return Ok((
            Component::new(engine, wasm)
                .map_err(anyhow::Error::from)
                .context("compiling the component")?,
            digest,
        ));
    };
    let path = artifact_path(engine, dir, &digest);
    if path.exists() {
        // SAFETY: the artifact was written by `Component::serialize` of an
        // engine with the same compatibility hash (it is part of the file
        // name), in the operator's own data folder; wasmtime also checks
        // the header before trusting the contents.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => return Ok((component, digest)),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cached component unusable; recompiling")
            }
        }
    }
    let component = Component::new(engine, wasm)
        .map_err(anyhow::Error::from)
        .context("compiling the component")?;
    if let Err(error) = write_artifact(&component, &path) {
        tracing::warn!(path = %path.display(), %error, "could not cache the compiled component");
    }
    Ok((component, digest))
}

fn artifact_path(engine: &Engine, dir: &Path, digest: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    dir.join(format!("{digest}-{:016x}.cwasm", hasher.finish()))
}

/// Writes through a temporary file and a rename, so that a concurrent
/// reader never sees half an artifact.
fn write_artifact(component: &Component, path: &Path) -> Result<()> {
    let bytes = component.serialize()?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
