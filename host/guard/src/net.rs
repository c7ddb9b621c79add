//! Which IP addresses are public. The host's guarded resolver (`net.rs`)
//! refuses every other address at connect time; the webhook target check
//! ([`crate::webhook_target`]) refuses IP literals that are not public.

use std::net::IpAddr;

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
