//! Where a GPT-2 small prompt's time goes on the CPU: each kernel of the forward pass timed alone
//! at a 128-token prompt (random weights, packed as the browser's build packs them), times the
//! number of calls one pass makes, beside the whole pass with and without every attention
//! weight captured (the page's analysis captures them):
//!
//!     cargo run --profile native --example gpt2_profile [-- THREADS [TOKENS]]
//!
//! The gap between the sum of the kernels and the whole pass is what runs between them (the
//! embeddings, the residual additions, copying the captured weights). Native figures: the
//! browser's kernels run on SIMD128 instead of what LLVM makes of them for x86.

use attention_live::gpt2::ops::{causal_attention, gelu_in_place, layer_norm, linear, linear_gelu, tied_logits};
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::{Config, ForwardOptions, Gpt2};
use attention_live::model::Capture;
use attention_live::numerics::packed::PackedMatrix;
use attention_live::numerics::par;
use ndarray::{s, Array2};

#[path = "common/measure.rs"]
mod measure;
use measure::{ms, print_kernels};

fn main() {
    let arg = |i: usize, default: usize| std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (threads, t) = (arg(1, 1), arg(2, 128));
    // Natively only (a browser's threads are Web Workers the page starts).
    #[cfg(not(target_arch = "wasm32"))]
    if threads > 1 {
        // The asking thread takes parts too: a pool of threads − 1 besides it.
        par::spin::start_native(threads - 1);
    }
    par::set_threads(threads);
    let cfg = Config::gpt2_small();
    let model = Gpt2 { config: cfg.clone(), weights: Weights::random(&cfg, 1).with_layout(true) };
    let (c, layers, heads, hd) = (cfg.n_embd, cfg.n_layer, cfg.n_head, cfg.head_dim());
    let fill = |cols: usize| Array2::from_shape_fn((t, cols), |(i, j)| ((i * 31 + j * 17) % 97) as f32 / 97.0 - 0.5);
    let (x, x4) = (fill(c), fill(4 * c));
    let b = &model.weights.h[0];
    let mut rows: Vec<(&str, usize, f64)> = vec![
        ("c_attn (T,768)x(768,2304)", layers, ms(3, || drop(linear(x.view(), &b.attn.c_attn)))),
        ("attn c_proj (T,768)x(768,768)", layers, ms(3, || drop(linear(x.view(), &b.attn.c_proj)))),
        ("c_fc (T,768)x(768,3072)", layers, ms(3, || drop(linear(x.view(), &b.mlp.c_fc)))),
        ("mlp c_proj (T,3072)x(3072,768)", layers, ms(3, || drop(linear(x4.view(), &b.mlp.c_proj)))),
    ];
    // What each of two threads computes of c_fc, on this one: against c_fc's line on 2 threads,
    // how far the split is from halving the time (docs/performance.md, "what limits two threads").
    let half = PackedMatrix::pack(b.mlp.c_fc.weight().slice(s![.., ..2 * c]));
    par::set_threads(1);
    rows.push(("c_fc, half its columns, one thread (not in the sum)", 0, ms(3, || drop(half.matmul(x.view())))));
    par::set_threads(threads);
    let fused = ms(3, || drop(linear_gelu(x.view(), &b.mlp.c_fc)));
    rows.push(("c_fc with its GELU, as the pass runs them (not in the sum)", 0, fused));
    let eps = cfg.layer_norm_epsilon;
    rows.push(("layer_norm (T,768)", 2 * layers + 1, ms(20, || drop(layer_norm(x.view(), &b.ln_1, eps)))));
    let mut a = x4.clone();
    let gelu = ms(20, || {
        a.assign(&x4);
        gelu_in_place(a.as_slice_mut().expect("contiguous"));
    });
    let copy = ms(20, || a.assign(&x4));
    rows.push(("gelu (T,3072)", layers, gelu - copy));
    let mut y = x.clone();
    rows.push(("residual add (T,768)", 2 * layers, ms(20, || y += &x)));
    let q = x.slice(s![.., ..hd]);
    rows.push(("causal attention, one head (T,64)", layers * heads, ms(20, || drop(causal_attention(q, q, q, 0)))));
    let last = x.slice(s![t - 1.., ..]);
    rows.push(("logits (1,768)x(768,50257)", 1, ms(3, || drop(tied_logits(last, &model.weights.wte)))));
    println!("{threads} thread(s), GPT-2 small shape, {t}-token prompt, packed weights");
    print_kernels(&rows);
    let tokens: Vec<u32> = (0..t as u32).map(|i| (i * 7919) % 50257).collect();
    for (what, capture) in [("whole pass", Capture::None), ("whole pass, weights captured", Capture::All)] {
        let opts = ForwardOptions { capture, ..Default::default() };
        let pass = ms(1, || drop(model.forward(&tokens, &mut model.new_cache(), &opts).unwrap()));
        println!("| {what} | 1 | {pass:.1} | {pass:.1} |");
    }
}
