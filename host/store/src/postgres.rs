//! The shared backend: PostgreSQL, for replicas that share one database.
//!
//! Every space is rows of one table, `quarry_records (space, key, value)`,
//! read in `key` order (`bytea` compares bytewise, as redb's byte keys do).
//!
//! Transactions keep the embedded backend's semantics, which every
//! invariant of the host was written against:
//! - a [`RawRead`] sees one snapshot (`REPEATABLE READ, READ ONLY`);
//! - writers are serialised across every replica by one transaction-scoped
//!   advisory lock, as redb serialises its writers, so a read-check-write
//!   inside one `Writer` (a token check, an idempotency claim, a job's
//!   lease, "does this user still have a data key") cannot interleave with
//!   another replica's. Write transactions are short (no network call is
//!   made inside one), so the lock is held for a few round trips;
//! - a writer's puts are held until something must see them in the
//!   database (a scan, the commit) and then sent as one statement, so that
//!   archiving a query's fifty chunks costs one round trip under the lock,
//!   not fifty. A `get` answers from them first, as redb's writer sees its
//!   own writes.
//!
//! The records interface is synchronous; this backend drives tokio-postgres
//! on a small runtime of its own and waits for it ([`Engine::wait`]), so it
//! can be called from async handlers, blocking threads and tests alike.

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::Bound;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Timeouts};
use tokio::runtime::{Handle, Runtime, RuntimeFlavor};
use tokio_postgres::NoTls;
use tokio_postgres::types::ToSql;

use super::Unavailable;
use super::migrations;
use super::records::{Backend, Flow, Keep, RawRange, RawRead, RawWrite, Visitor};

/// The advisory lock every write transaction holds until it ends.
const WRITER_LOCK: i64 = 0x7175_6172_7279_0001; // "quarry", 1

/// Rows fetched per round trip of a scan.
const SCAN_BATCH: i64 = 512;

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct PostgresConfig {
    pub url: String,
    pub pool_size: usize,
}

pub struct Postgres {
    engine: Arc<Engine>,
}

impl Postgres {
    /// Connects, and brings the schema up to date (under an advisory lock,
    /// so that replicas starting together do not race).
    pub fn open(config: &PostgresConfig) -> Result<Postgres> {
        let engine = Arc::new(Engine::start(config)?);
        engine.wait(async {
            let mut client = engine.client().await?;
            migrations::run(&mut client).await
        })?;
        Ok(Postgres { engine })
    }
}

impl Backend for Postgres {
    fn read(&self) -> Result<Box<dyn RawRead>> {
        // The snapshot is taken at the first statement, not at BEGIN: the
        // `SELECT 1` takes it now, as redb's `begin_read` does.
        Ok(Box::new(Txn::begin(
            &self.engine,
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1",
        )?))
    }

    fn write(&self) -> Result<Box<dyn RawWrite>> {
        let begin = format!("BEGIN; SELECT pg_advisory_xact_lock({WRITER_LOCK})");
        Ok(Box::new(Txn::begin(&self.engine, &begin)?))
    }

    fn spaces(&self) -> Result<Vec<String>> {
        self.engine.wait(async {
            let client = self.engine.client().await?;
            let rows = client
                .query(
                    "SELECT DISTINCT space FROM quarry_records ORDER BY space",
                    &[],
                )
                .await
                .map_err(unavailable)?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn exclusive(&self) -> bool {
        false
    }
}

/// A connection pool, and the runtime that drives its connections.
struct Engine {
    runtime: Option<Runtime>,
    pool: Pool,
}

impl Engine {
    fn start(config: &PostgresConfig) -> Result<Engine> {
        let connection = super::postgres_tls::Connection::from_url(&config.url)?;
        if connection.exposed() {
            tracing::warn!(
                sslmode = ?connection.mode,
                "PostgreSQL is on another machine and its certificate is not checked: add \
                 sslmode=verify-full (and sslrootcert=CA.pem) to [storage] postgres_url"
            );
        }
        let recycling = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match connection.tls {
            Some(tls) => Manager::from_config(connection.config, tls, recycling),
            None => Manager::from_config(connection.config, NoTls, recycling),
        };
        let timeout = Some(Duration::from_secs(5));
        let pool = Pool::builder(manager)
            .max_size(config.pool_size.max(1))
            .timeouts(Timeouts {
                wait: timeout,
                create: timeout,
                recycle: timeout,
            })
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .context("building the PostgreSQL pool")?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("quarry-postgres")
            .enable_all()
            .build()?;
        Ok(Engine {
            runtime: Some(runtime),
            pool,
        })
    }

    async fn client(&self) -> Result<Object> {
        self.pool.get().await.map_err(|error| {
            anyhow::Error::new(Unavailable(format!("PostgreSQL: {}", with_causes(&error))))
        })
    }

    /// Runs `work` to its end on the backend's runtime, from wherever the
    /// caller is: a plain thread blocks; a worker of a multi-threaded
    /// runtime hands its other tasks to another thread while it waits
    /// (`block_in_place`); a single-threaded runtime (some tests) waits on
    /// a scoped thread, since it cannot block in place.
    fn wait<F>(&self, work: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let runtime = self.runtime.as_ref().expect("the engine is running");
        match Handle::try_current().map(|h| h.runtime_flavor()) {
            Err(_) => runtime.block_on(work),
            Ok(RuntimeFlavor::MultiThread) => {
                tokio::task::block_in_place(|| runtime.block_on(work))
            }
            Ok(_) => std::thread::scope(|scope| {
                scope
                    .spawn(|| runtime.block_on(work))
                    .join()
                    .expect("a PostgreSQL call panicked")
            }),
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which async code must not do.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// An error that means the database could not be reached or is going away
/// (not that a statement was wrong): requests answer 503 and may be
/// retried.
fn unavailable(error: tokio_postgres::Error) -> anyhow::Error {
    let away = match error.code() {
        None => true,
        Some(code) => {
            let code = code.code();
            // 08: connection exceptions; 57P01..57P03: shutting down or
            // starting; 53: out of resources (connections, memory, disk).
            code.starts_with("08") || code.starts_with("57P") || code.starts_with("53")
        }
    };
    if error.is_closed() || away {
        anyhow::Error::new(Unavailable(format!("PostgreSQL: {}", with_causes(&error))))
    } else {
        anyhow::Error::new(error)
    }
}

/// An error and what caused it, down the chain: tokio-postgres says "db
/// error" and keeps the server's words (a refusal by pg_hba.conf, a
/// certificate that does not check) in its source.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

/// A writer's puts not sent yet: (space, key) → value.
type Unsent = BTreeMap<(String, Vec<u8>), Vec<u8>>;

/// One transaction on one pooled connection. Ended by `commit`, or rolled
/// back when dropped.
struct Txn {
    engine: Arc<Engine>,
    client: Option<Object>,
    /// Puts not sent yet; the last put of a key wins.
    unsent: Mutex<Unsent>,
}

impl Txn {
    fn begin(engine: &Arc<Engine>, begin: &str) -> Result<Txn> {
        let client = engine.wait(async {
            let client = engine.client().await?;
            client.batch_execute(begin).await.map_err(unavailable)?;
            anyhow::Ok(client)
        })?;
        Ok(Txn {
            engine: engine.clone(),
            client: Some(client),
            unsent: Mutex::default(),
        })
    }

    /// Sends the held puts, all in one statement.
    fn send_puts(&self) -> Result<()> {
        let unsent = std::mem::take(&mut *self.unsent.lock().expect("unsent puts"));
        if unsent.is_empty() {
            return Ok(());
        }
        let mut spaces = Vec::with_capacity(unsent.len());
        let mut keys = Vec::with_capacity(unsent.len());
        let mut values = Vec::with_capacity(unsent.len());
        for ((space, key), value) in unsent {
            spaces.push(space);
            keys.push(key);
            values.push(value);
        }
        self.query(
            "INSERT INTO quarry_records (space, key, value) \
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[]) \
             ON CONFLICT (space, key) DO UPDATE SET value = EXCLUDED.value",
            &[&spaces, &keys, &values],
        )?;
        Ok(())
    }

    fn unsent_value(&self, space: &str, key: &[u8]) -> Option<Vec<u8>> {
        let unsent = self.unsent.lock().expect("unsent puts");
        unsent.get(&(space.to_string(), key.to_vec())).cloned()
    }

    fn client(&self) -> &Object {
        self.client.as_ref().expect("an open transaction")
    }

    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<tokio_postgres::Row>> {
        let client = self.client();
        self.engine.wait(async {
            let statement = client.prepare_cached(sql).await.map_err(unavailable)?;
            client.query(&statement, params).await.map_err(unavailable)
        })
    }

    /// Up to [`SCAN_BATCH`] rows of `space` within the bounds, in key order.
    fn batch(
        &self,
        space: &str,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut sql = String::from("SELECT key, value FROM quarry_records WHERE space = $1");
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&space];
        let (lower_key, upper_key);
        match lower {
            Bound::Included(key) | Bound::Excluded(key) => {
                lower_key = key;
                params.push(&lower_key);
                let op = if matches!(lower, Bound::Included(_)) {
                    ">="
                } else {
                    ">"
                };
                sql.push_str(&format!(" AND key {op} ${}", params.len()));
            }
            Bound::Unbounded => {}
        }
        match upper {
            Bound::Included(key) | Bound::Excluded(key) => {
                upper_key = key;
                params.push(&upper_key);
                let op = if matches!(upper, Bound::Included(_)) {
                    "<="
                } else {
                    "<"
                };
                sql.push_str(&format!(" AND key {op} ${}", params.len()));
            }
            Bound::Unbounded => {}
        }
        sql.push_str(&format!(" ORDER BY key LIMIT {SCAN_BATCH}"));
        let rows = self.query(&sql, &params)?;
        Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
    }

    /// Visits every row in `range`, a batch at a time.
    fn each_row(
        &self,
        space: &str,
        (lower, upper): RawRange<'_>,
        visit: &mut Visitor<'_>,
    ) -> Result<()> {
        let mut after: Option<Vec<u8>> = None;
        loop {
            let from = match &after {
                Some(last) => Bound::Excluded(last.as_slice()),
                None => lower,
            };
            let rows = self.batch(space, from, upper)?;
            let full = rows.len() as i64 == SCAN_BATCH;
            for (key, value) in &rows {
                if visit(key, value)? == Flow::Stop {
                    return Ok(());
                }
            }
            match rows.into_iter().last() {
                Some((key, _)) if full => after = Some(key),
                _ => return Ok(()),
            }
        }
    }
}

impl RawRead for Txn {
    fn get(&self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(value) = self.unsent_value(space, key) {
            return Ok(Some(value));
        }
        let rows = self.query(
            "SELECT value FROM quarry_records WHERE space = $1 AND key = $2",
            &[&space, &key],
        )?;
        Ok(rows.first().map(|row| row.get(0)))
    }

    fn scan(&self, space: &str, range: RawRange<'_>, visit: &mut Visitor<'_>) -> Result<()> {
        self.send_puts()?;
        self.each_row(space, range, visit)
    }
}

impl RawWrite for Txn {
    fn put(&mut self, space: &str, key: &[u8], value: &[u8]) -> Result<()> {
        let unsent = self.unsent.get_mut().expect("unsent puts");
        unsent.insert((space.to_string(), key.to_vec()), value.to_vec());
        Ok(())
    }

    fn remove(&mut self, space: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let unsent = self.unsent.get_mut().expect("unsent puts");
        let held = unsent.remove(&(space.to_string(), key.to_vec()));
        let rows = self.query(
            "DELETE FROM quarry_records WHERE space = $1 AND key = $2 RETURNING value",
            &[&space, &key],
        )?;
        Ok(held.or_else(|| rows.first().map(|row| row.get(0))))
    }

    fn retain(&mut self, space: &str, range: RawRange<'_>, keep: &mut Keep<'_>) -> Result<u64> {
        self.send_puts()?;
        let mut refused: Vec<Vec<u8>> = Vec::new();
        self.each_row(space, range, &mut |key, value| {
            if !keep(key, value) {
                refused.push(key.to_vec());
            }
            Ok(Flow::Continue)
        })?;
        for chunk in refused.chunks(1000) {
            self.query(
                "DELETE FROM quarry_records WHERE space = $1 AND key = ANY($2)",
                &[&space, &chunk],
            )?;
        }
        Ok(refused.len() as u64)
    }

    fn commit(mut self: Box<Self>) -> Result<()> {
        self.send_puts()?;
        let client = self.client.take().expect("an open transaction");
        self.engine
            .wait(async { client.batch_execute("COMMIT").await.map_err(unavailable) })
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        // Not committed: roll back on the backend's runtime without making
        // the caller wait; the connection returns to the pool after it.
        if let Some(client) = self.client.take()
            && let Some(runtime) = &self.engine.runtime
        {
            runtime.spawn(async move {
                if client.batch_execute("ROLLBACK").await.is_err() {
                    // A connection in an unknown state never goes back.
                    drop(Object::take(client));
                }
            });
        }
    }
}
