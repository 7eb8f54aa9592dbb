//! A strict reader of the safetensors container: an 8-byte little-endian header length N, N bytes
//! of JSON (`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {…}}`),
//! then the tensor bytes, offsets counted from the end of the header. Every way a file can be
//! wrong is a `LoadError`, never a panic or an out-of-bounds read.

use std::collections::BTreeMap;

use serde_json::Value;

use super::LoadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F32,
    F16,
    BF16,
}

impl Dtype {
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::BF16 => 2,
        }
    }
}

/// One tensor's entry in the header, checked against the file.
#[derive(Debug, Clone)]
pub struct TensorInfo {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    /// Absolute byte range in the file.
    pub start: usize,
    pub end: usize,
}

/// A parsed file: the header's entries and the bytes they point into.
pub struct SafeTensors<'a> {
    bytes: &'a [u8],
    pub tensors: BTreeMap<String, TensorInfo>,
    pub metadata: BTreeMap<String, String>,
}

/// Headers larger than this are refused before they are read (the real GPT-2 header is ~15 KB).
const MAX_HEADER: u64 = 100 << 20;

impl<'a> SafeTensors<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self, LoadError> {
        let have = bytes.len() as u64;
        if bytes.len() < 8 {
            return Err(LoadError::Truncated { needed: 8, have });
        }
        let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        if n > MAX_HEADER {
            return Err(LoadError::BadHeader(format!("it declares a {n}-byte header; is this a safetensors file?")));
        }
        if 8 + n > have {
            return Err(LoadError::Truncated { needed: 8 + n, have });
        }
        let data_start = 8 + n as usize;
        let header = std::str::from_utf8(&bytes[8..data_start])
            .map_err(|_| LoadError::BadHeader("the header is not UTF-8 text".into()))?;
        let json: Value = serde_json::from_str(header.trim_end())
            .map_err(|e| LoadError::BadHeader(format!("not valid JSON ({e})")))?;
        let Value::Object(entries) = json else {
            return Err(LoadError::BadHeader("the header is not a JSON object".into()));
        };
        let mut tensors = BTreeMap::new();
        let mut metadata = BTreeMap::new();
        for (name, entry) in entries {
            if name == "__metadata__" {
                if let Value::Object(m) = entry {
                    for (k, v) in m {
                        metadata.insert(k, v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
                    }
                }
                continue;
            }
            let info = Self::entry(&name, &entry, data_start, bytes.len())?;
            tensors.insert(name, info);
        }
        Ok(SafeTensors { bytes, tensors, metadata })
    }

    fn entry(name: &str, entry: &Value, data_start: usize, file_len: usize) -> Result<TensorInfo, LoadError> {
        let bad = |reason: String| LoadError::BadOffsets { tensor: name.to_string(), reason };
        let dtype_text = entry
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| LoadError::BadHeader(format!("tensor `{name}` has no dtype")))?;
        let dtype = match dtype_text {
            "F32" => Dtype::F32,
            "F16" => Dtype::F16,
            "BF16" => Dtype::BF16,
            other => return Err(LoadError::UnknownDtype { tensor: name.to_string(), dtype: other.to_string() }),
        };
        let as_usizes = |key: &str| -> Result<Vec<usize>, LoadError> {
            entry
                .get(key)
                .and_then(Value::as_array)
                .and_then(|a| {
                    a.iter().map(|v| v.as_u64().and_then(|x| usize::try_from(x).ok())).collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| LoadError::BadHeader(format!("tensor `{name}` has no valid `{key}`")))
        };
        let shape = as_usizes("shape")?;
        let offsets = as_usizes("data_offsets")?;
        let [begin, end] = offsets[..] else {
            return Err(bad("data_offsets must be [begin, end]".into()));
        };
        let numel = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| bad("its shape overflows".into()))?;
        let want = numel.checked_mul(dtype.size()).ok_or_else(|| bad("its shape overflows".into()))?;
        if begin > end || end - begin != want {
            return Err(bad(format!(
                "shape {shape:?} of {dtype_text} needs {want} bytes but data_offsets span {}",
                end.saturating_sub(begin)
            )));
        }
        let (start, stop) = (data_start + begin, data_start + end);
        if stop > file_len {
            return Err(LoadError::Truncated { needed: stop as u64, have: file_len as u64 });
        }
        Ok(TensorInfo { dtype, shape, start, end: stop })
    }

    /// The tensor's values as f32 (F16 and BF16 are widened exactly).
    pub fn to_f32(&self, info: &TensorInfo) -> Vec<f32> {
        Self::widen(&self.bytes[info.start..info.end], info.dtype)
    }

    /// Calls `f` on each row (the last dimension) of the tensor, widened to f32, in order: for
    /// readers that lay the values out their own way, with one row as the only temporary.
    pub fn for_each_row_f32(&self, info: &TensorInfo, mut f: impl FnMut(&[f32])) {
        let row = info.shape.last().copied().unwrap_or(1).max(1) * info.dtype.size();
        for raw in self.bytes[info.start..info.end].chunks(row) {
            f(&Self::widen(raw, info.dtype));
        }
    }

    fn widen(raw: &[u8], dtype: Dtype) -> Vec<f32> {
        match dtype {
            Dtype::F32 => raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::F16 => raw.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect(),
            Dtype::BF16 => {
                raw.chunks_exact(2).map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16)).collect()
            }
        }
    }
}

/// IEEE half → single, exactly (subnormals, infinities and NaN included).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if frac == 0 => sign,
        // Subnormal half: value = frac · 2⁻²⁴, which is a normal f32.
        0 => return if sign != 0 { -(frac as f32) * 2f32.powi(-24) } else { frac as f32 * 2f32.powi(-24) },
        0x1f => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// Single → half, rounding to nearest even (used to write F16 checkpoints and in tests).
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if frac != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00; // overflow → ∞
    }
    if e <= 0 {
        if e < -10 {
            return sign; // underflow → ±0
        }
        // Subnormal: shift the implicit 1 in, then round to nearest even.
        let m = frac | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = (rem > mid || (rem == mid && half & 1 == 1)) as u32;
        return sign | (half + round) as u16;
    }
    let half = ((e as u32) << 10) | (frac >> 13);
    let rem = frac & 0x1fff;
    let round = (rem > 0x1000 || (rem == 0x1000 && half & 1 == 1)) as u32;
    sign | (half + round) as u16 // a carry into the exponent is the correct rounding
}

/// Writes tensors (name, shape, f32 values) as a safetensors file in the given dtype (F32 or F16).
pub fn write(tensors: &[(String, Vec<usize>, Vec<f32>)], dtype: Dtype, metadata: &[(&str, &str)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut meta = serde_json::Map::new();
    for (k, v) in metadata {
        meta.insert(k.to_string(), Value::String(v.to_string()));
    }
    header.insert("__metadata__".into(), Value::Object(meta));
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let begin = data.len();
        for &v in values {
            match dtype {
                Dtype::F32 => data.extend_from_slice(&v.to_le_bytes()),
                Dtype::F16 => data.extend_from_slice(&f32_to_f16(v).to_le_bytes()),
                Dtype::BF16 => data.extend_from_slice(&((v.to_bits() >> 16) as u16).to_le_bytes()), // truncates
            }
        }
        let dtype_name = match dtype {
            Dtype::F32 => "F32",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
        };
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": dtype_name, "shape": shape, "data_offsets": [begin, data.len()]}),
        );
    }
    let mut text = Value::Object(header).to_string();
    while !(8 + text.len()).is_multiple_of(8) {
        text.push(' '); // the format pads the header with spaces to an 8-byte boundary
    }
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&data);
    out
}
