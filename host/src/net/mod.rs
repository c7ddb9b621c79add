//! Every HTTP client the host sends with is built here, by [`client`], from
//! what it is for ([`Purpose`]): one place owns the guarded resolver
//! ([`resolver`]), the TLS roots, HTTP/1.1, redirects, proxies, timeouts
//! and the user agent. What differs between purposes is said once, in
//! [`client`]'s table.

mod resolver;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

pub use self::resolver::{AddressDenied, GuardedResolver};

/// What an outbound client is for.
pub enum Purpose<'a> {
    /// Connectors' fetches and the host's own calls to vendors (token
    /// exchange, refresh, revocation): public addresses only, except the
    /// names the operator pinned (`[upstream] host_overrides`).
    Vendors {
        host_overrides: &'a BTreeMap<String, SocketAddr>,
        extra_roots: &'a [Vec<u8>],
    },
    /// OAuth clients' metadata documents, fetched for a stranger: public
    /// addresses only (unless `allow_private`, the demo's), each fetch
    /// within `timeout`.
    ClientDocuments {
        allow_private: bool,
        extra_roots: &'a [Vec<u8>],
        timeout: Duration,
    },
    /// Webhook deliveries to the URLs users registered.
    Webhooks {
        allow_private: bool,
        allow_plain_http: bool,
        timeout: Duration,
    },
    /// The operator's embeddings endpoint: the address the operator named
    /// (often on their own network), plain HTTP allowed, their proxy used.
    Embeddings { timeout: Duration },
}

/// An HTTP client for `purpose`.
///
/// Every client speaks HTTP/1.1 in every build (the tests' builds compile
/// reqwest with HTTP/2, through tools/workspace-hack, the production one
/// without; the protocol the host speaks must not depend on it), uses
/// rustls, and never follows a redirect by itself: a connector's redirects
/// are admitted hop by hop by the runtime's policy, and any other redirect
/// would send a request (a signed event, a token) somewhere nobody checked.
pub fn client(purpose: Purpose<'_>) -> Result<reqwest::Client> {
    let builder = reqwest::Client::builder()
        .http1_only()
        .use_rustls_tls()
        .redirect(reqwest::redirect::Policy::none());
    let (builder, what) = match purpose {
        Purpose::Vendors {
            host_overrides,
            extra_roots,
        } => {
            let resolver = GuardedResolver::public_only(host_overrides.clone());
            let builder = guarded(builder, resolver)
                .https_only(true)
                .connect_timeout(Duration::from_secs(5))
                .pool_idle_timeout(Duration::from_secs(30));
            (with_roots(builder, extra_roots)?, "the vendors'")
        }
        Purpose::ClientDocuments {
            allow_private,
            extra_roots,
            timeout,
        } => {
            let resolver = GuardedResolver::allowing_private(allow_private);
            let builder = guarded(builder, resolver)
                .https_only(true)
                .timeout(timeout)
                .connect_timeout(timeout);
            (
                with_roots(builder, extra_roots)?,
                "the client metadata documents'",
            )
        }
        Purpose::Webhooks {
            allow_private,
            allow_plain_http,
            timeout,
        } => {
            let resolver = GuardedResolver::allowing_private(allow_private);
            let builder = guarded(builder, resolver)
                .https_only(!allow_plain_http)
                .timeout(timeout)
                .connect_timeout(timeout.min(Duration::from_secs(5)))
                .pool_idle_timeout(Duration::from_secs(30))
                .user_agent(concat!("quarry-webhooks/", env!("CARGO_PKG_VERSION")));
            (builder, "the webhooks'")
        }
        Purpose::Embeddings { timeout } => {
            let builder = builder.timeout(timeout).connect_timeout(timeout);
            (builder, "the embeddings endpoint's")
        }
    };
    builder
        .build()
        .with_context(|| format!("building {what} HTTP client"))
}

/// Names resolved by `resolver` at connect time, and no proxy (a proxy
/// would resolve the name itself, past the resolver).
fn guarded(builder: reqwest::ClientBuilder, resolver: GuardedResolver) -> reqwest::ClientBuilder {
    builder
        .no_proxy()
        .dns_resolver(Arc::new(resolver))
        .user_agent(concat!("quarry/", env!("CARGO_PKG_VERSION")))
}

/// The operator's extra roots (`[upstream] extra_root_certs`, PEM) beside
/// the usual ones.
fn with_roots(
    mut builder: reqwest::ClientBuilder,
    extra_roots: &[Vec<u8>],
) -> Result<reqwest::ClientBuilder> {
    for pem in extra_roots {
        for cert in reqwest::Certificate::from_pem_bundle(pem)
            .context("extra root certificate is not PEM")?
        {
            builder = builder.add_root_certificate(cert);
        }
    }
    Ok(builder)
}
