//! Looking inside a model, for every decoder family on either backend: the logit lens, activation
//! patching and head detectors. Every forward pass goes through the session's engine, so a GPU
//! failure falls back to the CPU as any request does.
//!
//! - The logit lens reads the residual stream at every boundary (0: after the embeddings;
//!   l + 1: after block l) through the final norm and the LM head, as if the model stopped there.
//! - Activation patching runs the corrupted prompt with one activation of the clean run written
//!   in: a row of the residual stream at one boundary, or one head's output at every position.
//!   The metric is the logit difference of two answer tokens at the last position. A sweep
//!   reuses the corrupted run's KV cache: a patch at position p changes nothing before p, so each
//!   run starts at p (the positions before the first difference are never run: there the clean
//!   and corrupted activations are the same).
//! - Head detectors score every head on a repeated random sequence (`numerics::detectors`).

use ndarray::{s, Array2};
use serde::{Deserialize, Serialize};

use super::family::ModelFamily;
use super::protocol::{Candidate, Token};
use super::serve::Session;
use crate::model::engine::Cache;
use crate::model::patch::{HeadPatch, ResidualPatch};
use crate::model::{Capture, ForwardOptions, Patches, RunError};
use crate::numerics::detectors::{head_scores, top_probs};
use crate::numerics::rng::Rng;

/// The most likely tokens the lens shows per cell, and a patched run's next-token list.
pub const LENS_TOP: usize = 5;
/// The longest prompt the lens and patching read: the lens keeps (layers + 1) × T × vocab
/// probabilities in flight, and a sweep runs (layers + 1) × T passes.
pub const MAX_TOKENS: usize = 64;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LensQuery {
    pub id: u64,
    pub prompt: String,
    /// The token whose probability is followed across layers, as text ("": the model's own
    /// choice at the last position).
    #[serde(default)]
    pub track: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Lens {
    pub id: u64,
    pub tokens: Vec<Token>,
    /// Per boundary (0: after the embeddings; l + 1: after block l), per position: the
    /// `LENS_TOP` most likely next tokens read there.
    pub top: Vec<Vec<Vec<Candidate>>>,
    pub track: Token,
    /// Per boundary, per position: the followed token's probability.
    pub track_probs: Vec<Vec<f64>>,
    #[serde(default)]
    pub compute_ms: f64,
}

/// Which activations a patching sweep patches.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Sweep {
    #[default]
    Residual,
    Heads,
    Both,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PatchQuery {
    pub id: u64,
    pub clean: String,
    pub corrupt: String,
    /// The answer the clean prompt should get, one token ("": the clean run's most likely).
    #[serde(default)]
    pub answer: String,
    /// The corrupted prompt's answer ("": the corrupted run's most likely other than `answer`).
    #[serde(default)]
    pub wrong: String,
    #[serde(default)]
    pub sweep: Sweep,
}

/// One run's outcome: the metric (logit of the answer − logit of the wrong answer, at the last
/// position) and the most likely next tokens.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Run {
    pub metric: f32,
    pub next: Vec<Candidate>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Patching {
    pub id: u64,
    pub clean: Vec<Token>,
    pub corrupt: Vec<Token>,
    pub answer: Token,
    pub wrong: Token,
    /// The first position where the prompts differ (before it every patch changes nothing).
    pub first: usize,
    pub clean_run: Run,
    pub corrupt_run: Run,
    /// (layers + 1) × T: the residual stream at boundary b, position p patched (empty when the
    /// sweep left it out).
    pub residual: Vec<Vec<Run>>,
    /// layers × heads: head h of layer l patched at every position.
    pub heads: Vec<Vec<Run>>,
    #[serde(default)]
    pub compute_ms: f64,
}

impl Patching {
    /// How much of the clean run's metric a patched run restores: 0 for the corrupted run's
    /// metric, 1 for the clean run's (NaN when the two runs agree).
    pub fn restored(&self, metric: f32) -> f32 {
        (metric - self.corrupt_run.metric) / (self.clean_run.metric - self.corrupt_run.metric)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HeadsQuery {
    pub id: u64,
    /// The length of the random sequence, which is repeated once.
    pub n: usize,
    pub seed: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HeadScores {
    pub id: u64,
    /// prefix + r + r.
    pub tokens: Vec<Token>,
    pub n: usize,
    /// The prefix's length (a start token the tokenizer puts first).
    pub offset: usize,
    /// layers × heads each (`numerics::detectors::head_scores`).
    pub previous: Vec<Vec<f32>>,
    pub induction: Vec<Vec<f32>>,
    pub duplicate: Vec<Vec<f32>>,
    #[serde(default)]
    pub compute_ms: f64,
}

/// The longest random sequence the detectors repeat.
pub const MAX_REPEAT: usize = 100;

/// A patching sweep under way: the clean run's activations, the corrupted run's cache, and the
/// cells still to run (the worker runs one at a time, with progress, until done or stopped).
pub struct PatchSweep {
    answer: Patching,
    corrupt: Vec<u32>,
    clean_hidden: Vec<Array2<f32>>,
    clean_heads: Vec<Array2<f32>>,
    cache: Cache,
    cells: Vec<Cell>,
    done: usize,
}

#[derive(Debug, Clone, Copy)]
enum Cell {
    Residual { boundary: usize, position: usize },
    Head { layer: usize, head: usize },
}

impl PatchSweep {
    /// Runs done, of `total`.
    pub fn done(&self) -> usize {
        self.done
    }
    pub fn total(&self) -> usize {
        self.cells.len()
    }
    pub fn finished(&self) -> bool {
        self.done == self.cells.len()
    }
    /// The answer, once finished.
    pub fn answer(self) -> Patching {
        self.answer
    }
}

impl<F: ModelFamily> Session<F> {
    fn check_length(&self, what: &str, t: usize) -> Result<(), RunError> {
        if t > MAX_TOKENS {
            return Err(RunError::Inside(format!("{what} reads at most {MAX_TOKENS} tokens; this prompt has {t}")));
        }
        Ok(())
    }

    /// The prompt's tokens for a look-inside request: the whole prompt, within the window and
    /// `MAX_TOKENS`.
    fn inside_tokens(&self, what: &str, prompt: &str) -> Result<Vec<u32>, RunError> {
        let (ids, dropped) = self.tokens(prompt)?;
        self.check_length(what, ids.len() + dropped)?;
        Ok(ids)
    }

    fn candidates_of(&self, top: &[(u32, f32)]) -> Vec<Candidate> {
        top.iter().map(|&(id, p)| Candidate { id, text: F::token_text(self.tokenizer(), id), prob: p as f64 }).collect()
    }

    /// The logit lens on a prompt: every boundary's reading at every position.
    pub async fn lens(&self, q: &LensQuery) -> Result<Lens, RunError> {
        let ids = self.inside_tokens("The logit lens", &q.prompt)?;
        let track = if q.track.is_empty() { None } else { Some(self.one_token("token to follow", &q.track)?) };
        self.lens_ids(q.id, &ids, track).await
    }

    /// The logit lens on tokens, following `track` (None: the model's own last choice).
    pub async fn lens_ids(&self, id: u64, ids: &[u32], track: Option<u32>) -> Result<Lens, RunError> {
        self.check_length("The logit lens", ids.len())?;
        let opts = ForwardOptions { hidden_states: true, ..Default::default() };
        let out = self.run(&[], ids, &mut self.engine().new_cache(ids.len()), &opts).await?;
        let vocab = self.shape().vocab;
        // The model's own choice at the last position: the last boundary's last row, read alone.
        let t = ids.len();
        let last = out.hidden_states.last().map(|x| self.model.read_out(x.slice(s![t - 1.., ..])));
        let own = last.map_or(0, |l| top_probs(l.row(0), 1).1.first().map_or(0, |c| c.0));
        let track = track.filter(|&t| (t as usize) < vocab).unwrap_or(own);
        // One boundary's (T, vocab) probabilities at a time.
        let (mut top, mut track_probs) = (Vec::new(), Vec::new());
        for x in &out.hidden_states {
            let logits = self.model.read_out(x.view());
            let (mut cells, mut followed) = (Vec::with_capacity(t), Vec::with_capacity(t));
            for row in logits.rows() {
                let (p, best) = top_probs(row, LENS_TOP);
                cells.push(self.candidates_of(&best));
                followed.push(p[track as usize] as f64);
            }
            top.push(cells);
            track_probs.push(followed);
        }
        Ok(Lens { id, tokens: self.tokens_of(ids), top, track: self.token(track), track_probs, compute_ms: 0.0 })
    }

    fn tokens_of(&self, ids: &[u32]) -> Vec<Token> {
        ids.iter().map(|&id| self.token(id)).collect()
    }

    /// `text` as exactly one token of the vocabulary (an answer to patch towards).
    fn one_token(&self, what: &str, text: &str) -> Result<u32, RunError> {
        let ids = F::text_tokens(self.tokenizer(), text)?;
        match ids[..] {
            [id] => Ok(id),
            _ => Err(RunError::Inside(format!(
                "the {what} must be one token, but {} is {} tokens ({})",
                crate::formats::echo::echo(text),
                ids.len(),
                ids.iter()
                    .map(|&id| crate::formats::echo::echo(&F::token_text(self.tokenizer(), id)))
                    .collect::<Vec<_>>()
                    .join(" ")
            ))),
        }
    }

    fn outcome(&self, logits: ndarray::ArrayView1<f32>, answer: u32, wrong: u32) -> Run {
        let (_, top) = top_probs(logits, LENS_TOP);
        Run { metric: logits[answer as usize] - logits[wrong as usize], next: self.candidates_of(&top) }
    }

    /// Runs the clean and the corrupted prompt and lays out the sweep's cells.
    pub async fn start_patching(&self, q: &PatchQuery) -> Result<PatchSweep, RunError> {
        let clean = self.inside_tokens("Patching", &q.clean)?;
        let corrupt = self.inside_tokens("Patching", &q.corrupt)?;
        let one = |what, text: &str| (!text.is_empty()).then(|| self.one_token(what, text)).transpose();
        let answers = (one("answer", &q.answer)?, one("wrong answer", &q.wrong)?);
        self.start_patching_ids(q.id, clean, corrupt, answers, q.sweep).await
    }

    /// `start_patching` on tokens, with the answer and the wrong answer when given (else the
    /// clean run's most likely token, and the corrupted run's most likely other one).
    pub async fn start_patching_ids(
        &self,
        id: u64,
        clean: Vec<u32>,
        corrupt: Vec<u32>,
        answers: (Option<u32>, Option<u32>),
        sweep: Sweep,
    ) -> Result<PatchSweep, RunError> {
        self.check_length("Patching", clean.len().max(corrupt.len()))?;
        if clean.len() != corrupt.len() {
            return Err(RunError::Inside(format!(
                "the two prompts must have the same number of tokens to patch one into the other: the clean one \
                 has {}, the corrupted one {}",
                clean.len(),
                corrupt.len()
            )));
        }
        let t = clean.len();
        let Some(first) = clean.iter().zip(&corrupt).position(|(a, b)| a != b) else {
            return Err(RunError::Inside(
                "the two prompts are the same tokens: change one word of the corrupted one".into(),
            ));
        };
        let c = self.shape();
        let opts = ForwardOptions { hidden_states: true, head_outputs: true, ..Default::default() };
        let clean_out = self.run(&[], &clean, &mut self.engine().new_cache(t), &opts).await?;
        let mut cache = self.engine().new_cache(t);
        let corrupt_out = self.run(&[], &corrupt, &mut cache, &ForwardOptions::default()).await?;
        let (cl, co) = (clean_out.logits.row(clean_out.logits.nrows() - 1), corrupt_out.logits.row(0));
        let answer = answers.0.unwrap_or_else(|| top_probs(cl, 1).1[0].0);
        let wrong = answers.1.unwrap_or_else(|| {
            let (_, top) = top_probs(co, 2);
            top.iter().map(|t| t.0).find(|&t| t != answer).unwrap_or(answer)
        });
        let vocab = self.shape().vocab;
        if let Some(&bad) = [answer, wrong].iter().find(|&&t| t as usize >= vocab) {
            return Err(RunError::TokenOutOfRange { id: bad, vocab });
        }
        let clean_run = self.outcome(cl, answer, wrong);
        let corrupt_run = self.outcome(co, answer, wrong);
        let mut cells = Vec::new();
        let mut residual = Vec::new();
        if sweep != Sweep::Heads {
            // Latest position first: each run truncates the cache to its position, and the runs
            // after it need only the positions before.
            for position in (first..t).rev() {
                cells.extend((0..=c.layers).map(|boundary| Cell::Residual { boundary, position }));
            }
            // Before the first difference a patch writes the value already there.
            residual = vec![vec![corrupt_run.clone(); t]; c.layers + 1];
        }
        let mut heads = Vec::new();
        if sweep != Sweep::Residual {
            cells.extend((0..c.layers).flat_map(|layer| (0..c.heads).map(move |head| Cell::Head { layer, head })));
            heads = vec![vec![corrupt_run.clone(); c.heads]; c.layers];
        }
        let answer = Patching {
            id,
            clean: self.tokens_of(&clean),
            corrupt: self.tokens_of(&corrupt),
            answer: self.token(answer),
            wrong: self.token(wrong),
            first,
            clean_run,
            corrupt_run,
            residual,
            heads,
            compute_ms: 0.0,
        };
        Ok(PatchSweep {
            answer,
            corrupt,
            clean_hidden: clean_out.hidden_states,
            clean_heads: clean_out.head_outputs,
            cache,
            cells,
            done: 0,
        })
    }

    /// Runs the sweep's next cell (nothing once finished).
    pub async fn patch_step(&self, sw: &mut PatchSweep) -> Result<(), RunError> {
        let Some(&cell) = sw.cells.get(sw.done) else { return Ok(()) };
        let d = self.shape().head_dim;
        let (from, patches) = match cell {
            Cell::Residual { boundary, position } => {
                let value = sw.clean_hidden[boundary].row(position).to_vec();
                (position, Patches { residual: vec![ResidualPatch { boundary, row: 0, value }], heads: vec![] })
            }
            Cell::Head { layer, head } => {
                let first = sw.answer.first;
                let rows = sw.clean_heads[layer].slice(s![first.., head * d..(head + 1) * d]);
                let value = rows.iter().copied().collect();
                (first, Patches { residual: vec![], heads: vec![HeadPatch { layer, head, value }] })
            }
        };
        sw.cache.truncate(from);
        let opts = ForwardOptions { patches, ..Default::default() };
        let out = self.run(&sw.corrupt[..from], &sw.corrupt[from..], &mut sw.cache, &opts).await?;
        let (a, w) = (sw.answer.answer.id, sw.answer.wrong.id);
        let run = self.outcome(out.logits.row(0), a, w);
        match cell {
            Cell::Residual { boundary, position } => sw.answer.residual[boundary][position] = run,
            Cell::Head { layer, head } => sw.answer.heads[layer][head] = run,
        }
        sw.done += 1;
        Ok(())
    }

    /// A whole sweep at once (the native tests and the benchmark; the worker steps it).
    pub async fn patching(&self, q: &PatchQuery) -> Result<Patching, RunError> {
        let mut sw = self.start_patching(q).await?;
        while !sw.finished() {
            self.patch_step(&mut sw).await?;
        }
        Ok(sw.answer())
    }

    /// The repeated random sequence the detectors read: the prefix the tokenizer puts first,
    /// then n random capital letters (" Q", " F", … each one token where the vocabulary has
    /// them, else random ids), twice. A character model (the training lab's) reads its own
    /// letters after its start mark `^` where it has one.
    pub fn repeated_sequence(&self, n: usize, seed: u32) -> Result<(Vec<u32>, usize), RunError> {
        let tok = self.tokenizer();
        let single = |text: &str| match F::text_tokens(tok, text).ok()?[..] {
            [id] => Some(id),
            _ => None,
        };
        let (prefix, letters) = match F::char_vocab(tok) {
            Some(vocab) => {
                let prefix: Vec<u32> = vocab.contains('^').then(|| single("^")).flatten().into_iter().collect();
                let letters: Vec<u32> =
                    vocab.chars().filter(char::is_ascii_alphabetic).filter_map(|ch| single(&ch.to_string())).collect();
                (prefix, letters)
            }
            None => {
                let (full, _) = self.tokens(" A")?;
                let own = F::text_tokens(tok, " A")?;
                let offset = own.first().and_then(|a| full.iter().position(|t| t == a)).unwrap_or(0);
                let letters: Vec<u32> = ('A'..='Z').filter_map(|ch| single(&format!(" {ch}"))).collect();
                (full[..offset].to_vec(), if letters.len() == 26 { letters } else { Vec::new() })
            }
        };
        let mut rng = Rng::new(seed as u64);
        let vocab = self.shape().vocab as u64;
        let r: Vec<u32> = (0..n)
            .map(|_| {
                if letters.len() >= 2 {
                    letters[(rng.next_u64() % letters.len() as u64) as usize]
                } else {
                    (rng.next_u64() % vocab) as u32
                }
            })
            .collect();
        Ok(([&prefix[..], &r, &r].concat(), prefix.len()))
    }

    /// Every head's previous-token, induction and duplicate-token score on a repeated random
    /// sequence of `q.n` tokens.
    pub async fn head_detectors(&self, q: &HeadsQuery) -> Result<HeadScores, RunError> {
        let c = self.shape();
        let n = q.n.clamp(2, MAX_REPEAT);
        let (ids, offset) = self.repeated_sequence(n, q.seed)?;
        if ids.len() > c.window {
            return Err(RunError::TooLong { len: ids.len(), window: c.window });
        }
        self.head_scores_on(q.id, &ids, n, offset).await
    }

    /// The three scores on given tokens (prefix of `offset`, then r and r of n each).
    pub async fn head_scores_on(&self, id: u64, ids: &[u32], n: usize, offset: usize) -> Result<HeadScores, RunError> {
        let opts = ForwardOptions { capture: Capture::All, ..Default::default() };
        let out = self.run(&[], ids, &mut self.engine().new_cache(ids.len()), &opts).await?;
        let (mut previous, mut induction, mut duplicate) = (Vec::new(), Vec::new(), Vec::new());
        for att in out.attentions.iter().flatten() {
            let [p, i, d] = head_scores(att.view(), n, offset);
            previous.push(p);
            induction.push(i);
            duplicate.push(d);
        }
        Ok(HeadScores { id, tokens: self.tokens_of(ids), n, offset, previous, induction, duplicate, compute_ms: 0.0 })
    }
}
