//! Crash tests under load: the server is killed (SIGKILL) at random
//! moments of a running load (`support/load`), at least 20 times, and
//! started again on the same data each time, while the fake upstreams
//! inject faults. Requests in flight at a kill may fail; what was
//! acknowledged must survive. After each restart, earlier keyed answers
//! must replay byte for byte and every user's reads must answer; at the
//! end, the load's invariants (archive, limits, deletions, `user.deleted`
//! exactly once) must hold.
//!
//! The random choices follow from a seed, printed on failure;
//! `QUARRY_CRASH_SEED` repeats them, `QUARRY_CRASH_KILLS` changes the
//! number of kills (20 by default, the short mode CI runs).

use std::path::Path;

use quarry_tests::load::report::Report;
use quarry_tests::load::rng::{Rng, fresh_seed};
use quarry_tests::load::{Load, LoadConfig, Summary};
use quarry_tests::server::{Demo, DemoOptions};

/// Users the demo makes beside alice and bob: the ones deleted.
const EXTRA_USERS: usize = 3;

fn seed() -> u64 {
    std::env::var("QUARRY_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(fresh_seed)
}

fn kills() -> usize {
    std::env::var("QUARRY_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

fn config(seed: u64) -> LoadConfig {
    LoadConfig {
        seed,
        workers_per_user: 1,
        // Low, so that windows fill between kills.
        query_limit_minute: 10,
        think_ms: (0, 100),
        max_backoff: std::time::Duration::from_secs(1),
    }
}

fn options(load: &Load, data: &Path, seed: u64) -> DemoOptions {
    let env = load.server_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Demo::options()
        .envs(&env)
        .data_dir(data)
        .extra_users(EXTRA_USERS)
        .upstream_faults(&format!("soak,seed={seed}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_at_random_under_load_the_server_keeps_what_it_acknowledged() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let load = Load::new(config(seed));
    let data = tempfile::tempdir().unwrap();
    let mut demo = options(&load, data.path(), seed).start();
    // The servers' ERROR lines, printed when an invariant breaks.
    let mut errors = Vec::new();
    load.attach(&demo).await;
    load.start_workers();
    for kill in 0..kills() {
        let running = rng.millis(300, 2500);
        // Now and then a deletion, started at a random moment: it may be
        // in flight when the server dies.
        let deletion = rng.chance(0.35).then(|| {
            let (load, mut rng) = (load.clone(), rng.fork(kill as u64));
            tokio::spawn(async move {
                tokio::time::sleep(rng.millis(0, running.as_millis() as u64)).await;
                load.delete_someone(&mut rng).await
            })
        });
        tokio::time::sleep(running).await;
        demo.stop();
        errors.extend(error_lines(&demo));
        load.detach();
        if let Some(deletion) = deletion {
            let _ = deletion.await;
        }
        demo = options(&load, data.path(), seed).start();
        load.attach(&demo).await;
        load.check_after_restart(&mut rng).await;
    }
    load.stop_workers().await;
    let mut report = load.verify().await;
    demo.stop();
    errors.extend(error_lines(&demo));
    load.verify_store(data.path(), &mut report);
    eprintln!("{}", describe(&load.summary(), &report, seed));
    assert!(
        report.passed(),
        "an invariant broke; QUARRY_CRASH_SEED={seed} repeats the choices:\n{report}\n\
         the servers' errors:\n{}",
        errors.join("\n")
    );
}

/// The lines of the server's log at level ERROR.
fn error_lines(demo: &Demo) -> Vec<String> {
    demo.log()
        .lines()
        .filter(|line| line.contains("ERROR"))
        .map(str::to_string)
        .collect()
}

fn describe(summary: &Summary, report: &Report, seed: u64) -> String {
    format!(
        "crash test (seed {seed}, {} kills): {} queries answered, {} users deleted, requests by status {:?}\n{report}",
        kills(),
        summary.queries_answered,
        summary.users_deleted,
        summary.by_status
    )
}
