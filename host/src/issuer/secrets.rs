//! The secrets the authorization server hands out (codes, tokens, device
//! codes) and how they are kept: only their digest is stored, so a copy of
//! the store lets nobody in.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use rand::Rng as _;
use sha2::{Digest as _, Sha256};

/// `bytes` random bytes, base64url without padding.
pub(super) fn random_token(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    rand::rng().fill(raw.as_mut_slice());
    B64URL.encode(raw)
}

/// What the store keeps of a secret: its SHA-256, in hex.
pub(super) fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}
