//! Marian's tokenizer, as `transformers`' `MarianTokenizer` reads a checkpoint's files: two
//! SentencePiece unigram models, `source.spm` for the text to translate and `target.spm` for the
//! translation, and one `vocab.json` mapping both models' pieces to the model's ids. A text is
//! split at the special tokens written in it (`</s>`, `<unk>`, `<pad>`), a leading language code
//! (`>>de<<`) is one token, each other part is segmented by the SentencePiece model (its
//! normalization, `nmt_nfkc` in OPUS-MT, included), each piece becomes its `vocab.json` id
//! (`<unk>` when it has none), and `</s>` ends the ids.
//!
//! The segmentation is the `sentencepiece-rust` crate's: docs/models.md gives the measurements
//! behind that choice.

use std::collections::HashMap;

use sentencepiece_rust::SentencePieceProcessor;

/// The special tokens the checkpoint's vocabulary must have.
const EOS: &str = "</s>";
const UNK: &str = "<unk>";
const PAD: &str = "<pad>";

/// SentencePiece's visible space.
const SPACE: char = '\u{2581}';

#[derive(Debug, Clone, PartialEq)]
pub struct TokenizerError(pub String);

impl std::fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub struct Tokenizer {
    source: SentencePieceProcessor,
    target: SentencePieceProcessor,
    ids: HashMap<String, u32>,
    /// id → piece, for every id `vocab.json` names.
    pieces: Vec<String>,
    eos: u32,
    unk: u32,
    pad: u32,
}

impl Tokenizer {
    /// Reads `source.spm`, `target.spm` and `vocab.json`, refusing a file that is not what its name
    /// says with the reason.
    pub fn from_files(source_spm: &[u8], target_spm: &[u8], vocab_json: &str) -> Result<Tokenizer, TokenizerError> {
        let model = |name: &str, bytes: &[u8]| {
            SentencePieceProcessor::from_bytes(bytes)
                .map_err(|e| TokenizerError(format!("{name} is not a SentencePiece model ({e})")))
        };
        let (source, target) = (model("source.spm", source_spm)?, model("target.spm", target_spm)?);
        let ids: HashMap<String, u32> = serde_json::from_str(vocab_json)
            .map_err(|e| TokenizerError(format!("vocab.json is not a map of pieces to ids ({e})")))?;
        let size = ids.values().map(|&id| id as usize + 1).max().unwrap_or(0);
        if size > crate::model::limits::MAX_VOCAB {
            return Err(TokenizerError(format!("vocab.json has an id of {}, past the limit", size - 1)));
        }
        let mut pieces = vec![String::new(); size];
        for (piece, &id) in &ids {
            pieces[id as usize] = piece.clone();
        }
        let special = |name: &str| {
            ids.get(name).copied().ok_or_else(|| TokenizerError(format!("vocab.json has no {name} token")))
        };
        let (eos, unk) = (special(EOS)?, special(UNK)?);
        let pad = ids.get(PAD).copied().unwrap_or(u32::MAX);
        Ok(Tokenizer { source, target, ids, pieces, eos, unk, pad })
    }

    /// The ids of a text to translate, ending with `</s>`.
    pub fn encode_source(&self, text: &str) -> Vec<u32> {
        self.encode(&self.source, text)
    }

    /// The ids of a translation (`text_target`), ending with `</s>`.
    pub fn encode_target(&self, text: &str) -> Vec<u32> {
        self.encode(&self.target, text)
    }

    fn encode(&self, model: &SentencePieceProcessor, mut text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        // The special tokens written in the text are tokens themselves; each part between them is
        // tokenized on its own, as `transformers` does.
        loop {
            let next = [EOS, UNK, PAD].iter().filter_map(|s| text.find(s).map(|at| (at, *s))).min();
            let (part, special) = match next {
                Some((at, s)) => (&text[..at], Some(s)),
                None => (text, None),
            };
            self.encode_part(model, part, &mut out);
            match special {
                Some(s) => {
                    out.push(self.id(s));
                    text = &text[part.len() + s.len()..];
                }
                None => break,
            }
        }
        out.push(self.eos);
        out
    }

    /// A part of the text without special tokens: a leading language code (`>>de<<`, for models
    /// that translate into several languages) is one token, the rest SentencePiece's pieces.
    fn encode_part(&self, model: &SentencePieceProcessor, mut part: &str, out: &mut Vec<u32>) {
        if let Some(end) = part.strip_prefix(">>").and_then(|rest| rest.find("<<")) {
            out.push(self.id(&part[..end + 4]));
            part = &part[end + 4..];
        }
        if !part.is_empty() {
            // The crate refuses nothing a valid model segments; a failure leaves the part unknown.
            match model.encode_pieces(part) {
                Ok(pieces) => out.extend(pieces.iter().map(|p| self.id(p))),
                Err(_) => out.push(self.unk),
            }
        }
    }

    fn id(&self, piece: &str) -> u32 {
        self.ids.get(piece).copied().unwrap_or(self.unk)
    }

    /// A translation's ids as text, special tokens left out (`decode(…, skip_special_tokens=True)`):
    /// the pieces joined as SentencePiece joins them (each piece's own text, a piece the target
    /// model lacks included), its spaces made plain, the ends trimmed.
    pub fn decode(&self, ids: &[u32]) -> String {
        let text: String = ids
            .iter()
            .filter(|&&id| id != self.eos && id != self.unk && id != self.pad)
            .filter_map(|&id| self.pieces.get(id as usize))
            .map(String::as_str)
            .collect();
        text.replace(SPACE, " ").trim().to_string()
    }

    /// One token as the page shows it: its piece, SentencePiece's space as a plain one.
    pub fn token_text(&self, id: u32) -> String {
        self.pieces.get(id as usize).map(|p| p.replace(SPACE, " ")).unwrap_or_default()
    }

    /// Refuses a vocabulary with ids the model has no row for.
    pub fn check_vocab(&self, vocab_size: usize) -> Result<(), TokenizerError> {
        match self.pieces.len() {
            n if n > vocab_size => Err(TokenizerError(format!(
                "vocab.json has {n} tokens but the model has {vocab_size} rows: they are not a pair"
            ))),
            _ => Ok(()),
        }
    }
}
