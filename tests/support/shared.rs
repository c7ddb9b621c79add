//! The shared backend for the scale-out tests: a database of the test's
//! own in the PostgreSQL the run uses, and a Redis key prefix of its own,
//! so that tests (and test runs) sharing one engine never meet. Dropping
//! it drops the database and the keys it made, and nothing else.
//!
//! The engines come from `QUARRY_TEST_POSTGRES_URL` and
//! `QUARRY_TEST_REDIS_URL` (`tools/engines` sets them, starting private
//! engines when the machine has none), else the usual local ports.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

static MADE: AtomicUsize = AtomicUsize::new(0);

/// The backend of each data folder a test restarts a demo on: a restart is
/// the same deployment, so it finds the same database and Redis keys.
/// Kept until the test process ends; the next run drops what a process
/// that has ended left (see [`drop_leftovers`]).
pub fn for_data_dir(dir: &Path) -> Arc<SharedBackend> {
    static BY_DIR: OnceLock<Mutex<HashMap<PathBuf, Arc<SharedBackend>>>> = OnceLock::new();
    BY_DIR
        .get_or_init(Mutex::default)
        .lock()
        .expect("backends by folder")
        .entry(dir.to_path_buf())
        .or_insert_with(|| Arc::new(SharedBackend::create()))
        .clone()
}

/// Whether `QUARRY_TEST_BACKEND=postgres` asks every demo to run on a
/// shared backend (the API suite runs once on redb and once like this).
pub fn requested() -> bool {
    std::env::var("QUARRY_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

#[derive(Debug)]
pub struct SharedBackend {
    /// The server the database was made in (its maintenance database).
    server_url: String,
    database: String,
    /// The test's database.
    pub postgres_url: String,
    pub redis_url: String,
    /// Every Redis key of the test starts with this.
    pub key_prefix: String,
}

impl SharedBackend {
    /// A database and a key prefix in the run's PostgreSQL and Redis.
    pub fn create() -> SharedBackend {
        let server_url = std::env::var("QUARRY_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        let redis_url = std::env::var("QUARRY_TEST_REDIS_URL")
            .unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
        SharedBackend::create_on(server_url, redis_url)
    }

    /// A database and a key prefix in these engines (a test's own).
    pub fn create_on(server_url: String, redis_url: String) -> SharedBackend {
        if MADE.load(Ordering::Relaxed) == 0 {
            drop_leftovers(&server_url);
        }
        let name = format!(
            "{PREFIX}{}_{}_{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed),
            rand_suffix()
        );
        psql(&server_url, &format!("CREATE DATABASE {name}"));
        SharedBackend {
            postgres_url: with_database(&server_url, &name),
            server_url,
            key_prefix: name.clone(),
            database: name,
            redis_url,
        }
    }

    /// The `quarry demo` arguments that put it on this backend.
    pub fn demo_args(&self) -> Vec<String> {
        vec![
            "--postgres".into(),
            self.postgres_url.clone(),
            "--redis".into(),
            self.redis_url.clone(),
        ]
    }

    /// The environment every replica on this backend shares.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "QUARRY_COORDINATION__KEY_PREFIX".into(),
                self.key_prefix.clone(),
            ),
            // The same key on every replica (one made for this test).
            ("QUARRY_MASTER_KEY".into(), master_key_for(&self.database)),
        ]
    }

    /// Runs SQL in the test's database; its output, one row per line.
    pub fn sql(&self, statement: &str) -> String {
        psql(&self.postgres_url, statement)
    }

    /// The test's database as a store, the way its servers open it.
    pub fn open_store(&self) -> quarry_store::Store {
        let config = quarry_store::PostgresConfig {
            url: self.postgres_url.clone(),
            pool_size: 2,
        };
        quarry_store::Store::open_shared(&config, &master_key_for(&self.database))
            .expect("the test's database opens")
    }

    /// Everything the database holds, as `pg_dump` writes it.
    pub fn dump(&self) -> String {
        let out = Command::new("pg_dump")
            .args(["--data-only", "--inserts", &self.postgres_url])
            .output()
            .expect("pg_dump runs");
        assert!(
            out.status.success(),
            "pg_dump: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for SharedBackend {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args([
                &self.server_url,
                "-Atqc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.database),
            ])
            .output();
        let (host, port) = redis_address(&self.redis_url);
        let _ = Command::new("redis-cli")
            .args(["-h", &host, "-p", &port, "--scan", "--pattern"])
            .arg(format!("{}:*", self.key_prefix))
            .output()
            .map(|out| {
                let keys: Vec<String> = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect();
                if !keys.is_empty() {
                    let _ = Command::new("redis-cli")
                        .args(["-h", &host, "-p", &port, "DEL"])
                        .args(&keys)
                        .output();
                }
            });
    }
}

/// The store of a demo's data folder, opened the way its server did: the
/// redb file, or the test's database when the demos run on PostgreSQL.
pub fn open_store(dir: &Path) -> quarry_store::Store {
    if requested() {
        for_data_dir(dir).open_store()
    } else {
        quarry_store::Store::open(dir, None).expect("the data folder's store opens")
    }
}

/// Whether the records outside the data folder (the test's database, when
/// the demos run on PostgreSQL) hold `needle`, as text or as bytes.
pub fn database_holds(dir: &Path, needle: &[u8]) -> bool {
    if !requested() {
        return false;
    }
    let dump = for_data_dir(dir).dump();
    let hex: String = needle.iter().map(|b| format!("{b:02x}")).collect();
    dump.contains(&hex) || dump.contains(&*String::from_utf8_lossy(needle))
}

/// Every test database is named `quarry_test_<pid>_...`.
const PREFIX: &str = "quarry_test_";

/// Drops the test databases whose test process has ended (ones kept for a
/// restart, or left by a run that was killed): only databases this code
/// made, by their name.
fn drop_leftovers(server_url: &str) {
    let names = psql(
        server_url,
        &format!("SELECT datname FROM pg_database WHERE datname LIKE '{PREFIX}%'"),
    );
    for name in names.lines() {
        let pid = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('_').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        let ended = pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
        if ended {
            let _ = Command::new("psql")
                .args([
                    server_url,
                    "-Atqc",
                    &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                ])
                .output();
        }
    }
}

fn psql(url: &str, statement: &str) -> String {
    let out = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-Atqc", statement])
        .output()
        .expect("psql runs (tools/engines installs it)");
    assert!(
        out.status.success(),
        "psql {statement:?} on {url}: {}\n(is PostgreSQL running? tools/test starts one)",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `url` with its database replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let root = match base[after_scheme..].find('/') {
        Some(slash) => &base[..after_scheme + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{root}/{database}?{query}"),
        None => format!("{root}/{database}"),
    }
}

fn redis_address(url: &str) -> (String, String) {
    let rest = url.trim_start_matches("redis://");
    let hostport = rest.split('/').next().unwrap_or(rest);
    let hostport = hostport.rsplit('@').next().unwrap_or(hostport);
    match hostport.rsplit_once(':') {
        Some((host, port)) => (host.to_string(), port.to_string()),
        None => (hostport.to_string(), "6379".to_string()),
    }
}

fn rand_suffix() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{nanos:08x}")
}

/// A 32-byte key, base64, derived from the database's name (test data).
fn master_key_for(database: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(database.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_replaces_the_path_only() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/test", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://u:p@h:1/db?sslmode=disable", "x"),
            "postgres://u:p@h:1/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h:1", "x"), "postgres://h:1/x");
        assert_eq!(redis_address("redis://127.0.0.1:6380/2").1, "6380");
    }
}
