//! Beam search as `transformers`' `generate` does it for an encoder–decoder (`num_beams`,
//! `length_penalty`, `early_stopping=False`), step for step, so that the page shows the
//! hypotheses the reference keeps: each step takes the 2N best continuations of the N running
//! beams by summed log-probability; those that end (`</s>`, or the length limit) among the first
//! N join the finished hypotheses, scored by the sum over length^penalty; the N best that do not
//! end run on. The search stops when no running beam can beat the worst finished hypothesis (the
//! best running score over the current length), or when every continuation ends.

use super::model::{Hypothesis, Marian, Options};
use super::DecoderCache;
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

struct Beam {
    tokens: Vec<u32>,
    score: f32,
    cache: DecoderCache,
}

struct Candidate {
    beam: usize,
    token: u32,
    score: f32,
    ends: bool,
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
        let n = set.beams.max(1);
        let max_len = 1 + set.max_new.max(1);
        let encoded = self.encode(source, &opts)?;
        let start =
            Beam { tokens: vec![self.config.decoder_start_token_id], score: 0.0, cache: self.new_cache(&encoded) };
        // What a beam's cache is swapped with while the step runs on all of them.
        let empty = start.cache.clone();
        // The first step's beams are copies of the start; all but one are ruled out.
        let mut running: Vec<Beam> = (0..n)
            .map(|i| Beam {
                score: if i == 0 { 0.0 } else { RULED_OUT },
                tokens: start.tokens.clone(),
                cache: start.cache.clone(),
            })
            .collect();
        let mut finished: Vec<(Hypothesis, bool)> =
            (0..n).map(|_| (Hypothesis { tokens: Vec::new(), score: RULED_OUT }, false)).collect();
        let (mut improvable, mut steps) = (true, Vec::new());
        let mut len = 1;
        loop {
            // Every running beam's next-token log-probabilities, plus its score: N × vocab candidates,
            // the N beams' step run together.
            let last: Vec<u32> =
                running.iter().map(|b| *b.tokens.last().expect("a beam has its start token")).collect();
            let mut caches: Vec<DecoderCache> =
                running.iter_mut().map(|b| std::mem::replace(&mut b.cache, empty.clone())).collect();
            let logits = self.decode_batch(&last, &mut caches, &opts)?;
            let mut scored: Vec<(f32, usize, u32)> = Vec::with_capacity(running.len() * logits.ncols());
            for (b, (beam, cache)) in running.iter_mut().zip(caches).enumerate() {
                beam.cache = cache;
                let lp = self.next_log_probs(logits.row(b), len, max_len);
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
            let eos = self.config.eos_token_id;
            let top: Vec<Candidate> = scored
                .into_iter()
                .take(2 * n)
                .map(|(score, beam, token)| Candidate { beam, token, score, ends: token == eos || len + 1 >= max_len })
                .collect();
            let tokens = |c: &Candidate| [&running[c.beam].tokens[..], &[c.token]].concat();
            // The finished hypotheses: the old ones and the candidates among the first N that end.
            let norm = (len as f32).powf(set.length_penalty);
            let mut merged = std::mem::take(&mut finished);
            for (i, c) in top.iter().enumerate() {
                // (`generate` also rules out every candidate once no running beam can improve: here the
                // search has stopped by then.)
                let just_finished = c.ends && i < n;
                let score = c.score / norm + if just_finished { 0.0 } else { RULED_OUT };
                merged.push((Hypothesis { tokens: tokens(c), score }, just_finished));
            }
            merged.sort_by(|a, b| b.0.score.total_cmp(&a.0.score));
            merged.truncate(n);
            finished = merged;
            // The running beams: the N best candidates that do not end.
            let mut next: Vec<(f32, &Candidate)> =
                top.iter().map(|c| (c.score + if c.ends { RULED_OUT } else { 0.0 }, c)).collect();
            next.sort_by(|a, b| b.0.total_cmp(&a.0));
            let all_end = top.iter().all(|c| c.ends);
            running = next
                .into_iter()
                .take(n)
                .map(|(score, c)| Beam { tokens: tokens(c), score, cache: running[c.beam].cache.clone() })
                .collect();
            len += 1;
            steps.push(Step {
                // A running beam that had to be taken from the ending candidates is not shown.
                running: running
                    .iter()
                    .filter(|b| b.score > RULED_OUT / 2.0)
                    .map(|b| Hypothesis { tokens: b.tokens.clone(), score: b.score })
                    .collect(),
                finished: finished.iter().filter(|f| f.1).map(|f| f.0.clone()).collect(),
            });
            // Can a running beam still beat the worst finished hypothesis?
            let best_running = running[0].score / ((len - 1) as f32).powf(set.length_penalty);
            let worst = finished.iter().map(|f| f.0.score).fold(f32::INFINITY, f32::min);
            improvable &= finished.iter().any(|f| best_running > if f.1 { worst } else { RULED_OUT });
            if !improvable || all_end {
                break;
            }
        }
        Ok((finished.into_iter().map(|f| f.0).collect(), steps))
    }
}
