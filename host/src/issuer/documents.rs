//! Client ID Metadata Documents: a client whose `client_id` is an https
//! URL publishes its metadata there. Fetching it is a request this server
//! makes to an address a stranger chose, so it goes through the guarded
//! resolver (public addresses only, checked at connection time, so DNS
//! rebinding cannot slip a private one through; no operator overrides),
//! over https only, with no redirects and no proxy, with a time and a size
//! cap; and what was fetched is kept for a while so that a client's
//! sign-ins cost one fetch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use futures::StreamExt;

use super::clients::{Client, ClientMetadata};
use crate::net::{self, Purpose};
use crate::webhooks::target::{Policy, check_url};

/// Largest document accepted.
const MAX_DOCUMENT_BYTES: usize = 8 * 1024;
/// Time one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a document is kept without its `Cache-Control` saying
/// otherwise, and the bounds on what it may say.
const DEFAULT_KEEP: Duration = Duration::from_secs(3600);
const LEAST_KEEP: Duration = Duration::from_secs(60);
const MOST_KEEP: Duration = Duration::from_secs(24 * 3600);
/// Documents kept at most (the oldest go first).
const MAX_KEPT: usize = 1000;

pub struct Documents {
    http: reqwest::Client,
    allow_private: bool,
    kept: Mutex<HashMap<String, (Arc<Client>, Instant)>>,
}

/// Why a client's document could not be used, for the person at the
/// consent page (never a redirect: the redirect URIs are unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentProblem(pub String);

impl Documents {
    /// `allow_private`: private and loopback addresses too (the demo's);
    /// `extra_roots`: PEM certificates trusted beside the usual roots (the
    /// operator's `[upstream] extra_root_certs`).
    pub fn new(allow_private: bool, extra_roots: &[Vec<u8>]) -> Result<Documents> {
        let http = net::client(Purpose::ClientDocuments {
            allow_private,
            extra_roots,
            timeout: FETCH_TIMEOUT,
        })?;
        Ok(Documents {
            http,
            allow_private,
            kept: Mutex::default(),
        })
    }

    /// Whether `client_id` names a metadata document (an https URL) rather
    /// than a registered client.
    pub fn is_document_id(client_id: &str) -> bool {
        client_id.starts_with("https://")
    }

    /// The client `url` describes: kept, or fetched now.
    pub async fn client(&self, url: &str) -> Result<Arc<Client>, DocumentProblem> {
        if let Some(client) = self.kept(url) {
            return Ok(client);
        }
        let (client, keep) = self.fetch(url).await?;
        let client = Arc::new(client);
        self.keep(url, client.clone(), keep);
        Ok(client)
    }

    /// Whether `url`'s document is kept (so that using it costs no fetch).
    pub fn kept(&self, url: &str) -> Option<Arc<Client>> {
        let kept = self.kept.lock().expect("kept documents");
        kept.get(url)
            .filter(|(_, until)| Instant::now() < *until)
            .map(|(client, _)| client.clone())
    }

    fn keep(&self, url: &str, client: Arc<Client>, keep: Duration) {
        let mut kept = self.kept.lock().expect("kept documents");
        let now = Instant::now();
        kept.retain(|_, (_, until)| now < *until);
        if kept.len() >= MAX_KEPT
            && let Some(oldest) = kept
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(url, _)| url.clone())
        {
            kept.remove(&oldest);
        }
        kept.insert(url.to_string(), (client, now + keep));
    }

    async fn fetch(&self, raw: &str) -> Result<(Client, Duration), DocumentProblem> {
        let problem = |what: String| {
            DocumentProblem(format!("the client's metadata document at {raw}: {what}"))
        };
        let policy = Policy {
            allow_plain_http: false,
            allow_private: self.allow_private,
        };
        let url = check_url(raw, policy).map_err(|e| problem(e.replace("url ", "its address ")))?;
        if url.path() == "/" || url.fragment().is_some() {
            return Err(problem(
                "a client id URL must have a path and no fragment".into(),
            ));
        }
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| problem(format!("could not be fetched ({})", fetch_error(e))))?;
        if response.status().is_redirection() {
            return Err(problem(
                "redirects elsewhere, and redirects are not followed".into(),
            ));
        }
        if !response.status().is_success() {
            return Err(problem(format!("answered {}", response.status())));
        }
        let keep = max_age(response.headers())
            .unwrap_or(DEFAULT_KEEP)
            .clamp(LEAST_KEEP, MOST_KEEP);
        let body = read_capped(response).await.map_err(problem)?;
        let metadata: ClientMetadata = serde_json::from_slice(&body)
            .map_err(|e| problem(format!("is not a JSON object of client metadata ({e})")))?;
        if metadata.client_id.as_deref() != Some(raw) {
            return Err(problem(
                "its client_id is not the URL it was fetched from".into(),
            ));
        }
        let fallback = url::Url::parse(raw)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| raw.to_string());
        let client = metadata
            .into_client(raw.to_string(), &fallback)
            .map_err(|e| problem(e.to_string()))?;
        Ok((client, keep))
    }
}

/// The body, refused past [`MAX_DOCUMENT_BYTES`] without reading further.
async fn read_capped(response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("could not be read ({})", fetch_error(e)))?;
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("is larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn fetch_error(error: reqwest::Error) -> String {
    if let Some(denied) = net::AddressDenied::in_chain(&error) {
        return format!("{} is not a public address", denied.0);
    }
    if error.is_timeout() {
        return format!("no answer within {} s", FETCH_TIMEOUT.as_secs());
    }
    error.without_url().to_string()
}

/// `Cache-Control: max-age=N`, if the response says it.
fn max_age(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::CACHE_CONTROL)?.to_str().ok()?;
    value.split(',').find_map(|directive| {
        let seconds = directive.trim().strip_prefix("max-age=")?;
        seconds.parse().ok().map(Duration::from_secs)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_age_is_read_from_cache_control() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::CACHE_CONTROL,
            "public, max-age=600".parse().unwrap(),
        );
        assert_eq!(max_age(&headers), Some(Duration::from_secs(600)));
        headers.insert(reqwest::header::CACHE_CONTROL, "no-cache".parse().unwrap());
        assert_eq!(max_age(&headers), None);
    }

    #[test]
    fn client_ids_that_are_urls_name_documents() {
        assert!(Documents::is_document_id(
            "https://claude.ai/oauth/client.json"
        ));
        assert!(!Documents::is_document_id("mcp_abc"));
        assert!(!Documents::is_document_id(
            "http://claude.ai/oauth/client.json"
        ));
    }
}
