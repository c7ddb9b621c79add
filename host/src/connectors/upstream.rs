//! Sending admitted requests upstream: address checks after DNS, redirects
//! re-checked hop by hop, credential injection, and the per-call caps
//! (fetch count, response size, time per fetch).

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::manifest::{Manifest, Method, SandboxLimits};
use super::policy::{self, Admitted, Denied, GuestRequest, shown_url};
use crate::secret::Secret;

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

/// A response returned to the guest.
#[derive(Debug, Clone)]
pub struct GuestResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    Denied(String),
    LimitExceeded(String),
    Timeout,
    Network(String),
}

impl From<Denied> for FetchError {
    fn from(d: Denied) -> Self {
        FetchError::Denied(d.0)
    }
}

/// The shared HTTP client every connector call goes through.
#[derive(Clone)]
pub struct Upstream {
    client: reqwest::Client,
}

impl Upstream {
    pub fn new(config: &NetworkConfig) -> Result<Upstream> {
        let resolver = GuardedResolver {
            overrides: Arc::new(config.host_overrides.clone()),
        };
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .https_only(true)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(resolver))
            .connect_timeout(Duration::from_secs(5))
            .pool_idle_timeout(Duration::from_secs(30))
            .user_agent(concat!("quarry/", env!("CARGO_PKG_VERSION")));
        for pem in &config.extra_root_certs {
            for cert in reqwest::Certificate::from_pem_bundle(pem)
                .context("extra root certificate is not PEM")?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        Ok(Upstream {
            client: builder
                .build()
                .context("building the upstream HTTP client")?,
        })
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
        if let Some((name, value)) =
            policy::credential_header(&call.manifest, &request.url, call.credential.as_ref())
        {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        tracing::debug!(connector = %call.manifest.id, method = request.method.as_str(), url = %shown_url(&request.url), "fetch");
        builder.send().await.map_err(network_error)
    }
}

/// What one connector call may still do.
pub struct FetchBudget {
    pub manifest: Arc<Manifest>,
    pub limits: SandboxLimits,
    pub credential: Option<Secret>,
    pub used: u32,
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

fn network_error(error: reqwest::Error) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(e) = source {
        if let Some(denied) = e.downcast_ref::<AddressDenied>() {
            return FetchError::Denied(denied.to_string());
        }
        source = e.source();
    }
    if error.is_timeout() {
        return FetchError::Timeout;
    }
    FetchError::Network(error_chain(&error))
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

/// Resolves host names for the upstream client and refuses any address that
/// is not public. Because the check runs at connect time, on the addresses
/// actually used, a DNS answer that changes between checks (rebinding)
/// cannot slip a private address through.
struct GuardedResolver {
    overrides: Arc<BTreeMap<String, SocketAddr>>,
}

#[derive(Debug)]
struct AddressDenied(String);

impl std::fmt::Display for AddressDenied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} resolves only to non-public addresses; refused",
            self.0
        )
    }
}

impl std::error::Error for AddressDenied {}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_ascii_lowercase();
        if let Some(addr) = self.overrides.get(&host) {
            let addrs: Addrs = Box::new(std::iter::once(*addr));
            return Box::pin(async move { Ok(addrs) });
        }
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 443))
                .await?
                .collect();
            let public: Vec<SocketAddr> = found.into_iter().filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                return Err(
                    Box::new(AddressDenied(host)) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// Whether an address is on the public internet (not loopback, private,
/// link-local, shared, documentation, multicast or otherwise special).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (seg[0] & 0xfe00) == 0xfc00
                || (seg[0] & 0xffc0) == 0xfe80
                || (seg[0] & 0xffc0) == 0xfec0
                || (seg[0] == 0x2001 && seg[1] == 0x0db8)
                || (seg[0] == 0x64 && seg[1] == 0xff9b)
                || (seg[0] == 0x2002)
                || seg[..6] == [0, 0, 0, 0, 0, 0])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn names_resolving_to_private_addresses_are_refused_unless_mapped() {
        let mapped: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let resolver = GuardedResolver {
            overrides: Arc::new([("fake.example.com".to_string(), mapped)].into()),
        };
        let error = resolver
            .resolve("localhost".parse().unwrap())
            .await
            .err()
            .expect("loopback is refused");
        assert!(error.to_string().contains("non-public"), "{error}");
        let addrs: Vec<SocketAddr> = resolver
            .resolve("fake.example.com".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert_eq!(addrs, [mapped]);
    }

    #[test]
    fn only_public_addresses_pass() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
        ] {
            assert!(
                !is_public(private.parse().unwrap()),
                "{private} should not be public"
            );
        }
        for public in ["140.82.112.6", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(
                is_public(public.parse().unwrap()),
                "{public} should be public"
            );
        }
    }
}
