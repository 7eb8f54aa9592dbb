//! A CPU model's KV cache, and which layers' attention weights a forward pass keeps: the same
//! for every family (GPT-2's cache holds one key per head, a Llama-family model's one per KV head).

use ndarray::ArrayView2;

/// Which layers' attention weights a forward pass returns (GPT-2's and the Llama family's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Capture {
    #[default]
    None,
    All,
    Layer(usize),
}

impl Capture {
    pub fn wants(self, layer: usize) -> bool {
        match self {
            Capture::None => false,
            Capture::All => true,
            Capture::Layer(l) => l == layer,
        }
    }
}

/// A CPU model's KV cache: the keys and values of every position run so far, per layer, as rows
/// of `width` floats (GPT-2: the model's width; grouped-query attention: KV heads · head size,
/// the KV heads side by side). A forward pass appends each layer's new rows, then advances.
#[derive(Debug, Clone)]
pub struct KvCache {
    k: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
    width: usize,
    len: usize,
}

impl KvCache {
    pub fn new(layers: usize, width: usize) -> Self {
        KvCache { k: vec![Vec::new(); layers], v: vec![Vec::new(); layers], width, len: 0 }
    }
    /// The number of positions cached.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn clear(&mut self) {
        self.k.iter_mut().chain(self.v.iter_mut()).for_each(Vec::clear);
        self.len = 0;
    }
    /// Forgets every position from `len` on: a pass that differs from there on starts again
    /// from the positions before it.
    pub fn truncate(&mut self, len: usize) {
        let len = len.min(self.len);
        let keep = len * self.width;
        self.k.iter_mut().chain(self.v.iter_mut()).for_each(|rows| rows.truncate(keep));
        self.len = len;
    }
    /// The bytes the cached keys and values take: 2 (K and V) · layers · positions · width · 4
    /// (f32), counted from what is stored.
    pub fn bytes(&self) -> usize {
        self.k.iter().chain(&self.v).map(|rows| rows.len() * std::mem::size_of::<f32>()).sum()
    }
    /// Appends the new rows of one layer and returns views of all rows so far: (S, width) each.
    pub fn append(
        &mut self,
        layer: usize,
        k_new: ArrayView2<f32>,
        v_new: ArrayView2<f32>,
    ) -> (ArrayView2<'_, f32>, ArrayView2<'_, f32>) {
        self.k[layer].extend(k_new.iter());
        self.v[layer].extend(v_new.iter());
        let rows = self.k[layer].len() / self.width;
        let k = ArrayView2::from_shape((rows, self.width), &self.k[layer][..]).expect("whole rows");
        let v = ArrayView2::from_shape((rows, self.width), &self.v[layer][..]).expect("whole rows");
        (k, v)
    }
    /// Counts `n` more positions as cached, once every layer has appended its rows.
    pub fn advance(&mut self, n: usize) {
        self.len += n;
    }
}
