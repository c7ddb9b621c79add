//! The plugins folder: every `<id>.wasm` + `<id>.toml` pair in it is a
//! connector. The registry loads them at start and keeps watching: a new or
//! changed pair is loaded and swapped in atomically, a removed pair is
//! unloaded, and a pair that fails to load is refused while the previous
//! version keeps serving. Calls in flight hold their own reference to the
//! version they started on, so a swap never disturbs them.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use super::manifest::{Manifest, SUPPORTED_WIT_MAJORS};
use super::problem::{Problem, join_errors};
use super::runtime::{Inspection, LoadedComponent, Runtime};
use super::{ConnectorError, Document, ErrorKind, SearchRequest};
use quarry_store::secret::Secret;

#[derive(Debug, Clone)]
pub struct RegistryConfig {
    pub plugins_dir: PathBuf,
    /// How often the folder is checked for changes.
    pub poll_interval: Duration,
}

/// A loaded connector: its manifest and its compiled component.
pub struct Connector {
    pub manifest: Arc<Manifest>,
    pub component: LoadedComponent,
    pub loaded_at: SystemTime,
}

/// What the last look at a pair of files saw, to notice changes cheaply:
/// each file's modification time and size, and (on Unix) its inode and
/// change time, which nobody can set back: a file rewritten with the same
/// size and its old modification time (`cp -p`, `touch -r`) is noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    wasm: FileStamp,
    toml: FileStamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    modified: SystemTime,
    len: u64,
    inode: u64,
    changed: (i64, i64),
}

impl FileStamp {
    fn of(meta: &std::fs::Metadata) -> std::io::Result<FileStamp> {
        #[cfg(unix)]
        let (inode, changed) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), (meta.ctime(), meta.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (inode, changed) = (0, (0, 0));
        Ok(FileStamp {
            modified: meta.modified()?,
            len: meta.len(),
            inode,
            changed,
        })
    }
}

pub struct Registry {
    runtime: Runtime,
    config: RegistryConfig,
    loaded: RwLock<HashMap<String, Arc<Connector>>>,
    /// Pairs that failed to load, with why (the old version, if any, serves).
    problems: RwLock<BTreeMap<String, String>>,
    /// The stamp of the last load attempt per id, successful or not.
    seen: tokio::sync::Mutex<HashMap<String, Stamp>>,
    /// How many loads (new or replaced connectors) there have been.
    loads: tokio::sync::watch::Sender<u64>,
}

/// What one look at the folder changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScanReport {
    pub loaded: Vec<String>,
    pub unloaded: Vec<String>,
    pub refused: Vec<(String, String)>,
}

impl Registry {
    /// Loads every connector in the folder. Broken pairs are reported (in
    /// the log and [`Registry::problems`]), not fatal: one bad plugin must
    /// not keep the others from serving.
    pub async fn open(runtime: Runtime, config: RegistryConfig) -> Result<Arc<Registry>> {
        std::fs::create_dir_all(&config.plugins_dir).with_context(|| {
            format!(
                "creating the plugins folder {}",
                config.plugins_dir.display()
            )
        })?;
        let registry = Arc::new(Registry {
            runtime,
            config,
            loaded: RwLock::default(),
            problems: RwLock::default(),
            seen: tokio::sync::Mutex::default(),
            loads: tokio::sync::watch::Sender::new(0),
        });
        registry.rescan().await;
        Ok(registry)
    }

    pub fn plugins_dir(&self) -> &Path {
        &self.config.plugins_dir
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    pub fn get(&self, id: &str) -> Option<Arc<Connector>> {
        self.loaded.read().expect("registry lock").get(id).cloned()
    }

    /// Every loaded connector, by id.
    pub fn list(&self) -> Vec<Arc<Connector>> {
        let mut all: Vec<_> = self
            .loaded
            .read()
            .expect("registry lock")
            .values()
            .cloned()
            .collect();
        all.sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
        all
    }

    /// Changes each time a look at the folder loads connectors (new or
    /// replaced): the demo waits on it to connect its users to connectors
    /// installed after it started.
    pub fn loads(&self) -> tokio::sync::watch::Receiver<u64> {
        self.loads.subscribe()
    }

    /// Pairs that failed their last load, with the reason.
    pub fn problems(&self) -> BTreeMap<String, String> {
        self.problems.read().expect("registry lock").clone()
    }

    /// Runs one search on the connector `id` as it is loaded now, outside
    /// any user's share of the slots (tools and tests).
    pub async fn search(
        &self,
        id: &str,
        request: &SearchRequest,
        credential: Option<Secret>,
    ) -> Result<Vec<Document>, ConnectorError> {
        self.search_for(None, id, request, credential).await
    }

    /// Runs one search on the connector `id` for `user`, within their share
    /// of the connector slots.
    pub async fn search_for(
        &self,
        user: Option<&str>,
        id: &str,
        request: &SearchRequest,
        credential: Option<Secret>,
    ) -> Result<Vec<Document>, ConnectorError> {
        let connector = self.get(id).ok_or_else(|| {
            ConnectorError::new(
                ErrorKind::NotFound,
                format!("no connector {id:?} is loaded"),
            )
        })?;
        self.runtime
            .search(
                &connector.component,
                connector.manifest.clone(),
                request,
                credential,
                user,
            )
            .await
    }

    /// Keeps watching the folder until the registry is dropped.
    pub fn watch(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        let interval = self.config.poll_interval;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                let Some(registry) = weak.upgrade() else {
                    return;
                };
                registry.rescan().await;
            }
        })
    }

    /// Looks at the folder once and applies what changed.
    pub async fn rescan(&self) -> ScanReport {
        let mut seen = self.seen.lock().await;
        let mut report = ScanReport::default();
        let pairs = match list_pairs(&self.config.plugins_dir) {
            Ok(pairs) => pairs,
            Err(error) => {
                tracing::error!(dir = %self.config.plugins_dir.display(), %error, "cannot read the plugins folder");
                return report;
            }
        };
        let gone: Vec<String> = seen
            .keys()
            .filter(|id| !pairs.contains_key(*id))
            .cloned()
            .collect();
        for id in gone {
            seen.remove(&id);
            self.problems.write().expect("registry lock").remove(&id);
            if self
                .loaded
                .write()
                .expect("registry lock")
                .remove(&id)
                .is_some()
            {
                tracing::info!(connector = %id, "connector removed");
                report.unloaded.push(id);
            }
        }
        for (id, (stamp, wasm_path, toml_path)) in pairs {
            if seen.get(&id) == Some(&stamp) {
                continue;
            }
            seen.insert(id.clone(), stamp);
            match self.load_pair(&id, wasm_path, toml_path).await {
                Ok(connector) => {
                    tracing::info!(connector = %id, version = %connector.manifest.version, digest = %&connector.component.digest[..12], "connector loaded");
                    self.problems.write().expect("registry lock").remove(&id);
                    self.loaded
                        .write()
                        .expect("registry lock")
                        .insert(id.clone(), Arc::new(connector));
                    report.loaded.push(id);
                }
                Err(error) => {
                    let why = format!("{error:#}");
                    let serving = self.get(&id).is_some();
                    tracing::error!(connector = %id, error = %why, previous_version_serving = serving, "connector refused");
                    self.problems
                        .write()
                        .expect("registry lock")
                        .insert(id.clone(), why.clone());
                    report.refused.push((id, why));
                }
            }
        }
        if !report.loaded.is_empty() {
            self.loads
                .send_modify(|count| *count += report.loaded.len() as u64);
        }
        report
    }

    async fn load_pair(
        &self,
        id: &str,
        wasm_path: PathBuf,
        toml_path: PathBuf,
    ) -> Result<Connector> {
        let runtime = self.runtime.clone();
        let id = id.to_string();
        // Compiling is CPU-bound: keep it off the async workers.
        tokio::task::spawn_blocking(move || load(&runtime, &id, &wasm_path, &toml_path)).await?
    }
}

/// Loads one connector from its two files, exactly as the registry does
/// (`quarry connector check` runs the same path through [`inspect`]).
pub fn load(runtime: &Runtime, id: &str, wasm_path: &Path, toml_path: &Path) -> Result<Connector> {
    let inspection = inspect(runtime, id, wasm_path, toml_path, false);
    match inspection.connector {
        Some(connector) => Ok(connector),
        None => bail!("{}", join_errors(&inspection.problems)),
    }
}

/// What [`inspect`] found in a pair of files.
pub struct PairInspection {
    /// The connector, ready to serve, when there is no error.
    pub connector: Option<Connector>,
    /// The manifest as far as it could be read.
    pub manifest: Option<Manifest>,
    /// What the runtime found in the component (none when it was not read).
    pub component: Option<Inspection>,
    /// Errors (the registry refuses the pair) and warnings, in the order
    /// the load path meets them.
    pub problems: Vec<Problem>,
}

/// The registry's load path, reporting its problems. With `keep_going`
/// false it stops where [`load`] stops (after the manifest's problems,
/// after an id that does not match the file name, or an unreadable
/// component); with `keep_going` it looks at the component even then,
/// against the contract major the component itself exports when the
/// manifest cannot say, and adds the manifest's warnings.
pub fn inspect(
    runtime: &Runtime,
    id: &str,
    wasm_path: &Path,
    toml_path: &Path,
    keep_going: bool,
) -> PairInspection {
    let mut out = PairInspection {
        connector: None,
        manifest: None,
        component: None,
        problems: Vec::new(),
    };
    let in_toml = format!("in {}", toml_path.display());
    match std::fs::read_to_string(toml_path) {
        Err(e) => out.problems.push(Problem::error(
            "unreadable",
            format!("reading {}: {e}", toml_path.display()),
        )),
        Ok(text) => {
            let (manifest, problems) = Manifest::parse_reporting(&text);
            match problems.len() {
                0 => {}
                // The message `Manifest::parse` gives, for the log.
                n if !keep_going && manifest.is_some() => out.problems.push(Problem::error(
                    problems[0].code,
                    format!(
                        "{in_toml}: manifest has {n} problem(s): {}",
                        join_errors(&problems)
                    ),
                )),
                _ => out
                    .problems
                    .extend(problems.into_iter().map(|p| p.within(&in_toml))),
            }
            if let Some(manifest) = &manifest
                && manifest.id != id
            {
                out.problems.push(Problem::error(
                    "id-mismatch",
                    format!(
                        "the manifest's id {:?} does not match its file name {id:?}",
                        manifest.id
                    ),
                ));
            }
            out.manifest = manifest;
        }
    }
    if !keep_going && !out.problems.is_empty() {
        return out;
    }
    let wasm = match std::fs::read(wasm_path) {
        Ok(wasm) => wasm,
        Err(e) => {
            out.problems.push(Problem::error(
                "unreadable",
                format!("reading {}: {e}", wasm_path.display()),
            ));
            return out;
        }
    };
    let wit_major = out
        .manifest
        .as_ref()
        .map(Manifest::wit_major)
        .filter(|major| SUPPORTED_WIT_MAJORS.contains(major));
    let mut inspection = runtime.inspect(&wasm, wit_major);
    if let Some(manifest) = &out.manifest {
        let minor = super::runtime::imports::minor_problems(
            &manifest.wit,
            inspection.imports.iter().map(String::as_str),
        );
        if !minor.is_empty() {
            inspection.problems.extend(minor);
            inspection.component = None;
        }
    }
    let in_wasm = format!("in {}", wasm_path.display());
    out.problems.extend(
        inspection
            .problems
            .iter()
            .cloned()
            .map(|p| p.within(&in_wasm)),
    );
    if keep_going && let Some(manifest) = &out.manifest {
        out.problems.extend(manifest.warnings());
        if let Some(contract) = &inspection.contract
            && contract != &manifest.wit
            && inspection.problems.is_empty()
        {
            out.problems.push(Problem::warning(
                "wit-version",
                format!(
                    "the manifest declares wit {} but the component exports search@{contract}: \
                     make `wit` the version the component was built against",
                    manifest.wit
                ),
            ));
        }
    }
    let component = inspection.component.take();
    if let (Some(component), Some(manifest)) = (component, &out.manifest)
        && !out.problems.iter().any(Problem::is_error)
    {
        out.connector = Some(Connector {
            manifest: Arc::new(manifest.clone()),
            component,
            loaded_at: SystemTime::now(),
        });
    }
    out.component = Some(inspection);
    out
}

type Pair = (Stamp, PathBuf, PathBuf);

/// Every `<id>.wasm` that has an `<id>.toml` beside it.
fn list_pairs(dir: &Path) -> Result<BTreeMap<String, Pair>> {
    let mut pairs = BTreeMap::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("wasm") {
            continue;
        }
        let Some(id) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let toml = path.with_extension("toml");
        let (Ok(wasm_meta), Ok(toml_meta)) = (std::fs::metadata(&path), std::fs::metadata(&toml))
        else {
            continue;
        };
        let stamp = Stamp {
            wasm: FileStamp::of(&wasm_meta)?,
            toml: FileStamp::of(&toml_meta)?,
        };
        pairs.insert(id.to_string(), (stamp, path, toml));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_rewritten_with_its_old_size_and_time_is_seen_to_change() {
        let dir = tempfile::tempdir().unwrap();
        let (wasm, toml) = (dir.path().join("x.wasm"), dir.path().join("x.toml"));
        std::fs::write(&wasm, b"first").unwrap();
        std::fs::write(&toml, b"id = 1").unwrap();
        let before = list_pairs(dir.path()).unwrap()["x"].0;
        let modified = std::fs::metadata(&wasm).unwrap().modified().unwrap();
        // Same length, and the old modification time put back (`cp -p`).
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&wasm, b"other").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&wasm)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        let after = list_pairs(dir.path()).unwrap()["x"].0;
        assert_eq!(after.wasm.modified, before.wasm.modified);
        assert_eq!(after.wasm.len, before.wasm.len);
        assert_ne!(after, before, "the change time moved");
    }
}
