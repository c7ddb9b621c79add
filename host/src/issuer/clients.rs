//! The clients of the authorization code grant: public clients (no
//! secret; PKCE instead) known either way MCP clients introduce themselves:
//! - registered (RFC 7591 dynamic registration): `client_id` is ours
//!   (`mcp_` and random), its metadata kept in the store;
//! - a Client ID Metadata Document: `client_id` is an https URL, and the
//!   document found there is the metadata (`documents.rs` fetches it).
//!
//! Either way the metadata is checked the same: a name to show the person
//! who consents, and the redirect URIs a code may be sent to.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use url::Url;

use super::Issuer;
use super::secrets::random_token;
use quarry_store::now;
use quarry_store::records::{Bytes, Records, Space, Text, Writer};

/// Client id → [`Client`] (registered clients only).
pub(super) const CLIENTS: Space<Text, Bytes> = Space::shared(
    "oauth_clients",
    "MCP clients that registered themselves (RFC 7591): a name and redirect addresses, nobody's; what a person allowed them is in refresh_families",
);

pub const REGISTERED_PREFIX: &str = "mcp_";
const MAX_NAME_CHARS: usize = 100;
const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_CHARS: usize = 2000;
/// How long a registered client nobody allowed is kept.
const UNUSED_CLIENT_SECONDS: i64 = 24 * 3600;
/// Clients forgotten per write transaction.
const FORGET_BATCH: usize = 256;
/// Token endpoint authentication methods with a secret: asked for at
/// registration, answered with `none` (these clients are public).
const SECRET_METHODS: &[&str] = &["client_secret_post", "client_secret_basic"];

/// Schemes a redirect URI may never use: they run code, read files or are
/// not addresses a browser can be sent to.
const REFUSED_SCHEMES: &[&str] = &[
    "javascript",
    "data",
    "file",
    "blob",
    "about",
    "vbscript",
    "filesystem",
    "ws",
    "wss",
    "ftp",
    "mailto",
];

/// A client, as the consent page and the grant see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    pub client_id: String,
    /// Its own name; the host of its metadata document's URL when it gave
    /// none.
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub registered_at: i64,
    /// Whether a person ever allowed it (a registered client nobody
    /// allowed within a day is forgotten).
    #[serde(default)]
    pub allowed_once: bool,
}

/// The metadata a client sends (RFC 7591 §2) or publishes (a Client ID
/// Metadata Document): the fields this server uses; the rest is ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClientMetadata {
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub client_name: Option<String>,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
}

/// Why metadata was refused (RFC 7591 §3.2.2's error codes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataError {
    InvalidRedirectUri(String),
    InvalidClientMetadata(String),
}

impl MetadataError {
    pub fn code(&self) -> &'static str {
        match self {
            MetadataError::InvalidRedirectUri(_) => "invalid_redirect_uri",
            MetadataError::InvalidClientMetadata(_) => "invalid_client_metadata",
        }
    }

    pub fn description(&self) -> &str {
        match self {
            MetadataError::InvalidRedirectUri(d) | MetadataError::InvalidClientMetadata(d) => d,
        }
    }
}

impl std::fmt::Display for MetadataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.description())
    }
}

impl ClientMetadata {
    /// The client these fields describe, or what is wrong with them.
    /// `fallback_name` names a client that gave no name.
    pub fn into_client(
        self,
        client_id: String,
        fallback_name: &str,
    ) -> Result<Client, MetadataError> {
        let invalid = |d: String| Err(MetadataError::InvalidClientMetadata(d));
        if let Some(method) = &self.token_endpoint_auth_method
            && method != "none"
        {
            return invalid(format!(
                "token_endpoint_auth_method {method:?} is not supported: clients here are public \
                 (\"none\") and prove themselves with PKCE"
            ));
        }
        if let Some(grants) = &self.grant_types
            && let Some(other) = grants
                .iter()
                .find(|g| !["authorization_code", "refresh_token"].contains(&g.as_str()))
        {
            return invalid(format!(
                "grant_types {other:?} is not supported; use authorization_code and refresh_token"
            ));
        }
        if let Some(types) = &self.response_types
            && types.iter().any(|t| t != "code")
        {
            return invalid("response_types must be [\"code\"]".into());
        }
        let name = match self.client_name.as_deref().map(str::trim) {
            None | Some("") => fallback_name.to_string(),
            Some(name)
                if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) =>
            {
                return invalid(format!(
                    "client_name must be 1 to {MAX_NAME_CHARS} printable characters"
                ));
            }
            Some(name) => name.to_string(),
        };
        if self.redirect_uris.is_empty() || self.redirect_uris.len() > MAX_REDIRECT_URIS {
            return Err(MetadataError::InvalidRedirectUri(format!(
                "redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"
            )));
        }
        for uri in &self.redirect_uris {
            check_redirect_uri(uri).map_err(MetadataError::InvalidRedirectUri)?;
        }
        Ok(Client {
            client_id,
            name,
            redirect_uris: self.redirect_uris,
            registered_at: now(),
            allowed_once: false,
        })
    }
}

/// A redirect URI a client may register: https; http on a loopback
/// address only (RFC 8252 §7.3: a native app's listener); or an app's own
/// scheme (RFC 8252 §7.1: `cursor://...`, `com.example.app:/cb`). Never a
/// fragment.
pub fn check_redirect_uri(raw: &str) -> Result<(), String> {
    if raw.chars().count() > MAX_URI_CHARS {
        return Err(format!(
            "a redirect URI must be at most {MAX_URI_CHARS} characters"
        ));
    }
    let url = Url::parse(raw)
        .map_err(|e| format!("redirect URI {raw:?} is not an absolute URI ({e})"))?;
    if url.fragment().is_some() {
        return Err(format!("redirect URI {raw:?} must not have a fragment"));
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" if is_loopback(&url) => Ok(()),
        "http" => Err(format!(
            "redirect URI {raw:?} uses http on a host that is not loopback: use https, or \
             http://127.0.0.1 for an app on this computer"
        )),
        scheme if REFUSED_SCHEMES.contains(&scheme) => Err(format!(
            "redirect URI {raw:?} uses a scheme that is not allowed"
        )),
        _ => Ok(()),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

impl Client {
    /// Whether a code may be sent to `uri`: one of the registered URIs
    /// exactly, or, for a loopback one, the same but on any port (RFC 8252
    /// §7.3: a native app listens on whatever port is free).
    pub fn allows_redirect(&self, uri: &str) -> bool {
        self.redirect_uris
            .iter()
            .any(|registered| registered == uri || same_but_port(registered, uri))
    }
}

fn same_but_port(registered: &str, asked: &str) -> bool {
    let (Ok(mut registered), Ok(mut asked)) = (Url::parse(registered), Url::parse(asked)) else {
        return false;
    };
    if registered.scheme() != "http" || !is_loopback(&registered) || !is_loopback(&asked) {
        return false;
    }
    let _ = registered.set_port(None);
    let _ = asked.set_port(None);
    registered == asked
}

impl Issuer {
    /// Registers a client (RFC 7591) and returns it with its new id. One
    /// write of one record: forgetting clients nobody allowed is
    /// [`Issuer::forget_unused_clients`]'s, off the request path.
    pub fn register_client(
        &self,
        mut metadata: ClientMetadata,
    ) -> Result<Result<Client, MetadataError>> {
        // A client asking for a secret gets none and is told so: RFC 7591
        // §3.2.1 lets the server answer with other metadata than asked,
        // and clients that ask for client_secret_post by habit then
        // proceed as public clients with PKCE.
        if metadata
            .token_endpoint_auth_method
            .as_deref()
            .is_some_and(|method| SECRET_METHODS.contains(&method))
        {
            metadata.token_endpoint_auth_method = None;
        }
        let client_id = format!("{REGISTERED_PREFIX}{}", random_token(16));
        let client = match metadata.into_client(client_id, "An unnamed assistant") {
            Ok(client) => client,
            Err(refused) => return Ok(Err(refused)),
        };
        let mut txn = self.store.write()?;
        txn.put(&CLIENTS, &client.client_id, &serde_json::to_vec(&client)?)?;
        txn.commit()?;
        Ok(Ok(client))
    }

    /// Forgets registered clients nobody allowed within a day of their
    /// registration; how many. The candidates are read from a snapshot
    /// (no writer waits for the scan); each is removed in a short write,
    /// a batch at a time, checked again there (someone may have allowed
    /// it meanwhile).
    pub fn forget_unused_clients(&self) -> Result<u64> {
        let cutoff = now() - UNUSED_CLIENT_SECONDS;
        let unused = |bytes: &[u8]| {
            serde_json::from_slice::<Client>(bytes)
                .is_ok_and(|c| !c.allowed_once && c.registered_at <= cutoff)
        };
        let candidates: Vec<String> = self
            .store
            .read()?
            .all_in(&CLIENTS, ..)?
            .into_iter()
            .filter(|(_, bytes)| unused(bytes))
            .map(|(id, _)| id)
            .collect();
        let mut forgotten = 0;
        for batch in candidates.chunks(FORGET_BATCH) {
            let mut txn = self.store.write()?;
            for id in batch {
                if txn.get(&CLIENTS, id)?.is_some_and(|bytes| unused(&bytes)) {
                    txn.remove(&CLIENTS, id)?;
                    forgotten += 1;
                }
            }
            txn.commit()?;
        }
        Ok(forgotten)
    }

    /// A registered client by its id.
    pub fn registered_client(&self, client_id: &str) -> Result<Option<Client>> {
        if !client_id.starts_with(REGISTERED_PREFIX) {
            return Ok(None);
        }
        let bytes = self.store.read()?.get(&CLIENTS, client_id)?;
        Ok(bytes.map(|b| serde_json::from_slice(&b)).transpose()?)
    }
}

/// Marks a registered client as allowed by someone, so that it is kept.
pub(super) fn mark_allowed(txn: &mut Writer, client_id: &str) -> Result<()> {
    let Some(bytes) = txn.get(&CLIENTS, client_id)? else {
        return Ok(());
    };
    let mut client: Client = serde_json::from_slice(&bytes)?;
    if !client.allowed_once {
        client.allowed_once = true;
        txn.put(&CLIENTS, client_id, &serde_json::to_vec(&client)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(uris: &[&str]) -> Client {
        ClientMetadata {
            redirect_uris: uris.iter().map(|u| u.to_string()).collect(),
            ..Default::default()
        }
        .into_client("mcp_x".into(), "unnamed")
        .unwrap()
    }

    #[test]
    fn redirect_uris_match_exactly_except_a_loopback_port() {
        let c = client(&[
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
        ]);
        assert!(c.allows_redirect("https://claude.ai/api/mcp/auth_callback"));
        assert!(!c.allows_redirect("https://claude.ai/api/mcp/auth_callback/"));
        assert!(!c.allows_redirect("https://claude.ai/api/mcp/auth_callback?x=1"));
        assert!(!c.allows_redirect("https://claude.ai:8443/api/mcp/auth_callback"));
        assert!(c.allows_redirect("http://127.0.0.1:51000/callback"));
        assert!(c.allows_redirect("http://127.0.0.1/callback"));
        assert!(!c.allows_redirect("http://127.0.0.1:51000/other"));
        assert!(
            !c.allows_redirect("http://localhost:51000/callback"),
            "another host"
        );
        assert!(!c.allows_redirect("http://evil.example:33418/callback"));
    }

    #[test]
    fn redirect_uris_are_https_loopback_http_or_an_apps_own_scheme() {
        for good in [
            "https://chatgpt.com/connector/oauth/abc",
            "http://127.0.0.1:33418",
            "http://[::1]:8080/cb",
            "http://localhost:3000/cb",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "com.example.app:/oauth",
        ] {
            assert_eq!(check_redirect_uri(good), Ok(()), "{good}");
        }
        for bad in [
            "http://example.com/cb",
            "https://example.com/cb#frag",
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "/relative",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn metadata_is_for_a_public_client_with_a_name_to_show() {
        let meta =
            |json: serde_json::Value| -> ClientMetadata { serde_json::from_value(json).unwrap() };
        let secret = meta(serde_json::json!({
            "redirect_uris": ["https://a.example/cb"],
            "token_endpoint_auth_method": "client_secret_basic",
        }));
        assert_eq!(
            secret.into_client("x".into(), "n").unwrap_err().code(),
            "invalid_client_metadata"
        );
        let implicit = meta(serde_json::json!({
            "redirect_uris": ["https://a.example/cb"], "grant_types": ["implicit"],
        }));
        assert!(implicit.into_client("x".into(), "n").is_err());
        let none = meta(serde_json::json!({ "client_name": "Claude" }));
        assert_eq!(
            none.into_client("x".into(), "n").unwrap_err().code(),
            "invalid_redirect_uri"
        );
        let named = meta(serde_json::json!({
            "client_name": " Claude ", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
            "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
        }));
        assert_eq!(named.into_client("x".into(), "n").unwrap().name, "Claude");
    }

    #[test]
    fn a_registered_client_is_found_by_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(quarry_store::Store::open(dir.path(), None).unwrap());
        let issuer = Issuer::for_tests(store);
        let client = issuer
            .register_client(ClientMetadata {
                client_name: Some("VS Code".into()),
                redirect_uris: vec!["http://127.0.0.1:33418".into()],
                ..Default::default()
            })
            .unwrap()
            .unwrap();
        assert!(client.client_id.starts_with(REGISTERED_PREFIX));
        assert_eq!(
            issuer.registered_client(&client.client_id).unwrap(),
            Some(client)
        );
        assert_eq!(issuer.registered_client("mcp_unknown").unwrap(), None);
    }

    #[test]
    fn a_client_asking_for_a_secret_is_registered_public() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(quarry_store::Store::open(dir.path(), None).unwrap());
        let issuer = Issuer::for_tests(store);
        for method in ["client_secret_post", "client_secret_basic", "none"] {
            let metadata: ClientMetadata = serde_json::from_value(serde_json::json!({
                "redirect_uris": ["https://a.example/cb"],
                "token_endpoint_auth_method": method,
            }))
            .unwrap();
            assert!(
                issuer.register_client(metadata).unwrap().is_ok(),
                "{method}"
            );
        }
        let metadata: ClientMetadata = serde_json::from_value(serde_json::json!({
            "redirect_uris": ["https://a.example/cb"],
            "token_endpoint_auth_method": "private_key_jwt",
        }))
        .unwrap();
        assert!(issuer.register_client(metadata).unwrap().is_err());
    }

    #[test]
    fn clients_nobody_allowed_within_a_day_are_forgotten_apart_from_registering() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(quarry_store::Store::open(dir.path(), None).unwrap());
        let issuer = Issuer::for_tests(store.clone());
        let register = || {
            issuer
                .register_client(ClientMetadata {
                    redirect_uris: vec!["https://a.example/cb".into()],
                    ..Default::default()
                })
                .unwrap()
                .unwrap()
        };
        let (old, old_allowed, new) = (register(), register(), register());
        let mut txn = store.write().unwrap();
        for (client, allowed) in [(&old, false), (&old_allowed, true)] {
            let aged = Client {
                registered_at: now() - UNUSED_CLIENT_SECONDS - 1,
                allowed_once: allowed,
                ..client.clone()
            };
            txn.put(
                &CLIENTS,
                &aged.client_id,
                &serde_json::to_vec(&aged).unwrap(),
            )
            .unwrap();
        }
        txn.commit().unwrap();
        // Registering another leaves the old one be: no scan on that path.
        register();
        assert!(issuer.registered_client(&old.client_id).unwrap().is_some());
        assert_eq!(issuer.forget_unused_clients().unwrap(), 1);
        assert_eq!(issuer.registered_client(&old.client_id).unwrap(), None);
        assert!(
            issuer
                .registered_client(&old_allowed.client_id)
                .unwrap()
                .is_some()
        );
        assert!(issuer.registered_client(&new.client_id).unwrap().is_some());
        assert_eq!(issuer.forget_unused_clients().unwrap(), 0);
    }
}
