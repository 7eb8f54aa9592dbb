//! A (vocab, C) table on the device (the token embeddings, the output layer), in chunks of rows
//! each within the adapter's binding limit (GPT-2 small's `wte` is 154 MB), and the two passes
//! every decoder family makes over one: the embedding of the new tokens and the logits.

use ndarray::Array2;

use super::kernels::{groups_for, Batch, Kernel};
use super::{params, Gpu, GpuError};

/// Rows v0 .. v0 + rows of a (vocab, C) table.
pub struct TableChunk {
    pub buf: wgpu::Buffer,
    pub v0: usize,
    pub rows: usize,
}

/// Rows per chunk of a (vocab, C) table: as few chunks of at most `max_rows` as the adapter's
/// binding limit allows, of about equal size.
pub fn rows_per_chunk(gpu: &Gpu, vocab: usize, c: usize, max_rows: usize) -> Result<usize, GpuError> {
    let row_bytes = (c * 4) as u64;
    let limit = gpu.limits.max_storage_buffer_binding_size.min(gpu.limits.max_buffer_size);
    let rows = ((limit / row_bytes) as usize).min(vocab).min(max_rows);
    if rows == 0 {
        return Err(GpuError::TooBig { what: "one row of the embedding table".into(), bytes: row_bytes, limit });
    }
    Ok(vocab.div_ceil(vocab.div_ceil(rows)))
}

/// Uploads `table` (vocab, C) in chunks of `rows` rows.
pub fn upload(gpu: &Gpu, name: &str, table: &Array2<f32>, rows: usize) -> Vec<TableChunk> {
    let (v, c) = table.dim();
    let data = table.as_slice().expect("standard layout");
    (0..v.div_ceil(rows))
        .map(|i| {
            let v0 = i * rows;
            let n = rows.min(v - v0);
            TableChunk { buf: gpu.upload(name, &data[v0 * c..(v0 + n) * c]), v0, rows: n }
        })
        .collect()
}

/// Records x = table[ids], plus rows past .. past + T of `positions` when `add_positions` (GPT-2's
/// learned positions; a family without them binds any buffer there): (T, C), one dispatch per
/// chunk.
pub fn embed(
    b: &mut Batch,
    ids: &wgpu::Buffer,
    table: &[TableChunk],
    (positions, add_positions): (&wgpu::Buffer, bool),
    x: &wgpu::Buffer,
    (t, c, past): (usize, usize, usize),
) {
    let no_positions = (!add_positions) as u32;
    for ch in table {
        let p = params::Embed {
            t: t as u32,
            c: c as u32,
            past: past as u32,
            v0: ch.v0 as u32,
            rows: ch.rows as u32,
            no_positions,
            ..Default::default()
        };
        b.add(Kernel::Embed, &p, &[ids, &ch.buf, positions, x], [groups_for(t * c, 256), 1, 1]);
    }
}

/// Records the logits of `rows` rows of `h` (rows, C) against the table: (rows, vocab) into
/// `out`, one dispatch per chunk.
pub fn logits(
    b: &mut Batch,
    h: &wgpu::Buffer,
    table: &[TableChunk],
    out: &wgpu::Buffer,
    (rows, vocab, c): (usize, usize, usize),
) {
    for ch in table {
        let p = params::Logits {
            m: rows as u32,
            v: vocab as u32,
            c: c as u32,
            v0: ch.v0 as u32,
            rows: ch.rows as u32,
            ..Default::default()
        };
        b.add(Kernel::Logits, &p, &[h, &ch.buf, out], [groups_for(ch.rows, 8), rows as u32, 1]);
    }
}
