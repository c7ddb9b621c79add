//! The connector manifest: `<id>.toml`, beside `<id>.wasm` in the plugins folder.
//!
//! The manifest is the connector's declaration of everything the host lets it
//! do: which routes it may fetch (method + URL pattern), how the user's token
//! is injected, which OAuth scopes are requested (all read-only), and limits.
//! The host trusts the manifest, not the component: the component only ever
//! gets what the manifest grants.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::pattern::UrlPattern;
use super::problem::{Problem, join_errors};

/// The contract versions this host can run, by major version.
pub const SUPPORTED_WIT_MAJORS: &[u64] = &[1];

#[derive(Debug, Clone)]
pub struct Manifest {
    pub id: String,
    pub label: String,
    pub version: String,
    /// The `quarry:connector` version the component targets, e.g. `1.0.0`.
    pub wit: String,
    pub description: String,
    pub routes: Vec<Route>,
    pub auth: Auth,
    pub oauth: Option<OAuth>,
    pub limits: RequestedLimits,
    pub settings: Vec<Setting>,
}

/// What kind of request a route admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RouteKind {
    /// GET and HEAD only.
    Read,
    /// A search endpoint that takes its question in a POST body.
    Query,
    /// A GraphQL endpoint: POST whose body holds exactly one `query` operation.
    Graphql,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Head,
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Route {
    pub method: Method,
    pub url: UrlPattern,
    pub kind: RouteKind,
}

impl Route {
    /// Whether this route admits `method` (HEAD rides along with GET).
    pub fn admits_method(&self, method: Method) -> bool {
        self.method == method || (self.method == Method::Get && method == Method::Head)
    }
}

/// How the host adds the user's credential to requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthScheme {
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// `<header>: <token>` (for vendors with their own header).
    Header(String),
    /// No credential (public APIs, test plugins).
    None,
}

#[derive(Debug, Clone)]
pub struct Auth {
    pub scheme: AuthScheme,
    /// Host patterns that receive the credential. Defaults to the hosts of
    /// the routes; the token never goes anywhere else.
    pub hosts: Vec<UrlPattern>,
}

#[derive(Debug, Clone)]
pub struct OAuth {
    pub authorize_url: String,
    pub token_url: String,
    pub scopes: Vec<String>,
    pub revoke: Option<Revoke>,
    pub flow: Flow,
}

/// How people get a token for the tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flow {
    /// OAuth 2.0 authorization code (the dashboard adds PKCE).
    #[default]
    AuthorizationCode,
    /// The vendor issues tokens another way (Trello's legacy token page,
    /// OAuth 1.0a): the operator connects it (`quarry admin connect`).
    Manual,
}

/// How a token is revoked upstream (RFC 7009 or the vendor's own call).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Revoke {
    pub url: String,
    #[serde(default = "default_revoke_method")]
    pub method: String,
    /// `form` (RFC 7009: `token=` in a form body), `bearer` (the token as a
    /// bearer credential, as Slack's `auth.revoke`), or `json` (the token as
    /// a JSON field, as GitHub's application API and Notion).
    #[serde(default = "default_revoke_style")]
    pub style: String,
    /// With the `json` style, the field that carries the token (`token`
    /// unless said otherwise; GitHub's is `access_token`).
    #[serde(default)]
    pub token_field: Option<String>,
}

fn default_revoke_method() -> String {
    "POST".into()
}
fn default_revoke_style() -> String {
    "form".into()
}

/// Limits a connector asks for; the operator's maxima clamp them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedLimits {
    pub max_fetches: Option<u32>,
    pub max_response_bytes: Option<u64>,
    pub fetch_timeout_ms: Option<u64>,
    pub call_timeout_ms: Option<u64>,
    pub memory_bytes: Option<u64>,
    /// Requests of one `fetch-many` batch in flight at once (contract 1.1).
    pub max_concurrent_fetches: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
    /// Filled from the token response's field of the same name when a
    /// person connects (Salesforce's `instance_url`), not asked for.
    #[serde(default)]
    pub from_token: bool,
}

/// Fills `{name}` placeholders of an OAuth endpoint with a connection's
/// settings (Zendesk's `https://{subdomain}.zendesk.com/...`). Values must
/// be host labels, so that a setting cannot move the request elsewhere.
pub fn fill_endpoint(template: &str, settings: &[(String, String)]) -> Result<String, String> {
    let mut filled = template.to_string();
    for (name, value) in settings {
        let placeholder = format!("{{{name}}}");
        if !filled.contains(&placeholder) {
            continue;
        }
        let label = !value.is_empty()
            && value.len() <= 63
            && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !value.starts_with('-');
        if !label {
            return Err(format!(
                "{name} must be letters, digits and hyphens only (it is part of an address)"
            ));
        }
        filled = filled.replace(&placeholder, value);
    }
    match (filled.find('{'), filled.find('}')) {
        (Some(open), Some(close)) if open < close => Err(format!(
            "the setting {} is needed",
            &filled[open + 1..close]
        )),
        _ => Ok(filled),
    }
}

/// The operator's ceilings (and defaults) for every connector.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxLimits {
    pub max_fetches: u32,
    pub max_response_bytes: u64,
    pub fetch_timeout_ms: u64,
    pub call_timeout_ms: u64,
    pub memory_bytes: u64,
    /// The most requests of one call in flight at once that a connector
    /// may ask for (one that does not ask gets
    /// [`DEFAULT_CONCURRENT_FETCHES`], within this): a vendor sees at most
    /// this many connections from one search.
    pub max_concurrent_fetches: u32,
}

/// Requests of one call in flight at once when the manifest does not say.
pub const DEFAULT_CONCURRENT_FETCHES: u32 = 8;

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            max_fetches: 16,
            max_response_bytes: 4 * 1024 * 1024,
            fetch_timeout_ms: 10_000,
            call_timeout_ms: 20_000,
            memory_bytes: 128 * 1024 * 1024,
            max_concurrent_fetches: 16,
        }
    }
}

impl SandboxLimits {
    /// The limits for one connector: what it asked for, never above `self`.
    pub fn for_connector(&self, asked: &RequestedLimits) -> SandboxLimits {
        SandboxLimits {
            max_fetches: asked
                .max_fetches
                .map_or(self.max_fetches, |v| v.min(self.max_fetches)),
            max_response_bytes: clamp(asked.max_response_bytes, self.max_response_bytes),
            fetch_timeout_ms: clamp(asked.fetch_timeout_ms, self.fetch_timeout_ms),
            call_timeout_ms: clamp(asked.call_timeout_ms, self.call_timeout_ms),
            memory_bytes: clamp(asked.memory_bytes, self.memory_bytes),
            max_concurrent_fetches: asked
                .max_concurrent_fetches
                .unwrap_or(DEFAULT_CONCURRENT_FETCHES)
                .min(self.max_concurrent_fetches),
        }
    }

    pub fn fetch_timeout(&self) -> Duration {
        Duration::from_millis(self.fetch_timeout_ms)
    }

    pub fn call_timeout(&self) -> Duration {
        Duration::from_millis(self.call_timeout_ms)
    }
}

fn clamp(asked: Option<u64>, ceiling: u64) -> u64 {
    asked.map_or(ceiling, |v| v.min(ceiling))
}

// ---- the TOML form -------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    id: String,
    label: String,
    version: String,
    wit: String,
    #[serde(default)]
    description: String,
    routes: Vec<RawRoute>,
    #[serde(default)]
    auth: RawAuth,
    oauth: Option<RawOAuth>,
    #[serde(default)]
    limits: RequestedLimits,
    #[serde(default)]
    settings: Vec<Setting>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    method: Method,
    url: String,
    #[serde(default = "default_kind")]
    kind: RouteKind,
}

fn default_kind() -> RouteKind {
    RouteKind::Read
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAuth {
    /// `bearer` (default), `header`, or `none`.
    scheme: Option<String>,
    header: Option<String>,
    hosts: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOAuth {
    authorize_url: String,
    token_url: String,
    #[serde(default)]
    scopes: Vec<RawScope>,
    revoke: Option<Revoke>,
    #[serde(default)]
    flow: Flow,
}

/// Every scope must say it is read-only: a manifest cannot request a write
/// scope by accident, and a reviewer sees the claim next to the name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScope {
    name: String,
    read_only: bool,
}

impl Manifest {
    /// Parses and validates a manifest. Every problem is reported, not just
    /// the first, so that `quarry connector check` can list them all.
    pub fn parse(text: &str) -> Result<Manifest> {
        let raw: RawManifest = toml::from_str(text).context("manifest is not valid TOML")?;
        let mut problems = Vec::new();
        let manifest = raw.validate(&mut problems);
        if !problems.is_empty() {
            bail!(
                "manifest has {} problem(s): {}",
                problems.len(),
                join_errors(&problems)
            );
        }
        Ok(manifest)
    }

    /// Parses and validates a manifest without stopping at its errors: the
    /// manifest as far as it could be read (none when it is not valid
    /// TOML or misses a required key) and every error found. [`parse`]
    /// is this, refusing any error.
    ///
    /// [`parse`]: Manifest::parse
    pub fn parse_reporting(text: &str) -> (Option<Manifest>, Vec<Problem>) {
        match toml::from_str::<RawManifest>(text) {
            Ok(raw) => {
                let mut problems = Vec::new();
                let manifest = raw.validate(&mut problems);
                (Some(manifest), problems)
            }
            Err(e) => (
                None,
                vec![Problem::error(
                    "toml",
                    format!("manifest is not valid TOML: {}", e.to_string().trim_end()),
                )],
            ),
        }
    }

    /// What the host accepts but a reviewer should look at twice: no way
    /// to revoke the user's token at the vendor, and read-only scopes whose
    /// names suggest writing. The host never acts on these; `quarry
    /// connector check` prints them.
    pub fn warnings(&self) -> Vec<Problem> {
        let mut warnings = Vec::new();
        let takes_credential = self.auth.scheme != AuthScheme::None;
        match &self.oauth {
            Some(oauth) if oauth.revoke.is_none() => warnings.push(Problem::warning(
                "no-revocation",
                "oauth has no revoke endpoint: when a user deletes their data, their token \
                 cannot be revoked at the vendor (add [oauth] revoke if the vendor has one)",
            )),
            None if takes_credential => warnings.push(Problem::warning(
                "no-revocation",
                "no [oauth] section, so no revoke endpoint: when a user deletes their data, \
                 their token cannot be revoked at the vendor",
            )),
            _ => {}
        }
        for scope in self.oauth.iter().flat_map(|o| &o.scopes) {
            let words: Vec<String> = scope
                .split(|c: char| !c.is_ascii_alphanumeric())
                .map(str::to_ascii_lowercase)
                .collect();
            if let Some(word) = words.iter().find(|w| WRITE_WORDS.contains(&w.as_str())) {
                warnings.push(Problem::warning(
                    "scope-name",
                    format!(
                        "oauth scope {scope:?} is marked read-only but its name says {word:?}: \
                         check the vendor's documentation"
                    ),
                ));
            }
        }
        warnings
    }

    /// The major version of the contract this connector targets.
    pub fn wit_major(&self) -> u64 {
        self.wit
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0)
    }
}

/// Words in a scope's name that usually mean it grants writes.
const WRITE_WORDS: &[&str] = &[
    "write", "admin", "delete", "manage", "modify", "send", "create", "update", "edit",
];

impl RawManifest {
    fn validate(self, problems: &mut Vec<Problem>) -> Manifest {
        if !is_valid_id(&self.id) {
            problems.push(Problem::error("id", format!(
                "id {:?} must be 1-64 characters of a-z, 0-9, '-' and '_', starting with a letter",
                self.id
            )));
        }
        if self.label.trim().is_empty() {
            problems.push(Problem::error("label", "label is empty"));
        }
        match parse_semver_major(&self.wit) {
            Some(major) if SUPPORTED_WIT_MAJORS.contains(&major) => {}
            Some(_) => problems.push(Problem::error(
                "wit-version",
                format!(
                    "wit version {} is not supported by this host (supported majors: {:?})",
                    self.wit, SUPPORTED_WIT_MAJORS
                ),
            )),
            None => problems.push(Problem::error(
                "wit-version",
                format!("wit {:?} is not a version like \"1.0.0\"", self.wit),
            )),
        }
        if self.routes.is_empty() {
            problems.push(Problem::error(
                "routes",
                "no routes: a connector must declare what it may fetch",
            ));
        }
        let mut routes = Vec::new();
        for (i, raw) in self.routes.into_iter().enumerate() {
            match raw.validate() {
                Ok(route) => routes.push(route),
                Err(problem) => problems.push(problem.within(&format!("routes[{i}]"))),
            }
        }
        let auth = validate_auth(self.auth, &routes, problems);
        let oauth = self.oauth.map(|o| validate_oauth(o, problems));
        for (name, value) in [
            ("max_fetches", self.limits.max_fetches.map(u64::from)),
            ("max_response_bytes", self.limits.max_response_bytes),
            ("fetch_timeout_ms", self.limits.fetch_timeout_ms),
            ("call_timeout_ms", self.limits.call_timeout_ms),
            ("memory_bytes", self.limits.memory_bytes),
            (
                "max_concurrent_fetches",
                self.limits.max_concurrent_fetches.map(u64::from),
            ),
        ] {
            if value == Some(0) {
                problems.push(Problem::error(
                    "limits",
                    format!("limits.{name} must be positive"),
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for s in &self.settings {
            if !seen.insert(&s.name) {
                problems.push(Problem::error(
                    "settings",
                    format!("setting {:?} is declared twice", s.name),
                ));
            }
        }
        // Placeholders in the OAuth endpoints are settings a person types.
        if let Some(oauth) = &oauth {
            let askable: Vec<(String, String)> = self
                .settings
                .iter()
                .filter(|s| !s.from_token)
                .map(|s| (s.name.clone(), "x".to_string()))
                .collect();
            for url in [&oauth.authorize_url, &oauth.token_url] {
                if let Err(why) = fill_endpoint(url, &askable) {
                    problems.push(Problem::error(
                        "oauth",
                        format!(
                            "{url}: {why}, but no such setting is declared (or it is from_token)"
                        ),
                    ));
                }
            }
        }
        Manifest {
            id: self.id,
            label: self.label,
            version: self.version,
            wit: self.wit,
            description: self.description,
            routes,
            auth,
            oauth,
            limits: self.limits,
            settings: self.settings,
        }
    }
}

impl RawRoute {
    fn validate(self) -> Result<Route, Problem> {
        let url =
            UrlPattern::parse(&self.url).map_err(|e| Problem::error("route", format!("{e:#}")))?;
        match (self.method, self.kind) {
            (Method::Get | Method::Head, RouteKind::Read) => {}
            (Method::Post, RouteKind::Query | RouteKind::Graphql) => {}
            (Method::Post, RouteKind::Read) => {
                return Err(Problem::error(
                    "post-not-query",
                    format!(
                        "POST {} is not marked as a query route (kind = \"query\" or \"graphql\"): \
                         POST is allowed only where it reads",
                        self.url
                    ),
                ));
            }
            (m, k) => {
                return Err(Problem::error(
                    "route",
                    format!(
                        "{} with kind {k:?} makes no sense: query and graphql routes are POST",
                        m.as_str()
                    ),
                ));
            }
        }
        Ok(Route {
            method: self.method,
            url,
            kind: self.kind,
        })
    }
}

fn validate_auth(raw: RawAuth, routes: &[Route], problems: &mut Vec<Problem>) -> Auth {
    let scheme = match (raw.scheme.as_deref().unwrap_or("bearer"), raw.header) {
        ("bearer", None) => AuthScheme::Bearer,
        ("none", None) => AuthScheme::None,
        ("header", Some(h)) if is_header_name(&h) => AuthScheme::Header(h.to_ascii_lowercase()),
        ("header", Some(h)) => {
            problems.push(Problem::error(
                "auth",
                format!("auth.header {h:?} is not a header name"),
            ));
            AuthScheme::None
        }
        ("header", None) => {
            problems.push(Problem::error(
                "auth",
                "auth.scheme = \"header\" needs auth.header",
            ));
            AuthScheme::None
        }
        (other, Some(_)) if other != "header" => {
            problems.push(Problem::error(
                "auth",
                "auth.header is only meaningful with scheme = \"header\"",
            ));
            AuthScheme::None
        }
        (other, _) => {
            problems.push(Problem::error(
                "auth",
                format!("auth.scheme {other:?} is not one of bearer, header, none"),
            ));
            AuthScheme::None
        }
    };
    let hosts = match raw.hosts {
        Some(hosts) => hosts
            .iter()
            .filter_map(|h| match UrlPattern::parse_host(h) {
                Ok(p) => Some(p),
                Err(e) => {
                    problems.push(Problem::error("auth", format!("auth.hosts: {e:#}")));
                    None
                }
            })
            .collect(),
        None => routes.iter().map(|r| r.url.host_only()).collect(),
    };
    Auth { scheme, hosts }
}

fn validate_oauth(raw: RawOAuth, problems: &mut Vec<Problem>) -> OAuth {
    for (what, url) in [
        ("authorize_url", &raw.authorize_url),
        ("token_url", &raw.token_url),
    ] {
        if !url.starts_with("https://") {
            problems.push(Problem::error(
                "oauth",
                format!("oauth.{what} must be an https URL"),
            ));
        }
    }
    if let Some(revoke) = &raw.revoke {
        if !revoke.url.starts_with("https://") {
            problems.push(Problem::error(
                "oauth",
                "oauth.revoke.url must be an https URL",
            ));
        }
        if !matches!(revoke.method.as_str(), "POST" | "DELETE") {
            problems.push(Problem::error(
                "oauth",
                format!(
                    "oauth.revoke.method {:?} is not POST or DELETE",
                    revoke.method
                ),
            ));
        }
        if !matches!(revoke.style.as_str(), "form" | "bearer" | "json") {
            problems.push(Problem::error(
                "oauth",
                format!(
                    "oauth.revoke.style {:?} is not form, bearer or json",
                    revoke.style
                ),
            ));
        }
    }
    let mut scopes = Vec::new();
    for scope in raw.scopes {
        if scope.read_only {
            scopes.push(scope.name);
        } else {
            problems.push(Problem::error(
                "write-scope",
                format!(
                    "oauth scope {:?} is not read-only: Quarry requests only read-only scopes",
                    scope.name
                ),
            ));
        }
    }
    OAuth {
        authorize_url: raw.authorize_url,
        token_url: raw.token_url,
        scopes,
        revoke: raw.revoke,
        flow: raw.flow,
    }
}

fn parse_semver_major(v: &str) -> Option<u64> {
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.parse::<u64>().is_err()) {
        return None;
    }
    parts[0].parse().ok()
}

pub fn is_valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_endpoints_are_filled_with_host_labels_only() {
        let zendesk = "https://{subdomain}.zendesk.com/oauth/tokens";
        let set = |v: &str| vec![("subdomain".to_string(), v.to_string())];
        assert_eq!(
            fill_endpoint(zendesk, &set("acme")).unwrap(),
            "https://acme.zendesk.com/oauth/tokens"
        );
        for bad in ["", "evil.com/x", "a@b", "-x", "a.b"] {
            assert!(fill_endpoint(zendesk, &set(bad)).is_err(), "{bad:?}");
        }
        assert!(
            fill_endpoint(zendesk, &[])
                .unwrap_err()
                .contains("subdomain")
        );
        assert_eq!(
            fill_endpoint("https://x.test/t", &set("acme")).unwrap(),
            "https://x.test/t"
        );
    }

    const GOOD: &str = r#"
        id = "notion"
        label = "Notion"
        version = "1.0.0"
        wit = "1.0.0"
        [[routes]]
        method = "POST"
        url = "https://api.notion.com/v1/search"
        kind = "query"
        [[routes]]
        method = "GET"
        url = "https://api.notion.com/v1/blocks/{id}/children"
        [oauth]
        authorize_url = "https://api.notion.com/v1/oauth/authorize"
        token_url = "https://api.notion.com/v1/oauth/token"
        scopes = []
        revoke = { url = "https://api.notion.com/v1/oauth/revoke" }
    "#;

    #[test]
    fn parses_a_good_manifest() {
        let m = Manifest::parse(GOOD).unwrap();
        assert_eq!(m.id, "notion");
        assert_eq!(m.routes.len(), 2);
        assert_eq!(m.auth.scheme, AuthScheme::Bearer);
        assert_eq!(m.auth.hosts.len(), 2);
        assert_eq!(m.wit_major(), 1);
    }

    #[test]
    fn reports_every_problem() {
        let bad = r#"
            id = "Bad Id"
            label = ""
            version = "1"
            wit = "2.0.0"
            [[routes]]
            method = "POST"
            url = "https://api.example.com/things"
            [[routes]]
            method = "GET"
            url = "http://api.example.com/x"
            [oauth]
            authorize_url = "https://example.com/a"
            token_url = "https://example.com/t"
            scopes = [{ name = "repo", read_only = false }]
        "#;
        let err = format!("{:#}", Manifest::parse(bad).unwrap_err());
        for needle in [
            "id \"Bad Id\"",
            "label is empty",
            "wit version 2.0.0",
            "not marked as a query route",
            "https",
            "\"repo\" is not read-only",
        ] {
            assert!(err.contains(needle), "{needle:?} missing from: {err}");
        }
    }

    #[test]
    fn unknown_keys_are_refused() {
        let text = GOOD.replace("label = \"Notion\"", "label = \"Notion\"\nwrite = true");
        assert!(format!("{:#}", Manifest::parse(&text).unwrap_err()).contains("write"));
    }

    #[test]
    fn operator_limits_clamp_what_a_connector_asks() {
        let operator = SandboxLimits::default();
        let asked = RequestedLimits {
            max_fetches: Some(1000),
            memory_bytes: Some(1024),
            max_concurrent_fetches: Some(64),
            ..Default::default()
        };
        let got = operator.for_connector(&asked);
        assert_eq!(got.max_fetches, operator.max_fetches);
        assert_eq!(got.memory_bytes, 1024);
        assert_eq!(got.max_concurrent_fetches, operator.max_concurrent_fetches);
        let fewer = RequestedLimits {
            max_concurrent_fetches: Some(2),
            ..Default::default()
        };
        assert_eq!(operator.for_connector(&fewer).max_concurrent_fetches, 2);
        let silent = operator.for_connector(&RequestedLimits::default());
        assert_eq!(silent.max_concurrent_fetches, DEFAULT_CONCURRENT_FETCHES);
    }
}
