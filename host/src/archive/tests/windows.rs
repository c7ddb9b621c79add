//! Deep search's date windows, stored indexes, concurrent archiving,
//! deletion and the memory budget.

use super::*;

/// When each of the user's queries ran, by query id.
fn queried_at(archive: &Archive, user_id: &str, query_id: &str) -> i64 {
    let history = archive.history(user_id).unwrap();
    let record = history.iter().find(|r| r.query_id == query_id).unwrap();
    record.queried_at_ms
}

/// (connector, query id) of each result, best first.
fn found(outcome: &DeepSearchOutcome) -> Vec<(&str, &str)> {
    outcome
        .found
        .iter()
        .map(|f| (f.entry.connector.as_str(), f.entry.query_id.as_str()))
        .collect()
}

/// Records `query_id`'s answer a few milliseconds after the previous one,
/// so that every query has a `queried_at` of its own.
async fn answer(archive: &Archive, user_id: &str, query_id: &str, chunks: &[ArchivedChunk<'_>]) {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    archive
        .record(user_id, query_id, "why did checkout freeze", chunks)
        .unwrap();
}

/// The same question asked again and again archives the same chunks each
/// time: a deep search returns each chunk once, as its newest entry within
/// the date window, whether that entry is indexed or still queued.
#[tokio::test]
async fn each_chunk_is_found_once_at_its_newest_entry_within_the_window() {
    let (_dir, store, user) = store_with_a_user();
    let first = archive(store.clone());
    let chunk = ArchivedChunk::text_only;
    let deploy = "the friday deploy froze checkout";
    // The same text from two tools is two chunks.
    let answered = [
        chunk("slack", deploy),
        chunk("github", deploy),
        chunk("notion", "lunch menu for friday"),
    ];
    // Asked three times: twice indexed, the third still queued.
    for query_id in ["qry_1", "qry_2", "qry_3"] {
        answer(&first, &user.id, query_id, &answered).await;
        if query_id != "qry_3" {
            first.index_now(&user.id).await.unwrap();
        }
    }
    assert_eq!(first.pending_batch(&user.id, 10).unwrap().len(), 3);
    let [t1, t2, t3] = ["qry_1", "qry_2", "qry_3"].map(|q| queried_at(&first, &user.id, q));
    assert!(t1 < t2 && t2 < t3);

    let outcome = first.search(&user.id, deploy, None, None, 5).await.unwrap();
    assert_eq!(outcome.total_matches, 3, "distinct chunks, not 9 entries");
    let mut results = found(&outcome);
    results[..2].sort();
    assert_eq!(
        results,
        [("github", "qry_3"), ("slack", "qry_3"), ("notion", "qry_3")]
    );
    assert_eq!(outcome.found[0].entry.content, deploy);
    assert!(outcome.found[0].similarity > outcome.found[2].similarity);
    // Two results are two chunks, not one chunk's two entries.
    let outcome = first.search(&user.id, deploy, None, None, 2).await.unwrap();
    let mut results = found(&outcome);
    results.sort();
    assert_eq!(results, [("github", "qry_3"), ("slack", "qry_3")]);

    // A window that ends before the newest answer: the newest within it.
    let outcome = first
        .search(&user.id, deploy, None, Some(t2), 5)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 3);
    assert!(
        found(&outcome).iter().all(|(_, q)| *q == "qry_2"),
        "{:?}",
        found(&outcome)
    );
    assert_eq!(outcome.found[0].entry.queried_at_ms, t2);
    let outcome = first
        .search(&user.id, deploy, Some(t1), Some(t1), 5)
        .await
        .unwrap();
    assert_eq!(outcome.found.len(), 3);
    assert!(found(&outcome).iter().all(|(_, q)| *q == "qry_1"));

    // A fourth answer repeats one chunk and brings a new one; it waits for
    // the indexer, and its repeat is the newest entry of that chunk.
    let postmortem = "checkout freeze postmortem: the deploy held a lock";
    answer(
        &first,
        &user.id,
        "qry_4",
        &[chunk("slack", deploy), chunk("jira", postmortem)],
    )
    .await;
    let t4 = queried_at(&first, &user.id, "qry_4");
    let outcome = first.search(&user.id, deploy, None, None, 5).await.unwrap();
    assert_eq!(outcome.total_matches, 4);
    let results = found(&outcome);
    assert_eq!(results.len(), 4);
    assert!(results.contains(&("slack", "qry_4")), "{results:?}");
    assert!(results.contains(&("github", "qry_3")), "{results:?}");
    assert!(results.contains(&("jira", "qry_4")), "{results:?}");
    // Without it: the window ends at the third answer.
    let outcome = first
        .search(&user.id, deploy, None, Some(t3), 5)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 3);
    assert!(found(&outcome).iter().all(|(_, q)| *q == "qry_3"));
    // Only it: one chunk of each.
    let outcome = first
        .search(&user.id, deploy, Some(t4), None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 2);
    assert_eq!(outcome.found.len(), 2);
    first.flush().unwrap();
    drop(first);

    // A new process: the stored index tells the chunks apart as well.
    let second = archive(store.clone());
    let outcome = second
        .search(&user.id, deploy, None, Some(t3), 5)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 3);
    assert!(found(&outcome).iter().all(|(_, q)| *q == "qry_3"));
    let outcome = second
        .search(&user.id, deploy, Some(t2), None, 50)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 4);
    assert_eq!(outcome.found.len(), 4);
}

/// Deep searches see each chunk once, even through an index stored before
/// chunks were kept: it is rebuilt from the entries.
#[tokio::test]
async fn an_index_stored_before_chunks_were_kept_is_rebuilt() {
    let (_dir, store, user) = store_with_a_user();
    let first = archive(store.clone());
    let repeated = [ArchivedChunk::text_only("jira", "database migration plan")];
    for query_id in ["qry_1", "qry_2"] {
        answer(&first, &user.id, query_id, &repeated).await;
    }
    first.index_now(&user.id).await.unwrap();
    // The stored index, as it was written before chunks were kept.
    let bytes = read_loaded_index(&first, &user.id, |index| index.serialize().unwrap());
    let header_len = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[4..4 + header_len]).unwrap();
    assert!(header.as_object_mut().unwrap().remove("chunks").is_some());
    let header = serde_json::to_vec(&header).unwrap();
    let mut old = (header.len() as u32).to_le_bytes().to_vec();
    old.extend_from_slice(&header);
    old.extend_from_slice(&bytes[4 + header_len..]);
    let key = store.data_key(&user.id).unwrap();
    let mut txn = store.write().unwrap();
    let head = entries::read_head(&txn, &user.id).unwrap();
    assert_eq!(head.index_segments, 1);
    let record_id = stored::segment_record_id(head.index_generation, 0);
    txn.put(
        &entries::INDEX_SEGMENTS,
        (user.id.as_str(), 0),
        &key.encrypt(&user.id, &record_id, &old),
    )
    .unwrap();
    txn.commit().unwrap();
    drop(first);

    let second = archive(store);
    let outcome = second
        .search(&user.id, "migration", None, None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.total_matches, 1);
    assert_eq!(found(&outcome), [("jira", "qry_2")]);
}

fn recording(user_id: &str, n: usize, chunks: usize) -> Recording {
    Recording {
        tools: Vec::new(),
        user_id: user_id.to_string(),
        query_id: format!("qry_{n}"),
        query: format!("question {n}"),
        chunks: (0..chunks)
            .map(|c| OwnedChunk {
                connector: "github".into(),
                content: format!("passage {c} of answer {n}"),
                vector: None,
                source: None,
            })
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queries_archived_at_once_share_commits_and_each_gets_its_own_entries() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), None).unwrap());
    let alice = store.create_user("alice@b.c").unwrap().id;
    let bob = store.create_user("bob@b.c").unwrap().id;
    let archive = Arc::new(archive(store.clone()));
    let tasks: Vec<_> = (0..40)
        .map(|n| {
            let archive = archive.clone();
            let user = if n % 2 == 0 {
                alice.clone()
            } else {
                bob.clone()
            };
            tokio::spawn(async move { archive.record_grouped(recording(&user, n, 3)).await })
        })
        .collect();
    let mut ranges: Vec<std::ops::Range<u64>> = Vec::new();
    for task in tasks {
        ranges.push(task.await.unwrap().unwrap());
    }
    // Each user's entries: 20 answers of 3 chunks, in ranges that do not
    // overlap and leave no gap.
    for (user, parity) in [(&alice, 0), (&bob, 1)] {
        let mut theirs: Vec<_> = ranges
            .iter()
            .enumerate()
            .filter(|(n, _)| n % 2 == parity)
            .map(|(_, r)| r.clone())
            .collect();
        theirs.sort_by_key(|r| r.start);
        let flat: Vec<u64> = theirs.into_iter().flatten().collect();
        assert_eq!(flat, (0..60).collect::<Vec<u64>>());
        assert_eq!(archive.history(user).unwrap().len(), 20);
        assert_eq!(archive.entry_count(user).unwrap(), 60);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_being_deleted_fails_only_their_own_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), None).unwrap());
    let alice = store.create_user("alice@b.c").unwrap().id;
    let archive = Arc::new(archive(store.clone()));
    let outcome = archive.record_grouped(recording("usr_gone", 1, 2)).await;
    assert!(outcome.is_err(), "nobody's archive");
    let kept = archive
        .record_grouped(recording(&alice, 2, 2))
        .await
        .unwrap();
    assert_eq!(kept, 0..2);
}

#[tokio::test]
async fn indexes_past_the_memory_budget_are_unloaded_and_load_again_when_searched() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), None).unwrap());
    let (ann, bob) = (
        store.create_user("ann@b.c").unwrap(),
        store.create_user("bob@b.c").unwrap(),
    );
    // Room for one small index, not two.
    let one_index = {
        let probe = archive(store.clone());
        probe.preload(&ann.id).await.unwrap();
        probe.index_memory_bytes(&ann.id).unwrap()
    };
    let archive = archive(store.clone()).with_index_budget(one_index + one_index / 2);
    for (user, text) in [
        (&ann, "ann's roadmap for march"),
        (&bob, "bob's invoice backlog"),
    ] {
        let chunk = ArchivedChunk::text_only("notion", text);
        archive.record(&user.id, "qry_1", text, &[chunk]).unwrap();
        archive.index_now(&user.id).await.unwrap();
    }
    assert!(archive.loaded_slot(&ann.id).is_none(), "ann's index went");
    assert!(
        archive.loaded_slot(&bob.id).is_some(),
        "bob's, in use, stayed"
    );
    assert_eq!(archive.memory_use().loaded_indexes, 1);

    let outcome = archive
        .search(&ann.id, "roadmap march", None, None, 5)
        .await
        .unwrap();
    assert_eq!(outcome.found[0].entry.content, "ann's roadmap for march");
    assert!(archive.loaded_slot(&ann.id).is_some(), "loaded again");
    assert!(archive.loaded_slot(&bob.id).is_none(), "bob's went in turn");
}
