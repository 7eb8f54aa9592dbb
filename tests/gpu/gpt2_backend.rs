//! The session on the GPU backend: the page's answers equal the CPU's, the self-test gates
//! the GPU, and a GPU failure (a real device error, injected) falls back to the CPU with a
//! notice while the request still gets its answer, also in the middle of a generation.
//!
//! They run on Mesa's lavapipe here and in CI; the test command fails them without an adapter
//! (`common::gpu`).

use std::rc::Rc;

use attention_live::gpu::{Gpu, Precision};
use attention_live::session::protocol::Query;
use attention_live::session::Gpt2Session as Session;
use pollster::block_on;

use crate::common;

fn session() -> Session {
    let (cfg, bytes) = common::checkpoint("static/models/induction");
    Session::new(&cfg, &bytes).unwrap()
}

fn gpu() -> Option<Rc<Gpu>> {
    common::gpu().map(Rc::new)
}

/// The same model twice: on the CPU, and attached to the GPU (its self-test passed).
fn cpu_and_gpu() -> Option<(Session, Session)> {
    let gpu = gpu()?;
    let (cpu, on_gpu) = (session(), session());
    block_on(on_gpu.attach_gpu(gpu)).expect("the self-test passes");
    Some((cpu, on_gpu))
}

fn query(prompt: &str) -> Query {
    Query {
        id: 1,
        prompt: prompt.into(),
        layer: 1,
        ablate: vec![(1, 3)],
        temperature: 0.8,
        top_k: 0,
        top_p: 1.0,
        seed: 9,
        top: 10,
    }
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

#[test]
fn analyses_and_generations_on_the_gpu_equal_the_cpus() {
    let Some((cpu, on_gpu)) = cpu_and_gpu() else { return };
    assert_eq!(on_gpu.engine().backend(), "webgpu");
    let q = query("Q F K B Z Q F K");
    let (a, wa) = block_on(cpu.analyze(&q)).unwrap();
    let (b, wb) = block_on(on_gpu.analyze(&q)).unwrap();
    assert_eq!(a.tokens, b.tokens);
    let diff = max_diff(wa.data(), wb.data());
    assert!(diff < 1e-4, "attention weights differ by {diff}");
    for (x, y) in a.next.iter().zip(&b.next).chain(a.baseline.iter().flatten().zip(b.baseline.iter().flatten())) {
        assert_eq!(x.id, y.id);
        assert!((x.prob - y.prob).abs() < 1e-4, "p({}) {} vs {}", x.text, x.prob, y.prob);
    }
    let run = |s: &Session| {
        let mut ids = Vec::new();
        block_on(s.generate(&q, 12, |t, _| ids.push(t.id))).unwrap();
        ids
    };
    assert_eq!(run(&cpu), run(&on_gpu), "same seed, same tokens");
    assert_eq!(on_gpu.engine().backend(), "webgpu", "no fallback happened");
    assert!(on_gpu.take_notice().is_none());
}

#[test]
fn a_gpu_failure_falls_back_to_the_cpu_with_a_notice() {
    let Some((cpu, s)) = cpu_and_gpu() else { return };
    let q = query("Q F K B Q F K");
    s.inject_gpu_fault();
    let (b, wb) = block_on(s.analyze(&q)).expect("the CPU answers instead");
    let (a, wa) = block_on(cpu.analyze(&q)).unwrap();
    assert_eq!(a.next, b.next);
    assert_eq!(wa, wb);
    let notice = s.take_notice().expect("a notice for the page");
    assert!(notice.contains("WebGPU failed") && notice.contains("CPU"), "{notice}");
    assert_eq!(s.engine().backend(), "cpu");
}

#[test]
fn a_gpu_failure_during_generation_continues_on_the_cpu() {
    let Some((cpu, s)) = cpu_and_gpu() else { return };
    let q = query("Q F K B Z Q F K B");
    let mut want = Vec::new();
    block_on(cpu.generate(&q, 10, |t, _| want.push(t.id))).unwrap();
    let mut g = block_on(s.start_generation(&q)).unwrap();
    let mut got = Vec::new();
    for step in 0..10 {
        if step == 4 {
            s.inject_gpu_fault(); // the KV cache is on the GPU: the CPU must rebuild it
        }
        got.push(block_on(s.next_token(&mut g)).unwrap().0.id);
    }
    assert_eq!(got, want);
    assert!(s.take_notice().is_some());
    assert_eq!(s.engine().backend(), "cpu");
}

/// GPT-2 small's embedding table (154 MB) exceeds many adapters' 128 MiB binding limit, so it is
/// uploaded in chunks of rows. Forcing 7 chunks on the bundled model changes nothing.
#[test]
fn an_embedding_table_in_chunks_gives_the_same_logits() {
    use attention_live::gpt2::engine::Engine;
    use attention_live::gpt2::gpu::GpuGpt2;
    use attention_live::gpt2::ForwardOptions;
    let Some(gpu) = gpu() else { return };
    let s = session();
    let whole = Engine::Gpu(Rc::new(block_on(GpuGpt2::upload(gpu.clone(), &s.model)).unwrap()));
    let chunked = Engine::Gpu(Rc::new(
        block_on(GpuGpt2::upload_in_chunks(gpu, &s.model, 50257 / 7 + 1, Precision::F32)).unwrap(),
    ));
    let cpu = Engine::Cpu(s.model.clone());
    let ids = [1168u32, 569, 50256, 0, 317, 25000, 50000];
    let opts = ForwardOptions { all_logits: true, ..Default::default() };
    let run = |e: &Engine| block_on(e.forward(&s.model, &ids, &mut e.new_cache(ids.len()), &opts)).unwrap().logits;
    let (a, b, c) = (run(&whole), run(&chunked), run(&cpu));
    assert_eq!(a, b, "chunks change nothing");
    let err = (&b - &c).iter().fold(0.0f32, |m, e| m.max(e.abs()));
    assert!(err < 1e-3, "chunked GPU vs CPU: {err}");
}

/// GPT-2 with its matrix-product weights stored as f16 on the GPU matches its CPU twin (the same
/// model with those weights rounded to f16) as closely as the f32 path matches the CPU. The
/// bundled models ship in F16, so for them the f16 path loses nothing at all.
#[test]
fn f16_weights_match_the_rounded_cpu_model() {
    use attention_live::gpt2::engine::Engine;
    use attention_live::gpt2::gpu::GpuGpt2;
    use attention_live::gpt2::weights::Weights;
    use attention_live::gpt2::{ForwardOptions, Gpt2};
    use common::gpu_ops::round_linear_to_f16;
    let Some(gpu) = gpu().filter(|g| common::has_f16(g)) else { return };
    let s = session();
    let ids = [1168u32, 569, 50256, 0, 317, 25000, 50000];
    let opts = ForwardOptions { all_logits: true, ..Default::default() };
    let run = |m: &Gpt2, e: &Engine| block_on(e.forward(m, &ids, &mut e.new_cache(ids.len()), &opts)).unwrap().logits;
    let max_diff =
        |a: &ndarray::Array2<f32>, b: &ndarray::Array2<f32>| (a - b).iter().fold(0.0f32, |m, e| m.max(e.abs()));
    // Random f32 weights (the stories model's shape), and the same rounded to f16 on the CPU.
    let model = Rc::new(Gpt2 { config: s.model.config.clone(), weights: Weights::random(&s.model.config, 5) });
    let mut weights = model.weights.clone();
    for b in &mut weights.h {
        for lin in [&mut b.attn.c_attn, &mut b.attn.c_proj, &mut b.mlp.c_fc, &mut b.mlp.c_proj] {
            *lin = round_linear_to_f16(lin);
        }
    }
    let twin = Rc::new(Gpt2 { config: model.config.clone(), weights });
    let half = block_on(GpuGpt2::upload_with(gpu.clone(), &model, Precision::F16)).unwrap();
    assert_eq!(half.precision(), Precision::F16);
    let gpu_half = run(&model, &Engine::Gpu(Rc::new(half)));
    let (cpu_twin, cpu_exact) = (run(&twin, &Engine::Cpu(twin.clone())), run(&model, &Engine::Cpu(model.clone())));
    let (err, rounding) = (max_diff(&gpu_half, &cpu_twin), max_diff(&cpu_twin, &cpu_exact));
    eprintln!("f16 GPU vs its CPU twin: {err:.2e}; the twin vs the f32 model: {rounding:.2e}");
    assert!(err < 1e-3, "f16 GPU vs CPU twin: {err}");
    assert!(rounding > 10.0 * err, "the rounding ({rounding}) is what differs, not the kernels ({err})");
    // The shipped model is F16 already: storing it as f16 on the GPU changes nothing.
    let shipped = block_on(GpuGpt2::upload_with(gpu, &s.model, Precision::F16)).unwrap();
    let (a, b) = (run(&s.model, &Engine::Gpu(Rc::new(shipped))), run(&s.model, &Engine::Cpu(s.model.clone())));
    assert!(max_diff(&a, &b) < 1e-3);
}

/// The session stores an F16 checkpoint's weights as f16 where the device can (nothing
/// changes), and keeps f32 weights f32.
#[test]
fn the_session_uses_f16_weights_only_where_nothing_changes() {
    use attention_live::gpt2::gpu::GpuGpt2;
    use attention_live::gpt2::weights::Weights;
    use attention_live::gpt2::Gpt2;
    let Some(gpu) = gpu() else { return };
    let s = session();
    block_on(s.attach_gpu(gpu.clone())).unwrap();
    let want = if gpu.f16 { Precision::F16 } else { Precision::F32 };
    assert_eq!(s.gpu_precision(), Some(want), "the bundled model ships in F16");
    let random = Gpt2 { config: s.model.config.clone(), weights: Weights::random(&s.model.config, 2) };
    assert_eq!(GpuGpt2::lossless_precision(&gpu, &random), Precision::F32, "random f32 weights are not f16 values");
}

/// An F32 checkpoint opts in to f16 weights (the page's "WebGPU, f16 weights"): the weights are
/// rounded, the self-test measures how far the logits moved from the CPU's f32 ones, and the
/// answers stay those of the f32 model within that change.
#[test]
fn an_f32_checkpoint_opts_in_to_f16_weights_and_the_change_is_measured() {
    use attention_live::formats::safetensors::{write, Dtype};
    use attention_live::gpt2::weights::Weights;
    use attention_live::gpt2::Config;
    let Some(gpu) = gpu().filter(|g| common::has_f16(g)) else { return };
    let (cfg_json, _) = common::checkpoint("static/models/induction");
    let cfg = Config::from_json(&cfg_json).unwrap();
    let bytes = write(&Weights::random(&cfg, 5).named(), Dtype::F32, &[("format", "pt")]);
    let (cpu, s) = (Session::new(&cfg_json, &bytes).unwrap(), Session::new(&cfg_json, &bytes).unwrap());
    block_on(s.attach_gpu(gpu.clone())).unwrap();
    assert_eq!((s.gpu_precision(), s.gpu_f16_change()), (Some(Precision::F32), None), "not asked: f32 stays f32");
    block_on(s.attach_gpu_with(gpu, true)).unwrap();
    assert_eq!(s.gpu_precision(), Some(Precision::F16));
    let change = s.gpu_f16_change().expect("the change is measured");
    eprintln!("f16 weights moved the self-test's logits by at most {change:.2e}");
    assert!(change > 0.0 && change < 1e-2, "{change}");
    let q = query("Q F K B Z Q F K");
    let ((a, _), (b, _)) = (block_on(cpu.analyze(&q)).unwrap(), block_on(s.analyze(&q)).unwrap());
    for (x, y) in a.next.iter().zip(&b.next) {
        assert!((x.prob - y.prob).abs() < 1e-2, "p({}) {} vs {}", x.text, x.prob, y.prob);
    }
    assert!(s.take_notice().is_none(), "no fallback to the CPU");
}
