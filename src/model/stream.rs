//! Loading a checkpoint while it arrives, for every family, DOM-free: a [`StreamLoader`] is fed the
//! bytes of `model.safetensors` in chunks of any size (a download's), and writes each tensor's
//! values straight into its final buffer in the weights (packed in the browser), so the file is
//! never held whole: what lives beside the weights is the header's text, a scratch block of
//! [`BLOCK`] values and the at most 3 bytes of a value cut by a chunk's end. No tensor is
//! buffered whole, and a tensor's buffer is allocated when its first whole value arrives: a server
//! cannot make the loader reserve more than one tensor past the bytes it really sent.
//!
//! What differs between families is one implementation of [`Streamed`] beside each engine's
//! weights (`gpt2::stream`, `llama::stream`, `marian::stream`): the config, a [`Plan`] of where
//! each tensor goes (checked against the header), and the model assembled from the filled
//! buffers ([`Slots`]).
//!
//! States: the header's 8-byte length, the header's JSON (read by the same checked parser as a
//! whole file, `safetensors::parse_header`), then the tensors in file order, then done. Every
//! check of the whole-file path holds, so a file is refused here exactly when it is refused there
//! (tests/engines/fuzz_loader.rs feeds the fuzz corpus both ways): the header's and the config's
//! checks as soon as the header is in, before any weight is allocated; a NaN or an infinity, and
//! a tied copy that differs from its table, as the tensor arrives; a file that ends
//! early, or goes on past its last tensor, at the end.

use ndarray::{Array1, Array2};

use crate::formats::safetensors::{check_file_size, f16_to_f32, header_len, parse_header, trailing, Dtype, Header};
use crate::formats::LoadError;
use crate::numerics::packed::PackedMatrix;

/// Whether the loaders pack linear layers' weights: in the browser's wasm build (see
/// `numerics::packed`).
pub const PACK_WEIGHTS: bool = cfg!(target_arch = "wasm32");

/// Values widened at a time into the scratch block.
pub const BLOCK: usize = 4096;

/// A model that loads from a stream: each engine's part.
pub trait Streamed: Sized {
    type Config;

    /// The config from `config.json`'s text, checked as the whole-file loader checks it.
    fn read_config(config_json: &str) -> Result<Self::Config, LoadError>;

    /// Checks the header against the config as the whole-file loader does, and says where each
    /// tensor goes, in `packed` layout or not.
    fn plan(cfg: &Self::Config, header: &Header, packed: bool) -> Result<Plan, LoadError>;

    /// The model from the buffers, in the plan's slot order.
    fn assemble(cfg: Self::Config, slots: Slots) -> Self;
}

/// Where the tensors the model uses go: its slots, in the order `assemble` takes them, and the
/// tied copies to compare with them (an output layer tied to the embeddings). Every other tensor
/// of the file is passed over. Two slots may name the same key: only the first is filled, and
/// `assemble` reads the second as empty (Marian's decoder reading the encoder's table).
pub struct Plan {
    pub slots: Vec<Slot>,
    pub ties: Vec<Tie>,
}

/// One tensor the model uses.
pub struct Slot {
    /// Its key in the file.
    pub key: String,
    /// The name a refusal gives it.
    pub name: String,
    /// (rows, cols) as the file stores it, rows = 1 for a vector.
    pub dim: (usize, usize),
    pub store: Store,
}

/// How a slot's buffer holds the values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Store {
    /// Row-major, as the file stores them.
    Plain,
    /// A packed matrix of the stored (in, out) weight (GPT-2's Conv1D layout).
    Packed,
    /// A packed matrix of the transpose of the stored (out, in) weight (nn.Linear's layout).
    PackedTransposed,
}

/// A tensor of the file that must equal a slot's values (an output layer tied to the embeddings),
/// when the file has it: its key, the slot (a `Store::Plain` one), and the refusal when it differs.
pub struct Tie {
    pub key: String,
    pub slot: usize,
    pub refusal: String,
}

impl Slot {
    /// The slot of `key` in the header, checked to hold `shape`; refusals name it `name`.
    pub fn checked(
        header: &Header,
        key: String,
        name: String,
        shape: &[usize],
        store: Store,
    ) -> Result<Slot, LoadError> {
        let info = header.tensors.get(&key).ok_or_else(|| LoadError::Missing(name.clone()))?;
        if info.shape != shape {
            return Err(LoadError::Shape { tensor: name, expected: shape.to_vec(), found: info.shape.clone() });
        }
        let dim = if shape.len() == 2 { (shape[0], shape[1]) } else { (1, shape.iter().product()) };
        Ok(Slot { key, name, dim, store })
    }
}

/// Refuses a checkpoint with a layer the config does not have: `layer_of` reads a key's layer
/// number, `count` names the config's field.
pub fn check_layers(
    header: &Header,
    n_layer: usize,
    count: &str,
    layer_of: impl Fn(&str) -> Option<usize>,
) -> Result<(), LoadError> {
    match header.tensors.keys().filter_map(|k| layer_of(k)).find(|&l| l >= n_layer) {
        Some(l) => Err(LoadError::Config(format!("{count} = {n_layer} but the checkpoint has a layer {l}"))),
        None => Ok(()),
    }
}

/// Where a tensor's values go.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    /// A tensor the model does not use (GPT-2's causal-mask buffers): its bytes are passed over.
    Skip,
    /// Slot `i`; with `compare`, a tied copy came first and wrote the values, which this one must
    /// equal (else `refusal`, the index of that copy's refusal).
    Slot { i: usize, compare: bool, refusal: usize },
    /// A tied copy of slot `i`: compared with the slot's buffer when another of the group came
    /// first, else written into it for the others to be compared with.
    Tie { i: usize, compare: bool, refusal: usize },
}

/// One tensor of the file, in file order.
#[derive(Debug, Clone)]
struct Piece {
    start: usize,
    end: usize,
    dtype: Dtype,
    target: Target,
    /// The name a refusal gives it.
    name: String,
    /// (rows, cols) of the buffer as the file stores it.
    dim: (usize, usize),
    store: Store,
}

/// A slot's filled buffer.
pub enum Buf {
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
    /// The refusals when a tied copy differs from its slot, one a copy the file has.
    refusals: Vec<String>,
    /// The first bytes of a value that a chunk's end cut (at most 3).
    carry: Vec<u8>,
    scratch: Vec<f32>,
}

/// A checkpoint being loaded from chunks: [`StreamLoader::feed`] each chunk, then
/// [`StreamLoader::finish`].
pub struct StreamLoader<M: Streamed> {
    config: Option<M::Config>,
    packed: bool,
    /// The file's length when the server announced it (checked against the header at once).
    declared: Option<u64>,
    /// Bytes fed so far.
    pos: usize,
    state: State,
}

impl<M: Streamed> StreamLoader<M> {
    /// A loader for the checkpoint that `config_json` describes, in this build's layout
    /// (`PACK_WEIGHTS`), for a file of `declared` bytes when that is known.
    pub fn new(config_json: &str, declared: Option<u64>) -> Result<Self, LoadError> {
        StreamLoader::with_layout(config_json, declared, PACK_WEIGHTS)
    }

    /// `new` in a chosen layout: the tests read the browser's packed one natively.
    pub fn with_layout(config_json: &str, declared: Option<u64>, packed: bool) -> Result<Self, LoadError> {
        let config = M::read_config(config_json)?;
        if let Some(d) = declared {
            check_file_size(d)?;
        }
        Ok(StreamLoader { config: Some(config), packed, declared, pos: 0, state: State::Length(Vec::with_capacity(8)) })
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
                    let config = self.config.as_ref().expect("kept until finish");
                    self.state = State::Data(Data::new(M::plan(config, &header, self.packed)?, &header)?);
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
    pub fn finish(mut self) -> Result<M, LoadError> {
        let have = self.pos as u64;
        let d = match self.state {
            State::Length(_) => return Err(LoadError::Truncated { needed: 8, have }),
            State::Header { n, .. } => return Err(LoadError::Truncated { needed: 8 + n as u64, have }),
            State::Data(d) => d,
        };
        if self.pos < d.file_len {
            return Err(LoadError::Truncated { needed: d.file_len as u64, have });
        }
        let config = self.config.take().expect("kept until finish");
        Ok(M::assemble(config, Slots(d.slots.into_iter())))
    }
}

impl Data {
    /// The pieces of the file in file order, each with its target.
    fn new(plan: Plan, header: &Header) -> Result<Data, LoadError> {
        let st = &header.tensors;
        let ties: Vec<&Tie> = plan.ties.iter().filter(|t| st.contains_key(&t.key)).collect();
        // A tied copy is compared value by value with a plain slot: one of another size is refused
        // (whatever the plan checked), and a tie on a packed slot is the plan's mistake.
        for t in &ties {
            let slot = &plan.slots[t.slot];
            debug_assert!(slot.store == Store::Plain, "{} is tied to a packed slot", t.key);
            if st[&t.key].shape.iter().product::<usize>() != slot.dim.0 * slot.dim.1 {
                return Err(LoadError::Checkpoint(t.refusal.clone()));
            }
        }
        // Of a slot and its tied copies, the first in the file writes the slot's buffer; the others
        // compare with it.
        let first_of = |slot: usize| {
            let keys = ties.iter().filter(|t| t.slot == slot).map(|t| &t.key).chain([&plan.slots[slot].key]);
            keys.filter_map(|k| st.get(k).map(|info| info.start)).min()
        };
        // The copy that writes a slot's buffer, whose refusal the slot's own tensor gives.
        let writer = |slot: usize| {
            let first = first_of(slot);
            ties.iter().position(|t| t.slot == slot && st.get(&t.key).map(|i| i.start) == first).unwrap_or(0)
        };
        let mut pieces: Vec<Piece> = Vec::with_capacity(st.len());
        for (key, info) in st.iter().filter(|(_, info)| info.end > info.start) {
            let target = match plan.slots.iter().position(|s| &s.key == key) {
                Some(i) => Target::Slot { i, compare: first_of(i) != Some(info.start), refusal: writer(i) },
                None => match ties.iter().position(|t| &t.key == key) {
                    Some(r) => {
                        let i = ties[r].slot;
                        Target::Tie { i, compare: first_of(i) != Some(info.start), refusal: r }
                    }
                    None => Target::Skip,
                },
            };
            let (name, dim, store) = match target {
                Target::Slot { i, .. } => (plan.slots[i].name.clone(), plan.slots[i].dim, plan.slots[i].store),
                Target::Tie { i, .. } => (key.clone(), plan.slots[i].dim, Store::Plain),
                Target::Skip => (key.clone(), (1, 0), Store::Plain),
            };
            pieces.push(Piece { start: info.start, end: info.end, dtype: info.dtype, target, name, dim, store });
        }
        // The ranges tile the data section (`parse_header` checked): sorted, each begins where
        // the previous one ends.
        pieces.sort_unstable_by_key(|p| p.start);
        Ok(Data {
            pieces,
            next: 0,
            file_len: header.file_len,
            slots: (0..plan.slots.len()).map(|_| None).collect(),
            refusals: ties.iter().map(|t| t.refusal.clone()).collect(),
            carry: Vec::with_capacity(4),
            scratch: Vec::with_capacity(BLOCK),
        })
    }

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
        let (i, compare, tied, refusal) = match piece.target {
            Target::Skip => return Ok(()),
            Target::Slot { i, compare, refusal } => (i, compare, false, refusal),
            Target::Tie { i, compare, refusal } => (i, compare, true, refusal),
        };
        // Every tensor the model uses holds only finite numbers (a tied one is only compared).
        if !tied {
            if let Some(k) = v.iter().position(|x| !x.is_finite()) {
                let what = if v[k].is_nan() { "a NaN" } else { "an infinity" };
                return Err(LoadError::NotFinite { tensor: piece.name.clone(), index: at + k, what });
            }
        }
        let (rows, cols) = piece.dim;
        let buf = self.slots[i].get_or_insert_with(|| match piece.store {
            Store::Plain => Buf::Plain(vec![0.0; rows * cols]),
            Store::Packed => Buf::Packed(PackedMatrix::zeros(rows, cols)),
            Store::PackedTransposed => Buf::Packed(PackedMatrix::zeros(cols, rows)),
        });
        match (buf, piece.store) {
            (Buf::Packed(p), Store::PackedTransposed) => p.write_transposed(at, v),
            (Buf::Packed(p), _) => p.write(at, v),
            (Buf::Plain(p), _) => {
                let dst = &mut p[at..at + v.len()];
                if compare && dst != v {
                    return Err(LoadError::Checkpoint(self.refusals.get(refusal).cloned().unwrap_or_default()));
                }
                // A tied tensor after its slot's is only compared; the slot's tensor after the tied
                // one keeps its own values (equal to them, up to the sign of a zero).
                if !(tied && compare) {
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

/// The filled buffers, taken in the plan's slot order by `Streamed::assemble`.
pub struct Slots(std::vec::IntoIter<Option<Buf>>);

impl Slots {
    /// The next buffer, None for a slot that was not filled (the second of two slots of one key,
    /// or a tensor without values); the readers below fill such a slot with zeros.
    pub fn next_buf(&mut self) -> Option<Buf> {
        self.0.next().flatten()
    }

    /// The next buffer, a `Store::Plain` slot's, as its (rows, cols) values, row-major.
    pub fn plain(&mut self, rows: usize, cols: usize) -> Vec<f32> {
        match self.next_buf() {
            Some(Buf::Plain(v)) => v,
            Some(Buf::Packed(p)) => p.unpack().into_raw_vec_and_offset().0,
            None => vec![0.0; rows * cols],
        }
    }

    pub fn matrix(&mut self, rows: usize, cols: usize) -> Array2<f32> {
        Array2::from_shape_vec((rows, cols), self.plain(rows, cols)).expect("sized from the shape")
    }

    pub fn vector(&mut self, n: usize) -> Array1<f32> {
        Array1::from(self.plain(1, n))
    }
}
