//! Standard Webhooks signatures (<https://www.standardwebhooks.com>).
//!
//! Each delivery carries `webhook-id` (the message id, the same on every
//! retry so that receivers can deduplicate), `webhook-timestamp` (Unix
//! seconds of this attempt, so that receivers can refuse replays) and
//! `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`.
//! The key is the base64-decoded part of the `whsec_` secret.

use anyhow::{Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD as B64, STANDARD_NO_PAD as B64_NO_PAD};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use quarry_store::random_hex;

pub const SECRET_PREFIX: &str = "whsec_";
/// Random bytes in a secret we generate.
const SECRET_BYTES: usize = 32;
/// Key sizes the spec admits for secrets (ours, and the operator's).
const KEY_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

/// A fresh secret, `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    let mut key = [0u8; SECRET_BYTES];
    rand::rng().fill_bytes(&mut key);
    format!("{SECRET_PREFIX}{}", B64.encode(key))
}

/// A fresh message id, `msg_` and 32 hex digits.
pub fn new_message_id() -> String {
    format!("msg_{}", random_hex(16))
}

/// The signing key of a `whsec_` secret. The error never quotes the secret.
pub fn key_of(secret: &str) -> Result<Vec<u8>> {
    let Some(encoded) = secret.strip_prefix(SECRET_PREFIX) else {
        bail!("a webhook secret starts with {SECRET_PREFIX}");
    };
    // Padding is optional in the wild; accept both forms.
    let key = B64
        .decode(encoded)
        .or_else(|_| B64_NO_PAD.decode(encoded.trim_end_matches('=')));
    let Ok(key) = key else {
        bail!("a webhook secret is {SECRET_PREFIX} and base64");
    };
    if !KEY_BYTES.contains(&key.len()) {
        bail!(
            "a webhook secret's key is {} to {} bytes, not {}",
            KEY_BYTES.start(),
            KEY_BYTES.end(),
            key.len()
        );
    }
    Ok(key)
}

/// The `webhook-signature` value for one attempt.
pub fn sign(key: &[u8], message_id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any size");
    mac.update(message_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", B64.encode(mac.finalize().into_bytes()))
}

/// The three headers of one attempt, by name.
pub fn headers(
    key: &[u8],
    message_id: &str,
    timestamp: i64,
    body: &[u8],
) -> [(&'static str, String); 3] {
    [
        ("webhook-id", message_id.to_string()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", sign(key, message_id, timestamp, body)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_test_vector() {
        // From the Standard Webhooks specification and its libraries' tests.
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            sign(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn generated_secrets_have_32_byte_keys_and_differ() {
        let (a, b) = (new_secret(), new_secret());
        assert_ne!(a, b);
        assert_eq!(key_of(&a).unwrap().len(), 32);
        assert!(new_message_id().starts_with("msg_"));
    }

    #[test]
    fn malformed_secrets_are_refused_without_being_quoted() {
        for bad in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_not base64!",
            "whsec_c2hvcnQ=",
            "whsec_",
        ] {
            let error = key_of(bad).unwrap_err().to_string();
            assert!(!error.contains(bad), "{error}");
        }
        // Unpadded base64 of 32 bytes is accepted as well.
        let padded = new_secret();
        assert!(key_of(padded.trim_end_matches('=')).is_ok());
    }

    #[test]
    fn headers_carry_id_timestamp_and_signature() {
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let [id, ts, sig] = headers(&key, "msg_1", 10, b"{}");
        assert_eq!(id, ("webhook-id", "msg_1".into()));
        assert_eq!(ts, ("webhook-timestamp", "10".into()));
        assert_eq!(sig.1, sign(&key, "msg_1", 10, b"{}"));
    }
}
