//! Where a Llama-family prompt's time goes on the CPU: each kernel of the forward pass timed
//! alone on SmolLM2-135M's shape at a 128-token prompt (random weights, packed as the browser's
//! build packs them), times the number of calls one pass makes, beside the whole pass with
//! every attention weight captured (as the page's analysis runs it):
//!
//!     cargo run --profile native --example llama_profile [-- THREADS]
//!
//! Native figures: in the browser the softmax's exp is software, slower than the C library's
//! here, and the matrix kernel runs on SIMD128 instead of what LLVM makes of it for x86. The
//! page's analysis of 128 tokens also pools every layer's weights (docs/performance.md).

use attention_live::llama::ops::{logits, rms_norm, silu_mul_in_place, Rope};
use attention_live::llama::weights::Weights;
use attention_live::llama::{Config, ForwardOptions, Llama};
use attention_live::model::Capture;
use attention_live::numerics::flash::causal_attention;
use attention_live::numerics::par;
use ndarray::{s, Array2};

#[path = "common/measure.rs"]
mod measure;
use measure::{ms, print_kernels};

fn main() {
    let threads: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    // Natively only (a browser's threads are Web Workers the page starts).
    #[cfg(not(target_arch = "wasm32"))]
    if threads > 1 {
        // The asking thread takes parts too: a pool of threads − 1 besides it.
        par::spin::start_native(threads - 1);
    }
    par::set_threads(threads);
    let cfg = Config::smollm2_135m();
    let weights = Weights::random(&cfg, 1).with_layout(true);
    let model = Llama { config: cfg.clone(), weights };
    let (t, c, f, d) = (128, cfg.hidden_size, cfg.intermediate_size, cfg.head_dim);
    let (layers, heads) = (cfg.num_hidden_layers, cfg.num_attention_heads);
    let x = Array2::from_shape_fn((t, c), |(i, j)| ((i * 31 + j * 17) % 97) as f32 / 97.0 - 0.5);
    let layer = &model.weights.layers[0];
    let (a, m) = (&layer.self_attn, &layer.mlp);
    let rope = Rope::new(d, cfg.rope_theta, 0, t);
    let mut rows: Vec<(&str, usize, f64)> = Vec::new();
    rows.push(("q_proj + o_proj (T,576)x(576,576)", 2 * layers, ms(3, || drop(a.q_proj.apply(x.view())))));
    rows.push(("k_proj, v_proj (T,576)x(576,192)", 2 * layers, ms(3, || drop(a.k_proj.apply(x.view())))));
    rows.push(("gate_proj, up_proj (T,576)x(576,1536)", 2 * layers, ms(3, || drop(m.gate_proj.apply(x.view())))));
    let hf = Array2::from_shape_fn((t, f), |(i, j)| ((i * 31 + j * 17) % 97) as f32 / 97.0 - 0.5);
    rows.push(("down_proj (T,1536)x(1536,576)", layers, ms(3, || drop(m.down_proj.apply(hf.view())))));
    rows.push(("rms_norm (T,576)", 2 * layers + 1, ms(20, || drop(rms_norm(x.view(), &layer.input_layernorm, 1e-5)))));
    let mut q = x.clone();
    let mut k = x.slice(s![.., ..192]).to_owned();
    rows.push((
        "rope q and k",
        layers,
        ms(20, || {
            rope.apply(q.view_mut(), d);
            rope.apply(k.view_mut(), d);
        }),
    ));
    let up = hf.clone();
    let mut gate = hf.clone();
    rows.push((
        "silu(gate) * up (T,1536)",
        layers,
        ms(20, || {
            gate.assign(&hf);
            silu_mul_in_place(gate.as_slice_mut().unwrap(), up.as_slice().unwrap());
        }),
    ));
    let kv = x.slice(s![.., ..d]);
    rows.push((
        "causal attention, one head (T,64)",
        layers * heads,
        ms(20, || drop(causal_attention(q.slice(s![.., ..d]), kv, kv, 0))),
    ));
    let h1 = x.slice(s![t - 1.., ..]);
    rows.push(("logits (1,576)x(576,49152)", 1, ms(3, || drop(logits(h1, model.weights.output())))));
    println!("{threads} thread(s), SmolLM2-135M shape, 128-token prompt, packed weights");
    print_kernels(&rows);
    let tokens: Vec<u32> = (0..t as u32).map(|i| (i * 7919) % 49152).collect();
    let opts = ForwardOptions { capture: Capture::All, ..Default::default() };
    let pass = ms(1, || drop(model.forward(&tokens, &mut model.new_cache(), &opts).unwrap()));
    println!("| whole pass, weights captured | 1 | {pass:.1} | {pass:.1} |");
}
