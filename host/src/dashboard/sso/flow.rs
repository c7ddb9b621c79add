//! A sign-in in flight, kept by the browser that started it: what the
//! callback needs (the `state` sent to the provider, the nonce, the PKCE
//! verifier, the redirect URI) sealed with the master key into a
//! short-lived `__Host-` cookie. The server stores nothing per sign-in, so
//! strangers starting sign-ins from any number of addresses cost it
//! nothing and cannot stop anyone else's.
//!
//! The cookie binds the flow to this browser (a callback URL opened in
//! another browser has no cookie to match its `state`); the seal makes it
//! unreadable and unforgeable; the expiry inside bounds a flow to ten
//! minutes whatever the browser keeps; the provider's code is single use,
//! and the callback clears the cookie.

use axum::http::{HeaderMap, HeaderValue};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use serde::{Deserialize, Serialize};

use crate::dashboard::pending;
use crate::dashboard::session;
use quarry_store::secret::constant_time_eq;
use quarry_store::{MasterKey, Store, now};

const COOKIE: &str = "__Host-quarry_sso";
/// How long a person has to sign in at the provider.
const FLOW_SECONDS: i64 = 600;
/// The associated data of the seal: a flow's cookie opens as nothing else.
const SEALED_AS: &str = "dashboard/sso-flow";

#[derive(Serialize, Deserialize)]
pub(super) struct SigningIn {
    state: String,
    pub nonce: String,
    pub verifier: String,
    pub redirect_uri: String,
    expires_at: i64,
}

/// Why a callback's flow was refused.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// No cookie, or one that does not open: another browser, or a flow
    /// already finished here.
    NotThisBrowser,
    Expired,
    /// The cookie's flow is not the one the provider answered.
    OtherState,
}

impl Refused {
    pub fn says(&self) -> &'static str {
        match self {
            Refused::NotThisBrowser => {
                "This sign-in was started in another browser, or was already used. Start again \
                 from this one."
            }
            Refused::Expired => "The sign-in took longer than 10 minutes. Start again.",
            Refused::OtherState => {
                "This sign-in is unknown or was already used: another was started in this \
                 browser since. Start again."
            }
        }
    }
}

impl SigningIn {
    pub fn new(state: String, nonce: String, verifier: String, redirect_uri: String) -> SigningIn {
        SigningIn {
            state,
            nonce,
            verifier,
            redirect_uri,
            expires_at: now() + FLOW_SECONDS,
        }
    }

    /// The `Set-Cookie` that hands the flow to the browser.
    pub fn cookie(&self, master: &MasterKey) -> HeaderValue {
        let json = serde_json::to_vec(self).expect("a flow serialises");
        let sealed = B64URL.encode(master.encrypt(SEALED_AS, &json));
        cookie(&sealed, FLOW_SECONDS)
    }

    /// The flow this browser started, if the provider's `state` is its own.
    pub fn from_cookie(
        master: &MasterKey,
        headers: &HeaderMap,
        state: &str,
    ) -> Result<SigningIn, Refused> {
        let flow = session::cookie_named(headers, COOKIE)
            .and_then(|value| B64URL.decode(value).ok())
            .and_then(|sealed| master.decrypt(SEALED_AS, &sealed).ok())
            .and_then(|json| serde_json::from_slice::<SigningIn>(&json).ok())
            .ok_or(Refused::NotThisBrowser)?;
        if !constant_time_eq(&flow.state, state) {
            return Err(Refused::OtherState);
        }
        if flow.expires_at <= now() {
            return Err(Refused::Expired);
        }
        Ok(flow)
    }
}

/// The `Set-Cookie` that ends the flow in the browser.
pub(super) fn cleared_cookie() -> HeaderValue {
    cookie("", 0)
}

fn cookie(value: &str, max_age: i64) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={max_age}"
    ))
    .expect("cookie is ASCII")
}

/// Sign-ins in flight as earlier versions kept them, server-side.
pub(crate) const STATES_KEPT_BY_EARLIER_VERSIONS: pending::Table = pending::Table::shared(
    "dashboard_sso_states",
    "sign-ins in flight as earlier versions kept them (now in the browser's sealed cookie): nobody's; emptied when the dashboard starts",
);

/// Removes the sign-ins in flight earlier versions stored (each expired
/// ten minutes after it started; none can finish with this version).
pub fn forget_states_kept_by_earlier_versions(store: &Store) -> anyhow::Result<()> {
    use quarry_store::records::Records as _;
    if store
        .read()?
        .count_in(&STATES_KEPT_BY_EARLIER_VERSIONS, ..)?
        == 0
    {
        return Ok(());
    }
    let mut txn = store.write()?;
    txn.remove_in(&STATES_KEPT_BY_EARLIER_VERSIONS, ..)?;
    txn.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header;

    fn sent_back(set_cookie: &HeaderValue) -> HeaderMap {
        let pair = set_cookie.to_str().unwrap().split(';').next().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(pair).unwrap());
        headers
    }

    #[test]
    fn the_flow_comes_back_only_to_its_browser_with_its_state() {
        let dir = tempfile::tempdir().unwrap();
        let master = MasterKey::load(None, dir.path()).unwrap();
        let flow = SigningIn::new("st".into(), "n".into(), "v".into(), "https://q/cb".into());
        let browser = sent_back(&flow.cookie(&master));
        let back = SigningIn::from_cookie(&master, &browser, "st").unwrap();
        assert_eq!((back.nonce.as_str(), back.verifier.as_str()), ("n", "v"));
        assert_eq!(
            SigningIn::from_cookie(&master, &browser, "other").err(),
            Some(Refused::OtherState)
        );
        assert_eq!(
            SigningIn::from_cookie(&master, &HeaderMap::new(), "st").err(),
            Some(Refused::NotThisBrowser)
        );
        // Another server's key (or a forged cookie) opens nothing.
        let other = tempfile::tempdir().unwrap();
        let stranger = MasterKey::load(None, other.path()).unwrap();
        assert_eq!(
            SigningIn::from_cookie(&stranger, &browser, "st").err(),
            Some(Refused::NotThisBrowser)
        );
        let stale = SigningIn {
            expires_at: now() - 1,
            ..SigningIn::new("st".into(), "n".into(), "v".into(), "https://q/cb".into())
        };
        let browser = sent_back(&stale.cookie(&master));
        assert_eq!(
            SigningIn::from_cookie(&master, &browser, "st").err(),
            Some(Refused::Expired)
        );
    }
}
