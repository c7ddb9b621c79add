//! Whom a request without an account is charged to: its client's address.
//! An IPv6 host is usually given a whole /64 (2^64 addresses), so IPv6
//! clients are keyed by their /64: one host cannot multiply its allowance
//! by changing addresses. An IPv4 address mapped into IPv6 is the IPv4
//! address.

use std::net::{IpAddr, Ipv6Addr};

/// The subject of requests from `ip` (`addr:192.0.2.7`,
/// `addr:2001:db8:1:2::/64`).
pub fn subject(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => format!("addr:{v4}"),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("addr:{v4}"),
            None => {
                let network = u128::from(v6) & !((1u128 << 64) - 1);
                format!("addr:{}/64", Ipv6Addr::from(network))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_keyed_by_their_64_and_ipv4_by_the_address() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(subject(a), "addr:2001:db8:1:2::/64");
        assert_eq!(subject(a), subject(b));
        assert_ne!(subject(a), subject(other));
        assert_eq!(subject("192.0.2.7".parse().unwrap()), "addr:192.0.2.7");
        assert_eq!(
            subject("::ffff:192.0.2.7".parse().unwrap()),
            "addr:192.0.2.7"
        );
        assert_eq!(subject("::1".parse().unwrap()), "addr:::/64");
    }
}
