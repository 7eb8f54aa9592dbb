//! Beam search as `transformers`' `generate` does it for an encoder–decoder (`num_beams`,
//! `length_penalty`, `early_stopping=False`), step for step, so that the page shows the
//! hypotheses the reference keeps: each step takes the 2N best continuations of the N running
//! beams by summed log-probability; those that end (`</s>`, or the length limit) among the first
//! N join the finished hypotheses, scored by the sum over length^penalty; the N best that do not
//! end run on. The search stops when no running beam can beat the worst finished hypothesis (the
//! best running score over the current length), or when every continuation ends.
//!
//! `Search` is the bookkeeping alone: a backend runs the decoder on `Search::last_tokens`, hands
//! the logits to `Search::advance` and reorders its caches as the returned parents say. The CPU
//! drives it here (`Marian::beam_search_with`), the GPU in `marian::gpu`.

use ndarray::{Array1, ArrayView2};

use super::model::{Hypothesis, Marian, Options};
use super::Config;
use crate::model::RunError;

/// What `generate` adds to a score to rule it out.
const RULED_OUT: f32 = -1.0e9;

/// Beam search's settings: Marian's default is 4 beams, length penalty 1.
#[derive(Debug, Clone, Copy)]
pub struct BeamSettings {
    pub beams: usize,
    /// Tokens after the start token at most (the last one forced to `</s>`).
    pub max_new: usize,
    pub length_penalty: f32,
}

/// One step of the search, for the page, best first each: the beams still running after it
/// (summed log-probabilities) and the finished hypotheses kept so far (over length^penalty).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub running: Vec<Hypothesis>,
    pub finished: Vec<Hypothesis>,
}

struct Candidate {
    beam: usize,
    token: u32,
    score: f32,
    ends: bool,
}

/// The state of one beam search: the running beams (tokens and summed log-probabilities), the
/// finished hypotheses kept so far and the steps taken.
pub struct Search {
    set: BeamSettings,
    n: usize,
    max_len: usize,
    /// The target's length so far, its start token included.
    len: usize,
    running: Vec<Hypothesis>,
    /// Each kept hypothesis, and whether it really finished (the placeholders are ruled out).
    finished: Vec<(Hypothesis, bool)>,
    improvable: bool,
    done: bool,
    steps: Vec<Step>,
}

impl Search {
    /// N beams from the decoder start token; all but the first ruled out, as `generate` starts.
    pub fn new(config: &Config, set: BeamSettings) -> Search {
        let n = set.beams.max(1);
        let start = vec![config.decoder_start_token_id];
        let running =
            (0..n).map(|i| Hypothesis { tokens: start.clone(), score: if i == 0 { 0.0 } else { RULED_OUT } }).collect();
        let finished = (0..n).map(|_| (Hypothesis { tokens: Vec::new(), score: RULED_OUT }, false)).collect();
        Search {
            set,
            n,
            max_len: 1 + set.max_new.max(1),
            len: 1,
            running,
            finished,
            improvable: true,
            done: false,
            steps: Vec::new(),
        }
    }

    /// The number of beams, N: the rows of every step's logits.
    pub fn beams(&self) -> usize {
        self.n
    }

    /// The longest target, its start token included: what a decoder cache must hold.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Each running beam's last token: what the decoder reads next, one row a beam.
    pub fn last_tokens(&self) -> Vec<u32> {
        self.running.iter().map(|b| *b.tokens.last().expect("a beam has its start token")).collect()
    }

    /// Whether the search has stopped (`advance` then does nothing).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// One step from the decoder's logits for each running beam's next token, (N, vocab).
    /// Returns, for each new running beam, the beam it continues (whose cache it takes).
    /// `logits` has one row per beam (`beams()`); with fewer the search stops where it is, and once
    /// it is done nothing changes.
    pub fn advance(&mut self, config: &Config, logits: ArrayView2<f32>) -> Vec<usize> {
        if self.done || logits.nrows() < self.running.len() {
            self.done = true;
            return Vec::new();
        }
        let (n, len, max_len) = (self.n, self.len, self.max_len);
        // Every running beam's next-token log-probabilities, plus its score: N × vocab candidates.
        let mut scored: Vec<(f32, usize, u32)> = Vec::with_capacity(n * logits.ncols());
        for (b, beam) in self.running.iter().enumerate() {
            let lp = next_log_probs(config, logits.row(b), len, max_len);
            scored.extend(lp.iter().enumerate().map(|(v, &p)| (p + beam.score, b, v as u32)));
        }
        // The 2N best (ties: the lower flat index first): selected, then only they are sorted.
        let order =
            |a: &(f32, usize, u32), b: &(f32, usize, u32)| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2)));
        let keep = (2 * n).min(scored.len());
        if keep < scored.len() {
            scored.select_nth_unstable_by(keep, order);
        }
        scored.truncate(keep);
        scored.sort_by(order);
        let eos = config.eos_token_id;
        let top: Vec<Candidate> = scored
            .into_iter()
            .map(|(score, beam, token)| Candidate { beam, token, score, ends: token == eos || len + 1 >= max_len })
            .collect();
        let tokens = |c: &Candidate| [&self.running[c.beam].tokens[..], &[c.token]].concat();
        // The finished hypotheses: the old ones and the candidates among the first N that end.
        let norm = (len as f32).powf(self.set.length_penalty);
        let mut merged = std::mem::take(&mut self.finished);
        for (i, c) in top.iter().enumerate() {
            // (`generate` also rules out every candidate once no running beam can improve: here the
            // search has stopped by then.)
            let just_finished = c.ends && i < n;
            let score = c.score / norm + if just_finished { 0.0 } else { RULED_OUT };
            merged.push((Hypothesis { tokens: tokens(c), score }, just_finished));
        }
        merged.sort_by(|a, b| b.0.score.total_cmp(&a.0.score));
        merged.truncate(n);
        self.finished = merged;
        // The running beams: the N best candidates that do not end.
        let mut next: Vec<(f32, &Candidate)> =
            top.iter().map(|c| (c.score + if c.ends { RULED_OUT } else { 0.0 }, c)).collect();
        next.sort_by(|a, b| b.0.total_cmp(&a.0));
        let all_end = top.iter().all(|c| c.ends);
        let (running, parents): (Vec<Hypothesis>, Vec<usize>) =
            next.into_iter().take(n).map(|(score, c)| (Hypothesis { tokens: tokens(c), score }, c.beam)).unzip();
        self.running = running;
        self.len += 1;
        self.steps.push(Step {
            // A running beam that had to be taken from the ending candidates is not shown.
            running: self.running.iter().filter(|b| b.score > RULED_OUT / 2.0).cloned().collect(),
            finished: self.finished.iter().filter(|f| f.1).map(|f| f.0.clone()).collect(),
        });
        // Can a running beam still beat the worst finished hypothesis?
        let best_running = self.running[0].score / ((self.len - 1) as f32).powf(self.set.length_penalty);
        let worst = self.finished.iter().map(|f| f.0.score).fold(f32::INFINITY, f32::min);
        self.improvable &= self.finished.iter().any(|f| best_running > if f.1 { worst } else { RULED_OUT });
        self.done = !self.improvable || all_end;
        parents
    }

    /// The finished hypotheses, best first (`num_return_sequences` = N), and every step.
    pub fn finish(self) -> (Vec<Hypothesis>, Vec<Step>) {
        (self.finished.into_iter().map(|f| f.0).collect(), self.steps)
    }
}

/// The log-probabilities of the next token from a decoder step's last logits, after `generate`'s
/// rules for OPUS-MT: the pad token is never written (`bad_words_ids`), and at the last step
/// allowed only `</s>` is, with log-probability 0 (`forced_eos_token_id`). `len` counts the
/// target's tokens so far (the start token included).
pub fn next_log_probs(config: &Config, logits: ndarray::ArrayView1<f32>, len: usize, max_len: usize) -> Array1<f32> {
    let max = logits.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let sum: f32 = logits.iter().map(|&v| (v - max).exp()).sum();
    let log_sum = sum.ln();
    let mut lp = logits.mapv(|v| v - max - log_sum);
    lp[config.pad_token_id as usize] = f32::NEG_INFINITY;
    if len + 1 >= max_len {
        let eos = config.eos_token_id as usize;
        lp.fill(f32::NEG_INFINITY);
        lp[eos] = 0.0;
    }
    lp
}

impl Marian {
    /// The finished hypotheses, best first (`num_return_sequences` = `beams`), and every step.
    pub fn beam_search(&self, source: &[u32], set: BeamSettings) -> Result<(Vec<Hypothesis>, Vec<Step>), RunError> {
        self.beam_search_with(source, set, &Options::default())
    }

    /// `beam_search` with the heads `opts.knock_out` names knocked out (nothing else of `opts` is
    /// kept).
    pub fn beam_search_with(
        &self,
        source: &[u32],
        set: BeamSettings,
        opts: &Options,
    ) -> Result<(Vec<Hypothesis>, Vec<Step>), RunError> {
        let opts = Options { knock_out: opts.knock_out.clone(), ..Default::default() };
        let mut search = Search::new(&self.config, set);
        let start = self.new_cache(&self.encode(source, &opts)?);
        let mut caches = vec![start; search.beams()];
        loop {
            // The N beams' step run together.
            let logits = self.decode_batch(&search.last_tokens(), &mut caches, &opts)?;
            let parents = search.advance(&self.config, logits.view());
            if search.is_done() {
                return Ok(search.finish());
            }
            caches = parents.iter().map(|&p| caches[p].clone()).collect();
        }
    }
}
