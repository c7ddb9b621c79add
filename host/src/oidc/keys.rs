//! The provider's published keys: the one an ID token names, checked to be
//! a signing key of the token's algorithm.

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};

use super::SsoError;

/// The key of [`select`], checked to be of the algorithm's family.
pub(super) fn decoding_key(
    keys: &JwkSet,
    kid: Option<&str>,
    alg: Algorithm,
) -> Result<Option<DecodingKey>, SsoError> {
    let Some(jwk) = select(keys, kid, alg) else {
        return Ok(None);
    };
    let key = DecodingKey::from_jwk(jwk)
        .map_err(|e| SsoError::InvalidToken(format!("the provider's key: {e}")))?;
    if key.family() != alg.family() {
        return Err(SsoError::InvalidToken(format!(
            "the key {kid:?} is not a key for {alg:?}"
        )));
    }
    Ok(Some(key))
}

/// The signing key a token names: by `kid`, or the only signing key that
/// fits the algorithm when the token names none.
pub(super) fn select<'a>(keys: &'a JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<&'a Jwk> {
    use jsonwebtoken::jwk::PublicKeyUse;
    let usable = |jwk: &&Jwk| {
        let for_signing = jwk
            .common
            .public_key_use
            .as_ref()
            .is_none_or(|u| *u == PublicKeyUse::Signature);
        let same_alg = jwk
            .common
            .key_algorithm
            .is_none_or(|a| a == jsonwebtoken::jwk::KeyAlgorithm::from(alg));
        for_signing && same_alg
    };
    match kid {
        Some(kid) => keys
            .keys
            .iter()
            .filter(usable)
            .find(|jwk| jwk.common.key_id.as_deref() == Some(kid)),
        None => {
            let mut candidates =
                keys.keys.iter().filter(usable).filter(|jwk| {
                    DecodingKey::from_jwk(jwk).is_ok_and(|k| k.family() == alg.family())
                });
            let only = candidates.next();
            if candidates.next().is_some() {
                return None;
            }
            only
        }
    }
}
