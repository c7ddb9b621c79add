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
//!
//! - this file: the scheduler, its queue and its workers;
//! - [`turns`]: whose turn it is, and the batch cut from that job;
//! - [`job`]: a caller's side of it.

mod job;
mod turns;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use anyhow::{Result, anyhow};
use tokio::sync::mpsc;

use super::embed::Embedder;

pub use job::Job;

/// Who waits for a job: a person now, or nobody in particular.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Live,
    Background,
}

/// The texts one worker embeds in one call. Small batches pad little,
/// spread a query's passages over every worker, and let another query's
/// turn come soon (a batch of 4 took about 0.15 s on one core with f32
/// products; the int8 model runs a batch's texts one at a time, so for
/// it a batch only groups them).
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
    owner: Arc<str>,
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
    owner: Arc<str>,
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

    /// Drops the vectors every embedder keeps in memory for `owner` (a
    /// deletion).
    pub fn forget(&self, owner: &str) {
        self.shared.primary.forget(owner);
        if let Some(fallback) = &self.shared.fallback {
            fallback.forget(owner);
        }
    }

    /// Vectors the embedders keep in memory.
    pub fn cached_vectors(&self) -> usize {
        let fallback = self.shared.fallback.as_ref();
        self.shared.primary.cached_vectors() + fallback.map_or(0, |f| f.cached_vectors())
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

    /// Opens a job for `owner` (the user whose texts these are: cached
    /// vectors are kept per owner). Live jobs may fall back to the local
    /// model; set `may_fall_back` false where vectors must come from the
    /// primary (an index built by it).
    pub fn job(&self, owner: &str, priority: Priority, may_fall_back: bool) -> Job {
        let owner: Arc<str> = Arc::from(owner);
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut queue = self.shared.queue.lock().expect("embedding queue");
        queue.next_id += 1;
        let id = queue.next_id;
        queue.jobs.insert(
            id,
            JobState {
                owner: owner.clone(),
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
            owner,
            scheduler: self.clone(),
            events: receiver,
            vectors: HashMap::new(),
            generation: 0,
            failed: None,
            first_keys: HashMap::new(),
            aliases: HashMap::new(),
            shared_keys: HashSet::new(),
        }
    }

    /// Embeds `owner`'s `texts` with the primary embedder and waits for
    /// every vector.
    pub async fn embed_all(
        &self,
        owner: &str,
        texts: &[String],
        priority: Priority,
    ) -> Result<Vec<Vec<f32>>> {
        let mut job = self.job(owner, priority, false);
        for (key, text) in texts.iter().enumerate() {
            job.submit(key, text, 0);
        }
        job.wait(None).await;
        if let Some(error) = job.failed.take() {
            return Err(anyhow!(error));
        }
        (0..texts.len())
            .map(|key| {
                job.take_vector(key)
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
            match embedder.embed_for(&turn.owner, &texts) {
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
                    owner: job.owner.clone(),
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

#[cfg(test)]
mod tests;
