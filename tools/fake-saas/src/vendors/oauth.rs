//! OAuth 2 authorize and token endpoints for every vendor, and revocation helpers.
//!
//! Authorize endpoints skip the consent screen: they answer 302 to `redirect_uri` with
//! `code` and `state`. The user is `alice` unless the request names another with
//! `fake_user=` (or GitHub's `login=`).

use std::time::{Duration, Instant};

use axum::http::Method;
use axum::response::Response;
use serde_json::{Value, json};

use crate::Shared;
use crate::TokenPair;
use crate::http::{self, Req};
use crate::tokens::{AuthCode, Vendor, pkce_ok};

/// `GET` authorize URL.
pub(crate) fn authorize(shared: &Shared, vendor: Vendor, req: &Req) -> Response {
    let p = |n: &str| req.param(n).filter(|v| !v.is_empty());
    let Some(client_id) = p("client_id") else {
        return http::html(
            400,
            "<html><body><h1>Missing client_id</h1><p>The authorization request has no client_id parameter.</p></body></html>",
        );
    };
    let Some(redirect_uri) = p("redirect_uri") else {
        return http::html(
            400,
            "<html><body><h1>Missing redirect_uri</h1><p>fake-saas needs a redirect_uri to send the code to.</p></body></html>",
        );
    };
    if p("response_type").is_some_and(|rt| rt != "code") {
        return http::redirect(&http::with_query(
            &redirect_uri,
            &[
                ("error", "unsupported_response_type"),
                ("state", &p("state").unwrap_or_default()),
            ],
        ));
    }
    let user = p("fake_user")
        .or_else(|| (vendor == Vendor::Github).then(|| p("login")).flatten())
        .unwrap_or_else(|| "alice".to_string());
    let scope = match vendor {
        Vendor::Slack => p("user_scope").or_else(|| p("scope")),
        _ => p("scope"),
    }
    .unwrap_or_else(|| vendor.default_scope().to_string());
    let scope = if vendor == Vendor::Linear {
        scope.replace(',', " ")
    } else {
        scope
    };
    let challenge = p("code_challenge").map(|c| {
        (
            c,
            p("code_challenge_method").unwrap_or_else(|| "plain".to_string()),
        )
    });
    let code = shared.tokens().create_code(AuthCode {
        vendor,
        user,
        client_id,
        redirect_uri: Some(redirect_uri.clone()),
        challenge,
        scope,
        expires_at: Instant::now() + Duration::from_secs(600),
    });
    let mut params: Vec<(&str, &str)> = vec![("code", &code)];
    let state = p("state");
    if let Some(s) = &state {
        params.push(("state", s));
    }
    http::redirect(&http::with_query(&redirect_uri, &params))
}

enum TokenError {
    InvalidRequest(String),
    InvalidClient(String),
    InvalidGrant(String),
    UnsupportedGrant(String),
}

/// `POST` token endpoint: `authorization_code` (with PKCE when a challenge was given)
/// and `refresh_token` grants.
pub(crate) fn token(shared: &Shared, vendor: Vendor, req: &Req) -> Response {
    match exchange(shared, vendor, req) {
        Ok((pair, user, refreshed)) => success(vendor, req, &pair, &user, refreshed),
        Err(e) => failure(vendor, req, e),
    }
}

fn exchange(
    shared: &Shared,
    vendor: Vendor,
    req: &Req,
) -> Result<(TokenPair, String, bool), TokenError> {
    let params = req.body_params();
    let get = |n: &str| {
        params
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
            .or_else(|| req.param(n).filter(|v| !v.is_empty()))
    };
    let (basic_id, basic_secret) = match req.basic() {
        Some((u, p)) => (Some(u), Some(p)),
        None => (None, None),
    };
    let client_id = get("client_id").or(basic_id);
    let client_secret = get("client_secret").or(basic_secret);
    let grant = get("grant_type").unwrap_or_else(|| {
        if get("refresh_token").is_some() && get("code").is_none() {
            "refresh_token".into()
        } else {
            "authorization_code".into()
        }
    });
    match grant.as_str() {
        "authorization_code" => {
            let code =
                get("code").ok_or_else(|| TokenError::InvalidRequest("code is required".into()))?;
            let verifier = get("code_verifier");
            if client_id.is_none() {
                return Err(TokenError::InvalidClient("client_id is required".into()));
            }
            if client_secret.is_none() && verifier.is_none() {
                return Err(TokenError::InvalidClient(
                    "client authentication failed: no client_secret".into(),
                ));
            }
            let mut tokens = shared.tokens();
            let c = tokens.take_code(&code).ok_or_else(|| {
                TokenError::InvalidGrant("the code is incorrect or expired".into())
            })?;
            if c.vendor != vendor {
                return Err(TokenError::InvalidGrant(
                    "the code was issued by another vendor".into(),
                ));
            }
            if client_id.as_deref() != Some(c.client_id.as_str()) {
                return Err(TokenError::InvalidGrant(
                    "the code was issued to another client".into(),
                ));
            }
            if c.redirect_uri
                .as_ref()
                .zip(get("redirect_uri"))
                .is_some_and(|(expected, given)| *expected != given)
            {
                return Err(TokenError::InvalidGrant(
                    "redirect_uri does not match the authorization request".into(),
                ));
            }
            if let Some(ch) = &c.challenge {
                match &verifier {
                    Some(v) if pkce_ok(ch, v) => {}
                    Some(_) => {
                        return Err(TokenError::InvalidGrant(
                            "code_verifier does not match the code_challenge".into(),
                        ));
                    }
                    None => {
                        return Err(TokenError::InvalidRequest(
                            "code_verifier is required".into(),
                        ));
                    }
                }
            }
            let pair = tokens.issue(
                vendor,
                &c.user,
                Some(vendor.default_expiry()),
                &c.scope,
                Some(c.client_id.clone()),
            );
            Ok((pair, c.user, false))
        }
        "refresh_token" => {
            let rt = get("refresh_token")
                .ok_or_else(|| TokenError::InvalidRequest("refresh_token is required".into()))?;
            let (pair, user) = shared
                .tokens()
                .refresh(vendor, &rt, client_id.as_deref())
                .map_err(|e| TokenError::InvalidGrant(e.into()))?;
            Ok((pair, user, true))
        }
        other => Err(TokenError::UnsupportedGrant(format!(
            "grant_type {other} is not supported"
        ))),
    }
}

pub(crate) fn slack_user_id(user: &str) -> String {
    let mut s: String = user
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .take(8)
        .collect();
    while s.len() < 8 {
        s.push('0');
    }
    format!("U0{s}")
}

fn success(vendor: Vendor, req: &Req, pair: &TokenPair, user: &str, refreshed: bool) -> Response {
    let expires = pair.expires_in.map(|d| d.as_secs());
    match vendor {
        Vendor::Github => {
            let fields: Vec<(&str, String)> = vec![
                ("access_token", pair.access_token.clone()),
                ("expires_in", expires.unwrap_or(28800).to_string()),
                ("refresh_token", pair.refresh_token.clone()),
                ("refresh_token_expires_in", "15897600".into()),
                ("scope", pair.scope.clone()),
                ("token_type", "bearer".into()),
            ];
            if req.accepts_json() {
                let mut m = serde_json::Map::new();
                for (k, v) in fields {
                    let v = if k.ends_with("expires_in") {
                        json!(v.parse::<u64>().unwrap_or(0))
                    } else {
                        json!(v)
                    };
                    m.insert(k.into(), v);
                }
                http::json(200, &Value::Object(m))
            } else {
                let body = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", http::enc(v)))
                    .collect::<Vec<_>>()
                    .join("&");
                http::raw(
                    200,
                    "application/x-www-form-urlencoded; charset=utf-8",
                    body,
                )
            }
        }
        Vendor::Slack => {
            let authed = json!({
                "id": slack_user_id(user),
                "scope": pair.scope,
                "access_token": pair.access_token,
                "token_type": "user",
                "refresh_token": pair.refresh_token,
                "expires_in": expires,
            });
            let mut body = json!({
                "ok": true,
                "app_id": "A0FAKESAAS1",
                "authed_user": authed,
                "team": {"id": crate::dataset::SLACK_TEAM_ID, "name": "Acme"},
                "enterprise": null,
                "is_enterprise_install": false,
            });
            if refreshed {
                body["access_token"] = json!(pair.access_token);
                body["token_type"] = json!("user");
                body["refresh_token"] = json!(pair.refresh_token);
                body["expires_in"] = json!(expires);
                body["scope"] = json!(pair.scope);
                body["user_id"] = json!(slack_user_id(user));
            }
            http::json(200, &body)
        }
        Vendor::Notion => http::json(
            200,
            &json!({
                "access_token": pair.access_token,
                "token_type": "bearer",
                "refresh_token": pair.refresh_token,
                "expires_in": expires,
                "scope": pair.scope,
                "bot_id": crate::dataset::uuid(&format!("notion-bot:{user}")),
                "workspace_id": crate::dataset::NOTION_WORKSPACE_ID,
                "workspace_name": "Acme",
                "workspace_icon": null,
                "owner": {"type": "user", "user": {"object": "user", "id": crate::dataset::uuid(&format!("notion-login:{user}"))}},
                "duplicated_template_id": null,
                "request_id": http::request_id(),
            }),
        ),
        Vendor::Linear => http::json(
            200,
            &json!({
                "access_token": pair.access_token,
                "token_type": "Bearer",
                "expires_in": expires,
                "scope": pair.scope,
                "refresh_token": pair.refresh_token,
            }),
        ),
        Vendor::Jira | Vendor::Confluence => http::json(
            200,
            &json!({
                "access_token": pair.access_token,
                "expires_in": expires,
                "token_type": "Bearer",
                "refresh_token": pair.refresh_token,
                "scope": pair.scope,
            }),
        ),
        // Box's AccessToken (openapi.json): no scope unless restricted.
        Vendor::Box => http::json(
            200,
            &json!({
                "access_token": pair.access_token,
                "expires_in": expires,
                "token_type": "bearer",
                "restricted_to": [],
                "refresh_token": pair.refresh_token,
                "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            }),
        ),
        // Google returns the refresh token on the code exchange; the fake
        // rotates refresh tokens, so it returns the new one on refresh too.
        Vendor::GoogleDrive | Vendor::Gmail | Vendor::GoogleCalendar => http::json(
            200,
            &json!({
                "access_token": pair.access_token,
                "expires_in": expires,
                "refresh_token": pair.refresh_token,
                "refresh_token_expires_in": 15_552_000,
                "scope": pair.scope,
                "token_type": "Bearer",
            }),
        ),
        Vendor::Zendesk => http::json(
            200,
            &json!({
                "access_token": pair.access_token,
                "token_type": "bearer",
                "scope": pair.scope.replace(' ', ","),
                "refresh_token": pair.refresh_token,
                "expires_in": expires,
                "refresh_token_expires_in": 2_592_000,
            }),
        ),
        Vendor::Hubspot => http::json(
            200,
            &json!({
                "token_type": "bearer",
                "refresh_token": pair.refresh_token,
                "access_token": pair.access_token,
                "expires_in": expires,
            }),
        ),
        // Salesforce says where the org lives, and no lifetime (the org's
        // session timeout applies); a refresh returns no new refresh token.
        Vendor::Salesforce => {
            let mut body = json!({
                "access_token": pair.access_token,
                "signature": http::request_id(),
                "scope": pair.scope,
                "instance_url": crate::dataset::SALESFORCE_INSTANCE,
                "id": format!(
                    "https://login.salesforce.com/id/{}/005{}",
                    crate::dataset::SALESFORCE_ORG_ID,
                    &crate::dataset::uuid(user).replace('-', "")[..15]
                ),
                "token_type": "Bearer",
                "issued_at": (crate::time::now_unix() * 1000).to_string(),
            });
            if !refreshed {
                body["refresh_token"] = json!(pair.refresh_token);
            }
            http::json(200, &body)
        }
        // docs.sentry.io/api/auth/, "OAuth2": the response's example.
        Vendor::Sentry => {
            let person = crate::dataset::people()
                .iter()
                .find(|p| p.slack_username == user);
            let expires_at = crate::time::now_unix() + expires.unwrap_or(2_591_999) as i64;
            http::json(
                200,
                &json!({
                    "access_token": pair.access_token,
                    "refresh_token": pair.refresh_token,
                    "expires_in": expires,
                    "expires_at": crate::time::rfc3339(expires_at),
                    "token_type": "bearer",
                    "scope": pair.scope,
                    "user": {
                        "id": crate::dataset::uuid(&format!("sentry-user:{user}"))[..7].to_string(),
                        "name": person.map_or(user, |p| p.name.as_str()),
                        "email": person.map_or_else(|| format!("{user}@acme-shop.example"), |p| p.email.clone()),
                    },
                }),
            )
        }
        Vendor::Microsoft365 => http::json(
            200,
            &json!({
                "token_type": "Bearer",
                "scope": pair.scope,
                "expires_in": expires,
                "ext_expires_in": expires,
                "access_token": pair.access_token,
                "refresh_token": pair.refresh_token,
            }),
        ),
        Vendor::Asana => {
            let person = crate::dataset::people()
                .iter()
                .find(|p| p.slack_username == user);
            let gid = person.map_or_else(
                || crate::dataset::asana_gid(&format!("user:{user}")),
                crate::dataset::asana_user_gid,
            );
            let mut body = json!({
                "access_token": pair.access_token,
                "token_type": "bearer",
                "expires_in": expires,
                "data": {
                    "id": gid,
                    "gid": gid,
                    "name": person.map_or(user, |p| p.name.as_str()),
                    "email": person.map_or_else(|| format!("{user}@acme-shop.example"), |p| p.email.clone()),
                },
            });
            if !refreshed {
                body["refresh_token"] = json!(pair.refresh_token);
            }
            http::json(200, &body)
        }
        // Trello's legacy flow hands the token to the browser; this answer
        // only serves tokens minted by the fake's own helpers.
        Vendor::Trello => http::json(200, &json!({ "token": pair.access_token })),
        // Intercom's tokens do not expire and have no refresh token.
        Vendor::Intercom => http::json(
            200,
            &json!({
                "token_type": "Bearer",
                "token": pair.access_token,
                "access_token": pair.access_token,
            }),
        ),
    }
}

fn failure(vendor: Vendor, req: &Req, e: TokenError) -> Response {
    let (code, desc) = match &e {
        TokenError::InvalidRequest(d) => ("invalid_request", d.clone()),
        TokenError::InvalidClient(d) => ("invalid_client", d.clone()),
        TokenError::InvalidGrant(d) => ("invalid_grant", d.clone()),
        TokenError::UnsupportedGrant(d) => ("unsupported_grant_type", d.clone()),
    };
    match vendor {
        Vendor::Github => {
            let (code, uri) = match &e {
                TokenError::InvalidGrant(_) if req.body_or_query("refresh_token").is_some() => (
                    "bad_refresh_token",
                    "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors",
                ),
                TokenError::InvalidGrant(_) | TokenError::InvalidRequest(_) => (
                    "bad_verification_code",
                    "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code",
                ),
                TokenError::InvalidClient(_) => (
                    "incorrect_client_credentials",
                    "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials",
                ),
                TokenError::UnsupportedGrant(_) => (
                    "unsupported_grant_type",
                    "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors",
                ),
            };
            let body = json!({"error": code, "error_description": desc, "error_uri": uri});
            if req.accepts_json() {
                http::json(200, &body)
            } else {
                http::raw(
                    200,
                    "application/x-www-form-urlencoded; charset=utf-8",
                    format!(
                        "error={code}&error_description={}&error_uri={}",
                        http::enc(&desc),
                        http::enc(uri)
                    ),
                )
            }
        }
        Vendor::Slack => {
            let code = match &e {
                TokenError::InvalidGrant(_) if req.body_or_query("refresh_token").is_some() => {
                    "invalid_refresh_token"
                }
                TokenError::InvalidGrant(_) => "invalid_code",
                TokenError::InvalidClient(_) => "invalid_client_id",
                TokenError::InvalidRequest(_) => "invalid_arguments",
                TokenError::UnsupportedGrant(_) => "invalid_grant_type",
            };
            http::json(200, &json!({"ok": false, "error": code, "detail": desc}))
        }
        Vendor::Notion
        | Vendor::Linear
        | Vendor::GoogleDrive
        | Vendor::Gmail
        | Vendor::GoogleCalendar
        | Vendor::Zendesk
        | Vendor::Hubspot
        | Vendor::Salesforce
        | Vendor::Microsoft365
        | Vendor::Asana
        | Vendor::Trello
        | Vendor::Intercom
        | Vendor::Box
        | Vendor::Sentry => {
            let status = if matches!(e, TokenError::InvalidClient(_)) {
                401
            } else {
                400
            };
            http::json(status, &json!({"error": code, "error_description": desc}))
        }
        Vendor::Jira | Vendor::Confluence => {
            let status = match e {
                TokenError::InvalidGrant(_) => 403,
                TokenError::InvalidClient(_) => 401,
                _ => 400,
            };
            http::json(status, &json!({"error": code, "error_description": desc}))
        }
    }
}

/// The token to revoke from a form or JSON body (`token`), else the bearer token.
pub(crate) fn token_to_revoke(req: &Req, field: &str) -> Option<String> {
    req.body_params()
        .into_iter()
        .find(|(k, _)| k == field)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
        .or_else(|| req.param(field).filter(|v| !v.is_empty()))
        .or_else(|| req.bearer())
}

/// RFC 7009 revocation for a vendor's OAuth server: the token from the body, the
/// query or the bearer header. An unknown token is not an error (200); no token at all
/// is a 400 `invalid_request` that says so in the vendor's words (`missing`).
pub(crate) fn revoke(shared: &Shared, vendor: Vendor, req: &Req, missing: &str) -> Response {
    match token_to_revoke(req, "token") {
        Some(t) => {
            shared.tokens().revoke(vendor, &t);
            http::empty(200)
        }
        None => http::json(
            400,
            &json!({"error": "invalid_request", "error_description": missing}),
        ),
    }
}

/// A vendor's web app, of which the fake plays only the consent page: its host, and
/// the app's page for any other path.
type WebApp = (&'static str, &'static str);

const HUBSPOT_APP: WebApp = (
    "app.hubspot.com",
    "<html><body><h1>Not found</h1></body></html>",
);
const LINEAR_APP: WebApp = ("linear.app", "<html><body>Not Found</body></html>");
const BOX_APP: WebApp = (
    "account.box.com",
    "<html><body><h1>Page not found</h1></body></html>",
);
const INTERCOM_APP: WebApp = (
    "app.intercom.com",
    "<html><body><h1>Page not found</h1></body></html>",
);

/// The OAuth servers routed here, before the vendor's module sees the request (the
/// other vendors' differ more, and their modules route them): the vendor; its web app
/// when the app's consent page authorizes; the authorize path (`GET`, on any of the
/// vendor's hosts when there is no web app); the token paths (`POST`). Revocation is
/// each vendor's own.
#[rustfmt::skip] // one vendor a line
const SERVERS: &[(Vendor, Option<WebApp>, &str, &[&str])] = &[
    (Vendor::Notion, None, "/v1/oauth/authorize", &["/v1/oauth/token"]),
    (Vendor::Zendesk, None, "/oauth/authorizations/new", &["/oauth/tokens"]),
    (Vendor::Salesforce, None, "/services/oauth2/authorize", &["/services/oauth2/token"]),
    (Vendor::Asana, None, "/-/oauth_authorize", &["/-/oauth_token"]),
    (Vendor::Hubspot, Some(HUBSPOT_APP), "/oauth/authorize", &["/oauth/2026-03/token", "/oauth/v1/token"]),
    (Vendor::Linear, Some(LINEAR_APP), "/oauth/authorize", &["/oauth/token"]),
    (Vendor::Intercom, Some(INTERCOM_APP), "/oauth", &["/auth/eagle/token"]),
    (Vendor::Box, Some(BOX_APP), "/api/oauth2/authorize", &["/oauth2/token"]),
    (Vendor::Sentry, None, "/oauth/authorize", &["/oauth/token"]),
];

/// The answer to `req` if it is for one of the [`SERVERS`], or for a web app of theirs.
pub(crate) fn serve(shared: &Shared, vendor: Vendor, req: &Req) -> Option<Response> {
    let (_, web_app, authorize_path, token_paths) = SERVERS.iter().find(|s| s.0 == vendor)?;
    let path = req.path.trim_end_matches('/');
    let wants_consent = req.method == Method::GET && path == *authorize_path;
    match web_app {
        Some((host, not_found_page)) if req.host == *host => {
            return Some(if wants_consent {
                authorize(shared, vendor, req)
            } else {
                http::html(404, *not_found_page)
            });
        }
        None if wants_consent => return Some(authorize(shared, vendor, req)),
        _ => {}
    }
    let wants_token = req.method == Method::POST && token_paths.contains(&path);
    wants_token.then(|| token(shared, vendor, req))
}
