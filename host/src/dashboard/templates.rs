//! The dashboard's HTML: one layout (landmarks, a skip link, a navigation
//! list), escaping, and the small stylesheet served from the binary.

use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

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

/// Escapes text for HTML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The hidden CSRF field every form of a signed-in page carries.
pub fn csrf_field(session: &Session) -> String {
    format!(
        r#"<input type="hidden" name="csrf" value="{}">"#,
        esc(&session.csrf)
    )
}

/// A whole page. `body` is already-escaped HTML.
pub fn page(title: &str, session: Option<&Session>, body: &str) -> String {
    let nav = match session {
        Some(s) => format!(
            r#"<nav aria-label="Dashboard"><ul>
<li><a href="/dashboard/tools">Connected tools</a></li>
<li><a href="/dashboard/tokens">API tokens</a></li>
<li><a href="/dashboard/webhooks">Webhooks</a></li>
<li><a href="/dashboard/account/delete">Delete my data</a></li>
</ul></nav>
<form class="inline" method="post" action="/dashboard/logout">{}<span>{}</span> <button type="submit">Sign out</button></form>"#,
            csrf_field(s),
            esc(&s.email),
        ),
        None => String::new(),
    };
    format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Quarry</title>
<link rel="stylesheet" href="/dashboard/style.css">
<link rel="icon" href="/dashboard/icon.svg" type="image/svg+xml">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><strong>Quarry</strong>{nav}</header>
<main id="main">
<h1>{title}</h1>
{body}
</main>
</body>
</html>
"##,
        title = esc(title),
    )
}

/// A page with one message (errors, refusals, confirmations).
pub fn message(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        r#"<p class="notice error" role="alert">{}</p><p><a href="/dashboard">Back to the dashboard</a></p>"#,
        esc(text)
    );
    (status, Html(page(title, None, &body))).into_response()
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

/// A signed-in page.
pub fn html(title: &str, session: &Session, body: &str) -> Response {
    Html(page(title, Some(session), body)).into_response()
}

/// A table of `rows` (rendered `<tr>`s) under a caption and column
/// headers, or the paragraph `empty` when there are no rows.
pub fn table(caption: &str, headers: &[&str], rows: &str, empty: &str) -> String {
    if rows.is_empty() {
        return format!("<p>{}</p>", esc(empty));
    }
    let headers: String = headers
        .iter()
        .map(|h| format!(r#"<th scope="col">{}</th>"#, esc(h)))
        .collect();
    format!(
        "<table><caption>{}</caption><thead><tr>{headers}</tr></thead><tbody>{rows}</tbody></table>",
        esc(caption)
    )
}
