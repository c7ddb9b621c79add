//! What every request to `/mcp` passes before rmcp sees it, in order:
//! the `Host` and `Origin` checks (403), the bearer token for the MCP
//! audience ([`Identity::at`]), the rate limits of the "mcp" bucket (429,
//! or anonymous requests by address), the token required (401 with the
//! RFC 9728 challenge), and the body: bounded, one JSON-RPC message (a
//! batch is refused), and a tool call the token's scope does not cover
//! (403 `insufficient_scope`, which names the scope to ask for). Every answer carries a request id and the six
//! rate-limit headers, like `/v1`'s, and is logged and counted.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::Mcp;
use super::caller::{McpCaller, permission_of};
use crate::access::{Identity, charge_identity, decorate, read_body};
use crate::error::{ApiError, ErrorType};
use crate::limits::{Bucket, Decision};
use quarry_store::{Audience, Permission, Scope, User, random_hex};

/// The rate-limit bucket of `/mcp` requests (tool calls that query also
/// draw on the query bucket, as `/v1/query` does).
pub const BUCKET: Bucket = Bucket::Other("mcp");

/// Layer: see the module's comment.
pub async fn gate(
    State(mcp): State<Arc<Mcp>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let request_id = format!("req_{}", random_hex(8));
    let method = request.method().clone();
    let (mut response, user, decision) = check(&mcp, peer, request, next).await;
    decorate(response.headers_mut(), &request_id, decision.as_ref());
    let status = response.status().as_u16();
    mcp.gate
        .metrics
        .observe_request("/mcp", status, started.elapsed());
    tracing::info!(
        request_id = %request_id,
        method = %method,
        route = "/mcp",
        status,
        user = user.as_ref().map_or("-", |u| u.id.as_str()),
        duration_ms = started.elapsed().as_millis() as u64,
        "request"
    );
    response
}

async fn check(
    mcp: &Mcp,
    peer: SocketAddr,
    request: Request,
    next: Next,
) -> (Response, Option<User>, Option<Decision>) {
    let (mut parts, body) = request.into_parts();
    if let Some(reason) = mcp.origin.refusal(&parts.headers, &parts.uri) {
        tracing::warn!(reason, "mcp: request refused (Host or Origin)");
        let refused = ApiError::new(ErrorType::Forbidden, reason);
        return (refused.into_response(), None, None);
    }
    let identity = Identity::at(&mcp.gate, &parts.headers, peer, Audience::Mcp);
    let user = match &identity {
        Identity::Valid(caller) => Some(caller.user.clone()),
        _ => None,
    };
    let bucket = match identity {
        Identity::Valid(_) | Identity::Unchecked { .. } => BUCKET,
        _ => Bucket::Anonymous,
    };
    let decision = match charge_identity(&mcp.gate, Some(&identity), bucket, "/mcp").await {
        Ok(decision) => decision,
        Err(refusal) => {
            let decision = refusal.decision;
            return (refusal.into_response(), user, Some(decision));
        }
    };
    let answer = |response: Response| (response, user.clone(), Some(decision));
    match identity {
        Identity::Valid(caller) => {
            parts.extensions.insert(McpCaller {
                user: caller.user,
                scope: caller.scope,
            });
        }
        Identity::Missing { .. } => {
            return answer(challenge(mcp, None));
        }
        Identity::Expired { .. } => {
            return answer(challenge(mcp, Some("the bearer token has expired")));
        }
        _ => {
            return answer(challenge(
                mcp,
                Some("the bearer token is not valid for this resource"),
            ));
        }
    }
    if parts.method != Method::POST {
        // rmcp answers GET and DELETE (405, stateless: no stream, no
        // session to end).
        return answer(next.run(Request::from_parts(parts, body)).await);
    }
    let bytes = match read_body(&parts.headers, body).await {
        Ok(bytes) => bytes,
        Err(error) => return answer(error.into_response()),
    };
    if is_batch(&bytes) {
        return answer(batch_refused());
    }
    // Read once, for the scope and the older protocol's cancellation.
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return answer(parse_error());
    };
    if let Some(needed) = scope_missing(&parts, &message) {
        return answer(insufficient_scope(mcp, needed));
    }
    accept_json(&mut parts.headers);
    let request = super::cancel::track(mcp, &mut parts, &message);
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    drop(request);
    answer(response)
}

/// 401 with the challenge that leads a client to the protected resource
/// metadata (RFC 9728 §5.1); `problem` for a token that was sent but is
/// not good here (RFC 6750 `invalid_token`).
fn challenge(mcp: &Mcp, problem: Option<&str>) -> Response {
    let metadata = super::metadata::url(&mcp.origin);
    let (value, message) = match problem {
        None => (
            format!("Bearer resource_metadata=\"{metadata}\""),
            "a bearer token for this MCP server is required".to_string(),
        ),
        Some(problem) => (
            format!(
                "Bearer error=\"invalid_token\", error_description=\"{problem}\", resource_metadata=\"{metadata}\""
            ),
            format!(
                "{problem}; MCP needs a token issued for {}",
                mcp.origin.resource()
            ),
        ),
    };
    with_challenge(ApiError::new(ErrorType::Unauthorized, message), &value)
}

/// `error` with its `WWW-Authenticate` challenge, which browser clients may
/// read.
fn with_challenge(error: ApiError, challenge: &str) -> Response {
    let mut response = error.into_response();
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response.headers_mut().insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("WWW-Authenticate"),
    );
    response
}

/// The permission a `tools/call` needs that the caller's token lacks.
fn scope_missing(
    parts: &axum::http::request::Parts,
    message: &serde_json::Value,
) -> Option<Permission> {
    let caller = parts.extensions.get::<McpCaller>()?;
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let tool = message.pointer("/params/name")?.as_str()?;
    let needed = permission_of(tool)?;
    (!caller.scope.allows(needed)).then_some(needed)
}

/// 403 with the challenge that names the scope to ask for (the MCP
/// authorization spec's step-up: RFC 6750 §3.1 `insufficient_scope`).
fn insufficient_scope(mcp: &Mcp, needed: Permission) -> Response {
    let metadata = super::metadata::url(&mcp.origin);
    // No quote in it: it goes inside the header's quoted string too.
    let message = format!(
        "the token's scope does not include {}, which this tool needs; authorize again \
         asking for it",
        needed.as_str()
    );
    let value = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata}\", \
         error_description=\"{message}\"",
        Scope::all().names()
    );
    with_challenge(ApiError::new(ErrorType::Forbidden, message), &value)
}

/// Whether the body is a JSON array (a JSON-RPC batch, which MCP removed
/// in 2025-06-18: one message per POST).
fn is_batch(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'[')
}

/// A body that is not JSON: JSON-RPC's parse error, as JSON.
fn parse_error() -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32700, "message": "Parse error: the body is not JSON" },
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// A POST whose `Accept` admits JSON (`*/*`, `application/*`,
/// `application/json`, or no `Accept` at all, which admits anything) is
/// answered with JSON. rmcp wants both `application/json` and
/// `text/event-stream` listed, as the specification asks of clients, and
/// answers 406 otherwise; HTTP-wise those clients accept the JSON this
/// server answers with (`with_json_response`), so they are served.
fn accept_json(headers: &mut axum::http::HeaderMap) {
    let admits_json = {
        let mut values = headers.get_all(header::ACCEPT).iter().peekable();
        values.peek().is_none()
            || values
                .filter_map(|value| value.to_str().ok())
                .flat_map(|value| value.split(','))
                .map(|range| range.split(';').next().unwrap_or_default().trim())
                .any(|range| {
                    ["*/*", "application/*", "application/json"]
                        .iter()
                        .any(|json| range.eq_ignore_ascii_case(json))
                })
    };
    if admits_json {
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
}

fn batch_refused() -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32600,
            "message": "JSON-RPC batches are not supported: send one message per POST",
        },
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accept_that_admits_json_is_served_json() {
        let served = |accept: Option<&str>| {
            let mut headers = axum::http::HeaderMap::new();
            if let Some(accept) = accept {
                headers.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
            }
            accept_json(&mut headers);
            headers[header::ACCEPT] == "application/json, text/event-stream"
        };
        assert!(served(None));
        assert!(served(Some("*/*")));
        assert!(served(Some("text/html, Application/*;q=0.5")));
        assert!(served(Some("application/json")));
        assert!(!served(Some("text/event-stream")));
        assert!(!served(Some("text/html")));
    }

    #[test]
    fn an_array_is_a_batch_and_an_object_is_not() {
        assert!(is_batch(b" \n[{\"jsonrpc\":\"2.0\"}]"));
        assert!(!is_batch(b"{\"jsonrpc\":\"2.0\",\"id\":1}"));
        assert!(!is_batch(b""));
    }
}
