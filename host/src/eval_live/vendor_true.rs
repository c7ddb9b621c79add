//! The vendor-true vendors (`--vendors github,slack,...`): the corpus spread
//! across fake-saas's vendors, each searching as its documentation says
//! (its declaration in `tools/fake-saas/declarations/`: AND or OR, fields,
//! order, page caps) and answering in its own shape, each reached by its
//! real connector.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use fake_saas::dataset::corpus::{CorpusDocument, use_corpus};
use fake_saas::{FakeSaas, FakeSaasConfig, RecordedRequest};

use super::upstreams::{Connection, Search, Upstreams};
use crate::rank::eval::Beir;

pub(super) struct VendorTrue {
    fake: FakeSaas,
    vendors: Vec<String>,
    /// Each citation URL's corpus document.
    documents: HashMap<String, usize>,
    /// Each token given out: the client and the connector it is for.
    tokens: std::sync::Mutex<HashMap<String, (usize, String)>>,
}

impl VendorTrue {
    /// Spreads the corpus across `vendors` (document `i` to vendor `i mod
    /// n`) and starts fake-saas with it, each answer after `latency_ms`.
    pub(super) async fn start(
        beir: &Arc<Beir>,
        vendors: &[String],
        latency_ms: u64,
    ) -> Result<VendorTrue> {
        let corpus: Vec<CorpusDocument> = beir
            .corpus
            .iter()
            .map(|d| CorpusDocument {
                title: d.title.clone(),
                text: d.text.clone(),
                updated_unix: d.updated_unix(),
            })
            .collect();
        let names: Vec<&str> = vendors.iter().map(String::as_str).collect();
        let citations = use_corpus(&corpus, &names)?;
        let fake = FakeSaas::start(FakeSaasConfig {
            latency: Duration::from_millis(latency_ms),
            ..FakeSaasConfig::default()
        })
        .await?;
        Ok(VendorTrue {
            fake,
            vendors: vendors.to_vec(),
            documents: citations
                .into_iter()
                .enumerate()
                .map(|(i, url)| (url, i))
                .collect(),
            tokens: Default::default(),
        })
    }

    /// The search a recorded exchange was, if it was one made by a client's
    /// connector (a read of a page's blocks, or of the accessible sites,
    /// is none).
    fn search_of(&self, request: &RecordedRequest, client: usize) -> Option<Search> {
        let token = request.header("authorization")?.strip_prefix("Bearer ")?;
        let tokens = self.tokens.lock().expect("tokens");
        let (owner, connector) = tokens.get(token)?;
        let returned = request.response.as_ref()?.returned.as_ref()?;
        let sent = match &request.query {
            Some(query) => query.clone(),
            None => String::from_utf8_lossy(&request.body).into_owned(),
        };
        (*owner == client).then(|| Search {
            connector: connector.clone(),
            sent,
            returned: returned
                .iter()
                .filter_map(|url| self.document_of(url))
                .collect(),
        })
    }
}

impl Upstreams for VendorTrue {
    fn connectors(&self) -> Vec<(String, String)> {
        self.vendors
            .iter()
            .map(|v| (v.clone(), v.clone()))
            .collect()
    }

    fn hosts(&self) -> Vec<String> {
        FakeSaas::hosts().iter().map(|h| h.to_string()).collect()
    }

    fn addr(&self) -> SocketAddr {
        self.fake.addr()
    }

    fn ca_pem(&self) -> String {
        self.fake.ca_cert_pem().to_string()
    }

    fn connections(&self, client: usize) -> Vec<Connection> {
        let user = format!("eval{client}");
        self.vendors
            .iter()
            .map(|vendor| {
                let token = self.fake.issue_token(vendor, &user, None).access_token;
                self.tokens
                    .lock()
                    .expect("tokens")
                    .insert(token.clone(), (client, vendor.clone()));
                let settings = match vendor.as_str() {
                    "github" => vec![("scope".into(), "repo:eval/corpus".into())],
                    "zendesk" => vec![("subdomain".into(), "acme".into())],
                    _ => Vec::new(),
                };
                Connection {
                    id: vendor.clone(),
                    token,
                    settings,
                }
            })
            .collect()
    }

    fn mark(&self) -> usize {
        self.fake.request_count()
    }

    fn searches(&self, client: usize, from: usize, to: usize) -> Vec<Search> {
        self.fake
            .requests_between(from, to)
            .iter()
            .filter_map(|request| self.search_of(request, client))
            .collect()
    }

    fn document_of(&self, url: &str) -> Option<usize> {
        self.documents.get(url).copied()
    }
}
