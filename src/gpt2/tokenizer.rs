//! The tokenizers a checkpoint can name: GPT-2's byte-level BPE (OpenAI's `r50k_base`, via
//! `tiktoken-rs`: the same ids as Hugging Face's `GPT2TokenizerFast`, `<|endoftext|>` included,
//! id 50256), or a character vocabulary (`config.json`'s `char_vocab`, as the training lab's
//! checkpoints carry: token i is the i-th character of that string).

use std::collections::HashMap;

use tiktoken_rs::CoreBPE;

use super::RunError;

pub const END_OF_TEXT: u32 = 50256;

pub struct Tokenizer {
    kind: Kind,
}

enum Kind {
    Bpe(CoreBPE),
    /// Token i is `chars[i]`; `ids` maps each character back (a vocabulary may be large).
    Chars {
        chars: Vec<char>,
        ids: HashMap<char, u32>,
    },
}

impl Tokenizer {
    /// Builds the tokenizer from the ranks compiled into the binary (about 0.1 s natively).
    pub fn gpt2() -> Self {
        Tokenizer { kind: Kind::Bpe(tiktoken_rs::r50k_base().expect("the embedded r50k_base ranks parse")) }
    }

    /// One token per character of `vocab`, in order (`Config::char_vocab` checked it is no longer
    /// than the model's vocabulary).
    pub fn chars(vocab: &str) -> Self {
        let chars: Vec<char> = vocab.chars().collect();
        let ids = chars.iter().enumerate().map(|(i, &c)| (c, i as u32)).rev().collect(); // the first wins
        Tokenizer { kind: Kind::Chars { chars, ids } }
    }

    /// The characters of a character vocabulary, in id order (`None` for GPT-2's BPE).
    pub fn char_vocab(&self) -> Option<String> {
        match &self.kind {
            Kind::Bpe(_) => None,
            Kind::Chars { chars, .. } => Some(chars.iter().collect()),
        }
    }

    /// GPT-2's ids for `text`. A character vocabulary skips the characters it does not have:
    /// [`Tokenizer::encode_checked`] refuses them instead.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match &self.kind {
            Kind::Bpe(bpe) => bpe.encode_with_special_tokens(text),
            Kind::Chars { ids, .. } => text.chars().filter_map(|c| ids.get(&c).copied()).collect(),
        }
    }

    /// The ids for `text`; with a character vocabulary, a character outside it is refused with
    /// a message that names them and the characters the model reads.
    pub fn encode_checked(&self, text: &str) -> Result<Vec<u32>, RunError> {
        let Kind::Chars { chars, ids } = &self.kind else { return Ok(self.encode(text)) };
        let mut unknown: Vec<char> = Vec::new();
        let ids = text
            .chars()
            .filter_map(|c| {
                let id = ids.get(&c).copied();
                if id.is_none() && !unknown.contains(&c) {
                    unknown.push(c);
                }
                id
            })
            .collect();
        if unknown.is_empty() {
            Ok(ids)
        } else {
            Err(RunError::NotInVocabulary { found: unknown.into_iter().collect(), allowed: chars.iter().collect() })
        }
    }

    /// The bytes one token stands for (a BPE token may be part of a UTF-8 character). An id
    /// the tokenizer has no text for is its label, `<id>` (`unknown`).
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        match &self.kind {
            Kind::Bpe(bpe) => bpe.decode_bytes(&[id]).unwrap_or_else(|_| unknown(id).into_bytes()),
            Kind::Chars { .. } => self.token_text(id).into_bytes(),
        }
    }

    /// A token as text to show on a chip: invalid UTF-8 (half a character) becomes
    /// `\xNN` escapes rather than being dropped; an id the tokenizer has no text for, `<id>`.
    pub fn token_text(&self, id: u32) -> String {
        let bpe = match &self.kind {
            Kind::Bpe(bpe) => bpe,
            Kind::Chars { chars, .. } => {
                return chars.get(id as usize).map_or_else(|| unknown(id), |c| c.to_string());
            }
        };
        let Ok(bytes) = bpe.decode_bytes(&[id]) else { return unknown(id) };
        crate::formats::echo::token_chip_text(&bytes)
    }

    /// Decodes ids to text (invalid UTF-8 across the whole sequence becomes U+FFFD).
    pub fn decode(&self, ids: &[u32]) -> String {
        match &self.kind {
            Kind::Bpe(_) => {
                String::from_utf8_lossy(&ids.iter().flat_map(|&id| self.token_bytes(id)).collect::<Vec<_>>())
                    .into_owned()
            }
            Kind::Chars { .. } => ids.iter().map(|&id| self.token_text(id)).collect(),
        }
    }
}

/// The label of an id a tokenizer has no text for. A GPT-2 checkpoint may have more rows in
/// `wte` than the BPE's 50,257 tokens (nanoGPT pads to 50,304): the model can still pick one,
/// and it shows as `<50300>` rather than as nothing (the text would read as if it were lost).
fn unknown(id: u32) -> String {
    format!("<{id}>")
}
