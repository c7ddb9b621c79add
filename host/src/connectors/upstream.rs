//! Sending requests the sandbox admitted upstream: address checks after
//! DNS, credential injection, the response size cap. (The policy, the
//! fetch cap, the time per fetch and redirects are the sandbox's:
//! `quarry_sandbox::fetch`.)

use std::collections::BTreeMap;
use std::net::SocketAddr;

use crate::net::{self, AddressDenied, Purpose};
use anyhow::Result;

use super::manifest::Method;
use super::policy::{Admitted, shown_url};
use quarry_sandbox::fetch::{Fetch, Fetching};
pub use quarry_sandbox::fetch::{FetchBudget, FetchError, GuestResponse};

/// How the host reaches upstreams.
#[derive(Debug, Clone, Default)]
pub struct NetworkConfig {
    /// Host names the operator maps to fixed addresses, loopback included.
    /// This is how tests and the demo reach fake upstreams while connectors
    /// keep their real URLs: TLS still checks the real host name.
    pub host_overrides: BTreeMap<String, SocketAddr>,
    /// Extra PEM root certificates to trust (the fake upstreams' CA).
    pub extra_root_certs: Vec<Vec<u8>>,
}

/// The shared HTTP client every connector call goes through.
#[derive(Clone)]
pub struct Upstream {
    client: reqwest::Client,
}

impl Upstream {
    pub fn new(config: &NetworkConfig) -> Result<Upstream> {
        let client = net::client(Purpose::Vendors {
            host_overrides: &config.host_overrides,
            extra_roots: &config.extra_root_certs,
        })?;
        Ok(Upstream { client })
    }

    /// The client itself (https only, guarded DNS, no redirects), for the
    /// host's own calls to vendors such as token revocation.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends one admitted request, with the user's credential where the
    /// manifest puts it, and reads its answer within the call's size cap.
    /// Redirects are not followed here: the sandbox admits each hop. Only
    /// through the sandbox (the [`Fetch`] impl below), which applies the
    /// fetch cap and the time per fetch.
    async fn send(
        &self,
        call: &FetchBudget,
        request: &Admitted,
    ) -> Result<GuestResponse, FetchError> {
        let method = match request.method() {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
            Method::Post => reqwest::Method::POST,
        };
        let mut builder = self.client.request(method, request.url().clone());
        for (name, value) in request.headers() {
            builder = builder.header(name, value);
        }
        if let Some((name, value)) = super::credential::credential_header(
            &call.manifest,
            request.url(),
            call.credential.as_ref(),
        ) {
            builder = builder.header(name, value);
        }
        if let Some(body) = request.body() {
            builder = builder.body(body.to_vec());
        }
        tracing::debug!(connector = %call.manifest.id, method = request.method().as_str(), url = %shown_url(request.url()), "fetch");
        log_what_was_sent(&call.manifest.id, request);
        let response = builder.send().await.map_err(network_error)?;
        if let Some(redirect) = redirect_without_body(&response)? {
            return Ok(redirect);
        }
        read_capped(response, call.limits.max_response_bytes).await
    }
}

/// A redirect, as the sandbox needs it to admit the next hop: its status
/// and `Location`, without reading its body (which nobody reads). A
/// `Location` that is not text is refused here, where its bytes are seen.
fn redirect_without_body(
    response: &reqwest::Response,
) -> Result<Option<GuestResponse>, FetchError> {
    let status = response.status().as_u16();
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let Some(location) = response.headers().get(reqwest::header::LOCATION) else {
        return Ok(None);
    };
    let location = location
        .to_str()
        .map_err(|_| FetchError::Denied("redirect Location is not text".into()))?;
    Ok(Some(GuestResponse {
        status,
        headers: vec![("location".to_string(), location.to_string())],
        body: Vec::new(),
    }))
}

/// What a connector asked its vendor for, the user's words included (the
/// query string, the body's first 2 KiB): at trace level on a target of its
/// own, `RUST_LOG=quarry::connectors::sent=trace`, for an operator who
/// needs to see how a question was planned. Never at info.
fn log_what_was_sent(connector: &str, request: &Admitted) {
    const SHOWN: usize = 2048;
    if !tracing::enabled!(target: "quarry::connectors::sent", tracing::Level::TRACE) {
        return;
    }
    let body = request.body().map(|body| {
        let cut = &body[..body.len().min(SHOWN)];
        String::from_utf8_lossy(cut).into_owned()
    });
    tracing::trace!(
        target: "quarry::connectors::sent",
        %connector,
        method = request.method().as_str(),
        url = %request.url(),
        body = body.as_deref().unwrap_or(""),
        "sent"
    );
}

/// The sandbox's one way out: the trait's method calls the inherent one
/// above (`Upstream::send` names the inherent method, which a path prefers
/// to the trait's).
impl Fetch for Upstream {
    fn send<'a>(
        &'a self,
        budget: &'a FetchBudget,
        request: &'a Admitted,
    ) -> Fetching<'a, Result<GuestResponse, FetchError>> {
        Box::pin(Upstream::send(self, budget, request))
    }
}

async fn read_capped(
    mut response: reqwest::Response,
    cap: u64,
) -> Result<GuestResponse, FetchError> {
    let too_large = || FetchError::LimitExceeded(format!("response is larger than {cap} bytes"));
    if response.content_length().is_some_and(|len| len > cap) {
        return Err(too_large());
    }
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter(|(name, _)| *name != reqwest::header::SET_COOKIE)
        .filter_map(|(name, value)| {
            Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
        })
        .collect();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network_error)? {
        if body.len() as u64 + chunk.len() as u64 > cap {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(GuestResponse {
        status,
        headers,
        body,
    })
}

/// A failed fetch as the connector (and the log) sees it: without the
/// URL, whose query holds the user's search terms.
fn network_error(error: reqwest::Error) -> FetchError {
    if let Some(denied) = AddressDenied::in_chain(&error) {
        return FetchError::Denied(denied.to_string());
    }
    if error.is_timeout() {
        return FetchError::Timeout;
    }
    FetchError::Network(error_chain(&error.without_url()))
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_failed_fetch_does_not_carry_the_search_terms() {
        // Nothing listens on port 1: the connection is refused at once.
        let failed = reqwest::Client::new()
            .get("http://127.0.0.1:1/search?q=acquisition+of+globex")
            .send()
            .await
            .unwrap_err();
        let FetchError::Network(text) = network_error(failed) else {
            panic!("a network error")
        };
        assert!(!text.contains("globex"), "{text}");
        assert!(!text.is_empty());
    }
}
