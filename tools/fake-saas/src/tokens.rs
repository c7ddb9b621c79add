//! Access tokens, refresh tokens, authorization codes and revocation.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

use base64::Engine;
use sha2::Digest;

use crate::TokenPair;

/// The vendors that have accounts and tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Vendor {
    Github,
    Slack,
    Notion,
    Linear,
    Jira,
    Confluence,
    GoogleDrive,
    Gmail,
    Zendesk,
    Hubspot,
    Salesforce,
    Microsoft365,
    Asana,
    Trello,
    Intercom,
    /// Played from data (`declared/google-calendar/`).
    GoogleCalendar,
    /// Its search played from data (`declared/box/`).
    Box,
    /// Played from data (`declared/sentry/`).
    Sentry,
}

impl Vendor {
    pub(crate) const ALL: [Vendor; 18] = [
        Vendor::Github,
        Vendor::Slack,
        Vendor::Notion,
        Vendor::Linear,
        Vendor::Jira,
        Vendor::Confluence,
        Vendor::GoogleDrive,
        Vendor::Gmail,
        Vendor::Zendesk,
        Vendor::Hubspot,
        Vendor::Salesforce,
        Vendor::Microsoft365,
        Vendor::Asana,
        Vendor::Trello,
        Vendor::Intercom,
        Vendor::GoogleCalendar,
        Vendor::Box,
        Vendor::Sentry,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Vendor::Github => "github",
            Vendor::Slack => "slack",
            Vendor::Notion => "notion",
            Vendor::Linear => "linear",
            Vendor::Jira => "jira",
            Vendor::Confluence => "confluence",
            Vendor::GoogleDrive => "google-drive",
            Vendor::Gmail => "gmail",
            Vendor::Zendesk => "zendesk",
            Vendor::Hubspot => "hubspot",
            Vendor::Salesforce => "salesforce",
            Vendor::Microsoft365 => "microsoft-365",
            Vendor::Asana => "asana",
            Vendor::Trello => "trello",
            Vendor::Intercom => "intercom",
            Vendor::GoogleCalendar => "google-calendar",
            Vendor::Box => "box",
            Vendor::Sentry => "sentry",
        }
    }

    /// The vendor by its name or by the id of a connector of its
    /// (`outlook-mail` is Microsoft 365's).
    pub(crate) fn parse(s: &str) -> Option<Vendor> {
        let name = crate::dataset::vendor_of(s);
        Vendor::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(name))
    }

    /// The names its seeded tokens carry: its own, and its connectors'.
    fn token_names(self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.as_str()).chain(
            crate::dataset::CONNECTORS_OF_VENDORS
                .iter()
                .filter(move |(_, vendor)| *vendor == self.as_str())
                .map(|(connector, _)| *connector),
        )
    }

    /// Access token lifetime of tokens issued by the OAuth flows.
    pub(crate) fn default_expiry(self) -> Duration {
        Duration::from_secs(match self {
            Vendor::Github => 28800,
            Vendor::Slack => 43200,
            Vendor::Notion => 3600,
            Vendor::Linear => 86399,
            Vendor::Jira => 3600,
            Vendor::Confluence => 3600,
            Vendor::GoogleDrive | Vendor::Gmail | Vendor::GoogleCalendar => 3599,
            Vendor::Zendesk => 7200,
            Vendor::Hubspot => 1800,
            // Salesforce: the org's session timeout (2 hours here).
            Vendor::Salesforce => 7200,
            Vendor::Microsoft365 => 3599,
            Vendor::Asana => 3600,
            // Box: "Access tokens ... valid for 60 minutes".
            Vendor::Box => 3600,
            // Sentry: "Access tokens expire after 30 days" (its example: 2591999).
            Vendor::Sentry => 2_591_999,
            // Trello's legacy tokens: the expiration asked for (30 days here).
            Vendor::Trello => 2_592_000,
            // Intercom's tokens do not expire; ten years stands for that.
            Vendor::Intercom => 315_360_000,
        })
    }

    pub(crate) fn default_scope(self) -> &'static str {
        match self {
            Vendor::Github => "",
            Vendor::Slack => "search:read",
            Vendor::Notion => "",
            Vendor::Linear => "read",
            Vendor::Jira => "read:jira-work offline_access",
            Vendor::Confluence => {
                "search:confluence read:confluence-content.summary read:confluence-content.all offline_access"
            }
            Vendor::GoogleDrive => "https://www.googleapis.com/auth/drive.readonly",
            Vendor::Gmail => "https://www.googleapis.com/auth/gmail.readonly",
            Vendor::GoogleCalendar => "https://www.googleapis.com/auth/calendar.events.readonly",
            Vendor::Zendesk => "tickets:read",
            Vendor::Hubspot => {
                "oauth crm.objects.contacts.read crm.objects.companies.read crm.objects.deals.read crm.objects.tickets.read"
            }
            Vendor::Salesforce => "api refresh_token",
            Vendor::Microsoft365 => {
                "Files.Read.All Sites.Read.All Mail.Read Calendars.Read Chat.Read User.Read offline_access"
            }
            Vendor::Asana => "tasks:read projects:read users:read workspaces.typeahead:read",
            Vendor::Trello => "read",
            Vendor::Intercom => "",
            Vendor::Box => "root_readonly",
            Vendor::Sentry => "event:read",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Access,
    Refresh,
}

#[derive(Clone, Debug)]
pub(crate) struct TokenInfo {
    pub vendor: Vendor,
    pub user: String,
    pub kind: Kind,
    pub expires_at: Option<Instant>,
    pub partner: Option<String>,
    pub scope: String,
    pub client_id: Option<String>,
    pub revoked: bool,
    /// Refresh tokens rotate: once used they stop working (without being "revoked").
    pub used: bool,
}

/// Result of checking an access token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Auth {
    Ok(String),
    Missing,
    Invalid,
    Revoked,
    Expired,
}

impl Auth {
    /// The signed-in user, when the token is good.
    pub(crate) fn user(self) -> Option<String> {
        match self {
            Auth::Ok(user) => Some(user),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct AuthCode {
    pub vendor: Vendor,
    pub user: String,
    pub client_id: String,
    pub redirect_uri: Option<String>,
    pub challenge: Option<(String, String)>,
    pub scope: String,
    pub expires_at: Instant,
}

#[derive(Default)]
pub(crate) struct Tokens {
    map: HashMap<String, TokenInfo>,
    revoked: Vec<String>,
    codes: HashMap<String, AuthCode>,
    counter: u64,
    seed: u64,
}

fn random_u64(seed: u64, n: u64) -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(seed);
    h.write_u64(n);
    h.finish()
}

impl Tokens {
    pub(crate) fn new() -> Tokens {
        let mut t = Tokens {
            seed: random_u64(0x5eed, 0),
            ..Default::default()
        };
        for v in Vendor::ALL {
            for (name, u) in v
                .token_names()
                .flat_map(|name| crate::dataset::USERS.iter().map(move |u| (name, u)))
            {
                t.map.insert(
                    format!("fake-{name}-{u}"),
                    TokenInfo {
                        vendor: v,
                        user: u.to_string(),
                        kind: Kind::Access,
                        expires_at: None,
                        partner: None,
                        scope: v.default_scope().to_string(),
                        client_id: None,
                        revoked: false,
                        used: false,
                    },
                );
            }
        }
        t
    }

    fn random(&mut self, len: usize, alphabet: &[u8]) -> String {
        let mut out = String::with_capacity(len);
        while out.len() < len {
            self.counter += 1;
            let mut r = random_u64(self.seed, self.counter);
            for _ in 0..8 {
                if out.len() == len {
                    break;
                }
                out.push(alphabet[(r % alphabet.len() as u64) as usize] as char);
                r /= alphabet.len() as u64;
            }
        }
        out
    }

    fn alnum(&mut self, len: usize) -> String {
        self.random(
            len,
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        )
    }

    fn hex(&mut self, len: usize) -> String {
        self.random(len, b"0123456789abcdef")
    }

    fn make_pair_strings(&mut self, vendor: Vendor, user: &str) -> (String, String) {
        match vendor {
            Vendor::Github => (
                format!("ghu_{}", self.alnum(36)),
                format!("ghr_{}", self.alnum(76)),
            ),
            Vendor::Slack => (
                format!(
                    "xoxe.xoxp-1-{}-{}-{}",
                    self.hex(12),
                    self.hex(12),
                    self.hex(32)
                ),
                format!("xoxe-1-{}", self.alnum(60)),
            ),
            Vendor::Notion => (
                format!("ntn_{}", self.alnum(46)),
                format!("nrt_{}", self.alnum(46)),
            ),
            Vendor::Linear => (
                format!("lin_oauth_{}", self.hex(64)),
                format!("lin_refresh_{}", self.hex(64)),
            ),
            Vendor::Jira | Vendor::Confluence => {
                let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
                let payload = b64.encode(
                    serde_json::json!({"sub": user, "aud": "api.atlassian.com", "jti": self.hex(16)})
                        .to_string(),
                );
                (
                    format!(
                        "eyJraWQiOiJmYWtlLXNhYXMiLCJhbGciOiJSUzI1NiJ9.{payload}.{}",
                        self.alnum(43)
                    ),
                    format!("eyJraWQiOiJyZWZyZXNoIn0.{}", self.alnum(64)),
                )
            }
            Vendor::GoogleDrive | Vendor::Gmail | Vendor::GoogleCalendar => (
                format!(
                    "ya29.a0{}",
                    self.random(
                        150,
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                    )
                ),
                format!(
                    "1//0{}",
                    self.random(
                        100,
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                    )
                ),
            ),
            Vendor::Zendesk => (self.hex(64), self.hex(64)),
            Vendor::Hubspot => (
                format!(
                    "CJ{}",
                    self.random(
                        180,
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                    )
                ),
                format!(
                    "na1-{}-{}-{}-{}-{}",
                    self.hex(4),
                    self.hex(4),
                    self.hex(4),
                    self.hex(4),
                    self.hex(12)
                ),
            ),
            Vendor::Salesforce => (
                format!(
                    "{}!AQ0AQ{}",
                    crate::dataset::SALESFORCE_ORG_ID,
                    self.random(
                        90,
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._"
                    )
                ),
                format!("5Aep861{}", self.alnum(80)),
            ),
            Vendor::Microsoft365 => {
                let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
                let payload = b64.encode(
                    serde_json::json!({"aud": "00000003-0000-0000-c000-000000000000", "upn": user, "scp": "Files.Read.All Sites.Read.All Mail.Read", "jti": self.hex(16)})
                        .to_string(),
                );
                (
                    format!(
                        "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.{payload}.{}",
                        self.alnum(86)
                    ),
                    format!("1.AXEA{}", self.alnum(120)),
                )
            }
            Vendor::Asana => (
                format!(
                    "2/120{}/120{}:{}",
                    self.random(13, b"0123456789"),
                    self.random(13, b"0123456789"),
                    self.hex(32)
                ),
                format!("2/120{}:{}", self.random(13, b"0123456789"), self.hex(32)),
            ),
            Vendor::Trello => (format!("ATTA{}", self.hex(72)), self.hex(64)),
            // Box's tokens are 32 letters and digits; its refresh tokens 64.
            Vendor::Box => (self.alnum(32), self.alnum(64)),
            // Sentry's OAuth tokens are 64 hex digits.
            Vendor::Sentry => (self.hex(64), self.hex(64)),
            Vendor::Intercom => {
                let b64 = base64::engine::general_purpose::STANDARD;
                (
                    b64.encode(format!("tok:{}:{}", self.hex(8), self.hex(32))),
                    b64.encode(format!("rt:{}", self.hex(32))),
                )
            }
        }
    }

    /// Issues a new access + refresh token pair.
    pub(crate) fn issue(
        &mut self,
        vendor: Vendor,
        user: &str,
        expires_in: Option<Duration>,
        scope: &str,
        client_id: Option<String>,
    ) -> TokenPair {
        let (access, refresh) = self.make_pair_strings(vendor, user);
        let base = TokenInfo {
            vendor,
            user: user.to_string(),
            kind: Kind::Access,
            expires_at: expires_in.map(|d| Instant::now() + d),
            partner: Some(refresh.clone()),
            scope: scope.to_string(),
            client_id,
            revoked: false,
            used: false,
        };
        self.map.insert(access.clone(), base.clone());
        self.map.insert(
            refresh.clone(),
            TokenInfo {
                kind: Kind::Refresh,
                expires_at: None,
                partner: Some(access.clone()),
                ..base
            },
        );
        TokenPair {
            access_token: access,
            refresh_token: refresh,
            expires_in,
            scope: scope.to_string(),
        }
    }

    /// Checks an access token for a vendor.
    pub(crate) fn check(&self, vendor: Vendor, token: Option<&str>) -> Auth {
        let Some(token) = token else {
            return Auth::Missing;
        };
        match self.map.get(token) {
            Some(t) if t.vendor == vendor && t.kind == Kind::Access => {
                if t.revoked {
                    Auth::Revoked
                } else if t.expires_at.is_some_and(|e| Instant::now() >= e) {
                    Auth::Expired
                } else {
                    Auth::Ok(t.user.clone())
                }
            }
            _ => Auth::Invalid,
        }
    }

    pub(crate) fn info(&self, token: &str) -> Option<&TokenInfo> {
        self.map.get(token)
    }

    /// Exchanges a refresh token: the old refresh token stops working (rotation).
    pub(crate) fn refresh(
        &mut self,
        vendor: Vendor,
        refresh_token: &str,
        client_id: Option<&str>,
    ) -> Result<(TokenPair, String), &'static str> {
        let info = match self.map.get(refresh_token) {
            Some(t) if t.vendor == vendor && t.kind == Kind::Refresh => t.clone(),
            _ => return Err("invalid refresh token"),
        };
        if info.revoked {
            return Err("refresh token revoked");
        }
        if info.used {
            return Err("refresh token already used");
        }
        if info
            .client_id
            .as_deref()
            .zip(client_id)
            .is_some_and(|(a, b)| a != b)
        {
            return Err("client_id does not match");
        }
        if let Some(t) = self.map.get_mut(refresh_token) {
            t.used = true;
        }
        let pair = self.issue(
            vendor,
            &info.user,
            Some(vendor.default_expiry()),
            &info.scope,
            info.client_id.clone(),
        );
        Ok((pair, info.user))
    }

    /// Revokes a token (access or refresh) and its partner. Returns false if unknown.
    pub(crate) fn revoke(&mut self, vendor: Vendor, token: &str) -> bool {
        let partner = match self.map.get_mut(token) {
            Some(t) if t.vendor == vendor => {
                t.revoked = true;
                t.partner.clone()
            }
            _ => return false,
        };
        if !self.revoked.iter().any(|r| r == token) {
            self.revoked.push(token.to_string());
        }
        if let Some(p) = partner {
            if let Some(t) = self.map.get_mut(&p) {
                t.revoked = true;
            }
            if !self.revoked.contains(&p) {
                self.revoked.push(p);
            }
        }
        true
    }

    pub(crate) fn revoked(&self) -> Vec<String> {
        self.revoked.clone()
    }

    pub(crate) fn create_code(&mut self, code: AuthCode) -> String {
        let c = self.hex(20);
        self.codes.insert(c.clone(), code);
        c
    }

    /// The vendor an authorization code was issued for (vendors that share
    /// an OAuth server, such as Jira and Confluence, tell theirs apart so).
    pub(crate) fn code_vendor(&self, code: &str) -> Option<Vendor> {
        self.codes.get(code).map(|c| c.vendor)
    }

    /// Takes (consumes) an authorization code.
    pub(crate) fn take_code(&mut self, code: &str) -> Option<AuthCode> {
        let c = self.codes.remove(code)?;
        (Instant::now() < c.expires_at).then_some(c)
    }
}

/// Verifies a PKCE code_verifier against a (challenge, method).
pub(crate) fn pkce_ok(challenge: &(String, String), verifier: &str) -> bool {
    match challenge.1.as_str() {
        "plain" => challenge.0 == verifier,
        _ => {
            let digest = sha2::Sha256::digest(verifier.as_bytes());
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest) == challenge.0
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pkce_s256() {
        let ch = (
            "ngF5GsXcbwljx6u133FFr3Xht9xooA_DuaX_3QwODtc".to_string(),
            "S256".to_string(),
        );
        assert!(super::pkce_ok(
            &ch,
            "dBjftJeZ4CVP-mJ92K27uhbUJU1p1r_wW1gFWFOEjXk"
        ));
        assert!(!super::pkce_ok(&ch, "wrong"));
    }
}
