//! The fake vendors: GitHub's issue search, each over its share of the
//! corpus with BM25, after the given latency; and what each returned.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::rank::eval::Beir;
use crate::rank::{Bm25, plan, tokenize};

/// Per (vendor, words asked for): the corpus indices it answered with.
type Returned = HashMap<(usize, String), Vec<usize>>;

/// The fake vendors: one BM25 index per share of the corpus, and what each
/// returned, by the words it was asked for.
#[derive(Clone)]
pub(super) struct Vendors {
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
    pub(super) fn new(beir: &Arc<Beir>, count: usize, latency_ms: u64) -> Vendors {
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
    pub(super) async fn serve(self, dir: &Path) -> Result<SocketAddr> {
        let certificate =
            crate::demo::certificate_for("Quarry eval-live vendors CA", &["api.github.com"])?;
        std::fs::write(dir.join("vendor-ca.pem"), &certificate.ca_pem)?;
        let tls = axum_server::tls_rustls::RustlsConfig::from_pem(
            certificate.chain_pem.into(),
            certificate.key_pem.into(),
        )
        .await?;
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

    pub(super) fn returned_for(
        &self,
        vendor: usize,
        words: &BTreeSet<String>,
    ) -> Option<Vec<usize>> {
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
pub(super) fn vendor_words(q: &str) -> BTreeSet<String> {
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
pub(super) fn question_words(question: &str) -> BTreeSet<String> {
    let plan = plan(question, crate::store::now());
    let mut words = plan.terms.clone();
    words.extend(plan.phrases.iter().cloned());
    tokenize(&words.join(" ")).into_iter().collect()
}

fn key(words: &BTreeSet<String>) -> String {
    words.iter().cloned().collect::<Vec<_>>().join(" ")
}
