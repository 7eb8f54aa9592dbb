//! Shared by the model tests: reading a checkpoint folder of this repository, the backends a
//! model test runs on, and each GPU kernel beside its CPU twin (`gpu_ops`, `llama_ops`).

use std::rc::Rc;

use attention_live::gpt2::engine::{Cache, Engine};
use attention_live::gpt2::gpu::GpuGpt2;
use attention_live::gpt2::{ForwardOptions, ForwardOutput, Gpt2};
use attention_live::gpu::Gpu;

#[allow(dead_code)] // each test binary uses a part
pub mod gpu_ops;
#[allow(dead_code)] // each test binary uses a part
pub mod inside;
#[allow(dead_code)] // each test binary uses a part
pub mod llama_ops;

/// `config.json` text and `model.safetensors` bytes of a folder, relative to the repository.
#[allow(dead_code)] // each test binary uses a part
pub fn checkpoint(folder: &str) -> (String, Vec<u8>) {
    let d = format!("{}/{folder}", env!("CARGO_MANIFEST_DIR"));
    (
        std::fs::read_to_string(format!("{d}/config.json")).unwrap(),
        std::fs::read(format!("{d}/model.safetensors")).unwrap(),
    )
}

/// A fixture's list of numbers (a reference script's JSON) as f32.
#[allow(dead_code)]
pub fn floats(v: &serde_json::Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

/// A fixture's list of token ids.
#[allow(dead_code)]
pub fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// Each layer's values (hidden states, attentions) against a fixture's list of layers, to `tol`.
#[allow(dead_code)]
pub fn each_layer<'a>(ours: impl IntoIterator<Item = &'a [f32]>, theirs: &serde_json::Value, what: &str, tol: f32) {
    let theirs = theirs.as_array().unwrap();
    let ours: Vec<&[f32]> = ours.into_iter().collect();
    assert_eq!(ours.len(), theirs.len(), "{what}: layers");
    for (l, (o, t)) in ours.iter().zip(theirs).enumerate() {
        let err = max_err(o.iter(), &floats(t));
        assert!(err < tol, "{what} {l}: {err}");
    }
}

/// The largest difference between our values and a reference's, of the same length.
#[allow(dead_code)]
pub fn max_err<'a>(ours: impl IntoIterator<Item = &'a f32>, theirs: &[f32]) -> f32 {
    let ours: Vec<f32> = ours.into_iter().copied().collect();
    assert_eq!(ours.len(), theirs.len(), "sizes differ");
    ours.iter().zip(theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max)
}

/// A file under `static/`, as the page would fetch it (a demo's `Reader`).
#[allow(dead_code)] // each test binary uses a part
pub fn static_file(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(format!("{}/static/{path}", env!("CARGO_MANIFEST_DIR"))).map_err(|e| format!("{path}: {e}"))
}

/// The GPU adapter the GPU tests run on (Mesa's lavapipe here and in CI). The test command
/// (`scripts/test.sh`) sets `REQUIRE_GPU=f16`: there a missing adapter fails the test that asked,
/// so no GPU test passes by skipping. Elsewhere it says "skipped: no adapter" and gives None.
#[allow(dead_code)]
pub fn gpu() -> Option<Gpu> {
    match pollster::block_on(Gpu::new()) {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(std::env::var_os("REQUIRE_GPU").is_none(), "no GPU adapter ({e}), and REQUIRE_GPU is set");
            eprintln!("skipped: no adapter ({e})");
            None
        }
    }
}

/// Whether `gpu` stores f16 weights (`shader-f16`); under `REQUIRE_GPU=f16` a device without it
/// fails the test that asked, so the f16 paths never pass by skipping where they can run.
#[allow(dead_code)]
pub fn has_f16(gpu: &Gpu) -> bool {
    if !gpu.f16 {
        let required = std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "f16");
        assert!(!required, "{} has no shader-f16, and REQUIRE_GPU=f16 is set", gpu.name);
        eprintln!("skipped: {} has no shader-f16", gpu.name);
    }
    gpu.f16
}

/// The backends a model test runs on: the CPU always, in both weight layouts (row-major, as
/// natively, and packed, as in the browser), and the GPU when an adapter exists (Mesa's
/// lavapipe here and in CI; see [`gpu`]).
#[allow(dead_code)]
pub fn engines(model: &Rc<Gpt2>) -> Vec<Engine> {
    let packed = Gpt2 { config: model.config.clone(), weights: model.weights.with_layout(true) };
    let mut out = vec![Engine::Cpu(model.clone()), Engine::Cpu(Rc::new(packed))];
    if let Some(gpu) = gpu() {
        let on_gpu = pollster::block_on(GpuGpt2::upload(Rc::new(gpu), model)).expect("upload to the GPU");
        out.push(Engine::Gpu(Rc::new(on_gpu)));
    }
    out
}

/// The backend's name for messages, telling the CPU's two weight layouts apart.
#[allow(dead_code)]
pub fn label(engine: &Engine) -> &'static str {
    use attention_live::gpt2::weights::LinearWeight;
    match engine {
        Engine::Cpu(m)
            if m.weights.h.first().is_some_and(|b| matches!(b.attn.c_attn.weight, LinearWeight::Packed(_))) =>
        {
            "cpu (packed weights, the browser's layout)"
        }
        e => e.backend(),
    }
}

/// One forward pass on `engine`, blocking.
#[allow(dead_code)]
pub fn forward(
    engine: &Engine,
    model: &Gpt2,
    tokens: &[u32],
    cache: &mut Cache,
    opts: &ForwardOptions,
) -> ForwardOutput {
    pollster::block_on(engine.forward(model, tokens, cache, opts)).unwrap_or_else(|e| panic!("{}: {e}", label(engine)))
}
