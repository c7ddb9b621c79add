//! The activity page: what Quarry did for the signed-in person, from their
//! sealed query history (`usage.rs`). First each tool's last 24 hours, as
//! a chart (`chart.rs`) and a table of the same figures; then the latest
//! questions, newest first, each with what every tool asked did and a
//! button that asks it again: through the same pipeline as `/v1/query`,
//! charged to the same limits, the answer shown grouped by tool.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::{Markup, html};

use super::Dashboard;
use super::chart;
use super::logo::badge;
use super::session::Session;
use super::templates::FormAbout;
use super::templates::{button_form, internal_error, message, signed_in_page, table};
use super::usage::{self, Question, ToolUse, error_kind, label_of, outcome};
use crate::calendar::rfc3339;
use crate::connectors::Registry;
use crate::limits::{Bucket, Decision, Refused};
use crate::query::{self, Answer, Chunk, ConnectorResult};

/// Questions listed on the page.
const RECENT: usize = 50;
const DAY_MS: i64 = 86_400_000;
/// A passage shown after running a question again is cut to this many
/// characters (the whole is at its source).
const EXCERPT_CHARS: usize = 600;

pub async fn page(State(dashboard): State<Arc<Dashboard>>, session: Session) -> Response {
    let now_ms = now_ms();
    let since_ms = now_ms - DAY_MS;
    let archive = dashboard.services.archive.clone();
    let user_id = session.user_id.clone();
    // The latest questions, and all of the last day's for the charts.
    let read = tokio::task::spawn_blocking(move || {
        usage::read(&archive, &user_id, |so_far, next| {
            so_far.len() < RECENT || next.asked_at_ms >= since_ms
        })
    })
    .await;
    let read = match read {
        Ok(Ok(read)) => read,
        Ok(Err(error)) => return internal_error("reading the query history", error),
        Err(error) => return internal_error("reading the query history", error),
    };
    let registry = &dashboard.registry;
    let recent = &read.questions[..read.questions.len().min(RECENT)];
    let body = html! {
        p {
            "What Quarry did for you: the questions you asked, newest first, and how each \
             tool answered. Your history is stored encrypted with your own key."
        }
        (last_day(registry, &read.questions, now_ms))
        section aria-labelledby="recent" {
            h2 id="recent" { "Recent questions" }
            (table(
                "Your latest questions, newest first",
                &["Question", "Asked", "Tools", "Actions"],
                &recent.iter().map(|q| question_row(&session, registry, q)).collect::<Vec<_>>(),
                "You have not asked Quarry anything yet. Questions asked through the API or \
                 an assistant appear here.",
            ))
        }
    };
    signed_in_page("Activity", &session, body)
}

/// Each tool's last 24 hours: a chart per tool asked, and the table of
/// the same figures (the charts' text alternative).
fn last_day(registry: &Registry, questions: &[Question], now_ms: i64) -> Markup {
    let mut tools: Vec<(String, &str, Vec<chart::Hour>)> =
        usage::samples(questions, now_ms - DAY_MS)
            .into_iter()
            .map(|(id, samples)| {
                let label = label_of(registry, id, recorded_label(questions, id));
                (label, id, chart::hourly(&samples, now_ms.div_euclid(1000)))
            })
            .collect();
    tools.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let rows: Vec<Markup> = tools
        .iter()
        .map(|(label, id, hours)| {
            let calls: u32 = hours.iter().map(|h| h.calls).sum();
            let failures: u32 = hours.iter().map(|h| h.failures).sum();
            let latencies: Vec<u64> = hours
                .iter()
                .flat_map(|h| h.latencies_ms.iter().copied())
                .collect();
            html! {
                tr data-connector=(id) {
                    td { (badge(id, label)) (label) }
                    td { (calls) }
                    td { (failures) }
                    td {
                        @match chart::median(&latencies) {
                            Some(ms) => { (ms) " ms" }
                            None => { "—" }
                        }
                    }
                }
            }
        })
        .collect();
    html! {
        section aria-labelledby="last-day" {
            h2 id="last-day" { "The last 24 hours" }
            @if tools.is_empty() {
                p { "No tool was asked anything in the last 24 hours." }
            } @else {
                p {
                    "Per tool and per hour (UTC): a bar for the median time it took to answer, \
                     a red dot over an hour in which it failed."
                }
                div class="charts" {
                    @for (n, (label, id, hours)) in tools.iter().enumerate() {
                        figure data-connector=(id) {
                            figcaption { (badge(id, label)) (label) }
                            (chart::render(&format!("chart-{n}"), label, hours))
                        }
                    }
                }
                (table(
                    "Each tool over the last 24 hours",
                    &["Tool", "Questions", "Failed", "Median latency"],
                    &rows,
                    "",
                ))
            }
        }
    }
}

/// The label a tool had when the newest question that asked it ran.
fn recorded_label<'a>(questions: &'a [Question], id: &str) -> Option<&'a str> {
    questions
        .iter()
        .flat_map(|q| &q.tools)
        .find(|t| t.connector == id)
        .and_then(|t| t.label.as_deref())
}

fn question_row(session: &Session, registry: &Registry, question: &Question) -> Markup {
    let asked = rfc3339(question.asked_at_ms.div_euclid(1000));
    html! {
        tr data-question=(question.number) {
            td { (question.text) }
            td { time datetime=(asked) { (asked) } }
            td {
                ul class="tools" {
                    @for tool in &question.tools {
                        (tool_item(registry, tool))
                    }
                }
            }
            td class="actions" {
                (button_form(
                    session,
                    &format!("/dashboard/activity/{}/run", question.number),
                    "Run again",
                    &format!("Run again: {}", shortened(&question.text, 80)),
                ))
            }
        }
    }
}

fn tool_item(registry: &Registry, tool: &ToolUse) -> Markup {
    let label = label_of(registry, &tool.connector, tool.label.as_deref());
    html! {
        li data-connector=(tool.connector) class=[tool.error.as_ref().map(|_| "failed")] {
            (badge(&tool.connector, &label))
            strong { (label) } ": " (outcome(tool))
            @if let Some(error) = &tool.error {
                " " small { (error.message) }
            }
        }
    }
}

/// Runs one of the person's questions again, over the tools it asked that
/// are still connected (every connected tool for a question recorded
/// before the tools asked were kept), and shows the answer.
pub async fn run_again(
    State(dashboard): State<Arc<Dashboard>>,
    FormAbout {
        session,
        id: number,
    }: FormAbout,
) -> Response {
    let Ok(number) = number.parse::<u64>() else {
        return no_such_question();
    };
    // Charged as `/v1/query` charges: the same bucket, the same windows.
    match dashboard
        .limiter
        .admit(&session.user_id, Bucket::Query)
        .await
    {
        Ok(_) => {}
        Err(Refused::Full(decision)) => return limited(&decision),
        Err(Refused::Unreadable(error, _)) => {
            return internal_error("charging the query limits", error);
        }
    }
    let question = match dashboard
        .services
        .archive
        .history_record(&session.user_id, number)
    {
        Ok(Some(record)) => Question::from_record(number, record),
        Ok(None) => return no_such_question(),
        Err(error) => return internal_error("reading a history record", error),
    };
    let connectors = match tools_to_ask(&dashboard, &session.user_id, &question) {
        Ok(connectors) => connectors,
        Err(why) => return message(StatusCode::CONFLICT, "Nothing to ask", &why),
    };
    let question = query::Question {
        query: question.text,
        keywords: None,
        connectors,
        max_results: None,
    };
    match query::answer(&dashboard.services, &session.user_id, question, None).await {
        Ok(answered) => signed_in_page("Answer", &session, answer_body(&answered.answer)),
        Err(error) => message(
            error.status,
            "The question was not answered",
            &error.message,
        ),
    }
}

/// The tools to ask: those the question asked that are still connected,
/// or `None` (every connected one) when the question did not record them.
fn tools_to_ask(
    dashboard: &Dashboard,
    user_id: &str,
    question: &Question,
) -> Result<Option<Vec<String>>, String> {
    if !question.outcomes_recorded {
        return Ok(None);
    }
    let connected = dashboard
        .store
        .grants(user_id)
        .map_err(|_| "Your tools could not be read. Try again.".to_string())?;
    let asked: Vec<String> = question
        .tools
        .iter()
        .map(|t| t.connector.clone())
        .filter(|id| connected.iter().any(|(c, _)| c == id))
        .filter(|id| dashboard.registry.get(id).is_some())
        .collect();
    match asked.is_empty() {
        true => Err(
            "None of the tools this question asked is connected now. Connect one on \
                     the Connected tools page, then run it again."
                .to_string(),
        ),
        false => Ok(Some(asked)),
    }
}

fn no_such_question() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "No such question",
        "This question is not in your history.",
    )
}

/// The page of a refused question, with when to try again.
fn limited(decision: &Decision) -> Response {
    let seconds = decision.retry_after;
    let mut page = message(
        StatusCode::TOO_MANY_REQUESTS,
        "Too many questions",
        &format!(
            "You asked as many questions as your limits allow for now (the same limits as \
             the API's). Try again in {seconds} seconds."
        ),
    );
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        page.headers_mut().insert(header::RETRY_AFTER, value);
    }
    page
}

/// An answer, grouped by tool as `/v1/query` gives it.
fn answer_body(answer: &Answer) -> Markup {
    html! {
        p {
            "You asked again: " q { (answer.query) } " — answered in "
            (answer.search_summary.duration_ms) " ms, "
            (chart::count(answer.search_summary.total_chunks_found, "passage", "passages"))
            " found."
        }
        @for (n, result) in answer.results.iter().enumerate() {
            (tool_answer(n, result))
        }
        p { a href="/dashboard/activity" { "Back to your activity" } }
    }
}

fn tool_answer(n: usize, result: &ConnectorResult) -> Markup {
    let heading = format!("answer-{n}");
    html! {
        section aria-labelledby=(heading) data-connector=(result.connector) {
            h2 id=(heading) { (badge(&result.connector, &result.source_label)) (result.source_label) }
            @if let Some(error) = &result.error {
                p class="failed" { "Failed (" (error_kind(&error.kind)) "): " (error.message) }
            } @else if result.chunks.is_empty() {
                p { "Nothing found." }
            } @else {
                ol class="passages" {
                    @for chunk in &result.chunks {
                        li class="passage" {
                            (source(chunk))
                            p { (shortened(&chunk.content, EXCERPT_CHARS)) }
                        }
                    }
                }
            }
        }
    }
}

/// A passage's document: its title, linked to it when its address is a
/// web one.
fn source(chunk: &Chunk) -> Markup {
    let title = Some(chunk.title())
        .filter(|t| !t.trim().is_empty())
        .unwrap_or("Untitled");
    let url = &chunk.source_url;
    html! {
        @if url.starts_with("https://") || url.starts_with("http://") {
            a href=(url) { (title) }
        } @else {
            strong { (title) }
        }
    }
}

/// `text` cut to `chars` characters, with an ellipsis when cut.
fn shortened(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_at_a_character() {
        assert_eq!(shortened("héllo", 2), "hé…");
        assert_eq!(shortened("héllo", 5), "héllo");
    }
}
