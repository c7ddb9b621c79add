//! Webhooks: register one (url and events; the secret shown once), list
//! them, remove one. The logic is [`crate::webhooks::Webhooks`]'s.

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
use crate::webhooks::{RegisterError, SUBSCRIBABLE};

fn listing(
    dashboard: &Dashboard,
    session: &Session,
    notice: Option<String>,
    status: StatusCode,
) -> Response {
    let registrations = dashboard
        .webhooks
        .list(&session.user_id)
        .unwrap_or_default();
    let rows: String = registrations
        .iter()
        .map(|r| {
            format!(
                r#"<tr data-webhook-id="{id}"><td><code>{id}</code></td><td>{url}</td><td>{events}</td><td><time datetime="{created}">{created}</time></td><td class="actions"><form class="inline" method="post" action="/dashboard/webhooks/{id}/remove">{csrf}<button type="submit" aria-label="Remove {id}">Remove</button></form></td></tr>"#,
                id = esc(&r.id),
                url = esc(&r.url),
                events = esc(&r.events.join(", ")),
                created = esc(&rfc3339(r.created_at)),
                csrf = csrf_field(session),
            )
        })
        .collect();
    let table = super::templates::table(
        "Your webhooks",
        &["Id", "URL", "Events", "Created", "Actions"],
        &rows,
        "You have no webhooks.",
    );
    let events: String = SUBSCRIBABLE
        .iter()
        .map(|e| {
            format!(
                r#"<label><input type="checkbox" name="events" value="{e}" checked> {e}</label>"#,
                e = esc(e)
            )
        })
        .collect();
    let body = format!(
        r#"{notice}<form method="post" action="/dashboard/webhooks">{csrf}
<label for="url">Endpoint URL (https)</label>
<input id="url" name="url" type="url" required placeholder="https://example.com/quarry-events">
<fieldset><legend>Events</legend>{events}</fieldset>
<p><button type="submit">Register</button></p></form>
{table}"#,
        notice = notice.unwrap_or_default(),
        csrf = csrf_field(session),
    );
    let mut response = html("Webhooks", session, &body);
    *response.status_mut() = status;
    response
}

pub async fn page(State(dashboard): State<Arc<Dashboard>>, session: Session) -> Response {
    listing(&dashboard, &session, None, StatusCode::OK)
}

pub async fn register(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let url = form
        .iter()
        .find(|(k, _)| k == "url")
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let events: Vec<String> = form
        .iter()
        .filter(|(k, _)| k == "events")
        .map(|(_, v)| v.clone())
        .collect();
    let events = (!events.is_empty()).then_some(events);
    match dashboard
        .webhooks
        .register(&session.user_id, &url, events)
        .await
    {
        Ok(registration) => {
            let notice = format!(
                r#"<section class="notice" aria-labelledby="new-secret"><h2 id="new-secret">Webhook registered</h2>
<p>Its signing secret, shown only once (events are signed the Standard Webhooks way):</p>
<output class="secret" id="secret" aria-label="Signing secret">{}</output></section>"#,
                esc(&registration.secret)
            );
            listing(&dashboard, &session, Some(notice), StatusCode::CREATED)
        }
        Err(RegisterError::Invalid(reason)) => listing(
            &dashboard,
            &session,
            Some(format!(
                r#"<p class="notice error" role="alert">{}</p>"#,
                esc(&reason)
            )),
            StatusCode::BAD_REQUEST,
        ),
        Err(RegisterError::Internal(error)) => internal_error("registering a webhook", error),
    }
}

pub async fn remove(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Path(id): Path<String>,
    Form(_): Form<CsrfOnly>,
) -> Response {
    match dashboard.webhooks.unregister(&session.user_id, &id) {
        Ok(true) => Redirect::to("/dashboard/webhooks").into_response(),
        Ok(false) => message(
            StatusCode::NOT_FOUND,
            "No such webhook",
            "You have no webhook with this id.",
        ),
        Err(error) => internal_error("removing a webhook", error),
    }
}
