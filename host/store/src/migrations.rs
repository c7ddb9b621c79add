//! The PostgreSQL schema's versions, embedded in the binary and applied in
//! order at start (and by `quarry admin migrate`).
//!
//! A replica takes a session advisory lock before it looks, so replicas
//! starting together apply each version once; the others wait, then find
//! nothing left to do. A version is applied in one transaction with its
//! row in `quarry_schema_migrations`. Versions are never edited once
//! released: a change is a new file.

use anyhow::{Context, Result};
use tokio_postgres::Client;

/// The advisory lock held while migrating.
const MIGRATION_LOCK: i64 = 0x7175_6172_7279_0000; // "quarry", 0

/// Every version, in order: (number, name, SQL).
const VERSIONS: &[(i32, &str, &str)] =
    &[(1, "records", include_str!("migrations/0001_records.sql"))];

/// Applies the versions the database lacks; the ones it applied.
pub async fn run(client: &mut Client) -> Result<Vec<i32>> {
    client
        .batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
        .await
        .context("taking the migration lock")?;
    let applied = apply_missing(client).await;
    let unlock = client
        .batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
        .await;
    let applied = applied?;
    unlock.context("releasing the migration lock")?;
    Ok(applied)
}

async fn apply_missing(client: &mut Client) -> Result<Vec<i32>> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS quarry_schema_migrations (
                 version integer PRIMARY KEY,
                 name text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await?;
    let row = client
        .query_one(
            "SELECT coalesce(max(version), 0) FROM quarry_schema_migrations",
            &[],
        )
        .await?;
    let current: i32 = row.get(0);
    if let Some(&(latest, _, _)) = VERSIONS.last() {
        anyhow::ensure!(
            current <= latest,
            "the database's schema is version {current}, newer than this binary's {latest}: \
             upgrade the binary"
        );
    }
    let mut applied = Vec::new();
    for &(version, name, sql) in VERSIONS.iter().filter(|(v, _, _)| *v > current) {
        let txn = client.transaction().await?;
        txn.batch_execute(sql)
            .await
            .with_context(|| format!("applying schema version {version} ({name})"))?;
        txn.execute(
            "INSERT INTO quarry_schema_migrations (version, name) VALUES ($1, $2)",
            &[&version, &name],
        )
        .await?;
        txn.commit().await?;
        tracing::info!(version, name, "applied a schema migration");
        applied.push(version);
    }
    Ok(applied)
}
