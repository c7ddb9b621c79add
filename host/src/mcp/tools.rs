//! The MCP server rmcp runs for each POST: its tools, read-only all. They
//! answer with `structuredContent` and the same JSON as one text block;
//! a refusal is an `isError` result whose one text block is the contract's
//! error (`{"error": {"type", "message", ...}}`), with no
//! `structuredContent`: clients (the TypeScript SDK, the Inspector) hold
//! any `structuredContent` to the tool's output schema, errors included,
//! and would throw instead of handing the model the message. The REST rules hold: `query`
//! and `search` draw on the user's query limits and are archived like
//! `/v1/query` (they ask the query service, `crate::query`), `deep_search`
//! on the deep-search limits.

use std::future::Future;
use std::sync::Arc;

use axum::http::request::Parts;
use rmcp::handler::server::tool::{Extension, ToolRouter, schema_for_output};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, RequestMetaObject, Resource, ServerCapabilities,
    ServerConfig,
};
use rmcp::{Peer, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Mcp;
use super::caller::McpCaller;
use super::cancel::LegacyCancel;
use super::progress::Reporter;
use super::shapes::*;
use crate::access::Refusal;
use crate::account::{self, ConnectorList};
use crate::deep_search::{self, DeepSearchAnswer};
use crate::error::ApiError;
use crate::limits::Bucket;
use crate::query::idempotency::{check_key, stored_body};
use crate::query::{self, Answer, Keyed, Question};
use quarry_store::{Permission, User};

/// Source links a `query` result carries at most.
const MAX_LINKS: usize = 50;

#[derive(Clone)]
pub struct QuarryMcp {
    mcp: Arc<Mcp>,
    tool_router: ToolRouter<QuarryMcp>,
}

impl QuarryMcp {
    pub fn new(mcp: Arc<Mcp>) -> QuarryMcp {
        QuarryMcp {
            mcp,
            tool_router: router(),
        }
    }
}

/// The tools, their schemas with standard formats only (built once: a
/// server is made for every POST).
fn router() -> ToolRouter<QuarryMcp> {
    static ROUTER: std::sync::LazyLock<ToolRouter<QuarryMcp>> = std::sync::LazyLock::new(|| {
        let mut router = QuarryMcp::tool_router();
        for route in router.map.values_mut() {
            let tool = &mut route.attr;
            tool.input_schema = Arc::new(standard_formats_only(&tool.input_schema));
            if let Some(output) = &tool.output_schema {
                tool.output_schema = Some(Arc::new(standard_formats_only(output)));
            }
        }
        router
    });
    ROUTER.clone()
}

/// Formats JSON Schema defines (2020-12, §7.3); schemars also writes
/// Rust's (`uint64`, `uint32`, `double`...), which strict validators
/// refuse and the TypeScript SDK warns about at every compile.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` without any `format` that is not a standard one (the bounds
/// schemars writes beside them, `minimum: 0` for an unsigned integer,
/// stay).
fn standard_formats_only(
    schema: &serde_json::Map<String, Value>,
) -> serde_json::Map<String, Value> {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(object) => {
                let odd = object
                    .get("format")
                    .and_then(Value::as_str)
                    .is_some_and(|format| !STANDARD_FORMATS.contains(&format));
                if odd {
                    object.remove("format");
                }
                object.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut value = Value::Object(schema.clone());
    walk(&mut value);
    match value {
        Value::Object(object) => object,
        _ => unreachable!("an object stays an object"),
    }
}

/// What a tool call ends with: its answer, or the contract's error.
type Outcome<T> = Result<T, CallToolResult>;

#[tool_router]
impl QuarryMcp {
    #[tool(
        name = "search",
        title = "Search company knowledge",
        description = "Searches the user's connected business tools (tickets, docs, chat, CRM...) \
                       live and returns the best passages, each with an id for `fetch`.",
        annotations(
            title = "Search company knowledge",
            read_only_hint = true,
            open_world_hint = true
        )
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        Extension(parts): Extension<Parts>,
        ct: CancellationToken,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<Json<SearchOut>, CallToolResult> {
        let user = caller(&parts, Permission::Search)?;
        let question = Question {
            query: args.query,
            keywords: None,
            connectors: None,
            max_results: None,
        };
        let work = async {
            self.charge(&user, Bucket::Query, "search").await?;
            let reporter = Reporter::start(peer, &meta);
            let answered =
                query::answer(&self.mcp.services, &user.id, question, reporter.sender()).await;
            reporter.finish().await;
            let answered = answered?;
            self.hits(&user, &answered.answer, answered.archived)
        };
        Ok(Json(
            until_cancelled(ct, &parts, work).await.map_err(failure)?,
        ))
    }

    #[tool(
        name = "fetch",
        title = "Fetch a search result",
        description = "The whole passage a `search` result's id names, with its source, from the \
                       user's archive (no tool is asked again).",
        annotations(
            title = "Fetch a search result",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn fetch(
        &self,
        Parameters(args): Parameters<FetchArgs>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<FetchOut>, CallToolResult> {
        let user = caller(&parts, Permission::Search)?;
        let found = super::documents::fetch(&self.mcp.services, &user.id, &args.id).await;
        Ok(Json(found.map_err(failure)?))
    }

    #[tool(
        name = "query",
        title = "Ask the connected tools",
        description = "Asks the user's connected tools a question live and answers with cited \
                       passages grouped by tool (Quarry's POST /v1/query). Optional: keywords \
                       the tools' searches should look for (names, identifiers, synonyms), \
                       the connectors to ask, max_results per connector, an idempotency_key.",
        annotations(title = "Ask the connected tools", read_only_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<Answer>()
    )]
    async fn query(
        &self,
        Parameters(args): Parameters<QueryArgs>,
        Extension(parts): Extension<Parts>,
        ct: CancellationToken,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, CallToolResult> {
        let user = caller(&parts, Permission::Search)?;
        let work = async {
            let key = match &args.idempotency_key {
                Some(key) => Some(check_key(key.as_bytes())?),
                None => None,
            };
            let question = Question {
                query: args.query,
                keywords: args.keywords,
                connectors: args.connectors,
                max_results: args.max_results,
            };
            let idempotency = key.map(|key| (key, question_hash(&question)));
            // A replay is free, as at `/v1/query`.
            if let Some((key, hash)) = &idempotency
                && let Some(json) = stored_body(&self.mcp.services.store, &user.id, key, hash)
            {
                return Ok(serde_json::from_slice::<Answer>(&json)?);
            }
            self.charge(&user, Bucket::Query, "query").await?;
            let reporter = Reporter::start(peer, &meta);
            let services = &self.mcp.services;
            let progress = reporter.sender();
            let asked = match idempotency {
                None => query::answer(services, &user.id, question, progress)
                    .await
                    .map(|answered| answered.answer),
                Some(keyed) => {
                    match query::answer_with_key(services, &user.id, question, keyed, progress)
                        .await
                    {
                        Ok(Keyed::Answered { answer, .. }) => Ok(answer),
                        Ok(Keyed::Replayed(json)) => {
                            serde_json::from_slice(&json).map_err(ApiError::from)
                        }
                        Err(error) => Err(error),
                    }
                }
            };
            reporter.finish().await;
            asked
        };
        let answer = until_cancelled(ct, &parts, work).await.map_err(failure)?;
        Ok(with_links(structured(&answer)?, &answer))
    }

    #[tool(
        name = "deep_search",
        title = "Search earlier answers",
        description = "Searches, by meaning, every passage earlier questions found (the user's \
                       archive), optionally between date_from and date_to (ISO 8601). No tool \
                       is asked.",
        annotations(
            title = "Search earlier answers",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn deep_search(
        &self,
        Parameters(args): Parameters<DeepSearchArgs>,
        Extension(parts): Extension<Parts>,
        ct: CancellationToken,
    ) -> Result<Json<DeepSearchAnswer>, CallToolResult> {
        let user = caller(&parts, Permission::Archive)?;
        let work = async {
            self.charge(&user, Bucket::DeepSearch, "deep_search")
                .await?;
            let body = quarry_guard::bodies::DeepSearchBody {
                query: args.query,
                max_results: args.max_results,
                date_from: args.date_from,
                date_to: args.date_to,
            };
            deep_search::search(&self.mcp.services, &user.id, body).await
        };
        Ok(Json(
            until_cancelled(ct, &parts, work).await.map_err(failure)?,
        ))
    }

    #[tool(
        name = "list_connectors",
        title = "List connectors",
        description = "The tools Quarry can search, and which of them the user connected.",
        annotations(
            title = "List connectors",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_connectors(
        &self,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<ConnectorList>, CallToolResult> {
        let user = caller(&parts, Permission::Search)?;
        let listed = account::connectors(&self.mcp.services, &user.id);
        Ok(Json(listed.map_err(failure)?))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for QuarryMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("quarry", env!("CARGO_PKG_VERSION")).with_title("Quarry"),
            )
            .with_instructions(
                "Quarry answers questions from the user's business tools, read-only. Use \
                 `search` then `fetch` for passages with sources, `query` for answers grouped \
                 by tool, `deep_search` for what earlier questions found.",
            )
    }
}

impl QuarryMcp {
    /// Draws one request on the user's `bucket` (429's `rate_limited`).
    async fn charge(&self, user: &User, bucket: Bucket, what: &str) -> Result<(), ApiError> {
        let admitted = self.mcp.services.limiter.admit(&user.id, bucket).await;
        match admitted {
            Ok(_) => Ok(()),
            Err(refused) => Err(Refusal::from_limits(refused, &format!("the {what} tool")).error),
        }
    }

    /// `search`'s results: each chunk of the answer with the opaque id of
    /// its archived entry.
    fn hits(
        &self,
        user: &User,
        answer: &Answer,
        archived: std::ops::Range<u64>,
    ) -> Result<SearchOut, ApiError> {
        let mut results = Vec::new();
        for ((result, chunk), seq) in answer.chunks().zip(archived) {
            let title = match chunk.title() {
                "" => result.source_label.clone(),
                title => title.to_string(),
            };
            results.push(SearchHit {
                id: super::documents::id_of(&self.mcp.services, &user.id, seq)?,
                title,
                url: chunk.source_url.clone(),
                text: chunk.content.clone(),
            });
        }
        Ok(SearchOut { results })
    }
}

/// The user the gate authenticated, if their token's scope allows
/// `needed` (the gate refused the call with a 403 already; this holds
/// even if its reading of the message and rmcp's ever differed).
fn caller(parts: &Parts, needed: Permission) -> Outcome<User> {
    let caller = parts
        .extensions
        .get::<McpCaller>()
        .ok_or_else(|| failure(ApiError::internal("an MCP call without its caller")))?;
    if !caller.scope.allows(needed) {
        return Err(failure(ApiError::new(
            crate::error::ErrorType::Forbidden,
            format!("the token's scope does not include {}", needed.as_str()),
        )));
    }
    Ok(caller.user.clone())
}

/// Runs `work` until it ends or the client cancels the call: by closing
/// the request's stream (rmcp's token) or, in the older protocol, by a
/// `notifications/cancelled` (the gate's registry). Dropping the work
/// stops it: connectors still running are abandoned, an idempotency key
/// claimed is released.
async fn until_cancelled<T>(
    ct: CancellationToken,
    parts: &Parts,
    work: impl Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    let legacy = parts
        .extensions
        .get::<LegacyCancel>()
        .map(|l| l.0.token.clone())
        .unwrap_or_default();
    tokio::select! {
        done = work => done,
        () = ct.cancelled() => Err(cancelled()),
        () = legacy.cancelled() => Err(cancelled()),
    }
}

fn cancelled() -> ApiError {
    ApiError::bad_request("the call was cancelled by the client")
}

/// A refusal as the tool's `isError` result: the contract's error shape.
/// The contract's error as a tool error: its JSON as the only text.
fn failure(error: ApiError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(error.body().to_string())])
}

fn structured(value: &impl Serialize) -> Outcome<CallToolResult> {
    serde_json::to_value(value)
        .map(CallToolResult::structured)
        .map_err(|e| failure(ApiError::from(e)))
}

/// The answer's sources as resource links, after its JSON (each address
/// once).
fn with_links(mut result: CallToolResult, answer: &Answer) -> CallToolResult {
    let mut seen = std::collections::BTreeSet::new();
    for result_of_tool in &answer.results {
        for chunk in &result_of_tool.chunks {
            if seen.len() >= MAX_LINKS {
                return result;
            }
            if chunk.source_url.is_empty() || !seen.insert(chunk.source_url.clone()) {
                continue;
            }
            let title = chunk
                .metadata
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(&result_of_tool.source_label);
            let link = Resource::new(chunk.source_url.clone(), title.to_string())
                .with_title(title.to_string())
                .with_description(format!("from {}", result_of_tool.source_label));
            result.content.push(ContentBlock::resource_link(link));
        }
    }
    result
}

/// What an idempotency key is bound to for a `query` call: its arguments
/// (the key aside), hashed. Marked as MCP's so that the same key sent to
/// `/v1/query` with another body is a conflict, never a false replay.
fn question_hash(question: &Question) -> String {
    use sha2::Digest;
    let canonical = serde_json::json!({
        "query": question.query,
        "keywords": question.keywords,
        "connectors": question.connectors,
        "max_results": question.max_results,
    });
    let digest = sha2::Sha256::digest(format!("mcp:{canonical}").as_bytes());
    hex::encode(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_uses_standard_formats_only() {
        let tools = router().list_all();
        assert_eq!(tools.len(), 5);
        let all = serde_json::to_string(&tools).unwrap();
        assert!(all.contains("\"minimum\":0"), "unsigned bounds stay: {all}");
        for tool in tools {
            let text = serde_json::to_string(&tool).unwrap();
            for odd in ["uint", "int32", "int64", "double", "float"] {
                assert!(
                    !text.contains(&format!("\"format\":\"{odd}")),
                    "{}: {text}",
                    tool.name
                );
            }
        }
    }
}
