//! Assembling the server from its configuration, and serving it over
//! HTTPS (or plain HTTP on loopback, when the operator says so) until a
//! graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;

use crate::api::{self, App};
use crate::archive::Archive;
use crate::config::Config;
use crate::config::{BackendKind, EmbedderKind};
use crate::connectors::upstream::Upstream;
use crate::connectors::{NetworkConfig, Registry, RegistryConfig, Runtime, RuntimeConfig};
use crate::coordination::Redis;
use crate::deletion::Deletions;
use crate::limits::{AttemptLimit, Limiter};
use crate::metrics::Metrics;
use crate::oauth::revoke::Revoker;
use crate::rank::Scheduler;
use crate::rank::embed::Cached;
use crate::search::Search;
use crate::services::Services;
use crate::webhooks::Webhooks;
use quarry_store::{MasterKey, PostgresConfig, Store};

/// A server that is listening.
pub struct Running {
    pub addr: SocketAddr,
    pub app: App,
    handle: Handle<SocketAddr>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Opens the store, loads the connectors and starts listening.
pub async fn start(config: Config) -> Result<Running> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    for name in &config.ignored_env {
        tracing::warn!(
            variable = %name,
            "ignored: names no configuration key (Kubernetes sets QUARRY_PORT, QUARRY_SERVICE_HOST... \
             for a Service named quarry; a misspelt key is one of these too)"
        );
    }
    // Bound first: without a configured public URL, the server's public
    // origin (the MCP resource, the authorization server's issuer) is the
    // address actually listened on.
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .and_then(|listener| listener.into_std())
        .with_context(|| format!("could not listen on {}", config.listen))?;
    let origin = crate::origin::PublicOrigin::new(
        config.dashboard.public_url.as_deref(),
        listener.local_addr()?,
        config.tls_enabled(),
    );
    let app = assemble(&config, origin.clone()).await?;
    start_background_work(&app).await?;
    // The dashboard: outside `/v1` and its gate, with its own middleware.
    let dashboard = Arc::new(crate::dashboard::Dashboard::new(
        app.services.clone(),
        config.dashboard.clone(),
    )?);
    let router = api::router(app.clone())
        .merge(crate::dashboard::router(dashboard))
        .merge(crate::mcp::router(app.services.clone(), origin))
        .into_make_service_with_connect_info::<SocketAddr>();
    let handle = Handle::new();
    let task = if config.tls_enabled() {
        let (cert, key) = (
            config.tls.cert.as_ref().expect("checked"),
            config.tls.key.as_ref().expect("checked"),
        );
        let tls = RustlsConfig::from_pem_file(cert, key)
            .await
            .with_context(|| {
                format!(
                    "loading the TLS certificate {} and key {}",
                    cert.display(),
                    key.display()
                )
            })?;
        // TCP_NODELAY: a response's last frames must not wait for the
        // client's delayed ACK (Nagle's algorithm cost about 30 ms per
        // request on a kept-alive connection).
        let acceptor = axum_server::tls_rustls::RustlsAcceptor::new(tls)
            .acceptor(axum_server::accept::NoDelayAcceptor::new());
        let server = axum_server::from_tcp(listener)?
            .acceptor(acceptor)
            .handle(handle.clone());
        tokio::spawn(server.serve(router))
    } else {
        let server = axum_server::from_tcp(listener)?
            .acceptor(axum_server::accept::NoDelayAcceptor::new())
            .handle(handle.clone());
        tokio::spawn(server.serve(router))
    };
    let addr = handle
        .listening()
        .await
        .with_context(|| format!("could not listen on {}", config.listen))?;
    tracing::info!(%addr, tls = config.tls_enabled(), "listening");
    Ok(Running {
        addr,
        app,
        handle,
        task,
    })
}

/// The store the configuration names: the embedded redb file in the data
/// folder, or the PostgreSQL database replicas share.
pub fn open_store(config: &Config) -> Result<Store> {
    match config.storage.backend {
        BackendKind::Redb => Store::open_with(
            &config.data_dir,
            master_key(config)?,
            config.storage.cache_bytes(),
        ),
        BackendKind::Postgres => {
            let (Some(url), Some(master_key)) = (&config.storage.postgres_url, &config.master_key)
            else {
                anyhow::bail!("[storage] postgres needs postgres_url and master_key")
            };
            let postgres = PostgresConfig {
                url: url.expose().to_string(),
                pool_size: config.storage.pool_size,
            };
            Store::open_shared(&postgres, master_key)
        }
    }
}

/// The embedded store's master key: `master_key` (from a secret store),
/// or `master_key_file` (a file outside the data folder, created when
/// missing). A data folder made before `master_key_file` existed may hold
/// its key as `master.key`: it is still used, with a warning at every
/// start, since a copy of the folder (a backup, a stolen disk) then holds
/// both the records and the key that unlocks them.
fn master_key(config: &Config) -> Result<MasterKey> {
    if let Some(text) = &config.master_key {
        return MasterKey::from_base64(text);
    }
    if let Some(path) = &config.master_key_file {
        return MasterKey::from_file(path);
    }
    let beside = config.data_dir.join("master.key");
    anyhow::ensure!(
        beside.exists(),
        "no master key: set master_key (QUARRY_MASTER_KEY, base64 of 32 random bytes, from a \
         secret store) or master_key_file (a path outside the data folder {}; created when missing)",
        config.data_dir.display()
    );
    tracing::warn!(
        path = %beside.display(),
        "the master key is in the data folder: a copy of the folder holds both the records and \
         their key; move it out and set master_key_file, or set master_key"
    );
    MasterKey::from_file(&beside)
}

/// The limits' windows and attempts: in this process, or in the Redis
/// replicas share.
fn rate_limiter(config: &Config, store: &Arc<Store>) -> Result<Limiter> {
    let limits = config.limits.clone();
    let attempts = AttemptLimit {
        failures: config.dashboard.login_failures,
        window_seconds: config.dashboard.login_window_seconds,
    };
    Ok(match &config.coordination.redis_url {
        None => Limiter::new(limits, attempts, store.clone()),
        Some(url) => {
            let coordination = &config.coordination;
            let redis = Redis::connect(
                url.expose(),
                coordination.key_prefix.as_deref(),
                coordination.redis_ca_file.as_deref(),
            )?;
            Limiter::shared(limits, attempts, redis)
        }
    })
}

/// This replica's id, kept in its data folder: the same across restarts,
/// so that a restarted replica recognises the jobs it was running.
fn replica_id(data_dir: &std::path::Path) -> Result<String> {
    quarry_store::private::folder(data_dir)?;
    let path = data_dir.join("replica-id");
    if let Ok(id) = std::fs::read_to_string(&path) {
        return Ok(id.trim().to_string());
    }
    let id = format!("rpl_{}", quarry_store::random_hex(8));
    std::fs::write(&path, &id).with_context(|| format!("writing {}", path.display()))?;
    Ok(id)
}

async fn assemble(config: &Config, origin: crate::origin::PublicOrigin) -> Result<App> {
    let store = Arc::new(open_store(config)?);
    let network = network(config)?;
    let upstream = Upstream::new(&network)?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(config.data_dir.join("cache/components")),
        limits: config.sandbox,
        upstream: Arc::new(upstream.clone()),
        ..RuntimeConfig::default()
    })?;
    let registry = Registry::open(
        runtime,
        RegistryConfig {
            plugins_dir: config.plugins_dir.clone(),
            poll_interval: Duration::from_secs(1),
        },
    )
    .await?;
    registry.watch();
    for (id, problem) in registry.problems() {
        tracing::warn!(connector = %id, %problem, "connector not loaded");
    }
    crate::connectors::carry_over::keep_carrying_over(store.clone(), &registry);
    let limiter = Arc::new(rate_limiter(config, &store)?);
    let metrics = Arc::new(Metrics::default());
    let deadline = Duration::from_millis(config.query.connector_deadline_ms);
    let (embedder, fallback) = embedders(config)?;
    // One queue in front of the model for live queries, deep searches and
    // the archive's indexer (see rank::scheduler). The archive indexes
    // with the model, or by words when it is off.
    let scheduler = Scheduler::start(
        embedder
            .clone()
            .unwrap_or_else(|| Arc::new(crate::rank::embed::HashedWords::new(384))),
        fallback,
        config.ranking.embed_workers,
        config.ranking.embed_batch,
    );
    let archive = Arc::new(
        Archive::open(store.clone(), scheduler.clone())?
            .with_index_budget(config.archive.index_memory_bytes()),
    );
    let webhooks = Arc::new(Webhooks::new(store.clone(), config.webhooks.clone())?);
    // The host's own calls to vendors (revocation, refresh, the
    // dashboard's token exchanges) through the connectors' client: the
    // same policy, one connection pool.
    let vendors = Arc::new(crate::oauth::Vendors::new(
        upstream.client().clone(),
        config.oauth_clients.clone(),
    ));
    let refresher = Arc::new(crate::oauth::Refresher::new(
        store.clone(),
        registry.clone(),
        vendors.clone(),
    ));
    let revoker = Revoker::new(
        vendors.clone(),
        config.deletion.revocation_retry_seconds.clone(),
    );
    // MCP clients' metadata documents: https only, public addresses
    // unless the operator allows more, trusting the operator's roots.
    let documents = crate::issuer::documents::Documents::new(
        config.dashboard.allow_private_client_documents,
        &network.extra_root_certs,
    )?;
    let issuer = Arc::new(crate::issuer::Issuer::new(
        store.clone(),
        config.token_ttl_seconds,
        origin,
        documents,
    ));
    let deletions = Arc::new(Deletions::new(
        store.clone(),
        archive.clone(),
        webhooks.clone(),
        registry.clone(),
        revoker,
        crate::user_data::user_data().collect(),
        replica_id(&config.data_dir)?,
    )?);
    let services = Services {
        search: Arc::new(Search::new(
            registry.clone(),
            metrics.clone(),
            deadline,
            embedder.map(|_| crate::search::Semantic {
                scheduler,
                budget: config.ranking.embed_budget,
                answer_budget: Duration::from_millis(config.ranking.answer_budget_ms),
            }),
        )),
        archive,
        webhooks,
        deletions,
        refresher,
        issuer,
        store,
        registry,
        limiter,
        metrics,
        vendors,
    };
    Ok(App {
        services,
        published: Arc::new(api::docs::Published::load()?),
        metrics_token: config.metrics_token.clone().map(Arc::new),
    })
}

/// Finishes any deletion a previous process left unfinished (before the
/// first request is served: nobody can meet a half-deleted user), then
/// starts the archive's indexer, the webhook deliveries, the retry
/// queue of token revocations and the sweep of unused OAuth clients.
async fn start_background_work(app: &App) -> Result<()> {
    app.deletions.finish_unfinished().await?;
    app.archive.start();
    app.deletions.start();
    app.webhooks.start();
    app.issuer.start_forgetting_unused_clients();
    Ok(())
}

type SharedEmbedder = Arc<dyn crate::rank::Embedder>;

/// The embedder and its fallback: the local model (loaded once, its
/// weights memory-mapped), or the operator's endpoint with the local model
/// behind it when it fails. `None` when semantic ranking is off.
fn embedders(config: &Config) -> Result<(Option<SharedEmbedder>, Option<SharedEmbedder>)> {
    let ranking = &config.ranking;
    if !ranking.semantic {
        tracing::warn!("semantic ranking is off (ranking.semantic = false): BM25 only");
        return Ok((None, None));
    }
    let local = || -> Result<SharedEmbedder> {
        let model = ranking.local_model().load()?;
        Ok(Arc::new(Cached::new(model, ranking.cache_entries)))
    };
    match ranking.embedder {
        EmbedderKind::Local => Ok((Some(local()?), None)),
        EmbedderKind::Endpoint => {
            let endpoint = ranking.endpoint.as_ref().context(
                "ranking.embedder = \"endpoint\" needs a [ranking.endpoint] table (url, model, dimensions)",
            )?;
            let client = crate::net::client(crate::net::Purpose::Embeddings {
                timeout: endpoint.timeout(),
            })?;
            let remote = crate::rank::remote::RemoteEmbedder::new(endpoint, client)?;
            tracing::info!(url = %endpoint.url, "embedding with the operator's endpoint");
            let fallback = local()
                .inspect_err(|error| {
                    tracing::warn!(
                        error = format!("{error:#}"),
                        "no local model to fall back on when the embeddings endpoint fails"
                    )
                })
                .ok();
            Ok((
                Some(Arc::new(Cached::new(remote, ranking.cache_entries))),
                fallback,
            ))
        }
    }
}

fn network(config: &Config) -> Result<NetworkConfig> {
    let mut extra_root_certs = Vec::new();
    for path in &config.upstream.extra_root_certs {
        extra_root_certs
            .push(std::fs::read(path).with_context(|| format!("reading {}", path.display()))?);
    }
    Ok(NetworkConfig {
        host_overrides: config.upstream.host_overrides.clone(),
        extra_root_certs,
    })
}

impl Running {
    /// Serves until Ctrl-C or SIGTERM, then finishes in-flight requests.
    pub async fn serve_until_signal(self) -> Result<()> {
        shutdown_signal().await;
        tracing::info!("shutting down");
        self.shutdown().await
    }

    /// Stops accepting, lets requests in flight finish (up to 10 s), stops
    /// the webhook worker, and persists what is only in memory.
    pub async fn shutdown(self) -> Result<()> {
        self.handle.graceful_shutdown(Some(Duration::from_secs(10)));
        self.task.await??;
        // The outbox is durable: an attempt cut short is made again at the
        // next start.
        self.app.webhooks.stop().await;
        let limiter = self.app.limiter.clone();
        tokio::task::spawn_blocking(move || limiter.flush()).await?;
        let archive = self.app.archive.clone();
        tokio::task::spawn_blocking(move || archive.flush()).await??;
        Ok(())
    }
}

/// Serves several servers (the demo's replicas) until Ctrl-C or SIGTERM.
pub async fn serve_until_signal(servers: Vec<Running>) -> Result<()> {
    shutdown_signal().await;
    tracing::info!("shutting down");
    for server in servers {
        server.shutdown().await?;
    }
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
