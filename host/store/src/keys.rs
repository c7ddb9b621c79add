//! Envelope encryption: one master key wraps one data key per user; the
//! user's data key encrypts that user's records with AES-256-GCM, with the
//! user id and the record id bound as associated data, so a ciphertext
//! moved to another user's or another record's slot does not decrypt.
//!
//! Deleting a user destroys the wrapped data key first (crypto-shredding):
//! whatever pages or backups still hold the user's records become noise.

use std::path::Path;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use anyhow::{Context, Result, anyhow, bail, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use rand::RngCore;

const NONCE_LEN: usize = 12;

/// The key that wraps every data key. Never stored beside the data unless
/// the operator chose the key-file default (demos, single machines).
pub struct MasterKey(Aes256Gcm);

impl MasterKey {
    /// The configured key (base64 of 32 bytes), or the key file in the data
    /// folder, created with mode 0600 when missing (tests, and data
    /// folders made before `master_key_file`; the server resolves its
    /// configuration with [`MasterKey::from_base64`] and [`MasterKey::from_file`]).
    pub fn load(configured: Option<&str>, data_dir: &Path) -> Result<MasterKey> {
        match configured {
            Some(text) => MasterKey::from_base64(text),
            None => MasterKey::from_file(&data_dir.join("master.key")),
        }
    }

    /// A key given as base64 of 32 bytes (`master_key`).
    pub fn from_base64(text: &str) -> Result<MasterKey> {
        let bytes = B64
            .decode(text.trim())
            .context("master_key is not base64")?;
        MasterKey::from_bytes(&bytes)
    }

    /// The key in a file (base64), created with mode 0600 when missing.
    pub fn from_file(path: &Path) -> Result<MasterKey> {
        MasterKey::from_bytes(&key_file(path)?)
    }

    fn from_bytes(bytes: &[u8]) -> Result<MasterKey> {
        ensure!(
            bytes.len() == 32,
            "the master key must be 32 bytes, not {}",
            bytes.len()
        );
        Ok(MasterKey(Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(
            bytes,
        ))))
    }

    /// A fresh data key for `user_id`, and its wrapped (storable) form.
    pub fn new_data_key(&self, user_id: &str) -> (DataKey, Vec<u8>) {
        let mut raw = [0u8; 32];
        rand::rng().fill_bytes(&mut raw);
        let wrapped = seal(&self.0, &raw, &wrap_aad(user_id));
        (
            DataKey(Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&raw))),
            wrapped,
        )
    }

    /// Seals an operator-level record (one that must outlive a user's data
    /// key, such as a pending token revocation or a `user.deleted` delivery).
    pub fn encrypt(&self, record_id: &str, plaintext: &[u8]) -> Vec<u8> {
        seal(&self.0, plaintext, &master_record_aad(record_id))
    }

    pub fn decrypt(&self, record_id: &str, sealed: &[u8]) -> Result<Vec<u8>> {
        open(&self.0, sealed, &master_record_aad(record_id))
    }

    pub fn unwrap_data_key(&self, user_id: &str, wrapped: &[u8]) -> Result<DataKey> {
        let raw = open(&self.0, wrapped, &wrap_aad(user_id))
            .context("the user's data key does not unwrap: wrong master key?")?;
        ensure!(raw.len() == 32, "a data key is 32 bytes");
        Ok(DataKey(Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&raw))))
    }
}

fn master_record_aad(record_id: &str) -> Vec<u8> {
    format!("quarry/master-record/{record_id}").into_bytes()
}

fn wrap_aad(user_id: &str) -> Vec<u8> {
    format!("quarry/data-key/{user_id}").into_bytes()
}

fn key_file(path: &Path) -> Result<Vec<u8>> {
    if path.exists() {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        return B64
            .decode(text.trim())
            .with_context(|| format!("{} is not base64", path.display()));
    }
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_private(path, B64.encode(raw).as_bytes())?;
    tracing::warn!(path = %path.display(), "created a master key file; keep it secret and backed up apart from the data");
    Ok(raw.to_vec())
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("creating {}", path.display()))
}

/// One user's data key, unwrapped, in memory only.
pub struct DataKey(Aes256Gcm);

impl DataKey {
    pub fn encrypt(&self, user_id: &str, record_id: &str, plaintext: &[u8]) -> Vec<u8> {
        seal(&self.0, plaintext, &record_aad(user_id, record_id))
    }

    pub fn decrypt(&self, user_id: &str, record_id: &str, sealed: &[u8]) -> Result<Vec<u8>> {
        open(&self.0, sealed, &record_aad(user_id, record_id))
    }
}

fn record_aad(user_id: &str, record_id: &str) -> Vec<u8> {
    format!("quarry/record/{user_id}\0{record_id}").into_bytes()
}

/// `nonce || ciphertext+tag`, with a random 96-bit nonce.
fn seal(cipher: &Aes256Gcm, plaintext: &[u8], aad: &[u8]) -> Vec<u8> {
    let mut nonce = [0u8; NONCE_LEN];
    rand::rng().fill_bytes(&mut nonce);
    let ciphertext = cipher
        .encrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: plaintext,
                aad,
            },
        )
        .expect("AES-GCM encryption does not fail for inputs under 64 GiB");
    let mut out = nonce.to_vec();
    out.extend(ciphertext);
    out
}

fn open(cipher: &Aes256Gcm, sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    if sealed.len() < NONCE_LEN + 16 {
        bail!("ciphertext is too short");
    }
    let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
    cipher
        .decrypt(
            Nonce::from_slice(nonce),
            Payload {
                msg: ciphertext,
                aad,
            },
        )
        .map_err(|_| {
            anyhow!(
                "ciphertext does not authenticate (tampered, or bound to another user or record)"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_bound_to_their_user_and_id() {
        let dir = tempfile::tempdir().unwrap();
        let master = MasterKey::load(None, dir.path()).unwrap();
        let (key, wrapped) = master.new_data_key("usr_a");
        let sealed = key.encrypt("usr_a", "grant/github", b"secret");
        assert_eq!(
            key.decrypt("usr_a", "grant/github", &sealed).unwrap(),
            b"secret"
        );
        assert!(key.decrypt("usr_b", "grant/github", &sealed).is_err());
        assert!(key.decrypt("usr_a", "grant/slack", &sealed).is_err());
        let again = master.unwrap_data_key("usr_a", &wrapped).unwrap();
        assert_eq!(
            again.decrypt("usr_a", "grant/github", &sealed).unwrap(),
            b"secret"
        );
        assert!(master.unwrap_data_key("usr_b", &wrapped).is_err());
    }

    #[test]
    fn the_key_file_is_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = MasterKey::load(None, dir.path()).unwrap();
        let (_, wrapped) = first.new_data_key("u");
        let second = MasterKey::load(None, dir.path()).unwrap();
        assert!(second.unwrap_data_key("u", &wrapped).is_ok());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("master.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
