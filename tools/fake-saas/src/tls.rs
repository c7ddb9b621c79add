//! Certificate authorities made on the fly, and certificates they sign:
//! the fake vendors', and (through [`certificate_for`]) the demo server's
//! and `quarry eval-live`'s. The one certificate generator of the tests
//! and the demo.

use std::sync::Arc;

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub(crate) struct Certs {
    pub ca_pem: String,
    ca_der: CertificateDer<'static>,
    leaf_der: CertificateDer<'static>,
    leaf_key: Vec<u8>,
    leaf_pem: String,
    key_pem: String,
}

/// A certificate and its CA, as PEM.
pub struct PemCertificate {
    /// The certificate, then the CA's (the chain a server presents).
    pub chain_pem: String,
    pub key_pem: String,
    pub ca_pem: String,
}

/// A fresh CA named `ca_name` and a certificate for `hosts` (and
/// 127.0.0.1) signed by it.
pub fn certificate_for(ca_name: &str, hosts: &[&str]) -> anyhow::Result<PemCertificate> {
    let certs = generate_named(ca_name, hosts)?;
    Ok(PemCertificate {
        chain_pem: format!("{}{}", certs.leaf_pem, certs.ca_pem),
        key_pem: certs.key_pem,
        ca_pem: certs.ca_pem,
    })
}

/// A fresh CA and a leaf certificate for `hosts`, signed by it.
pub(crate) fn generate(hosts: &[&str]) -> anyhow::Result<Certs> {
    generate_named("fake-saas test CA", hosts)
}

fn generate_named(ca_name: &str, hosts: &[&str]) -> anyhow::Result<Certs> {
    let ca_key = KeyPair::generate().context("generating the CA key")?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    ca.distinguished_name
        .push(DnType::OrganizationName, "Quarry fake-saas");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);

    let leaf_key = KeyPair::generate()?;
    // And its loopback address: a browser reaches the vendors' authorize
    // pages by it (`/_vendor/<host>/...`, see server.rs).
    let names = hosts
        .iter()
        .map(|h| h.to_string())
        .chain(["127.0.0.1".to_string()])
        .collect::<Vec<_>>();
    let mut leaf = CertificateParams::new(names)?;
    leaf.distinguished_name.push(
        DnType::CommonName,
        hosts.first().copied().unwrap_or("fake-saas"),
    );
    leaf.use_authority_key_identifier_extension = true;
    leaf.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer)?;

    Ok(Certs {
        ca_pem: ca_cert.pem(),
        ca_der: ca_cert.der().clone(),
        leaf_der: leaf_cert.der().clone(),
        leaf_key: leaf_key.serialize_der(),
        leaf_pem: leaf_cert.pem(),
        key_pem: leaf_key.serialize_pem(),
    })
}

impl Certs {
    /// A rustls server config (ring provider) offering HTTP/2 and HTTP/1.1 over ALPN.
    pub(crate) fn server_config(&self) -> anyhow::Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(
                vec![self.leaf_der.clone(), self.ca_der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key.clone())),
            )?;
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(cfg))
    }
}
