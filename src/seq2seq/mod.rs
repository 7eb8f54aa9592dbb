//! The "Why attention" chapter's recurrent encoder-decoders (GRU), trained by
//! `scripts/seq2seq/train.py` to reverse strings of letters, in six variants: a fixed context
//! vector (Cho et al. 2014), Bahdanau attention, and Luong's dot, general, concat and local-p.
//! DOM-free; `tests/book/seq2seq.rs` checks them against the training script's fixtures.

pub mod attention;
pub mod eval;
pub mod gru;
pub mod model;

pub use model::{Decoded, Models, Seq2Seq, Variant};

/// Token ids: padding, start, end, then 'a'..='z'.
pub const PAD: u32 = 0;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;
pub const VOCAB: usize = 29;

/// The source ids for a word: its letters, then `</s>`. Upper case is folded to lower case;
/// anything else is refused with a message naming it.
pub fn encode(text: &str) -> Result<Vec<u32>, String> {
    let mut ids = Vec::with_capacity(text.len() + 1);
    for c in text.trim().chars() {
        match c.to_ascii_lowercase() {
            l @ 'a'..='z' => ids.push(3 + (l as u32 - 'a' as u32)),
            other => {
                let other = crate::formats::echo::echo_char(other);
                return Err(format!("the models read only the letters a–z; {other} is not one"));
            }
        }
    }
    if ids.is_empty() {
        return Err("type at least one letter".into());
    }
    ids.push(EOS);
    Ok(ids)
}

/// Letters for ids (`</s>` and the other specials are left out).
pub fn decode(ids: &[u32]) -> String {
    ids.iter().filter(|&&i| (3..VOCAB as u32).contains(&i)).map(|&i| char::from(b'a' + (i - 3) as u8)).collect()
}

/// A label for one id, for axes: the letter, or `</s>`.
pub fn label(id: u32) -> String {
    match id {
        PAD => "<pad>".into(),
        BOS => "<s>".into(),
        EOS => "</s>".into(),
        i => decode(&[i]),
    }
}
