//! API tokens: issue one (60 minutes, shown once), list them (never the
//! secret, but where each works: `/v1` or `/mcp`), revoke one. And the
//! assistants the person connected (the device flow's and MCP clients'),
//! each of which can be disconnected: its refresh tokens and the access
//! tokens it holds stop working at once.

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::response::Response;
use maud::{Markup, html};

use super::Dashboard;
use super::session::Session;
use super::templates::{CsrfOnly, FormAbout, after_removal};
use super::templates::{button_form, internal_error, post_form, shown_once, signed_in_page, table};
use crate::calendar::rfc3339;
use crate::issuer::Connection;
use quarry_store::{Audience, TokenInfo};

/// Tokens issued on the dashboard live this long.
pub const TOKEN_TTL_SECONDS: u64 = 3600;

/// The tokens page: the token just issued (once), the form to issue one,
/// and the active tokens (never their secrets).
fn listing(dashboard: &Dashboard, session: &Session, shown: Option<(&str, i64)>) -> Response {
    let tokens = dashboard
        .store
        .tokens_of(&session.user_id)
        .unwrap_or_default();
    let rows: Vec<Markup> = tokens
        .iter()
        .map(|token| token_row(session, token))
        .collect();
    let assistants: Vec<Markup> = dashboard
        .issuer
        .connections_of(&session.user_id)
        .unwrap_or_default()
        .iter()
        .map(|connection| assistant_row(session, connection))
        .collect();
    let body = html! {
        @if let Some((token, expires_at)) = shown {
            (shown_once(
                "new-token",
                "Your new token",
                html! { "Copy it now: it is shown only once. It expires at " (rfc3339(expires_at)) "." },
                "token",
                "New API token",
                token,
            ))
        }
        p {
            "An assistant uses an API token as " code { "Authorization: Bearer qt_…" }
            ". Tokens issued here last 60 minutes."
        }
        (post_form(session, "/dashboard/tokens", html! {
            button type="submit" { "Issue a token" }
        }))
        (table(
            "Active tokens",
            &["Id", "For", "Issued", "Expires", "Actions"],
            &rows,
            "You have no active tokens.",
        ))
        section aria-labelledby="assistants" {
            h2 id="assistants" { "Connected assistants" }
            p {
                "Assistants you allowed to use Quarry as you. They renew their access until \
                 you disconnect them."
            }
            (table(
                "Connected assistants",
                &["Assistant", "For", "May", "Connected", "Actions"],
                &assistants,
                "No assistant is connected.",
            ))
        }
    };
    signed_in_page("API tokens", session, body)
}

/// Where a token works, as the tables say it.
fn audience_label(audience: Audience) -> &'static str {
    match audience {
        Audience::V1 => "API (/v1)",
        Audience::Mcp => "MCP (/mcp)",
    }
}

fn token_row(session: &Session, token: &TokenInfo) -> Markup {
    let id = &token.id;
    let (issued, expires) = (rfc3339(token.issued_at), rfc3339(token.expires_at));
    html! {
        tr data-token-id=(id) {
            td { code { (id) } }
            td { (audience_label(token.audience)) }
            td { time datetime=(issued) { (issued) } }
            td { time datetime=(expires) { (expires) } }
            td class="actions" {
                (button_form(
                    session,
                    &format!("/dashboard/tokens/{id}/revoke"),
                    "Revoke",
                    &format!("Revoke {id}"),
                ))
            }
        }
    }
}

fn assistant_row(session: &Session, connection: &Connection) -> Markup {
    let connected = rfc3339(connection.connected_at);
    html! {
        tr data-assistant-id=(connection.id) {
            td { (connection.client_name) }
            td { (audience_label(connection.audience)) }
            td { (connection.scope.names()) }
            td { time datetime=(connected) { (connected) } }
            td class="actions" {
                (button_form(
                    session,
                    &format!("/dashboard/assistants/{}/disconnect", connection.id),
                    "Disconnect",
                    &format!("Disconnect {}", connection.client_name),
                ))
            }
        }
    }
}

pub async fn page(State(dashboard): State<Arc<Dashboard>>, session: Session) -> Response {
    listing(&dashboard, &session, None)
}

pub async fn issue(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Form(_): Form<CsrfOnly>,
) -> Response {
    match dashboard.store.issue_token(
        &session.user_id,
        TOKEN_TTL_SECONDS,
        quarry_store::Audience::V1,
    ) {
        Ok((token, expires_at)) => {
            tracing::info!(user = %session.user_id, "dashboard: API token issued");
            listing(&dashboard, &session, Some((token.expose(), expires_at)))
        }
        Err(error) => internal_error("issuing a token", error),
    }
}

pub async fn revoke(
    State(dashboard): State<Arc<Dashboard>>,
    FormAbout { session, id }: FormAbout,
) -> Response {
    let revoked = dashboard.store.revoke_token(&session.user_id, &id);
    if let Ok(true) = revoked {
        tracing::info!(user = %session.user_id, "dashboard: API token revoked");
    }
    after_removal(revoked, "/dashboard/tokens", "token")
}

/// `POST /dashboard/assistants/{id}/disconnect`
pub async fn disconnect(
    State(dashboard): State<Arc<Dashboard>>,
    FormAbout { session, id }: FormAbout,
) -> Response {
    let disconnected = dashboard.issuer.disconnect(&session.user_id, &id);
    if let Ok(true) = disconnected {
        tracing::info!(user = %session.user_id, "dashboard: assistant disconnected");
    }
    after_removal(disconnected, "/dashboard/tokens", "connected assistant")
}
