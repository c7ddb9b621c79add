//! `quarry eval-live DIR`: the ranking users get, measured through the
//! real API.
//!
//! A BEIR folder's corpus is split across N vendors (document `i` goes to
//! vendor `i mod N`). Each vendor is a fake GitHub whose issue search
//! answers with its BM25 top-k over its share, after the given latency, as
//! a vendor's keyword search would; each is reached by its own copy of the
//! real GitHub connector component, in the real sandbox. The real server
//! (HTTPS, every layer of `/v1/query`) answers every judged query, asked by
//! C concurrent clients with `max_results` 10; each answer's chunks are
//! merged across connectors by `relevance_score`, as an assistant would,
//! and scored with nDCG@10 and recall@10 against the judgements.
//!
//! It also prints the ceiling: the candidates the vendors returned for each
//! query, ranked offline with every passage embedded and no deadline. The
//! live figure is judged against it.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::rank::eval::{Beir, ndcg_at_10, recall_at_10};
use crate::rank::{Bm25, Candidate, Embedder, MiniLm, Semantic, plan, tokenize};

#[derive(clap::Args, Debug)]
pub struct EvalLiveArgs {
    /// Folder with corpus.jsonl, queries.jsonl and qrels/test.tsv.
    pub dir: PathBuf,
    /// Vendors (connectors) the corpus is split across (at least 3).
    #[arg(long, default_value_t = 3)]
    pub connectors: usize,
    /// Latency each vendor adds to every response.
    #[arg(long, default_value_t = 200)]
    pub upstream_latency_ms: u64,
    /// Clients asking at once.
    #[arg(long, default_value_t = 1)]
    pub clients: usize,
    /// Ask only the first K judged queries (default: all).
    #[arg(long)]
    pub queries: Option<usize>,
    /// The built connectors (the GitHub connector is used).
    #[arg(long, default_value = "target/plugins")]
    pub plugins_dir: PathBuf,
    /// The `quarry` binary to measure (default: this one), so that another
    /// build (the baseline) is measured the same way.
    #[arg(long)]
    pub server_bin: Option<PathBuf>,
}

/// The question every client asks with.
const MAX_RESULTS: usize = 10;
/// The GitHub connector's required setting: any scope will do.
const SCOPE: &str = "repo:eval/corpus";

pub async fn run(args: EvalLiveArgs) -> Result<()> {
    if args.connectors < 3 {
        bail!("--connectors must be at least 3");
    }
    // The vendors serve TLS before the server (which also does this) starts.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let beir = Arc::new(Beir::load(&args.dir)?);
    let judged: Vec<usize> = beir
        .queries
        .iter()
        .enumerate()
        .filter(|(_, q)| beir.qrels.contains_key(&q.id))
        .map(|(i, _)| i)
        .take(args.queries.unwrap_or(usize::MAX))
        .collect();
    let vendors = Vendors::new(&beir, args.connectors, args.upstream_latency_ms);
    let data = tempfile::tempdir()?;
    let vendor_addr = vendors.clone().serve(data.path()).await?;
    let (config_file, config) = server_config(&args, data.path(), vendor_addr)?;
    let bin = match &args.server_bin {
        Some(bin) => bin.clone(),
        None => std::env::current_exe()?,
    };
    let token = connect_user(&bin, &config_file, args.connectors)?;
    let server = Server::start(&bin, &config_file, data.path())?;
    let listen_ca = data.path().join("tls/ca.pem");
    server.wait_until_ready(&listen_ca).await?;
    eprintln!(
        "eval-live: {} queries, {} documents over {} vendors at {} ms, {} client(s)",
        judged.len(),
        beir.corpus.len(),
        args.connectors,
        args.upstream_latency_ms,
        args.clients
    );
    let base = format!("https://{}/v1", config.listen);
    let answers = ask_all(&beir, &judged, &base, &token, &listen_ca, args.clients).await;
    drop(server);
    let answers = answers?;

    let live = score_live(&beir, &answers);
    let model = MiniLm::load_with(&config.ranking.model_dir, config.ranking.max_tokens)?;
    let (ceiling, missing) = score_ceiling(&beir, &answers, &vendors, &model, args.connectors)?;
    if missing > 0 {
        eprintln!("eval-live: {missing} queries had no recorded vendor candidates");
    }
    let mut latencies: Vec<u64> = answers.iter().map(|a| a.millis).collect();
    latencies.sort_unstable();
    println!("queries {}", answers.len());
    println!("clients {}", args.clients);
    println!("nDCG@10 {:.4}", live.ndcg);
    println!("recall@10 {:.4}", live.recall);
    println!("p50_ms {}", percentile(&latencies, 0.50));
    println!("p95_ms {}", percentile(&latencies, 0.95));
    println!("model_share {:.4}", live.model_share);
    let mut deep: Vec<u64> = answers.iter().map(|a| a.deep_search_millis).collect();
    deep.sort_unstable();
    println!("deep_search_p50_ms {}", percentile(&deep, 0.50));
    println!("deep_search_p99_ms {}", percentile(&deep, 0.99));
    println!("ceiling_nDCG@10 {:.4}", ceiling);
    if ceiling > 0.0 {
        println!("live/ceiling {:.4}", live.ndcg / ceiling);
    }
    Ok(())
}

/// Per (vendor, words asked for): the corpus indices it answered with.
type Returned = HashMap<(usize, String), Vec<usize>>;

/// The fake vendors: one BM25 index per share of the corpus, and what each
/// returned, by the words it was asked for.
#[derive(Clone)]
struct Vendors {
    beir: Arc<Beir>,
    /// Per vendor: corpus indices of its share, and BM25 over them.
    shares: Arc<Vec<(Vec<usize>, Bm25)>>,
    latency: Duration,
    returned: Arc<Mutex<Returned>>,
}

#[derive(Deserialize)]
struct SearchParams {
    q: String,
    per_page: Option<usize>,
}

impl Vendors {
    fn new(beir: &Arc<Beir>, count: usize, latency_ms: u64) -> Vendors {
        let shares = (0..count)
            .map(|vendor| {
                let documents: Vec<usize> = (vendor..beir.corpus.len()).step_by(count).collect();
                let texts: Vec<String> = documents.iter().map(|&i| beir.document_text(i)).collect();
                let bm25 = Bm25::new(texts.iter().map(String::as_str));
                (documents, bm25)
            })
            .collect();
        Vendors {
            beir: beir.clone(),
            shares: Arc::new(shares),
            latency: Duration::from_millis(latency_ms),
            returned: Arc::default(),
        }
    }

    /// Serves GitHub's issue search over HTTPS on a loopback port, with a
    /// certificate for api.github.com whose CA is written to
    /// `dir/vendor-ca.pem`.
    async fn serve(self, dir: &Path) -> Result<SocketAddr> {
        let (cert, key, ca) = vendor_certificate()?;
        std::fs::write(dir.join("vendor-ca.pem"), ca)?;
        let tls = axum_server::tls_rustls::RustlsConfig::from_pem(cert.into(), key.into()).await?;
        let router = axum::Router::new()
            .route("/search/issues", get(search_issues))
            .with_state(self);
        let handle = axum_server::Handle::new();
        let server = axum_server::bind_rustls("127.0.0.1:0".parse()?, tls).handle(handle.clone());
        tokio::spawn(server.serve(router.into_make_service()));
        handle
            .listening()
            .await
            .context("the fake vendors could not listen")
    }

    /// A vendor's answer: its BM25 top `per_page` for the words of `q`.
    fn search(&self, vendor: usize, q: &str, per_page: usize) -> Vec<usize> {
        let words = vendor_words(q);
        let (documents, bm25) = &self.shares[vendor];
        let terms: Vec<String> = words.iter().cloned().collect();
        let top: Vec<usize> = bm25
            .top(&terms, &[], per_page)
            .into_iter()
            .map(|i| documents[i])
            .collect();
        self.returned
            .lock()
            .expect("returned")
            .insert((vendor, key(&words)), top.clone());
        top
    }

    fn returned_for(&self, vendor: usize, words: &BTreeSet<String>) -> Option<Vec<usize>> {
        self.returned
            .lock()
            .expect("returned")
            .get(&(vendor, key(words)))
            .cloned()
    }
}

async fn search_issues(
    State(vendors): State<Vendors>,
    headers: HeaderMap,
    Query(params): Query<SearchParams>,
) -> axum::response::Response {
    let vendor = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer eval-vendor-"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n < vendors.shares.len());
    let Some(vendor) = vendor else {
        return (
            axum::http::StatusCode::UNAUTHORIZED,
            axum::Json(json!({"message": "Bad credentials"})),
        )
            .into_response();
    };
    tokio::time::sleep(vendors.latency).await;
    let per_page = params.per_page.unwrap_or(30).clamp(1, 100);
    let found = vendors.search(vendor, &params.q, per_page);
    let items: Vec<Value> = found
        .iter()
        .map(|&i| {
            let document = &vendors.beir.corpus[i];
            json!({
                "number": i,
                "title": document.title,
                "body": document.text,
                "html_url": format!("https://github.com/eval/corpus/issues/{i}"),
                "repository_url": "https://api.github.com/repos/eval/corpus",
                "user": {"login": "eval"},
                "state": "open",
                "labels": [],
                "comments": 0,
                "created_at": "2025-01-01T00:00:00Z",
                "updated_at": "2025-01-01T00:00:00Z",
            })
        })
        .collect();
    axum::Json(json!({
        "total_count": items.len(),
        "incomplete_results": false,
        "items": items,
    }))
    .into_response()
}

/// The words a vendor searches for in `q`: the GitHub connector sends the
/// question's terms and quoted phrases joined by `OR`, then qualifiers.
fn vendor_words(q: &str) -> BTreeSet<String> {
    const QUALIFIERS: [&str; 5] = ["repo:", "org:", "is:", "updated:", "created:"];
    let text: Vec<&str> = q
        .split_whitespace()
        .filter(|word| *word != "OR" && !QUALIFIERS.iter().any(|p| word.starts_with(p)))
        .collect();
    tokenize(&text.join(" ").replace('"', " "))
        .into_iter()
        .collect()
}

/// The words the vendors were asked for on behalf of `question`.
fn question_words(question: &str) -> BTreeSet<String> {
    let plan = plan(question, crate::store::now());
    let mut words = plan.terms.clone();
    words.extend(plan.phrases.iter().cloned());
    tokenize(&words.join(" ")).into_iter().collect()
}

fn key(words: &BTreeSet<String>) -> String {
    words.iter().cloned().collect::<Vec<_>>().join(" ")
}

/// A CA and a certificate for api.github.com signed by it: (cert, key, CA).
fn vendor_certificate() -> Result<(String, String, String)> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "Quarry eval-live vendors CA");
    let ca = ca_params.self_signed(&ca_key)?;
    let key = KeyPair::generate()?;
    let params = CertificateParams::new(vec!["api.github.com".to_string()])?;
    let cert = params.signed_by(&key, &rcgen::Issuer::from_params(&ca_params, &ca_key))?;
    Ok((cert.pem(), key.serialize_pem(), ca.pem()))
}

/// The product's defaults, with the vendors' copies of the GitHub
/// connector, limits that the evaluation does not hit, and the vendors'
/// address for api.github.com. Only keys every build knows, so that a
/// baseline binary reads it too. Returns the file and the configuration.
fn server_config(
    args: &EvalLiveArgs,
    data: &Path,
    vendors: SocketAddr,
) -> Result<(PathBuf, Config)> {
    let plugins = data.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    let wasm = std::fs::read(args.plugins_dir.join("github.wasm")).with_context(|| {
        format!(
            "the GitHub connector is missing from {}: build the connectors with \
             `cargo run -p quarry-plugin-builder`",
            args.plugins_dir.display()
        )
    })?;
    let manifest = std::fs::read_to_string(args.plugins_dir.join("github.toml"))?;
    for vendor in 0..args.connectors {
        let id = vendor_id(vendor);
        std::fs::write(plugins.join(format!("{id}.wasm")), &wasm)?;
        let renamed = manifest
            .replacen("id = \"github\"", &format!("id = \"{id}\""), 1)
            .replacen(
                "label = \"GitHub\"",
                &format!("label = \"Vendor {}\"", vendor + 1),
                1,
            );
        std::fs::write(plugins.join(format!("{id}.toml")), renamed)?;
    }
    let vendor_ca = std::fs::read_to_string(data.join("vendor-ca.pem"))?;
    let tls = crate::demo::write_certificates(data, &vendor_ca)?;
    let listen = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let text = format!(
        r#"
listen = "{listen}"
data_dir = "{data}"
plugins_dir = "{plugins}"
[tls]
cert = "{cert}"
key = "{key}"
[upstream]
host_overrides = {{ "api.github.com" = "{vendors}" }}
extra_root_certs = ["{vendor_ca}"]
[limits.query]
minute = 100000
day = 1000000
[limits.deep_search]
minute = 100000
day = 1000000
"#,
        data = data.join("server").display(),
        plugins = plugins.display(),
        cert = tls.cert.display(),
        key = tls.key.display(),
        vendor_ca = tls.fake_ca.display(),
    );
    let file = data.join("quarry.toml");
    std::fs::write(&file, &text)?;
    let config =
        Config::from_sources(&text, std::env::vars()).context("the eval-live configuration")?;
    Ok((file, config))
}

fn vendor_id(vendor: usize) -> String {
    format!("vendor-{}", vendor + 1)
}

/// One user with every vendor connected, through `quarry admin` (before the
/// server starts); returns an API token.
fn connect_user(bin: &Path, config: &Path, vendors: usize) -> Result<String> {
    const EMAIL: &str = "eval@quarry.test";
    admin(bin, config, &["create-user", EMAIL])?;
    for vendor in 0..vendors {
        let token = format!("--token=eval-vendor-{vendor}");
        let setting = format!("--setting=scope={SCOPE}");
        admin(
            bin,
            config,
            &["connect", EMAIL, &vendor_id(vendor), &token, &setting],
        )?;
    }
    let issued = admin(
        bin,
        config,
        &["issue-token", EMAIL, "--ttl-seconds", "86400"],
    )?;
    let issued: Value = serde_json::from_str(issued.trim())?;
    Ok(issued["token"]
        .as_str()
        .context("issue-token printed no token")?
        .to_string())
}

fn admin(bin: &Path, config: &Path, args: &[&str]) -> Result<String> {
    let output = std::process::Command::new(bin)
        .arg("admin")
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    if !output.status.success() {
        bail!(
            "quarry admin {} failed: {}",
            args[0],
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8(output.stdout)?)
}

/// The server under measurement, in its own process (ended on drop); its
/// logs go to `server.log` in the data folder.
struct Server {
    child: std::process::Child,
    url: String,
}

impl Server {
    fn start(bin: &Path, config: &Path, data: &Path) -> Result<Server> {
        let log = std::fs::File::create(data.join("server.log"))?;
        let text = std::fs::read_to_string(config)?;
        let parsed = Config::from_sources(&text, std::env::vars())?;
        let child = std::process::Command::new(bin)
            .arg("serve")
            .arg("--config")
            .arg(config)
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        Ok(Server {
            child,
            url: format!("https://{}/v1/openapi.json", parsed.listen),
        })
    }

    async fn wait_until_ready(&self, ca: &Path) -> Result<()> {
        let client = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(ca)?)?)
            .build()?;
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if client
                .get(&self.url)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("the server did not answer within 120 s (see its server.log)")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One query's answer as an assistant sees it.
struct LiveAnswer {
    query: usize,
    millis: u64,
    /// (corpus index, relevance, ranked by the model) of every chunk.
    chunks: Vec<(usize, f64, bool)>,
    /// The deep search asked right after it.
    deep_search_millis: u64,
}

async fn ask_all(
    beir: &Arc<Beir>,
    judged: &[usize],
    url: &str,
    token: &str,
    ca: &Path,
    clients: usize,
) -> Result<Vec<LiveAnswer>> {
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(ca)?)?)
        .timeout(Duration::from_secs(60))
        .build()?;
    let next = Arc::new(AtomicUsize::new(0));
    let judged = Arc::new(judged.to_vec());
    let tasks: Vec<_> = (0..clients.max(1))
        .map(|_| {
            let (client, next, judged, beir) =
                (client.clone(), next.clone(), judged.clone(), beir.clone());
            let (url, token) = (url.to_string(), token.to_string());
            tokio::spawn(async move {
                let mut answers = Vec::new();
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&query) = judged.get(n) else {
                        return Ok::<_, anyhow::Error>(answers);
                    };
                    let text = &beir.queries[query].text;
                    let mut answer = ask(&client, &url, &token, query, text).await?;
                    answer.deep_search_millis = deep_search(&client, &url, &token, text).await?;
                    answers.push(answer);
                }
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.extend(task.await??);
    }
    answers.sort_by_key(|a| a.query);
    Ok(answers)
}

async fn ask(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    query: usize,
    text: &str,
) -> Result<LiveAnswer> {
    let (body, millis) = post(client, &format!("{url}/query"), token, text).await?;
    let mut chunks = Vec::new();
    for result in body["results"].as_array().into_iter().flatten() {
        if let Some(error) = result.get("error").filter(|e| !e.is_null()) {
            bail!("connector {} failed: {error}", result["connector"]);
        }
        for chunk in result["chunks"].as_array().into_iter().flatten() {
            let document = chunk["metadata"]["document_id"]
                .as_str()
                .and_then(|id| id.rsplit('#').next())
                .and_then(|n| n.parse().ok())
                .context("a chunk without the vendor's document number")?;
            let relevance = chunk["relevance_score"].as_f64().unwrap_or_default();
            let semantic = chunk["metadata"]["ranking"] == "semantic";
            chunks.push((document, relevance, semantic));
        }
    }
    Ok(LiveAnswer {
        query,
        millis,
        chunks,
        deep_search_millis: 0,
    })
}

/// A deep search for the question just asked, right after its answer (the
/// archive has the answer's chunks, their vectors from the ranking, and
/// whatever the model did not reach still queued). Returns its latency.
async fn deep_search(client: &reqwest::Client, url: &str, token: &str, text: &str) -> Result<u64> {
    let (_, millis) = post(client, &format!("{url}/deep_search"), token, text).await?;
    Ok(millis)
}

/// Asks `text` at `url` (`/v1/query` or `/v1/deep_search`) with
/// `max_results` 10; returns the answer and its latency in milliseconds.
async fn post(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    text: &str,
) -> Result<(Value, u64)> {
    let started = Instant::now();
    let response = client
        .post(url)
        .bearer_auth(token)
        .json(&json!({"query": text, "max_results": MAX_RESULTS}))
        .send()
        .await?;
    let status = response.status();
    let body: Value = response.json().await?;
    let millis = started.elapsed().as_millis() as u64;
    if !status.is_success() {
        bail!("{url} answered {status}: {body}");
    }
    Ok((body, millis))
}

struct LiveScore {
    ndcg: f64,
    recall: f64,
    model_share: f64,
}

fn score_live(beir: &Beir, answers: &[LiveAnswer]) -> LiveScore {
    let (mut ndcg, mut recall, mut semantic, mut total) = (0.0, 0.0, 0usize, 0usize);
    for answer in answers {
        let mut merged: Vec<(usize, f64)> = answer.chunks.iter().map(|c| (c.0, c.1)).collect();
        // Stable: equal scores keep the answer's order.
        merged.sort_by(|a, b| b.1.total_cmp(&a.1));
        let ids = top_ten_ids(beir, merged.into_iter().map(|(d, _)| d));
        let judged = &beir.qrels[&beir.queries[answer.query].id];
        ndcg += ndcg_at_10(&ids, judged);
        recall += recall_at_10(&ids, judged);
        semantic += answer.chunks.iter().filter(|c| c.2).count();
        total += answer.chunks.len();
    }
    let n = answers.len().max(1) as f64;
    LiveScore {
        ndcg: ndcg / n,
        recall: recall / n,
        model_share: semantic as f64 / total.max(1) as f64,
    }
}

/// The first ten distinct documents, as ids.
fn top_ten_ids(beir: &Beir, documents: impl Iterator<Item = usize>) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for document in documents {
        let id = beir.corpus[document].id.as_str();
        if !ids.contains(&id) {
            ids.push(id);
        }
        if ids.len() == 10 {
            break;
        }
    }
    ids
}

/// Mean nDCG@10 of the vendors' candidates ranked offline, every passage
/// embedded; and how many queries had no recorded candidates.
fn score_ceiling(
    beir: &Beir,
    answers: &[LiveAnswer],
    vendors: &Vendors,
    model: &dyn Embedder,
    count: usize,
) -> Result<(f64, usize)> {
    let (mut ndcg, mut scored, mut missing) = (0.0, 0usize, 0usize);
    let names: Vec<String> = (0..count).map(vendor_id).collect();
    for answer in answers {
        let question = &beir.queries[answer.query];
        let words = question_words(&question.text);
        let mut candidates = Vec::new();
        let mut documents = HashMap::new();
        let mut recorded = true;
        for (vendor, name) in names.iter().enumerate() {
            let Some(found) = vendors.returned_for(vendor, &words) else {
                recorded = false;
                break;
            };
            for (position, &i) in found.iter().enumerate() {
                documents.insert((vendor, position), i);
                candidates.push(Candidate {
                    connector: name,
                    document_index: position,
                    document_id: &beir.corpus[i].id,
                    title: &beir.corpus[i].title,
                    content: &beir.corpus[i].text,
                });
            }
        }
        if !recorded {
            missing += 1;
            continue;
        }
        let plan = plan(&question.text, crate::store::now());
        let semantic = Semantic::new(model, &question.text, usize::MAX)?;
        let ranked = crate::rank::rank(&plan, &candidates, MAX_RESULTS, Some(&semantic))?;
        let order = ranked.iter().map(|r| {
            let vendor = names.iter().position(|n| *n == r.connector).expect("ours");
            documents[&(vendor, r.document_index)]
        });
        let ids = top_ten_ids(beir, order);
        ndcg += ndcg_at_10(&ids, &beir.qrels[&question.id]);
        scored += 1;
    }
    Ok((ndcg / scored.max(1) as f64, missing))
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendor_and_the_eval_agree_on_the_words() {
        // What the GitHub connector sends for a question with a phrase.
        let q = "skinner OR \"operant conditioning\" repo:eval/corpus updated:>=2025-01-01";
        let words = vendor_words(q);
        assert_eq!(words, question_words("skinner \"operant conditioning\""));
        assert!(!words.iter().any(|w| w.contains(':')));
    }

    #[test]
    fn percentiles_of_a_sorted_list() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 0.5), 50);
        assert_eq!(percentile(&values, 0.95), 95);
        assert_eq!(percentile(&[], 0.5), 0);
    }
}
