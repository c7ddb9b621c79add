//! A caller's side of the scheduler: texts submitted under its keys,
//! vectors collected as they come, withdrawn from the queue on drop.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use super::{Event, Scheduler};

/// One caller's embedding work: texts submitted under the caller's keys,
/// vectors collected as they come.
pub struct Job {
    pub(super) id: u64,
    pub(super) owner: Arc<str>,
    pub(super) scheduler: Scheduler,
    pub(super) events: mpsc::UnboundedReceiver<Event>,
    pub(super) vectors: HashMap<usize, Vec<f32>>,
    pub(super) generation: u8,
    pub(super) failed: Option<String>,
    /// Each distinct text's first key: a text submitted again (the same
    /// passage from two connectors, or twice from one) is embedded once.
    pub(super) first_keys: HashMap<Arc<str>, usize>,
    /// Keys whose text was submitted before under another key.
    pub(super) aliases: HashMap<usize, usize>,
    /// First keys that aliases share: their vector is copied, not taken.
    pub(super) shared_keys: HashSet<usize>,
}

impl Job {
    /// Queues `text` under `key`; lower `order` is embedded first. A text
    /// whose vector is cached is answered at once.
    pub fn submit(&mut self, key: usize, text: &str, order: u32) {
        if let Some(&first) = self.first_keys.get(text) {
            self.aliases.insert(key, first);
            self.shared_keys.insert(first);
            return;
        }
        self.first_keys.insert(Arc::from(text), key);
        let shared = &self.scheduler.shared;
        let cached = (self.generation == 0)
            .then(|| shared.primary.cached(&self.owner, text))
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
        self.wait_until(None, |job| job.vector(key).is_some()).await
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
        self.vectors.get(&self.embedded_as(key)).map(Vec::as_slice)
    }

    /// Takes the vector of `key` out of the job (a copy, where other keys
    /// share it).
    pub fn take_vector(&mut self, key: usize) -> Option<Vec<f32>> {
        let embedded = self.embedded_as(key);
        match embedded != key || self.shared_keys.contains(&key) {
            true => self.vectors.get(&embedded).cloned(),
            false => self.vectors.remove(&embedded),
        }
    }

    /// The key under which `key`'s text was embedded.
    fn embedded_as(&self, key: usize) -> usize {
        self.aliases.get(&key).copied().unwrap_or(key)
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
