//! A fake for a vendor of your own: `fake-saas fixtures --dir DIR` answers
//! the requests that `DIR/routes.toml` describes with the files beside it,
//! over HTTPS, with a CA made at start (as the fake vendors do). A
//! connector author points the demo at it with `quarry demo --fake
//! HOST=ADDR --fake-ca PEM`.
//!
//! ```toml
//! [[routes]]
//! method = "GET"                              # the default; HEAD is answered by GET routes
//! url = "https://api.acme.example/v1/search"  # a `{name}` path segment matches any one segment
//! query = { q = "checkout" }                  # these parameters with these values (others may come)
//! status = 200                                # the default
//! file = "search-checkout.json"               # the body: a file in DIR, or `body = "..."`
//! headers = { "x-request-id" = "r-1" }
//!
//! [[routes]]
//! method = "POST"
//! url = "https://api.acme.example/v1/query"
//! body_contains = "checkout"                  # text the request's body must contain
//! file = "query.json"
//! ```
//!
//! A vendor's search that takes its words in a parameter is answered from
//! data: `[[searches]]` entries name its records (the vendor's own JSON),
//! its search rules (a declaration, as the built-in vendors' are) and where
//! the request and the answer put things; see [`crate::declared`].
//!
//! The first route that matches a request answers it, `[[routes]]` before
//! `[[searches]]` (so put the narrow routes first); a request that none
//! matches gets a 404 that lists them.
//! `routes.toml` and the files are read again for every request: edit them
//! while the fake runs. The certificate names the hosts of the routes read
//! at start.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail, ensure};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use crate::declared::{DeclaredSearch, SearchEntry};
use crate::request_log::RequestLog;
use crate::{RecordedRequest, http};

/// The file in the fixtures folder that lists the routes.
pub const ROUTES_FILE: &str = "routes.toml";

/// Largest request body read (a search request is small).
const MAX_BODY: usize = 1024 * 1024;

/// `routes.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoutesFile {
    #[serde(default)]
    routes: Vec<RouteEntry>,
    /// Searches answered from data ([`crate::declared`]).
    #[serde(default)]
    searches: Vec<SearchEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteEntry {
    #[serde(default = "default_method")]
    method: String,
    url: String,
    #[serde(default)]
    query: BTreeMap<String, String>,
    body_contains: Option<String>,
    #[serde(default = "default_status")]
    status: u16,
    file: Option<PathBuf>,
    body: Option<String>,
    content_type: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

fn default_method() -> String {
    "GET".into()
}

fn default_status() -> u16 {
    200
}

/// One route, checked: what it matches and what it answers.
#[derive(Debug, Clone)]
pub struct FixtureRoute {
    pub method: Method,
    /// Lower case, without port.
    pub host: String,
    /// The path's segments; `{name}` matches any one segment.
    path: Vec<String>,
    query: BTreeMap<String, String>,
    body_contains: Option<String>,
    status: u16,
    body: FixtureBody,
    content_type: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// `METHOD https://host/path`, as `routes.toml` says it.
    pub label: String,
}

#[derive(Debug, Clone)]
enum FixtureBody {
    File(PathBuf),
    Inline(String),
    Empty,
    /// A page of a declared search, for the request's parameters.
    Search(Arc<DeclaredSearch>),
}

/// Where a fixtures folder's files are: on disk, or built into fake-saas
/// (the vendors it plays from data: [`crate::declared::PLAYED_FROM_DATA`]).
#[derive(Clone, Copy, Debug)]
pub enum Folder<'a> {
    Disk(&'a Path),
    BuiltIn {
        /// `tools/fake-saas/declared/<name>/`.
        name: &'static str,
        /// Each file's name and text.
        files: &'static [(&'static str, &'static str)],
    },
}

impl Folder<'_> {
    /// One of its files, as text; `file` must name a file inside it.
    pub fn read(&self, file: &Path) -> Result<String> {
        inside(file)?;
        match self {
            Folder::Disk(dir) => std::fs::read_to_string(dir.join(file))
                .with_context(|| format!("reading {}", file.display())),
            Folder::BuiltIn { name, files } => files
                .iter()
                .find(|(built_in, _)| Path::new(built_in) == file)
                .map(|(_, text)| text.to_string())
                .with_context(|| format!("declared/{name} has no file {}", file.display())),
        }
    }

    fn display(&self) -> String {
        match self {
            Folder::Disk(dir) => dir.display().to_string(),
            Folder::BuiltIn { name, .. } => format!("fake-saas's declared/{name}"),
        }
    }
}

/// Refuses a path that leaves the fixtures folder.
fn inside(file: &Path) -> Result<()> {
    ensure!(
        file.is_relative() && !file.components().any(|c| c.as_os_str() == ".."),
        "{} must be a path inside the fixtures folder",
        file.display()
    );
    Ok(())
}

/// Reads and checks `dir/routes.toml`. Each problem names its route.
pub fn load(dir: &Path) -> Result<Vec<FixtureRoute>> {
    load_folder(Folder::Disk(dir))
}

/// [`load`], for a folder on disk or built in.
pub fn load_folder(folder: Folder) -> Result<Vec<FixtureRoute>> {
    let file = format!("{}/{ROUTES_FILE}", folder.display());
    let text = folder.read(Path::new(ROUTES_FILE)).with_context(|| {
        format!(
            "a fixtures folder holds a {ROUTES_FILE} that lists the routes \
             (see `fake-saas fixtures --help`)"
        )
    })?;
    let parsed: RoutesFile = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    ensure!(
        !parsed.routes.is_empty() || !parsed.searches.is_empty(),
        "{file}: no [[routes]] or [[searches]]: add at least one"
    );
    let routes = parsed.routes.into_iter().enumerate().map(|(index, entry)| {
        let label = format!("{} {}", entry.method, entry.url);
        check_route(folder, entry).with_context(|| format!("{file}: route {} ({label})", index + 1))
    });
    let searches = parsed
        .searches
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            let label = format!("{} {}", entry.method, entry.url);
            check_search(folder, entry)
                .with_context(|| format!("{file}: search {} ({label})", index + 1))
        });
    routes.chain(searches).collect()
}

/// A declared search as a route: it matches its method, host and path, and
/// answers with the page the request's parameters ask for.
fn check_search(folder: Folder, entry: SearchEntry) -> Result<FixtureRoute> {
    let route = RouteEntry {
        method: entry.method.clone(),
        url: entry.url.clone(),
        query: BTreeMap::new(),
        body_contains: None,
        status: default_status(),
        file: None,
        body: None,
        content_type: None,
        headers: BTreeMap::new(),
    };
    let mut route = check_route(folder, route)?;
    route.body = FixtureBody::Search(Arc::new(DeclaredSearch::load(folder, entry)?));
    Ok(route)
}

fn check_route(folder: Folder, entry: RouteEntry) -> Result<FixtureRoute> {
    let method = Method::from_bytes(entry.method.as_bytes())
        .ok()
        .filter(|_| entry.method.bytes().all(|b| b.is_ascii_uppercase()))
        .with_context(|| {
            format!(
                "method {:?} is not an HTTP method such as GET or POST",
                entry.method
            )
        })?;
    let (host, path) = split_url(&entry.url)?;
    ensure!(
        (100..=599).contains(&entry.status),
        "status {} is not an HTTP status (100 to 599)",
        entry.status
    );
    let body = match (entry.file, entry.body) {
        (Some(_), Some(_)) => bail!("give `file` or `body`, not both"),
        (Some(file), None) => match folder {
            Folder::Disk(dir) => {
                inside(&file).context("file")?;
                let path = dir.join(&file);
                ensure!(
                    path.is_file(),
                    "file {}: there is no such file in {}",
                    file.display(),
                    dir.display()
                );
                FixtureBody::File(path)
            }
            Folder::BuiltIn { .. } => FixtureBody::Inline(folder.read(&file)?),
        },
        (None, Some(body)) => FixtureBody::Inline(body),
        (None, None) => FixtureBody::Empty,
    };
    let headers = entry
        .headers
        .iter()
        .map(|(name, value)| {
            let name = HeaderName::from_bytes(name.as_bytes())
                .with_context(|| format!("header name {name:?} is not valid"))?;
            let value = HeaderValue::from_str(value)
                .with_context(|| format!("header {name}'s value {value:?} is not valid"))?;
            Ok((name, value))
        })
        .collect::<Result<_>>()?;
    Ok(FixtureRoute {
        label: format!("{method} https://{host}{path}"),
        method,
        path: path.split('/').map(str::to_string).collect(),
        host,
        query: entry.query,
        body_contains: entry.body_contains,
        status: entry.status,
        body,
        content_type: entry
            .content_type
            .unwrap_or_else(|| "application/json".into()),
        headers,
    })
}

/// `https://HOST/PATH` into the host (lower case) and the path.
fn split_url(url: &str) -> Result<(String, String)> {
    let rest = url
        .strip_prefix("https://")
        .with_context(|| format!("url {url:?} must start with https://"))?;
    ensure!(
        !rest.contains(['?', '#']),
        "url {url:?} has a query or fragment: give the parameters to match in `query`"
    );
    let (host, path) = match rest.split_once('/') {
        Some((host, path)) => (host, format!("/{path}")),
        None => (rest, "/".to_string()),
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    ensure!(
        host_ok,
        "url {url:?}: {host:?} is not a host name (no port or user: the demo's --fake routes the host)"
    );
    Ok((host.to_ascii_lowercase(), path))
}

/// A request as the routes see it.
struct Incoming<'a> {
    method: &'a Method,
    host: &'a str,
    path: &'a str,
    query: Vec<(String, String)>,
    body: &'a [u8],
    /// The most records a page may hold (a fault's `max_page_size`).
    page_cap: Option<usize>,
}

impl FixtureRoute {
    fn matches(&self, request: &Incoming) -> bool {
        let method = self.method == *request.method
            || (*request.method == Method::HEAD && self.method == Method::GET);
        method
            && self.host == request.host
            && self.path_matches(request.path)
            && self
                .query
                .iter()
                .all(|(name, value)| request.query.iter().any(|(n, v)| n == name && v == value))
            && self
                .body_contains
                .as_ref()
                .is_none_or(|text| String::from_utf8_lossy(request.body).contains(text.as_str()))
    }

    fn path_matches(&self, path: &str) -> bool {
        let segments: Vec<&str> = path.split('/').collect();
        segments.len() == self.path.len()
            && self.path.iter().zip(&segments).all(|(pattern, segment)| {
                (pattern.starts_with('{') && pattern.ends_with('}') && !segment.is_empty())
                    || pattern == segment
            })
    }

    /// The response, its body read now (so edits show at once).
    fn respond(&self, request: &Incoming) -> Result<Response> {
        let mut returned = Vec::new();
        let (status, body) = match &self.body {
            FixtureBody::File(path) => (
                self.status,
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
            ),
            FixtureBody::Inline(text) => (self.status, text.clone().into_bytes()),
            FixtureBody::Empty => (self.status, Vec::new()),
            FixtureBody::Search(search) => {
                let (status, body) = search.answer(&request.query, request.page_cap);
                returned = search.citations(&body);
                (status, serde_json::to_vec(&body)?)
            }
        };
        let mut response = http::raw(status, &self.content_type, body);
        if !returned.is_empty() {
            http::note_returned(&mut response, returned.iter().map(String::as_str));
        }
        for (name, value) in &self.headers {
            response.headers_mut().insert(name.clone(), value.clone());
        }
        Ok(response)
    }

    /// Where the body comes from, for the log.
    fn source(&self) -> String {
        match &self.body {
            FixtureBody::File(path) => path.display().to_string(),
            FixtureBody::Inline(_) => "inline body".into(),
            FixtureBody::Empty => "empty body".into(),
            FixtureBody::Search(search) => format!("the search of {}", search.entry().url),
        }
    }
}

/// A request to the fake vendors answered by the first of `routes` that
/// matches it; `None` when none does.
pub(crate) fn answer_with(routes: &[FixtureRoute], req: &http::Req) -> Option<Result<Response>> {
    let request = Incoming {
        method: &req.method,
        host: &req.host,
        path: &req.path,
        query: req.query_pairs(),
        body: &req.body,
        page_cap: req.page_cap,
    };
    let route = routes.iter().find(|route| route.matches(&request))?;
    Some(route.respond(&request))
}

/// The hosts the routes name, each once, in order.
fn hosts_of(routes: &[FixtureRoute]) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    for route in routes {
        if !hosts.contains(&route.host) {
            hosts.push(route.host.clone());
        }
    }
    hosts
}

struct FixtureState {
    dir: PathBuf,
    requests: Mutex<RequestLog>,
    started: std::time::Instant,
}

/// A running fixtures fake; it stops when dropped or shut down.
pub struct FixtureServer {
    state: Arc<FixtureState>,
    addr: SocketAddr,
    ca_pem: String,
    hosts: Vec<String>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl FixtureServer {
    /// Checks `dir/routes.toml`, makes a CA and a certificate for its
    /// hosts, binds `listen` and starts serving.
    pub async fn start(dir: &Path, listen: SocketAddr) -> Result<FixtureServer> {
        let routes = load(dir)?;
        let hosts = hosts_of(&routes);
        let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
        let certs = crate::tls::generate(&names)?;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("listening on {listen}"))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(FixtureState {
            dir: dir.to_path_buf(),
            requests: Mutex::default(),
            started: std::time::Instant::now(),
        });
        let app = Router::new().fallback(answer).with_state(state.clone());
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(crate::server::serve_app(
            listener,
            certs.server_config()?,
            app,
            stop_rx,
        ));
        tracing::info!(%addr, dir = %dir.display(), hosts = ?hosts, "fake-saas fixtures listening");
        Ok(FixtureServer {
            state,
            addr,
            ca_pem: certs.ca_pem,
            hosts,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The address it listens on (route every one of [`FixtureServer::hosts`] to it).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// PEM of the CA that signed its certificate.
    pub fn ca_cert_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The hosts its certificate names: those of the routes at start.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The requests received so far, in order (the newest, as many as the
    /// record keeps).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        crate::lock(&self.state.requests).kept()
    }

    /// Stops accepting, lets in-flight requests finish (up to 2 s) and returns.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
    }
}

async fn answer(State(state): State<Arc<FixtureState>>, request: Request) -> Response {
    let host = crate::server::host_of(&request);
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return http::json(413, &json!({"error": "request body too large"}));
    };
    let request = Incoming {
        method: &parts.method,
        host: &host,
        path: parts.uri.path(),
        query: parts.uri.query().map(http::parse_pairs).unwrap_or_default(),
        body: &body,
        page_cap: None,
    };
    let shown = match parts.uri.query() {
        Some(query) => format!("{} https://{host}{}?{query}", parts.method, request.path),
        None => format!("{} https://{host}{}", parts.method, request.path),
    };
    crate::lock(&state.requests).push(RecordedRequest {
        method: parts.method.to_string(),
        host: host.clone(),
        path: request.path.to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: http::header_pairs(&parts.headers),
        body: body.to_vec(),
        received_ms: state.started.elapsed().as_millis() as u64,
        response: None,
    });
    let routes = match load(&state.dir) {
        Ok(routes) => routes,
        Err(error) => {
            tracing::error!(request = %shown, error = %format!("{error:#}"), "the fixtures do not load");
            return http::json(
                500,
                &json!({"error": format!("fake-saas fixtures: {error:#}")}),
            );
        }
    };
    let Some(route) = routes.iter().find(|route| route.matches(&request)) else {
        tracing::warn!(request = %shown, "no fixture route matches");
        return http::json(
            404,
            &json!({
                "error": format!("fake-saas fixtures: no route in {ROUTES_FILE} matches {shown}"),
                "routes": routes.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(),
            }),
        );
    };
    match route.respond(&request) {
        Ok(response) => {
            tracing::info!(request = %shown, status = response.status().as_u16(), body = %route.source(), "answered");
            response
        }
        Err(error) => {
            tracing::error!(request = %shown, error = %format!("{error:#}"), "cannot answer");
            http::json(
                500,
                &json!({"error": format!("fake-saas fixtures: {error:#}")}),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(routes: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(ROUTES_FILE), routes).unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn problem(routes: &str, files: &[(&str, &str)]) -> String {
        let dir = folder(routes, files);
        format!("{:#}", load(dir.path()).unwrap_err())
    }

    #[test]
    fn each_mistake_is_named_with_its_route() {
        let bad = [
            (
                "[[routes]]\nurl = \"http://a.example/x\"",
                "route 1 (GET http://a.example/x): url \"http://a.example/x\" must start with https://",
            ),
            (
                "[[routes]]\nurl = \"https://a.example/x?q=1\"",
                "give the parameters to match in `query`",
            ),
            (
                "[[routes]]\nurl = \"https://a.example:8443/x\"",
                "is not a host name",
            ),
            (
                "[[routes]]\nurl = \"https://a.example/x\"\nfile = \"missing.json\"",
                "file missing.json: there is no such file",
            ),
            (
                "[[routes]]\nurl = \"https://a.example/x\"\nfile = \"../x.json\"",
                "must be a path inside the fixtures folder",
            ),
            (
                "[[routes]]\nurl = \"https://a.example/x\"\nstatus = 99",
                "status 99 is not an HTTP status",
            ),
            (
                "[[routes]]\nmethod = \"get\"\nurl = \"https://a.example/x\"",
                "method \"get\" is not an HTTP method",
            ),
            (
                "[[routes]]\nurl = \"https://a.example/x\"\nbody = \"{}\"\nfile = \"a.json\"",
                "give `file` or `body`, not both",
            ),
            (
                "[[routes]]\nurl = \"https://a.example/x\"\nstatuss = 200",
                "unknown field `statuss`",
            ),
            ("routes = []", "no [[routes]] or [[searches]]"),
        ];
        for (routes, expected) in bad {
            let message = problem(routes, &[("a.json", "{}")]);
            assert!(message.contains(expected), "{routes}: {message}");
        }
        let dir = tempfile::tempdir().unwrap();
        let message = format!("{:#}", load(dir.path()).unwrap_err());
        assert!(message.contains("routes.toml"), "{message}");
    }

    fn incoming<'a>(
        method: &'a Method,
        path: &'a str,
        query: &str,
        body: &'a [u8],
    ) -> Incoming<'a> {
        Incoming {
            method,
            host: "api.acme.example",
            path,
            query: http::parse_pairs(query),
            body,
            page_cap: None,
        }
    }

    #[test]
    fn routes_match_method_host_path_query_and_body() {
        let dir = folder(
            r#"
            [[routes]]
            url = "https://API.acme.example/v1/items/{id}"
            query = { fields = "all" }
            body = "{}"

            [[routes]]
            method = "POST"
            url = "https://api.acme.example/v1/search"
            body_contains = "checkout"
            "#,
            &[],
        );
        let routes = load(dir.path()).unwrap();
        let (get, head, post) = (Method::GET, Method::HEAD, Method::POST);
        let item = &routes[0];
        assert!(item.matches(&incoming(&get, "/v1/items/42", "fields=all&x=1", b"")));
        assert!(item.matches(&incoming(&head, "/v1/items/42", "fields=all", b"")));
        assert!(!item.matches(&incoming(&get, "/v1/items/42", "fields=some", b"")));
        assert!(!item.matches(&incoming(&get, "/v1/items/", "fields=all", b"")));
        assert!(!item.matches(&incoming(&get, "/v1/items/42/more", "fields=all", b"")));
        assert!(!item.matches(&incoming(&post, "/v1/items/42", "fields=all", b"")));
        let search = &routes[1];
        assert!(search.matches(&incoming(
            &post,
            "/v1/search",
            "",
            br#"{"query":"checkout"}"#
        )));
        assert!(!search.matches(&incoming(
            &post,
            "/v1/search",
            "",
            br#"{"query":"billing"}"#
        )));
        assert_eq!(hosts_of(&routes), ["api.acme.example"]);
    }
}
