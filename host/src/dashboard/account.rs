//! Deleting all of a user's data: a confirmation page that asks for the
//! email, then [`crate::deletion::Deletions::run`], then a goodbye page;
//! the session ends with the account.

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::Dashboard;
use super::session::{self, Session};
use super::templates::{error_notice, page, post_form, signed_in_page};

/// The confirmation form: the person types their email, so that one
/// click cannot delete everything.
fn confirmation(session: &Session, error: Option<&str>) -> Markup {
    html! {
        @if let Some(error) = error {
            (error_notice(error))
        }
        p {
            strong { "This cannot be undone." }
            " Quarry will revoke its access to your connected tools, and delete your query \
             history, archive, profile, webhooks, API tokens and sign-in."
        }
        (post_form(session, "/dashboard/account/delete", html! {
            label for="confirm_email" { "Type your email, " (session.email) ", to confirm" }
            input id="confirm_email" name="confirm_email" type="email" autocomplete="off" required;
            p { button type="submit" class="danger" { "Delete all my data" } }
        }))
    }
}

pub async fn confirm_page(session: Session) -> Response {
    signed_in_page("Delete all my data", &session, confirmation(&session, None))
}

#[derive(Deserialize)]
pub struct DeleteForm {
    #[serde(default)]
    confirm_email: String,
}

pub async fn delete(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Form(form): Form<DeleteForm>,
) -> Response {
    if form.confirm_email.trim().to_lowercase() != session.email {
        let mut response = signed_in_page(
            "Delete all my data",
            &session,
            confirmation(
                &session,
                Some("The email typed does not match yours; nothing was deleted."),
            ),
        );
        *response.status_mut() = StatusCode::BAD_REQUEST;
        return response;
    }
    let user_id = session.user_id.clone();
    // As DELETE /v1/delete_my_data: blocked from now on, and the job
    // finishes even if this request is dropped.
    match dashboard.deletions.delete(&user_id).await {
        Ok(report) => {
            tracing::info!(user = %user_id, "dashboard: account deleted");
            let pending = report.oauth_revocations_pending;
            let body = html! {
                p role="status" {
                    "All of your data has been permanently deleted: "
                    (report.oauth_tokens_revoked) " tool tokens revoked"
                    @if pending > 0 {
                        " (" (pending) " more revocations are being retried)"
                    }
                    ", your query history and archive (" (report.archive_entries_removed)
                    " entries), " (report.webhooks_unregistered)
                    " webhooks, your API tokens and your sign-in."
                }
                p { "Goodbye." }
            };
            (
                [(header::SET_COOKIE, session::clear_cookie())],
                page("Your data is deleted", None, body),
            )
                .into_response()
        }
        Err(error) => {
            tracing::error!(user = %user_id, error = format!("{error:#}"), "dashboard: deletion failed; it resumes at the next start");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::SET_COOKIE, session::clear_cookie())],
                page(
                    "Deletion in progress",
                    None,
                    html! {
                        p role="alert" {
                            "The deletion did not finish; it is recorded and will finish \
                             automatically. You are signed out."
                        }
                    },
                ),
            )
                .into_response()
        }
    }
}
