//! The baseline is what the compute worker already holds: tiktoken-rs with GPT-2's ranks, and
//! serde_json. Each feature adds one way to load a `tokenizer.json`, encode and decode.
use std::slice;
use std::str;

/// # Safety
/// `p` points to `n` bytes of UTF-8.
#[no_mangle]
pub unsafe extern "C" fn baseline(p: *const u8, n: usize) -> usize {
    let s = unsafe { str::from_utf8_unchecked(slice::from_raw_parts(p, n)) };
    let v: serde_json::Value = serde_json::from_str(s).unwrap_or_default();
    tiktoken_rs::r50k_base().map_or(0, |bpe| bpe.encode_with_special_tokens(s).len()) + v.as_object().map_or(0, |o| o.len())
}

/// # Safety
/// As `baseline`.
#[cfg(feature = "tiktoken")]
#[no_mangle]
pub unsafe extern "C" fn tiktoken(p: *const u8, n: usize) -> usize {
    let s = unsafe { str::from_utf8_unchecked(slice::from_raw_parts(p, n)) };
    let ranks = s.split(' ').enumerate().map(|(i, w)| (w.as_bytes().to_vec(), i as u32)).collect();
    let bpe = tiktoken_rs::CoreBPE::new(ranks, Default::default(), r"\s+(?!\S)|\s+").unwrap();
    bpe.encode_ordinary(s).len() + bpe.decode_bytes(&[0]).map_or(0, |b| b.len())
}

#[cfg(feature = "own")]
#[path = "../../../src/llama/tokenizer.rs"]
#[allow(dead_code)]
mod llama_tokenizer;

/// # Safety
/// As `baseline`.
#[cfg(feature = "own")]
#[no_mangle]
pub unsafe extern "C" fn own(p: *const u8, n: usize) -> usize {
    let s = unsafe { str::from_utf8_unchecked(slice::from_raw_parts(p, n)) };
    let t = llama_tokenizer::Tokenizer::from_json(s).unwrap();
    let ids = t.encode(s);
    t.decode(&ids).len() + t.token_text(ids[0]).len() + t.check_vocab(n).map_or(0, |_| 1)
}

/// # Safety
/// As `baseline`.
#[cfg(feature = "hf")]
#[no_mangle]
pub unsafe extern "C" fn hf(p: *const u8, n: usize) -> usize {
    use std::str::FromStr;
    let s = unsafe { str::from_utf8_unchecked(slice::from_raw_parts(p, n)) };
    let t = tokenizers::Tokenizer::from_str(s).unwrap();
    let e = t.encode(s, false).unwrap();
    t.decode(e.get_ids(), false).unwrap().len()
}
