//! The archive end to end on a real store.

use super::*;
use crate::rank::Embedder;
use crate::rank::embed::HashedWords;

mod windows;

fn archive(store: Arc<Store>) -> Archive {
    Archive::open(store, scheduler(Arc::new(HashedWords::new(64)))).unwrap()
}

fn scheduler(embedder: Arc<dyn Embedder>) -> Scheduler {
    Scheduler::start(embedder, None, 1, 16)
}

/// What `read` finds in the user's index, which is loaded and built.
fn read_loaded_index<R>(archive: &Archive, user_id: &str, read: impl FnOnce(&UserIndex) -> R) -> R {
    let slot = archive.loaded_slot(user_id).expect("the index is loaded");
    let index = slot.index.lock().unwrap();
    read(index.as_ref().expect("the index is built"))
}

/// A store in a folder of its own (kept while the `TempDir` lives) with
/// one user in it.
fn store_with_a_user() -> (tempfile::TempDir, Arc<Store>, quarry_store::User) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), None).unwrap());
    let user = store.create_user("a@b.c").unwrap();
    (dir, store, user)
}

#[tokio::test]
async fn recorded_chunks_are_found_after_a_restart_and_gone_after_removal() {
    let (_dir, store, user) = store_with_a_user();
    let first = archive(store.clone());
    let chunks = [
        ArchivedChunk::text_only("github", "checkout times out under load\n\"quoted\""),
        ArchivedChunk::text_only("slack", "lunch menu for friday"),
    ];
    assert_eq!(
        first
            .record(&user.id, "qry_1", "checkout", &chunks)
            .unwrap(),
        0..2
    );
    let outcome = first
        .search(&user.id, "checkout load", None, None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 2);
    assert_eq!(
        outcome.found[0].entry.content,
        "checkout times out under load\n\"quoted\""
    );
    assert_eq!(outcome.found[0].entry.query_id, "qry_1");
    first.flush().unwrap();
    first
        .record(
            &user.id,
            "qry_2",
            "menu",
            &[ArchivedChunk::text_only("notion", "friday menu: soup")],
        )
        .unwrap();
    drop(first);

    // A new process: the stored index plus the entry archived after it.
    let second = archive(store.clone());
    let outcome = second
        .search(&user.id, "friday menu", None, None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 3);
    assert_eq!(outcome.found[0].entry.query_id, "qry_2");
    assert_eq!(second.history(&user.id).unwrap().len(), 2);

    let mut txn = store.write().unwrap();
    let removed = quarry_store::remove_user(SPACES, &mut txn, &user.id).unwrap();
    txn.commit().unwrap();
    second.forget(&user.id);
    assert_eq!(removed[0], 3, "the entries");
    assert_eq!(removed[4], 2, "the history");
    assert_eq!(second.entry_count(&user.id).unwrap(), 0);
}

#[tokio::test]
async fn vectors_from_the_ranking_are_indexed_without_embedding_again() {
    let (_dir, store, user) = store_with_a_user();
    let archive = archive(store.clone());
    let model = HashedWords::new(64);
    let text = "quarterly revenue forecast";
    let vector = model.embed(&[text]).unwrap().remove(0);
    let name = archive.embedder_name().to_string();
    archive.preload(&user.id).await.unwrap();
    let chunks = [
        ArchivedChunk {
            connector: "notion",
            content: text,
            vector: Some((&name, &vector)),
            source: None,
        },
        // Another embedder's vector is not this archive's: queued.
        ArchivedChunk {
            connector: "slack",
            content: "standup notes",
            vector: Some(("another-model", &vector)),
            source: None,
        },
    ];
    archive
        .record(&user.id, "qry_1", "revenue", &chunks)
        .unwrap();
    let queued: Vec<u64> = archive
        .pending_batch(&user.id, 10)
        .unwrap()
        .into_iter()
        .map(|(seq, _)| seq)
        .collect();
    assert_eq!(queued, [1], "only the chunk without a usable vector waits");
    assert!(read_loaded_index(&archive, &user.id, |index| index.contains(0)));

    // The deep search scans the queued entry itself (no indexer runs
    // here) and stores its vector, so the indexer has nothing left.
    let outcome = archive
        .search(&user.id, "standup notes", None, None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.found[0].entry.content, "standup notes");
    assert_eq!(outcome.total_matches, 2);
    assert!(archive.pending_batch(&user.id, 10).unwrap().is_empty());
}

#[tokio::test]
async fn a_backlog_larger_than_the_exact_scan_is_indexed_before_searching() {
    let (_dir, store, user) = store_with_a_user();
    let archive = archive(store.clone());
    let texts: Vec<String> = (0..deep_search::QUEUED_SCAN_LIMIT + 10)
        .map(|n| format!("filler record number {n}"))
        .chain(["the rollout checklist for payments".to_string()])
        .collect();
    let chunks: Vec<ArchivedChunk<'_>> = texts
        .iter()
        .map(|t| ArchivedChunk::text_only("jira", t))
        .collect();
    archive.record(&user.id, "qry_1", "q", &chunks).unwrap();
    let outcome = archive
        .search(&user.id, "payments rollout checklist", None, None, 3)
        .await
        .unwrap();
    assert_eq!(
        outcome.found[0].entry.content,
        "the rollout checklist for payments"
    );
    assert_eq!(outcome.total_matches, texts.len() as u64);
}

#[tokio::test]
async fn an_index_made_by_another_embedder_is_rebuilt() {
    let (_dir, store, user) = store_with_a_user();
    let first = archive(store.clone());
    first
        .record(
            &user.id,
            "qry_1",
            "q",
            &[ArchivedChunk::text_only("jira", "database migration plan")],
        )
        .unwrap();
    first.index_now(&user.id).await.unwrap();
    drop(first);
    // Another embedder (another name, other dimensions) takes over.
    struct Renamed(HashedWords);
    impl Embedder for Renamed {
        fn name(&self) -> &str {
            "renamed"
        }
        fn dimensions(&self) -> usize {
            self.0.dimensions()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.0.embed(texts)
        }
    }
    let renamed = Archive::open(store, scheduler(Arc::new(Renamed(HashedWords::new(32))))).unwrap();
    let outcome = renamed
        .search(&user.id, "migration", None, None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.found.len(), 1, "re-embedded with the new embedder");
    assert!(outcome.found[0].similarity > 0.3);
}

/// An embedder whose vectors point one way or the opposite: "north" and
/// anything else have a cosine of -1.
struct Opposed;

impl Embedder for Opposed {
    fn name(&self) -> &str {
        "opposed"
    }
    fn dimensions(&self) -> usize {
        2
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|text| match text.contains("north") {
                true => vec![1.0, 0.0],
                false => vec![-1.0, 0.0],
            })
            .collect())
    }
}

#[tokio::test]
async fn similarities_stay_within_zero_and_one_indexed_or_queued() {
    let (_dir, store, user) = store_with_a_user();
    let archive = Archive::open(store, scheduler(Arc::new(Opposed))).unwrap();
    let chunk = |content| ArchivedChunk::text_only("slack", content);
    archive
        .record(&user.id, "qry_1", "q", &[chunk("south wind")])
        .unwrap();
    archive.index_now(&user.id).await.unwrap();
    // This one is still queued when the search compares it by meaning.
    archive
        .record(&user.id, "qry_2", "q", &[chunk("south pole")])
        .unwrap();
    let outcome = archive
        .search(&user.id, "north", None, None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.found.len(), 2);
    for found in &outcome.found {
        let similarity = found.similarity;
        assert!((0.0..=1.0).contains(&similarity), "{similarity}");
    }
}
