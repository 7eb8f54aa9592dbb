//! The kernels split across threads (`numerics::par`) give the single thread's results, bit for
//! bit: the matrix product by column panels, passes row by row, and GPT-2's and the Llama
//! family's forward passes in the browser's weight layout, on both pools (the hand-made one and
//! rayon's; natively std threads, in the browser Web Workers).
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Mutex;

use attention_live::numerics::gelu::gelu_in_place;
use attention_live::numerics::packed::{PackedMatrix, Then};
use attention_live::numerics::par::{self, Pool};
use attention_live::numerics::rng::normal_matrix;

/// Both pools with threads whatever the machine's cores, so the split runs in parallel: rayon's
/// with two, the hand-made one with two besides the thread that asks.
fn two_threads() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(2).build_global();
    par::spin::start_native(2);
}

const POOLS: [Pool; 2] = [Pool::Spin, Pool::Rayon];

#[test]
fn split_covers_the_range_once_in_near_equal_parts() {
    for n in [0, 1, 2, 7, 96, 6283] {
        for parts in [1, 2, 3, 8, 200] {
            let ranges = par::split(n, parts);
            assert!(ranges.len() <= parts.max(1) && ranges.iter().all(|r| !r.is_empty()), "{n} in {parts}: {ranges:?}");
            let covered: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(covered, (0..n).collect::<Vec<_>>(), "{n} in {parts}");
            let lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
            let (lo, hi) = (lens.iter().min().copied().unwrap_or(0), lens.iter().max().copied().unwrap_or(0));
            assert!(hi - lo <= 1, "{n} in {parts}: lengths {lens:?}");
        }
    }
}

#[test]
fn work_is_shared_between_threads_only_when_it_is_large_enough() {
    two_threads();
    par::set_threads(2);
    for pool in POOLS {
        par::set_pool(pool);
        let ids = Mutex::new(HashSet::new());
        par::for_each(64, par::MIN_PARALLEL_WORK, |r| {
            std::thread::sleep(std::time::Duration::from_millis(20 * r.len() as u64 / 32));
            ids.lock().unwrap().insert(std::thread::current().id());
        });
        // The hand-made pool is one job at a time: a test beside this one may hold it, and then
        // this thread runs both parts itself.
        let shared = ids.lock().unwrap().len();
        assert!(shared == 2 || pool == Pool::Spin && shared == 1, "{pool:?}: two parts on {shared} threads");
        let calls = Mutex::new(Vec::new());
        par::for_each(64, par::MIN_PARALLEL_WORK - 1, |r| calls.lock().unwrap().push(r));
        assert_eq!(*calls.lock().unwrap(), vec![0..64], "small work runs as one call");
    }
    par::set_pool(Pool::Spin);
}

/// Prompt-sized, decoding-sized (one row: the lone-row kernel, never split) and ragged shapes, on 1, 2 and 3
/// threads, with and without the bias and GELU applied in the kernel.
#[test]
fn the_packed_matmul_is_the_same_on_any_number_of_threads() {
    two_threads();
    for (t, k, n) in [(16, 768, 2304), (1, 768, 3072), (1, 128, 1030), (1, 256, 1030), (5, 256, 1030), (17, 96, 1031)] {
        let x = normal_matrix(t, k, 1, 1.0).mapv(|v| v as f32);
        let w = PackedMatrix::pack(normal_matrix(k, n, 2, 1.0).mapv(|v| v as f32).view());
        let b: Vec<f32> = normal_matrix(1, n, 3, 1.0).iter().map(|&v| v as f32).collect();
        par::set_threads(1);
        let one = w.matmul(x.view());
        // The bias and GELU applied to each output as it is summed: the same values as applied
        // to the whole product afterwards, as GPT-2's MLP did before.
        let mut after = &one + &ndarray::ArrayView1::from(&b[..]);
        gelu_in_place(after.as_slice_mut().unwrap());
        for (threads, pool) in [1, 2, 3].into_iter().flat_map(|t| POOLS.map(|p| (t, p))) {
            par::set_threads(threads);
            par::set_pool(pool);
            assert_eq!(w.matmul_then(x.view(), Then::BiasGelu(&b)), after, "({t}, {k}, {n}), {threads} threads");
            if threads == 1 {
                continue;
            }
            let before = par::split_runs();
            assert_eq!(w.matmul(x.view()), one, "({t}, {k}, {n}) on {threads} threads, {pool:?}");
            // A row of decoding is split too, from a quarter of the work up (`par::ONE_ROW_WORK`).
            let large = t * k * n * if t == 1 { par::ONE_ROW_WORK } else { 1 } >= par::MIN_PARALLEL_WORK;
            assert_eq!(par::split_runs() > before, large, "({t}, {k}, {n}) split across {threads} threads");
        }
    }
    par::set_threads(1);
}

/// `map` gives f(0), …, f(n − 1) in order, split or not.
#[test]
fn map_keeps_the_order() {
    two_threads();
    par::set_threads(3);
    let before = par::split_runs();
    assert_eq!(par::map(10, par::MIN_PARALLEL_WORK, |i| i * i), (0..10).map(|i| i * i).collect::<Vec<_>>());
    assert!(par::split_runs() > before);
    assert_eq!(par::map(10, 0, |i| i + 1), (1..=10).collect::<Vec<_>>());
    par::set_threads(1);
}

/// A whole forward pass with the browser's packed weights, large enough that its products and
/// its heads are split: logits and every attention weight.
#[test]
fn gpt2_gives_the_same_outputs_on_two_threads() {
    use attention_live::gpt2::weights::Weights;
    use attention_live::gpt2::{Config, ForwardOptions, Gpt2};
    use attention_live::model::Capture;
    two_threads();
    let json = r#"{"model_type":"gpt2","vocab_size":1000,"n_positions":128,"n_embd":256,"n_layer":2,"n_head":4}"#;
    let config = Config::from_json(json).unwrap();
    let weights = Weights::random(&config, 7).with_layout(true);
    let model = Rc::new(Gpt2 { config, weights });
    // 64 tokens: c_attn is 64 × 256 × 768 multiply-adds, the heads 2 × 4 × 64 × 64 × 64.
    let tokens: Vec<u32> = (0..64).map(|i| (i * 37 % 1000) as u32).collect();
    let run = |threads: usize| {
        par::set_threads(threads);
        let mut cache = model.new_cache();
        let opts =
            ForwardOptions { capture: Capture::All, all_logits: true, thumbnails: Some(16), ..Default::default() };
        let prompt = model.forward(&tokens, &mut cache, &opts).unwrap();
        // And one decoding step with the cache.
        let step = model.forward(&[5], &mut cache, &opts).unwrap();
        (prompt, step)
    };
    let (one, one_step) = run(1);
    for pool in POOLS {
        par::set_pool(pool);
        let before = par::split_runs();
        let (two, two_step) = run(2);
        assert!(par::split_runs() > before, "the forward pass split some kernel");
        assert_eq!(one.logits, two.logits, "{pool:?}");
        assert_eq!(one.attentions, two.attentions, "{pool:?}");
        assert_eq!(one.thumbnails, two.thumbnails, "{pool:?}");
        assert_eq!((&one_step.logits, &one_step.attentions), (&two_step.logits, &two_step.attentions), "{pool:?}");
    }
    par::set_pool(Pool::Spin);
    par::set_threads(1);
}

/// The training lab's step with its attention split by (example, head) pair and its GELU and
/// layer norms (forward and backward) by rows: the same losses, gradients' norms, weights and
/// heads as on one thread.
#[test]
fn a_training_step_is_the_same_on_two_threads() {
    use attention_live::train::{TrainConfig, Trainer};
    two_threads();
    // The lab's defaults: 32 examples × 4 heads, enough attention work to split.
    let run = |threads: usize| {
        par::set_threads(threads);
        let mut t = Trainer::new(TrainConfig::default()).unwrap();
        let steps: Vec<_> = (0..3).map(|_| t.step().unwrap()).collect();
        (steps, t.model().params.clone(), t.snapshot().attention)
    };
    let one = run(1);
    let before = par::split_runs();
    let two = run(2);
    assert!(par::split_runs() > before, "the attention of a training step is split");
    assert_eq!(one, two);
    par::set_threads(1);
}

/// `for_rows` hands out whole rows, each once, with its index; split only when the work is large.
#[test]
fn for_rows_covers_every_row_once() {
    two_threads();
    par::set_threads(2);
    let (rows, width) = (1001, 3);
    let mut out = vec![-1.0f32; rows * width];
    let before = par::split_runs();
    par::for_rows(&mut out, width, par::MIN_PARALLEL_WORK, |row0, part| {
        assert_eq!(part.len() % width, 0, "whole rows");
        for (i, row) in part.chunks_exact_mut(width).enumerate() {
            row.iter_mut().for_each(|v| *v += (row0 + i) as f32 + 1.0);
        }
    });
    assert!(par::split_runs() > before, "split across two threads");
    let expected: Vec<f32> = (0..rows).flat_map(|r| [r as f32; 3]).collect();
    assert_eq!(out, expected);
    // No rows (a width of 0): nothing to call.
    par::for_rows(&mut [], 0, par::MIN_PARALLEL_WORK, |_, _| panic!("called with no rows"));
    par::set_threads(1);
}

/// GPT-2's layer norm splits its rows from 86 tokens of GPT-2 small's width up, with the same
/// values as on one thread.
#[test]
fn a_layer_norm_is_the_same_on_two_threads() {
    use attention_live::gpt2::ops::layer_norm;
    use attention_live::gpt2::weights::LayerNorm;
    two_threads();
    let x = normal_matrix(128, 768, 11, 1.0).mapv(|v| v as f32);
    let row = |seed| normal_matrix(1, 768, seed, 1.0).row(0).mapv(|v| v as f32);
    let ln = LayerNorm { weight: row(12), bias: row(13) };
    par::set_threads(1);
    let one = layer_norm(x.view(), &ln, 1e-5);
    par::set_threads(2);
    let before = par::split_runs();
    assert_eq!(layer_norm(x.view(), &ln, 1e-5), one);
    assert!(par::split_runs() > before, "128 × 768 is split");
    par::set_threads(1);
}

/// A Llama-family pass of SmolLM2's width (RMSNorm and the SwiGLU gating split by rows, the
/// heads' thumbnails pooled where each head ran): the same logits, weights and thumbnails.
#[test]
fn llama_gives_the_same_outputs_on_two_threads() {
    use attention_live::llama::weights::Weights;
    use attention_live::llama::{Config, ForwardOptions, Llama};
    use attention_live::model::Capture;
    two_threads();
    let config = Config { num_hidden_layers: 2, vocab_size: 1000, ..Config::smollm2_135m() };
    let model = Llama { weights: Weights::random(&config, 5).with_layout(true), config };
    // 120 tokens: each RMSNorm is 120 × 576 values, past the split's threshold.
    let tokens: Vec<u32> = (0..120).map(|i| (i * 37 % 1000) as u32).collect();
    let run = |threads: usize| {
        par::set_threads(threads);
        let opts = ForwardOptions { capture: Capture::All, thumbnails: Some(16), ..Default::default() };
        model.forward(&tokens, &mut model.new_cache(), &opts).unwrap()
    };
    let one = run(1);
    let before = par::split_runs();
    let two = run(2);
    assert!(par::split_runs() > before);
    assert_eq!((one.logits, one.attentions, one.thumbnails), (two.logits, two.attentions, two.thumbnails));
    par::set_threads(1);
}
