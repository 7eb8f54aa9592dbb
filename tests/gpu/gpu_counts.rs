//! What GPT-2 on the GPU asks of the device per prompt and per generated token: compute
//! dispatches, submissions, host writes, readbacks and bind groups (`gpu::Counts`). On a real
//! GPU a small model's time per token is these fixed costs, not arithmetic, so the budget is
//! asserted here: one submission and one readback of one row of logits per token, nothing per
//! layer but the dispatches, whose number is a formula in the layers.
//!
//! They run on Mesa's lavapipe here and in CI; the test command fails them without an adapter
//! (`common::gpu`).

use crate::common;

use std::rc::Rc;

use attention_live::gpt2::engine::Engine;
use attention_live::gpt2::gpu::GpuGpt2;
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::{Capture, Config, ForwardOptions, Gpt2};
use attention_live::gpu::{Counts, Gpu, Precision};
use attention_live::model::sample::argmax;
use pollster::block_on;

fn gpu() -> Option<Rc<Gpu>> {
    common::gpu().map(Rc::new)
}

fn tiny(n_layer: usize) -> Rc<Gpt2> {
    let config = Config::new(97, 32, 32, n_layer, 4);
    Rc::new(Gpt2 { weights: Weights::random(&config, 3), config })
}

/// Dispatches of one forward pass of `rows` tokens: per layer ln_1 + c_attn, attention (which
/// also appends the keys and values to the cache), c_proj (+ residual), ln_2 + c_fc (+ GELU),
/// c_proj (+ residual), where each layer norm is a dispatch of its own beside the tiled
/// product of a prompt (more than 4 rows) but inside the product when decoding; then the
/// embedding and the logits once per chunk of the table, and ln_f.
fn dispatches(n_layer: usize, chunks: usize, rows: usize) -> u64 {
    let per_layer = if rows <= 4 { 5 } else { 7 };
    (per_layer * n_layer + 2 * chunks + 1) as u64
}

/// The counts of the prompt, and of each of `steps` greedily decoded tokens; the tokens are
/// checked against the CPU's.
fn decode(gpu: &Rc<Gpu>, model: &Rc<Gpt2>, chunk_rows: usize, steps: usize) -> (Counts, Vec<Counts>) {
    let on_gpu = block_on(GpuGpt2::upload_in_chunks(gpu.clone(), model, chunk_rows, Precision::F32)).unwrap();
    let engines = [Engine::Cpu(model.clone()), Engine::Gpu(Rc::new(on_gpu))];
    let opts = ForwardOptions::default();
    let mut runs = Vec::new();
    for e in &engines {
        let mut cache = e.new_cache(model.config.n_positions);
        let before = gpu.counts();
        let out = block_on(e.forward(model, &[5, 17, 3, 60, 2], &mut cache, &opts)).unwrap();
        let prompt = gpu.counts().since(&before);
        let (mut next, mut tokens, mut per_token) = (argmax(out.logits.row(0)), Vec::new(), Vec::new());
        for _ in 0..steps {
            let before = gpu.counts();
            let out = block_on(e.forward(model, &[next], &mut cache, &opts)).unwrap();
            per_token.push(gpu.counts().since(&before));
            tokens.push(next);
            next = argmax(out.logits.row(0));
        }
        runs.push((tokens, prompt, per_token));
    }
    let (gpu_run, cpu_run) = (runs.pop().unwrap(), runs.pop().unwrap());
    assert_eq!(gpu_run.0, cpu_run.0, "the GPU decodes the CPU's tokens");
    assert_eq!(cpu_run.1, Counts::default(), "the CPU asks nothing of the GPU");
    (gpu_run.1, gpu_run.2)
}

#[test]
fn a_decoded_token_costs_one_submission_and_one_row_of_logits() {
    let Some(gpu) = gpu() else { return };
    for (n_layer, chunk_rows) in [(3, usize::MAX), (1, usize::MAX), (2, 40)] {
        let model = tiny(n_layer);
        let chunks = model.config.vocab_size.div_ceil(chunk_rows.min(model.config.vocab_size));
        let (prompt, tokens) = decode(&gpu, &model, chunk_rows, 4);
        eprintln!("{n_layer} layers, {chunks} chunks of the table: prompt of 5 tokens: {prompt}");
        for (i, c) in tokens.iter().enumerate() {
            eprintln!("  token {i}: {c}");
        }
        let logits_bytes = (model.config.vocab_size * 4) as u64;
        for (c, rows) in [(&prompt, 5)].into_iter().chain(tokens.iter().map(|c| (c, 1))) {
            assert_eq!(c.submits, 1, "{n_layer} layers: one submission per forward pass: {c}");
            assert_eq!(c.readbacks, 1, "{n_layer} layers: one readback per forward pass: {c}");
            assert_eq!(c.readback_bytes, logits_bytes, "{n_layer} layers: the last position's logits only: {c}");
            assert_eq!(c.dispatches, dispatches(n_layer, chunks, rows), "{n_layer} layers, {chunks} chunks: {c}");
            assert!(c.writes <= 2, "{n_layer} layers: the token ids and the kernels' parameters: {c}");
        }
        // From the second token on, every buffer is the same: every bind group is reused.
        for c in &tokens[1..] {
            assert_eq!(c.bind_groups, 0, "{n_layer} layers: bind groups are reused between tokens: {c}");
        }
    }
}

/// Drawing the attention (the head view) reads back the weights as well, in the same single
/// readback; the logits do not change.
#[test]
fn capturing_the_attention_adds_bytes_not_readbacks() {
    let Some(gpu) = gpu() else { return };
    let model = tiny(2);
    let e = Engine::Gpu(Rc::new(block_on(GpuGpt2::upload(gpu.clone(), &model)).unwrap()));
    let ids = [5u32, 17, 3, 60, 2, 9];
    let run = |opts: &ForwardOptions| {
        let before = gpu.counts();
        let out = block_on(e.forward(&model, &ids, &mut e.new_cache(ids.len()), opts)).unwrap();
        (out, gpu.counts().since(&before))
    };
    let (plain, plain_counts) = run(&ForwardOptions::default());
    let (drawn, counts) = run(&ForwardOptions { capture: Capture::All, ..Default::default() });
    eprintln!("plain: {plain_counts}\nwith every layer's attention: {counts}");
    assert_eq!(plain.logits, drawn.logits);
    let (h, t) = (model.config.n_head, ids.len());
    let weights_bytes = (model.config.n_layer * h * t * t * 4) as u64;
    assert_eq!((counts.submits, counts.readbacks), (1, 1), "{counts}");
    assert_eq!(counts.readback_bytes, plain_counts.readback_bytes + weights_bytes, "{counts}");
    let cpu = Engine::Cpu(model.clone());
    let want = block_on(cpu.forward(
        &model,
        &ids,
        &mut cpu.new_cache(ids.len()),
        &ForwardOptions { capture: Capture::All, ..Default::default() },
    ))
    .unwrap();
    for (a, b) in want.attentions.iter().zip(&drawn.attentions) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        let err = (a - b).iter().fold(0.0f32, |m, e| m.max(e.abs()));
        assert!(err < 1e-5, "attention weights differ by {err}");
    }
}
