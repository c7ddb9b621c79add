//! Deleting all of a user's data: a confirmation page that asks for the
//! email, then [`crate::deletion::Deletions::run`], then a goodbye page;
//! the session ends with the account.

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use super::Dashboard;
use super::session::{self, Session};
use super::templates::{csrf_field, esc, html, page};

fn confirmation(session: &Session, error: Option<&str>) -> String {
    let alert = error
        .map(|e| format!(r#"<p class="notice error" role="alert">{}</p>"#, esc(e)))
        .unwrap_or_default();
    format!(
        r#"{alert}<p><strong>This cannot be undone.</strong> Quarry will revoke its access to your connected tools, and delete your query history, archive, profile, webhooks, API tokens and sign-in.</p>
<form method="post" action="/dashboard/account/delete">{csrf}
<label for="confirm_email">Type your email, {email}, to confirm</label>
<input id="confirm_email" name="confirm_email" type="email" autocomplete="off" required>
<p><button type="submit" class="danger">Delete all my data</button></p></form>"#,
        csrf = csrf_field(session),
        email = esc(&session.email),
    )
}

pub async fn confirm_page(session: Session) -> Response {
    html(
        "Delete all my data",
        &session,
        &confirmation(&session, None),
    )
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
        let mut response = html(
            "Delete all my data",
            &session,
            &confirmation(
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
            let body = format!(
                r#"<p role="status">All of your data has been permanently deleted: {} tool tokens revoked{}, your query history and archive ({} entries), {} webhooks, your API tokens and your sign-in.</p><p>Goodbye.</p>"#,
                report.oauth_tokens_revoked,
                if report.oauth_revocations_pending > 0 {
                    format!(
                        " ({} more revocations are being retried)",
                        report.oauth_revocations_pending
                    )
                } else {
                    String::new()
                },
                report.archive_entries_removed,
                report.webhooks_unregistered,
            );
            (
                [(header::SET_COOKIE, session::clear_cookie())],
                Html(page("Your data is deleted", None, &body)),
            )
                .into_response()
        }
        Err(error) => {
            tracing::error!(user = %user_id, error = format!("{error:#}"), "dashboard: deletion failed; it resumes at the next start");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::SET_COOKIE, session::clear_cookie())],
                Html(page(
                    "Deletion in progress",
                    None,
                    "<p role=\"alert\">The deletion did not finish; it is recorded and will finish automatically. You are signed out.</p>",
                )),
            )
                .into_response()
        }
    }
}
