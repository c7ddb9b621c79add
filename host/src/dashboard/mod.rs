//! The web dashboard at `/dashboard`: server-rendered pages where a person
//! signs in, connects and disconnects tools (OAuth 2.0 with PKCE), issues
//! and revokes API tokens, registers webhooks and deletes their data.
//!
//! It sits outside `/v1` and its gate: [`guard`] is its own middleware
//! (sessions, CSRF, security headers on every page). One file per group of
//! pages: [`session`] (sign-in, sessions, passwords), [`sso`] (single
//! sign-on), [`tools`], [`activity`] (what Quarry did: the person's
//! questions and each tool's last day, from `usage`, drawn by `chart`),
//! [`tokens`], [`webhooks`], [`account`]; [`templates`] renders them.
//!
//! It is also the authorization server's front door, all of `/oauth/*`:
//! [`authorize`] (sign-in, then consent) and [`oauth_server`] (the
//! issuer's endpoints for clients, outside the guard). (Quarry as an OAuth
//! client of the vendors, connecting a tool, is [`connect`] and
//! `crate::oauth`.)

pub mod account;
pub mod activity;
pub mod authorize;
mod chart;
pub mod connect;
pub mod device;
mod logo;
pub mod oauth_server;
mod pending;
pub mod session;
mod settings;
pub mod sign_in;
pub mod sso;
pub mod templates;
pub mod tokens;
pub mod tools;
mod usage;
pub mod webhooks;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Result;
use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::config::DashboardConfig;
use crate::connectors::Registry;
use crate::deletion::Deletions;
use crate::issuer::Issuer;
use crate::services::Services;
use crate::webhooks::Webhooks;
use quarry_store::Store;

/// Largest form accepted.
const MAX_FORM_BYTES: usize = 16 * 1024;

/// Everything the dashboard's pages reach.
pub struct Dashboard {
    pub store: Arc<Store>,
    pub limiter: Arc<crate::limits::Limiter>,
    pub registry: Arc<Registry>,
    pub issuer: Arc<Issuer>,
    pub webhooks: Arc<Webhooks>,
    pub deletions: Arc<Deletions>,
    /// The archive (the person's query history) and the query service
    /// (asking a question again).
    pub services: Services,
    pub config: DashboardConfig,
    /// The host as an OAuth client of the vendors (connecting a tool).
    pub vendors: Arc<crate::oauth::Vendors>,
    /// Verified against for unknown emails, so that they cost the same.
    dummy_hash: String,
    /// Turns to check a password (argon2id), bounded so that a crowd of
    /// sign-ins cannot take the memory and the blocking threads.
    password_checks: tokio::sync::Semaphore,
    /// The operator's OpenID Connect provider, when single sign-on is set up.
    pub sso: Option<crate::oidc::Provider>,
}

impl Dashboard {
    pub fn new(services: Services, config: DashboardConfig) -> Result<Dashboard> {
        let http = services.vendors.http().clone();
        let sso = config
            .sso
            .clone()
            .map(|sso| crate::oidc::Provider::new(sso, http));
        sso::forget_states_kept_by_earlier_versions(&services.store)?;
        Ok(Dashboard {
            store: services.store.clone(),
            limiter: services.limiter.clone(),
            registry: services.registry.clone(),
            issuer: services.issuer.clone(),
            webhooks: services.webhooks.clone(),
            deletions: services.deletions.clone(),
            vendors: services.vendors.clone(),
            services,
            sso,
            config,
            dummy_hash: sign_in::hash_password(&quarry_store::random_hex(16))?,
            password_checks: tokio::sync::Semaphore::new(sign_in::password_check_turns()),
        })
    }
}

pub fn router(dashboard: Arc<Dashboard>) -> Router {
    Router::new()
        .route("/dashboard", get(tools::page))
        .route("/dashboard/", get(tools::page))
        .route("/dashboard/style.css", get(templates::stylesheet))
        .route("/dashboard/icon.svg", get(templates::icon))
        .route(
            "/dashboard/login",
            get(sign_in::login_page).post(sign_in::login),
        )
        .route("/dashboard/logout", post(sign_in::logout))
        .route("/dashboard/sso/start", get(sso::start))
        .route("/dashboard/sso/callback", get(sso::callback))
        .route("/dashboard/tools", get(tools::page))
        .route("/dashboard/tools/{id}/connect", post(connect::connect))
        .route(
            "/dashboard/tools/{id}/disconnect",
            post(connect::disconnect),
        )
        .route("/dashboard/activity", get(activity::page))
        .route(
            "/dashboard/activity/{number}/run",
            post(activity::run_again),
        )
        .route("/dashboard/oauth/callback", get(connect::callback))
        .route("/dashboard/tokens", get(tokens::page).post(tokens::issue))
        .route("/dashboard/tokens/{id}/revoke", post(tokens::revoke))
        .route(
            "/dashboard/assistants/{id}/disconnect",
            post(tokens::disconnect),
        )
        .route(
            "/oauth/authorize",
            get(authorize::page).post(authorize::decide),
        )
        .route(
            "/dashboard/webhooks",
            get(webhooks::page).post(webhooks::register),
        )
        .route("/dashboard/webhooks/{id}/remove", post(webhooks::remove))
        .route("/device", get(device::page).post(device::review))
        .route("/device/decide", post(device::decide))
        .route(
            "/dashboard/account/delete",
            get(account::confirm_page).post(account::delete),
        )
        .layer(axum::middleware::from_fn_with_state(
            dashboard.clone(),
            guard,
        ))
        .merge(oauth_server::routes())
        .with_state(dashboard)
}

/// The dashboard's spaces.
pub const SPACES: &[quarry_store::Declared] = &[
    session::SESSIONS.declared(),
    connect::STATES.declared(),
    sso::LINKS.declared(),
    sso::STATES_KEPT_BY_EARLIER_VERSIONS.declared(),
];

/// The peer's address, for the sign-in limits.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub std::net::IpAddr);

/// What every request to a dashboard page goes through (not the
/// [`oauth_server`] endpoints, which take no cookie): the session (from its
/// cookie, checked for expiry), the Origin check and the CSRF token on
/// every POST, and the security headers on every response.
pub async fn guard(
    State(dashboard): State<Arc<Dashboard>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = check(&dashboard, peer, request, next).await;
    secure(response.headers_mut());
    response
}

async fn check(dashboard: &Dashboard, peer: SocketAddr, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(Peer(peer.ip()));
    let session = session::from_headers(dashboard, &parts.headers);
    if let Some(session) = &session {
        parts.extensions.insert(session.clone());
    }
    if parts.method != Method::POST {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let origin = expected_origin(dashboard, &parts.headers, &parts.uri);
    if !same_origin(&parts.headers, origin.as_deref()) {
        return templates::message(
            StatusCode::FORBIDDEN,
            "Request refused",
            "This form was not sent from this site (the Origin or Referer does not match). \
             Go back to the dashboard and try again.",
        );
    }
    let bytes = match axum::body::to_bytes(body, MAX_FORM_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return templates::message(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Form too large",
                "The form sent is larger than the dashboard accepts.",
            );
        }
    };
    // Signing in is the one form without a session.
    if parts.uri.path() != "/dashboard/login" {
        let Some(session) = &session else {
            return Redirect::to("/dashboard/login").into_response();
        };
        let sent = form_field(&bytes, "csrf");
        if !sent.is_some_and(|sent| quarry_store::secret::constant_time_eq(&sent, &session.csrf)) {
            return templates::message(
                StatusCode::FORBIDDEN,
                "Request refused",
                "The form's security token is missing or out of date. Go back to the \
                 dashboard, reload the page and try again.",
            );
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The origin forms must come from: the configured public URL, else this
/// request's own authority over https.
pub fn expected_origin(
    dashboard: &Dashboard,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
) -> Option<String> {
    if let Some(url) = &dashboard.config.public_url {
        return Some(url.trim_end_matches('/').to_string());
    }
    let authority = uri
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string)
        })?;
    // A host name or address and a port, nothing else.
    if authority.is_empty()
        || !authority
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
    {
        return None;
    }
    Some(format!("https://{authority}"))
}

fn same_origin(headers: &HeaderMap, expected: Option<&str>) -> bool {
    let Some(expected) = expected else {
        return false;
    };
    if let Some(origin) = headers.get(header::ORIGIN) {
        return origin.to_str().is_ok_and(|o| o == expected);
    }
    // Without Origin (older browsers), the Referer must be one of ours.
    headers
        .get(header::REFERER)
        .and_then(|r| r.to_str().ok())
        .is_some_and(|r| r == expected || r.starts_with(&format!("{expected}/")))
}

fn form_field(bytes: &[u8], name: &str) -> Option<String> {
    url::form_urlencoded::parse(bytes)
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The headers of every dashboard response. Pages that send the browser
/// to a vendor widen `form-action` themselves (see [`tools::page`]).
fn secure(headers: &mut HeaderMap) {
    let set = |headers: &mut HeaderMap, name: header::HeaderName, value: &'static str| {
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    };
    set(headers, header::CONTENT_SECURITY_POLICY, templates::CSP);
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::REFERRER_POLICY, "same-origin");
    set(headers, header::CACHE_CONTROL, "no-store");
    set(
        headers,
        header::STRICT_TRANSPORT_SECURITY,
        "max-age=31536000",
    );
    headers.insert(
        header::HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
}
