//! The guarded resolver: how the host's own HTTP clients (connectors'
//! fetches and the host's calls to vendors, client metadata documents,
//! webhook deliveries) turn names into addresses. It refuses every address that is not public, and it runs
//! at connect time on the addresses actually used, so a DNS answer that
//! changes between a check and a connection (rebinding) cannot slip a
//! private address through. The operator's overrides (the demo's fake
//! vendors on loopback) and an explicit `allow_private` are the exceptions.
//! Which addresses are public is `quarry_guard::net::is_public` (pure, and
//! fuzzed with the webhooks' target check).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use quarry_guard::net::is_public;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

pub struct GuardedResolver {
    /// Names the operator pinned to an address (checked by nothing else).
    overrides: Arc<BTreeMap<String, SocketAddr>>,
    /// Lets non-public addresses through (webhooks' `allow_private_targets`).
    allow_private: bool,
}

impl GuardedResolver {
    /// Public addresses only, except the operator's pinned names.
    pub fn public_only(overrides: BTreeMap<String, SocketAddr>) -> GuardedResolver {
        GuardedResolver {
            overrides: Arc::new(overrides),
            allow_private: false,
        }
    }

    /// Public addresses only unless `allow_private`.
    pub fn allowing_private(allow_private: bool) -> GuardedResolver {
        GuardedResolver {
            overrides: Arc::default(),
            allow_private,
        }
    }
}

/// A name that resolved only to addresses the resolver refuses.
#[derive(Debug)]
pub struct AddressDenied(pub String);

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

impl AddressDenied {
    /// The refusal in an error's chain, if that is why it failed.
    pub fn in_chain<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a AddressDenied> {
        let mut source = Some(error);
        while let Some(e) = source {
            if let Some(denied) = e.downcast_ref::<AddressDenied>() {
                return Some(denied);
            }
            source = e.source();
        }
        None
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_ascii_lowercase();
        if let Some(addr) = self.overrides.get(&host) {
            let addrs: Addrs = Box::new(std::iter::once(*addr));
            return Box::pin(async move { Ok(addrs) });
        }
        let allow_private = self.allow_private;
        Box::pin(async move {
            // The port is replaced by the URL's when connecting.
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allow_private || is_public(a.ip()))
                .collect();
            if found.is_empty() {
                return Err(
                    Box::new(AddressDenied(host)) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn names_resolving_to_private_addresses_are_refused_unless_mapped() {
        let mapped: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let resolver =
            GuardedResolver::public_only([("fake.example.com".to_string(), mapped)].into());
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
}
