//! What the page draws over the image, from a pass's attentions (`Output::attentions`): pure
//! functions of the weights, tokens in the model's order (the class token, DeiT's distillation
//! token, then the patches row by row).
//!
//! - `from_token`: where one token (the class token, or a patch the reader clicked) looks, as a
//!   map over the grid of patches, for one head or the mean of the heads;
//! - `rollout`: attention rollout (Abnar and Zuidema, 2020), which follows attention through every
//!   layer at once: each layer's weights averaged over the heads, the residual connection counted
//!   as attention to oneself (A' = (A + I) / 2, each row renormalised), the layers multiplied in
//!   order. Its class-token row is a map of how much each patch reached the class token.

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

/// The weights of query token `from` over the patches, (grid, grid): `head`'s, or the mean of the
/// heads; `extra` tokens (class, distillation) come before the patches and are left out. None for
/// a token, head or grid the weights do not have.
pub fn from_token(
    attention: &Array3<f32>,
    from: usize,
    head: Option<usize>,
    extra: usize,
    grid: usize,
) -> Option<Array2<f32>> {
    let (heads, n, _) = attention.dim();
    if from >= n || head.is_some_and(|h| h >= heads) {
        return None;
    }
    let row = match head {
        Some(h) => attention.slice(s![h, from, ..]).to_owned(),
        None => attention.index_axis(Axis(1), from).mean_axis(Axis(0))?,
    };
    patches(row.to_vec(), extra, grid)
}

/// Attention rollout over `attentions` (each (H, N, N), in layer order): (N, N), computed in f64.
/// Row i says how much each token's input reached token i's output, through every layer; each row
/// sums to 1.
pub fn rollout(attentions: &[Array3<f32>]) -> Array2<f32> {
    let n = attentions.first().map_or(0, |a| a.dim().1);
    let mut out = Array2::<f64>::eye(n);
    for a in attentions {
        // (N, N): the heads' mean, plus the identity for the residual, each row renormalised
        let mut layer = a.mapv(f64::from).mean_axis(Axis(0)).expect("a model has heads") + Array2::<f64>::eye(n);
        for mut row in layer.rows_mut() {
            let sum = row.sum();
            row /= sum;
        }
        out = layer.dot(&out);
    }
    out.mapv(|v| v as f32)
}

/// A token's row of the rollout over the patches, (grid, grid); None for a token or grid the
/// rollout does not have.
pub fn rollout_map(rollout: ArrayView2<f32>, from: usize, extra: usize, grid: usize) -> Option<Array2<f32>> {
    patches(rollout.rows().into_iter().nth(from)?.to_vec(), extra, grid)
}

/// The patches' entries of a row of N = extra + grid² weights, as the grid they tile.
fn patches(row: Vec<f32>, extra: usize, grid: usize) -> Option<Array2<f32>> {
    let cells = row.get(extra..extra.checked_add(grid.checked_mul(grid)?)?)?;
    Array2::from_shape_vec((grid, grid), cells.to_vec()).ok()
}
