//! API tokens: issue one (60 minutes, shown once), list them (never the
//! secret), revoke one.

use std::sync::Arc;

use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::Dashboard;
use super::session::Session;
use super::templates::{csrf_field, esc, html, internal_error, message};
use super::tools::CsrfOnly;
use crate::calendar::rfc3339;

/// Tokens issued on the dashboard live this long.
pub const TOKEN_TTL_SECONDS: u64 = 3600;

fn listing(dashboard: &Dashboard, session: &Session, shown: Option<(&str, i64)>) -> Response {
    let tokens = dashboard
        .store
        .tokens_of(&session.user_id)
        .unwrap_or_default();
    let fresh = match shown {
        Some((token, expires_at)) => format!(
            r#"<section class="notice" aria-labelledby="new-token"><h2 id="new-token">Your new token</h2>
<p>Copy it now: it is shown only once. It expires at {}.</p>
<output class="secret" id="token" aria-label="New API token">{}</output></section>"#,
            esc(&rfc3339(expires_at)),
            esc(token)
        ),
        None => String::new(),
    };
    let rows: String = tokens
        .iter()
        .map(|t| {
            format!(
                r#"<tr data-token-id="{id}"><td><code>{id}</code></td><td><time datetime="{issued}">{issued}</time></td><td><time datetime="{expires}">{expires}</time></td><td class="actions"><form class="inline" method="post" action="/dashboard/tokens/{id}/revoke">{csrf}<button type="submit" aria-label="Revoke {id}">Revoke</button></form></td></tr>"#,
                id = esc(&t.id),
                issued = esc(&rfc3339(t.issued_at)),
                expires = esc(&rfc3339(t.expires_at)),
                csrf = csrf_field(session),
            )
        })
        .collect();
    let table = super::templates::table(
        "Active tokens",
        &["Id", "Issued", "Expires", "Actions"],
        &rows,
        "You have no active tokens.",
    );
    let body = format!(
        r#"{fresh}<p>An assistant uses an API token as <code>Authorization: Bearer qt_…</code>. Tokens issued here last 60 minutes.</p>
<form method="post" action="/dashboard/tokens">{csrf}<button type="submit">Issue a token</button></form>
{table}"#,
        csrf = csrf_field(session),
    );
    html("API tokens", session, &body)
}

pub async fn page(State(dashboard): State<Arc<Dashboard>>, session: Session) -> Response {
    listing(&dashboard, &session, None)
}

pub async fn issue(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Form(_): Form<CsrfOnly>,
) -> Response {
    match dashboard
        .store
        .issue_token(&session.user_id, TOKEN_TTL_SECONDS)
    {
        Ok((token, expires_at)) => {
            tracing::info!(user = %session.user_id, "dashboard: API token issued");
            listing(&dashboard, &session, Some((token.expose(), expires_at)))
        }
        Err(error) => internal_error("issuing a token", error),
    }
}

pub async fn revoke(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Path(id): Path<String>,
    Form(_): Form<CsrfOnly>,
) -> Response {
    match dashboard.store.revoke_token(&session.user_id, &id) {
        Ok(true) => {
            tracing::info!(user = %session.user_id, "dashboard: API token revoked");
            Redirect::to("/dashboard/tokens").into_response()
        }
        Ok(false) => message(
            StatusCode::NOT_FOUND,
            "No such token",
            "You have no token with this id.",
        ),
        Err(error) => internal_error("revoking a token", error),
    }
}
