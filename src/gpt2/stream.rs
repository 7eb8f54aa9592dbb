//! Loading a checkpoint while it arrives, DOM-free: [`StreamLoader`] is fed the bytes of
//! `model.safetensors` in chunks of any size (a download's), and writes each tensor's values
//! straight into its final buffer in the weights (packed in the browser), so the file is never
//! held whole: what lives beside the weights is the header's text, a scratch block of
//! [`BLOCK`] values and the at most 3 bytes of a value cut by a chunk's end. No tensor is
//! buffered whole, and a tensor's buffer is allocated when its first byte arrives: a server
//! cannot make the loader reserve more than one tensor past the bytes it really sent.
//!
//! States: the header's 8-byte length, the header's JSON (read by the same checked parser as a
//! whole file, `safetensors::parse_header`), then the tensors in file order, then done. Every
//! check of the whole-file path (`Gpt2::load`) holds, so a file is refused here exactly when it
//! is refused there (tests/engines/gpt2_stream.rs feeds the fuzz corpus both ways): the header's and
//! the config's checks as soon as the header is in, before any weight is allocated; a NaN or an
//! infinity, and an `lm_head` not tied to `wte`, as the tensor arrives; a file that ends early,
//! or goes on past its last tensor, at the end.

use ndarray::{Array1, Array2};

use super::weights::{Attn, Block, LayerNorm, Linear, LinearWeight, Mlp, Weights, PACK_WEIGHTS};
use super::{Config, Gpt2, LoadError};
use crate::formats::safetensors::{check_file_size, f16_to_f32, header_len, parse_header, trailing, Dtype, Header};
use crate::numerics::packed::PackedMatrix;

/// Values widened at a time into the scratch block.
pub const BLOCK: usize = 4096;

/// The tensors of a layer in `Weights::expected`'s order, and which of them are linear layers'
/// weights (packed in the browser).
const PER_LAYER: usize = 12;
const LINEAR_WEIGHTS: [usize; 4] = [4, 6, 8, 10];

/// Where a tensor's values go.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    /// A tensor the model does not use (the causal-mask buffers): its bytes are passed over.
    Skip,
    /// The `i`-th of `Weights::expected`; with `compare`, `lm_head.weight` came first and wrote
    /// the values, which this tensor (`wte`) must equal.
    Slot { i: usize, compare: bool },
    /// `lm_head.weight`, tied to `wte` (slot 0): compared with it when `wte` came first, else
    /// written into its buffer for `wte` to be compared with.
    Tie { compare: bool },
}

/// One tensor of the file, in file order.
#[derive(Debug, Clone)]
struct Piece {
    start: usize,
    end: usize,
    dtype: Dtype,
    target: Target,
    /// The name the whole-file loader reports it under (without the `transformer.` prefix).
    name: String,
    /// (rows, cols) of the buffer, rows = 1 for a vector.
    dim: (usize, usize),
    /// Its buffer is a packed matrix (a linear layer's weight in the browser).
    packs: bool,
}

/// A tensor's final buffer.
enum Buf {
    Plain(Vec<f32>),
    Packed(PackedMatrix),
}

enum State {
    /// The first bytes of the 8-byte length.
    Length(Vec<u8>),
    /// The header's `n` bytes, as far as they came.
    Header {
        n: usize,
        text: Vec<u8>,
    },
    Data(Data),
}

struct Data {
    pieces: Vec<Piece>,
    /// The piece the next byte belongs to.
    next: usize,
    /// The file's length: the data section ends here.
    file_len: usize,
    slots: Vec<Option<Buf>>,
    /// The first bytes of a value that a chunk's end cut (at most 3).
    carry: Vec<u8>,
    scratch: Vec<f32>,
}

/// A checkpoint being loaded from chunks: [`StreamLoader::feed`] each chunk, then
/// [`StreamLoader::finish`].
pub struct StreamLoader {
    config: Config,
    packed: bool,
    /// The file's length when the server announced it (checked against the header at once).
    declared: Option<u64>,
    /// Bytes fed so far.
    pos: usize,
    state: State,
}

impl StreamLoader {
    /// A loader for the checkpoint that `config_json` describes, in this build's layout
    /// (`PACK_WEIGHTS`), for a file of `declared` bytes when that is known.
    pub fn new(config_json: &str, declared: Option<u64>) -> Result<Self, LoadError> {
        StreamLoader::with_layout(config_json, declared, PACK_WEIGHTS)
    }

    /// `new` in a chosen layout: the tests read the browser's packed one natively.
    pub fn with_layout(config_json: &str, declared: Option<u64>, packed: bool) -> Result<Self, LoadError> {
        let config = Config::from_json(config_json)?;
        if let Some(d) = declared {
            check_file_size(d)?;
        }
        Ok(StreamLoader { config, packed, declared, pos: 0, state: State::Length(Vec::with_capacity(8)) })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Takes the next bytes of the file. An error ends the load (the loader must not be fed
    /// again).
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), LoadError> {
        loop {
            match &mut self.state {
                State::Length(first) => {
                    let take = (8 - first.len()).min(bytes.len());
                    first.extend_from_slice(&bytes[..take]);
                    (self.pos, bytes) = (self.pos + take, &bytes[take..]);
                    if first.len() < 8 {
                        return Ok(());
                    }
                    let n = header_len(first[..].try_into().expect("8 bytes"))?;
                    if let Some(have) = self.declared.filter(|&d| 8 + n > d) {
                        return Err(LoadError::Truncated { needed: 8 + n, have });
                    }
                    // n ≤ MAX_HEADER (100 MiB): fits a usize. The real GPT-2's is 15 KB.
                    let n = n as usize;
                    self.state = State::Header { n, text: Vec::with_capacity(n.min(1 << 20)) };
                }
                State::Header { n, text } => {
                    let take = (*n - text.len()).min(bytes.len());
                    text.extend_from_slice(&bytes[..take]);
                    (self.pos, bytes) = (self.pos + take, &bytes[take..]);
                    if text.len() < *n {
                        return Ok(());
                    }
                    let header = parse_header(text, self.declared)?;
                    self.state = State::Data(self.plan(&header)?);
                }
                State::Data(d) => {
                    let taken = d.take(self.pos, bytes)?;
                    self.pos += taken;
                    return Ok(());
                }
            }
        }
    }

    /// The model, once every byte has been fed: refuses a file that ended early.
    pub fn finish(self) -> Result<Gpt2, LoadError> {
        let have = self.pos as u64;
        let d = match self.state {
            State::Length(_) => return Err(LoadError::Truncated { needed: 8, have }),
            State::Header { n, .. } => return Err(LoadError::Truncated { needed: 8 + n as u64, have }),
            State::Data(d) => d,
        };
        if self.pos < d.file_len {
            return Err(LoadError::Truncated { needed: d.file_len as u64, have });
        }
        let weights = assemble(&self.config, d.slots);
        Ok(Gpt2 { config: self.config, weights })
    }

    /// Checks the header against the config as `Weights::from_safetensors_in` does, and lays
    /// out where each tensor goes.
    fn plan(&self, header: &Header) -> Result<Data, LoadError> {
        let (st, cfg) = (&header.tensors, &self.config);
        let prefix = if st.keys().any(|k| k.starts_with("transformer.")) { "transformer." } else { "" };
        for name in st.keys() {
            let bare = name.strip_prefix("transformer.").unwrap_or(name);
            if let Some(rest) = bare.strip_prefix("h.") {
                let layer: Option<usize> = rest.split('.').next().and_then(|s| s.parse().ok());
                if let Some(l) = layer.filter(|&l| l >= cfg.n_layer) {
                    return Err(LoadError::Config(format!(
                        "n_layer = {} but the checkpoint has a layer {l}",
                        cfg.n_layer
                    )));
                }
            }
        }
        // The file's key of each tensor the config calls for.
        let mut keys = Vec::new();
        for (name, shape) in Weights::expected(cfg) {
            let full = format!("{prefix}{name}");
            let key = if st.contains_key(&full) { full } else { name.clone() };
            let info = st.get(&key).ok_or_else(|| LoadError::Missing(name.clone()))?;
            if info.shape != shape {
                return Err(LoadError::Shape { tensor: name, expected: shape, found: info.shape.clone() });
            }
            let dim = if shape.len() == 2 { (shape[0], shape[1]) } else { (1, shape[0]) };
            keys.push((key, name, dim));
        }
        let (vocab, c) = (cfg.vocab_size, cfg.n_embd);
        let tie = st.get("lm_head.weight");
        if let Some(info) = tie {
            if info.shape != [vocab, c] {
                return Err(LoadError::Shape {
                    tensor: "lm_head.weight".into(),
                    expected: vec![vocab, c],
                    found: info.shape.clone(),
                });
            }
        }
        // Which of the tied pair comes first in the file writes wte's buffer; the other compares.
        let wte_start = st[&keys[0].0].start;
        let tie_first = tie.is_some_and(|t| t.start < wte_start);
        let mut pieces: Vec<Piece> = Vec::with_capacity(st.len());
        for (key, info) in st {
            let slot = keys.iter().position(|(k, _, _)| k == key);
            let (target, name, dim) = match slot {
                Some(i) => (Target::Slot { i, compare: i == 0 && tie_first }, keys[i].1.clone(), keys[i].2),
                None if key == "lm_head.weight" => (Target::Tie { compare: !tie_first }, key.clone(), (vocab, c)),
                None => (Target::Skip, key.clone(), (1, 0)),
            };
            let packs = slot.is_some_and(|i| self.packs(i));
            if info.end > info.start {
                pieces.push(Piece { start: info.start, end: info.end, dtype: info.dtype, target, name, dim, packs });
            }
        }
        // The ranges tile the data section (`parse_header` checked): sorted, each begins where
        // the previous one ends.
        pieces.sort_unstable_by_key(|p| p.start);
        Ok(Data {
            pieces,
            next: 0,
            file_len: header.file_len,
            slots: (0..keys.len()).map(|_| None).collect(),
            carry: Vec::with_capacity(4),
            scratch: Vec::with_capacity(BLOCK),
        })
    }

    /// Whether slot `i` (of `Weights::expected`) is a linear layer's weight, packed in this
    /// layout.
    fn packs(&self, i: usize) -> bool {
        let layer = i.wrapping_sub(2);
        self.packed && layer < PER_LAYER * self.config.n_layer && LINEAR_WEIGHTS.contains(&(layer % PER_LAYER))
    }
}

impl Data {
    /// Takes the bytes at file offset `pos` and on, piece by piece: the count taken, which is
    /// all of them unless the file goes on past its last tensor (an error).
    fn take(&mut self, mut pos: usize, mut bytes: &[u8]) -> Result<usize, LoadError> {
        let mut taken = 0;
        while !bytes.is_empty() {
            let Some(piece) = self.pieces.get(self.next).cloned() else {
                return Err(trailing(pos - self.file_len + bytes.len()));
            };
            let n = (piece.end - pos).min(bytes.len());
            self.absorb(&piece, pos, &bytes[..n])?;
            (pos, bytes, taken) = (pos + n, &bytes[n..], taken + n);
            if pos == piece.end {
                self.next += 1;
            }
        }
        Ok(taken)
    }

    /// Bytes `pos .. pos + raw.len()` of `piece`: whole values go to its buffer, a value cut
    /// by the chunk's end waits in `carry` for the rest of its bytes.
    fn absorb(&mut self, piece: &Piece, pos: usize, mut raw: &[u8]) -> Result<(), LoadError> {
        if piece.target == Target::Skip {
            return Ok(());
        }
        let size = piece.dtype.size();
        // The value index of the first whole value that `raw` (after the carry) begins with.
        let mut at = (pos - piece.start).div_ceil(size);
        if !self.carry.is_empty() {
            let k = (size - self.carry.len()).min(raw.len());
            self.carry.extend_from_slice(&raw[..k]);
            raw = &raw[k..];
            if self.carry.len() < size {
                return Ok(());
            }
            let one = std::mem::take(&mut self.carry);
            self.values(piece, at - 1, &one)?;
            self.carry = one;
            self.carry.clear();
        }
        let whole = raw.len() / size * size;
        for block in raw[..whole].chunks(BLOCK * size) {
            self.values(piece, at, block)?;
            at += block.len() / size;
        }
        self.carry.extend_from_slice(&raw[whole..]);
        Ok(())
    }

    /// Whole values of `piece` from value index `at`: widened, checked, stored.
    fn values(&mut self, piece: &Piece, at: usize, raw: &[u8]) -> Result<(), LoadError> {
        let mut v = std::mem::take(&mut self.scratch);
        widen_into(raw, piece.dtype, &mut v);
        let out = self.store(piece, at, &v);
        self.scratch = v;
        out
    }

    fn store(&mut self, piece: &Piece, at: usize, v: &[f32]) -> Result<(), LoadError> {
        let (i, compare, check) = match piece.target {
            Target::Skip => return Ok(()),
            Target::Slot { i, compare } => (i, compare, true),
            Target::Tie { compare } => (0, compare, false),
        };
        // Every tensor the model uses holds only finite numbers (`lm_head` is only compared).
        if check {
            if let Some(k) = v.iter().position(|x| !x.is_finite()) {
                let what = if v[k].is_nan() { "a NaN" } else { "an infinity" };
                return Err(LoadError::NotFinite { tensor: piece.name.clone(), index: at + k, what });
            }
        }
        let (rows, cols) = piece.dim;
        let buf = self.slots[i].get_or_insert_with(|| match piece.packs {
            true => Buf::Packed(PackedMatrix::zeros(rows, cols)),
            false => Buf::Plain(vec![0.0; rows * cols]),
        });
        match buf {
            Buf::Packed(p) => p.write(at, v),
            Buf::Plain(p) => {
                let dst = &mut p[at..at + v.len()];
                if compare && dst != v {
                    return Err(LoadError::Checkpoint(
                        "lm_head.weight differs from wte.weight; GPT-2 ties them".into(),
                    ));
                }
                // `lm_head` after `wte` is only compared; `wte` after `lm_head` keeps its own
                // values (equal to them, up to the sign of a zero).
                if !matches!(piece.target, Target::Tie { compare: true }) {
                    dst.copy_from_slice(v);
                }
            }
        }
        Ok(())
    }
}

/// Appends the little-endian values of `raw` widened to f32 (F16 and BF16 exactly) to `out`,
/// after clearing it.
fn widen_into(raw: &[u8], dtype: Dtype, out: &mut Vec<f32>) {
    out.clear();
    match dtype {
        Dtype::F32 => out.extend(raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        Dtype::F16 => out.extend(raw.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))),
        Dtype::BF16 => {
            out.extend(raw.chunks_exact(2).map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16)))
        }
    }
}

/// The filled buffers, taken in `Weights::expected`'s order.
struct Slots(std::vec::IntoIter<Option<Buf>>);

impl Slots {
    /// The next buffer as (rows, cols) values. Every slot was filled (each tensor has values
    /// and the data section arrived whole); zeros stand in for one that was not.
    fn plain(&mut self, rows: usize, cols: usize) -> Vec<f32> {
        match self.0.next().flatten() {
            Some(Buf::Plain(v)) => v,
            Some(Buf::Packed(p)) => p.unpack().into_raw_vec_and_offset().0,
            None => vec![0.0; rows * cols],
        }
    }

    fn matrix(&mut self, rows: usize, cols: usize) -> Array2<f32> {
        Array2::from_shape_vec((rows, cols), self.plain(rows, cols)).expect("sized from the shape")
    }

    fn vector(&mut self, n: usize) -> Array1<f32> {
        Array1::from(self.plain(1, n))
    }

    fn layer_norm(&mut self, c: usize) -> LayerNorm {
        LayerNorm { weight: self.vector(c), bias: self.vector(c) }
    }

    fn linear(&mut self, n_in: usize, n_out: usize) -> Linear {
        let weight = match self.0.next().flatten() {
            Some(Buf::Packed(p)) => LinearWeight::Packed(p),
            Some(Buf::Plain(v)) => LinearWeight::Plain(Array2::from_shape_vec((n_in, n_out), v).expect("sized")),
            None => LinearWeight::Plain(Array2::zeros((n_in, n_out))),
        };
        Linear { weight, bias: self.vector(n_out) }
    }
}

/// The weights from the filled buffers (`Weights::expected`'s order: wte, wpe, per layer the
/// two layer norms then the four linear layers, ln_f).
fn assemble(cfg: &Config, slots: Vec<Option<Buf>>) -> Weights {
    let (c, f) = (cfg.n_embd, cfg.n_inner);
    let mut s = Slots(slots.into_iter());
    let wte = s.matrix(cfg.vocab_size, c);
    let wpe = s.matrix(cfg.n_positions, c);
    let h = (0..cfg.n_layer)
        .map(|_| {
            let (ln_1, ln_2) = (s.layer_norm(c), s.layer_norm(c));
            let (c_attn, attn_proj) = (s.linear(c, 3 * c), s.linear(c, c));
            let (c_fc, mlp_proj) = (s.linear(c, f), s.linear(f, c));
            Block { ln_1, attn: Attn { c_attn, c_proj: attn_proj }, ln_2, mlp: Mlp { c_fc, c_proj: mlp_proj } }
        })
        .collect();
    let ln_f = s.layer_norm(c);
    Weights { wte, wpe, h, ln_f }
}
