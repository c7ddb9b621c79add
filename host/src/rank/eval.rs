//! `quarry eval-ranking DIR`: the ranking of `/v1/query`, measured on a
//! BEIR-format folder (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv`).
//!
//! For each judged query, the candidates are what a keyword search upstream
//! would return (BM25 top 100 over the whole corpus); the ranking re-orders
//! them exactly as a query does (plan, chunks, BM25 over the candidates,
//! embeddings, fusion), and the result is scored with nDCG@10 (linear
//! gains, as trec_eval) and recall@10.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Deserialize;

use super::{Bm25, Candidate, Embedder, Semantic, plan, rank};

/// How many candidates the simulated upstream search returns.
pub const CANDIDATES: usize = 100;

#[derive(Deserialize)]
struct CorpusLine {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    title: String,
    text: String,
}

#[derive(Deserialize)]
struct QueryLine {
    #[serde(rename = "_id")]
    id: String,
    text: String,
}

/// The figures one evaluation prints.
pub struct Report {
    pub ndcg_at_10: f64,
    pub recall_at_10: f64,
    pub queries: usize,
    pub median_ranking: Duration,
    pub mean_ranking: Duration,
}

/// Evaluates with `weight` as the semantic weight of the fusion.
pub fn evaluate(
    dir: &Path,
    embedder: Option<&dyn Embedder>,
    budget: usize,
    weight: f32,
) -> Result<Report> {
    let corpus: Vec<CorpusLine> = read_jsonl(&dir.join("corpus.jsonl"))?;
    let queries: Vec<QueryLine> = read_jsonl(&dir.join("queries.jsonl"))?;
    let qrels = read_qrels(&dir.join("qrels/test.tsv"))?;
    let texts: Vec<String> = corpus
        .iter()
        .map(|d| format!("{}\n{}", d.title, d.text))
        .collect();
    let upstream = Bm25::new(texts.iter().map(String::as_str));
    let now = crate::store::now();
    let (mut ndcg, mut recall, mut times) = (0.0, 0.0, Vec::new());
    let judged: Vec<&QueryLine> = queries
        .iter()
        .filter(|q| qrels.contains_key(&q.id))
        .collect();
    for query in &judged {
        let plan = plan(&query.text, now);
        let scoring = upstream.query(&plan.terms, &plan.phrases);
        let mut hits: Vec<(usize, f32)> = (0..corpus.len())
            .map(|i| (i, scoring.score(i)))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(CANDIDATES);
        let candidates: Vec<Candidate<'_>> = hits
            .iter()
            .enumerate()
            .map(|(position, &(i, _))| Candidate {
                connector: "corpus",
                document_index: position,
                document_id: &corpus[i].id,
                title: &corpus[i].title,
                content: &corpus[i].text,
            })
            .collect();
        let started = Instant::now();
        let semantic = match embedder {
            Some(e) => Some(Semantic::new(e, &query.text, budget)?.with_weight(weight)),
            None => None,
        };
        let ranked = rank(&plan, &candidates, 10, semantic.as_ref())?;
        times.push(started.elapsed());
        let ids: Vec<&str> = ranked
            .iter()
            .map(|r| corpus[hits[r.document_index].0].id.as_str())
            .collect();
        let judged = &qrels[&query.id];
        ndcg += ndcg_at_10(&ids, judged);
        recall += recall_at_10(&ids, judged);
    }
    let n = judged.len().max(1);
    times.sort();
    Ok(Report {
        ndcg_at_10: ndcg / n as f64,
        recall_at_10: recall / n as f64,
        queries: judged.len(),
        median_ranking: times.get(times.len() / 2).copied().unwrap_or_default(),
        mean_ranking: times.iter().sum::<Duration>() / n as u32,
    })
}

fn ndcg_at_10(ranked: &[&str], judged: &HashMap<String, u32>) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, id)| gain(judged.get(*id)) / (i as f64 + 2.0).log2())
        .sum();
    let mut ideal: Vec<u32> = judged.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, &g)| f64::from(g) / (i as f64 + 2.0).log2())
        .sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}

fn gain(grade: Option<&u32>) -> f64 {
    grade.map_or(0.0, |&g| f64::from(g))
}

fn recall_at_10(ranked: &[&str], judged: &HashMap<String, u32>) -> f64 {
    let relevant = judged.values().filter(|&&g| g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(10)
        .filter(|id| judged.get(**id).is_some_and(|&g| g > 0))
        .count();
    found as f64 / relevant as f64
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    std::io::BufReader::new(file)
        .lines()
        .filter(|l| l.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .enumerate()
        .map(|(n, line)| {
            serde_json::from_str(&line?)
                .with_context(|| format!("{} line {}", path.display(), n + 1))
        })
        .collect()
}

/// `query-id \t corpus-id \t score`, with a header line.
fn read_qrels(path: &Path) -> Result<HashMap<String, HashMap<String, u32>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("opening {}", path.display()))?;
    let mut qrels: HashMap<String, HashMap<String, u32>> = HashMap::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        if let [query, doc, score] = fields[..] {
            qrels
                .entry(query.to_string())
                .or_default()
                .insert(doc.to_string(), score.trim().parse().unwrap_or(0));
        }
    }
    Ok(qrels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndcg_of_a_perfect_and_an_empty_ranking() {
        let judged: HashMap<String, u32> = [("a".into(), 2), ("b".into(), 1)].into();
        assert!((ndcg_at_10(&["a", "b"], &judged) - 1.0).abs() < 1e-12);
        assert_eq!(ndcg_at_10(&["x"], &judged), 0.0);
        assert!(ndcg_at_10(&["b", "a"], &judged) < 1.0);
        assert_eq!(recall_at_10(&["a", "x"], &judged), 0.5);
    }
}
