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

use anyhow::{Context, Result, ensure};

use super::manifest::Manifest;
use super::runtime::{LoadedComponent, Runtime};
use super::{ConnectorError, Document, ErrorKind, SearchRequest};
use crate::secret::Secret;

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

/// What the last look at a pair of files saw, to notice changes cheaply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    wasm: (SystemTime, u64),
    toml: (SystemTime, u64),
}

pub struct Registry {
    runtime: Runtime,
    config: RegistryConfig,
    loaded: RwLock<HashMap<String, Arc<Connector>>>,
    /// Pairs that failed to load, with why (the old version, if any, serves).
    problems: RwLock<BTreeMap<String, String>>,
    /// The stamp of the last load attempt per id, successful or not.
    seen: tokio::sync::Mutex<HashMap<String, Stamp>>,
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

    /// Pairs that failed their last load, with the reason.
    pub fn problems(&self) -> BTreeMap<String, String> {
        self.problems.read().expect("registry lock").clone()
    }

    /// Runs one search on the connector `id` as it is loaded now.
    pub async fn search(
        &self,
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
/// (also used by `quarry connector check`).
pub fn load(runtime: &Runtime, id: &str, wasm_path: &Path, toml_path: &Path) -> Result<Connector> {
    let text = std::fs::read_to_string(toml_path)
        .with_context(|| format!("reading {}", toml_path.display()))?;
    let manifest = Manifest::parse(&text).with_context(|| format!("in {}", toml_path.display()))?;
    ensure!(
        manifest.id == id,
        "the manifest's id {:?} does not match its file name {id:?}",
        manifest.id
    );
    let wasm =
        std::fs::read(wasm_path).with_context(|| format!("reading {}", wasm_path.display()))?;
    let component = runtime
        .load(&wasm, &manifest)
        .with_context(|| format!("in {}", wasm_path.display()))?;
    Ok(Connector {
        manifest: Arc::new(manifest),
        component,
        loaded_at: SystemTime::now(),
    })
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
            wasm: (wasm_meta.modified()?, wasm_meta.len()),
            toml: (toml_meta.modified()?, toml_meta.len()),
        };
        pairs.insert(id.to_string(), (stamp, path, toml));
    }
    Ok(pairs)
}
