//! Whose turn it is (round robin over live jobs with work, background jobs
//! last) and which texts a turn takes from a job (its first in line, with
//! neighbours in length).

use std::cmp::Reverse;
use std::sync::Arc;

use super::{JobState, Priority, Queue};

/// A batch is cut from this many of a job's first texts (in its order).
const WINDOW_BATCHES: usize = 4;

impl JobState {
    /// The next batch: the job's first waiting text and the texts nearest
    /// to it in length among its next few, so that a batch pads little
    /// (the model's cost is the longest text times the batch size) while
    /// the caller's order still decides what comes first.
    pub(super) fn take_batch(&mut self, batch: usize) -> Vec<(usize, Arc<str>)> {
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
    pub(super) fn next_job(&self) -> Option<u64> {
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
