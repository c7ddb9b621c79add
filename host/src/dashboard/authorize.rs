//! `/oauth/authorize`: where an MCP client sends a person to let it use
//! Quarry as them (the authorization code grant with PKCE).
//!
//! Anyone can register a client with any https redirect URI, so this
//! server never sends a browser to one on its own: a request that is
//! wrong in any way is shown to the person as a page (RFC 9700 §4.11.2:
//! no open redirector), and only the person's answer, Allow or Deny, goes
//! back to the client. A person not signed in signs in first (password or
//! single sign-on) and comes back here. The consent page names the
//! client, where it sends the person back, and what it will be able to
//! do; allowing sends a single-use code there, with the `state` and this
//! server's `iss` (RFC 9207). The form carries the request's own
//! parameters only, checked again when it comes back.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, body::Bytes};
use maud::{Markup, html};
use url::Url;

use super::session::Session;
use super::settings::{origin_of, widen_form_action};
use super::sign_in::return_after_sign_in;
use super::templates::{internal_error, message, post_form, signed_in_page};
use super::{Dashboard, Peer};
use crate::issuer::authorization::{Consent, is_s256_challenge};
use crate::issuer::clients::Client;
use crate::issuer::documents::Documents;
use crate::limits::{Bucket, address};
use quarry_store::{Permission, Scope};

/// The parameters of an authorization request this server reads; the
/// consent form carries these, and nothing else, back.
const PARAMETERS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "state",
    "code_challenge",
    "code_challenge_method",
    "scope",
    "resource",
];

/// A request that passed every check: what the consent page shows and
/// what a code is granted for.
struct Checked {
    client: Arc<Client>,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    scope: Scope,
    /// The request's parameters, carried through the consent form.
    params: Vec<(String, String)>,
}

/// Why a request cannot go on: shown to the person.
struct Refusal(StatusCode, String);

/// `GET /oauth/authorize`: the consent page, or sign in first.
pub async fn page(
    State(dashboard): State<Arc<Dashboard>>,
    Extension(Peer(ip)): Extension<Peer>,
    session: Option<Extension<Session>>,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    let params = parse(query.as_deref().unwrap_or("").as_bytes());
    let checked = match check(&dashboard, &params, ip).await {
        Ok(checked) => checked,
        Err(refusal) => return refuse(refusal),
    };
    let Some(Extension(session)) = session else {
        let mut response = Redirect::to("/dashboard/login").into_response();
        let asked = uri.path_and_query().map_or("", |p| p.as_str());
        if let Some(cookie) = return_after_sign_in(asked) {
            response.headers_mut().append(header::SET_COOKIE, cookie);
        }
        return response;
    };
    consent_page(&dashboard, &session, &checked)
}

/// `POST /oauth/authorize`: the person's answer (the guard checked the
/// session, the Origin and the CSRF token).
pub async fn decide(
    State(dashboard): State<Arc<Dashboard>>,
    Extension(Peer(ip)): Extension<Peer>,
    session: Session,
    body: Bytes,
) -> Response {
    let mut params = parse(&body);
    let decisions: Vec<String> = take_all(&mut params, "decision");
    params.retain(|(name, _)| name != "csrf");
    let checked = match check(&dashboard, &params, ip).await {
        Ok(checked) => checked,
        Err(refusal) => return refuse(refusal),
    };
    let allowed = match decisions.as_slice() {
        [one] if one == "allow" => true,
        [one] if one == "deny" => false,
        _ => {
            return refuse(Refusal(
                StatusCode::BAD_REQUEST,
                "Choose Allow or Deny.".into(),
            ));
        }
    };
    if !allowed {
        tracing::info!(user = %session.user_id, client = %checked.client.client_id, "assistant refused");
        let mut pairs = vec![
            ("error", "access_denied"),
            ("error_description", "the person refused"),
        ];
        if let Some(state) = &checked.state {
            pairs.push(("state", state));
        }
        pairs.push(("iss", dashboard.issuer.origin.origin()));
        return redirect_with(&checked.redirect_uri, &pairs);
    }
    let consent = Consent {
        user_id: session.user_id.clone(),
        client_id: checked.client.client_id.clone(),
        client_name: checked.client.name.clone(),
        redirect_uri: checked.redirect_uri.clone(),
        code_challenge: checked.code_challenge.clone(),
        scope: checked.scope.clone(),
    };
    let issuer = dashboard.issuer.clone();
    let code = match tokio::task::spawn_blocking(move || issuer.grant_code(consent)).await {
        Ok(Ok(code)) => code,
        Ok(Err(error)) => return internal_error("granting an authorization code", error),
        Err(error) => return internal_error("granting an authorization code", error),
    };
    tracing::info!(user = %session.user_id, client = %checked.client.client_id, "assistant authorized");
    let mut pairs = vec![("code", code.as_str())];
    if let Some(state) = &checked.state {
        pairs.push(("state", state));
    }
    pairs.push(("iss", dashboard.issuer.origin.origin()));
    redirect_with(&checked.redirect_uri, &pairs)
}

async fn check(
    dashboard: &Dashboard,
    params: &[(String, String)],
    ip: std::net::IpAddr,
) -> Result<Checked, Refusal> {
    let page = |text: String| Refusal(StatusCode::BAD_REQUEST, text);
    // Others are ignored (RFC 6749 §3.1), and never carried.
    let params: Vec<(String, String)> = params
        .iter()
        .filter(|(name, _)| PARAMETERS.contains(&name.as_str()))
        .cloned()
        .collect();
    if let Some(name) = repeated(&params) {
        return Err(page(format!("The request names {name} more than once.")));
    }
    let get = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let client_id = get("client_id").ok_or_else(|| {
        page("The request does not say which application asks (client_id).".into())
    })?;
    let client = client(dashboard, &client_id, ip).await?;
    let named = |problem: &str| {
        page(format!(
            "{} sent an incorrect request: {problem}",
            client.name
        ))
    };
    let redirect_uri = match get("redirect_uri") {
        Some(uri) if client.allows_redirect(&uri) => uri,
        Some(uri) => {
            return Err(page(format!(
                "{} asked to send you back to {uri}, which is not one of its registered \
                 addresses. Nothing was sent there.",
                client.name
            )));
        }
        None => {
            return Err(named(
                "it does not say where to send you back (redirect_uri).",
            ));
        }
    };
    if get("response_type").as_deref() != Some("code") {
        return Err(named("response_type must be code."));
    }
    let code_challenge = match (get("code_challenge"), get("code_challenge_method")) {
        (Some(challenge), Some(method)) if method == "S256" && is_s256_challenge(&challenge) => {
            challenge
        }
        _ => {
            return Err(named(
                "PKCE is required, with a code_challenge and code_challenge_method S256.",
            ));
        }
    };
    let resource = dashboard.issuer.origin.resource();
    if let Some(asked) = get("resource")
        && !asked.trim_end_matches('/').eq_ignore_ascii_case(&resource)
    {
        return Err(named(&format!(
            "it asks for {asked}, which is not served here ({resource} is)."
        )));
    }
    let scope = match get("scope") {
        None => Scope::all(),
        Some(raw) => Scope::parse(&raw).map_err(|e| named(&format!("{e}.")))?,
    };
    let state = get("state");
    Ok(Checked {
        client,
        redirect_uri,
        state,
        code_challenge,
        scope,
        params,
    })
}

/// The client `client_id` names: a registered one, or the one its
/// metadata document describes (fetched unless kept, within a rate).
async fn client(
    dashboard: &Dashboard,
    client_id: &str,
    ip: std::net::IpAddr,
) -> Result<Arc<Client>, Refusal> {
    let issuer = &dashboard.issuer;
    if Documents::is_document_id(client_id) {
        // A fetch is a request this server makes for a stranger: counted
        // like a registration, per address.
        if issuer.documents.kept(client_id).is_none() {
            let admitted = dashboard
                .limiter
                .admit(&address::subject(ip), Bucket::ClientRegistration)
                .await;
            if admitted.is_err() {
                return Err(Refusal(
                    StatusCode::TOO_MANY_REQUESTS,
                    "Too many applications were looked up from your address. Try again later."
                        .into(),
                ));
            }
        }
        return issuer
            .documents
            .client(client_id)
            .await
            .map_err(|problem| Refusal(StatusCode::BAD_REQUEST, format!("{}.", problem.0)));
    }
    let lookup = {
        let issuer = issuer.clone();
        let client_id = client_id.to_string();
        tokio::task::spawn_blocking(move || issuer.registered_client(&client_id)).await
    };
    match lookup {
        Ok(Ok(Some(client))) => Ok(Arc::new(client)),
        Ok(Ok(None)) => Err(Refusal(
            StatusCode::BAD_REQUEST,
            "The application that sent you here is not registered with this server. Start \
             again from the application."
                .into(),
        )),
        _ => Err(Refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "The application could not be looked up. Try again.".into(),
        )),
    }
}

fn refuse(Refusal(status, text): Refusal) -> Response {
    message(status, "This application cannot connect", &text)
}

/// 303 to `uri` with `pairs` added to its query.
fn redirect_with(uri: &str, pairs: &[(&str, &str)]) -> Response {
    let Ok(mut url) = Url::parse(uri) else {
        return message(
            StatusCode::BAD_REQUEST,
            "Bad redirect address",
            "The address does not parse.",
        );
    };
    url.query_pairs_mut().extend_pairs(pairs);
    match HeaderValue::from_str(url.as_str()) {
        Ok(location) => (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response(),
        Err(_) => message(
            StatusCode::BAD_REQUEST,
            "Bad redirect address",
            "The address cannot be sent.",
        ),
    }
}

fn consent_page(dashboard: &Dashboard, session: &Session, checked: &Checked) -> Response {
    let client = &checked.client;
    let minutes = dashboard.issuer.token_minutes();
    let carried = html! {
        @for (name, value) in &checked.params {
            input type="hidden" name=(name) value=(value);
        }
    };
    let body = html! {
        p {
            strong { (client.name) } " asks to use Quarry as you (" (session.email) ")."
        }
        dl {
            dt { "It sends you back to" }
            dd { (destination(&checked.redirect_uri)) }
            dt { "Who it says it is" }
            dd {
                @if Documents::is_document_id(&client.client_id) {
                    "Its description is published at " code { (client.client_id) } "."
                } @else {
                    "It registered itself: Quarry cannot confirm its name. Allow it only if you \
                     started connecting it just now."
                }
            }
        }
        section aria-labelledby="permissions" {
            h2 id="permissions" { "It will be able to" }
            ul {
                @for permission in Permission::ALL {
                    @if checked.scope.allows(permission) {
                        li { (describe(permission)) }
                    }
                }
            }
            p {
                "Read-only: it cannot change anything in your tools. Its access lasts "
                (minutes) " minutes at a time and renews until you disconnect it on the API \
                 tokens page."
            }
        }
        (post_form(session, "/oauth/authorize", html! {
            (carried)
            button type="submit" name="decision" value="allow" { "Allow" }
            " "
            button type="submit" name="decision" value="deny" { "Deny" }
        }))
    };
    let mut response = signed_in_page(&format!("Allow {}?", client.name), session, body);
    // The answer redirects to the client: the form must be allowed to lead there.
    let uri = &checked.redirect_uri;
    let target = origin_of(uri).unwrap_or_else(|| {
        let scheme = uri.split(':').next().unwrap_or("");
        format!("{scheme}:")
    });
    widen_form_action(&mut response, &["'self'".to_string(), target]);
    response
}

/// Where a redirect URI leads, as a person reads it.
fn destination(uri: &str) -> Markup {
    let url = Url::parse(uri).ok();
    let scheme = url.as_ref().map_or("", |u| u.scheme());
    let host = url.as_ref().and_then(|u| u.host_str()).unwrap_or("");
    html! {
        @match scheme {
            "https" => { "the website " code { (host) } }
            "http" => { "an application on your computer (" code { (host) } ")" }
            _ => { "an application on your device (" code { (scheme) ":" } ")" }
        }
    }
}

fn describe(permission: Permission) -> &'static str {
    match permission {
        Permission::Search => "search the tools you connected and read the passages it finds",
        Permission::Archive => "search the archive of your earlier answers",
    }
}

fn parse(bytes: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(bytes)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Every value of `name`, removed from `params`.
fn take_all(params: &mut Vec<(String, String)>, name: &str) -> Vec<String> {
    let mut taken = Vec::new();
    params.retain(|(n, v)| {
        let this = n == name;
        if this {
            taken.push(v.clone());
        }
        !this
    });
    taken
}

/// A parameter given twice (RFC 6749 §3.1: they must not repeat).
fn repeated(params: &[(String, String)]) -> Option<&str> {
    params.iter().enumerate().find_map(|(i, (name, _))| {
        params[..i]
            .iter()
            .any(|(earlier, _)| earlier == name)
            .then_some(name.as_str())
    })
}
