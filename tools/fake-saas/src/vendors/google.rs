//! Google's OAuth server (accounts.google.com, oauth2.googleapis.com), shared by
//! Drive, Gmail and Calendar, and Google's JSON error shape.
//!
//! The products are separate vendors here (tokens `fake-google-drive-<user>`,
//! `fake-gmail-<user>`, `fake-google-calendar-<user>`): the authorize request's `scope`
//! says which one a code is for (a Gmail scope → Gmail, a Calendar scope → Calendar), and
//! the token and revoke endpoints follow the code or token they are given.

use axum::http::Method;
use axum::response::Response;
use serde_json::json;

use super::oauth;
use crate::Shared;
use crate::http::{self, Req};
use crate::tokens::Vendor;

/// `{"error": {"code", "message", "errors": [{"message", "domain", "reason"}], "status"}}`.
pub(crate) fn google_error(code: u16, message: &str, reason: &str, status: &str) -> Response {
    let domain = if reason.contains("RateLimit") || reason == "rateLimitExceeded" {
        "usageLimits"
    } else {
        "global"
    };
    http::json(
        code,
        &json!({
            "error": {
                "code": code,
                "message": message,
                "errors": [{"message": message, "domain": domain, "reason": reason}],
                "status": status,
            }
        }),
    )
}

pub(crate) fn unauthorized() -> Response {
    let mut r = google_error(
        401,
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        "authError",
        "UNAUTHENTICATED",
    );
    http::set(
        &mut r,
        "www-authenticate",
        "Bearer realm=\"https://accounts.google.com/\", error=\"invalid_token\"",
    );
    r
}

pub(crate) fn not_found(message: &str) -> Response {
    google_error(404, message, "notFound", "NOT_FOUND")
}

pub(crate) fn bad_request(message: &str) -> Response {
    google_error(400, message, "invalid", "INVALID_ARGUMENT")
}

/// Google's error for a status (faults), for each of Google's APIs alike.
pub(crate) fn error(status: u16) -> Response {
    match status {
        400 => bad_request("Invalid Value"),
        401 => unauthorized(),
        403 => google_error(
            403,
            "Request had insufficient authentication scopes.",
            "insufficientPermissions",
            "PERMISSION_DENIED",
        ),
        404 => not_found("Requested entity was not found."),
        429 => google_error(
            429,
            "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service.",
            "rateLimitExceeded",
            "RESOURCE_EXHAUSTED",
        ),
        500 => google_error(
            500,
            "Internal error encountered.",
            "backendError",
            "INTERNAL",
        ),
        503 => google_error(
            503,
            "The service is currently unavailable.",
            "backendError",
            "UNAVAILABLE",
        ),
        s => google_error(
            s,
            http::status(s).canonical_reason().unwrap_or("Error"),
            "backendError",
            "UNKNOWN",
        ),
    }
}

/// The Google vendor a scope list asks for: Gmail if it names a Gmail scope.
fn vendor_of_scope(scope: Option<String>) -> Vendor {
    match scope {
        Some(s) if s.contains("gmail") => Vendor::Gmail,
        Some(s) if s.contains("auth/calendar") => Vendor::GoogleCalendar,
        _ => Vendor::GoogleDrive,
    }
}

/// The vendor of the code or token a request presents, among Google's.
fn vendor_of_grant(shared: &Shared, req: &Req) -> Vendor {
    let tokens = shared.tokens();
    let from_code = req
        .body_or_query("code")
        .and_then(|c| tokens.code_vendor(&c));
    let from_token = ["refresh_token", "token"]
        .iter()
        .filter_map(|f| req.body_or_query(f))
        .find_map(|t| tokens.info(&t).map(|i| i.vendor));
    from_code
        .or(from_token)
        .filter(|v| {
            matches!(
                v,
                Vendor::GoogleDrive | Vendor::Gmail | Vendor::GoogleCalendar
            )
        })
        .unwrap_or(Vendor::GoogleDrive)
}

/// accounts.google.com and oauth2.googleapis.com.
pub(crate) fn handle(shared: &Shared, req: &Req) -> Response {
    let path = req.path.trim_end_matches('/');
    match (req.host.as_str(), &req.method, path) {
        ("accounts.google.com", &Method::GET, "/o/oauth2/v2/auth" | "/o/oauth2/auth") => {
            oauth::authorize(shared, vendor_of_scope(req.param("scope")), req)
        }
        ("oauth2.googleapis.com", &Method::POST, "/token") => {
            oauth::token(shared, vendor_of_grant(shared, req), req)
        }
        ("oauth2.googleapis.com", &Method::POST | &Method::GET, "/revoke") => {
            let Some(token) = oauth::token_to_revoke(req, "token") else {
                return http::json(
                    400,
                    &json!({"error": "invalid_request", "error_description": "Missing required parameter: token"}),
                );
            };
            let vendor = vendor_of_grant(shared, req);
            if shared.tokens().revoke(vendor, &token) {
                http::json(200, &json!({}))
            } else {
                http::json(
                    400,
                    &json!({"error": "invalid_token", "error_description": "Token expired or revoked"}),
                )
            }
        }
        _ => not_found("Not Found"),
    }
}
