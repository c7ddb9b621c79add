//! Sending admitted requests upstream: address checks after DNS, redirects
//! re-checked hop by hop, credential injection, and the per-call caps
//! (fetch count, response size, time per fetch).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use crate::net::{self, AddressDenied, Purpose};
use anyhow::Result;

use super::manifest::Method;
use super::policy::{self, Admitted, GuestRequest, shown_url};
use quarry_sandbox::fetch::{Fetch, Fetching};
pub use quarry_sandbox::fetch::{FetchBudget, FetchError, GuestResponse};

const MAX_REDIRECTS: usize = 5;

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

    /// Sends one guest request under the connector's policy and caps,
    /// following redirects (each hop admitted anew).
    pub async fn fetch(
        &self,
        call: &mut FetchBudget,
        request: GuestRequest,
    ) -> Result<GuestResponse, FetchError> {
        if call.used >= call.limits.max_fetches {
            return Err(FetchError::LimitExceeded(format!(
                "this search already made {} fetches, the most allowed",
                call.limits.max_fetches
            )));
        }
        // Only requests that may leave count: a refused one costs the
        // upstream nothing, and the call's deadline bounds a guest that
        // keeps asking.
        let admitted = policy::admit(&call.manifest, request)?;
        call.used += 1;
        let deadline = call.limits.fetch_timeout();
        match tokio::time::timeout(deadline, self.follow(call, admitted)).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout),
        }
    }

    /// Sends a batch of independent guest requests concurrently, each under
    /// exactly what [`Upstream::fetch`] applies, and returns one result per
    /// request in the order given.
    ///
    /// Requests the policy refuses are answered `Denied` on their own and
    /// cost nothing, as with a single fetch. The admitted ones are counted
    /// against the call's fetch cap before any of them leaves: if they do
    /// not all fit in what remains, none is sent and each is answered
    /// `LimitExceeded` (the batch is refused whole, never cut). At most the
    /// call's `max_concurrent_fetches` (at least one) are outstanding at once.
    pub async fn fetch_many(
        &self,
        call: &mut FetchBudget,
        requests: Vec<GuestRequest>,
    ) -> Vec<Result<GuestResponse, FetchError>> {
        use futures::StreamExt;

        let admitted: Vec<Result<Admitted, FetchError>> = requests
            .into_iter()
            .map(|request| policy::admit(&call.manifest, request).map_err(FetchError::from))
            .collect();
        let wanted = admitted.iter().filter(|a| a.is_ok()).count() as u64;
        let remaining = u64::from(call.limits.max_fetches.saturating_sub(call.used));
        if wanted > remaining {
            let why = format!(
                "this batch needs {wanted} fetches and the search has {remaining} left of {}; none was sent",
                call.limits.max_fetches
            );
            return admitted
                .into_iter()
                .map(|a| match a {
                    Ok(_) => Err(FetchError::LimitExceeded(why.clone())),
                    Err(e) => Err(e),
                })
                .collect();
        }
        call.used += wanted as u32;
        let call: &FetchBudget = call;
        let deadline = call.limits.fetch_timeout();
        let in_flight = call.limits.max_concurrent_fetches.max(1) as usize;
        futures::stream::iter(admitted)
            .map(|admitted| async move {
                let admitted = admitted?;
                match tokio::time::timeout(deadline, self.follow(call, admitted)).await {
                    Ok(result) => result,
                    Err(_) => Err(FetchError::Timeout),
                }
            })
            .buffered(in_flight)
            .collect()
            .await
    }

    async fn follow(
        &self,
        call: &FetchBudget,
        mut request: Admitted,
    ) -> Result<GuestResponse, FetchError> {
        for _ in 0..=MAX_REDIRECTS {
            let response = self.send(call, &request).await?;
            let Some(next) = redirect_target(&request, &response)? else {
                return read_capped(response, call.limits.max_response_bytes).await;
            };
            tracing::debug!(connector = %call.manifest.id, "following a redirect");
            request = policy::admit(&call.manifest, next)
                .map_err(|d| FetchError::Denied(format!("redirect refused: {d}")))?;
        }
        Err(FetchError::Denied(format!(
            "more than {MAX_REDIRECTS} redirects"
        )))
    }

    async fn send(
        &self,
        call: &FetchBudget,
        request: &Admitted,
    ) -> Result<reqwest::Response, FetchError> {
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
            Method::Post => reqwest::Method::POST,
        };
        let mut builder = self.client.request(method, request.url.clone());
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some((name, value)) = super::credential::credential_header(
            &call.manifest,
            &request.url,
            call.credential.as_ref(),
        ) {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        tracing::debug!(connector = %call.manifest.id, method = request.method.as_str(), url = %shown_url(&request.url), "fetch");
        log_what_was_sent(&call.manifest.id, request);
        builder.send().await.map_err(network_error)
    }
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
    let body = request.body.as_deref().map(|body| {
        let cut = &body[..body.len().min(SHOWN)];
        String::from_utf8_lossy(cut).into_owned()
    });
    tracing::trace!(
        target: "quarry::connectors::sent",
        %connector,
        method = request.method.as_str(),
        url = %request.url,
        body = body.as_deref().unwrap_or(""),
        "sent"
    );
}

/// The sandbox's one way out: the trait's methods call the inherent ones
/// above (`Upstream::fetch` names the inherent method, which a path
/// prefers to the trait's), where the policy, the caps and the credential
/// are applied.
impl Fetch for Upstream {
    fn fetch<'a>(
        &'a self,
        budget: &'a mut FetchBudget,
        request: GuestRequest,
    ) -> Fetching<'a, Result<GuestResponse, FetchError>> {
        Box::pin(Upstream::fetch(self, budget, request))
    }

    fn fetch_many<'a>(
        &'a self,
        budget: &'a mut FetchBudget,
        requests: Vec<GuestRequest>,
    ) -> Fetching<'a, Vec<Result<GuestResponse, FetchError>>> {
        Box::pin(Upstream::fetch_many(self, budget, requests))
    }
}

fn redirect_target(
    request: &Admitted,
    response: &reqwest::Response,
) -> Result<Option<GuestRequest>, FetchError> {
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
    let next = request
        .url
        .join(location)
        .map_err(|e| FetchError::Denied(format!("redirect Location does not parse: {e}")))?;
    // 307/308 repeat the request as it was; the others become a GET.
    let keep_method = matches!(status, 307 | 308);
    Ok(Some(GuestRequest {
        method: if keep_method {
            request.method
        } else {
            Method::Get
        },
        url: next.to_string(),
        headers: request.headers.clone(),
        body: if keep_method {
            request.body.clone()
        } else {
            None
        },
    }))
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
