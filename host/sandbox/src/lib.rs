//! The connector sandbox: the wasmtime side of connectors, and the only
//! crate of the workspace that depends on wasmtime.
//!
//! - one [`Engine`] with the pooling allocator and epoch interruption;
//! - [`Runtime::load`] compiles a component (or loads its serialized
//!   artifact from the cache), checks its imports against the allow-list and
//!   pre-links it into an `InstancePre`; [`Runtime::inspect`] is the same
//!   path reporting every problem (for `quarry connector check`);
//! - [`Runtime::search`] makes a fresh Store per call, instantiates, calls
//!   `search`, and drops everything. Deadlines trap, memory is capped, and
//!   every fetch goes through the host's [`Fetch`] (the one capability a
//!   connector has; see [`fetch`]).

mod cache;
mod documents;
pub mod fetch;
pub mod imports;
mod shares;
mod state;
mod types;
mod v1;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::sync::Semaphore;
use wasmtime::component::Linker;
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, UpdateDeadline,
};

pub use self::fetch::{Fetch, NoNetwork};
pub use self::imports::ImportSummary;
use self::shares::Shares;
use self::state::CallState;
pub use self::types::{ConnectorError, Document, ErrorKind, SearchRequest};
use quarry_guard::manifest::{Manifest, SandboxLimits};
use quarry_guard::problem::{Problem, join_errors};
use quarry_secret::Secret;

/// How often the epoch advances: the granularity of deadlines and of the
/// guest's cooperative yields to the async executor.
const EPOCH_TICK: Duration = Duration::from_millis(5);
/// Slack between the epoch deadline and the outer timeout that also covers
/// time spent waiting on fetches.
const DEADLINE_GRACE: Duration = Duration::from_millis(250);
/// Most documents one call may return.
const MAX_DOCUMENTS: usize = 1000;

#[derive(Clone)]
pub struct RuntimeConfig {
    /// Where compiled components are cached (`None`: no cache).
    pub cache_dir: Option<PathBuf>,
    /// Connector calls that may run at once; more wait for a slot.
    pub max_concurrent_calls: u32,
    /// Of those, the most one user's calls may hold (their queries wait
    /// for their own share, not everyone's slots).
    pub max_concurrent_calls_per_user: u32,
    /// The operator's ceilings for every connector.
    pub limits: SandboxLimits,
    /// Where the guests' fetches go (the host's upstream client; by
    /// default, nowhere).
    pub upstream: Arc<dyn Fetch>,
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("cache_dir", &self.cache_dir)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .field(
                "max_concurrent_calls_per_user",
                &self.max_concurrent_calls_per_user,
            )
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            cache_dir: None,
            max_concurrent_calls: 128,
            max_concurrent_calls_per_user: 32,
            limits: SandboxLimits::default(),
            upstream: Arc::new(NoNetwork),
        }
    }
}

/// Compiles, caches and runs connector components.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    linker: Linker<CallState>,
    upstream: Arc<dyn Fetch>,
    slots: Semaphore,
    /// Each user's share of `slots`.
    shares: Shares,
    limits: SandboxLimits,
    cache_dir: Option<PathBuf>,
    ticker_stop: Arc<AtomicBool>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.ticker_stop.store(true, Ordering::Relaxed);
    }
}

/// A component ready to be instantiated: compiled, checked and pre-linked.
pub struct LoadedComponent {
    pre: Bindings,
    pub imports: ImportSummary,
    /// SHA-256 of the component's bytes.
    pub digest: String,
}

/// What [`Runtime::inspect`] found in a component.
pub struct Inspection {
    /// The component, ready to run, when no problem was found.
    pub component: Option<LoadedComponent>,
    pub problems: Vec<Problem>,
    /// The component's import and export names, as it declares them.
    pub imports: Vec<String>,
    pub exports: Vec<String>,
    /// The contract version of its `search` export (`1.0.0`), if any.
    pub contract: Option<String>,
    /// SHA-256 of the component's bytes (empty when it did not compile).
    pub digest: String,
    /// Compiling (or loading the cached artifact), checking and linking.
    pub load_time: Duration,
}

/// The bindings of the contract version the component targets.
enum Bindings {
    V1(v1::Pre),
}

impl Runtime {
    pub fn new(config: RuntimeConfig) -> Result<Runtime> {
        let engine = Engine::new(&engine_config(&config)?)
            .map_err(anyhow::Error::from)
            .context("creating the wasmtime engine")?;
        let mut linker = Linker::new(&engine);
        v1::add_to_linker(&mut linker)?;
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        let ticker_stop = Arc::new(AtomicBool::new(false));
        spawn_epoch_ticker(engine.clone(), ticker_stop.clone());
        if let Some(dir) = &config.cache_dir {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the component cache {}", dir.display()))?;
        }
        Ok(Runtime {
            inner: Arc::new(Inner {
                engine,
                linker,
                upstream: config.upstream,
                slots: Semaphore::new(config.max_concurrent_calls as usize),
                shares: Shares::new(config.max_concurrent_calls_per_user),
                limits: config.limits,
                cache_dir: config.cache_dir,
                ticker_stop,
            }),
        })
    }

    /// The operator's ceilings.
    pub fn limits(&self) -> SandboxLimits {
        self.inner.limits
    }

    /// Compiles (or loads from the cache) a component and checks it against
    /// the contract its manifest declares. Slow (compilation): call it off
    /// the async executor.
    pub fn load(&self, wasm: &[u8], manifest: &Manifest) -> Result<LoadedComponent> {
        let mut inspection = self.inspect(wasm, Some(manifest.wit_major()));
        let minor =
            imports::minor_problems(&manifest.wit, inspection.imports.iter().map(String::as_str));
        if !minor.is_empty() {
            inspection.problems.extend(minor);
            inspection.component = None;
        }
        match inspection.component {
            Some(component) => Ok(component),
            None => bail!("{}", join_errors(&inspection.problems)),
        }
    }

    /// [`Runtime::load`] without stopping at the first problem: compiles
    /// the component, then checks its imports against the allow-list, its
    /// export against contract major `wit_major` (`None`: the major the
    /// component itself exports) and links it, reporting every problem
    /// found. The component is there only when there is none.
    pub fn inspect(&self, wasm: &[u8], wit_major: Option<u64>) -> Inspection {
        let inner = &self.inner;
        let started = Instant::now();
        let mut inspection = Inspection {
            component: None,
            problems: Vec::new(),
            imports: Vec::new(),
            exports: Vec::new(),
            contract: None,
            digest: String::new(),
            load_time: Duration::ZERO,
        };
        let (component, digest) =
            match cache::compile(&inner.engine, inner.cache_dir.as_deref(), wasm) {
                Ok(compiled) => compiled,
                Err(error) => {
                    inspection
                        .problems
                        .push(Problem::error("component", format!("{error:#}")));
                    return inspection;
                }
            };
        inspection.digest = digest;
        let ty = component.component_type();
        inspection.imports = ty
            .imports(&inner.engine)
            .map(|(name, _)| name.to_string())
            .collect();
        inspection.exports = ty
            .exports(&inner.engine)
            .map(|(name, _)| name.to_string())
            .collect();
        let search_prefix = format!("{}@", v1::SEARCH_EXPORT);
        inspection.contract = inspection
            .exports
            .iter()
            .find_map(|e| e.strip_prefix(&search_prefix))
            .map(String::from);
        let exported_major = inspection
            .contract
            .as_deref()
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse::<u64>().ok());
        let wit_major = wit_major.or(exported_major).unwrap_or(1);
        let (imports, import_problems) =
            imports::inspect(wit_major, inspection.imports.iter().map(String::as_str));
        let imports_ok = import_problems.is_empty();
        inspection.problems.extend(import_problems);
        let pre = match wit_major {
            1 => {
                let wanted = format!("{}@1.", v1::SEARCH_EXPORT);
                if !inspection.exports.iter().any(|e| e.starts_with(&wanted)) {
                    let exports = &inspection.exports;
                    inspection.problems.push(Problem::error(
                        if inspection.contract.is_some() {
                            "wit-version"
                        } else {
                            "export"
                        },
                        format!(
                            "component does not export {}@1.x.x (it exports: {}); was it built against wit/v1?",
                            v1::SEARCH_EXPORT,
                            if exports.is_empty() {
                                "nothing".to_string()
                            } else {
                                exports.join(", ")
                            }
                        ),
                    ));
                    None
                } else if !imports_ok {
                    // Linking would only repeat (or, for the WASI the
                    // host has, hide) what the allow-list said.
                    None
                } else {
                    match inner.linker.instantiate_pre(&component) {
                        Err(error) => {
                            inspection.problems.push(Problem::error(
                                "link",
                                format!("linking the component: {:#}", anyhow::Error::from(error)),
                            ));
                            None
                        }
                        Ok(instance_pre) => match v1::Pre::new(instance_pre) {
                            Ok(pre) => Some(Bindings::V1(pre)),
                            Err(error) => {
                                inspection.problems.push(Problem::error(
                                    "link",
                                    format!(
                                        "component does not match wit/v1: {:#}",
                                        anyhow::Error::from(error)
                                    ),
                                ));
                                None
                            }
                        },
                    }
                }
            }
            major => {
                inspection.problems.push(Problem::error(
                    "wit-version",
                    format!("contract major version {major} is not supported by this host"),
                ));
                None
            }
        };
        inspection.load_time = started.elapsed();
        if let Some(pre) = pre
            && inspection.problems.is_empty()
        {
            inspection.component = Some(LoadedComponent {
                pre,
                imports,
                digest: inspection.digest.clone(),
            });
        }
        inspection
    }

    /// Runs one search in a fresh sandbox, for `owner` (a user, whose calls
    /// hold at most their share of the slots; `None`: tools and tests).
    pub async fn search(
        &self,
        component: &LoadedComponent,
        manifest: Arc<Manifest>,
        request: &SearchRequest,
        credential: Option<Secret>,
        owner: Option<&str>,
    ) -> Result<Vec<Document>, ConnectorError> {
        let inner = &self.inner;
        let _share = match owner {
            Some(user) => Some(inner.shares.acquire(user).await),
            None => None,
        };
        let _slot = inner
            .slots
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let limits = inner.limits.for_connector(&manifest.limits);
        let id = manifest.id.clone();
        let mut store = Store::new(
            &inner.engine,
            CallState::new(inner.upstream.clone(), manifest, limits, credential),
        );
        store.limiter(|state| &mut state.limiter);
        store.set_hostcall_fuel(HOSTCALL_BYTES);
        let deadline = Instant::now() + limits.call_timeout();
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline {
                Err(wasmtime::Error::new(DeadlineExceeded))
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        let call = async {
            match &component.pre {
                Bindings::V1(pre) => v1::call(pre, &mut store, request).await,
            }
        };
        let outcome = tokio::time::timeout(limits.call_timeout() + DEADLINE_GRACE, call).await;
        let result = match outcome {
            Err(_) => Err(timeout_error(limits)),
            Ok(Ok(result)) => result,
            Ok(Err(trap)) => Err(trap_error(trap, &store, limits)),
        };
        tracing::debug!(connector = %id, fetches = store.data().fetches_used(), ok = result.is_ok(), "connector call finished");
        result.map(|docs| docs.into_iter().take(MAX_DOCUMENTS).collect())
    }
}

#[derive(Debug)]
struct DeadlineExceeded;

impl std::fmt::Display for DeadlineExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("deadline exceeded")
    }
}

impl std::error::Error for DeadlineExceeded {}

fn timeout_error(limits: SandboxLimits) -> ConnectorError {
    ConnectorError::new(
        ErrorKind::Timeout,
        format!(
            "the connector did not finish within {} ms",
            limits.call_timeout_ms
        ),
    )
}

fn trap_error(
    trap: wasmtime::Error,
    store: &Store<CallState>,
    limits: SandboxLimits,
) -> ConnectorError {
    if trap.downcast_ref::<DeadlineExceeded>().is_some() {
        return timeout_error(limits);
    }
    if store.data().limiter.exceeded {
        return ConnectorError::new(
            ErrorKind::Crashed,
            format!(
                "the connector exceeded its memory limit of {} bytes",
                limits.memory_bytes
            ),
        );
    }
    ConnectorError::new(
        ErrorKind::Crashed,
        format!("the connector crashed: {}", root_cause(&trap)),
    )
}

fn root_cause(error: &wasmtime::Error) -> String {
    match error.downcast_ref::<wasmtime::Trap>() {
        Some(trap) => trap.to_string(),
        None => error.root_cause().to_string(),
    }
}

fn engine_config(config: &RuntimeConfig) -> Result<Config> {
    let mut pool = PoolingAllocationConfig::default();
    let slots = config.max_concurrent_calls.max(1);
    // Components made by componentize-py or jco hold several core modules,
    // memories and tables; plain Rust connectors hold one of each.
    pool.total_component_instances(slots)
        .total_core_instances(slots * 4)
        .total_memories(slots * 2)
        .total_tables(slots * 4)
        .total_stacks(slots)
        .max_core_instances_per_component(64)
        .max_memories_per_component(4)
        .max_tables_per_component(16)
        .max_memory_size(config.limits.memory_bytes as usize)
        .table_elements(MAX_TABLE_ELEMENTS_POOL)
        // A slot is reused call after call: resetting what the last call
        // dirtied with memset (found by PAGEMAP_SCAN on Linux 6.7+) costs
        // less than giving the pages back and faulting them in again.
        .pagemap_scan(wasmtime::Enabled::Auto)
        .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
        .table_keep_resident(KEEP_RESIDENT_BYTES)
        .async_stack_keep_resident(KEEP_RESIDENT_BYTES);
    let mut wasm = Config::new();
    wasm.wasm_component_model(true)
        .epoch_interruption(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
        .cranelift_opt_level(wasmtime::OptLevel::Speed);
    Ok(wasm)
}

const MAX_TABLE_ELEMENTS_POOL: usize = 200_000;
/// Most bytes the host copies out of a connector in one crossing (a fetch,
/// a batch of fetches, a log line): a batch of 16 requests at the policy's
/// largest body is about 4 MiB. wasmtime's default (128 MiB per crossing,
/// in every slot at once) is left to no connector.
const HOSTCALL_BYTES: usize = 16 << 20;
/// Bytes of each linear memory, table and async stack kept resident
/// between calls (see `engine_config`).
const KEEP_RESIDENT_BYTES: usize = 2 << 20;

fn spawn_epoch_ticker(engine: Engine, stop: Arc<AtomicBool>) {
    std::thread::Builder::new()
        .name("quarry-epoch".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            }
        })
        .expect("spawning the epoch ticker thread");
}
