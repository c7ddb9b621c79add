//! Okta's org authorization server (`acme.okta.com`), as an OpenID Connect
//! provider for the dashboard's single sign-on: discovery, the authorize
//! endpoint (an account chooser), the token endpoint (authorization code
//! with PKCE, returning a signed ID token) and the JWKS.
//!
//! ID tokens are signed RS256 with a fixed test-only key
//! (`okta-signing-key.pem`, made for this fake and used nowhere else) until
//! `POST /_fake/oidc/rotate` switches to a fresh ES256 key; the old key stays
//! published, as Okta does during a rotation. `POST /_fake/oidc/misbehave`
//! makes the next ID token wrong in one way, for the relying party's checks.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use axum::http::Method;
use axum::response::Response;
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Shared;
use crate::http::{self, Req};
use crate::time::now_unix;
use crate::tokens::pkce_ok;

pub(crate) const ISSUER: &str = "https://acme.okta.com";
const RSA_KEY_PEM: &str = include_str!("okta-signing-key.pem");

/// A person with an Okta account.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Identity {
    pub email: String,
    #[serde(default)]
    pub sub: Option<String>,
    #[serde(default = "yes")]
    pub email_verified: bool,
    #[serde(default)]
    pub name: Option<String>,
}

fn yes() -> bool {
    true
}

/// Ways the next ID token can be wrong.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Misbehaviour {
    WrongAudience,
    WrongIssuer,
    Expired,
    WrongNonce,
    /// `iat` an hour ahead.
    IssuedInFuture,
    /// A published key's signature over other claims (the payload swapped).
    BadSignature,
    /// `alg: none` and no signature.
    Unsigned,
    /// HS256 with the client secret as the key (algorithm confusion).
    Symmetric,
}

struct SigningKey {
    kid: String,
    alg: Algorithm,
    key: EncodingKey,
    jwk: Jwk,
}

impl SigningKey {
    fn new(kid: &str, alg: Algorithm, key: EncodingKey) -> SigningKey {
        let mut jwk = Jwk::from_encoding_key(&key, alg).expect("a public key for the JWKS");
        jwk.common.key_id = Some(kid.to_string());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        SigningKey {
            kid: kid.to_string(),
            alg,
            key,
            jwk,
        }
    }
}

struct Code {
    client_id: String,
    redirect_uri: String,
    challenge: Option<(String, String)>,
    nonce: Option<String>,
    identity: Identity,
    expires_at: Instant,
}

/// The provider's state: keys (the last signs), people, codes, mischief.
pub(crate) struct Idp {
    keys: Vec<SigningKey>,
    identities: Vec<Identity>,
    codes: HashMap<String, Code>,
    misbehave: Option<Misbehaviour>,
}

impl Idp {
    pub(crate) fn new() -> Idp {
        let rsa = EncodingKey::from_rsa_pem(RSA_KEY_PEM.as_bytes()).expect("the fake's RSA key");
        let person = |email: &str, sub: &str, name: &str, verified: bool| Identity {
            email: email.into(),
            sub: Some(sub.into()),
            email_verified: verified,
            name: Some(name.into()),
        };
        Idp {
            keys: vec![SigningKey::new("fake-okta-rsa-1", Algorithm::RS256, rsa)],
            identities: vec![
                person("alice@acme.test", "00u1alice0000000001", "Alice Ng", true),
                person("bob@acme.test", "00u1bob00000000002", "Bob Ortiz", true),
                person(
                    "carol@acme.test",
                    "00u1carol000000003",
                    "Carol (unverified)",
                    false,
                ),
                person(
                    "eve@elsewhere.test",
                    "00u1eve00000000004",
                    "Eve Outsider",
                    true,
                ),
            ],
            codes: HashMap::new(),
            misbehave: None,
        }
    }

    /// Adds a person, or replaces the one with the same email.
    pub(crate) fn put_identity(&mut self, identity: Identity) {
        self.identities.retain(|i| i.email != identity.email);
        self.identities.push(identity);
    }

    /// Starts signing with a new ES256 key; the old ones stay published.
    pub(crate) fn rotate(&mut self) -> String {
        let pair =
            rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("an ES256 key");
        let key = EncodingKey::from_ec_pem(pair.serialize_pem().as_bytes()).expect("an EC key");
        let kid = format!("fake-okta-ec-{}", random_hex());
        self.keys.push(SigningKey::new(&kid, Algorithm::ES256, key));
        kid
    }

    pub(crate) fn misbehave(&mut self, how: Misbehaviour) {
        self.misbehave = Some(how);
    }

    fn jwks(&self) -> JwkSet {
        JwkSet {
            keys: self.keys.iter().map(|k| k.jwk.clone()).collect(),
        }
    }
}

fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    let mut out = String::new();
    for n in 0..2u64 {
        let mut h = state.build_hasher();
        h.write_u64(n);
        h.write_u128(Instant::now().elapsed().as_nanos());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    match (&req.method, req.path.trim_end_matches('/')) {
        (&Method::GET, "/.well-known/openid-configuration") => discovery(),
        (&Method::GET, "/oauth2/v1/keys") => http::json(200, &json!(shared.idp().jwks())),
        (&Method::GET, "/oauth2/v1/authorize") => authorize(shared, req),
        (&Method::POST, "/oauth2/v1/token") => token(shared, req),
        _ => error(404, "E0000022", "The endpoint does not exist."),
    }
}

fn discovery() -> Response {
    let endpoint = |path: &str| format!("{ISSUER}/oauth2/v1/{path}");
    http::json(
        200,
        &json!({
            "issuer": ISSUER,
            "authorization_endpoint": endpoint("authorize"),
            "token_endpoint": endpoint("token"),
            "userinfo_endpoint": endpoint("userinfo"),
            "jwks_uri": endpoint("keys"),
            "revocation_endpoint": endpoint("revoke"),
            "response_types_supported": ["code", "id_token", "code id_token"],
            "response_modes_supported": ["query", "fragment", "form_post"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            "scopes_supported": ["openid", "email", "profile", "offline_access"],
            "token_endpoint_auth_methods_supported":
                ["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none"],
            "claims_supported": ["iss", "sub", "aud", "iat", "exp", "auth_time", "nonce", "email", "email_verified", "name"],
            "code_challenge_methods_supported": ["S256"],
        }),
    )
}

/// Okta's error shape for its API; OAuth endpoints use RFC 6749's.
fn error(status: u16, code: &str, summary: &str) -> Response {
    http::json(
        status,
        &json!({"errorCode": code, "errorSummary": summary, "errorLink": code, "errorId": http::request_id(), "errorCauses": []}),
    )
}

fn oauth_error(status: u16, error: &str, description: &str) -> Response {
    http::json(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

fn page(status: u16, title: &str, body: &str) -> Response {
    http::html(
        status,
        format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"data:,\"><title>{title} · acme (Okta)</title></head>\
             <body><main><h1>{title}</h1>{body}</main></body></html>"
        ),
    )
}

fn authorize(shared: &Shared, req: &Req) -> Response {
    let p = |n: &str| req.param(n).filter(|v| !v.is_empty());
    let (Some(client_id), Some(redirect_uri)) = (p("client_id"), p("redirect_uri")) else {
        return page(
            400,
            "Bad request",
            "<p>The request has no client_id or no redirect_uri.</p>",
        );
    };
    let back = |params: &[(&str, &str)]| {
        let mut params = params.to_vec();
        let state = p("state").unwrap_or_default();
        params.push(("state", &state));
        http::redirect(&http::with_query(&redirect_uri, &params))
    };
    if p("response_type").as_deref() != Some("code") {
        return back(&[("error", "unsupported_response_type")]);
    }
    if !p("scope").is_some_and(|s| s.split(' ').any(|s| s == "openid")) {
        return back(&[
            ("error", "invalid_scope"),
            ("error_description", "The scope must include openid."),
        ]);
    }
    let mut idp = shared.idp();
    // The account chooser, unless the request (or a test) names the person.
    let chosen = p("fake_user").or_else(|| p("login_hint"));
    let Some(email) = chosen else {
        let links: String = idp
            .identities
            .iter()
            .map(|i| {
                let query = http::with_query(
                    &format!("?{}", req.query.as_deref().unwrap_or_default()),
                    &[("fake_user", &i.email)],
                );
                format!(
                    "<li><a href=\"{}\">Continue as {} ({})</a></li>",
                    escape(&query),
                    escape(i.name.as_deref().unwrap_or(&i.email)),
                    escape(&i.email)
                )
            })
            .collect();
        return page(
            200,
            "Sign in to acme",
            &format!("<p>Choose an account to sign in to {client_id} with.</p><ul>{links}</ul>"),
        );
    };
    let Some(identity) = idp.identities.iter().find(|i| i.email == email).cloned() else {
        return back(&[
            ("error", "access_denied"),
            (
                "error_description",
                "User is not assigned to the client application.",
            ),
        ]);
    };
    let challenge = p("code_challenge").map(|c| {
        (
            c,
            p("code_challenge_method").unwrap_or_else(|| "plain".into()),
        )
    });
    let code = random_hex();
    idp.codes.insert(
        code.clone(),
        Code {
            client_id,
            redirect_uri: redirect_uri.clone(),
            challenge,
            nonce: p("nonce"),
            identity,
            expires_at: Instant::now() + Duration::from_secs(300),
        },
    );
    back(&[("code", &code)])
}

fn token(shared: &Shared, req: &Req) -> Response {
    let get = |n: &str| req.body_or_query(n).filter(|v| !v.is_empty());
    let (client_id, secret) = match req.basic() {
        Some((id, secret)) => (Some(id), Some(secret)),
        None => (get("client_id"), get("client_secret")),
    };
    let (Some(client_id), Some(secret)) = (client_id, secret) else {
        return oauth_error(401, "invalid_client", "Client authentication failed.");
    };
    if get("grant_type").as_deref() != Some("authorization_code") {
        return oauth_error(
            400,
            "unsupported_grant_type",
            "The grant type is not supported.",
        );
    }
    let mut idp = shared.idp();
    let code = get("code").and_then(|c| idp.codes.remove(&c));
    let Some(code) = code.filter(|c| Instant::now() < c.expires_at) else {
        return oauth_error(
            400,
            "invalid_grant",
            "The authorization code is invalid or has expired.",
        );
    };
    if code.client_id != client_id || get("redirect_uri").as_deref() != Some(&code.redirect_uri) {
        return oauth_error(
            400,
            "invalid_grant",
            "The client or the redirect_uri does not match the authorization request.",
        );
    }
    if let Some(challenge) = &code.challenge
        && !get("code_verifier").is_some_and(|v| pkce_ok(challenge, &v))
    {
        return oauth_error(
            400,
            "invalid_grant",
            "PKCE verification failed for code challenge method.",
        );
    }
    let id_token = idp.id_token(&code, &client_id, &secret);
    http::json(
        200,
        &json!({
            "token_type": "Bearer",
            "expires_in": 3600,
            "access_token": format!("fake-okta-access-{}", random_hex()),
            "scope": "openid email profile",
            "id_token": id_token,
        }),
    )
}

impl Idp {
    fn id_token(&mut self, code: &Code, client_id: &str, secret: &str) -> String {
        let now = now_unix();
        let identity = &code.identity;
        let mut claims = json!({
            "iss": ISSUER,
            "sub": identity.sub.clone().unwrap_or_else(|| format!("00u-{}", identity.email)),
            "aud": client_id,
            "iat": now,
            "exp": now + 3600,
            "auth_time": now,
            "email": identity.email,
            "email_verified": identity.email_verified,
            "name": identity.name.clone().unwrap_or_else(|| identity.email.clone()),
        });
        if let Some(nonce) = &code.nonce {
            claims["nonce"] = json!(nonce);
        }
        let how = self.misbehave.take();
        match how {
            Some(Misbehaviour::WrongAudience) => claims["aud"] = json!("someone-else"),
            Some(Misbehaviour::WrongIssuer) => claims["iss"] = json!("https://evil.okta.com"),
            Some(Misbehaviour::Expired) => {
                claims["iat"] = json!(now - 7200);
                claims["exp"] = json!(now - 3600);
            }
            Some(Misbehaviour::WrongNonce) => claims["nonce"] = json!("not-the-nonce"),
            Some(Misbehaviour::IssuedInFuture) => claims["iat"] = json!(now + 3600),
            _ => {}
        }
        let signer = self.keys.last().expect("a signing key");
        let mut header = Header::new(signer.alg);
        header.kid = Some(signer.kid.clone());
        match how {
            Some(Misbehaviour::Unsigned) => unsigned(&header, &claims),
            Some(Misbehaviour::Symmetric) => {
                header.alg = Algorithm::HS256;
                let key = EncodingKey::from_secret(secret.as_bytes());
                jsonwebtoken::encode(&header, &claims, &key).expect("an HS256 token")
            }
            Some(Misbehaviour::BadSignature) => {
                // A real signature over other claims: the payload is swapped.
                let token = jsonwebtoken::encode(&header, &claims, &signer.key).expect("a token");
                claims["sub"] = json!("00u1someone-else");
                let (head, rest) = token.split_once('.').expect("a JWT");
                let signature = rest.rsplit_once('.').expect("a JWT").1;
                format!("{head}.{}.{signature}", b64_json(&claims))
            }
            _ => jsonwebtoken::encode(&header, &claims, &signer.key).expect("an ID token"),
        }
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn b64_json(value: &Value) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

/// `header.claims.` with `alg: none`.
fn unsigned(header: &Header, claims: &Value) -> String {
    let mut head = serde_json::to_value(header).unwrap_or_default();
    head["alg"] = json!("none");
    format!("{}.{}.", b64_json(&head), b64_json(claims))
}
