//! Who is calling a tool, and what each tool needs of their token: what
//! the gate ([`super::gate`]) learns and the tools ([`super::tools`]) and
//! cancellation ([`super::cancel`]) read.

use quarry_store::{Permission, Scope, User};

/// The authenticated user of an MCP request (in the request's extensions,
/// which rmcp hands the tools as `http::request::Parts`).
#[derive(Debug, Clone)]
pub struct McpCaller {
    pub user: User,
    pub scope: Scope,
}

/// The permission (scope) a tool needs; `None` for a name that is not a
/// tool (rmcp answers that). `fetch` reads what `search` returned, so the
/// two go together (ChatGPT's connectors use them as a pair).
pub fn permission_of(tool: &str) -> Option<Permission> {
    match tool {
        "search" | "fetch" | "query" | "list_connectors" => Some(Permission::Search),
        "deep_search" => Some(Permission::Archive),
        _ => None,
    }
}
