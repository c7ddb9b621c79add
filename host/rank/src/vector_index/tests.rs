//! Unit tests of one user's index.

use super::*;

fn unit(values: &[f32]) -> Vec<f32> {
    let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
    values.iter().map(|x| x / norm).collect()
}

fn seqs(hits: &[Hit]) -> Vec<u64> {
    hits.iter().map(|h| h.seq).collect()
}

#[test]
fn finds_the_nearest_within_a_window_and_survives_serialization() {
    let mut index = UserIndex::new("test", 3).unwrap();
    let vectors = [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.9, 0.1, 0.0],
        [0.0, 0.0, 1.0],
    ];
    for (seq, v) in vectors.iter().enumerate() {
        let chunk = chunk_of("github", &format!("passage {seq}"));
        index.set_entry(seq as u64, 1000 * seq as i64, chunk);
        index.add(seq as u64, &unit(v)).unwrap();
    }
    let all = index.window(None, None);
    let hits = index.search(&unit(&[1.0, 0.0, 0.0]), all, 2).unwrap();
    assert_eq!(seqs(&hits), [0, 2]);
    assert!((hits[0].similarity - 1.0).abs() < 1e-3);
    // Inclusive bounds on time: 1000..=2000 is seqs 1 and 2.
    let window = index.window(Some(1000), Some(2000));
    assert_eq!(window, 1..3);
    let hits = index.search(&unit(&[1.0, 0.0, 0.0]), window, 5).unwrap();
    assert_eq!(seqs(&hits), [2, 1]);
    assert_eq!(index.window(Some(5000), None), 4..4);

    let back = UserIndex::deserialize(&index.serialize().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(back.len(), 4);
    assert_eq!(back.embedder(), "test");
    assert_eq!(back.window(Some(1000), Some(2000)), 1..3);
    let hits = back
        .search(&unit(&[0.0, 0.0, 1.0]), back.window(None, None), 1)
        .unwrap();
    assert_eq!(hits[0].seq, 3);
}

#[test]
fn opposite_vectors_score_zero_not_negative() {
    let mut index = UserIndex::new("test", 2).unwrap();
    index.set_entry(0, 0, chunk_of("slack", "north"));
    index.add(0, &[1.0, 0.0]).unwrap();
    let hits = index
        .search(&[-1.0, 0.0], index.window(None, None), 1)
        .unwrap();
    assert_eq!(hits[0].similarity, 0.0);
}

#[test]
fn a_chunk_is_its_connector_and_its_content() {
    assert_eq!(chunk_of("slack", "hello"), chunk_of("slack", "hello"));
    assert_ne!(chunk_of("slack", "hello"), chunk_of("github", "hello"));
    assert_ne!(chunk_of("slack", "hello"), chunk_of("slack", "hello!"));
    // The connector's length is part of it: no shifting text across.
    assert_ne!(chunk_of("ab", "c"), chunk_of("a", "bc"));
}

/// Seqs 0..6 at times 0, 1000, ..: chunk "a" at 0, 2 and 4 (the
/// nearest), "b" at 1 and 5, "c" at 3; "a" at 4 is not indexed (queued).
fn with_repeats(order: &[u64]) -> UserIndex {
    let mut index = UserIndex::new("test", 2).unwrap();
    let texts = ["a", "b", "a", "c", "a", "b"];
    let vectors = [
        [1.0, 0.0],
        [0.6, 0.8],
        [1.0, 0.0],
        [0.0, 1.0],
        [1.0, 0.0],
        [0.6, 0.8],
    ];
    for &seq in order {
        let at = seq as usize;
        index.set_entry(seq, 1000 * seq as i64, chunk_of("github", texts[at]));
        if seq != 4 {
            index.add(seq, &vectors[at]).unwrap();
        }
    }
    index
}

#[test]
fn each_chunk_is_found_once_at_its_newest_occurrence_in_the_window() {
    for order in [[0, 1, 2, 3, 4, 5], [3, 4, 5, 0, 1, 2], [5, 2, 0, 4, 1, 3]] {
        let index = with_repeats(&order);
        let all = index.window(None, None);
        assert_eq!(index.distinct_within(all.clone()), 3, "{order:?}");
        let hits = index.search(&[1.0, 0.0], all, 5).unwrap();
        // "a" at 4 (queued, but its newest), "b" at 5, "c" at 3.
        assert_eq!(seqs(&hits), [4, 5, 3], "{order:?}");
        assert!((hits[0].similarity - 1.0).abs() < 1e-3);
        // Only the best chunk: one hit, not three of "a".
        assert_eq!(seqs(&index.search(&[1.0, 0.0], 0..6, 1).unwrap()), [4]);

        // Up to 3000 ms: "a" at 2, "b" at 1, "c" at 3.
        let window = index.window(None, Some(3000));
        assert_eq!(window, 0..4);
        assert_eq!(index.distinct_within(window.clone()), 3);
        let hits = index.search(&[1.0, 0.0], window, 5).unwrap();
        assert_eq!(seqs(&hits), [2, 1, 3], "{order:?}");
        // From 2000 to 4000 ms: "a" (2, 4) and "c".
        let window = index.window(Some(2000), Some(4000));
        assert_eq!(index.distinct_within(window.clone()), 2);
        assert_eq!(seqs(&index.search(&[1.0, 0.0], window, 5).unwrap()), [4, 3]);
        assert_eq!(index.distinct_within(1..2), 1);
        assert_eq!(index.distinct_within(4..6), 2);

        let back = UserIndex::deserialize(&index.serialize().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(back.distinct_within(back.window(None, None)), 3);
        assert_eq!(back.distinct_within(2..5), 2);
        assert_eq!(seqs(&back.search(&[1.0, 0.0], 0..4, 5).unwrap()), [2, 1, 3]);
    }
}

#[test]
fn a_gap_counts_as_a_chunk_until_its_entry_comes() {
    let mut index = UserIndex::new("test", 2).unwrap();
    index.set_entry(2, 2000, chunk_of("github", "a"));
    // 0 and 1 are not seen yet: each counts as one.
    assert_eq!(index.distinct_within(0..3), 3);
    assert!(!index.seen(0) && index.seen(2));
    // A gap is stored as one, and filled after a load.
    let mut back = UserIndex::deserialize(&index.serialize().unwrap())
        .unwrap()
        .unwrap();
    back.set_entry(0, 0, chunk_of("github", "a"));
    back.set_entry(1, 1000, chunk_of("github", "b"));
    assert_eq!(back.distinct_within(0..3), 2);
    assert_eq!(back.distinct_within(0..2), 2);
    assert_eq!(back.distinct_within(1..3), 2);
    // Seeing an entry again changes nothing.
    back.set_entry(1, 1000, chunk_of("github", "b"));
    assert_eq!(back.distinct_within(0..3), 2);
}

#[test]
fn the_graph_is_asked_again_when_repeats_fill_its_answer() {
    let mut index = UserIndex::new("test", 8).unwrap();
    let size = EXACT_SEARCH_LIMIT as u64 + 1000;
    let mut state = 7u64;
    let mut random = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
        (state >> 33) as f32 / (1u64 << 31) as f32 - 0.5
    };
    let nearest = unit(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    for seq in 0..size {
        // The nearest chunk, asked about 200 times.
        let (text, vector) = match seq % 25 {
            0 => ("nearest".to_string(), nearest.clone()),
            _ => {
                let v: Vec<f32> = (0..8).map(|_| random()).collect();
                (format!("other {seq}"), unit(&v))
            }
        };
        index.set_entry(seq, seq as i64, chunk_of("jira", &text));
        index.add(seq, &vector).unwrap();
    }
    let all = index.window(None, None);
    let hits = index.search(&nearest, all.clone(), 5).unwrap();
    assert_eq!(hits.len(), 5);
    let mut chunks: Vec<Chunk> = hits.iter().map(|h| h.chunk).collect();
    chunks.sort();
    chunks.dedup();
    assert_eq!(chunks.len(), 5, "distinct chunks: {hits:?}");
    assert_eq!(hits[0].seq, (size - 1) / 25 * 25, "the newest repeat");
    let repeats = size.div_ceil(25);
    assert_eq!(index.distinct_within(all), size - repeats + 1);
    // A window of the graph's too (wider than the exact scan).
    let window = 500..size;
    let hits = index.search(&nearest, window.clone(), 5).unwrap();
    assert_eq!(hits.len(), 5);
    assert_eq!(hits[0].chunk, chunk_of("jira", "nearest"));
    let others_in_window = (500..size).filter(|s| s % 25 != 0).count() as u64;
    assert_eq!(index.distinct_within(window), others_in_window + 1);
}

#[test]
fn an_index_stored_before_chunks_were_kept_is_rebuilt() {
    let index = UserIndex::new("test", 2).unwrap();
    let bytes = index.serialize().unwrap();
    let header_len = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[4..4 + header_len]).unwrap();
    header.as_object_mut().unwrap().remove("chunks");
    let header = serde_json::to_vec(&header).unwrap();
    let mut old = (header.len() as u32).to_le_bytes().to_vec();
    old.extend_from_slice(&header);
    old.extend_from_slice(&bytes[4 + header_len..]);
    assert!(UserIndex::deserialize(&old).unwrap().is_none());
}
