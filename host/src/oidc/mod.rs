//! The relying party of OpenID Connect single sign-on (the dashboard's
//! "Sign in with ..."): discovery, the authorization request (code flow
//! with PKCE S256, `state` and `nonce`), the code exchange, and the ID
//! token's validation against the provider's published keys.
//!
//! What is checked, after OpenID Connect Core §3.1.3.7: the discovery
//! document names exactly the configured issuer; the ID token comes from
//! the token endpoint over TLS; its signature is by a key of the provider's
//! JWKS (asymmetric algorithms only: `none` and HMAC are refused); `iss` is
//! the issuer, `aud` holds our client id (and `azp` is ours when present);
//! `exp` has not passed and `iat` is not in the future (60 s leeway both);
//! `nonce` is the one we sent.
//!
//! Discovery and keys are cached for an hour. An unknown key id makes the
//! keys be fetched again at once: providers rotate keys, and ID tokens only
//! ever come from the provider's own token endpoint.
//!
//! - this file: the provider: discovery, the sign-in's start, the code
//!   exchange and the ID token's validation;
//! - [`keys`]: the provider's published key an ID token names;
//! - [`claims`]: the ID token's claims and the checks the decoder does not
//!   make.

mod claims;
mod keys;

use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::config::SsoConfig;
use claims::{Claims, Verified};
use keys::decoding_key;
use quarry_store::random_b64;

/// How long discovery and keys are trusted before being fetched again.
const CACHE_FOR: Duration = Duration::from_secs(3600);
/// Largest discovery document, JWKS or token response read.
const MAX_RESPONSE_BYTES: usize = 256 * 1024;
const TIMEOUT: Duration = Duration::from_secs(10);
/// Clock skew allowed between us and the provider.
const LEEWAY_SECONDS: u64 = 60;

/// Signature algorithms accepted on ID tokens: asymmetric ones only, so a
/// token can only come from the holder of a published key.
const ACCEPTED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Why a sign-in through the provider failed.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    /// The provider could not be reached, or answered what is not OpenID Connect.
    #[error("the identity provider: {0}")]
    Provider(String),
    /// The provider refused the code (expired, used, or not ours).
    #[error("the identity provider refused the sign-in: {0}")]
    Refused(String),
    /// The ID token failed a check: never trusted.
    #[error("the ID token was refused: {0}")]
    InvalidToken(String),
}

/// The provider's endpoints, from its discovery document.
#[derive(Debug, Clone, Deserialize)]
struct Metadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// A person as the provider vouches for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
}

/// What a sign-in started with, kept until the provider sends the browser back.
#[derive(Debug, Clone)]
pub struct Started {
    /// Where to send the browser.
    pub url: url::Url,
    pub state: String,
    pub nonce: String,
    pub verifier: String,
}

#[derive(Default)]
struct Cache {
    metadata: Option<(Metadata, Instant)>,
    keys: Option<(JwkSet, Instant)>,
}

pub struct Provider {
    config: SsoConfig,
    http: reqwest::Client,
    cache: tokio::sync::Mutex<Cache>,
}

impl Provider {
    /// `http` must be a client that checks certificates and refuses redirects.
    pub fn new(config: SsoConfig, http: reqwest::Client) -> Provider {
        Provider {
            config,
            http,
            cache: tokio::sync::Mutex::default(),
        }
    }

    /// The name on the sign-in button.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn issuer(&self) -> &str {
        &self.config.issuer
    }

    pub fn allowed_domains(&self) -> &[String] {
        &self.config.allowed_domains
    }

    /// The authorization request to send the browser to.
    pub async fn start(&self, redirect_uri: &str) -> Result<Started, SsoError> {
        let metadata = self.metadata().await?;
        let mut url = url::Url::parse(&metadata.authorization_endpoint)
            .map_err(|e| SsoError::Provider(format!("authorization_endpoint: {e}")))?;
        let (state, nonce) = (random_b64(24), random_b64(24));
        let crate::oauth::pkce::Pkce {
            verifier,
            challenge,
        } = crate::oauth::pkce::Pkce::new();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", "openid email")
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256");
        Ok(Started {
            url,
            state,
            nonce,
            verifier,
        })
    }

    /// Exchanges the code and validates the ID token that comes back.
    pub async fn finish(
        &self,
        code: &str,
        verifier: &str,
        redirect_uri: &str,
        nonce: &str,
    ) -> Result<Identity, SsoError> {
        let metadata = self.metadata().await?;
        let id_token = self
            .exchange(&metadata, code, verifier, redirect_uri)
            .await?;
        self.validate(&metadata, &id_token, nonce).await
    }

    async fn metadata(&self) -> Result<Metadata, SsoError> {
        let mut cache = self.cache.lock().await;
        if let Some((metadata, at)) = &cache.metadata
            && at.elapsed() < CACHE_FOR
        {
            return Ok(metadata.clone());
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.config.issuer.trim_end_matches('/')
        );
        let metadata: Metadata = self.get_json(&url).await?;
        // Discovery §4.3: the document must be the issuer's own.
        if metadata.issuer != self.config.issuer {
            return Err(SsoError::Provider(format!(
                "the discovery document names the issuer {:?}, not {:?}",
                metadata.issuer, self.config.issuer
            )));
        }
        for (name, endpoint) in [
            ("authorization_endpoint", &metadata.authorization_endpoint),
            ("token_endpoint", &metadata.token_endpoint),
            ("jwks_uri", &metadata.jwks_uri),
        ] {
            if !endpoint.starts_with("https://") {
                return Err(SsoError::Provider(format!(
                    "{name} is not https: {endpoint}"
                )));
            }
        }
        cache.metadata = Some((metadata.clone(), Instant::now()));
        Ok(metadata)
    }

    async fn exchange(
        &self,
        metadata: &Metadata,
        code: &str,
        verifier: &str,
        redirect_uri: &str,
    ) -> Result<String, SsoError> {
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ];
        let mut request = self
            .http
            .post(&metadata.token_endpoint)
            .header("Accept", "application/json")
            .timeout(TIMEOUT);
        // client_secret_basic is the default (RFC 8414 §2); post when it is
        // the only one of the two the provider takes.
        let methods = metadata.token_endpoint_auth_methods_supported.as_deref();
        let post_only = methods.is_some_and(|m| {
            m.iter().any(|m| m == "client_secret_post")
                && !m.iter().any(|m| m == "client_secret_basic")
        });
        if post_only {
            form.push(("client_id", &self.config.client_id));
            form.push(("client_secret", self.config.client_secret.expose()));
        } else {
            // RFC 6749 §2.3.1: both parts form-encoded before Basic.
            let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect();
            let (id, secret): (String, String) = (
                encode(&self.config.client_id),
                encode(self.config.client_secret.expose()),
            );
            request = request.basic_auth(id, Some(secret));
        }
        let response = request
            .form(&form)
            .send()
            .await
            .map_err(|e| SsoError::Provider(format!("the token endpoint: {e}")))?;
        let status = response.status();
        if status.is_server_error() {
            return Err(SsoError::Provider(format!(
                "the token endpoint answered {status}"
            )));
        }
        let body = read_json(response).await;
        if !status.is_success() {
            // RFC 6749 §5.2: an `error` code, perhaps a description.
            let body = body.unwrap_or_default();
            let error = body["error"].as_str().unwrap_or("no error code");
            let description = body["error_description"].as_str().unwrap_or_default();
            return Err(SsoError::Refused(
                format!("{status} {error} {description}").trim().to_string(),
            ));
        }
        let body = body?;
        body["id_token"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| SsoError::Provider("the token response has no id_token".into()))
    }

    async fn validate(
        &self,
        metadata: &Metadata,
        id_token: &str,
        nonce: &str,
    ) -> Result<Identity, SsoError> {
        let invalid = |why: String| SsoError::InvalidToken(why);
        let header = jsonwebtoken::decode_header(id_token)
            .map_err(|e| invalid(format!("its header: {e}")))?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(invalid(format!(
                "signed with {:?}, which is not accepted",
                header.alg
            )));
        }
        let key = self
            .key_for(metadata, header.kid.as_deref(), header.alg)
            .await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.client_id]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY_SECONDS;
        let claims = jsonwebtoken::decode::<Claims>(id_token, &key, &validation)
            .map_err(|e| invalid(e.to_string()))?
            .claims;
        claims
            .check(&self.config.client_id, nonce)
            .map_err(invalid)?;
        Ok(Identity {
            issuer: self.config.issuer.clone(),
            subject: claims.sub,
            email: claims.email.map(|e| e.trim().to_lowercase()),
            email_verified: claims
                .email_verified
                .as_ref()
                .is_some_and(Verified::is_true),
        })
    }

    /// The published key a token names: from the cached keys while they
    /// are fresh, else (or when the id is unknown: the provider rotated)
    /// from the keys fetched again, once.
    async fn key_for(
        &self,
        metadata: &Metadata,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, SsoError> {
        let mut cache = self.cache.lock().await;
        if let Some((keys, at)) = &cache.keys
            && at.elapsed() < CACHE_FOR
            && let Some(key) = decoding_key(keys, kid, alg)?
        {
            return Ok(key);
        }
        let keys: JwkSet = self.get_json(&metadata.jwks_uri).await?;
        let key = decoding_key(&keys, kid, alg)?;
        cache.keys = Some((keys, Instant::now()));
        key.ok_or_else(|| {
            SsoError::InvalidToken(format!(
                "no published key {} for {alg:?}",
                kid.unwrap_or("(no kid)")
            ))
        })
    }

    async fn get_json<T: DeserializeOwned>(&self, url: &str) -> Result<T, SsoError> {
        let response = self
            .http
            .get(url)
            .header("Accept", "application/json")
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| SsoError::Provider(format!("{url}: {e}")))?;
        if !response.status().is_success() {
            return Err(SsoError::Provider(format!(
                "{url} answered {}",
                response.status()
            )));
        }
        let value = read_json(response).await?;
        serde_json::from_value(value).map_err(|e| SsoError::Provider(format!("{url}: {e}")))
    }
}

async fn read_json(mut response: reqwest::Response) -> Result<serde_json::Value, SsoError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| SsoError::Provider(format!("reading the answer: {e}")))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_RESPONSE_BYTES {
            return Err(SsoError::Provider(format!(
                "an answer larger than {MAX_RESPONSE_BYTES} bytes"
            )));
        }
    }
    serde_json::from_slice(&body).map_err(|e| SsoError::Provider(format!("not JSON: {e}")))
}

#[cfg(test)]
mod tests;
