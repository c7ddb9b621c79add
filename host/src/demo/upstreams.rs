//! Where the demo's server sends each vendor host: to the demo's fake
//! vendors, and to an author's own fakes, named with `--fake HOST=IP:PORT`
//! and `--fake-ca PEM` or served from `--fixtures DIR`. Every source adds
//! to the others: the configuration's `QUARRY_UPSTREAM__HOST_OVERRIDES`
//! and `QUARRY_UPSTREAM__EXTRA_ROOT_CERTS` too, which would otherwise
//! replace the demo's own routes (and leave the shipped connectors unable
//! to resolve their vendors).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result, ensure};
use fake_saas::FakeSaas;
use fake_saas::fixtures::FixtureServer;

use super::{DemoArgs, TlsFiles};
use crate::config::UpstreamConfig;

/// `--fake HOST=IP:PORT`: a vendor host routed to an author's fake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeRoute {
    /// Lower case, without scheme or port.
    pub host: String,
    pub addr: SocketAddr,
}

impl FromStr for FakeRoute {
    type Err = String;

    fn from_str(text: &str) -> Result<FakeRoute, String> {
        let (host, addr) = text.split_once('=').ok_or_else(|| {
            format!("{text:?} is not HOST=IP:PORT (for example api.acme.example=127.0.0.1:9443)")
        })?;
        let host = host.trim().to_ascii_lowercase();
        let is_host_name = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        if !is_host_name {
            return Err(format!(
                "{host:?} is not a host name: give the vendor's host alone, without scheme, \
                 port or path (api.acme.example)"
            ));
        }
        let addr = addr.trim().parse().map_err(|_| {
            format!("{addr:?} is not an IP address and port (for example 127.0.0.1:9443)")
        })?;
        Ok(FakeRoute { host, addr })
    }
}

/// `--fixtures DIR`: starts the fixtures fake on a free port, writes its
/// CA beside the demo's certificates, and adds its hosts to `--fake` and
/// its CA to `--fake-ca`.
pub(super) async fn serve_fixtures(
    args: &mut DemoArgs,
    tls: &TlsFiles,
) -> Result<Option<FixtureServer>> {
    let Some(dir) = &args.fixtures else {
        return Ok(None);
    };
    let fixtures = FixtureServer::start(dir, "127.0.0.1:0".parse()?)
        .await
        .with_context(|| format!("--fixtures {}", dir.display()))?;
    let ca = tls.fake_ca.with_file_name("fixtures-ca.pem");
    std::fs::write(&ca, fixtures.ca_cert_pem())?;
    for host in fixtures.hosts() {
        args.fakes.push(FakeRoute {
            host: host.clone(),
            addr: fixtures.addr(),
        });
    }
    args.fake_cas.push(ca);
    Ok(Some(fixtures))
}

/// Sets the demo's upstream routes: every fake vendor host to `fake`, whose
/// CA `fake_ca` is trusted; then what the configuration gave; then
/// `routes` and `cas` (for one host, the later source wins).
pub(super) fn add_upstreams(
    upstream: &mut UpstreamConfig,
    fake: SocketAddr,
    fake_ca: &Path,
    routes: &[FakeRoute],
    cas: &[PathBuf],
) -> Result<()> {
    let configured = std::mem::take(&mut upstream.host_overrides);
    upstream.host_overrides = FakeSaas::hosts()
        .iter()
        .map(|host| (host.to_string(), fake))
        .collect();
    upstream.host_overrides.extend(configured);
    for route in routes {
        if FakeSaas::hosts().contains(&route.host.as_str()) {
            tracing::info!(host = %route.host, addr = %route.addr, "--fake sends a fake vendor's host to your fake instead");
        }
        upstream
            .host_overrides
            .insert(route.host.clone(), route.addr);
    }
    upstream.extra_root_certs.insert(0, fake_ca.to_path_buf());
    for ca in cas {
        check_certificate(ca)?;
        upstream.extra_root_certs.push(ca.clone());
    }
    Ok(())
}

/// Refuses, before the server starts, a `--fake-ca` that cannot serve.
fn check_certificate(path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--fake-ca {}: cannot read it", path.display()))?;
    ensure!(
        text.contains("-----BEGIN CERTIFICATE-----"),
        "--fake-ca {}: not a PEM certificate (no -----BEGIN CERTIFICATE----- line)",
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(text: &str) -> Result<FakeRoute, String> {
        text.parse()
    }

    #[test]
    fn a_fake_route_is_a_host_and_an_address() {
        assert_eq!(
            route("API.Acme.example=127.0.0.1:9443").unwrap(),
            FakeRoute {
                host: "api.acme.example".into(),
                addr: "127.0.0.1:9443".parse().unwrap()
            }
        );
        for (bad, why) in [
            ("api.acme.example", "is not HOST=IP:PORT"),
            (
                "https://api.acme.example=127.0.0.1:9443",
                "is not a host name",
            ),
            ("api.acme.example:443=127.0.0.1:9443", "is not a host name"),
            ("=127.0.0.1:9443", "is not a host name"),
            (
                "api.acme.example=localhost:9443",
                "is not an IP address and port",
            ),
            (
                "api.acme.example=127.0.0.1",
                "is not an IP address and port",
            ),
        ] {
            let message = route(bad).unwrap_err();
            assert!(message.contains(why), "{bad}: {message}");
        }
    }

    #[test]
    fn every_source_adds_to_the_demos_own_routes() {
        let dir = tempfile::tempdir().unwrap();
        let (demo_ca, author_ca, env_ca) = (
            dir.path().join("demo.pem"),
            dir.path().join("author.pem"),
            PathBuf::from("env.pem"),
        );
        std::fs::write(&author_ca, "-----BEGIN CERTIFICATE-----\n...").unwrap();
        let fake: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let env_addr: SocketAddr = "127.0.0.1:2000".parse().unwrap();
        let mut upstream = UpstreamConfig {
            host_overrides: [("api.env.example".to_string(), env_addr)].into(),
            extra_root_certs: vec![env_ca.clone()],
        };
        let routes = [
            route("api.acme.example=127.0.0.1:3000").unwrap(),
            route("api.github.com=127.0.0.1:4000").unwrap(),
        ];
        add_upstreams(
            &mut upstream,
            fake,
            &demo_ca,
            &routes,
            std::slice::from_ref(&author_ca),
        )
        .unwrap();
        let routed = |host: &str| upstream.host_overrides[host].port();
        assert_eq!(routed("slack.com"), 1000, "the demo's own vendor stays");
        assert_eq!(
            routed("api.env.example"),
            2000,
            "the environment's route is kept"
        );
        assert_eq!(routed("api.acme.example"), 3000);
        assert_eq!(routed("api.github.com"), 4000, "--fake wins for its host");
        assert_eq!(upstream.extra_root_certs, [demo_ca, env_ca, author_ca]);
    }

    #[test]
    fn a_fake_ca_that_is_not_a_certificate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key.pem");
        std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\n").unwrap();
        for (path, why) in [
            (key, "not a PEM certificate"),
            (dir.path().join("missing.pem"), "cannot read it"),
        ] {
            let mut upstream = UpstreamConfig::default();
            let error = add_upstreams(
                &mut upstream,
                "127.0.0.1:1".parse().unwrap(),
                Path::new("demo.pem"),
                &[],
                &[path],
            )
            .unwrap_err();
            assert!(format!("{error:#}").contains(why), "{error:#}");
        }
    }
}
