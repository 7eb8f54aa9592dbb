//! The Vision Transformer engine on the GPU backend (Mesa's lavapipe here and in CI) against
//! Hugging Face transformers: the fixtures of `tests/engines/vit.rs` (`scripts/vit/make_fixtures.py`:
//! `vit`, the class token; `deit`, the class and distillation tokens, two heads averaged), to the
//! same tolerance as the CPU.
//!
//! The test command fails them where no adapter exists (`common::gpu`).

use crate::common::{self, floats, max_err};

use std::rc::Rc;
use std::sync::Arc;

use attention_live::vit::gpu::GpuVit;
use attention_live::vit::{Options, Vit};
use ndarray::Array3;
use serde_json::Value;

/// As `tests/engines/vit.rs`.
const TOL: f32 = 1e-4;

/// The fixture's model on the GPU (or None without an adapter), its pixels and its reference.
fn on_gpu(name: &str) -> Option<(GpuVit, Array3<f32>, Value)> {
    let gpu = Rc::new(common::gpu()?);
    let d = format!("{}/tests/fixtures/vit/{name}", env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(format!("{d}/config.json")).unwrap();
    let cpu = Vit::load(&config, &std::fs::read(format!("{d}/model.safetensors")).unwrap()).unwrap();
    let r: Value = serde_json::from_str(&std::fs::read_to_string(format!("{d}/reference.json")).unwrap()).unwrap();
    let s = cpu.config.image_size;
    let pixels = Array3::from_shape_vec((3, s, s), floats(&r["pixel_values"])).unwrap();
    Some((pollster::block_on(GpuVit::upload(gpu, Arc::new(cpu))).expect("upload to the GPU"), pixels, r))
}

/// Every hidden state and attention, the logits, and the logits with a head knocked out.
#[test]
fn a_vit_and_a_deit_match_transformers_on_the_gpu() {
    for name in ["vit", "deit"] {
        let Some((m, pixels, r)) = on_gpu(name) else { return };
        let opts = Options { attentions: true, hidden_states: true, ..Default::default() };
        let out = pollster::block_on(m.forward(pixels.view(), &opts)).unwrap();
        let hidden = out.hidden_states.iter().map(|h| h.as_slice().unwrap());
        crate::common::each_layer(hidden, &r["hidden_states"], &format!("{name}: hidden state"), TOL);
        let attentions = out.attentions.iter().map(|a| a.as_slice().unwrap());
        crate::common::each_layer(attentions, &r["attentions"], &format!("{name}: attention"), TOL);
        let err = max_err(out.logits.iter(), &floats(&r["logits"]));
        eprintln!("{name} on {}: logits differ by at most {err:.1e}", m.gpu.name);
        assert!(err < TOL, "{name}: logits differ by {err}");
        let k = &r["knock_out"];
        let at = (k["layer"].as_u64().unwrap() as usize, k["head"].as_u64().unwrap() as usize);
        let opts = Options { knock_out: vec![at], ..Default::default() };
        let knocked = pollster::block_on(m.forward(pixels.view(), &opts)).unwrap();
        assert!(max_err(knocked.logits.iter(), &floats(&k["logits"])) < TOL, "{name}: {at:?} knocked out");
        // An image of another shape is refused, in the CPU's words.
        let e = pollster::block_on(m.forward(Array3::zeros((3, 8, 8)).view(), &Options::default())).err().unwrap();
        assert!(e.to_string().contains("the image is 8 × 8 pixels"), "{e}");
    }
}

/// The vision session on the GPU: the bundled model passes its self-test, answers the page's drawn
/// star as the CPU does, and a GPU failure moves it to the CPU for good with one notice.
#[test]
fn the_vision_session_runs_on_the_gpu_and_falls_back_with_a_notice() {
    use attention_live::demos::vision::{sample, Picture};
    use attention_live::session::vision::{ClassifyQuery, VisionSession};
    let Some(gpu) = common::gpu() else { return };
    let dir = format!("{}/static/models/shapes-vit", env!("CARGO_MANIFEST_DIR"));
    let text = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).unwrap();
    let weights = std::fs::read(format!("{dir}/model.safetensors")).unwrap();
    let s = VisionSession::load(&text("config.json"), &weights, &text("preprocessor_config.json")).unwrap();
    pollster::block_on(s.attach_gpu(Rc::new(gpu))).expect("the self-test passes");
    let (width, height, rgba) = sample(Picture::Star).unwrap();
    let q = ClassifyQuery { id: 1, width, height, knock_out: vec![(3, 1)] };
    let cpu = s.classify(&q, &rgba).unwrap();
    let on_gpu = pollster::block_on(s.answer(&q, &rgba)).unwrap();
    assert!(on_gpu.backend.starts_with("WebGPU"), "{}", on_gpu.backend);
    assert_eq!(
        on_gpu.top.iter().map(|p| p.index).collect::<Vec<_>>(),
        cpu.top.iter().map(|p| p.index).collect::<Vec<_>>()
    );
    for (a, b) in
        on_gpu.top.iter().zip(&cpu.top).chain(on_gpu.unablated.iter().flatten().zip(cpu.unablated.iter().flatten()))
    {
        assert!((a.prob - b.prob).abs() < TOL, "{a:?} {b:?}");
    }
    let at = |v: &attention_live::session::vision::Vision| {
        v.attentions.iter().flat_map(|a| a.iter().copied()).collect::<Vec<_>>()
    };
    assert!(max_err(at(&on_gpu).iter(), &at(&cpu)) < TOL);
    assert_eq!(on_gpu.seen, cpu.seen);
    s.inject_gpu_fault();
    let after = pollster::block_on(s.answer(&q, &rgba)).unwrap();
    assert_eq!(after.backend, "the CPU");
    assert!(after.notice.as_deref().is_some_and(|n| n.starts_with("WebGPU failed")), "{:?}", after.notice);
    assert_eq!(after.top, cpu.top);
    assert!(pollster::block_on(s.answer(&q, &rgba)).unwrap().notice.is_none(), "the notice comes once");
}
