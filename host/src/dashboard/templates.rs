//! The dashboard's HTML: one layout (landmarks, a skip link, a navigation
//! list), the small components the pages share (forms, tables, notices),
//! and the stylesheet and icon served from the binary (which also colours
//! the tools' badges, `logo.rs`, and the activity charts, `chart.rs`).
//!
//! Every page is a [`Markup`] built with maud's `html!`, which escapes
//! whatever it splices in: text from people, vendors and manifests never
//! reaches a page unescaped, and no page escapes anything by hand.

use axum::Form;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};

use super::session::Session;

/// No script, no external resource, no framing; forms post to this site
/// only (the tools page adds the vendors' authorize origins).
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const STYLE: &str = "\
:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}
body{max-width:52rem;margin:0 auto;padding:0 1rem 2rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;border-bottom:1px solid #8886;padding:.5rem 0}
header form{margin-left:auto;display:flex;align-items:center;gap:.6rem}
nav ul{display:flex;flex-wrap:wrap;gap:.3rem 1rem;list-style:none;padding:0;margin:0}
table{border-collapse:collapse;width:100%;margin:1.5rem 0}
caption{text-align:left;font-weight:600;padding:0 .4rem .3rem}
th,td{text-align:left;padding:.4rem;border-bottom:1px solid #8884}
tbody td:first-child,td.actions{white-space:nowrap}td.actions small{white-space:normal}
time{white-space:nowrap}
tr[data-status=needs_reconnect] td:nth-child(3){color:#c33;font-weight:600}
tr[data-status=not_connected] td:nth-child(3){opacity:.7}
label{display:block;margin:.5rem 0 .2rem}
input:not([type]),input[type=text],input[type=email],input[type=password],input[type=url]{box-sizing:border-box;width:100%;max-width:28rem;padding:.4rem;font:inherit}
#user_code{max-width:14rem;font-family:monospace;font-size:1.3rem;letter-spacing:.1em;text-transform:uppercase}
fieldset{max-width:28rem;box-sizing:border-box;margin:1rem 0;border:1px solid #8886}
fieldset label{display:flex;gap:.5rem;align-items:center;margin:.2rem 0}
button,a.button{padding:.4rem .9rem;margin:.3rem 0;cursor:pointer;font:inherit}
a.button{display:inline-block;border:1px solid #8888;border-radius:3px;text-decoration:none}
button.danger{background:#b3261e;color:#fff;border:1px solid #8c1d18;border-radius:3px}
.secret{font-family:monospace;word-break:break-all;user-select:all;padding:.6rem;border:2px solid #c80;display:block}
.notice{padding:.6rem;border-left:4px solid #36c}.error{border-left-color:#c33}
.notice h2{margin-top:0}
form.inline{display:inline}
.logo{vertical-align:middle;margin-right:.4rem;flex:none}
.logo text{fill:#fff;font:600 11px system-ui,sans-serif}
.logo-0 rect{fill:#1f5fa8}.logo-1 rect{fill:#7a3fb0}.logo-2 rect{fill:#0f7a5c}.logo-3 rect{fill:#b3261e}
.logo-4 rect{fill:#8a5a00}.logo-5 rect{fill:#00677f}.logo-6 rect{fill:#a4286a}.logo-7 rect{fill:#4a5568}
.failed{color:#c33}
ul.tools{list-style:none;padding:0;margin:0}ul.tools li{margin:.15rem 0}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:1rem;margin:1rem 0}
figure{margin:0}figcaption{font-weight:600;display:flex;align-items:center}
svg.chart{display:block;width:100%;height:auto}
.chart text{fill:currentColor;font:10px system-ui,sans-serif}
.chart .axis{stroke:#8888}.chart .bar{fill:#36c}.chart .failure{fill:#c33}
ol.passages li{margin:.8rem 0}ol.passages p{margin:.2rem 0}
";

/// The tab's icon (a cut stone): linked from every page, so that browsers
/// do not ask for `/favicon.ico` (a 404 on every visit).
const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">\
<path fill=\"#36c\" d=\"M4 1h8l3 5-7 9-7-9z\"/><path fill=\"#9bd\" d=\"M4 1h8l3 5H1z\"/></svg>";

pub async fn icon() -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        ICON,
    )
        .into_response()
}

pub async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE,
    )
        .into_response()
}

// ---- the layout -------------------------------------------------------------

/// A whole page: the header (with the navigation and the sign-out form when
/// someone is signed in), one `main` landmark and one `h1`.
pub fn page(title: &str, session: Option<&Session>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Quarry" }
                link rel="stylesheet" href="/dashboard/style.css";
                link rel="icon" href="/dashboard/icon.svg" type="image/svg+xml";
            }
            body {
                a class="skip" href="#main" { "Skip to content" }
                header {
                    strong { "Quarry" }
                    @if let Some(session) = session {
                        (navigation(session))
                    }
                }
                main id="main" {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// The signed-in header: the pages, then who is signed in and the way out.
fn navigation(session: &Session) -> Markup {
    html! {
        nav aria-label="Dashboard" {
            ul {
                li { a href="/dashboard/tools" { "Connected tools" } }
                li { a href="/dashboard/activity" { "Activity" } }
                li { a href="/dashboard/tokens" { "API tokens" } }
                li { a href="/dashboard/webhooks" { "Webhooks" } }
                li { a href="/dashboard/account/delete" { "Delete my data" } }
            }
        }
        (inline_form(session, "/dashboard/logout", html! {
            span { (session.email) }
            " "
            button type="submit" { "Sign out" }
        }))
    }
}

/// A signed-in page.
pub fn signed_in_page(title: &str, session: &Session, body: Markup) -> Response {
    page(title, Some(session), body).into_response()
}

/// A page with one message (errors, refusals, confirmations), for anyone.
pub fn message(status: StatusCode, title: &str, text: &str) -> Response {
    let body = html! {
        (error_notice(text))
        p { a href="/dashboard" { "Back to the dashboard" } }
    };
    (status, page(title, None, body)).into_response()
}

/// The page of a failure that is ours, not the person's: logged with
/// what was being done, and a plain "try again".
pub fn internal_error(doing: &str, error: impl std::fmt::Display) -> Response {
    tracing::error!(error = format!("{error:#}"), "dashboard: {doing} failed");
    message(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        "Try again.",
    )
}

/// The page after removing one of the person's things by its id (a
/// token, an assistant, a webhook): back to the page that lists them,
/// "no such `what`" when they have none by that id, or our failure.
pub fn after_removal(removed: anyhow::Result<bool>, list: &str, what: &str) -> Response {
    match removed {
        Ok(true) => Redirect::to(list).into_response(),
        Ok(false) => message(
            StatusCode::NOT_FOUND,
            &format!("No such {what}"),
            &format!("You have no {what} with this id."),
        ),
        Err(error) => internal_error(&format!("removing a {what}"), error),
    }
}

// ---- notices ----------------------------------------------------------------

/// What went wrong, announced at once to screen readers (`role="alert"`).
pub fn error_notice(text: &str) -> Markup {
    html! { p class="notice error" role="alert" { (text) } }
}

/// What just happened, announced politely (`role="status"`).
pub fn status_notice(text: &str) -> Markup {
    html! { p class="notice" role="status" { (text) } }
}

/// A secret shown once (a new API token, a webhook's signing secret): a
/// titled section with the secret in an `output` named `label`, so that
/// a person can select it and a test can find it.
pub fn shown_once(
    heading_id: &str,
    heading: &str,
    explanation: Markup,
    output_id: &str,
    label: &str,
    secret: &str,
) -> Markup {
    html! {
        section class="notice" aria-labelledby=(heading_id) {
            h2 id=(heading_id) { (heading) }
            p { (explanation) }
            output class="secret" id=(output_id) aria-label=(label) { (secret) }
        }
    }
}

// ---- forms ------------------------------------------------------------------

/// The hidden CSRF field every form of a signed-in page carries (the guard
/// refuses a POST without it).
fn csrf_field(session: &Session) -> Markup {
    html! { input type="hidden" name="csrf" value=(session.csrf); }
}

/// A form that carries only its CSRF token (the guard checks it).
#[derive(serde::Deserialize)]
pub struct CsrfOnly {}

/// A signed-in person's form about one of their things, named by the
/// path's one parameter (revoke a token, disconnect a tool or an
/// assistant, remove a webhook, run a question again). Its body holds only
/// the CSRF token, which the guard has checked.
pub struct FormAbout {
    pub session: Session,
    pub id: String,
}

impl<S: Send + Sync> FromRequest<S> for FormAbout {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<FormAbout, Response> {
        let (mut parts, body) = request.into_parts();
        let session = Session::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let Path(id) = Path::<String>::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let request = Request::from_parts(parts, body);
        let Form(CsrfOnly {}) = Form::<CsrfOnly>::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(FormAbout { session, id })
    }
}

pub fn post_form(session: &Session, action: &str, fields: Markup) -> Markup {
    html! {
        form method="post" action=(action) { (csrf_field(session)) (fields) }
    }
}

/// A form that posts `fields` to `action`, with the CSRF field, in the flow
/// of the text (buttons side by side, in a table cell).
pub fn inline_form(session: &Session, action: &str, fields: Markup) -> Markup {
    html! {
        form class="inline" method="post" action=(action) { (csrf_field(session)) (fields) }
    }
}

/// One button that posts to `action` (revoke, remove, connect). `name` is
/// what a screen reader says, since the same label repeats on every row.
pub fn button_form(session: &Session, action: &str, label: &str, name: &str) -> Markup {
    inline_form(
        session,
        action,
        html! { button type="submit" aria-label=(name) { (label) } },
    )
}

// ---- tables -----------------------------------------------------------------

/// A table of `rows` under a caption and column headers, or the paragraph
/// `empty` when there are no rows.
pub fn table(caption: &str, headers: &[&str], rows: &[Markup], empty: &str) -> Markup {
    html! {
        @if rows.is_empty() {
            p { (empty) }
        } @else {
            table {
                caption { (caption) }
                thead { tr { @for header in headers { th scope="col" { (header) } } } }
                tbody { @for row in rows { (row) } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(email: &str) -> Session {
        Session {
            key: "k".into(),
            user_id: "u".into(),
            email: email.into(),
            csrf: "c\"sr<f".into(),
        }
    }

    #[test]
    fn what_pages_splice_in_is_escaped() {
        let page = page(
            "<b>Title</b> & co",
            Some(&session("a\"<x>@acme.test")),
            error_notice("it's <script>"),
        )
        .into_string();
        assert!(page.contains("<title>&lt;b&gt;Title&lt;/b&gt; &amp; co · Quarry</title>"));
        assert!(page.contains("<span>a&quot;&lt;x&gt;@acme.test</span>"));
        assert!(page.contains(r#"role="alert">it's &lt;script&gt;</p>"#));
        assert!(!page.contains("<script>"));
        // The tests (and a person's browser) find the CSRF token as sent.
        assert!(page.contains(r#"<input type="hidden" name="csrf" value="c&quot;sr&lt;f">"#));
    }

    #[test]
    fn an_empty_table_is_a_sentence() {
        let empty = table("Things", &["A"], &[], "No things.").into_string();
        assert_eq!(empty, "<p>No things.</p>");
        let row = html! { tr { td { "1" } } };
        let full = table("Things", &["A"], &[row], "No things.").into_string();
        assert_eq!(
            full,
            "<table><caption>Things</caption><thead><tr><th scope=\"col\">A</th></tr></thead>\
             <tbody><tr><td>1</td></tr></tbody></table>"
        );
    }
}
