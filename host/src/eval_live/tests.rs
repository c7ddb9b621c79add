//! The evaluation's own arithmetic and word handling.

use super::scores::percentile;
use super::vendors::{question_words, vendor_words};

#[test]
fn the_vendor_and_the_eval_agree_on_the_words() {
    // What the GitHub connector sends for a question with a phrase.
    let q = "skinner OR \"operant conditioning\" repo:eval/corpus updated:>=2025-01-01";
    let words = vendor_words(q);
    assert_eq!(words, question_words("skinner \"operant conditioning\""));
    assert!(!words.iter().any(|w| w.contains(':')));
}

#[test]
fn percentiles_of_a_sorted_list() {
    let values: Vec<u64> = (1..=100).collect();
    assert_eq!(percentile(&values, 0.5), 50);
    assert_eq!(percentile(&values, 0.95), 95);
    assert_eq!(percentile(&[], 0.5), 0);
}
