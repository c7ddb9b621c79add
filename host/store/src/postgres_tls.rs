//! TLS to PostgreSQL, as libpq's `sslmode` and `sslrootcert` say (the
//! parameters operators already put in their connection URLs):
//!
//! | `sslmode` | encrypted | server checked |
//! |---|---|---|
//! | `disable` | no | - |
//! | `allow`, `prefer` (the default) | when the server offers it | no |
//! | `require` | yes | against `sslrootcert` when given (as `verify-ca`), else no |
//! | `verify-ca` | yes | its chain, against `sslrootcert` or the system's roots |
//! | `verify-full` | yes | its chain and its name (host or IP address) |
//!
//! tokio-postgres itself knows only `disable`, `prefer` and `require`, and
//! never checks a certificate: the two parameters are taken out of the
//! URL here and the TLS connector (rustls, through tokio-postgres-rustls)
//! is built to match. A server on another machine reached without
//! `verify-full` is warned of at every start.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Result<Mode> {
        Ok(match value {
            "disable" => Mode::Disable,
            "allow" | "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            other => bail!(
                "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
            ),
        })
    }
}

/// How to reach the database: the connection's settings, and the TLS
/// connector they call for (`None`: plain TCP only).
pub struct Connection {
    pub config: tokio_postgres::Config,
    pub tls: Option<MakeRustlsConnect>,
    pub mode: Mode,
}

impl Connection {
    /// From a connection URL (`postgres://…?sslmode=verify-full&sslrootcert=/path/ca.pem`)
    /// or a key=value string.
    pub fn from_url(url: &str) -> Result<Connection> {
        let (rest, sslmode, sslrootcert) = take_tls_parameters(url)?;
        let mut config: tokio_postgres::Config = rest
            .parse()
            .context("[storage] postgres_url is not a PostgreSQL connection URL")?;
        let mode = match sslmode.as_deref() {
            Some(value) => Mode::parse(value)?,
            None => Mode::Prefer,
        };
        let roots = sslrootcert.map(PathBuf::from);
        // libpq: `require` with a root certificate checks the chain.
        let mode = match (mode, &roots) {
            (Mode::Require, Some(_)) => Mode::VerifyCa,
            (mode, _) => mode,
        };
        config.ssl_mode(match mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        });
        let tls = match mode {
            Mode::Disable => None,
            mode => Some(MakeRustlsConnect::new(client_config(mode, roots)?)),
        };
        Ok(Connection { config, tls, mode })
    }

    /// Whether the connection crosses a network without a checked server:
    /// any host but a loopback address or a Unix socket, short of
    /// `verify-full`.
    pub fn exposed(&self) -> bool {
        let remote = self.config.get_hosts().iter().any(|host| match host {
            Host::Tcp(name) => !is_loopback_host(name),
            #[cfg(unix)]
            Host::Unix(_) => false,
        });
        remote && self.mode != Mode::VerifyFull
    }
}

/// Whether a host name or address is this machine's.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `url` without `sslmode` and `sslrootcert`, and their values.
fn take_tls_parameters(url: &str) -> Result<(String, Option<String>, Option<String>)> {
    let (mut sslmode, mut sslrootcert) = (None, None);
    let mut take = |name: &str, value: String| match name {
        "sslmode" => {
            sslmode = Some(value);
            true
        }
        "sslrootcert" => {
            sslrootcert = Some(value);
            true
        }
        _ => false,
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let mut parsed =
            url::Url::parse(url).context("[storage] postgres_url is not a valid URL")?;
        let kept: Vec<(String, String)> = parsed
            .query_pairs()
            .into_owned()
            .filter(|(name, value)| !take(name, value.clone()))
            .collect();
        if kept.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(kept);
        }
        parsed.to_string()
    } else {
        url.split_whitespace()
            .filter(|pair| match pair.split_once('=') {
                Some((name, value)) => !take(name, value.trim_matches('\'').to_string()),
                None => true,
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    Ok((rest, sslmode, sslrootcert))
}

fn client_config(mode: Mode, roots: Option<PathBuf>) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS for PostgreSQL")?;
    let chain = match mode {
        Mode::Disable | Mode::Prefer | Mode::Require => None,
        Mode::VerifyCa | Mode::VerifyFull => Some(
            WebPkiServerVerifier::builder_with_provider(
                Arc::new(root_store(roots.as_ref())?),
                provider.clone(),
            )
            .build()
            .context("the PostgreSQL server's roots")?,
        ),
    };
    let verifier = Arc::new(Verifier {
        chain,
        check_name: mode == Mode::VerifyFull,
        provider,
    });
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// `sslrootcert`'s certificates, or the system's roots.
fn root_store(path: Option<&PathBuf>) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match path {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .with_context(|| format!("reading sslrootcert {}", path.display()))?
                .collect::<Result<Vec<_>, _>>()
                .with_context(|| format!("sslrootcert {} is not PEM", path.display()))?;
            if certs.is_empty() {
                bail!("sslrootcert {} holds no certificate", path.display());
            }
            for cert in certs {
                store.add(cert).context("a certificate of sslrootcert")?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                bail!("no system root certificates: give sslrootcert");
            }
        }
    }
    Ok(store)
}

/// The server's certificate checked as the mode says. The handshake's
/// signatures are checked in every mode, with the provider's algorithms
/// (which is all `WebPkiServerVerifier` does for them too).
#[derive(Debug)]
struct Verifier {
    /// `verify-ca` and `verify-full`: the chain against the roots. `None`
    /// for `prefer` and `require` without a root: encrypted, the server not
    /// checked (libpq's meaning).
    chain: Option<Arc<WebPkiServerVerifier>>,
    /// Only for `verify-full` (libpq's `verify-ca` accepts a certificate
    /// for another name).
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tls_parameters_are_taken_out_of_either_form() {
        let (rest, mode, root) = take_tls_parameters(
            "postgres://quarry@db.internal:5432/quarry?sslmode=verify-full&application_name=q&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(
            rest,
            "postgres://quarry@db.internal:5432/quarry?application_name=q"
        );
        assert_eq!(mode.as_deref(), Some("verify-full"));
        assert_eq!(root.as_deref(), Some("/etc/ca.pem"));
        let (rest, mode, root) =
            take_tls_parameters("host=db.internal user=quarry sslmode=require").unwrap();
        assert_eq!(
            (rest.as_str(), mode.as_deref(), root),
            ("host=db.internal user=quarry", Some("require"), None)
        );
    }

    #[test]
    fn modes_follow_libpq() {
        let mode = |url: &str| Connection::from_url(url).map(|c| (c.mode, c.tls.is_some()));
        assert_eq!(
            mode("postgres://u@127.0.0.1/db").unwrap(),
            (Mode::Prefer, true),
            "libpq's default"
        );
        assert_eq!(
            mode("postgres://u@127.0.0.1/db?sslmode=disable").unwrap(),
            (Mode::Disable, false)
        );
        assert_eq!(
            mode("postgres://u@h/db?sslmode=verify-full").unwrap(),
            (Mode::VerifyFull, true)
        );
        assert!(mode("postgres://u@h/db?sslmode=sometimes").is_err());
        let missing = mode("postgres://u@h/db?sslmode=require&sslrootcert=/nonexistent.pem");
        assert!(format!("{:#}", missing.unwrap_err()).contains("sslrootcert"));
    }

    #[test]
    fn a_remote_server_short_of_verify_full_is_exposed() {
        let exposed = |url: &str| Connection::from_url(url).unwrap().exposed();
        assert!(exposed("postgres://u@db.internal/db?sslmode=require"));
        assert!(exposed("postgres://u@10.0.0.5/db"));
        assert!(!exposed("postgres://u@db.internal/db?sslmode=verify-full"));
        assert!(!exposed("postgres://u@127.0.0.1/db"));
        assert!(!exposed("postgres://u@localhost/db?sslmode=disable"));
    }
}
