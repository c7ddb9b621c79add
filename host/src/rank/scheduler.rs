//! The embedding scheduler: one queue in front of the model, shared by live
//! queries, deep searches and the archive's indexer.
//!
//! The model is the scarce resource (two cores embed some tens of passages
//! per second), so how it is shared decides what users get:
//!
//! - **Overlap.** A query opens a [`Job`] before it calls its connectors,
//!   embeds its question while they work, and submits each connector's
//!   passages as that connector answers. Embedding runs while the query
//!   waits for the slowest connector instead of after it.
//! - **Fairness.** Workers take one batch at a time from each live job
//!   with work, in turn (round robin by job), so concurrent queries share
//!   the model evenly; none is left to keywords while another monopolises
//!   it. Under load every query gets a smaller share, gradually.
//! - **Priority within a job.** A job's passages wait in the order the
//!   caller gives (a query gives each connector's best records first), and
//!   each batch is cut from the head of that order; the embedder then sorts
//!   a batch by length so that padding wastes little.
//! - **Background last.** Background jobs (the archive's backlog) are
//!   served only when no live job has work waiting.
//! - **One model per job.** A question and its passages must be compared in
//!   one vector space. When the primary embedder (an operator's endpoint)
//!   fails, the job switches wholly to the fallback (the local model): every
//!   text it was given is embedded again, and the vectors it receives say
//!   which generation they belong to.
//!
//! Dropping a [`Job`] withdraws whatever of it is still queued.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Instant;

use anyhow::{Result, anyhow};
use tokio::sync::mpsc;

use super::embed::Embedder;

/// Who waits for a job: a person now, or nobody in particular.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Live,
    Background,
}

/// The texts one worker embeds in one call. Small batches pad little,
/// spread a query's passages over every worker, and let another query's
/// turn come soon (a batch of 4 takes about 0.15 s on one core here).
/// Measured with `quarry eval-live` on ir-dbpedia (3 vendors at 200 ms, one
/// client, two workers): p50 1275 ms with batches of 16, 1098 ms with 8,
/// 1023 ms with 4, at the same nDCG@10.
pub const DEFAULT_BATCH: usize = 4;

/// A vector the scheduler produced for a job.
#[derive(Debug)]
struct Embedded {
    key: usize,
    /// 0: the primary embedder; 1: the fallback.
    generation: u8,
    vector: Vec<f32>,
}

enum Event {
    Embedded(Embedded),
    /// The job's embedder failed and there is nothing to fall back to.
    Failed(String),
}

#[derive(Clone)]
pub struct Scheduler {
    shared: Arc<Shared>,
    /// The last handle to go stops the workers (they hold `shared` too).
    _running: Arc<Running>,
}

struct Running(Arc<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.queue.lock().expect("embedding queue").shutdown = true;
        self.0.work.notify_all();
    }
}

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    primary: Arc<dyn Embedder>,
    fallback: Option<Arc<dyn Embedder>>,
    batch: usize,
}

#[derive(Default)]
struct Queue {
    jobs: BTreeMap<u64, JobState>,
    next_id: u64,
    /// The live job served last: the next turn goes to the one after it.
    last_live: u64,
    shutdown: bool,
}

struct JobState {
    priority: Priority,
    generation: u8,
    may_fall_back: bool,
    /// (caller's order, submission order, key), smallest first.
    waiting: BinaryHeap<Reverse<(u32, u64, usize)>>,
    /// Every text submitted, so that a switch to the fallback can embed
    /// them all again.
    texts: HashMap<usize, (u32, Arc<str>)>,
    submitted: u64,
    events: mpsc::UnboundedSender<Event>,
}

/// One batch taken from a job by a worker.
struct Turn {
    job: u64,
    generation: u8,
    items: Vec<(usize, Arc<str>)>,
    events: mpsc::UnboundedSender<Event>,
}

impl Scheduler {
    /// Starts `workers` threads that embed with `primary` (and with
    /// `fallback` for a job whose primary failed).
    pub fn start(
        primary: Arc<dyn Embedder>,
        fallback: Option<Arc<dyn Embedder>>,
        workers: usize,
        batch: usize,
    ) -> Scheduler {
        let shared = Arc::new(Shared {
            queue: Mutex::default(),
            work: Condvar::new(),
            primary,
            fallback,
            batch: batch.max(1),
        });
        for n in 0..workers.max(1) {
            let shared = shared.clone();
            thread::Builder::new()
                .name(format!("embed-{n}"))
                .spawn(move || shared.work_loop())
                .expect("spawning an embedding worker");
        }
        Scheduler {
            _running: Arc::new(Running(shared.clone())),
            shared,
        }
    }

    /// The primary embedder's name: the vector space of [`Job`]s that did
    /// not fall back.
    pub fn model_name(&self) -> &str {
        self.shared.primary.name()
    }

    pub fn dimensions(&self) -> usize {
        self.shared.primary.dimensions()
    }

    /// The name of generation `generation`'s embedder.
    pub fn generation_name(&self, generation: u8) -> &str {
        match (generation, &self.shared.fallback) {
            (1, Some(fallback)) => fallback.name(),
            _ => self.shared.primary.name(),
        }
    }

    /// Opens a job. Live jobs may fall back to the local model; set
    /// `may_fall_back` false where vectors must come from the primary
    /// (an index built by it).
    pub fn job(&self, priority: Priority, may_fall_back: bool) -> Job {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut queue = self.shared.queue.lock().expect("embedding queue");
        queue.next_id += 1;
        let id = queue.next_id;
        queue.jobs.insert(
            id,
            JobState {
                priority,
                generation: 0,
                may_fall_back: may_fall_back && self.shared.fallback.is_some(),
                waiting: BinaryHeap::new(),
                texts: HashMap::new(),
                submitted: 0,
                events: sender,
            },
        );
        Job {
            id,
            scheduler: self.clone(),
            events: receiver,
            vectors: HashMap::new(),
            generation: 0,
            failed: None,
        }
    }

    /// Embeds `texts` with the primary embedder and waits for every vector.
    pub async fn embed_all(&self, texts: &[String], priority: Priority) -> Result<Vec<Vec<f32>>> {
        let mut job = self.job(priority, false);
        for (key, text) in texts.iter().enumerate() {
            job.submit(key, text, 0);
        }
        job.wait(None).await;
        if let Some(error) = job.failed.take() {
            return Err(anyhow!(error));
        }
        let mut vectors = std::mem::take(&mut job.vectors);
        (0..texts.len())
            .map(|key| {
                vectors
                    .remove(&key)
                    .ok_or_else(|| anyhow!("the embedding scheduler lost a text"))
            })
            .collect()
    }
}

impl Shared {
    fn work_loop(self: Arc<Self>) {
        while let Some(turn) = self.next_turn() {
            let embedder = match turn.generation {
                0 => self.primary.clone(),
                _ => self
                    .fallback
                    .clone()
                    .unwrap_or_else(|| self.primary.clone()),
            };
            let texts: Vec<&str> = turn.items.iter().map(|(_, text)| &**text).collect();
            match embedder.embed(&texts) {
                Ok(vectors) => {
                    for ((key, _), vector) in turn.items.iter().zip(vectors) {
                        let _ = turn.events.send(Event::Embedded(Embedded {
                            key: *key,
                            generation: turn.generation,
                            vector,
                        }));
                    }
                }
                Err(error) => self.failed(turn, error),
            }
        }
    }

    /// Waits for work and takes the next batch: live jobs in turn, then
    /// background ones. `None` once the scheduler is shut down.
    fn next_turn(&self) -> Option<Turn> {
        let mut queue = self.queue.lock().expect("embedding queue");
        loop {
            if queue.shutdown {
                return None;
            }
            if let Some(id) = queue.next_job() {
                let job = queue.jobs.get_mut(&id).expect("picked job exists");
                let items = job.take_batch(self.batch);
                if job.priority == Priority::Live {
                    queue.last_live = id;
                }
                let job = &queue.jobs[&id];
                return Some(Turn {
                    job: id,
                    generation: job.generation,
                    items,
                    events: job.events.clone(),
                });
            }
            queue = self.work.wait(queue).expect("embedding queue");
        }
    }

    /// The primary failed on a batch: the job starts again on the fallback,
    /// or learns that it failed.
    fn failed(&self, turn: Turn, error: anyhow::Error) {
        let mut queue = self.queue.lock().expect("embedding queue");
        let Some(job) = queue.jobs.get_mut(&turn.job) else {
            return;
        };
        if job.generation == turn.generation && job.generation == 0 && job.may_fall_back {
            tracing::warn!(
                error = format!("{error:#}"),
                "the embedder failed; this query falls back to the local model"
            );
            job.generation = 1;
            job.waiting.clear();
            let mut order = 0;
            for (&key, (priority, _)) in &job.texts {
                order += 1;
                job.waiting.push(Reverse((*priority, order, key)));
            }
            drop(queue);
            self.work.notify_all();
        } else if job.generation == turn.generation {
            job.waiting.clear();
            let _ = turn.events.send(Event::Failed(format!("{error:#}")));
        }
    }
}

/// A batch is cut from this many of a job's first texts (in its order).
const WINDOW_BATCHES: usize = 4;

impl JobState {
    /// The next batch: the job's first waiting text and the texts nearest
    /// to it in length among its next few, so that a batch pads little
    /// (the model's cost is the longest text times the batch size) while
    /// the caller's order still decides what comes first.
    fn take_batch(&mut self, batch: usize) -> Vec<(usize, Arc<str>)> {
        let mut window = Vec::with_capacity(batch * WINDOW_BATCHES);
        while window.len() < batch * WINDOW_BATCHES {
            let Some(Reverse(item)) = self.waiting.pop() else {
                break;
            };
            window.push(item);
        }
        let Some(&head) = window.first() else {
            return Vec::new();
        };
        let length = |&(_, _, key): &(u32, u64, usize)| self.texts[&key].1.len();
        window.sort_by_key(length);
        let at = window
            .iter()
            .position(|&item| item == head)
            .expect("head is in the window");
        let size = batch.min(window.len());
        // The run of `size` neighbours in length that includes the head
        // and spans the fewest characters.
        let first = (at + 1).saturating_sub(size);
        let last = at.min(window.len() - size);
        let start = (first..=last)
            .min_by_key(|&start| length(&window[start + size - 1]) - length(&window[start]))
            .unwrap_or(first);
        let taken: Vec<_> = window.drain(start..start + size).collect();
        for item in window {
            self.waiting.push(Reverse(item));
        }
        taken
            .into_iter()
            .map(|(_, _, key)| (key, self.texts[&key].1.clone()))
            .collect()
    }
}

impl Queue {
    /// The job whose turn it is: the next live job with work after the
    /// one served last (wrapping), else the oldest background job with work.
    fn next_job(&self) -> Option<u64> {
        let live_with_work = |(&id, job): (&u64, &JobState)| {
            (job.priority == Priority::Live && !job.waiting.is_empty()).then_some(id)
        };
        self.jobs
            .range(self.last_live + 1..)
            .find_map(live_with_work)
            .or_else(|| self.jobs.range(..=self.last_live).find_map(live_with_work))
            .or_else(|| {
                self.jobs
                    .iter()
                    .find(|(_, job)| !job.waiting.is_empty())
                    .map(|(&id, _)| id)
            })
    }
}

/// One caller's embedding work: texts submitted under the caller's keys,
/// vectors collected as they come.
pub struct Job {
    id: u64,
    scheduler: Scheduler,
    events: mpsc::UnboundedReceiver<Event>,
    vectors: HashMap<usize, Vec<f32>>,
    generation: u8,
    failed: Option<String>,
}

impl Job {
    /// Queues `text` under `key`; lower `order` is embedded first. A text
    /// whose vector is cached is answered at once.
    pub fn submit(&mut self, key: usize, text: &str, order: u32) {
        let shared = &self.scheduler.shared;
        let cached = (self.generation == 0)
            .then(|| shared.primary.cached(text))
            .flatten();
        {
            let mut queue = shared.queue.lock().expect("embedding queue");
            let Some(job) = queue.jobs.get_mut(&self.id) else {
                return;
            };
            job.submitted += 1;
            job.texts.insert(key, (order, Arc::from(text)));
            if cached.is_none() || job.generation != 0 {
                let sequence = job.submitted;
                job.waiting.push(Reverse((order, sequence, key)));
            }
        }
        match cached {
            Some(vector) if self.generation == 0 => {
                self.vectors.insert(key, vector);
            }
            _ => shared.work.notify_one(),
        }
    }

    /// Collects vectors until every submitted text has one (of the job's
    /// current generation), the job failed, or `deadline` passes.
    pub async fn wait(&mut self, deadline: Option<Instant>) {
        self.wait_until(deadline, Job::complete).await
    }

    /// Collects vectors until `key`'s has arrived or the job failed.
    pub async fn wait_for(&mut self, key: usize) {
        self.wait_until(None, |job| job.vectors.contains_key(&key))
            .await
    }

    async fn wait_until(&mut self, deadline: Option<Instant>, done: impl Fn(&Job) -> bool) {
        while !done(self) && self.failed.is_none() {
            let next = self.events.recv();
            let event = match deadline {
                Some(deadline) => match tokio::time::timeout_at(deadline.into(), next).await {
                    Ok(event) => event,
                    Err(_) => return,
                },
                None => next.await,
            };
            match event {
                Some(event) => self.take(event),
                None => return,
            }
        }
    }

    /// Collects whatever has arrived, without waiting.
    pub fn poll(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.take(event);
        }
    }

    fn take(&mut self, event: Event) {
        match event {
            Event::Embedded(embedded) => {
                if embedded.generation > self.generation {
                    // The job switched to the fallback: older vectors are
                    // from another space.
                    self.generation = embedded.generation;
                    self.vectors.clear();
                }
                if embedded.generation == self.generation {
                    self.vectors.insert(embedded.key, embedded.vector);
                }
            }
            Event::Failed(error) => self.failed = Some(error),
        }
    }

    fn complete(&self) -> bool {
        let queue = self.scheduler.shared.queue.lock().expect("embedding queue");
        queue.jobs.get(&self.id).is_none_or(|job| {
            job.generation == self.generation && self.vectors.len() as u64 >= job.texts.len() as u64
        })
    }

    /// The vector of `key`, when it has arrived.
    pub fn vector(&self, key: usize) -> Option<&[f32]> {
        self.vectors.get(&key).map(Vec::as_slice)
    }

    /// Takes the vector of `key` out of the job.
    pub fn take_vector(&mut self, key: usize) -> Option<Vec<f32>> {
        self.vectors.remove(&key)
    }

    /// The name of the embedder the job's vectors come from.
    pub fn model_name(&self) -> &str {
        self.scheduler.generation_name(self.generation)
    }

    /// Why the job's embedder failed, if it did (with no fallback left).
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Ok(mut queue) = self.scheduler.shared.queue.lock() {
            queue.jobs.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

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
        let mut job = scheduler.job(Priority::Live, true);
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
    async fn live_jobs_take_turns_and_background_waits() {
        let model = Recording::new("model");
        // Hold the model while the queue fills, so that the order of the
        // batches shows the scheduling, not the timing of submissions.
        let gate = model.gate.lock().unwrap();
        let scheduler = Scheduler::start(model.clone(), None, 1, 2);
        let mut background = scheduler.job(Priority::Background, false);
        let mut first = scheduler.job(Priority::Live, true);
        let mut second = scheduler.job(Priority::Live, true);
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
        let mut job = scheduler.job(Priority::Live, true);
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
        let mut job = scheduler.job(Priority::Live, true);
        job.submit(0, "question", 0);
        job.submit(1, "passage", 1);
        job.wait(None).await;
        assert!(job.failure().is_none());
        assert_eq!(job.model_name(), "local");
        assert_eq!(job.vector(0).unwrap()[0], 8.0);
        assert_eq!(job.vector(1).unwrap()[0], 7.0);

        // A job that must stay in the primary's space fails instead.
        let error = scheduler
            .embed_all(&["text".to_string()], Priority::Background)
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
        let mut job = scheduler.job(Priority::Live, true);
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
        let mut dropped = scheduler.job(Priority::Live, true);
        for key in 0..5 {
            dropped.submit(key, "gone", 0);
        }
        std::thread::sleep(Duration::from_millis(20));
        drop(dropped);
        drop(gate);
        let vectors = scheduler
            .embed_all(&["kept".to_string()], Priority::Live)
            .await
            .unwrap();
        assert_eq!(vectors.len(), 1);
        // At most the batch the worker had already taken was embedded.
        assert!(model.calls.load(Ordering::SeqCst) <= 2);
    }
}
