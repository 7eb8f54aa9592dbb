//! A translation model answering the page: a Marian checkpoint (`crate::marian`) with its
//! tokenizer. One question, one answer: the text to translate (greedy, or beam search with
//! `beams` beams, heads knocked out if asked) gives the translation, the hypotheses the search
//! kept and each of its steps, and the three attentions of the original Transformer on the
//! result: the encoder's self-attention over the source, the decoder's masked self-attention over
//! the translation, and the cross-attention from each written token to the source, per layer and
//! head.
//!
//! The attentions are those of the pass that wrote each token: the decoder runs once more over
//! the start token and the translation but its last token (teacher forcing, which gives the
//! steps' numbers up to rounding), so row i of the decoder's matrices belongs to the i-th written
//! token.

use ndarray::Array3;
use serde::{Deserialize, Serialize};

use super::protocol::Token;
use crate::formats::LoadError;
use crate::marian::model::Kind;
use crate::marian::{BeamSettings, Marian, Options, Tokenizer};
use crate::model::RunError;

/// The most beams a query may ask for.
pub const MAX_BEAMS: usize = 16;

/// Which attention of the three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    Encoder,
    Decoder,
    Cross,
}

impl AttentionKind {
    fn engine(self) -> Kind {
        match self {
            AttentionKind::Encoder => Kind::Encoder,
            AttentionKind::Decoder => Kind::Decoder,
            AttentionKind::Cross => Kind::Cross,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranslateQuery {
    pub id: u64,
    pub text: String,
    /// 1: greedy decoding; more: beam search (OPUS-MT's default is 4).
    pub beams: usize,
    /// Tokens written at most (the last forced to `</s>`).
    pub max_new: usize,
    /// (kind, layer, head) knocked out in the search and in the attentions shown.
    #[serde(default)]
    pub knock_out: Vec<(AttentionKind, usize, usize)>,
}

/// One hypothesis as the page shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hypothesis {
    pub text: String,
    /// Summed log-probability over length^penalty for a finished one, summed for a running one;
    /// none for greedy decoding's one hypothesis.
    pub score: Option<f32>,
}

/// The beams after one step of the search, best first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BeamStep {
    pub running: Vec<Hypothesis>,
    pub finished: Vec<Hypothesis>,
}

/// A translation and what the page draws of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    pub id: u64,
    /// The source's tokens, `</s>` last.
    pub source: Vec<Token>,
    /// The tokens written, `</s>` last unless the length limit cut the translation.
    pub target: Vec<Token>,
    pub text: String,
    /// The finished hypotheses, best first (one, for greedy decoding).
    pub hypotheses: Vec<Hypothesis>,
    /// Beam search's steps (none for greedy decoding).
    pub steps: Vec<BeamStep>,
    /// Per encoder layer (heads, S, S).
    pub encoder: Vec<Array3<f32>>,
    /// Per decoder layer (heads, T, T), T the tokens written.
    pub decoder: Vec<Array3<f32>>,
    /// Per decoder layer (heads, T, S).
    pub cross: Vec<Array3<f32>>,
}

pub struct TranslationSession {
    pub model: Marian,
    pub tokenizer: Tokenizer,
}

impl TranslationSession {
    /// A session on the checkpoint's files: `config.json`, `model.safetensors`, `source.spm`,
    /// `target.spm` and `vocab.json`; a tokenizer that does not fit the model is refused.
    pub fn load(
        config_json: &str,
        safetensors: &[u8],
        (source_spm, target_spm, vocab_json): (&[u8], &[u8], &str),
    ) -> Result<Self, LoadError> {
        let model = Marian::load(config_json, safetensors)?;
        let tokenizer = Tokenizer::from_files(source_spm, target_spm, vocab_json)
            .map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        TranslationSession::with_model(model, tokenizer)
    }

    pub fn with_model(model: Marian, tokenizer: Tokenizer) -> Result<Self, LoadError> {
        tokenizer.check_vocab(model.config.vocab_size).map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        Ok(TranslationSession { model, tokenizer })
    }

    /// Translates `q.text`.
    pub fn translate(&self, q: &TranslateQuery) -> Result<Translation, RunError> {
        let m = &self.model;
        let source = self.tokenizer.encode_source(&q.text);
        let knock_out: Vec<(Kind, usize, usize)> = q.knock_out.iter().map(|&(k, l, h)| (k.engine(), l, h)).collect();
        let opts = Options { knock_out: knock_out.clone(), ..Default::default() };
        // The window holds the start token and what is written; more beams than MAX_BEAMS are not
        // asked for (each multiplies the work of a step).
        let max_new = q.max_new.clamp(1, m.config.max_position_embeddings.saturating_sub(1).max(1));
        let set = BeamSettings { beams: q.beams.clamp(1, MAX_BEAMS), max_new, length_penalty: 1.0 };
        let text = |tokens: &[u32]| self.tokenizer.decode(tokens);
        let (written, hypotheses, steps) = if set.beams == 1 {
            let out = m.greedy_with(&source, set.max_new, &opts)?;
            let hyp = Hypothesis { text: text(&out), score: None };
            (out, vec![hyp], Vec::new())
        } else {
            let (hyps, steps) = m.beam_search_with(&source, set, &opts)?;
            let best = hyps.first().map(|h| h.tokens.clone()).ok_or(RunError::Empty)?;
            let view = |h: &crate::marian::Hypothesis| Hypothesis { text: text(&h.tokens), score: Some(h.score) };
            let steps = steps
                .iter()
                .map(|s| BeamStep {
                    running: s.running.iter().map(view).collect(),
                    finished: s.finished.iter().map(view).collect(),
                })
                .collect();
            (best, hyps.iter().map(view).collect(), steps)
        };
        // The attentions of the pass that wrote each token: the start token and the translation
        // but its last token in, one row per token written.
        let opts = Options { attentions: true, ..opts };
        let encoded = m.encode(&source, &opts)?;
        // `written` holds the start token and at least one token after it.
        let inputs = written.get(..written.len().saturating_sub(1)).filter(|t| !t.is_empty()).ok_or(RunError::Empty)?;
        let decoded = m.decode(inputs, &mut m.new_cache(&encoded), &opts)?;
        let token = |&id: &u32| Token { id, text: self.tokenizer.token_text(id) };
        Ok(Translation {
            id: q.id,
            source: source.iter().map(token).collect(),
            target: written.iter().skip(1).map(token).collect(),
            text: text(&written),
            hypotheses,
            steps,
            encoder: encoded.attentions,
            decoder: decoded.self_attentions,
            cross: decoded.cross_attentions,
        })
    }
}
