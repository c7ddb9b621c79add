//! The device authorization grant (RFC 8628): codes, polling, approval.

use anyhow::Result;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::secrets::{digest, random_token};
use super::{DEVICE_CODE_SECONDS, Issued, Issuer, POLL_INTERVAL_SECONDS};
use quarry_store::records::{Bytes, Records, Space, Text, Writer};
use quarry_store::{Counted, now};

/// SHA-256 of the device code → [`DeviceRecord`].
pub(super) const DEVICE_CODES: Space<Text, Bytes> =
    Space::user_owned("device_codes", remove_approved_by, Counted::Nothing);
/// User code (normalised) → SHA-256 of its device code.
pub(crate) const USER_CODES: Space<Text, Text> = Space::shared(
    "device_user_codes",
    "what a person types for a device code: the code's hash, no user; goes with its device code",
);

/// Letters a person reads and types without confusion (RFC 8628 §6.1: no
/// vowels, so no words; no look-alikes).
const USER_CODE_ALPHABET: &[u8] = b"BCDFGHJKLMNPQRSTVWXZ";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct DeviceRecord {
    user_code: String,
    client_id: String,
    expires_at: i64,
    interval: i64,
    last_poll_at: Option<i64>,
    state: State,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
enum State {
    Pending,
    Approved { user_id: String },
    Denied,
}

/// A new device authorization.
#[derive(Debug)]
pub struct DeviceStart {
    pub device_code: String,
    pub user_code: String,
    pub expires_in: i64,
    pub interval: i64,
}

/// A code waiting for the user, as the approval page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDevice {
    pub user_code: String,
    pub client_id: String,
    pub expires_at: i64,
}

/// The answer to one poll of the token endpoint.
#[derive(Debug)]
pub enum Poll {
    Issued(Issued),
    /// RFC 8628 §3.5 errors.
    Pending,
    SlowDown,
    Expired,
    Denied,
    /// Unknown device code, or one issued to another client.
    InvalidGrant,
}

impl Issuer {
    pub fn start_device(&self, client_id: &str) -> Result<DeviceStart> {
        let device_code = random_token(32);
        let user_code = new_user_code();
        let record = DeviceRecord {
            user_code: user_code.clone(),
            client_id: client_id.to_string(),
            expires_at: now() + DEVICE_CODE_SECONDS,
            interval: POLL_INTERVAL_SECONDS,
            last_poll_at: None,
            state: State::Pending,
        };
        let hash = digest(&device_code);
        let mut txn = self.store.write()?;
        put_record(&mut txn, &hash, &record)?;
        txn.put(&USER_CODES, &normalise(&user_code), &hash)?;
        // The sweep reads every code: once a minute at most, not per start.
        if super::sweep_due(&self.device_codes_swept) {
            forget_expired(&mut txn)?;
        }
        txn.commit()?;
        Ok(DeviceStart {
            device_code,
            user_code,
            expires_in: DEVICE_CODE_SECONDS,
            interval: POLL_INTERVAL_SECONDS,
        })
    }

    /// One poll by the assistant. Polling faster than the interval earns
    /// `slow_down` and a longer interval; success consumes the code.
    pub fn poll_device(&self, device_code: &str, client_id: &str) -> Result<Poll> {
        let hash = digest(device_code);
        let mut txn = self.store.write()?;
        let outcome = match record(&txn, &hash)? {
            None => Poll::InvalidGrant,
            Some(record) if record.client_id != client_id => Poll::InvalidGrant,
            Some(record) if now() >= record.expires_at => {
                remove_code(&mut txn, &hash, &record)?;
                Poll::Expired
            }
            Some(mut record) => {
                let too_soon = record
                    .last_poll_at
                    .is_some_and(|last| now() - last < record.interval);
                record.last_poll_at = Some(now());
                match &record.state {
                    State::Approved { user_id } => {
                        let user_id = user_id.clone();
                        remove_code(&mut txn, &hash, &record)?;
                        let approval = super::refresh::Approval {
                            user_id: &user_id,
                            client_id,
                            client_name: client_id,
                            audience: quarry_store::Audience::V1,
                            scope: quarry_store::Scope::all(),
                        };
                        // In the transaction that uses the code up: the
                        // person still exists when the tokens commit.
                        let family = super::refresh::new_family_id();
                        let issued = self.issue_in(&mut txn, approval, &family)?;
                        txn.commit()?;
                        return Ok(issued.map_or(Poll::InvalidGrant, Poll::Issued));
                    }
                    State::Denied => {
                        remove_code(&mut txn, &hash, &record)?;
                        Poll::Denied
                    }
                    State::Pending if too_soon => {
                        record.interval += 5;
                        put_record(&mut txn, &hash, &record)?;
                        Poll::SlowDown
                    }
                    State::Pending => {
                        put_record(&mut txn, &hash, &record)?;
                        Poll::Pending
                    }
                }
            }
        };
        txn.commit()?;
        Ok(outcome)
    }

    /// The code a user typed, if it is waiting for approval.
    pub fn pending_device(&self, user_code: &str) -> Result<Option<PendingDevice>> {
        let txn = self.store.read()?;
        let Some(hash) = txn.get(&USER_CODES, &normalise(user_code))? else {
            return Ok(None);
        };
        let Some(record) = record(&txn, &hash)? else {
            return Ok(None);
        };
        Ok(
            (record.state == State::Pending && now() < record.expires_at).then_some(
                PendingDevice {
                    user_code: record.user_code,
                    client_id: record.client_id,
                    expires_at: record.expires_at,
                },
            ),
        )
    }

    /// The signed-in user approves (or denies) the code they typed.
    /// Returns false when the code is unknown, expired or already decided.
    pub fn decide_device(&self, user_code: &str, user_id: &str, approve: bool) -> Result<bool> {
        let mut txn = self.store.write()?;
        let Some(hash) = txn.get(&USER_CODES, &normalise(user_code))? else {
            return Ok(false);
        };
        let Some(mut record) = record(&txn, &hash)? else {
            return Ok(false);
        };
        if record.state != State::Pending || now() >= record.expires_at {
            return Ok(false);
        }
        record.state = if approve {
            State::Approved {
                user_id: user_id.to_string(),
            }
        } else {
            State::Denied
        };
        put_record(&mut txn, &hash, &record)?;
        txn.commit()?;
        Ok(true)
    }
}

fn record(txn: &impl Records, hash: &str) -> Result<Option<DeviceRecord>> {
    let bytes = txn.get(&DEVICE_CODES, hash)?;
    Ok(bytes.map(|b| serde_json::from_slice(&b)).transpose()?)
}

fn put_record(txn: &mut Writer, hash: &str, record: &DeviceRecord) -> Result<()> {
    txn.put(&DEVICE_CODES, hash, &serde_json::to_vec(record)?)
}

/// A code is used up (or expired): it and its user code go.
fn remove_code(txn: &mut Writer, hash: &str, record: &DeviceRecord) -> Result<()> {
    txn.remove(&DEVICE_CODES, hash)?;
    txn.remove(&USER_CODES, &normalise(&record.user_code))?;
    Ok(())
}

/// Drops device codes that expired long ago (nobody polled them to the
/// end), with the user codes that lead to them.
fn forget_expired(txn: &mut Writer) -> Result<()> {
    let cutoff = now() - DEVICE_CODE_SECONDS;
    let mut expired = Vec::new();
    for (hash, bytes) in txn.all_in(&DEVICE_CODES, ..)? {
        match serde_json::from_slice::<DeviceRecord>(&bytes) {
            Ok(record) if record.expires_at > cutoff => {}
            Ok(record) => expired.push((hash, Some(record))),
            Err(_) => expired.push((hash, None)),
        }
    }
    for (hash, record) in expired {
        match record {
            Some(record) => remove_code(txn, &hash, &record)?,
            None => {
                txn.remove(&DEVICE_CODES, &hash)?;
            }
        }
    }
    Ok(())
}

/// Codes a deleted user approved and no assistant has collected yet.
fn remove_approved_by(txn: &mut Writer, user_id: &str) -> Result<u64> {
    let mut theirs = Vec::new();
    for (hash, bytes) in txn.all_in(&DEVICE_CODES, ..)? {
        let record: DeviceRecord = serde_json::from_slice(&bytes)?;
        if matches!(&record.state, State::Approved { user_id: id } if id == user_id) {
            theirs.push((hash, record));
        }
    }
    for (hash, record) in &theirs {
        remove_code(txn, hash, record)?;
    }
    Ok(theirs.len() as u64)
}

/// `XXXX-XXXX` from [`USER_CODE_ALPHABET`]: 20^8 ≈ 2^34.6 codes, for a
/// code that lives 10 minutes behind a rate-limited, signed-in page.
fn new_user_code() -> String {
    let mut rng = rand::rng();
    let mut code = String::with_capacity(9);
    for i in 0..8 {
        if i == 4 {
            code.push('-');
        }
        code.push(USER_CODE_ALPHABET[rng.random_range(0..USER_CODE_ALPHABET.len())] as char);
    }
    code
}

/// Upper case, without separators or spaces: what a person types varies.
pub(super) fn normalise(user_code: &str) -> String {
    user_code
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect()
}
