//! Head detectors and the logit lens's readings, pure functions on a forward pass's numbers.
//!
//! A repeated random sequence `prefix + r + r` (r: n tokens, the prefix o tokens the tokenizer
//! puts first, such as a start token) tells three kinds of head apart by where their weight goes:
//! - a previous-token head puts it on the token just before: A[i, i − 1];
//! - an induction head, in the second copy, on the token after the earlier copy of the current
//!   one (what came next last time): A[i, i − n + 1];
//! - a duplicate-token head, in the second copy, on the earlier copy itself: A[i, i − n].

use ndarray::{ArrayView1, ArrayView3};

/// The three scores of every head of one layer, each in 0..1: (previous, induction, duplicate),
/// one value per head. `att` is the layer's (H, S, S) weights on `o + 2n` tokens.
///
/// previous = mean over i in o+1 .. S of A[h, i, i−1];
/// induction = mean over i in o+n .. o+2n of A[h, i, i−n+1];
/// duplicate = mean over i in o+n .. o+2n of A[h, i, i−n].
pub fn head_scores(att: ArrayView3<f32>, n: usize, o: usize) -> [Vec<f32>; 3] {
    let (heads, s) = (att.shape()[0], att.shape()[1]);
    let mean = |h: usize, rows: std::ops::Range<usize>, back: usize| {
        let rows: Vec<usize> = rows.filter(|&i| i < s && i >= back && att.shape()[2] > i - back).collect();
        if rows.is_empty() {
            return 0.0;
        }
        rows.iter().map(|&i| att[[h, i, i - back]]).sum::<f32>() / rows.len() as f32
    };
    let second = o + n..o + 2 * n;
    let each = |f: &dyn Fn(usize) -> f32| (0..heads).map(f).collect::<Vec<f32>>();
    [
        each(&|h| mean(h, o + 1..s, 1)),
        each(&|h| mean(h, second.clone(), n.saturating_sub(1))),
        each(&|h| mean(h, second.clone(), n)),
    ]
}

/// Softmax probabilities of logits (in f64 for the sum), and the `k` most likely as (id, p),
/// most likely first, ties by the lower id.
pub fn top_probs(logits: ArrayView1<f32>, k: usize) -> (Vec<f32>, Vec<(u32, f32)>) {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let exps: Vec<f64> = logits.iter().map(|&x| ((x - max) as f64).exp()).collect();
    let total: f64 = exps.iter().sum();
    let probs: Vec<f32> = exps.iter().map(|e| (e / total) as f32).collect();
    let mut order: Vec<u32> = (0..probs.len() as u32).collect();
    let k = k.min(order.len());
    if k > 0 {
        let by = |a: &u32, b: &u32| probs[*b as usize].total_cmp(&probs[*a as usize]).then(a.cmp(b));
        order.select_nth_unstable_by(k - 1, by);
        order.truncate(k);
        order.sort_by(by);
    } else {
        order.clear();
    }
    let top = order.into_iter().map(|id| (id, probs[id as usize])).collect();
    (probs, top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    #[test]
    fn a_head_that_looks_back_one_token_scores_one_as_a_previous_token_head() {
        // Hand-made weights on 1 + 2·3 tokens: head 0 puts all weight on i − 1, head 1 on the
        // token after the earlier copy (i − n + 1), head 2 on the earlier copy (i − n).
        let (n, o) = (3, 1);
        let s = o + 2 * n;
        let mut att = Array3::<f32>::zeros((3, s, s));
        for i in 0..s {
            att[[0, i, i.saturating_sub(1)]] = 1.0;
            let back = |b: usize| if i >= o + n { i - b } else { 0 };
            att[[1, i, back(n - 1)]] = 1.0;
            att[[2, i, back(n)]] = 1.0;
        }
        let [prev, ind, dup] = head_scores(att.view(), n, o);
        assert_eq!(prev, vec![1.0, 0.0, 0.0]);
        assert_eq!(ind, vec![0.0, 1.0, 0.0]);
        assert_eq!(dup, vec![0.0, 0.0, 1.0]);
    }

    #[test]
    fn top_probs_sum_to_one_and_break_ties_by_id() {
        let logits = ndarray::arr1(&[1.0f32, 3.0, 3.0, 0.0]);
        let (p, top) = top_probs(logits.view(), 2);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![1, 2]);
    }
}
