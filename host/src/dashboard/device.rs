//! `/device`: where a signed-in user enters the code an assistant shows
//! them (RFC 8628) and approves or denies that assistant.
//!
//! Approving gives the assistant API tokens that act as the user, so the
//! page names the assistant (its self-chosen `client_id`) and says so.
//! Wrong codes count as failures against the user, like sign-in failures:
//! codes are short enough to type, so guessing must be slow.

use std::sync::Arc;

use axum::Form;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use super::Dashboard;
use super::templates::{csrf_field, esc, html, internal_error, message};
use crate::calendar::rfc3339;

#[derive(Deserialize, Default)]
pub struct CodeQuery {
    #[serde(default)]
    user_code: String,
}

#[derive(Deserialize)]
pub struct Decision {
    #[serde(default)]
    user_code: String,
    #[serde(default)]
    decision: String,
}

/// `GET /device[?user_code=...]`: the form to enter a code.
pub async fn page(session: super::session::Session, Query(query): Query<CodeQuery>) -> Response {
    let body = format!(
        r#"<p>An assistant asked to use Quarry as you. Enter the code it shows.</p>
<form method="post" action="/device">{csrf}
<label for="user_code">Code</label>
<input id="user_code" name="user_code" value="{code}" autocomplete="off" autocapitalize="characters" spellcheck="false" required maxlength="20">
<p><button type="submit">Continue</button></p></form>"#,
        csrf = csrf_field(&session),
        code = esc(&query.user_code),
    );
    html("Connect an assistant", &session, &body)
}

/// `POST /device`: shows who asks, with approve and deny buttons.
pub async fn review(
    State(dashboard): State<Arc<Dashboard>>,
    session: super::session::Session,
    Form(form): Form<CodeQuery>,
) -> Response {
    let keys = [format!("device:{}", session.user_id)];
    if dashboard.throttled(&keys) {
        return message(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many wrong codes",
            "Wait a few minutes, then enter the code again.",
        );
    }
    let pending = match dashboard.issuer.pending_device(&form.user_code) {
        Ok(Some(pending)) => pending,
        Ok(None) => {
            dashboard.record_failure(&keys);
            return message(
                StatusCode::NOT_FOUND,
                "Unknown code",
                "No assistant is waiting with this code: it may be mistyped, expired or already used. \
                 Check the code the assistant shows, or start again from the assistant.",
            );
        }
        Err(error) => return internal_error("reading a device code", error),
    };
    let body = format!(
        r#"<p>The assistant <strong>{client}</strong> asks to use Quarry as you: to search the tools you connected, read-only, with tokens that last 60 minutes and that it can renew until you revoke them.</p>
<p>Only approve if you started this from that assistant just now. The code expires at {expires}.</p>
<form class="inline" method="post" action="/device/decide">{csrf}<input type="hidden" name="user_code" value="{code}"><input type="hidden" name="decision" value="approve"><button type="submit">Approve</button></form>
<form class="inline" method="post" action="/device/decide">{csrf}<input type="hidden" name="user_code" value="{code}"><input type="hidden" name="decision" value="deny"><button type="submit">Deny</button></form>"#,
        client = esc(&pending.client_id),
        expires = esc(&rfc3339(pending.expires_at)),
        csrf = csrf_field(&session),
        code = esc(&pending.user_code),
    );
    html("Approve an assistant?", &session, &body)
}

/// `POST /device/decide`
pub async fn decide(
    State(dashboard): State<Arc<Dashboard>>,
    session: super::session::Session,
    Form(form): Form<Decision>,
) -> Response {
    let approve = match form.decision.as_str() {
        "approve" => true,
        "deny" => false,
        _ => {
            return message(
                StatusCode::BAD_REQUEST,
                "Unclear answer",
                "Choose Approve or Deny.",
            );
        }
    };
    match dashboard
        .issuer
        .decide_device(&form.user_code, &session.user_id, approve)
    {
        Ok(true) if approve => {
            tracing::info!(user = %session.user_id, "dashboard: assistant approved");
            html(
                "Assistant approved",
                &session,
                "<p>Done. Go back to the assistant: it will finish signing in by itself. \
                 You can revoke its tokens on the API tokens page.</p>",
            )
        }
        Ok(true) => html(
            "Assistant denied",
            &session,
            "<p>The assistant was refused. It will tell you so.</p>",
        ),
        Ok(false) => message(
            StatusCode::NOT_FOUND,
            "Unknown code",
            "This code expired or was already used. Start again from the assistant.",
        ),
        Err(error) => internal_error("deciding on a device code", error),
    }
}
