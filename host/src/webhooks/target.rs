//! Where deliveries may go: the URL's form, scheme and IP literal are
//! checked by `quarry_guard::webhook_target` (pure, fuzzed; its module doc
//! says why: SSRF); this adds the part with I/O, resolving the target's
//! name at registration. At every delivery, `net.rs`'s guarded resolver
//! checks the addresses actually used (DNS rebinding).

use std::net::SocketAddr;
use std::time::Duration;

use quarry_guard::net::is_public;
use url::{Host, Url};

pub use quarry_guard::webhook_target::{Policy, check_url};

/// Time a registration may spend resolving the target's name.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// [`check_url`], then, unless private targets are allowed, resolves the
/// host name and refuses it if any address is not public (or if it does not
/// resolve: a name that cannot be checked cannot be accepted).
pub async fn check_registration(raw: &str, policy: Policy) -> Result<Url, String> {
    let url = check_url(raw, policy)?;
    if policy.allow_private {
        return Ok(url);
    }
    let Some(Host::Domain(name)) = url.host() else {
        return Ok(url);
    };
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name, port)));
    let addrs: Vec<SocketAddr> = match lookup.await {
        Ok(Ok(addrs)) => addrs.collect(),
        _ => Vec::new(),
    };
    if addrs.is_empty() {
        return Err(format!("url's host {name} does not resolve"));
    }
    if let Some(private) = addrs.iter().find(|a| !is_public(a.ip())) {
        return Err(format!(
            "url's host {name} resolves to {}, which is not a public address; webhooks go to public hosts only",
            private.ip()
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::GuardedResolver;
    use reqwest::dns::Resolve;

    #[tokio::test]
    async fn names_are_resolved_at_registration_unless_private_targets_are_allowed() {
        let error = check_registration("https://localhost/hook", Policy::STRICT)
            .await
            .unwrap_err();
        assert!(error.contains("not a public address"), "{error}");
        assert!(
            check_registration("https://localhost/hook", Policy::LAX)
                .await
                .is_ok()
        );
        let error = check_registration("https://no-such-host.invalid/hook", Policy::STRICT)
            .await
            .unwrap_err();
        assert!(error.contains("does not resolve"), "{error}");
    }

    #[tokio::test]
    async fn the_resolver_refuses_private_addresses_at_delivery() {
        let strict = GuardedResolver::allowing_private(false);
        let error = strict
            .resolve("localhost".parse().unwrap())
            .await
            .err()
            .expect("loopback is refused");
        assert!(error.to_string().contains("non-public"), "{error}");
        let lax = GuardedResolver::allowing_private(true);
        let addrs: Vec<SocketAddr> = lax
            .resolve("localhost".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }
}
