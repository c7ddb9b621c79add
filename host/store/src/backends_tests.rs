//! One contract, both backends: what every module relies on from
//! `records` holds on the embedded redb and on PostgreSQL alike. The
//! PostgreSQL tests make a database of their own in the server named by
//! `QUARRY_TEST_POSTGRES_URL` (default: the usual local one, as
//! `tools/test` ensures) and drop it after.

use std::sync::Arc;

use super::records::{Bytes, Flow, Records, Space, Text, TextSeq, user_seqs};
use super::*;

const NOTES: Space<Text, Bytes> = Space::unregistered("test_notes");
const SEQS: Space<TextSeq, Bytes> = Space::unregistered("test_seqs");

/// Every behaviour of transactions the host depends on.
fn records_contract(store: &Store) {
    // Writes commit together; a dropped writer leaves nothing.
    let mut txn = store.write().unwrap();
    txn.put(&NOTES, "a", b"1").unwrap();
    txn.put(&NOTES, "b", b"2").unwrap();
    drop(txn);
    assert!(store.read().unwrap().get(&NOTES, "a").unwrap().is_none());
    let mut txn = store.write().unwrap();
    for (key, value) in [("a", "1"), ("ab", "2"), ("b", "3"), ("c", "4")] {
        txn.put(&NOTES, key, value.as_bytes()).unwrap();
    }
    // A writer reads its own writes, by key and in scans.
    assert_eq!(txn.get(&NOTES, "ab").unwrap().unwrap(), b"2");
    assert_eq!(txn.count_in(&NOTES, ..).unwrap(), 4);
    txn.commit().unwrap();

    // The last of several writes to a key wins; a write then a removal in
    // one writer removes; a removal returns what the writer last wrote.
    let mut txn = store.write().unwrap();
    txn.put(&NOTES, "e", b"first").unwrap();
    txn.put(&NOTES, "e", b"second").unwrap();
    txn.put(&NOTES, "f", b"gone").unwrap();
    assert_eq!(txn.remove(&NOTES, "f").unwrap().unwrap(), b"gone");
    txn.put(&NOTES, "c", b"4 again").unwrap();
    assert_eq!(txn.remove(&NOTES, "c").unwrap().unwrap(), b"4 again");
    txn.put(&NOTES, "c", b"4").unwrap();
    txn.commit().unwrap();
    let reader = store.read().unwrap();
    assert_eq!(reader.get(&NOTES, "e").unwrap().unwrap(), b"second");
    assert!(reader.get(&NOTES, "f").unwrap().is_none());
    assert_eq!(reader.get(&NOTES, "c").unwrap().unwrap(), b"4");
    drop(reader);
    let mut txn = store.write().unwrap();
    txn.remove(&NOTES, "e").unwrap();
    txn.commit().unwrap();

    // A reader is a snapshot: a later commit does not show in it.
    let snapshot = store.read().unwrap();
    let mut txn = store.write().unwrap();
    txn.put(&NOTES, "d", b"5").unwrap();
    assert_eq!(txn.remove(&NOTES, "a").unwrap().unwrap(), b"1");
    txn.commit().unwrap();
    assert!(snapshot.get(&NOTES, "d").unwrap().is_none());
    assert!(snapshot.get(&NOTES, "a").unwrap().is_some());
    drop(snapshot);

    let reader = store.read().unwrap();
    let keys: Vec<String> = reader
        .all_in(&NOTES, ..)
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["ab", "b", "c", "d"], "key order");
    assert_eq!(reader.with_prefix(&NOTES, "a").unwrap().len(), 1);
    assert_eq!(
        reader.count_in(&NOTES, "b".."d").unwrap(),
        2,
        "half-open range"
    );
    assert_eq!(reader.first_in(&NOTES, "bb"..).unwrap().unwrap().0, "c");
    let mut visited = 0;
    reader
        .each(&NOTES, .., |_, _| {
            visited += 1;
            Ok(if visited == 2 {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })
        .unwrap();
    assert_eq!(visited, 2, "a visitor stops a scan");
    assert!(
        reader.get(&SEQS, ("u", 1)).unwrap().is_none(),
        "an unused space is empty"
    );
    drop(reader);

    // Composite keys, scans past one batch, retain and range removal.
    let mut txn = store.write().unwrap();
    for n in 0..1500u64 {
        txn.put(&SEQS, ("u", n), &n.to_be_bytes()).unwrap();
    }
    txn.put(&SEQS, ("v", 0), b"other user").unwrap();
    txn.commit().unwrap();
    let reader = store.read().unwrap();
    let all = reader.all_in(&SEQS, user_seqs("u")).unwrap();
    assert_eq!(all.len(), 1500);
    assert!(all.windows(2).all(|w| w[0].0.1 < w[1].0.1), "numeric order");
    drop(reader);
    let mut txn = store.write().unwrap();
    let removed = txn
        .retain(&SEQS, user_seqs("u"), |(_, n), _| n % 2 == 0)
        .unwrap();
    assert_eq!(removed, 750);
    assert_eq!(txn.remove_in(&SEQS, user_seqs("u")).unwrap(), 750);
    assert_eq!(txn.remove_keyed_by_user(SEQS.name(), "v").unwrap(), 1);
    assert_eq!(txn.remove_prefix(&NOTES, "a").unwrap(), 1);
    txn.commit().unwrap();
    assert_eq!(store.read().unwrap().count_in(&SEQS, ..).unwrap(), 0);
    let spaces = store.spaces().unwrap();
    assert!(spaces.iter().any(|s| s == NOTES.name()), "{spaces:?}");
}

/// Writers are serialised: concurrent read-increment-write transactions
/// lose no increment (what claims and leases rely on).
fn writers_are_serialised(store: Arc<Store>) {
    const COUNTER: Space<Text, super::records::Count> = Space::unregistered("test_counter");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let store = store.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    let mut txn = store.write().unwrap();
                    let n = txn.get(&COUNTER, "n").unwrap().unwrap_or(0);
                    txn.put(&COUNTER, "n", n + 1).unwrap();
                    txn.commit().unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(store.read().unwrap().get(&COUNTER, "n").unwrap(), Some(100));
}

#[test]
fn the_embedded_backend_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), None).unwrap());
    records_contract(&store);
    writers_are_serialised(store);
}

#[test]
fn postgres_keeps_the_contract() {
    let database = TestDatabase::create();
    let store = Arc::new(Store::open_shared(&database.config(), TEST_MASTER_KEY).unwrap());
    records_contract(&store);
    writers_are_serialised(store.clone());
    // Opening again finds the schema current.
    drop(store);
    Store::open_shared(&database.config(), TEST_MASTER_KEY).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_serves_async_callers_and_users() {
    let database = TestDatabase::create();
    let store = Store::open_shared(&database.config(), TEST_MASTER_KEY).unwrap();
    let user = store.create_user("a@b.c").unwrap();
    let (token, _) = store.issue_token(&user.id, 60, Audience::V1).unwrap();
    assert!(matches!(
        store.check_token(token.expose(), Audience::V1).unwrap(),
        TokenCheck::Valid { .. }
    ));
}

#[tokio::test(flavor = "current_thread")]
async fn postgres_serves_a_single_threaded_runtime() {
    let database = TestDatabase::create();
    let store = Store::open_shared(&database.config(), TEST_MASTER_KEY).unwrap();
    assert!(store.user_by_email("nobody@b.c").unwrap().is_none());
}

#[test]
fn an_unreachable_database_is_unavailable_not_a_bug() {
    let config = PostgresConfig {
        // Nothing listens on port 1.
        url: "postgres://postgres@127.0.0.1:1/nothing".into(),
        pool_size: 1,
    };
    let error = Store::open_shared(&config, TEST_MASTER_KEY)
        .err()
        .expect("no database");
    assert!(
        error.chain().any(|cause| cause.is::<Unavailable>()),
        "{error:#}"
    );
}

const TEST_MASTER_KEY: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

/// A database of the test's own, dropped after.
struct TestDatabase {
    server: String,
    name: String,
}

impl TestDatabase {
    fn create() -> TestDatabase {
        let server = std::env::var("QUARRY_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        let name = format!("quarry_unit_{}", random_hex(6));
        psql(&server, &format!("CREATE DATABASE {name}"));
        TestDatabase { server, name }
    }

    fn config(&self) -> PostgresConfig {
        let root = self
            .server
            .rsplit_once('/')
            .map_or(self.server.as_str(), |(root, _)| root);
        PostgresConfig {
            url: format!("{root}/{}", self.name),
            pool_size: 4,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let _ = std::process::Command::new("psql")
            .args([
                &self.server,
                "-Atqc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ])
            .output();
    }
}

fn psql(url: &str, statement: &str) {
    let out = std::process::Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-Atqc", statement])
        .output()
        .expect("psql (tools/engines installs PostgreSQL)");
    assert!(
        out.status.success(),
        "{statement} on {url}: {} (run tools/test, which starts PostgreSQL, or set QUARRY_TEST_POSTGRES_URL)",
        String::from_utf8_lossy(&out.stderr)
    );
}
