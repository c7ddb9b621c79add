//! The one guarded resolver: how the host's own HTTP clients (connectors'
//! fetches and the host's calls to vendors, webhook deliveries) turn names
//! into addresses. It refuses every address that is not public, and it runs
//! at connect time on the addresses actually used, so a DNS answer that
//! changes between a check and a connection (rebinding) cannot slip a
//! private address through. The operator's overrides (the demo's fake
//! vendors on loopback) and an explicit `allow_private` are the exceptions.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

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
