//! The largest sizes a checkpoint's `config.json` may give, for every family: far past any model
//! the book runs (GPT-2 XL: 48 layers of width 1,600; Llama 3 8B: width 4,096, MLP 14,336,
//! 128,256 tokens) and small enough that every product of them (the MLP's width, the parameter
//! count) fits in a u64 and each dimension in a 32-bit usize. Each family names its own window's
//! limit (a table of learned positions is a size; RoPE's window is only a number).

use crate::formats::LoadError;

pub const MAX_LAYERS: usize = 1 << 10;
/// The model width C.
pub const MAX_WIDTH: usize = 1 << 16;
/// The MLP's hidden width.
pub const MAX_FFN: usize = 1 << 18;
pub const MAX_HEADS: usize = 1 << 10;
pub const MAX_HEAD_DIM: usize = 1 << 12;
pub const MAX_VOCAB: usize = 1 << 20;
/// The most parameters a model may have. In the browser's 32-bit build the f32 weights and the
/// file share 4 GiB of memory: 2²⁹ (2 GiB of weights: GPT-2 medium, 355M, fits; large, 774M,
/// is refused with this message rather than failing an allocation); natively 2³⁴.
pub const MAX_PARAMS: u64 = if cfg!(target_pointer_width = "32") { 1 << 29 } else { 1 << 34 };

/// Refuses a size that is zero or past its limit, naming the field: each entry is the field's
/// name in `config.json`, its value and its limit.
pub fn check_sizes(sizes: &[(&str, usize, usize)]) -> Result<(), LoadError> {
    for &(name, v, max) in sizes {
        if v == 0 {
            return Err(LoadError::Config(format!("`{name}` must be positive")));
        }
        if v > max {
            return Err(LoadError::Config(format!("`{name}` = {v} is past the limit: at most {max}")));
        }
    }
    Ok(())
}

/// Refuses a parameter count past [`MAX_PARAMS`] (None: it overflowed a u64).
pub fn check_params(count: Option<u64>) -> Result<(), LoadError> {
    match count {
        Some(n) if n <= MAX_PARAMS => Ok(()),
        n => Err(LoadError::Config(format!(
            "these sizes make a model of {} parameters; this build runs at most {MAX_PARAMS}",
            n.map_or("more than 2^64".to_string(), |n| n.to_string())
        ))),
    }
}
