//! The webhook target check, `webhook_target::check_url` (with
//! `net::is_public` behind it).
//!
//! Input: one byte of policy (plain http allowed? private addresses
//! allowed?), then the URL a user registers. Invariants: an accepted URL is
//! https (or http when allowed), carries no user or password, has a host,
//! and with private targets refused never names an IP literal that is not
//! public, by a list written here apart from `is_public`; an accepted URL
//! stays accepted when checked again, as every delivery does.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};

use libfuzzer_sys::fuzz_target;
use quarry_guard::net::is_public;
use quarry_guard::webhook_target::{Policy, check_url};
use url::Host;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    // Any 16 bytes are also an address: is_public agrees with itself on
    // IPv4 and on the same address mapped into IPv6, and with the list
    // below.
    if let Ok(bytes) = <[u8; 16]>::try_from(&rest[..rest.len().min(16)]) {
        let v6 = std::net::Ipv6Addr::from(bytes);
        let v4 = Ipv4Addr::new(bytes[12], bytes[13], bytes[14], bytes[15]);
        assert_eq!(
            is_public(IpAddr::V4(v4)),
            is_public(IpAddr::V6(v4.to_ipv6_mapped())),
            "{v4}"
        );
        for ip in [IpAddr::V4(v4), IpAddr::V6(v6)] {
            assert!(
                !(is_public(ip) && obviously_not_public(ip)),
                "{ip} is public"
            );
        }
    }
    let Ok(raw) = std::str::from_utf8(rest) else {
        return;
    };
    let policy = Policy {
        allow_plain_http: flags & 1 != 0,
        allow_private: flags & 2 != 0,
    };
    let Ok(url) = check_url(raw, policy) else {
        return;
    };
    assert!(
        url.scheme() == "https" || (policy.allow_plain_http && url.scheme() == "http"),
        "{raw:?}"
    );
    assert!(
        url.username().is_empty() && url.password().is_none(),
        "{raw:?}"
    );
    let host = url.host().expect("an accepted URL has a host");
    if !policy.allow_private {
        let ip = match host {
            Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
            Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
            Host::Domain(_) => None,
        };
        if let Some(ip) = ip {
            assert!(!obviously_not_public(ip), "{raw:?} -> {ip} accepted");
        }
    }
    let again = check_url(url.as_str(), policy)
        .unwrap_or_else(|e| panic!("{raw:?} -> {:?} refused at delivery: {e}", url.as_str()));
    assert_eq!(again, url);
});

/// Addresses that are certainly not public, from the standard library's
/// predicates and the special ranges, written apart from `is_public`.
fn obviously_not_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return obviously_not_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}
