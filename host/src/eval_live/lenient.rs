//! The lenient vendors (`--lenient`): N copies of GitHub's issue search,
//! each over its share of the corpus, answering with the BM25 top-k of the
//! OR of every word it is sent, after the given latency. No vendor searches
//! like this; it is the comparison the vendor-true figures are read
//! against.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use super::upstreams::{Connection, Search, Upstreams};
use crate::rank::eval::Beir;
use crate::rank::{Bm25, tokenize};

/// The GitHub connector's required setting: any scope will do.
const SCOPE: &str = "repo:eval/corpus";

/// One search as a lenient vendor answered it.
struct Answered {
    client: usize,
    vendor: usize,
    q: String,
    returned: Vec<usize>,
}

/// The lenient vendors: one BM25 index per share of the corpus, and every
/// search they answered.
#[derive(Clone)]
pub(super) struct Lenient {
    beir: Arc<Beir>,
    /// Per vendor: corpus indices of its share, and BM25 over them.
    shares: Arc<Vec<(Vec<usize>, Bm25)>>,
    latency: Duration,
    answered: Arc<Mutex<Vec<Answered>>>,
    addr: SocketAddr,
    ca_pem: String,
}

#[derive(Deserialize)]
struct SearchParams {
    q: String,
    per_page: Option<usize>,
}

impl Lenient {
    /// Splits the corpus across `count` vendors and serves GitHub's issue
    /// search over HTTPS on a loopback port, with a certificate for
    /// api.github.com.
    pub(super) async fn start(beir: &Arc<Beir>, count: usize, latency_ms: u64) -> Result<Lenient> {
        let shares = (0..count)
            .map(|vendor| {
                let documents: Vec<usize> = (vendor..beir.corpus.len()).step_by(count).collect();
                let texts: Vec<String> = documents.iter().map(|&i| beir.document_text(i)).collect();
                let bm25 = Bm25::new(texts.iter().map(String::as_str));
                (documents, bm25)
            })
            .collect();
        let certificate =
            crate::demo::certificate_for("Quarry eval-live vendors CA", &["api.github.com"])?;
        let mut lenient = Lenient {
            beir: beir.clone(),
            shares: Arc::new(shares),
            latency: Duration::from_millis(latency_ms),
            answered: Arc::default(),
            addr: "127.0.0.1:0".parse()?,
            ca_pem: certificate.ca_pem.clone(),
        };
        let tls = axum_server::tls_rustls::RustlsConfig::from_pem(
            certificate.chain_pem.into(),
            certificate.key_pem.into(),
        )
        .await?;
        let router = axum::Router::new()
            .route("/search/issues", get(search_issues))
            .with_state(lenient.clone());
        let handle = axum_server::Handle::new();
        let server = axum_server::bind_rustls(lenient.addr, tls).handle(handle.clone());
        tokio::spawn(server.serve(router.into_make_service()));
        lenient.addr = handle
            .listening()
            .await
            .context("the fake vendors could not listen")?;
        Ok(lenient)
    }

    /// A vendor's answer: its BM25 top `per_page` for the words of `q`.
    fn search(&self, client: usize, vendor: usize, q: &str, per_page: usize) -> Vec<usize> {
        let terms: Vec<String> = vendor_words(q);
        let (documents, bm25) = &self.shares[vendor];
        let top: Vec<usize> = bm25
            .top(&terms, &[], per_page)
            .into_iter()
            .map(|i| documents[i])
            .collect();
        self.answered.lock().expect("answered").push(Answered {
            client,
            vendor,
            q: q.to_string(),
            returned: top.clone(),
        });
        top
    }
}

fn vendor_id(vendor: usize) -> String {
    format!("vendor-{}", vendor + 1)
}

impl Upstreams for Lenient {
    fn connectors(&self) -> Vec<(String, String)> {
        (0..self.shares.len())
            .map(|vendor| (vendor_id(vendor), "github".to_string()))
            .collect()
    }

    fn hosts(&self) -> Vec<String> {
        vec!["api.github.com".into()]
    }

    fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn ca_pem(&self) -> String {
        self.ca_pem.clone()
    }

    fn connections(&self, client: usize) -> Vec<Connection> {
        (0..self.shares.len())
            .map(|vendor| Connection {
                id: vendor_id(vendor),
                token: format!("eval-vendor-{vendor}-{client}"),
                settings: vec![("scope".into(), SCOPE.into())],
            })
            .collect()
    }

    fn mark(&self) -> usize {
        self.answered.lock().expect("answered").len()
    }

    fn searches(&self, client: usize, from: usize, to: usize) -> Vec<Search> {
        let answered = self.answered.lock().expect("answered");
        answered[from.min(answered.len())..to.min(answered.len())]
            .iter()
            .filter(|a| a.client == client)
            .map(|a| Search {
                connector: vendor_id(a.vendor),
                sent: a.q.clone(),
                returned: a.returned.clone(),
            })
            .collect()
    }

    fn document_of(&self, url: &str) -> Option<usize> {
        url.strip_prefix("https://github.com/eval/corpus/issues/")?
            .parse()
            .ok()
            .filter(|&i| i < self.beir.corpus.len())
    }
}

async fn search_issues(
    State(vendors): State<Lenient>,
    headers: HeaderMap,
    Query(params): Query<SearchParams>,
) -> axum::response::Response {
    let caller = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer eval-vendor-"))
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(vendor, client)| {
            Some((vendor.parse::<usize>().ok()?, client.parse::<usize>().ok()?))
        })
        .filter(|(vendor, _)| *vendor < vendors.shares.len());
    let Some((vendor, client)) = caller else {
        return (
            axum::http::StatusCode::UNAUTHORIZED,
            axum::Json(json!({"message": "Bad credentials"})),
        )
            .into_response();
    };
    tokio::time::sleep(vendors.latency).await;
    let per_page = params.per_page.unwrap_or(30).clamp(1, 100);
    let found = vendors.search(client, vendor, &params.q, per_page);
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
        "search_type": "lexical",
        "items": items,
    }))
    .into_response()
}

/// The words a lenient vendor searches for in `q`: every word of the
/// connector's `(t1 OR t2 ...) qualifiers`, the operators, parentheses,
/// quotes and qualifiers aside.
pub(super) fn vendor_words(q: &str) -> Vec<String> {
    const QUALIFIERS: [&str; 5] = ["repo:", "org:", "is:", "updated:", "created:"];
    let text: Vec<&str> = q
        .split_whitespace()
        .filter(|word| *word != "OR" && !QUALIFIERS.iter().any(|p| word.starts_with(p)))
        .collect();
    let mut words = tokenize(&text.join(" ").replace(['"', '(', ')'], " "));
    words.sort();
    words.dedup();
    words
}
