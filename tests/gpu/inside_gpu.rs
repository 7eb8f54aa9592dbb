//! Looking inside a model on the GPU: the same test body as the CPU's (`common::inside`), on
//! both families; a GPU failure in the middle of a sweep falls back to the CPU, and the sweep's
//! numbers are still the reference's.

use std::rc::Rc;

use attention_live::session::inside::{Patching, Sweep};
use attention_live::session::{ModelFamily, Session};
use pollster::block_on;

use crate::common;
use crate::common::inside::{cat_and_dog, gpt2, llama, matches_reference};

fn on_gpu<F: ModelFamily>(s: &Session<F>) -> bool {
    let Some(gpu) = common::gpu() else { return false };
    block_on(s.attach_gpu(Rc::new(gpu))).expect("the self-test passes");
    true
}

#[test]
fn the_lens_patching_and_head_scores_match_pytorch_on_the_gpu() {
    for name in ["gpt2-b", "induction"] {
        let s = gpt2(name);
        if !on_gpu(&s) {
            return;
        }
        matches_reference(&s, name);
        assert_eq!(s.engine().backend(), "webgpu", "{name}: no fallback");
    }
    let s = llama("llama-gqa");
    assert!(on_gpu(&s));
    matches_reference(&s, "llama-gqa");
    assert_eq!(s.engine().backend(), "webgpu");
}

#[test]
fn a_gpu_failure_in_the_middle_of_a_sweep_falls_back_and_the_numbers_stay_right() {
    let s = llama("stories-llama");
    if !on_gpu(&s) {
        return;
    }
    let q = cat_and_dog(Sweep::Both);
    let mut sweep = block_on(s.start_patching(&q)).unwrap();
    for _ in 0..3 {
        block_on(s.patch_step(&mut sweep)).unwrap();
    }
    // The next run fails on the device: the session rebuilds the corrupted run's cache on the
    // CPU from the tokens before the patched position and answers the same run there.
    s.inject_gpu_fault();
    while !sweep.finished() {
        block_on(s.patch_step(&mut sweep)).unwrap();
    }
    assert_eq!(s.engine().backend(), "cpu");
    assert!(s.take_notice().is_some_and(|n| n.contains("now runs on the CPU")));
    let (got, want) = (sweep.answer(), block_on(llama("stories-llama").patching(&q)).unwrap());
    let cells = |p: &Patching| p.residual.iter().chain(&p.heads).flatten().map(|r| r.metric).collect::<Vec<_>>();
    let (a, b) = (cells(&got), cells(&want));
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() < 1e-3, "cell {i}: {x} on the GPU then the CPU, {y} on the CPU");
    }
}
