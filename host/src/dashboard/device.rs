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
use maud::html;
use serde::Deserialize;

use super::Dashboard;
use super::templates::{inline_form, internal_error, message, post_form, signed_in_page};
use crate::calendar::rfc3339;
use crate::limits::Throttle;

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
    let body = html! {
        p { "An assistant asked to use Quarry as you. Enter the code it shows." }
        (post_form(&session, "/device", html! {
            label for="user_code" { "Code" }
            input id="user_code" name="user_code" value=(query.user_code) autocomplete="off"
                autocapitalize="characters" spellcheck="false" required maxlength="20";
            p { button type="submit" { "Continue" } }
        }))
    };
    signed_in_page("Connect an assistant", &session, body)
}

/// `POST /device`: shows who asks, with approve and deny buttons.
pub async fn review(
    State(dashboard): State<Arc<Dashboard>>,
    session: super::session::Session,
    Form(form): Form<CodeQuery>,
) -> Response {
    let keys = wrong_code_keys(&session);
    if let Some(refused) = dashboard.throttled(Throttle::DeviceCode, &keys).await {
        return refused;
    }
    let pending = match dashboard.issuer.pending_device(&form.user_code) {
        Ok(Some(pending)) => pending,
        Ok(None) => {
            dashboard.record_failure(Throttle::DeviceCode, &keys).await;
            return message(
                StatusCode::NOT_FOUND,
                "Unknown code",
                "No assistant is waiting with this code: it may be mistyped, expired or already used. \
                 Check the code the assistant shows, or start again from the assistant.",
            );
        }
        Err(error) => return internal_error("reading a device code", error),
    };
    // Both answers carry the code back; the space between the two inline
    // forms keeps the buttons apart.
    let answer = |decision: &str, label: &str| {
        inline_form(
            &session,
            "/device/decide",
            html! {
                input type="hidden" name="user_code" value=(pending.user_code);
                input type="hidden" name="decision" value=(decision);
                button type="submit" { (label) }
            },
        )
    };
    let body = html! {
        p {
            "The assistant " strong { (pending.client_id) } " asks to use Quarry as you: to \
             search the tools you connected, read-only, with tokens that last 60 minutes and \
             that it can renew until you revoke them."
        }
        p {
            "Only approve if you started this from that assistant just now. The code expires at "
            (rfc3339(pending.expires_at)) "."
        }
        (answer("approve", "Approve"))
        " "
        (answer("deny", "Deny"))
    };
    signed_in_page("Approve an assistant?", &session, body)
}

/// Wrong codes count against the person, at `/device` and at
/// `/device/decide` alike (either could be used to guess).
fn wrong_code_keys(session: &super::session::Session) -> [String; 1] {
    [format!("device:{}", session.user_id)]
}

/// `POST /device/decide`
pub async fn decide(
    State(dashboard): State<Arc<Dashboard>>,
    session: super::session::Session,
    Form(form): Form<Decision>,
) -> Response {
    let keys = wrong_code_keys(&session);
    if let Some(refused) = dashboard.throttled(Throttle::DeviceCode, &keys).await {
        return refused;
    }
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
            signed_in_page(
                "Assistant approved",
                &session,
                html! {
                    p {
                        "Done. Go back to the assistant: it will finish signing in by itself. \
                         You can revoke its tokens on the API tokens page."
                    }
                },
            )
        }
        Ok(true) => signed_in_page(
            "Assistant denied",
            &session,
            html! { p { "The assistant was refused. It will tell you so." } },
        ),
        Ok(false) => {
            dashboard.record_failure(Throttle::DeviceCode, &keys).await;
            message(
                StatusCode::NOT_FOUND,
                "Unknown code",
                "This code expired or was already used. Start again from the assistant.",
            )
        }
        Err(error) => internal_error("deciding on a device code", error),
    }
}
