//! The archive's records: one entry per archived chunk, one history
//! record per query, a small plaintext head per user (counters only), and
//! the user's serialized index in encrypted segments.
//!
//! Entries are the truth; the index is derived from them and can be
//! rebuilt. Everything that says what a user asked or found is sealed with
//! the user's data key, bound to the user and the record id.

use std::borrow::Cow;

use anyhow::{Context, Result, ensure};
use serde::{Deserialize, Serialize};

use crate::store::keys::DataKey;
use crate::store::records::{Bytes, Records, Space, Text, TextPart, TextSeq, Unit, Writer};
use crate::store::{Counted, UserData};

/// `(user, seq)` → a sealed [`Entry`]. Sequence numbers are dense per user.
pub(super) const ENTRIES: Space<TextSeq, Bytes> = Space::new("archive_entries");
/// `(user, seq)` of entries that still lack a vector (the indexer's queue).
pub(super) const PENDING: Space<TextSeq, Unit> = Space::new("archive_pending");
/// `user` → [`Head`] (JSON; counters, nothing archived).
pub(super) const HEADS: Space<Text, Bytes> = Space::new("archive_heads");
/// `(user, segment)` → one sealed piece of the serialized index.
pub(super) const INDEX_SEGMENTS: Space<TextPart, Bytes> = Space::new("archive_index");
/// `(user, n)` → a sealed [`HistoryRecord`]: the query history.
pub(super) const HISTORY: Space<TextSeq, Bytes> = Space::new("query_history");

/// Every space of the archive is keyed by user first.
pub const USER_DATA: &[UserData] = &[
    UserData::keyed_by_user(ENTRIES.name(), Counted::ArchiveEntries),
    UserData::keyed_by_user(PENDING.name(), Counted::Nothing),
    UserData::keyed_by_user(HEADS.name(), Counted::Nothing),
    UserData::keyed_by_user(INDEX_SEGMENTS.name(), Counted::Nothing),
    UserData::keyed_by_user(HISTORY.name(), Counted::Nothing),
];

/// Per-user counters, stored in plaintext: how many entries and queries
/// exist, never what they say.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Head {
    /// The next entry's sequence number (= entries ever written).
    pub next_seq: u64,
    /// The next history record's number.
    pub next_query: u64,
    /// `queried_at` of the newest entry (ms): later entries never go below
    /// it, so sequence order is time order and a date range is a seq range.
    pub last_queried_at_ms: i64,
    /// Segments of the stored index, and the generation they belong to.
    pub index_generation: u64,
    pub index_segments: u32,
    /// Entries the indexer has given vectors since the first: with
    /// `next_seq`, it tells a replica whether its loaded index is behind
    /// what another replica archived or indexed.
    #[serde(default)]
    pub indexed: u64,
}

impl Head {
    /// What a loaded index must have caught up with to be current.
    pub fn mark(&self) -> (u64, u64) {
        (self.next_seq, self.indexed)
    }
}

pub(super) fn read_head(txn: &impl Records, user_id: &str) -> Result<Head> {
    Ok(match txn.get(&HEADS, user_id)? {
        Some(bytes) => serde_json::from_slice(&bytes)?,
        None => Head::default(),
    })
}

pub(super) fn write_head(txn: &mut Writer, user_id: &str, head: &Head) -> Result<()> {
    txn.put(&HEADS, user_id, &serde_json::to_vec(head)?)
}

/// One archived chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub query_id: String,
    pub query: String,
    pub connector: String,
    pub content: String,
    pub queried_at_ms: i64,
    /// The vector and the embedder that made it, once indexed.
    pub vector: Option<(String, Vec<f32>)>,
    /// Where the chunk came from, when the query recorded it (entries
    /// archived before sources were kept have none).
    pub source: Option<Source>,
}

/// A chunk's document: its title and its address at the vendor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub title: String,
    pub url: String,
}

#[derive(Serialize, Deserialize)]
struct EntryFields<'a> {
    #[serde(borrow)]
    query_id: Cow<'a, str>,
    #[serde(borrow)]
    query: Cow<'a, str>,
    #[serde(borrow)]
    connector: Cow<'a, str>,
    #[serde(borrow)]
    content: Cow<'a, str>,
    queried_at_ms: i64,
    #[serde(borrow)]
    embedder: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<Source>,
}

pub(super) fn entry_record_id(seq: u64) -> String {
    format!("archive/{seq}")
}

impl Entry {
    /// `[u32 length of the fields' JSON][JSON][vector as f32 LE]`, sealed.
    pub(super) fn seal(&self, key: &DataKey, user_id: &str, seq: u64) -> Result<Vec<u8>> {
        let fields = EntryFields {
            query_id: Cow::Borrowed(&self.query_id),
            query: Cow::Borrowed(&self.query),
            connector: Cow::Borrowed(&self.connector),
            content: Cow::Borrowed(&self.content),
            queried_at_ms: self.queried_at_ms,
            embedder: self
                .vector
                .as_ref()
                .map(|(name, _)| Cow::Borrowed(name.as_str())),
            source: self.source.clone(),
        };
        let json = serde_json::to_vec(&fields)?;
        let vector = self.vector.as_ref().map_or(&[][..], |(_, v)| v.as_slice());
        let mut plain = Vec::with_capacity(4 + json.len() + vector.len() * 4);
        plain.extend_from_slice(&(json.len() as u32).to_le_bytes());
        plain.extend_from_slice(&json);
        for x in vector {
            plain.extend_from_slice(&x.to_le_bytes());
        }
        Ok(key.encrypt(user_id, &entry_record_id(seq), &plain))
    }

    pub(super) fn open(key: &DataKey, user_id: &str, seq: u64, sealed: &[u8]) -> Result<Entry> {
        let plain = key.decrypt(user_id, &entry_record_id(seq), sealed)?;
        ensure!(plain.len() >= 4, "archive entry {seq} is truncated");
        let json_len = u32::from_le_bytes(plain[..4].try_into().expect("4 bytes")) as usize;
        let rest = &plain[4..];
        ensure!(rest.len() >= json_len, "archive entry {seq} is truncated");
        let (json, vector) = rest.split_at(json_len);
        let fields: EntryFields<'_> =
            serde_json::from_slice(json).with_context(|| format!("archive entry {seq}"))?;
        let vector = fields.embedder.map(|name| {
            let name = name.into_owned();
            let floats = vector
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect();
            (name, floats)
        });
        Ok(Entry {
            query_id: fields.query_id.into_owned(),
            query: fields.query.into_owned(),
            connector: fields.connector.into_owned(),
            content: fields.content.into_owned(),
            queried_at_ms: fields.queried_at_ms,
            vector,
            source: fields.source,
        })
    }
}

/// One answered query, as the history keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryRecord {
    pub query_id: String,
    pub query: String,
    pub queried_at_ms: i64,
    /// The entries this query archived: `first_seq .. first_seq + chunks`.
    pub first_seq: u64,
    pub chunks: u64,
    pub connectors: Vec<String>,
}

pub(super) fn history_record_id(n: u64) -> String {
    format!("history/{n}")
}

/// How many entries a user has (for reports; counts the space, not the head).
pub(super) fn count_entries(txn: &impl Records, user_id: &str) -> Result<u64> {
    txn.count_in(&ENTRIES, crate::store::records::user_seqs(user_id))
}
