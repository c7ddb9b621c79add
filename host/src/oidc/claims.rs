//! The claims of an ID token, and the checks the decoder does not make:
//! `sub`, `iat` in the past, the `nonce` we sent, and the authorized party.

use serde::Deserialize;

use super::LEEWAY_SECONDS;

/// The claims read from an ID token (`iss`, `aud`, `exp`, `iat` are
/// checked by the decoder).
#[derive(Debug, Deserialize)]
pub(super) struct Claims {
    pub(super) sub: String,
    /// Required (the decoder checks `exp`, but not `iat`).
    iat: i64,
    /// One audience or several (checked by the decoder; counted here).
    #[serde(default)]
    aud: serde_json::Value,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
    #[serde(default)]
    pub(super) email: Option<String>,
    #[serde(default)]
    pub(super) email_verified: Option<Verified>,
}

/// `email_verified`: a boolean, or the string some providers send.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum Verified {
    Bool(bool),
    Text(String),
}

impl Verified {
    pub(super) fn is_true(&self) -> bool {
        match self {
            Verified::Bool(b) => *b,
            Verified::Text(t) => t.eq_ignore_ascii_case("true"),
        }
    }
}

impl Claims {
    pub(super) fn check(&self, client_id: &str, nonce: &str) -> Result<(), String> {
        if self.sub.is_empty() {
            return Err("sub is empty".into());
        }
        if self.iat > quarry_store::now() + LEEWAY_SECONDS as i64 {
            return Err("it was issued in the future (iat)".into());
        }
        let sent = self.nonce.as_deref().unwrap_or_default();
        if !quarry_store::secret::constant_time_eq(sent, nonce) {
            return Err("the nonce is not the one this sign-in sent".into());
        }
        // Core §3.1.3.7 items 4 and 5.
        let several = self.aud.as_array().is_some_and(|a| a.len() > 1);
        match &self.azp {
            Some(azp) if azp != client_id => {
                Err(format!("it was issued to {azp:?} (azp), not to Quarry"))
            }
            None if several => Err("several audiences and no azp".into()),
            _ => Ok(()),
        }
    }
}
