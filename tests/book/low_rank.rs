//! The Linformer demo's numerics: the SVD against hand values, rank-k errors that never grow
//! with k, and the demo's matrices from a bundled model against the engine's own attention.

use attention_live::demos::linformer::{analyze, text_for};
use attention_live::gpt2::{Capture, ForwardOptions};
use attention_live::numerics::low_rank::{linformer, output_errors, segment_means, svd, truncation_errors};
use attention_live::numerics::rng::normal_matrix;
use attention_live::session::Gpt2Session as Session;
use ndarray::{arr2, Array2};

use crate::common;

#[test]
fn svd_matches_hand_values_and_rebuilds_the_matrix() {
    // [[3, 0], [4, 5]]: AᵀA = [[25, 20], [20, 25]] has eigenvalues 45 and 5, so σ = √45, √5.
    let s = svd(arr2(&[[3.0, 0.0], [4.0, 5.0]]).view());
    assert!((s.sigma[0] - 45f64.sqrt()).abs() < 1e-12 && (s.sigma[1] - 5f64.sqrt()).abs() < 1e-12, "{:?}", s.sigma);
    // A random 20 × 20: U Σ Vᵀ = A, and U, V orthonormal.
    let a = normal_matrix(20, 20, 5, 1.0);
    let s = svd(a.view());
    let rebuilt = (&s.u * &s.sigma).dot(&s.v.t());
    assert!((&rebuilt - &a).iter().all(|e| e.abs() < 1e-10));
    let eye = Array2::<f64>::eye(20);
    assert!((&s.u.t().dot(&s.u) - &eye).iter().all(|e| e.abs() < 1e-10));
    assert!((&s.v.t().dot(&s.v) - &eye).iter().all(|e| e.abs() < 1e-10));
    assert!(s.sigma.windows(2).into_iter().all(|w| w[0] >= w[1]), "sorted");
    // Eckart–Young by hand: σ = (3, 4) → errors √25/5 = 1, √9/5 = 0.6, 0.
    assert_eq!(truncation_errors(&[4.0, 3.0]), [1.0, 0.6, 0.0]);
}

fn stories() -> Session {
    let (cfg, bytes) = common::checkpoint("static/models/stories");
    Session::new(&cfg, &bytes).unwrap()
}

#[test]
fn the_demo_uses_the_engines_attention_and_errors_never_grow_with_k() {
    let s = stories();
    let text = text_for("stories");
    let (layer, head) = (1, 2);
    let h = s.head_qkv(1, text, layer, head).unwrap();
    let n = h.tokens.len();
    assert!((30..=128).contains(&n), "{n} tokens");
    // The causal matrix the demo builds from Q and K is the one the forward pass captures.
    let ids: Vec<u32> = h.tokens.iter().map(|t| t.id).collect();
    let out = s
        .model
        .forward(
            &ids,
            &mut s.model.new_cache(),
            &ForwardOptions { capture: Capture::Layer(layer), ..Default::default() },
        )
        .unwrap();
    let captured = out.attentions[layer].as_ref().unwrap();
    let r = analyze(&h, true).unwrap();
    for i in 0..n {
        for j in 0..n {
            assert!((r.weights[i][j] - f64::from(captured[[head, i, j]])).abs() < 1e-5, "({i},{j})");
        }
    }
    for causal in [true, false] {
        let r = analyze(&h, causal).unwrap();
        // Σσ² = ‖P‖²_F.
        let frob: f64 = r.weights.iter().flatten().map(|x| x * x).sum();
        let sum_sq: f64 = r.sigma.iter().map(|x| x * x).sum();
        assert!((frob - sum_sq).abs() < 1e-9 * frob);
        for errs in [&r.matrix_error, &r.output_error] {
            assert_eq!(errs.len(), n + 1);
            assert!((errs[0] - 1.0).abs() < 1e-12 && errs[n] < 1e-6, "from 1 at k = 0 to 0 at k = n");
            assert!(errs.windows(2).all(|w| w[1] <= w[0] + 1e-12), "non-increasing: {errs:?}");
        }
        // The rank-k rebuild has the error the curve reports.
        let k = 5;
        let approx = r.approx(k);
        let diff: f64 = approx.iter().flatten().zip(r.weights.iter().flatten()).map(|(a, b)| (a - b) * (a - b)).sum();
        assert!((diff.sqrt() / frob.sqrt() - r.matrix_error[k]).abs() < 1e-9);
        match (&r.linformer_error, causal) {
            (Some(l), false) => {
                // With k = n averaged "segments" of one position each, E = F = I: exact.
                assert!(l[n - 1] < 1e-12 && l[0] > 0.01, "{} {}", l[0], l[n - 1]);
            }
            (None, true) => {}
            _ => panic!("Linformer's curve is given exactly when the mask is off"),
        }
    }
}

#[test]
fn linformer_with_identity_projection_is_plain_attention_and_segments_average() {
    let (q, k, v) = (normal_matrix(6, 4, 1, 1.0), normal_matrix(6, 4, 2, 1.0), normal_matrix(6, 4, 3, 1.0));
    let e = segment_means(6, 6);
    assert_eq!(e, Array2::<f64>::eye(6));
    let exact = attention_live::numerics::low_rank::full_attention(q.view(), k.view(), v.view()).1;
    assert!((&linformer(q.view(), k.view(), v.view(), e.view()) - &exact).iter().all(|x| x.abs() < 1e-12));
    // 6 positions in 4 segments: lengths 1, 2, 1, 2 (rows r·6/4 .. (r+1)·6/4), each row sums to 1.
    let e = segment_means(4, 6);
    assert_eq!(e.row(1).to_vec(), [0.0, 0.5, 0.5, 0.0, 0.0, 0.0]);
    assert!(e.rows().into_iter().all(|r| (r.sum() - 1.0).abs() < 1e-12));
    // A rank-1 P (all rows equal): one singular value carries everything.
    let p = Array2::from_shape_fn((5, 5), |(_, j)| (j + 1) as f64 / 15.0);
    let errs = output_errors(p.view(), &svd(p.view()), v.slice(ndarray::s![..5, ..]));
    assert!(errs[1] < 1e-12);
}

#[test]
fn the_demo_asks_for_the_text_its_model_was_trained_on() {
    use attention_live::demos::linformer::{LinformerDemo, Model, Params};
    use attention_live::demos::Demo;
    use attention_live::state::Params as _;
    let mut p = Params::defaults();
    assert_eq!((p.model, p.layer, p.head, p.causal, p.k), (Model::Stories, 0, 0, false, 8));
    let asked = LinformerDemo::compute(&p);
    assert!(asked.text.starts_with("Tom has a little dog") && asked.text.contains("tree. He barked"));
    p.model = Model::Induction;
    let json = LinformerDemo::data(&p).unwrap();
    assert_eq!(json["model"], "induction");
    assert_eq!(json["text"], text_for("induction"));
}
