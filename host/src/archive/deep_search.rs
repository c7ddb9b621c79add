//! `POST /v1/deep_search` over one user's archive: the index, plus the
//! user's entries still queued for the indexer, so that a user always
//! finds what they were just told, without waiting for the indexer.
//!
//! The search term is embedded first (a live job, ahead of the queued
//! entries). The queued entries get the model for a short budget after
//! it; those it reaches are compared by meaning and handed to the index
//! at once, and the rest are placed on the model's scale by their words
//! (the calibration live ranking uses), to be embedded later by the
//! indexer. So a deep search right after a busy query costs one term's
//! embedding, not the embedding of everything that query left queued.
//!
//! Each chunk (the same text from the same tool: [`super::Chunk`]) is one
//! result, however many archived queries found it: its newest entry within
//! the date window, so the newest query's id, text and time, with the best
//! similarity of its entries there. The index answers with distinct chunks
//! already, each at its newest entry in the window, queued ones included
//! (it knows every entry's time and chunk, vector or not; see `index.rs`),
//! and `max_results` of them when that many exist; the queued entries
//! scanned here are merged in by chunk. Those add chunks, never take any
//! away, so `max_results` distinct chunks remain. `total_matches` is the
//! number of distinct chunks in the window, from the index.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use super::{Archive, DeepSearchOutcome, Entry, Hit, Slot, within};
use crate::rank::embed::cosine;
use crate::rank::vector_index::{best_first, one_per_chunk};
use crate::rank::{Bm25, Priority, fuse, tokenize};

/// A deep search scans at most this many queued entries itself; a user
/// with a larger backlog (a long outage of the model) waits for the
/// indexer, rather than miss what they archived.
pub const QUEUED_SCAN_LIMIT: usize = 1024;
/// How long the model works on queued entries once the term's vector is
/// there.
const QUEUED_EMBED_BUDGET: Duration = Duration::from_millis(40);
/// The job key of the search term (queued entries use their position).
const TERM: usize = usize::MAX;

impl Archive {
    /// The archived chunks of `user_id` most similar to `term`, within
    /// `[from_ms, to_ms]` (inclusive) on `queried_at`.
    pub async fn search(
        &self,
        user_id: &str,
        term: &str,
        from_ms: Option<i64>,
        to_ms: Option<i64>,
        max_results: usize,
    ) -> Result<DeepSearchOutcome> {
        let slot = self.slot(user_id);
        self.load(user_id, &slot).await?;
        let mut queued = self.pending_batch(user_id, QUEUED_SCAN_LIMIT + 1)?;
        // An entry an indexer (this replica's or another's) took off the
        // queue between the load and the read of the queue is in neither:
        // the head moved, so catching up again adds it (and one indexed
        // after the read is in both, which the hits below merge).
        self.load(user_id, &slot).await?;
        if queued.len() > QUEUED_SCAN_LIMIT {
            let _indexing = slot.indexing.lock().await;
            self.index_pending(user_id, &slot).await?;
            queued.clear();
        }
        queued.retain(|(_, entry)| within(entry.queried_at_ms, from_ms, to_ms));
        let (vector, queued_vectors) = self.embed_term_and_queued(user_id, term, &queued).await?;
        let (indexed, total_matches) = {
            let guard = slot.index.lock().expect("index lock");
            let index = guard.as_ref().context("the index was unloaded")?;
            let window = index.window(from_ms, to_ms);
            let distinct = index.distinct_within(window.clone());
            (index.search(&vector, window, max_results)?, distinct)
        };
        let by_words = keyword_similarities(term, &queued);
        let mut hits = indexed;
        let mut embedded = Vec::new();
        for (((seq, mut entry), found), words) in
            queued.into_iter().zip(queued_vectors).zip(by_words)
        {
            // On the index's scale: cosine clamped to [0, 1] (the API's range).
            let similarity = match &found {
                Some(found) => cosine(&vector, found),
                None => words,
            }
            .clamp(0.0, 1.0);
            hits.push(Hit {
                seq,
                chunk: entry.chunk(),
                similarity,
            });
            if let Some(found) = found {
                entry.vector = Some((self.embedder_name().to_string(), found));
                embedded.push((seq, entry));
            }
        }
        // A queued entry may repeat a chunk the index found (or another
        // queued entry), or be one the indexer took meanwhile: one hit per
        // chunk, its best similarity at its newest entry.
        let mut hits = one_per_chunk(hits);
        best_first(&mut hits);
        hits.truncate(max_results);
        self.keep_embedded(user_id, &slot, &embedded);
        Ok(DeepSearchOutcome {
            found: self.open_hits(user_id, &hits)?,
            total_matches,
        })
    }

    /// The term's vector, and the vectors of the queued entries the model
    /// reached within the budget after it.
    async fn embed_term_and_queued(
        &self,
        user_id: &str,
        term: &str,
        queued: &[(u64, Entry)],
    ) -> Result<(Vec<f32>, Vec<Option<Vec<f32>>>)> {
        // The archive's index is built by the primary embedder: no fallback.
        let mut job = self.embedder.job(user_id, Priority::Live, false);
        job.submit(TERM, term, 0);
        for (key, (_, entry)) in queued.iter().enumerate() {
            job.submit(key, &entry.content, 1);
        }
        job.wait_for(TERM).await;
        if let Some(error) = job.failure() {
            return Err(anyhow!("embedding the search term: {error}"));
        }
        let vector = job
            .take_vector(TERM)
            .context("the embedding scheduler lost the search term")?;
        if !queued.is_empty() {
            job.wait(Some(Instant::now() + QUEUED_EMBED_BUDGET)).await;
        }
        let found = (0..queued.len()).map(|key| job.take_vector(key)).collect();
        Ok((vector, found))
    }

    /// Stores the vectors a deep search computed, so the indexer need not
    /// embed those entries again. Best effort: the entries stay queued if
    /// this fails.
    fn keep_embedded(&self, user_id: &str, slot: &Slot, embedded: &[(u64, Entry)]) {
        if embedded.is_empty() {
            return;
        }
        if let Err(error) = self.index_embedded(user_id, slot, embedded) {
            tracing::warn!(
                error = format!("{error:#}"),
                "storing vectors of a deep search"
            );
        }
    }
}

/// Where each queued entry sits on the model's cosine scale by its words:
/// the model relevance entries with its keyword relevance have on average.
fn keyword_similarities(term: &str, queued: &[(u64, Entry)]) -> Vec<f32> {
    if queued.is_empty() {
        return Vec::new();
    }
    let bm25 = Bm25::new(queued.iter().map(|(_, entry)| entry.content.as_str()));
    let terms = tokenize(term);
    (0..queued.len())
        .map(|i| {
            let lexical = bm25.relevance(bm25.score(&terms, &[], i), &terms);
            fuse::cosine_of_relevance(fuse::keyword_on_model_scale(lexical))
        })
        .collect()
}
