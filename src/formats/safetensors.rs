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
    /// Absolute byte range in the file, inside the data section.
    pub start: usize,
    pub end: usize,
}

/// A parsed file: the header's entries and the bytes they point into.
pub struct SafeTensors<'a> {
    bytes: &'a [u8],
    /// Where the data section begins (8 + the header's length): every tensor lies after it.
    pub data_start: usize,
    pub tensors: BTreeMap<String, TensorInfo>,
    pub metadata: BTreeMap<String, String>,
}

/// Headers larger than this are refused before they are read (the real GPT-2 header is ~15 KB).
pub const MAX_HEADER: u64 = 100 << 20;
/// More tensors than this are refused while the header is read (GPT-2 XL has 582).
pub const MAX_TENSORS: usize = 1 << 16;
/// The largest checkpoint file: in the browser's 32-bit build, what one allocation can hold
/// (a slice is at most `isize::MAX` bytes; the widened weights need as much again); natively
/// 64 GiB. A downloader checks a file's announced size against it before allocating.
pub const MAX_FILE_BYTES: u64 = if cfg!(target_pointer_width = "32") { (1 << 31) - 1 } else { 1 << 36 };

/// Refuses a file of `len` bytes past `MAX_FILE_BYTES`, with a message.
pub fn check_file_size(len: u64) -> Result<(), LoadError> {
    if len > MAX_FILE_BYTES {
        return Err(LoadError::TooLarge(format!(
            "the file is {len} bytes and this build reads at most {MAX_FILE_BYTES} bytes"
        )));
    }
    Ok(())
}

/// The absolute byte range `data_start + begin .. data_start + end` of tensor `name` in a file
/// of `file_len` bytes, as indices of type `P`: `usize` in `parse`, so 32 bits in the browser;
/// the tests pass `u32` to check that arithmetic natively. Every sum is done in u64 and
/// checked, then compared with the file's length, and only then narrowed (`try_from`): an
/// offset near 2³² or 2⁶⁴ is refused, never wrapped round into the header.
pub fn byte_range<P: TryFrom<u64>>(
    name: &str,
    data_start: u64,
    begin: u64,
    end: u64,
    file_len: u64,
) -> Result<(P, P), LoadError> {
    let bad = |reason: String| LoadError::BadOffsets { tensor: name.to_string(), reason };
    if begin > end {
        return Err(bad(format!("data_offsets [{begin}, {end}] end before they begin")));
    }
    let (Some(start), Some(stop)) = (data_start.checked_add(begin), data_start.checked_add(end)) else {
        return Err(bad(format!("data_offsets [{begin}, {end}] point past the end of any file")));
    };
    if stop > file_len {
        return Err(LoadError::Truncated { needed: stop, have: file_len });
    }
    match (P::try_from(start), P::try_from(stop)) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        _ => Err(bad(format!("bytes {start}..{stop} lie past what this build can address"))),
    }
}

/// A header read on its own (`parse_header`): what `SafeTensors` holds, without the bytes.
#[derive(Debug, Clone)]
pub struct Header {
    /// Where the data section begins (8 + the header's length).
    pub data_start: usize,
    pub tensors: BTreeMap<String, TensorInfo>,
    pub metadata: BTreeMap<String, String>,
    /// The file's length: the one given, or where the last tensor ends.
    pub file_len: usize,
}

/// The header's length N from the file's first 8 bytes, refused past [`MAX_HEADER`]: the data
/// section then begins at 8 + N.
pub fn header_len(first: [u8; 8]) -> Result<u64, LoadError> {
    let n = u64::from_le_bytes(first);
    // PyTorch's own format: a zip of pickles (`torch.save`), or a bare pickle (protocol 2 to 5).
    if first.starts_with(b"PK\x03\x04") || (first[0] == 0x80 && (2..=5).contains(&first[1])) {
        return Err(LoadError::BadHeader(
            "this is a PyTorch pickle (pytorch_model.bin), not safetensors: the page does not read pickles, \
             since loading one can run any code; use the model's model.safetensors, or convert the file with \
             the safetensors library"
                .into(),
        ));
    }
    if n > MAX_HEADER {
        return Err(LoadError::BadHeader(format!("it declares a {n}-byte header; is this a safetensors file?")));
    }
    Ok(n)
}

/// Reads the header's JSON (`text`, the N bytes after the length) of a file of `file_len` bytes
/// with every check of [`SafeTensors::parse`]. Without a length (a download that announced
/// none) the tensors must still tile the data section, whose end is then where the last one
/// ends; the reader checks that the file ends there.
pub fn parse_header(text: &[u8], file_len: Option<u64>) -> Result<Header, LoadError> {
    let data_start = 8 + text.len() as u64;
    // Without a length, any end a file of this build could have (a tensor past it is refused).
    let have = file_len.unwrap_or(MAX_FILE_BYTES);
    check_file_size(have)?;
    let header = std::str::from_utf8(text).map_err(|_| LoadError::BadHeader("the header is not UTF-8 text".into()))?;
    let json = super::json::parse_strict(header.trim_end(), MAX_TENSORS + 1)
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
        let info = SafeTensors::entry(&name, &entry, data_start, have)?;
        tensors.insert(name, info);
    }
    // The tensors end within `have`, which fits a usize (`entry`), and data_start ≤ their ends.
    let start = usize::try_from(data_start)
        .map_err(|_| LoadError::BadHeader("the header lies past what this build can address".into()))?;
    let len = match file_len {
        Some(n) => Some(usize::try_from(n).map_err(|_| LoadError::TooLarge(format!("the file is {n} bytes")))?),
        None => None,
    };
    let end = SafeTensors::check_coverage(&tensors, start, len)?;
    Ok(Header { data_start: start, tensors, metadata, file_len: len.unwrap_or(end) })
}

impl<'a> SafeTensors<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self, LoadError> {
        let have = bytes.len() as u64; // usize → u64 never loses bits
        check_file_size(have)?;
        if have < 8 {
            return Err(LoadError::Truncated { needed: 8, have });
        }
        let n = header_len(bytes[..8].try_into().expect("8 bytes"))?;
        let data_start = 8 + n; // n ≤ MAX_HEADER: no overflow
        if data_start > have {
            return Err(LoadError::Truncated { needed: data_start, have });
        }
        let start = usize::try_from(data_start).expect("within the slice's length");
        let Header { data_start, tensors, metadata, .. } = parse_header(&bytes[8..start], Some(have))?;
        Ok(SafeTensors { bytes, data_start, tensors, metadata })
    }

    /// The format forbids overlapping tensors and bytes that belong to no tensor: the ranges,
    /// sorted, must tile the data section exactly (as the reference implementation checks), up
    /// to `len` when given. Returns where the last tensor ends.
    fn check_coverage(
        tensors: &BTreeMap<String, TensorInfo>,
        data_start: usize,
        len: Option<usize>,
    ) -> Result<usize, LoadError> {
        let mut ranges: Vec<(usize, usize, &str)> = tensors.iter().map(|(n, t)| (t.start, t.end, n.as_str())).collect();
        ranges.sort_unstable();
        let (mut cursor, mut last) = (data_start, None::<&str>);
        let rel = |x: usize| x - data_start;
        for (start, end, name) in ranges {
            if start < cursor {
                let prev = last.unwrap_or_default();
                return Err(LoadError::BadOffsets {
                    tensor: name.to_string(),
                    reason: format!(
                        "its bytes {}..{} overlap tensor `{prev}`'s (the format forbids overlaps)",
                        rel(start),
                        rel(end)
                    ),
                });
            }
            if start > cursor {
                return Err(LoadError::BadHeader(format!(
                    "bytes {}..{} of the data belong to no tensor (the format forbids gaps)",
                    rel(cursor),
                    rel(start)
                )));
            }
            if end > start {
                (cursor, last) = (end, Some(name));
            }
        }
        if let Some(len) = len.filter(|&len| cursor < len) {
            return Err(trailing(len - cursor));
        }
        Ok(cursor)
    }

    fn entry(name: &str, entry: &Value, data_start: u64, file_len: u64) -> Result<TensorInfo, LoadError> {
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
        let as_u64s = |key: &str| -> Result<Vec<u64>, LoadError> {
            entry
                .get(key)
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<_>>>())
                .ok_or_else(|| LoadError::BadHeader(format!("tensor `{name}` has no valid `{key}`")))
        };
        let shape = as_u64s("shape")?;
        let offsets = as_u64s("data_offsets")?;
        let [begin, end] = offsets[..] else {
            return Err(bad("data_offsets must be [begin, end]".into()));
        };
        let want = shape
            .iter()
            .try_fold(dtype.size() as u64, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| bad(format!("its shape {shape:?} overflows")))?;
        if begin > end || end - begin != want {
            return Err(bad(format!(
                "shape {shape:?} of {dtype_text} needs {want} bytes but data_offsets span {}",
                end.saturating_sub(begin)
            )));
        }
        let (start, stop) = byte_range::<usize>(name, data_start, begin, end, file_len)?;
        // Each dimension fits: the bytes fit, unless another dimension is 0.
        let shape = shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad(format!("its shape {shape:?} does not fit this build's sizes")))?;
        Ok(TensorInfo { dtype, shape, start, end: stop })
    }

    /// A tensor's entry, checked to exist with `shape`; a refusal names it.
    pub fn checked(&self, name: &str, shape: &[usize]) -> Result<&TensorInfo, LoadError> {
        let info = self.tensors.get(name).ok_or_else(|| LoadError::Missing(name.to_string()))?;
        if info.shape != shape {
            let (expected, found) = (shape.to_vec(), info.shape.clone());
            return Err(LoadError::Shape { tensor: name.to_string(), expected, found });
        }
        Ok(info)
    }

    /// A (rows, cols) tensor's values as f32, checked to have that shape.
    pub fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<ndarray::Array2<f32>, LoadError> {
        let v = self.to_f32(self.checked(name, &[rows, cols])?);
        Ok(ndarray::Array2::from_shape_vec((rows, cols), v).expect("shape checked"))
    }

    /// An (n,) tensor's values as f32, checked to have that shape.
    pub fn vector(&self, name: &str, n: usize) -> Result<ndarray::Array1<f32>, LoadError> {
        Ok(ndarray::Array1::from(self.to_f32(self.checked(name, &[n])?)))
    }

    /// The tensor's values as f32 (F16 and BF16 are widened exactly).
    pub fn to_f32(&self, info: &TensorInfo) -> Vec<f32> {
        Self::widen(&self.bytes[info.start..info.end], info.dtype)
    }

    /// The first value of the tensor that is a NaN or an infinity: its flat index and whether it
    /// is a NaN. One pass over the raw bits (all-ones exponent), in blocks whose test the
    /// compiler vectorises. Measured natively (x86-64, the `native` profile) on GPT-2 small's
    /// 124,439,808 weights: 0.13 s in F32 (498 MB) and 0.05 s in F16, against 0.5 s and 0.7 s
    /// to widen them into f32 for the model: the check adds about a quarter to reading F32.
    pub fn first_non_finite(&self, info: &TensorInfo) -> Option<(usize, bool)> {
        let raw = &self.bytes[info.start..info.end];
        match info.dtype {
            Dtype::F32 => first_special::<4>(raw, u32::from_le_bytes, 0x7f80_0000, 0x007f_ffff),
            Dtype::F16 => first_special::<2>(raw, |b| u16::from_le_bytes(b) as u32, 0x7c00, 0x03ff),
            Dtype::BF16 => first_special::<2>(raw, |b| u16::from_le_bytes(b) as u32, 0x7f80, 0x007f),
        }
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

/// The first value whose exponent bits are all ones (a NaN or an infinity) among the `W`-byte
/// values of `raw`, read by `bits`: (index, is a NaN).
fn first_special<const W: usize>(
    raw: &[u8],
    bits: impl Fn([u8; W]) -> u32,
    exp: u32,
    frac: u32,
) -> Option<(usize, bool)> {
    const BLOCK: usize = 1024;
    let value = |b: &[u8]| bits(b.try_into().expect("W bytes"));
    for (k, block) in raw.chunks(BLOCK * W).enumerate() {
        // Branch-free over the block (vectorised); the rare block with a hit is searched again.
        if block.chunks_exact(W).fold(false, |any, b| any | (value(b) & exp == exp)) {
            let (i, v) = block.chunks_exact(W).map(value).enumerate().find(|(_, v)| v & exp == exp)?;
            return Some((k * BLOCK + i, v & frac != 0));
        }
    }
    None
}

/// The error for `n` bytes after the last tensor.
pub fn trailing(n: usize) -> LoadError {
    LoadError::BadHeader(format!("the last {n} bytes of the file belong to no tensor (the format forbids gaps)"))
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
