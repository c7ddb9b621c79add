//! Connected tools: every connector of the registry by its label, with
//! its badge, the user's status and when the user last asked it (from
//! their query history, `usage.rs`), and the buttons that connect and
//! disconnect it (`connect.rs`).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;

use super::Dashboard;
use super::connect::{browser_authorize_url, refusal};
use super::logo::badge;
use super::session::Session;
use super::settings::{askable, origin_of, widen_form_action};
use super::templates::{button_form, internal_error, signed_in_page, status_notice, table};
use super::usage::{self, Question, ToolUse, outcome};
use crate::calendar::rfc3339;
use crate::connectors::manifest::Manifest;
use quarry_store::GrantStatus;

#[derive(Deserialize, Default)]
pub struct Notice {
    connected: Option<String>,
}

/// Where a person stands with one tool.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Connected,
    NeedsReconnect,
    NotConnected,
}

impl Status {
    /// The row's `data-status`, which the stylesheet and the tests read.
    fn attribute(self) -> &'static str {
        match self {
            Status::Connected => "connected",
            Status::NeedsReconnect => "needs_reconnect",
            Status::NotConnected => "not_connected",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Status::Connected => "Connected",
            Status::NeedsReconnect => "Needs reconnecting",
            Status::NotConnected => "Not connected",
        }
    }
}

pub async fn page(
    State(dashboard): State<Arc<Dashboard>>,
    session: Session,
    Query(notice): Query<Notice>,
) -> Response {
    let grants = dashboard.store.grants(&session.user_id).unwrap_or_default();
    let mut connectors = dashboard.registry.list();
    connectors.sort_by_key(|c| (c.manifest.label.to_lowercase(), c.manifest.id.clone()));
    let history = match last_asked(&dashboard, &session.user_id).await {
        Ok(history) => history,
        Err(error) => return internal_error("reading the query history", error),
    };
    let last_uses = usage::last_uses(&history.questions);
    let mut rows = Vec::new();
    let mut origins = vec!["'self'".to_string()];
    for connector in &connectors {
        let manifest = &connector.manifest;
        let (id, label) = (&manifest.id, &manifest.label);
        let status = match grants.iter().find(|(c, _)| c == id) {
            Some((_, grant)) if grant.status == GrantStatus::NeedsReconnect => {
                Status::NeedsReconnect
            }
            Some(_) => Status::Connected,
            None => Status::NotConnected,
        };
        let refused = refusal(&dashboard, manifest);
        if refused.is_none() {
            // Its form leads to the vendor, unless settings come first.
            let direct = askable(manifest).next().is_none();
            if let Some(origin) = manifest
                .oauth
                .as_ref()
                .filter(|_| direct)
                .and_then(|o| browser_authorize_url(&dashboard, &o.authorize_url).ok())
                .and_then(|u| origin_of(u.as_str()))
                && !origins.contains(&origin)
            {
                origins.push(origin);
            }
        }
        let actions = tool_actions(&session, manifest, status, refused.as_deref());
        let last_use = last_uses.get(id.as_str()).copied();
        rows.push(html! {
            tr data-connector=(id) data-status=(status.attribute()) {
                td { (badge(id, label)) (label) }
                td { (manifest.description) }
                td { (status.label()) }
                td class="last-used" { (last_used(last_use, history.cut)) }
                td class="actions" { (actions) }
            }
        });
    }
    let connected = notice
        .connected
        .as_deref()
        .map(|id| usage::label_of(&dashboard.registry, id, None));
    let body = html! {
        @if let Some(connected) = &connected {
            (status_notice(&format!("{connected} is connected.")))
        }
        p { "Quarry reads these tools on your behalf, with read-only access you grant." }
        (table(
            "Your tools",
            &["Tool", "What it searches", "Status", "Last asked", "Actions"],
            &rows,
            "No tools are installed.",
        ))
        p { a href="/dashboard/activity" { "See what Quarry asked each tool" } }
    };
    let mut response = signed_in_page("Connected tools", &session, body);
    widen_form_action(&mut response, &origins);
    response
}

/// The person's latest questions, read until every installed tool has
/// been seen in one (or the history, or the page's bound, ends).
async fn last_asked(dashboard: &Dashboard, user_id: &str) -> anyhow::Result<usage::Read> {
    let mut unseen: std::collections::HashSet<String> = dashboard
        .registry
        .list()
        .iter()
        .map(|c| c.manifest.id.clone())
        .collect();
    let archive = dashboard.services.archive.clone();
    let user_id = user_id.to_string();
    tokio::task::spawn_blocking(move || {
        usage::read(&archive, &user_id, |_, next| {
            let more = !unseen.is_empty();
            for tool in &next.tools {
                unseen.remove(&tool.connector);
            }
            more
        })
    })
    .await?
}

/// When a tool was last asked and what it did then; else whether it
/// never was, as far as the history was read.
fn last_used(last_use: Option<(&Question, &ToolUse)>, history_cut: bool) -> Markup {
    let Some((question, tool)) = last_use else {
        return html! {
            @if history_cut { "Not in your latest questions" } @else { "Never" }
        };
    };
    let at = rfc3339(question.asked_at_ms.div_euclid(1000));
    html! {
        time datetime=(at) { (at) }
        br;
        small class=[tool.error.as_ref().map(|_| "failed")] { (outcome(tool)) }
    }
}

/// A tool's buttons: connect (or reconnect) when the dashboard can, else
/// why not while it is not connected; disconnect when it is.
fn tool_actions(
    session: &Session,
    manifest: &Manifest,
    status: Status,
    refused: Option<&str>,
) -> Markup {
    let (id, label) = (&manifest.id, &manifest.label);
    let connected = status != Status::NotConnected;
    let verb = if connected { "Reconnect" } else { "Connect" };
    html! {
        @match refused {
            None => (button_form(
                session,
                &format!("/dashboard/tools/{id}/connect"),
                verb,
                &format!("{verb} {label}"),
            )),
            Some(reason) if !connected => small { (reason) },
            Some(_) => {},
        }
        @if connected {
            // A space, as between words: the forms are inline.
            " "
            (button_form(
                session,
                &format!("/dashboard/tools/{id}/disconnect"),
                "Disconnect",
                &format!("Disconnect {label}"),
            ))
        }
    }
}
