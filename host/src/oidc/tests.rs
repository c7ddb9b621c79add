//! ID token claims and key selection.

use super::keys::select;
use super::*;

fn claims(json: serde_json::Value) -> Claims {
    serde_json::from_value(json).unwrap()
}

#[test]
fn nonce_and_authorized_party_are_checked() {
    let ok = claims(serde_json::json!({"sub": "1", "iat": 0, "aud": "quarry", "nonce": "n1"}));
    let future = serde_json::json!({"sub": "1", "iat": quarry_store::now() + 3600, "aud": "quarry", "nonce": "n1"});
    assert!(
        claims(future)
            .check("quarry", "n1")
            .unwrap_err()
            .contains("iat")
    );
    assert!(ok.check("quarry", "n1").is_ok());
    assert!(ok.check("quarry", "n2").is_err());
    let missing = claims(serde_json::json!({"sub": "1", "iat": 0, "aud": "quarry"}));
    assert!(missing.check("quarry", "n1").is_err());
    let other = claims(
        serde_json::json!({"sub": "1", "iat": 0, "aud": ["quarry", "x"], "azp": "x", "nonce": "n"}),
    );
    assert!(other.check("quarry", "n").is_err());
    let no_azp =
        claims(serde_json::json!({"sub": "1", "iat": 0, "aud": ["quarry", "x"], "nonce": "n"}));
    assert!(no_azp.check("quarry", "n").is_err());
    let ours = claims(
        serde_json::json!({"sub": "1", "iat": 0, "aud": ["quarry", "x"], "azp": "quarry", "nonce": "n"}),
    );
    assert!(ours.check("quarry", "n").is_ok());
}

#[test]
fn email_verified_may_be_a_string() {
    let c = claims(serde_json::json!({"sub": "1", "iat": 0, "email_verified": "true"}));
    assert!(c.email_verified.unwrap().is_true());
    let c = claims(serde_json::json!({"sub": "1", "iat": 0, "email_verified": false}));
    assert!(!c.email_verified.unwrap().is_true());
}

#[test]
fn keys_are_chosen_by_id_use_and_algorithm() {
    let keys: JwkSet = serde_json::from_value(serde_json::json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "ec", "use": "sig", "alg": "ES256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "crv": "P-256", "kid": "enc", "use": "enc",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
        ]}))
        .unwrap();
    assert!(select(&keys, Some("ec"), Algorithm::ES256).is_some());
    assert!(
        select(&keys, Some("ec"), Algorithm::RS256).is_none(),
        "alg differs"
    );
    assert!(
        select(&keys, Some("enc"), Algorithm::ES256).is_none(),
        "not a signing key"
    );
    assert!(select(&keys, Some("nope"), Algorithm::ES256).is_none());
    assert!(
        select(&keys, None, Algorithm::ES256).is_some(),
        "the only one"
    );
}
