//! The evaluation's own arithmetic and word handling.

use super::lenient::vendor_words;
use super::scores::percentile;

#[test]
fn a_lenient_vendor_searches_every_word_of_the_connectors_query() {
    // What the GitHub connector sends for a question with a phrase.
    let q = "(\"operant conditioning\" OR skinner) repo:eval/corpus is:issue updated:>=2025-01-01";
    assert_eq!(vendor_words(q), ["conditioning", "operant", "skinner"]);
}

#[test]
fn percentiles_of_a_sorted_list() {
    let values: Vec<u64> = (1..=100).collect();
    assert_eq!(percentile(&values, 0.5), 50);
    assert_eq!(percentile(&values, 0.95), 95);
    assert_eq!(percentile(&[], 0.5), 0);
}
