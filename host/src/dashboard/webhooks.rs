//! Webhooks: register one (url and events; the secret shown once), list
//! them, remove one. The logic is [`crate::webhooks::Webhooks`]'s.

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};

use super::Dashboard;
use super::session::Session;
use super::templates::{FormAbout, after_removal};
use super::templates::{
    button_form, error_notice, internal_error, post_form, shown_once, signed_in_page, table,
};
use crate::calendar::rfc3339;
use crate::webhooks::{RegisterError, SUBSCRIBABLE};

/// The webhooks page: `notice` (the new secret, or what was wrong), the
/// form to register one, and the registered ones.
fn listing(
    dashboard: &Dashboard,
    session: &Session,
    notice: Option<Markup>,
    status: StatusCode,
) -> Response {
    let registrations = dashboard
        .webhooks
        .list(&session.user_id)
        .unwrap_or_default();
    let rows: Vec<Markup> = registrations
        .iter()
        .map(|r| webhook_row(session, &r.id, &r.url, &r.events, r.created_at))
        .collect();
    let body = html! {
        @if let Some(notice) = notice {
            (notice)
        }
        (post_form(session, "/dashboard/webhooks", html! {
            label for="url" { "Endpoint URL (https)" }
            input id="url" name="url" type="url" required placeholder="https://example.com/quarry-events";
            fieldset {
                legend { "Events" }
                @for event in SUBSCRIBABLE {
                    label { input type="checkbox" name="events" value=(event) checked; " " (event) }
                }
            }
            p { button type="submit" { "Register" } }
        }))
        (table(
            "Your webhooks",
            &["Id", "URL", "Events", "Created", "Actions"],
            &rows,
            "You have no webhooks.",
        ))
    };
    let mut response = signed_in_page("Webhooks", session, body);
    *response.status_mut() = status;
    response
}

fn webhook_row(
    session: &Session,
    id: &str,
    url: &str,
    events: &[String],
    created_at: i64,
) -> Markup {
    let created = rfc3339(created_at);
    html! {
        tr data-webhook-id=(id) {
            td { code { (id) } }
            td { (url) }
            td { (events.join(", ")) }
            td { time datetime=(created) { (created) } }
            td class="actions" {
                (button_form(
                    session,
                    &format!("/dashboard/webhooks/{id}/remove"),
                    "Remove",
                    &format!("Remove {id}"),
                ))
            }
        }
    }
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
            let notice = shown_once(
                "new-secret",
                "Webhook registered",
                html! {
                    "Its signing secret, shown only once (events are signed the Standard \
                     Webhooks way):"
                },
                "secret",
                "Signing secret",
                &registration.secret,
            );
            listing(&dashboard, &session, Some(notice), StatusCode::CREATED)
        }
        Err(RegisterError::Invalid(reason)) => listing(
            &dashboard,
            &session,
            Some(error_notice(&reason)),
            StatusCode::BAD_REQUEST,
        ),
        Err(RegisterError::Internal(error)) => internal_error("registering a webhook", error),
    }
}

pub async fn remove(
    State(dashboard): State<Arc<Dashboard>>,
    FormAbout { session, id }: FormAbout,
) -> Response {
    let removed = dashboard.webhooks.unregister(&session.user_id, &id);
    after_removal(removed, "/dashboard/webhooks", "webhook")
}
