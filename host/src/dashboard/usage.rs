//! What Quarry did for a person, read from their sealed query history
//! (`archive::HistoryRecord`): each question with the tools it asked and
//! what each did, when each tool was last used, and the samples of the
//! activity chart.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;

use super::chart::Sample;
use crate::archive::{Archive, HistoryRecord, ToolError};
use crate::connectors::Registry;
use quarry_store::records::Flow;

/// Most history records a page opens, newest first: a person's recent
/// weeks, and a bound on the work of one page view.
pub const MAX_SCANNED: usize = 1000;

/// One question of the history.
pub struct Question {
    /// Its number in the history (the run-again form names it).
    pub number: u64,
    pub text: String,
    pub asked_at_ms: i64,
    pub tools: Vec<ToolUse>,
    /// Whether `tools` holds every tool asked, with what each did.
    /// Questions recorded before that was kept say only which tools
    /// found something.
    pub outcomes_recorded: bool,
}

/// One tool's part in a question.
pub struct ToolUse {
    pub connector: String,
    /// Its label when the question was asked (the pages prefer today's).
    pub label: Option<String>,
    /// From the call to its answer or error; `None` when not recorded.
    pub latency_ms: Option<u64>,
    /// Chunks of the answer it gave; `None` when not recorded (it found
    /// at least one).
    pub results: Option<u64>,
    pub error: Option<ToolError>,
}

impl Question {
    pub fn from_record(number: u64, record: HistoryRecord) -> Question {
        let outcomes_recorded = !record.tools.is_empty();
        let tools = match outcomes_recorded {
            true => record
                .tools
                .into_iter()
                .map(|tool| ToolUse {
                    connector: tool.connector,
                    label: Some(tool.label),
                    latency_ms: Some(tool.latency_ms),
                    results: Some(tool.results),
                    error: tool.error,
                })
                .collect(),
            false => record
                .connectors
                .into_iter()
                .map(|connector| ToolUse {
                    connector,
                    label: None,
                    latency_ms: None,
                    results: None,
                    error: None,
                })
                .collect(),
        };
        Question {
            number,
            text: record.query,
            asked_at_ms: record.queried_at_ms,
            tools,
            outcomes_recorded,
        }
    }
}

/// Questions read from a person's history, newest first.
pub struct Read {
    pub questions: Vec<Question>,
    /// Whether older questions were left unread.
    pub cut: bool,
}

/// The person's questions from the newest back, for as long as `more`
/// says (told the questions read so far and the next one), and at most
/// [`MAX_SCANNED`]. Blocking: it reads the store and opens each record.
pub fn read(
    archive: &Archive,
    user_id: &str,
    mut more: impl FnMut(&[Question], &Question) -> bool,
) -> Result<Read> {
    let mut questions = Vec::new();
    let mut cut = false;
    archive.history_newest_first(user_id, |number, record| {
        let question = Question::from_record(number, record);
        if questions.len() >= MAX_SCANNED || !more(&questions, &question) {
            cut = true;
            return Flow::Stop;
        }
        questions.push(question);
        Flow::Continue
    })?;
    Ok(Read { questions, cut })
}

/// When each tool was last asked, and what it did then, by connector id
/// (`questions` newest first).
pub fn last_uses(questions: &[Question]) -> HashMap<&str, (&Question, &ToolUse)> {
    let mut last = HashMap::new();
    for question in questions {
        for tool in &question.tools {
            last.entry(tool.connector.as_str())
                .or_insert((question, tool));
        }
    }
    last
}

/// Each tool's part in the questions asked since `since_ms`, as the chart
/// counts it, by connector id.
pub fn samples(questions: &[Question], since_ms: i64) -> BTreeMap<&str, Vec<Sample>> {
    let mut samples: BTreeMap<&str, Vec<Sample>> = BTreeMap::new();
    for question in questions.iter().filter(|q| q.asked_at_ms >= since_ms) {
        for tool in &question.tools {
            samples
                .entry(tool.connector.as_str())
                .or_default()
                .push(Sample {
                    at_ms: question.asked_at_ms,
                    latency_ms: tool.latency_ms,
                    failed: tool.error.is_some(),
                });
        }
    }
    samples
}

/// What a person calls a tool: its manifest's label today, else the one
/// recorded with the question (a tool since removed), else its id.
pub fn label_of(registry: &Registry, id: &str, recorded: Option<&str>) -> String {
    match registry.get(id) {
        Some(connector) => connector.manifest.label.clone(),
        None => recorded.unwrap_or(id).to_string(),
    }
}

/// What a tool did for a question, in a few words.
pub fn outcome(tool: &ToolUse) -> String {
    let took = tool
        .latency_ms
        .map(|ms| format!(" in {ms} ms"))
        .unwrap_or_default();
    match (&tool.error, tool.results) {
        (Some(error), _) => format!("failed{took}: {}", error_kind(&error.kind)),
        (None, Some(0)) => format!("nothing found{took}"),
        (None, Some(n)) => format!("{}{took}", super::chart::count(n, "result", "results")),
        (None, None) => "found results".to_string(),
    }
}

/// An error's type as words (`rate_limited` is "rate limited").
pub fn error_kind(kind: &str) -> String {
    kind.replace('_', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::ToolOutcome;

    fn record(tools: Vec<ToolOutcome>, connectors: &[&str]) -> HistoryRecord {
        HistoryRecord {
            query_id: "qry_1".into(),
            query: "q".into(),
            queried_at_ms: 5_000,
            first_seq: 0,
            chunks: 2,
            connectors: connectors.iter().map(|c| c.to_string()).collect(),
            tools,
        }
    }

    fn tool(connector: &str, latency_ms: u64, results: u64, error: Option<&str>) -> ToolOutcome {
        ToolOutcome {
            connector: connector.into(),
            label: connector.to_uppercase(),
            latency_ms,
            results,
            error: error.map(|kind| ToolError {
                kind: kind.into(),
                message: "m".into(),
            }),
        }
    }

    #[test]
    fn a_question_says_what_each_tool_did() {
        let question = Question::from_record(
            7,
            record(
                vec![
                    tool("slack", 120, 2, None),
                    tool("jira", 5000, 0, Some("timeout")),
                    tool("asana", 80, 0, None),
                ],
                &["slack"],
            ),
        );
        assert!(question.outcomes_recorded);
        let said: Vec<String> = question.tools.iter().map(outcome).collect();
        assert_eq!(
            said,
            [
                "2 results in 120 ms",
                "failed in 5000 ms: timeout",
                "nothing found in 80 ms"
            ]
        );
        let samples = samples(std::slice::from_ref(&question), 0);
        assert_eq!(
            samples["jira"],
            [Sample {
                at_ms: 5_000,
                latency_ms: Some(5000),
                failed: true
            }]
        );
    }

    #[test]
    fn an_older_question_names_the_tools_that_found_something() {
        let question = Question::from_record(0, record(Vec::new(), &["github", "slack"]));
        assert!(!question.outcomes_recorded);
        let tools: Vec<&str> = question
            .tools
            .iter()
            .map(|t| t.connector.as_str())
            .collect();
        assert_eq!(tools, ["github", "slack"]);
        assert_eq!(outcome(&question.tools[0]), "found results");
        assert_eq!(samples(&[question], 6_000).len(), 0, "older than asked for");
    }

    #[test]
    fn the_last_use_of_a_tool_is_the_newest_question_that_asked_it() {
        let newer = Question::from_record(2, record(vec![tool("slack", 1, 1, None)], &[]));
        let older = Question::from_record(
            1,
            record(
                vec![tool("slack", 2, 2, None), tool("jira", 3, 3, None)],
                &[],
            ),
        );
        let questions = [newer, older];
        let last = last_uses(&questions);
        assert_eq!(last["slack"].0.number, 2);
        assert_eq!(last["jira"].0.number, 1);
        assert!(!last.contains_key("asana"));
    }
}
