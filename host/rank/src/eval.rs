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

use super::{Bm25, Candidate, Embedder, QueryPlan, Semantic, plan, rank};

/// How many candidates the simulated upstream search returns.
pub const CANDIDATES: usize = 100;

#[derive(Deserialize)]
pub struct CorpusLine {
    #[serde(rename = "_id")]
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub text: String,
    /// BEIR's optional per-document metadata; the company's set gives
    /// `updated` (RFC 3339), when the record last changed.
    #[serde(default)]
    pub metadata: Option<CorpusMetadata>,
}

#[derive(Deserialize, Default)]
pub struct CorpusMetadata {
    #[serde(default)]
    pub updated: Option<String>,
}

impl CorpusLine {
    /// When the document last changed (Unix seconds), if the corpus says.
    pub fn updated_unix(&self) -> Option<i64> {
        let updated = self.metadata.as_ref()?.updated.as_deref()?;
        Some(updated.parse::<jiff::Timestamp>().ok()?.as_second())
    }
}

#[derive(Deserialize)]
pub struct QueryLine {
    #[serde(rename = "_id")]
    pub id: String,
    pub text: String,
}

/// A BEIR-format folder, read.
pub struct Beir {
    pub corpus: Vec<CorpusLine>,
    pub queries: Vec<QueryLine>,
    /// Query id → document id → grade.
    pub qrels: HashMap<String, HashMap<String, u32>>,
}

impl Beir {
    pub fn load(dir: &Path) -> Result<Beir> {
        Ok(Beir {
            corpus: read_jsonl(&dir.join("corpus.jsonl"))?,
            queries: read_jsonl(&dir.join("queries.jsonl"))?,
            qrels: read_qrels(&dir.join("qrels/test.tsv"))?,
        })
    }

    /// The queries that have judgements, in file order.
    pub fn judged(&self) -> Vec<&QueryLine> {
        self.queries
            .iter()
            .filter(|q| self.qrels.contains_key(&q.id))
            .collect()
    }

    /// A document as a keyword search indexes it: title and text.
    pub fn document_text(&self, index: usize) -> String {
        format!("{}\n{}", self.corpus[index].title, self.corpus[index].text)
    }
}

/// The figures one evaluation prints.
pub struct Report {
    pub ndcg_at_10: f64,
    pub recall_at_10: f64,
    pub queries: usize,
    pub median_ranking: Duration,
    pub mean_ranking: Duration,
}

/// The simulated upstream: for each judged query, the BM25 top
/// [`CANDIDATES`] over the whole corpus, as (corpus index) lists.
fn upstream_candidates(beir: &Beir) -> Vec<(&QueryLine, QueryPlan, Vec<usize>)> {
    let texts: Vec<String> = (0..beir.corpus.len())
        .map(|i| beir.document_text(i))
        .collect();
    let upstream = Bm25::new(texts.iter().map(String::as_str));
    let now = jiff::Timestamp::now().as_second();
    beir.judged()
        .into_iter()
        .map(|query| {
            let plan = plan(&query.text, now);
            let hits = upstream.top(&plan.terms, &plan.phrases, CANDIDATES);
            (query, plan, hits)
        })
        .collect()
}

/// Evaluates with `weight` as the semantic weight of the fusion.
pub fn evaluate(
    dir: &Path,
    embedder: Option<&dyn Embedder>,
    budget: usize,
    weight: f32,
) -> Result<Report> {
    let beir = Beir::load(dir)?;
    let (mut ndcg, mut recall, mut times) = (0.0, 0.0, Vec::new());
    let asked = upstream_candidates(&beir);
    for (query, plan, hits) in &asked {
        let candidates = as_candidates(&beir, hits);
        let started = Instant::now();
        let semantic = match embedder {
            Some(e) => Some(Semantic::new(e, &query.text, budget)?.with_weight(weight)),
            None => None,
        };
        let ranked = rank(plan, &candidates, 10, semantic.as_ref())?;
        times.push(started.elapsed());
        let ids: Vec<&str> = ranked
            .iter()
            .map(|r| beir.corpus[hits[r.document_index]].id.as_str())
            .collect();
        let judged = &beir.qrels[&query.id];
        ndcg += ndcg_at_10(&ids, judged);
        recall += recall_at_10(&ids, judged);
    }
    let n = asked.len().max(1);
    times.sort();
    Ok(Report {
        ndcg_at_10: ndcg / n as f64,
        recall_at_10: recall / n as f64,
        queries: asked.len(),
        median_ranking: times.get(times.len() / 2).copied().unwrap_or_default(),
        mean_ranking: times.iter().sum::<Duration>() / n as u32,
    })
}

/// Corpus documents as one connector's candidates, in the given order.
fn as_candidates<'a>(beir: &'a Beir, hits: &[usize]) -> Vec<Candidate<'a>> {
    hits.iter()
        .enumerate()
        .map(|(position, &i)| Candidate {
            connector: "corpus",
            document_index: position,
            document_id: &beir.corpus[i].id,
            title: &beir.corpus[i].title,
            content: &beir.corpus[i].text,
        })
        .collect()
}

/// Measures the calibration of [`super::fuse::keyword_on_model_scale`]:
/// over every candidate passage of every judged query, the mean model
/// relevance of the passages in each tenth of keyword relevance, at the
/// knots 0.0, 0.1, …, 1.0 (each knot the mean of the passages around it),
/// made monotone by pooling adjacent violators.
pub fn calibrate(dir: &Path, embedder: &dyn Embedder) -> Result<[f32; 11]> {
    let beir = Beir::load(dir)?;
    let mut sums = [(0.0f64, 0u64); 11];
    for (query, plan, hits) in upstream_candidates(&beir) {
        let candidates = as_candidates(&beir, &hits);
        let passages = super::passages(&candidates);
        let lexical = super::lexical_relevance(&plan, &passages);
        let texts: Vec<&str> = passages.iter().map(|(_, p)| p.text.as_str()).collect();
        let semantic = Semantic::new(embedder, &query.text, usize::MAX)?;
        for (similarity, lexical) in semantic.similarities(&texts, &lexical)?.iter().zip(lexical) {
            let knot = (lexical.clamp(0.0, 1.0) * 10.0).round() as usize;
            let relevance = super::fuse::semantic_relevance(similarity.unwrap_or_default());
            sums[knot].0 += f64::from(relevance);
            sums[knot].1 += 1;
        }
    }
    Ok(monotone_means(&sums))
}

/// Means of (sum, count) bins, made non-decreasing by pooling adjacent
/// bins that violate the order (weighted by their counts); empty bins take
/// their left neighbour's value.
fn monotone_means(bins: &[(f64, u64); 11]) -> [f32; 11] {
    // Blocks of (sum, count, bins covered).
    let mut blocks: Vec<(f64, u64, usize)> = Vec::new();
    for &(sum, count) in bins {
        blocks.push((sum, count, 1));
        while blocks.len() > 1 {
            let (s2, c2, n2) = blocks[blocks.len() - 1];
            let (s1, c1, n1) = blocks[blocks.len() - 2];
            let mean = |s: f64, c: u64| if c == 0 { f64::NAN } else { s / c as f64 };
            if c2 == 0 || c1 == 0 || mean(s1, c1) <= mean(s2, c2) {
                break;
            }
            blocks.pop();
            blocks.pop();
            blocks.push((s1 + s2, c1 + c2, n1 + n2));
        }
    }
    let mut out = [0f32; 11];
    let (mut at, mut last) = (0, 0.0);
    for (sum, count, covered) in blocks {
        let value = if count == 0 {
            last
        } else {
            (sum / count as f64) as f32
        };
        for slot in &mut out[at..at + covered] {
            *slot = value;
        }
        at += covered;
        last = value;
    }
    out
}

pub fn ndcg_at_10(ranked: &[&str], judged: &HashMap<String, u32>) -> f64 {
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

pub fn recall_at_10(ranked: &[&str], judged: &HashMap<String, u32>) -> f64 {
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

    #[test]
    fn calibration_bins_become_monotone() {
        let mut bins = [(0.0, 0); 11];
        bins[0] = (2.0, 10); // 0.2
        bins[1] = (3.0, 10); // 0.3
        bins[2] = (1.0, 10); // 0.1: pooled with the one before
        bins[4] = (5.0, 10); // 0.5, after an empty bin
        let table = monotone_means(&bins);
        assert!((table[0] - 0.2).abs() < 1e-6);
        assert!((table[1] - 0.2).abs() < 1e-6 && (table[2] - 0.2).abs() < 1e-6);
        assert!(
            (table[3] - 0.2).abs() < 1e-6,
            "an empty bin keeps the left value"
        );
        assert!((table[4] - 0.5).abs() < 1e-6);
        assert!(table.windows(2).all(|w| w[0] <= w[1]));
    }
}
