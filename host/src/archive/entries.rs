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

use crate::rank::vector_index::{Chunk, chunk_of};
use quarry_store::keys::DataKey;
use quarry_store::records::{Bytes, Flow, Records, Space, Text, TextPart, TextSeq, Unit, Writer};
use quarry_store::{Counted, Declared};

/// `(user, seq)` → a sealed [`Entry`]. Sequence numbers are dense per user.
pub(super) const ENTRIES: Space<TextSeq, Bytes> =
    Space::keyed_by_user("archive_entries", Counted::ArchiveEntries);
/// `(user, seq)` of entries that still lack a vector (the indexer's queue).
pub(super) const PENDING: Space<TextSeq, Unit> =
    Space::keyed_by_user("archive_pending", Counted::Nothing);
/// `user` → [`Head`] (JSON; counters, nothing archived).
pub(super) const HEADS: Space<Text, Bytes> =
    Space::keyed_by_user("archive_heads", Counted::Nothing);
/// `(user, segment)` → one sealed piece of the serialized index.
pub(super) const INDEX_SEGMENTS: Space<TextPart, Bytes> =
    Space::keyed_by_user("archive_index", Counted::Nothing);
/// `(user, n)` → a sealed [`HistoryRecord`]: the query history.
pub(super) const HISTORY: Space<TextSeq, Bytes> =
    Space::keyed_by_user("query_history", Counted::Nothing);

/// The archive's spaces: every one keyed by user first.
pub const SPACES: &[Declared] = &[
    ENTRIES.declared(),
    PENDING.declared(),
    HEADS.declared(),
    INDEX_SEGMENTS.declared(),
    HISTORY.declared(),
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
    /// The chunk's identity: the same text from the same tool is one chunk,
    /// however many queries found it.
    pub fn chunk(&self) -> Chunk {
        chunk_of(&self.connector, &self.content)
    }

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
    /// The tools whose chunks the answer holds.
    pub connectors: Vec<String>,
    /// Every tool the query asked, with what it did, in the answer's
    /// order. Empty in records stored before this was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolOutcome>,
}

/// What one tool did for one query (the dashboard shows it to the person).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// The connector's id, and its label when the query ran.
    pub connector: String,
    pub label: String,
    /// From the call to its answer or its error.
    pub latency_ms: u64,
    /// Chunks of the answer it gave.
    pub results: u64,
    /// Why it gave nothing, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

/// A tool's failure: its type as the API names it (`timeout`, ...) and
/// what it said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

pub(super) fn history_record_id(n: u64) -> String {
    format!("history/{n}")
}

/// History records read at a time, newest first.
const HISTORY_PAGE: u64 = 64;

impl super::Archive {
    /// A user's history records from the newest back, each with its
    /// number, until `visit` says stop: the latest questions without
    /// opening the whole history.
    pub fn history_newest_first(
        &self,
        user_id: &str,
        mut visit: impl FnMut(u64, HistoryRecord) -> Flow,
    ) -> Result<()> {
        let key = self.store.data_key(user_id)?;
        let txn = self.store.read()?;
        let mut end = read_head(&txn, user_id)?.next_query;
        while end > 0 {
            let start = end.saturating_sub(HISTORY_PAGE);
            let page = txn.all_in(&HISTORY, (user_id, start)..(user_id, end))?;
            for ((_, n), sealed) in page.into_iter().rev() {
                if visit(n, open_history(&key, user_id, n, &sealed)?) == Flow::Stop {
                    return Ok(());
                }
            }
            end = start;
        }
        Ok(())
    }

    /// One of a user's history records, by its number.
    pub fn history_record(&self, user_id: &str, n: u64) -> Result<Option<HistoryRecord>> {
        let key = self.store.data_key(user_id)?;
        let sealed = self.store.read()?.get(&HISTORY, (user_id, n))?;
        sealed
            .map(|sealed| open_history(&key, user_id, n, &sealed))
            .transpose()
    }
}

fn open_history(key: &DataKey, user_id: &str, n: u64, sealed: &[u8]) -> Result<HistoryRecord> {
    let plain = key.decrypt(user_id, &history_record_id(n), sealed)?;
    serde_json::from_slice(&plain).with_context(|| format!("history record {n}"))
}

/// How many entries a user has (for reports; counts the space, not the head).
pub(super) fn count_entries(txn: &impl Records, user_id: &str) -> Result<u64> {
    txn.count_in(&ENTRIES, quarry_store::records::user_seqs(user_id))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::archive::{Archive, Recording};
    use crate::rank::Scheduler;
    use crate::rank::embed::HashedWords;
    use quarry_store::Store;

    fn opened() -> (tempfile::TempDir, Arc<Store>, String, Arc<Archive>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path(), None).unwrap());
        let user = store.create_user("a@b.c").unwrap();
        let scheduler = Scheduler::start(Arc::new(HashedWords::new(64)), None, 1, 16);
        let archive = Arc::new(Archive::open(store.clone(), scheduler).unwrap());
        (dir, store, user.id, archive)
    }

    fn recording(user_id: &str, query: &str, tools: Vec<ToolOutcome>) -> Recording {
        Recording {
            user_id: user_id.to_string(),
            query_id: format!("qry_{query}"),
            query: query.to_string(),
            chunks: Vec::new(),
            tools,
        }
    }

    fn outcome(connector: &str, error: Option<&str>) -> ToolOutcome {
        ToolOutcome {
            connector: connector.to_string(),
            label: connector.to_uppercase(),
            latency_ms: 42,
            results: u64::from(error.is_none()),
            error: error.map(|kind| ToolError {
                kind: kind.to_string(),
                message: format!("{connector} secret failure"),
            }),
        }
    }

    #[tokio::test]
    async fn tool_outcomes_are_sealed_and_read_newest_first() {
        let (_dir, store, user, archive) = opened();
        let tools = vec![outcome("linear", None), outcome("jira", Some("timeout"))];
        for query in ["first", "second", "third"] {
            archive
                .record_grouped(recording(&user, query, tools.clone()))
                .await
                .unwrap();
        }
        let mut seen = Vec::new();
        archive
            .history_newest_first(&user, |n, record| {
                seen.push((n, record.query));
                match seen.len() {
                    2 => Flow::Stop,
                    _ => Flow::Continue,
                }
            })
            .unwrap();
        assert_eq!(seen, [(2, "third".to_string()), (1, "second".to_string())]);
        let record = archive.history_record(&user, 0).unwrap().unwrap();
        assert_eq!(record.query, "first");
        assert_eq!(record.tools, tools);
        assert!(archive.history_record(&user, 3).unwrap().is_none());
        // Sealed: the store holds no word of it in the clear.
        let sealed = store.read().unwrap().get(&HISTORY, (user.as_str(), 0));
        let sealed = sealed.unwrap().unwrap();
        let clear = |word: &[u8]| sealed.windows(word.len()).any(|w| w == word);
        assert!(!clear(b"jira secret failure") && !clear(b"LINEAR"));
    }

    #[tokio::test]
    async fn a_record_stored_before_tool_outcomes_still_opens() {
        let (_dir, store, user, archive) = opened();
        // As queries recorded it before `tools` existed.
        let old = br#"{"query_id":"qry_old","query":"old question","queried_at_ms":1000,
                       "first_seq":0,"chunks":1,"connectors":["slack"]}"#;
        let key = store.data_key(&user).unwrap();
        let mut txn = store.write().unwrap();
        let sealed = key.encrypt(&user, &history_record_id(0), old);
        txn.put(&HISTORY, (user.as_str(), 0), &sealed).unwrap();
        let head = Head {
            next_query: 1,
            ..Head::default()
        };
        write_head(&mut txn, &user, &head).unwrap();
        txn.commit().unwrap();
        // A new one beside it.
        archive
            .record_grouped(recording(
                &user,
                "new question",
                vec![outcome("slack", None)],
            ))
            .await
            .unwrap();

        let mut records = Vec::new();
        archive
            .history_newest_first(&user, |_, record| {
                records.push(record);
                Flow::Continue
            })
            .unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].tools, [outcome("slack", None)]);
        let old = &records[1];
        assert_eq!(old.query, "old question");
        assert_eq!(old.connectors, ["slack"]);
        assert!(old.tools.is_empty());
        assert_eq!(archive.history(&user).unwrap().len(), 2);
    }
}
