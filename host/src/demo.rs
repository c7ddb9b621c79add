//! `quarry demo`: the fake upstreams and the server, with embedded
//! defaults, a self-signed certificate and two users (alice and bob) who
//! have every connector connected. Its first line on stdout is one JSON
//! object with the base URL, the CA to trust and the users' tokens.
//!
//! A connector installed into its plugins folder while it runs is
//! connected for its users too ([`connect`]), and `--fake HOST=IP:PORT`
//! and `--fake-ca PEM` send a vendor of the author's own to their fake
//! ([`upstreams`]).

mod connect;
mod upstreams;

pub use connect::ConnectionSetting;
pub use upstreams::FakeRoute;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use fake_saas::chaos::Chaos;
use fake_saas::{FakeSaas, FakeSaasConfig};
use serde_json::json;

use crate::config::Config;
use quarry_store::secret::Secret;
use quarry_store::{Audience, Store};

#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Address of the API (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Keep data here (default: a temporary folder removed on exit).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Lifetime of the demo users' API tokens.
    #[arg(long, default_value_t = 3600)]
    pub token_ttl_seconds: u64,
    /// The built connectors (`cargo run -p quarry-plugin-builder` puts them
    /// in target/plugins); the folder is watched, and a connector installed
    /// into it while the demo runs is connected for the demo users. Given
    /// twice, the last one counts (`tools/demo --plugins-dir DIR`).
    #[arg(long, default_value = "target/plugins", overrides_with = "plugins_dir")]
    pub plugins_dir: PathBuf,
    /// Latency the fake upstreams add to every response.
    #[arg(long, default_value_t = 0)]
    pub upstream_latency_ms: u64,
    /// Replicas to start, sharing one PostgreSQL and one Redis (more than
    /// one needs both; `tools/demo --replicas N` starts private ones).
    #[arg(long, default_value_t = 1)]
    pub replicas: usize,
    /// Keep the records in this PostgreSQL database instead of redb.
    #[arg(long)]
    pub postgres: Option<String>,
    /// Share the limits' windows in this Redis.
    #[arg(long)]
    pub redis: Option<String>,
    /// Users to make beside alice and bob (`user1@acme.test`, ...), each
    /// connected like them: more load for a soak, users to delete.
    #[arg(long, default_value_t = 0)]
    pub extra_users: usize,
    /// Faults the fake upstreams inject at random into vendor requests,
    /// e.g. `soak,seed=7` or `error=0.1,throttle=0.05` (`fake_saas::chaos`).
    #[arg(long, default_value = "off")]
    pub upstream_faults: String,
    /// Send a vendor's host to your own fake, `HOST=IP:PORT` (repeatable),
    /// beside the demo's fake vendors: `--fake api.acme.example=127.0.0.1:9443`.
    #[arg(long = "fake", value_name = "HOST=IP:PORT")]
    pub fakes: Vec<FakeRoute>,
    /// Trust this CA certificate (PEM) for upstream TLS (repeatable), beside
    /// the demo's fake vendors' CA: your fake's.
    #[arg(long = "fake-ca", value_name = "PEM")]
    pub fake_cas: Vec<PathBuf>,
    /// Serve this fixtures folder as `fake-saas fixtures --dir DIR` does
    /// (its routes.toml and the files it names), and send its hosts to it:
    /// `--fake` and `--fake-ca` without a second command.
    #[arg(long, value_name = "DIR")]
    pub fixtures: Option<PathBuf>,
    /// A setting of every demo user's connection to a connector,
    /// `ID:NAME=VALUE` (repeatable): the value of a required setting of
    /// your own connector (the demo knows only its own connectors').
    #[arg(long = "setting", value_name = "ID:NAME=VALUE")]
    pub settings: Vec<ConnectionSetting>,
    /// Listen on an address other machines reach (`--listen 0.0.0.0:8443`).
    /// The demo prints its users' tokens, has well-known passwords, and
    /// lets webhooks and client metadata documents reach private
    /// addresses: only for a network you trust.
    #[arg(long)]
    pub expose: bool,
}

/// The users every demo has; `--extra-users` adds `user1`, `user2`, ...
const USERS: [&str; 2] = ["alice", "bob"];

fn user_names(extra: usize) -> Vec<String> {
    let extra = (1..=extra).map(|n| format!("user{n}"));
    USERS
        .iter()
        .map(|name| name.to_string())
        .chain(extra)
        .collect()
}

/// The demo users' dashboard password (printed in the first line).
pub const DEMO_PASSWORD: &str = "quarry-demo-password";

/// Settings the fake company's connections need.
pub fn demo_settings(connector: &str) -> Vec<(String, String)> {
    match connector {
        "github" => vec![("scope".into(), "repo:acme/shop".into())],
        "zendesk" => vec![("subdomain".into(), "acme".into())],
        "salesforce" => vec![(
            "instance_url".into(),
            "https://acme.my.salesforce.com".into(),
        )],
        "asana" => vec![("workspace".into(), "1201994848293001".into())],
        "intercom" => vec![("workspace_id".into(), "ac3mepq7".into())],
        "sentry" => vec![("organization".into(), "acme".into())],
        _ => Vec::new(),
    }
}

pub async fn run(mut args: DemoArgs) -> Result<()> {
    anyhow::ensure!(
        args.listen.ip().is_loopback() || args.expose,
        "--listen {} is reachable from other machines, and the demo publishes its users' \
         passwords and tokens and lets webhooks reach private addresses: listen on a loopback \
         address (127.0.0.1), or add --expose for a network you trust",
        args.listen
    );
    let temp;
    let data_dir = match &args.data_dir {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&data_dir)?;
    let fake = FakeSaas::start(FakeSaasConfig {
        listen: "127.0.0.1:0".parse()?,
        latency: Duration::from_millis(args.upstream_latency_ms),
        chaos: Chaos::parse(&args.upstream_faults)
            .map_err(|e| anyhow::anyhow!("--upstream-faults: {e}"))?,
        rate_limits: false,
    })
    .await?;
    let tls = write_certificates(&data_dir, fake.ca_cert_pem())?;
    let fixtures = upstreams::serve_fixtures(&mut args, &tls).await?;
    let replicas = start_replicas(&args, &data_dir, &tls, fake.addr()).await?;
    let running = &replicas[0];
    let (store, registry) = (running.app.store.clone(), running.app.registry.clone());
    // Subscribed before the connectors are listed: one loaded in between
    // is then seen by both, and connected once.
    let loads = registry.loads();
    let present: BTreeSet<String> = registry
        .list()
        .iter()
        .map(|c| c.manifest.id.clone())
        .collect();
    let users = create_users(
        &fake,
        &store,
        &present,
        &args.settings,
        &user_names(args.extra_users),
        args.token_ttl_seconds,
    )?;
    let loaded = present.len();
    if loaded == 0 {
        // Not a mistake when an author starts with an empty folder and
        // installs their connector while the demo runs.
        tracing::info!(dir = %args.plugins_dir.display(), "no connectors yet: those installed into the folder are loaded and connected while the demo runs (the repository's are built with `cargo run -p quarry-plugin-builder`)");
    }
    let base_url = format!("https://{}/v1", running.addr);
    let first_line = json!({
        "base_url": base_url,
        "ca_cert": tls.ca.display().to_string(),
        "fake_upstreams": format!("https://{}", fake.addr()),
        "fake_upstreams_ca_cert": tls.fake_ca.display().to_string(),
        "mcp_url": format!("https://{}/mcp", running.addr),
        "users": users.iter().map(|u| json!({ "email": u.email, "token": u.token.expose(), "mcp_token": u.mcp_token.expose(), "password": DEMO_PASSWORD })).collect::<Vec<_>>(),
        "dashboard_url": format!("https://{}/dashboard", running.addr),
        "replicas": replicas.iter().map(|r| format!("https://{}/v1", r.addr)).collect::<Vec<_>>(),
        "fixtures": fixtures.as_ref().map(|f| json!({ "addr": f.addr().to_string(), "hosts": f.hosts() })),
    });
    println!("{first_line}");
    eprintln!(
        "\nQuarry demo: {loaded} connectors against fake upstreams on {}.\nTry:\n  curl --cacert {} -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' \\\n       -d '{{\"query\": \"checkout timeouts\"}}' {base_url}/query\nDocs: {base_url}/docs   Stop: Ctrl-C\nDashboard: https://{}/dashboard (alice@acme.test, password {DEMO_PASSWORD})\nConnectors installed into {} while it runs are connected for every demo user (token fake-<id>-<user>).\n",
        fake.addr(),
        tls.ca.display(),
        users[0].token.expose(),
        running.addr,
        args.plugins_dir.display(),
    );
    let connecting = connect::connect_later_connectors(
        &fake,
        &store,
        &registry,
        &users,
        &args.settings,
        loads,
        present,
    );
    tokio::select! {
        served = crate::server::serve_until_signal(replicas) => served?,
        never = connecting => match never {},
    }
    fake.shutdown().await;
    Ok(())
}

/// Starts `--replicas` servers on one store: each with its own address and
/// data folder (caches), all on the same PostgreSQL and Redis when given.
async fn start_replicas(
    args: &DemoArgs,
    data_dir: &Path,
    tls: &TlsFiles,
    fake: SocketAddr,
) -> Result<Vec<crate::server::Running>> {
    anyhow::ensure!(args.replicas >= 1, "--replicas must be at least 1");
    anyhow::ensure!(
        args.replicas == 1 || (args.postgres.is_some() && args.redis.is_some()),
        "--replicas {} share one PostgreSQL and one Redis: give --postgres and --redis \
         (tools/demo --replicas N starts private ones)",
        args.replicas
    );
    let master_key = match args.postgres {
        Some(_) => demo_master_key(&data_dir.join("shared-master.key"))?,
        // A demo's data folder is throwaway: its key lives in it.
        None => demo_master_key(&data_dir.join("master.key"))?,
    };
    let mut replicas = Vec::new();
    for index in 0..args.replicas {
        // The first replica's folder is the demo's; the others' start with
        // its compiled components instead of compiling them again.
        let folder = match index {
            0 => data_dir.to_path_buf(),
            _ => data_dir.join(format!("replica-{index}")),
        };
        if index > 0 {
            copy_files(
                &data_dir.join(COMPONENT_CACHE),
                &folder.join(COMPONENT_CACHE),
            )?;
        }
        let listen = if index == 0 {
            args.listen
        } else {
            SocketAddr::new(args.listen.ip(), 0)
        };
        let config = demo_config(args, listen, &folder, tls, fake, &master_key)?;
        replicas.push(crate::server::start(config).await?);
    }
    Ok(replicas)
}

/// A vendor access token for a demo user: alice's and bob's are seeded in
/// the fake vendors; the extra users get tokens of their own, minted on
/// alice's view of the fake company (so that revoking them at a deletion
/// leaves the others' alone).
fn access_token(fake: &FakeSaas, connector: &str, name: &str) -> String {
    let seeded = USERS.contains(&name);
    let vendor = fake_saas::dataset::vendor_of(connector);
    if seeded || !fake_saas::dataset::VENDORS.contains(&vendor) {
        return format!("fake-{connector}-{name}");
    }
    fake.issue_token(connector, USERS[0], None).access_token
}

/// A demo user and their tokens: one for `/v1`, one for `/mcp`.
struct DemoUser {
    /// `alice`, `bob`, `user1`, ...
    name: String,
    id: String,
    email: String,
    token: Secret,
    mcp_token: Secret,
}

fn create_users(
    fake: &FakeSaas,
    store: &Store,
    connectors: &BTreeSet<String>,
    settings: &[ConnectionSetting],
    names: &[String],
    ttl: u64,
) -> Result<Vec<DemoUser>> {
    let mut out = Vec::new();
    for name in names {
        let email = format!("{name}@acme.test");
        let user = match store.user_by_email(&email)? {
            Some(user) => user,
            None => store.create_user(&email)?,
        };
        for connector in connectors {
            connect_user(fake, store, &user.id, name, connector, settings)?;
        }
        crate::dashboard::sign_in::set_password(store, &user.id, DEMO_PASSWORD)?;
        let (token, _) = store.issue_token(&user.id, ttl, Audience::V1)?;
        let (mcp_token, _) = store.issue_token(&user.id, ttl, Audience::Mcp)?;
        out.push(DemoUser {
            name: name.clone(),
            id: user.id,
            email,
            token,
            mcp_token,
        });
    }
    Ok(out)
}

/// Connects the demo user `name` to `connector` with the demo's
/// credential, the fake company's settings and those of `--setting`.
fn connect_user(
    fake: &FakeSaas,
    store: &Store,
    user_id: &str,
    name: &str,
    connector: &str,
    settings: &[ConnectionSetting],
) -> Result<()> {
    crate::admin::connect(
        store,
        user_id,
        connector,
        Secret::new(access_token(fake, connector, name)),
        connect::settings_for(connector, settings),
    )
}

pub(crate) struct TlsFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// The upstreams' CA, for the server to trust.
    pub fake_ca: PathBuf,
}

/// The one certificate generator (fake-saas's): a CA made on the fly and
/// a certificate for `hosts` (and 127.0.0.1) signed by it.
pub(crate) use fake_saas::tls::certificate_for;

/// A CA for the demo and a server certificate for 127.0.0.1 and localhost
/// signed by it; and the fake upstreams' CA, for the server to trust.
pub(crate) fn write_certificates(data_dir: &Path, fake_ca_pem: &str) -> Result<TlsFiles> {
    let dir = data_dir.join("tls");
    std::fs::create_dir_all(&dir)?;
    let server = certificate_for("Quarry demo CA", &["localhost"])?;
    let files = TlsFiles {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server-key.pem"),
        fake_ca: dir.join("fake-saas-ca.pem"),
    };
    std::fs::write(&files.ca, &server.ca_pem)?;
    std::fs::write(&files.cert, &server.chain_pem)?;
    std::fs::write(&files.key, &server.key_pem)?;
    std::fs::write(&files.fake_ca, fake_ca_pem)?;
    Ok(files)
}

/// The demo's embedded defaults; `QUARRY_*` variables still override them.
fn demo_config(
    args: &DemoArgs,
    listen: SocketAddr,
    data_dir: &Path,
    tls: &TlsFiles,
    fake: SocketAddr,
    master_key: &str,
) -> Result<Config> {
    let mut table = toml::Table::new();
    let mut set = |key: &str, value: toml::Value| table.insert(key.to_string(), value);
    set("listen", listen.to_string().into());
    if let Some(url) = &args.postgres {
        let mut storage = toml::Table::new();
        storage.insert("backend".into(), "postgres".into());
        storage.insert("postgres_url".into(), url.clone().into());
        storage.insert("pool_size".into(), 8.into());
        set("storage", storage.into());
    }
    // Every replica unwraps the same data keys. A demo's key; an
    // operator's comes from their secret store (QUARRY_MASTER_KEY
    // overrides this one).
    set("master_key", master_key.into());
    if let Some(url) = &args.redis {
        let mut coordination = toml::Table::new();
        coordination.insert("redis_url".into(), url.clone().into());
        set("coordination", coordination.into());
    }
    set("data_dir", data_dir.display().to_string().into());
    set("plugins_dir", args.plugins_dir.display().to_string().into());
    set("token_ttl_seconds", (args.token_ttl_seconds as i64).into());
    let mut tls_table = toml::Table::new();
    tls_table.insert("cert".into(), tls.cert.display().to_string().into());
    tls_table.insert("key".into(), tls.key.display().to_string().into());
    set("tls", tls_table.into());
    // A receiver on this machine (tests, trying the demo) must be reachable.
    let mut webhooks = toml::Table::new();
    webhooks.insert("allow_plain_http".into(), true.into());
    webhooks.insert("allow_private_targets".into(), true.into());
    set("webhooks", webhooks.into());
    // The OAuth client the operator would register with each vendor (the
    // fake vendors accept any; revocation authenticates with it).
    let clients: toml::Table = connector_ids(&args.plugins_dir)
        .iter()
        .map(|id| {
            let mut client = toml::Table::new();
            client.insert("client_id".into(), format!("quarry-demo-{id}").into());
            client.insert("client_secret".into(), "demo-client-secret".into());
            (id.to_string(), client.into())
        })
        .collect();
    set("oauth_clients", clients.into());
    // A person's browser cannot resolve the vendors' names to the fake:
    // their authorize pages are reached on its address, by path.
    let authorize: toml::Table = FakeSaas::hosts()
        .iter()
        .map(|h| (h.to_string(), format!("https://{fake}/_vendor/{h}").into()))
        .collect();
    let mut dashboard = toml::Table::new();
    dashboard.insert("authorize_host_overrides".into(), authorize.into());
    // The tests' MCP clients publish their metadata on this machine.
    dashboard.insert("allow_private_client_documents".into(), true.into());
    // Single sign-on with the fake's Okta (alice@acme.test and bob@acme.test).
    let mut sso = toml::Table::new();
    sso.insert("issuer".into(), "https://acme.okta.com".into());
    sso.insert("client_id".into(), "quarry-demo-sso".into());
    sso.insert("client_secret".into(), "demo-client-secret".into());
    sso.insert("name".into(), "Okta".into());
    dashboard.insert("sso".into(), sso.into());
    set("dashboard", dashboard.into());
    let mut config = Config::from_sources(&table.to_string(), std::env::vars())
        .context("the demo configuration")?;
    // Run outside a checkout (an author's own folder), the model's relative
    // folder is not there: rank by words rather than refuse to start.
    let ranking = &mut config.ranking;
    if ranking.semantic
        && ranking.embedder == crate::config::EmbedderKind::Local
        && !ranking.model_dir.exists()
    {
        tracing::warn!(dir = %ranking.model_dir.display(), "no embedding model there: the demo ranks by keywords only (`tools/fetch-model` in a checkout fetches it; QUARRY_RANKING__MODEL_DIR says where it is)");
        ranking.semantic = false;
    }
    // Set after the environment, so that each source adds to the others.
    upstreams::add_upstreams(
        &mut config.upstream,
        fake,
        &tls.fake_ca,
        &args.fakes,
        &args.fake_cas,
    )?;
    Ok(config)
}

const COMPONENT_CACHE: &str = "cache/components";

fn copy_files(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// The demo's master key, kept in `path` (in its data folder), made on
/// first use: `shared-master.key` for the replicas on PostgreSQL,
/// `master.key` on redb (where `Store::open(dir, None)` finds it too).
fn demo_master_key(path: &Path) -> Result<String> {
    if let Ok(key) = std::fs::read_to_string(path) {
        return Ok(key.trim().to_string());
    }
    use base64::Engine as _;
    let key = base64::engine::general_purpose::STANDARD.encode(rand::random::<[u8; 32]>());
    std::fs::write(path, &key)?;
    Ok(key)
}

/// The ids of the connectors in the plugins folder (`<id>.toml`).
fn connector_ids(plugins_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(plugins_dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            e.ok()?
                .path()
                .file_name()?
                .to_str()?
                .strip_suffix(".toml")
                .map(str::to_string)
        })
        .collect()
}
