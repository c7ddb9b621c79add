//! Where the server is reached: its public origin, the one `Host` the MCP
//! endpoint answers and the one `Origin` a browser-based client may send
//! (DNS rebinding and cross-site requests refused). The MCP resource
//! (`<origin>/mcp`) and the authorization server's issuer (the origin)
//! are named from it.

use std::net::SocketAddr;

use axum::http::{HeaderMap, Uri, header};

/// The public origin (`https://quarry.example.com`), without a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicOrigin {
    /// `scheme://authority`, as clients reach the server.
    origin: String,
    /// The authorities a request's `Host` may name (lower case).
    hosts: Vec<String>,
}

impl PublicOrigin {
    /// The configured public URL (`[dashboard] public_url`), else the
    /// address the server listens on: the dashboard's rule for the
    /// origin its forms must come from. On an unspecified address
    /// (`0.0.0.0`), the loopback names with the port: set `public_url`
    /// to be reached by name.
    pub fn new(public_url: Option<&str>, listening: SocketAddr, https: bool) -> PublicOrigin {
        if let Some(url) = public_url.and_then(|u| url::Url::parse(u).ok())
            && let Some(host) = url.host_str()
        {
            let authority = match url.port() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_string(),
            };
            let origin = format!("{}://{authority}", url.scheme()).to_lowercase();
            let mut hosts = vec![authority.to_lowercase()];
            if let Some(port) = url.port_or_known_default() {
                hosts.push(format!("{host}:{port}").to_lowercase());
            }
            return PublicOrigin { origin, hosts };
        }
        let scheme = if https { "https" } else { "http" };
        let port = listening.port();
        let hosts = if listening.ip().is_unspecified() {
            ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .map(|h| format!("{h}:{port}"))
                .collect()
        } else {
            vec![listening.to_string()]
        };
        PublicOrigin {
            origin: format!("{scheme}://{}", hosts[0]),
            hosts,
        }
    }

    /// `https://host[:port]`.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The MCP resource's identifier (RFC 8707, RFC 9728): `<origin>/mcp`.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.origin)
    }

    /// The authorities `Host` may name.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Why a request is refused (403), if it is: a `Host` (or HTTP/2
    /// `:authority`) other than ours, or an `Origin` other than ours.
    pub fn refusal(&self, headers: &HeaderMap, uri: &Uri) -> Option<&'static str> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string)
            .or_else(|| uri.authority().map(|a| a.as_str().to_string()));
        match host {
            Some(host) if self.hosts.contains(&host.to_lowercase()) => {}
            _ => return Some("the Host header does not name this server"),
        }
        match headers.get(header::ORIGIN) {
            None => None,
            Some(origin) if origin.to_str().is_ok_and(|o| self.same(o)) => None,
            Some(_) => Some("the Origin header is not this server's"),
        }
    }

    fn same(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_lowercase();
        origin == self.origin
            || self
                .hosts
                .iter()
                .any(|h| origin == format!("{}://{h}", self.scheme()))
    }

    fn scheme(&self) -> &str {
        self.origin.split("://").next().unwrap_or("https")
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), HeaderValue::from_str(v).unwrap()))
            .collect()
    }

    #[test]
    fn the_listen_address_is_the_origin_without_a_public_url() {
        let origin = PublicOrigin::new(None, "127.0.0.1:8443".parse().unwrap(), true);
        assert_eq!(origin.origin(), "https://127.0.0.1:8443");
        assert_eq!(origin.resource(), "https://127.0.0.1:8443/mcp");
        let uri = Uri::from_static("/mcp");
        let ok = headers(&[(header::HOST, "127.0.0.1:8443")]);
        assert_eq!(origin.refusal(&ok, &uri), None);
        let rebound = headers(&[(header::HOST, "evil.example:8443")]);
        assert!(origin.refusal(&rebound, &uri).is_some());
        let cross = headers(&[
            (header::HOST, "127.0.0.1:8443"),
            (header::ORIGIN, "https://evil.example"),
        ]);
        assert!(origin.refusal(&cross, &uri).is_some());
        let same = headers(&[
            (header::HOST, "127.0.0.1:8443"),
            (header::ORIGIN, "https://127.0.0.1:8443"),
        ]);
        assert_eq!(origin.refusal(&same, &uri), None);
        let h2 = Uri::from_static("https://127.0.0.1:8443/mcp");
        assert_eq!(origin.refusal(&HeaderMap::new(), &h2), None);
    }

    #[test]
    fn a_public_url_is_the_origin_and_its_host() {
        let origin = PublicOrigin::new(
            Some("https://Quarry.example.com/"),
            "0.0.0.0:443".parse().unwrap(),
            true,
        );
        assert_eq!(origin.origin(), "https://quarry.example.com");
        let uri = Uri::from_static("/mcp");
        for host in ["quarry.example.com", "quarry.example.com:443"] {
            let h = headers(&[
                (header::HOST, host),
                (header::ORIGIN, "https://quarry.example.com"),
            ]);
            assert_eq!(origin.refusal(&h, &uri), None, "{host}");
        }
        let local = headers(&[(header::HOST, "127.0.0.1:443")]);
        assert!(origin.refusal(&local, &uri).is_some());
    }
}
