//! The Llama-family engine on the GPU backend (Mesa's lavapipe here and in CI) against Hugging
//! Face transformers: the fixtures of `tests/engines/llama.rs` (`scripts/llama/make_fixtures.py`: `gqa`,
//! 6 heads sharing 2 KV heads, tied output layer; `mqa`, one KV head, head_dim apart from the
//! width, its own output layer; `gqa_bf16`), to the same tolerance as the CPU.
//!
//! The test command fails them where no adapter exists (`common::gpu`).

use crate::common::{self, floats, ids, max_err};

use std::rc::Rc;

use attention_live::llama::gpu::GpuLlama;
use attention_live::llama::{Capture, ForwardOptions, Llama};
use serde_json::Value;

/// As `tests/engines/llama.rs`: the kernels sum in f32 in another order than PyTorch (a few ulps, about
/// 1e-6 on logits of size up to 5) and the fixture keeps 7 significant digits; 1e-4 leaves room
/// for both while a real mistake (a wrong RoPE pairing, a head reading the wrong KV head, ε in
/// the wrong place) moves the numbers by 1e-2 or more.
const TOL: f32 = 1e-4;

const NAMES: [&str; 3] = ["gqa", "mqa", "gqa_bf16"];

fn folder(name: &str) -> String {
    format!("{}/tests/fixtures/llama/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn model(name: &str) -> Llama {
    let d = folder(name);
    let config = std::fs::read_to_string(format!("{d}/config.json")).unwrap();
    Llama::load(&config, &std::fs::read(format!("{d}/model.safetensors")).unwrap()).unwrap()
}

fn reference(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{}/reference.json", folder(name))).unwrap()).unwrap()
}

/// The fixture's model on the GPU, or None without an adapter (`common::gpu`).
fn on_gpu(name: &str) -> Option<(Llama, GpuLlama)> {
    let gpu = Rc::new(common::gpu()?);
    let cpu = model(name);
    let on = pollster::block_on(GpuLlama::upload(gpu, &cpu)).expect("upload to the GPU");
    Some((cpu, on))
}

#[test]
fn logits_attentions_and_hidden_states_match_transformers_on_the_gpu() {
    for name in NAMES {
        let Some((cpu, model)) = on_gpu(name) else { return };
        let r = reference(name);
        let tokens = ids(&r["tokens"]);
        let opts =
            ForwardOptions { capture: Capture::All, all_logits: true, hidden_states: true, ..Default::default() };
        let mut cache = model.new_cache(tokens.len());
        let out = pollster::block_on(model.forward(&tokens, &mut cache, &opts)).unwrap();
        let e = max_err(&out.logits, &floats(&r["logits"]));
        eprintln!("{name} on {}: logits differ by at most {e:.1e}", model.gpu.name);
        assert!(e < TOL, "{name}: logits differ by {e}");
        assert_eq!(out.attentions.len(), cpu.config.num_hidden_layers);
        for (l, a) in out.attentions.iter().enumerate() {
            let a = a.as_ref().unwrap();
            assert_eq!(a.dim(), (cpu.config.num_attention_heads, tokens.len(), tokens.len()));
            let e = max_err(a, &floats(&r["attentions"][l]));
            assert!(e < TOL, "{name}: layer {l}'s attention differs by {e}");
        }
        let hidden = r["hidden_states"].as_array().unwrap();
        assert_eq!(out.hidden_states.len(), hidden.len());
        for (l, (ours, theirs)) in out.hidden_states.iter().zip(hidden).enumerate() {
            let e = max_err(ours, &floats(theirs));
            assert!(e < TOL, "{name}: hidden state {l} differs by {e}");
        }
    }
}

#[test]
fn knocked_out_heads_match_transformers_on_the_gpu() {
    for name in NAMES {
        let Some((_, model)) = on_gpu(name) else { return };
        let r = reference(name);
        let ablate: Vec<(usize, usize)> = r["ablate"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
            .collect();
        let tokens = ids(&r["tokens"]);
        let opts = ForwardOptions { ablate: ablate.clone(), all_logits: true, ..Default::default() };
        let out = pollster::block_on(model.forward(&tokens, &mut model.new_cache(tokens.len()), &opts)).unwrap();
        let e = max_err(&out.logits, &floats(&r["ablated_logits"]));
        assert!(e < TOL, "{name}: logits with heads {ablate:?} knocked out differ by {e}");
        assert!(max_err(&out.logits, &floats(&r["logits"])) > 1e-3, "{name}: knocking out changed nothing");
    }
}

#[test]
fn decoding_with_the_gpu_cache_matches_transformers() {
    for name in NAMES {
        let Some((cpu, model)) = on_gpu(name) else { return };
        let r = reference(name);
        let prompt = ids(&r["tokens"]);
        let steps = r["decode"].as_array().unwrap();
        let mut cache = model.new_cache(prompt.len() + steps.len());
        let opts = ForwardOptions::default();
        let mut logits = pollster::block_on(model.forward(&prompt, &mut cache, &opts)).unwrap().logits;
        let mut tokens = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let token = step["token"].as_u64().unwrap() as u32;
            assert_eq!(attention_live::numerics::softmax::argmax(logits.row(0)), token, "{name}: step {i}");
            logits = pollster::block_on(model.forward(&[token], &mut cache, &opts)).unwrap().logits;
            tokens.push(token);
            let e = max_err(&logits, &floats(&step["logits"]));
            assert!(e < TOL, "{name}: decoding step {i}'s logits differ from transformers' by {e}");
        }
        // The cache holds K and V per KV head: H / KV times less than one per query head.
        let cfg = &cpu.config;
        let positions = prompt.len() + steps.len();
        assert_eq!(cache.len(), positions);
        assert_eq!(cache.bytes(), 2 * cfg.num_hidden_layers * positions * cfg.num_key_value_heads * cfg.head_dim * 4);
        let mut cpu_cache = cpu.new_cache();
        cpu.forward(&[prompt.clone(), tokens.clone()].concat(), &mut cpu_cache, &opts).unwrap();
        assert_eq!(cache.bytes(), cpu_cache.bytes(), "{name}: the same cache as the CPU's");
        // Greedy decoding on the GPU continues as transformers does.
        let greedy = pollster::block_on(model.greedy(&prompt, tokens.len())).unwrap();
        assert_eq!(greedy, tokens, "{name}: greedy continuation");
    }
}

/// The model with every projection's weights mapped by `f` (row-major layout).
fn mapped(model: &Llama, f: impl Fn(f32) -> f32 + Copy) -> Llama {
    use attention_live::llama::weights::Linear;
    let mut weights = model.weights.clone();
    let re = |l: &mut Linear| *l = Linear::with_layout(l.weight().mapv(f), false);
    for layer in &mut weights.layers {
        let (a, m) = (&mut layer.self_attn, &mut layer.mlp);
        for l in [&mut a.q_proj, &mut a.k_proj, &mut a.v_proj, &mut a.o_proj] {
            re(l);
        }
        for l in [&mut m.gate_proj, &mut m.up_proj, &mut m.down_proj] {
            re(l);
        }
    }
    Llama { config: model.config.clone(), weights }
}

/// SmolLM2-135M's heads (9 of 64 sharing 3 KV heads) and widths, in 2 layers and a vocabulary of
/// 1000, with random weights of std 0.06 (0.02, `LlamaConfig`'s, leaves every attention nearly
/// uniform): the real model's head size and groups, beside the fixtures' small ones. The GPU
/// against the CPU engine (tested against transformers) on a prompt of 20 tokens, every
/// attention weight captured, then 3 decoding steps.
/// Weights of std 0.06: logits of size up to about 6, as the fixtures', and sharp attention.
const SCALE: f32 = 3.0;

#[test]
fn a_smollm2_shaped_model_runs_on_the_gpu_as_on_the_cpu() {
    use attention_live::llama::weights::Weights;
    use attention_live::llama::Config;
    let Some(gpu) = common::gpu().map(Rc::new) else { return };
    let config = Config { num_hidden_layers: 2, vocab_size: 1000, ..Config::smollm2_135m() };
    let mut weights = Weights::random(&config, 5).with_layout(false);
    weights.embed_tokens.mapv_inplace(|x| x * SCALE);
    let cpu = mapped(&Llama { config, weights }, |x| x * SCALE);
    let model = pollster::block_on(GpuLlama::upload(gpu, &cpu)).unwrap();
    let prompt: Vec<u32> = (0..20).map(|i| (i * 37 + 11) % 1000).collect();
    let opts = ForwardOptions { capture: Capture::All, all_logits: true, ..Default::default() };
    let (mut cpu_cache, mut cache) = (cpu.new_cache(), model.new_cache(24));
    let want = cpu.forward(&prompt, &mut cpu_cache, &opts).unwrap();
    let got = pollster::block_on(model.forward(&prompt, &mut cache, &opts)).unwrap();
    let e = max_err(&got.logits, want.logits.as_slice().unwrap());
    let top = want.logits.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    eprintln!("SmolLM2's shape on {}: logits (up to {top:.1}) differ by at most {e:.1e}", model.gpu.name);
    assert!(e < TOL, "logits differ from the CPU's by {e}");
    for (l, (a, b)) in got.attentions.iter().zip(&want.attentions).enumerate() {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        assert!(max_err(a, b.as_slice().unwrap()) < TOL, "layer {l}'s attention differs from the CPU's");
        // Not uniform: the weights are a test of the scores. (Query i sees i + 1 keys: from the
        // fifth on, a weight above 1/2 is far from uniform.)
        let sharp = b.slice(ndarray::s![.., 4.., ..]).iter().filter(|&&w| w > 0.5).count();
        assert!(sharp > 0, "layer {l}: some query attends sharply");
    }
    for step in 0..3 {
        let next = [(step * 101 + 7) as u32];
        let want = cpu.forward(&next, &mut cpu_cache, &ForwardOptions::default()).unwrap();
        let got = pollster::block_on(model.forward(&next, &mut cache, &ForwardOptions::default())).unwrap();
        let e = max_err(&got.logits, want.logits.as_slice().unwrap());
        assert!(e < TOL, "decoding step {step}: logits differ from the CPU's by {e}");
    }
}

/// The output layer and the embeddings in chunks of rows (as a table larger than the adapter's
/// binding limit is uploaded) give the same logits, tied (`gqa`) or not (`mqa`).
#[test]
fn tables_in_chunks_give_the_same_logits() {
    use attention_live::gpu::Precision;
    for name in ["gqa", "mqa"] {
        let Some((cpu, whole)) = on_gpu(name) else { return };
        let chunked = pollster::block_on(GpuLlama::upload_in_chunks(whole.gpu.clone(), &cpu, 64, Precision::F32));
        let chunked = chunked.unwrap();
        let tokens = ids(&reference(name)["tokens"]);
        let opts = ForwardOptions { all_logits: true, ..Default::default() };
        let run = |m: &GpuLlama| pollster::block_on(m.forward(&tokens, &mut m.new_cache(16), &opts)).unwrap().logits;
        assert_eq!(run(&chunked), run(&whole), "{name}: 300 rows in chunks of 64");
    }
}

/// f16 weights for the products (`Precision::F16`, on an adapter with `shader-f16`) against
/// their CPU twin: the CPU model with every projection weight rounded to f16.
#[test]
fn f16_weights_match_the_rounded_cpu_model() {
    use attention_live::gpu::{round_to_f16, Precision};
    for name in ["gqa", "mqa"] {
        let Some((cpu, whole)) = on_gpu(name).filter(|(_, g)| common::has_f16(&g.gpu)) else { return };
        let half = pollster::block_on(GpuLlama::upload_with(whole.gpu.clone(), &cpu, Precision::F16)).unwrap();
        assert_eq!(half.precision(), Precision::F16);
        let twin = mapped(&cpu, round_to_f16);
        let tokens = ids(&reference(name)["tokens"]);
        let opts = ForwardOptions { all_logits: true, ..Default::default() };
        let got = pollster::block_on(half.forward(&tokens, &mut half.new_cache(16), &opts)).unwrap().logits;
        let want = twin.forward(&tokens, &mut twin.new_cache(), &opts).unwrap().logits;
        let e = max_err(&got, want.as_slice().unwrap());
        assert!(e < TOL, "{name}: f16 weights differ from the rounded CPU model by {e}");
        // …and the rounding is real: the f32 model's logits are further away.
        let exact = cpu.forward(&tokens, &mut cpu.new_cache(), &opts).unwrap().logits;
        assert!(max_err(&got, exact.as_slice().unwrap()) > 1e-4, "{name}: f16 changed nothing");
        // f16 without loss only where every weight is an f16 value (a checkpoint shipped in F16).
        assert_eq!(GpuLlama::lossless_precision(&whole.gpu, &cpu), Precision::F32, "{name}");
        assert_eq!(GpuLlama::lossless_precision(&whole.gpu, &twin), Precision::F16, "{name} rounded");
    }
}

/// What a forward pass asks of the device (`gpu::Counts`; on a real GPU a small model's time per
/// token is these fixed costs, as `tests/gpu/gpu_counts.rs` says of GPT-2): one submission and one
/// readback of one row of logits per token; 3 host writes (the token ids, RoPE's cos and sin of
/// the new positions, the kernels' parameters); per layer 7 dispatches (RMSNorm and the q, k, v
/// product, RoPE, the attention, which also appends to the cache, o_proj with the residual,
/// RMSNorm and the gate and up product, SwiGLU, down_proj with the residual), where each RMSNorm
/// runs inside the product that reads it when decoding and is a dispatch of its own beside a
/// prompt's tiled product (9 per layer); then the embedding and the logits once per chunk of the
/// table, and the final norm. No bind group is made from the second decoded token on.
#[test]
fn a_decoded_token_costs_one_submission_and_one_row_of_logits() {
    use attention_live::gpu::Precision;
    use attention_live::llama::weights::Weights;
    use attention_live::llama::Config;
    let Some(gpu) = common::gpu().map(Rc::new) else { return };
    for (layers, chunk_rows, chunks) in [(3, usize::MAX, 1), (2, 40, 3)] {
        let config = Config { num_key_value_heads: 2, ..Config::new(97, 32, 64, layers, 4) };
        let cpu = Llama { weights: Weights::random(&config, 3).with_layout(false), config };
        let model = pollster::block_on(GpuLlama::upload_in_chunks(gpu.clone(), &cpu, chunk_rows, Precision::F32));
        let model = model.unwrap();
        let (opts, mut cache, mut cpu_cache) = (ForwardOptions::default(), model.new_cache(16), cpu.new_cache());
        let mut next = vec![5, 17, 3, 60, 2];
        for step in 0..5 {
            let before = gpu.counts();
            let out = pollster::block_on(model.forward(&next, &mut cache, &opts)).unwrap();
            let c = gpu.counts().since(&before);
            let what = format!("{layers} layers, {chunks} chunks, step {step}: {c}");
            eprintln!("{what}");
            assert_eq!((c.submits, c.readbacks), (1, 1), "{what}");
            assert_eq!(c.readback_bytes, 97 * 4, "the last position's logits only: {what}");
            let per_layer = if step == 0 { 9 } else { 7 };
            assert_eq!(c.dispatches, (per_layer * layers + 2 * chunks + 1) as u64, "{what}");
            assert_eq!(c.writes, 3, "{what}");
            if step >= 2 {
                assert_eq!(c.bind_groups, 0, "bind groups are reused between tokens: {what}");
            }
            let want = cpu.forward(&next, &mut cpu_cache, &opts).unwrap();
            assert!(max_err(&out.logits, want.logits.as_slice().unwrap()) < TOL, "{what}: the CPU's logits");
            next = vec![attention_live::numerics::softmax::argmax(out.logits.row(0))];
        }
    }
}

/// Either backend behind `llama::engine::Engine`: the same input refused in the same words, the
/// same logits, the same cache size, and weights so large that their products overflow refused
/// on both (`RunError::NotFinite`).
#[test]
fn both_engines_refuse_the_same_input_and_agree() {
    use attention_live::gpu::GpuError;
    use attention_live::llama::engine::{Engine, EngineError};
    use attention_live::llama::RunError;
    let Some((cpu, on)) = on_gpu("gqa") else { return };
    let (cpu, r) = (Rc::new(cpu), reference("gqa"));
    let tokens = ids(&r["tokens"]);
    let engines = [Engine::Cpu(cpu.clone()), Engine::Gpu(Rc::new(on))];
    let run = |e: &Engine, m: &Llama, ids: &[u32], cache: &mut _| {
        pollster::block_on(e.forward(m, ids, cache, &ForwardOptions { all_logits: true, ..Default::default() }))
    };
    let mut sizes = Vec::new();
    for e in &engines {
        let mut cache = e.new_cache(64);
        let out = run(e, &cpu, &tokens, &mut cache).unwrap();
        assert!(max_err(&out.logits, &floats(&r["logits"])) < TOL, "{}: logits", e.backend());
        sizes.push(cache.bytes());
        let refused = |ids: &[u32], cache: &mut _| match run(e, &cpu, ids, cache) {
            Err(EngineError::Run(err)) => err,
            other => panic!("{}: {:?} is refused, not {:?}", e.backend(), ids, other.map(|o| o.logits)),
        };
        assert_eq!(refused(&[], &mut cache), RunError::Empty);
        assert_eq!(refused(&[300], &mut cache), RunError::TokenOutOfRange { id: 300, vocab: 300 });
        assert_eq!(refused(&[1; 56], &mut cache), RunError::TooLong { len: 65, window: 64 });
        let huge = Rc::new(mapped(&cpu, |x| x * 1e30));
        let engine = match e {
            Engine::Cpu(_) => Engine::Cpu(huge.clone()),
            Engine::Gpu(g) => Engine::Gpu(Rc::new(pollster::block_on(GpuLlama::upload(g.gpu.clone(), &huge)).unwrap())),
        };
        let err = run(&engine, &huge, &tokens, &mut engine.new_cache(16)).err();
        assert_eq!(err, Some(EngineError::Run(RunError::NotFinite)), "{}: overflowing weights", e.backend());
    }
    assert_eq!(sizes[0], sizes[1], "the same cache on both backends");
    // A device error is a value the caller can answer by falling back to the CPU; the next pass runs.
    let Engine::Gpu(g) = &engines[1] else { unreachable!() };
    g.fail_next();
    let failed = run(&engines[1], &cpu, &tokens, &mut engines[1].new_cache(16)).err();
    assert!(matches!(failed, Some(EngineError::Gpu(GpuError::Failed(_)))), "an injected fault: {failed:?}");
    let out = run(&engines[1], &cpu, &tokens, &mut engines[1].new_cache(16)).unwrap();
    assert!(max_err(&out.logits, &floats(&r["logits"])) < TOL, "after the fault");
    let mut cpu_cache = engines[0].new_cache(16);
    let crossed = run(&engines[1], &cpu, &tokens, &mut cpu_cache).err();
    assert!(matches!(crossed, Some(EngineError::Gpu(_))), "a cache from the other backend is refused");
}

/// In the browser the CPU model's projections are packed (`weights::PACK_WEIGHTS`): uploaded
/// from that layout, the GPU holds the same matrices and gives the same logits.
#[test]
fn a_packed_cpu_model_uploads_the_same_weights() {
    let Some((cpu, plain)) = on_gpu("mqa") else { return };
    let packed = Llama { config: cpu.config.clone(), weights: cpu.weights.with_layout(true) };
    let packed = pollster::block_on(GpuLlama::upload(plain.gpu.clone(), &packed)).unwrap();
    let tokens = ids(&reference("mqa")["tokens"]);
    let opts = ForwardOptions { all_logits: true, ..Default::default() };
    let run = |m: &GpuLlama| pollster::block_on(m.forward(&tokens, &mut m.new_cache(16), &opts)).unwrap().logits;
    assert_eq!(run(&packed), run(&plain));
}

/// Shapes the kernels do not take are refused with a message, before anything is uploaded:
/// heads wider than 64 (Llama 3 8B's are 128) and more than 32 query heads (the knock-out mask).
#[test]
fn shapes_the_kernels_do_not_take_are_refused() {
    use attention_live::gpu::GpuError;
    use attention_live::llama::weights::Weights;
    use attention_live::llama::Config;
    let Some((_, any)) = on_gpu("gqa") else { return };
    for (config, says) in [
        (Config::new(10, 256, 64, 1, 2), "heads of size 128"),
        (Config { head_dim: 2, ..Config::new(10, 66, 64, 1, 33) }, "33 heads"),
    ] {
        let model = Llama { weights: Weights::random(&config, 1).with_layout(false), config };
        match pollster::block_on(GpuLlama::upload(any.gpu.clone(), &model)) {
            Err(e @ GpuError::Unsupported(_)) => assert!(e.to_string().contains(says), "{e}"),
            Err(e) => panic!("refused for another reason: {e}"),
            Ok(_) => panic!("{says}: uploaded"),
        }
    }
}
