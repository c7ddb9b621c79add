//! The TLS accept loop, request recording, faults, latency and the `/_fake/` control API.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

use crate::chaos::{self, Chaos, Injected};
use crate::http::{self, Req};
use crate::{Fault, HOSTS, RecordedRequest, RecordedResponse, Shared};

/// Largest request body accepted (bigger bodies get 413).
const MAX_BODY: usize = 32 * 1024 * 1024;

pub(crate) async fn serve(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    shared: Arc<Shared>,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let app = Router::new().fallback(handle).with_state(shared);
    serve_app(listener, tls, app, stop).await;
}

/// Serves `app` over TLS until `stop` changes, then lets the connections
/// in flight finish (up to 2 s).
pub(crate) async fn serve_app(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    app: Router,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let acceptor = TlsAcceptor::from(tls);
    let graceful = GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (tcp, peer) = match accepted {
                    Ok(x) => x,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let service = TowerToHyperService::new(app.clone());
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let tls = match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await {
                        Ok(Ok(s)) => s,
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "TLS handshake failed");
                            return;
                        }
                        Err(_) => return,
                    };
                    let builder = auto::Builder::new(TokioExecutor::new());
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
                    if let Err(e) = watcher.watch(conn.into_owned()).await {
                        tracing::debug!(%peer, error = %e, "connection error");
                    }
                });
            }
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(2), graceful.shutdown()).await;
}

/// The request's host: the URI authority (HTTP/2, absolute-form) or the Host header,
/// without port, lower case.
pub(crate) fn host_of(req: &Request) -> String {
    let raw = req
        .uri()
        .authority()
        .map(|a| a.host().to_string())
        .or_else(|| {
            req.headers()
                .get("host")
                .and_then(|h| h.to_str().ok())
                .map(|h| strip_port(h).to_string())
        })
        .unwrap_or_default();
    raw.trim_end_matches('.').to_ascii_lowercase()
}

fn strip_port(h: &str) -> &str {
    if h.starts_with('[') {
        return h.split(']').next().map(|s| &s[1..]).unwrap_or(h);
    }
    match h.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => h,
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let host = host_of(&request);
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return http::json(413, &json!({"message": "request body too large"})),
    };
    let mut req = Req {
        method: parts.method,
        host,
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: parts.headers,
        body,
        page_cap: None,
    };
    if req.path == "/_fake" || req.path.starts_with("/_fake/") {
        return control(&shared, &req);
    }
    // `/_vendor/<host>/<path>`: a vendor addressed by path, for a browser
    // that reaches the fake by its address (the demo's authorize pages).
    if let Some(rest) = req.path.strip_prefix("/_vendor/") {
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        req.host = host.to_ascii_lowercase();
        req.path = format!("/{path}");
    }
    let _in_flight = shared.concurrency.enter();
    let place = shared.record(RecordedRequest {
        method: req.method.to_string(),
        host: req.host.clone(),
        path: req.path.clone(),
        query: req.query.clone(),
        headers: http::header_pairs(&req.headers),
        body: req.body.to_vec(),
        received_ms: shared.started.elapsed().as_millis() as u64,
        response: None,
    });
    let fault = shared.take_fault(&req.host);
    req.page_cap = fault.as_ref().and_then(|f| f.max_page_size);
    let mut delay = shared.latency();
    if let Some(d) = fault.as_ref().and_then(|f| f.latency) {
        delay += d;
    }
    // A fault set for the host wins; otherwise the chaos may inject one.
    let injected = match fault {
        Some(_) => Injected::Nothing,
        None => shared.chaos.next(),
    };
    if let Injected::Spike(d) = injected {
        delay += d;
    }
    let limited = lock_rate(&shared)
        .as_mut()
        .and_then(|windows| windows.charge(&req));
    let response = match (fault, injected) {
        (_, _) if limited.is_some() => {
            let limited = limited.expect("checked");
            crate::vendors::error_response(&req, limited.status, Some(limited.retry_after))
        }
        (Some(f), _)
            if f.redirect_to.is_some()
                || f.status.is_some()
                || f.oversize_bytes.is_some()
                || f.body.is_some() =>
        {
            fault_response(&req, &f)
        }
        (_, Injected::ServerError) => crate::vendors::error_response(&req, 500, None),
        (_, Injected::Throttle(seconds)) => {
            crate::vendors::error_response(&req, 429, Some(seconds))
        }
        _ => crate::vendors::dispatch(&shared, &req),
    };
    let response = recorded(&shared, place, &req, response).await;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut response = match injected {
        Injected::Reset => chaos::broken_off(response).await,
        Injected::Trickle(over) => chaos::trickled(response, over).await,
        _ => response,
    };
    http::set(&mut response, "x-fake-saas", "1");
    response
}

fn lock_rate(shared: &Shared) -> std::sync::MutexGuard<'_, Option<crate::rate::Windows>> {
    shared.rate_limits.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records the answer to the request at `place`, and takes the fake's own
/// note of the records it returned off it.
async fn recorded(shared: &Shared, place: usize, req: &Req, response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let returned = http::take_returned(&mut parts.headers);
    shared.record_answer(
        place,
        req.method.as_str(),
        &req.path,
        RecordedResponse {
            status: parts.status.as_u16(),
            headers: http::header_pairs(&parts.headers),
            body: body.to_vec(),
            returned,
        },
    );
    Response::from_parts(parts, axum::body::Body::from(body))
}

fn fault_response(req: &Req, f: &Fault) -> Response {
    if let Some(loc) = &f.redirect_to {
        return http::redirect(loc);
    }
    if let Some(n) = f.oversize_bytes {
        return http::raw(
            f.status.unwrap_or(200),
            "application/json; charset=utf-8",
            http::oversize_json(n),
        );
    }
    let status = f.status.unwrap_or(200);
    let retry_after = f.retry_after.or_else(|| (status == 429).then_some(30));
    let mut r = crate::vendors::error_response(req, status, retry_after);
    if let Some(b) = &f.body {
        let headers = r.headers().clone();
        let content_type = if serde_json::from_str::<Value>(b).is_ok() {
            "application/json; charset=utf-8"
        } else {
            "text/plain; charset=utf-8"
        };
        r = http::raw(status, content_type, b.clone());
        for (k, v) in headers.iter() {
            if k != "content-type" && k != "content-length" {
                r.headers_mut().insert(k.clone(), v.clone());
            }
        }
    }
    r
}

/// Body of `POST /_fake/faults`.
#[derive(Deserialize)]
struct FaultSpec {
    host: String,
    status: Option<u16>,
    retry_after: Option<u32>,
    latency_ms: Option<u64>,
    count: Option<u32>,
    body: Option<String>,
    redirect_to: Option<String>,
    oversize_bytes: Option<usize>,
    max_page_size: Option<usize>,
}

#[derive(Deserialize)]
struct TokenSpec {
    vendor: String,
    user: String,
    expires_in: Option<u64>,
}

fn control(shared: &Shared, req: &Req) -> Response {
    let bad = |m: String| http::json(400, &json!({"error": m}));
    if let Some(name) = req.path.strip_prefix("/_fake/documents/") {
        return document(shared, req, name);
    }
    match (req.method.clone(), req.path.trim_end_matches('/')) {
        (Method::GET, "/_fake/health") => http::json(
            200,
            &json!({"ok": true, "addr": shared.addr.to_string(), "hosts": HOSTS}),
        ),
        (Method::GET, "/_fake/requests/count") => {
            let log = crate::lock(&shared.requests);
            http::json(
                200,
                &json!({"received": log.count(), "kept": log.kept_count()}),
            )
        }
        (Method::GET, "/_fake/requests") => {
            let r = crate::lock(&shared.requests).kept();
            http::json(200, &serde_json::to_value(r).unwrap_or(Value::Null))
        }
        (Method::DELETE, "/_fake/requests") => {
            crate::lock(&shared.requests).clear();
            http::empty(204)
        }
        (Method::POST, "/_fake/faults") => match serde_json::from_slice::<FaultSpec>(&req.body) {
            Ok(s) => {
                shared.set_fault(
                    &s.host,
                    Fault {
                        status: s.status,
                        retry_after: s.retry_after,
                        latency: s.latency_ms.map(Duration::from_millis),
                        count: s.count,
                        body: s.body,
                        redirect_to: s.redirect_to,
                        oversize_bytes: s.oversize_bytes,
                        max_page_size: s.max_page_size,
                    },
                );
                http::json(200, &json!({"ok": true}))
            }
            Err(e) => bad(e.to_string()),
        },
        (Method::DELETE, "/_fake/faults") => {
            crate::lock(&shared.faults).clear();
            http::empty(204)
        }
        (Method::POST, "/_fake/latency") => {
            match serde_json::from_slice::<Value>(&req.body)
                .ok()
                .and_then(|v| v.get("ms").and_then(Value::as_u64))
            {
                Some(ms) => {
                    *crate::lock(&shared.latency) = Duration::from_millis(ms);
                    http::json(200, &json!({"ok": true, "ms": ms}))
                }
                None => bad("expected {\"ms\": <integer>}".into()),
            }
        }
        (Method::GET, "/_fake/chaos") => http::json(200, &shared.chaos.report()),
        (Method::POST, "/_fake/chaos") => {
            let spec = serde_json::from_slice::<Value>(&req.body)
                .ok()
                .and_then(|v| v.get("spec").and_then(Value::as_str).map(str::to_string));
            let Some(spec) = spec else {
                return bad("expected {\"spec\": \"soak,seed=1\"} (or \"off\")".into());
            };
            match Chaos::parse(&spec) {
                Ok(chaos) => {
                    shared.chaos.set(chaos);
                    http::json(200, &shared.chaos.report())
                }
                Err(e) => bad(e),
            }
        }
        (Method::GET, "/_fake/ca.pem") => {
            http::raw(200, "application/x-pem-file", shared.ca_pem.clone())
        }
        (Method::POST, "/_fake/tokens") => match serde_json::from_slice::<TokenSpec>(&req.body) {
            Ok(s) => match crate::tokens::Vendor::parse(&s.vendor) {
                Some(v) => {
                    let pair = shared.tokens().issue(
                        v,
                        &s.user,
                        s.expires_in.map(Duration::from_secs),
                        v.default_scope(),
                        None,
                    );
                    http::json(200, &serde_json::to_value(pair).unwrap_or(Value::Null))
                }
                None => bad(format!("unknown vendor {}", s.vendor)),
            },
            Err(e) => bad(e.to_string()),
        },
        (Method::GET, "/_fake/revoked") => http::json(200, &json!(shared.tokens().revoked())),
        (Method::POST, "/_fake/oidc/identities") => {
            match serde_json::from_slice::<crate::vendors::okta::Identity>(&req.body) {
                Ok(identity) => {
                    shared.idp().put_identity(identity);
                    http::json(200, &json!({"ok": true}))
                }
                Err(e) => bad(e.to_string()),
            }
        }
        (Method::POST, "/_fake/oidc/rotate") => {
            http::json(200, &json!({"kid": shared.idp().rotate()}))
        }
        (Method::POST, "/_fake/oidc/misbehave") => {
            #[derive(Deserialize)]
            struct Next {
                next: crate::vendors::okta::Misbehaviour,
            }
            match serde_json::from_slice::<Next>(&req.body) {
                Ok(Next { next }) => {
                    shared.idp().misbehave(next);
                    http::json(200, &json!({"ok": true}))
                }
                Err(e) => bad(e.to_string()),
            }
        }
        _ => http::json(
            404,
            &json!({"error": "unknown control endpoint", "endpoints": [
                "GET /_fake/health", "GET /_fake/requests", "GET /_fake/requests/count",
                "DELETE /_fake/requests",
                "POST /_fake/faults", "DELETE /_fake/faults", "POST /_fake/latency",
                "GET /_fake/chaos", "POST /_fake/chaos",
                "GET /_fake/ca.pem", "POST /_fake/tokens", "GET /_fake/revoked",
                "POST /_fake/oidc/identities", "POST /_fake/oidc/rotate", "POST /_fake/oidc/misbehave",
                "POST /_fake/documents/<name>", "GET /_fake/documents/<name>"
            ]}),
        ),
    }
}

/// `POST` stores a document (any bytes) under `name`; `GET` serves it as
/// JSON, as a client that publishes its metadata does.
fn document(shared: &Shared, req: &Req, name: &str) -> Response {
    let mut documents = crate::lock(&shared.documents);
    match req.method {
        Method::POST => {
            documents.insert(name.to_string(), req.body.clone());
            http::json(200, &json!({"ok": true}))
        }
        Method::GET => match documents.get(name) {
            Some(body) => http::raw(200, "application/json", body.clone()),
            None => http::json(404, &json!({"error": "no such document"})),
        },
        _ => http::empty(405),
    }
}
