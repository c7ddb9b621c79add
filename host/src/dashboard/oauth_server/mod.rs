//! The issuer's endpoints (`crate::issuer`), outside `/v1`: form-encoded requests and the
//! error responses OAuth clients expect (RFC 6749 §5.2: `error`,
//! `error_description`), not the API's error shape.
//!
//! - `POST /oauth/device_authorization` (RFC 8628 §3.1)
//! - `POST /oauth/token`: the authorization code (with PKCE), device code
//!   and `refresh_token` grants
//! - `POST /oauth/revoke` (RFC 7009)
//! - `POST /oauth/register`: dynamic client registration (RFC 7591), JSON
//! - `GET /.well-known/oauth-authorization-server` (RFC 8414)
//!
//! With `/oauth/authorize`, where a person signs in and consents
//! (`super::authorize`), this is all of `/oauth/*`: the dashboard is the
//! authorization server's one front door, as it is the person's. These
//! endpoints are merged outside the dashboard's guard (no session, no
//! CSRF form token): browser-based MCP clients call them from other
//! origins, so they answer CORS preflights, and no cookie is involved.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

mod form;

use self::form::{
    OAuthError, OAuthForm, client_id, field, has_content_type, limited, oauth_error, required,
};
use super::Dashboard;
use crate::issuer::authorization::Exchange;
use crate::issuer::clients::ClientMetadata;
use crate::issuer::{Issued, Poll, Renewal};
use crate::limits::{Bucket, address};
use quarry_store::{Permission, Scope};

const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// A device-flow client's label (shown to the person as it is).
const MAX_LABEL_CHARS: usize = 100;
/// Any client id: a label, a registered id, or a metadata document's URL.
const MAX_CLIENT_ID_CHARS: usize = 2000;
/// Largest registration request accepted.
const MAX_REGISTRATION_BYTES: usize = 16 * 1024;

pub const METADATA_PATH: &str = "/.well-known/oauth-authorization-server";

pub fn routes() -> Router<Arc<Dashboard>> {
    Router::new()
        .route("/oauth/device_authorization", post(device_authorization))
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
        .route("/oauth/register", post(register))
        .route(METADATA_PATH, get(metadata))
        .layer(axum::middleware::from_fn(cors))
}

/// CORS for browser-based clients: any origin may call these endpoints,
/// which take no cookie and answer only what the request proves.
async fn cors(request: Request, next: Next) -> Response {
    let mut response = if request.method() == axum::http::Method::OPTIONS {
        let mut preflight = StatusCode::NO_CONTENT.into_response();
        let headers = preflight.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            header::HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            header::HeaderValue::from_static("Content-Type, Authorization, MCP-Protocol-Version"),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            header::HeaderValue::from_static("86400"),
        );
        preflight
    } else {
        next.run(request).await
    };
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        header::HeaderValue::from_static("*"),
    );
    response
}

fn no_store(body: Value) -> Response {
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        Json(body),
    )
        .into_response()
}

async fn device_authorization(
    State(dashboard): State<Arc<Dashboard>>,
    uri: Uri,
    headers: HeaderMap,
    OAuthForm(fields): OAuthForm,
) -> Result<Response, OAuthError> {
    let client = client_id(&fields, MAX_LABEL_CHARS)?.to_string();
    let issuer = dashboard.issuer.clone();
    let Ok(Ok(started)) = tokio::task::spawn_blocking(move || issuer.start_device(&client)).await
    else {
        return Ok(server_error());
    };
    let base = public_base(&dashboard, &uri, &headers);
    Ok(no_store(json!({
        "device_code": started.device_code,
        "user_code": started.user_code,
        "verification_uri": format!("{base}/device"),
        "verification_uri_complete": format!("{base}/device?user_code={}", started.user_code),
        "expires_in": started.expires_in,
        "interval": started.interval,
    })))
}

async fn token(
    State(dashboard): State<Arc<Dashboard>>,
    OAuthForm(fields): OAuthForm,
) -> Result<Response, OAuthError> {
    let client = client_id(&fields, MAX_CLIENT_ID_CHARS)?.to_string();
    match required(&fields, "grant_type")? {
        "authorization_code" => {
            check_resource(&dashboard, &fields)?;
            let code = required(&fields, "code")?;
            let redirect_uri = required(&fields, "redirect_uri")?;
            let verifier = required(&fields, "code_verifier")?;
            Ok(
                match dashboard
                    .issuer
                    .exchange_code(code, &client, redirect_uri, verifier)
                {
                    Ok(Exchange::Issued(issued, scope)) => issued_answer(&issued, Some(&scope)),
                    Ok(Exchange::InvalidGrant(why)) => {
                        oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", why).into_response()
                    }
                    Err(_) => server_error(),
                },
            )
        }
        DEVICE_CODE_GRANT => {
            let code = required(&fields, "device_code")?;
            Ok(poll_answer(dashboard.issuer.poll_device(code, &client)))
        }
        "refresh_token" => {
            let token = required(&fields, "refresh_token")?;
            Ok(match dashboard.issuer.refresh(token, &client) {
                Ok(Renewal::Issued(issued)) => issued_answer(&issued, None),
                Ok(Renewal::InvalidGrant) => oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "the refresh token is invalid, expired, revoked, already used or another client's",
                )
                .into_response(),
                Err(_) => server_error(),
            })
        }
        other => Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            format!(
                "grant_type {other:?} is not supported; use authorization_code, \
                 {DEVICE_CODE_GRANT} or refresh_token"
            ),
        )),
    }
}

fn poll_answer(poll: anyhow::Result<Poll>) -> Response {
    let bad = |error: &'static str, description: &str| {
        oauth_error(StatusCode::BAD_REQUEST, error, description).into_response()
    };
    match poll {
        Ok(Poll::Issued(issued)) => issued_answer(&issued, None),
        Ok(Poll::Pending) => bad(
            "authorization_pending",
            "the user has not approved the code yet",
        ),
        Ok(Poll::SlowDown) => bad("slow_down", "polling too fast: wait 5 s more between polls"),
        Ok(Poll::Expired) => bad("expired_token", "the device code expired; start again"),
        Ok(Poll::Denied) => bad("access_denied", "the user denied the request"),
        Ok(Poll::InvalidGrant) => bad("invalid_grant", "unknown device code, or another client's"),
        Err(_) => server_error(),
    }
}

/// The token endpoint's answer; with the scope granted when the grant has
/// one (the authorization code grant's).
fn issued_answer(issued: &Issued, scope: Option<&Scope>) -> Response {
    let mut body = json!({
        "access_token": issued.access_token.expose(),
        "token_type": "Bearer",
        "expires_in": issued.expires_in,
        "refresh_token": issued.refresh_token.expose(),
    });
    if let Some(scope) = scope {
        body["scope"] = json!(scope.names());
    }
    no_store(body)
}

/// RFC 8707: a `resource` a client names must be the one resource this
/// server issues code-grant tokens for, `/mcp`.
fn check_resource(dashboard: &Dashboard, fields: &[(String, String)]) -> Result<(), OAuthError> {
    match field(fields, "resource")? {
        Some(resource) if resource.trim_end_matches('/') != dashboard.issuer.origin.resource() => {
            Err(oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                format!(
                    "resource {resource:?} is not served here; tokens are for {}",
                    dashboard.issuer.origin.resource()
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// The rate-limit subject of what every client's requests count towards.
const EVERYONE: &str = "*";

/// `POST /oauth/register` (RFC 7591): a public client's metadata in, its
/// id out. Counted per address in its own, small, rate limit.
async fn register(
    State(dashboard): State<Arc<Dashboard>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, OAuthError> {
    if let Some(refused) = limited(
        &dashboard,
        &address::subject(addr.ip()),
        Bucket::ClientRegistration,
    )
    .await
    {
        return Ok(refused);
    }
    // Everyone's registrations together, whatever addresses they come
    // from (each is kept a day): checked after the address's own limit,
    // so that one address cannot use up everyone's.
    if let Some(refused) = limited(&dashboard, EVERYONE, Bucket::AllClientRegistrations).await {
        return Ok(refused);
    }
    let is_json = has_content_type(&headers, "application/json");
    let metadata_error = |description: String| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            description,
        )
    };
    if !is_json {
        return Err(metadata_error("the body must be application/json".into()));
    }
    if body.len() > MAX_REGISTRATION_BYTES {
        return Err(metadata_error(format!(
            "the metadata must be at most {MAX_REGISTRATION_BYTES} bytes"
        )));
    }
    let metadata: ClientMetadata = serde_json::from_slice(&body)
        .map_err(|e| metadata_error(format!("the body is not client metadata: {e}")))?;
    let issuer = dashboard.issuer.clone();
    let Ok(Ok(registered)) =
        tokio::task::spawn_blocking(move || issuer.register_client(metadata)).await
    else {
        return Ok(server_error());
    };
    let client = registered.map_err(|refused| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            refused.code(),
            refused.description(),
        )
    })?;
    tracing::info!(client_id = %client.client_id, name = %client.name, %addr, "oauth client registered");
    let body = json!({
        "client_id": client.client_id,
        "client_id_issued_at": client.registered_at,
        "client_name": client.name,
        "redirect_uris": client.redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": Scope::all().names(),
    });
    Ok((StatusCode::CREATED, no_store(body)).into_response())
}

/// `GET /.well-known/oauth-authorization-server` (RFC 8414).
async fn metadata(State(dashboard): State<Arc<Dashboard>>) -> Response {
    let mut response = Json(server_metadata(dashboard.issuer.origin.origin())).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

/// What MCP clients read before they register and send the person to
/// consent: PKCE with S256 only, public clients (`none`), both ways of
/// registering, and the `iss` parameter on the redirect (RFC 9207).
pub fn server_metadata(issuer: &str) -> Value {
    let scopes: Vec<&str> = Permission::ALL.iter().map(|p| p.as_str()).collect();
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/oauth/authorize"),
        "token_endpoint": format!("{issuer}/oauth/token"),
        "registration_endpoint": format!("{issuer}/oauth/register"),
        "revocation_endpoint": format!("{issuer}/oauth/revoke"),
        "device_authorization_endpoint": format!("{issuer}/oauth/device_authorization"),
        "scopes_supported": scopes,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_CODE_GRANT],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": format!("{issuer}/v1/docs"),
    })
}

/// RFC 7009 §2.2: 200 whether or not the token was known.
async fn revoke(
    State(dashboard): State<Arc<Dashboard>>,
    OAuthForm(fields): OAuthForm,
) -> Result<Response, OAuthError> {
    let token = required(&fields, "token")?;
    Ok(match dashboard.issuer.revoke(token) {
        Ok(()) => (StatusCode::OK, [(header::CACHE_CONTROL, "no-store")]).into_response(),
        Err(_) => server_error(),
    })
}

fn server_error() -> Response {
    oauth_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "the server could not complete the request",
    )
    .into_response()
}

/// `https://host[:port]` as the client reached us (the verification page
/// is on the same server).
fn public_base(dashboard: &Dashboard, uri: &Uri, headers: &HeaderMap) -> String {
    // HTTP/2 carries the host in the URI's authority, HTTP/1.1 in `Host`.
    let host = uri
        .authority()
        .map(|a| a.as_str())
        .or_else(|| headers.get(header::HOST).and_then(|v| v.to_str().ok()))
        .filter(|h| {
            !h.is_empty()
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c))
        })
        .unwrap_or("localhost");
    format!(
        "{}://{host}",
        if dashboard.issuer.https() {
            "https"
        } else {
            "http"
        }
    )
}
