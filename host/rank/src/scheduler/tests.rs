//! The scheduler with recording embedders: keys, turns, batches, fallback,
//! deadlines and withdrawal.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;

/// Vectors that name their text's length, and a log of each batch.
struct Recording {
    name: &'static str,
    batches: Mutex<Vec<Vec<String>>>,
    fail: AtomicBool,
    calls: AtomicUsize,
    gate: Mutex<()>,
}

impl Recording {
    fn new(name: &'static str) -> Arc<Recording> {
        Arc::new(Recording {
            name,
            batches: Mutex::default(),
            fail: AtomicBool::new(false),
            calls: AtomicUsize::new(0),
            gate: Mutex::new(()),
        })
    }
}

impl Embedder for Recording {
    fn name(&self) -> &str {
        self.name
    }

    fn dimensions(&self) -> usize {
        2
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let _gate = self.gate.lock().unwrap();
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.fail.load(Ordering::SeqCst) {
            anyhow::bail!("{} is down", self.name);
        }
        self.batches
            .lock()
            .unwrap()
            .push(texts.iter().map(|t| t.to_string()).collect());
        Ok(texts.iter().map(|t| vec![t.len() as f32, 0.0]).collect())
    }
}

#[tokio::test]
async fn a_job_gets_every_vector_under_its_keys() {
    let model = Recording::new("model");
    let scheduler = Scheduler::start(model.clone(), None, 1, 4);
    let mut job = scheduler.job("usr_test", Priority::Live, true);
    for (key, text) in ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
        .iter()
        .enumerate()
    {
        job.submit(key * 10, text, key as u32);
    }
    job.wait(None).await;
    for key in 0..6 {
        assert_eq!(job.vector(key * 10).unwrap()[0], (key + 1) as f32);
    }
    assert_eq!(job.model_name(), "model");
    assert!(model.batches.lock().unwrap().iter().all(|b| b.len() <= 4));
}

#[tokio::test]
async fn a_text_submitted_twice_is_embedded_once() {
    let model = Recording::new("model");
    let scheduler = Scheduler::start(model.clone(), None, 1, 4);
    let mut job = scheduler.job("usr_test", Priority::Live, true);
    // The same passage from two connectors, and one of its own.
    job.submit(0, "checkout times out", 1);
    job.submit(1, "refund policy", 1);
    job.submit(2, "checkout times out", 1);
    job.wait(None).await;
    let embedded: Vec<String> = model.batches.lock().unwrap().concat();
    assert_eq!(embedded.len(), 2, "{embedded:?}");
    assert_eq!(job.vector(2), job.vector(0));
    assert!(job.vector(2).is_some());
    // Either key can take its vector without taking the other's.
    assert_eq!(job.take_vector(0).unwrap()[0], 18.0);
    assert_eq!(job.take_vector(2).unwrap()[0], 18.0);
    assert_eq!(job.take_vector(1).unwrap()[0], 13.0);
}

#[tokio::test]
async fn repeated_texts_are_waited_for_and_returned_under_every_key() {
    let model = Recording::new("model");
    let scheduler = Scheduler::start(model.clone(), None, 1, 4);
    // What the archive's indexer asks: one vector per text, repeats included.
    let texts = ["deploy froze", "lunch menu", "deploy froze"].map(String::from);
    let vectors = scheduler
        .embed_all("usr_test", &texts, Priority::Background)
        .await
        .unwrap();
    assert_eq!(vectors.len(), 3);
    assert_eq!(vectors[0], vectors[2]);
    // What a deep search asks: one key's vector, that key a repeat.
    let mut job = scheduler.job("usr_test", Priority::Live, false);
    job.submit(0, "refund policy", 1);
    job.submit(1, "refund policy", 0);
    job.wait_for(1).await;
    assert!(job.vector(1).is_some());
}

#[tokio::test]
async fn live_jobs_take_turns_and_background_waits() {
    let model = Recording::new("model");
    // Hold the model while the queue fills, so that the order of the
    // batches shows the scheduling, not the timing of submissions.
    let gate = model.gate.lock().unwrap();
    let scheduler = Scheduler::start(model.clone(), None, 1, 2);
    let mut background = scheduler.job("usr_test", Priority::Background, false);
    let mut first = scheduler.job("usr_test", Priority::Live, true);
    let mut second = scheduler.job("usr_test", Priority::Live, true);
    // Background work is queued last, so that the worker's first
    // batch (taken before the model is released) is live work.
    for key in 0..4 {
        first.submit(key, &format!("x{key}"), key as u32);
    }
    second.submit(0, "y0", 0);
    second.submit(1, "y1", 1);
    for key in 0..4 {
        background.submit(key, &format!("b{key}"), 0);
    }
    // Let the worker take its first batch, then release the model.
    std::thread::sleep(Duration::from_millis(50));
    drop(gate);
    first.wait(None).await;
    second.wait(None).await;
    background.wait(None).await;
    let batches = model.batches.lock().unwrap().clone();
    let owner = |batch: &Vec<String>| batch[0].chars().next().unwrap();
    let order: Vec<char> = batches.iter().map(owner).collect();
    // Whatever was taken first, the second live job is served before
    // the first one's second batch, and background comes last.
    let y = order.iter().position(|&c| c == 'y').unwrap();
    let x_last = order.iter().rposition(|&c| c == 'x').unwrap();
    let b_first = order.iter().position(|&c| c == 'b').unwrap();
    assert!(y < x_last, "{order:?}");
    assert!(b_first > x_last && b_first > y, "{order:?}");
    // Within a job, the caller's order.
    assert_eq!(batches.iter().find(|b| owner(b) == 'x').unwrap()[0], "x0");
}

#[tokio::test]
async fn a_batch_gathers_texts_of_similar_length_around_the_first_in_line() {
    let model = Recording::new("model");
    let gate = model.gate.lock().unwrap();
    let scheduler = Scheduler::start(model.clone(), None, 1, 2);
    let mut job = scheduler.job("usr_test", Priority::Live, true);
    // Submitted one after another while the worker is busy with the
    // first: short and long texts alternate in the caller's order.
    let texts = ["a", "b", &"L".repeat(100), "c", &"M".repeat(101), "d"];
    for (key, text) in texts.iter().enumerate() {
        job.submit(key, text, key as u32);
    }
    std::thread::sleep(Duration::from_millis(50));
    drop(gate);
    job.wait(None).await;
    let batches = model.batches.lock().unwrap().clone();
    let spans: Vec<usize> = batches
        .iter()
        .map(|b| {
            let lengths: Vec<usize> = b.iter().map(String::len).collect();
            lengths.iter().max().unwrap() - lengths.iter().min().unwrap()
        })
        .collect();
    // Whatever the first batch took, no later batch mixes a short text
    // with a long one.
    assert!(spans[1..].iter().all(|&span| span <= 1), "{batches:?}");
    assert_eq!(batches.iter().map(Vec::len).sum::<usize>(), texts.len());
}

#[tokio::test]
async fn a_failing_primary_switches_the_whole_job_to_the_fallback() {
    let primary = Recording::new("endpoint");
    let fallback = Recording::new("local");
    primary.fail.store(true, Ordering::SeqCst);
    let scheduler = Scheduler::start(primary.clone(), Some(fallback.clone()), 1, 8);
    let mut job = scheduler.job("usr_test", Priority::Live, true);
    job.submit(0, "question", 0);
    job.submit(1, "passage", 1);
    job.wait(None).await;
    assert!(job.failure().is_none());
    assert_eq!(job.model_name(), "local");
    assert_eq!(job.vector(0).unwrap()[0], 8.0);
    assert_eq!(job.vector(1).unwrap()[0], 7.0);

    // A job that must stay in the primary's space fails instead.
    let error = scheduler
        .embed_all("usr_test", &["text".to_string()], Priority::Background)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("endpoint is down"), "{error}");
}

// The gate holds the model's worker thread (not a task) while the test
// waits past its deadline.
#[allow(clippy::await_holding_lock)]
#[tokio::test]
async fn a_deadline_returns_what_arrived() {
    let model = Recording::new("model");
    let gate = model.gate.lock().unwrap();
    let scheduler = Scheduler::start(model.clone(), None, 1, 1);
    let mut job = scheduler.job("usr_test", Priority::Live, true);
    job.submit(0, "a", 0);
    job.wait(Some(Instant::now() + Duration::from_millis(20)))
        .await;
    assert!(job.vector(0).is_none());
    drop(gate);
    job.wait(None).await;
    assert!(job.vector(0).is_some());
}

#[tokio::test]
async fn a_dropped_job_leaves_the_queue() {
    let model = Recording::new("model");
    let gate = model.gate.lock().unwrap();
    let scheduler = Scheduler::start(model.clone(), None, 1, 1);
    let mut dropped = scheduler.job("usr_test", Priority::Live, true);
    for key in 0..5 {
        dropped.submit(key, "gone", 0);
    }
    std::thread::sleep(Duration::from_millis(20));
    drop(dropped);
    drop(gate);
    let vectors = scheduler
        .embed_all("usr_test", &["kept".to_string()], Priority::Live)
        .await
        .unwrap();
    assert_eq!(vectors.len(), 1);
    // At most the batch the worker had already taken was embedded.
    assert!(model.calls.load(Ordering::SeqCst) <= 2);
}
