//! Positional encodings and the transformer block, against closed forms and hand values.

use attention_live::demos::rope::Method;
use attention_live::demos::{bank, collapse, pe_shift, rope, sinusoidal};
use attention_live::numerics::block::{gelu, layer_norm, relu, spread, BlockParts};
use attention_live::numerics::positional::{frequency, rope as rotate, shift_error, sinusoidal as table};
use ndarray::arr2;

#[test]
fn sinusoidal_table_matches_the_closed_form() {
    let (d, base) = (16, 10000.0);
    let pe = table(50, d, base);
    for pos in 0..50 {
        for i in 0..d / 2 {
            let angle = pos as f64 / f64::powf(base, (2 * i) as f64 / d as f64);
            assert!((pe[[pos, 2 * i]] - angle.sin()).abs() < 1e-12);
            assert!((pe[[pos, 2 * i + 1]] - angle.cos()).abs() < 1e-12);
        }
    }
    // The table steps down each column by rotation and re-anchors every 16 positions: check
    // the largest table the book draws (and longer) against sin/cos computed afresh per cell.
    for (len, d, base) in [(1024, 512, 10000.0), (128, 8, 100.0), (37, 7, 100000.0)] {
        let pe = table(len, d, base);
        for pos in 0..len {
            for j in 0..d {
                let angle = pos as f64 * frequency(j / 2, d, base);
                let want = if j % 2 == 0 { angle.sin() } else { angle.cos() };
                assert!((pe[[pos, j]] - want).abs() < 1e-12, "PE({pos}, {j}) for d = {d}, base = {base}");
            }
        }
    }
    // hand values: PE(1, 0) = sin 1 = 0.841471, PE(1, 1) = cos 1 = 0.540302
    assert!((pe[[1, 0]] - 0.841471).abs() < 1e-6 && (pe[[1, 1]] - 0.540302).abs() < 1e-6);
}

#[test]
fn position_similarity_depends_on_the_offset_only() {
    let s = sinusoidal::compute(32, 10000.0, 40);
    for p in 0..40 {
        // diagonal: each pair contributes sin² + cos² = 1, so d/2
        assert!((s.similarity[p][p] - 16.0).abs() < 1e-9);
        for q in 0..40 {
            // the definition: the dot product of the two rows of the table
            let dot: f64 = (0..32).map(|j| s.table[p][j] * s.table[q][j]).sum();
            assert!((s.similarity[p][q] - dot).abs() < 1e-9);
            let by_offset: f64 = (0..16).map(|i| (frequency(i, 32, 10000.0) * (p as f64 - q as f64)).cos()).sum();
            assert!((dot - by_offset).abs() < 1e-9);
        }
    }
    // wavelength of pair 0 is 2π
    assert!((s.wavelengths[0] - 2.0 * std::f64::consts::PI).abs() < 1e-12);
}

#[test]
fn a_shift_is_a_rotation_that_depends_on_k_only() {
    for p in [0.0, 3.0, 77.0, 199.0] {
        for k in [-50.0, -1.0, 5.0, 31.0] {
            assert!(shift_error(p, k, 32, 10000.0) < 1e-12);
        }
    }
    let s = pe_shift::compute(10, 5, 8);
    assert_eq!(s.rotation.len(), 4);
    assert!((s.rotation[0] - 5.0).abs() < 1e-12, "ω₀ = 1: the fastest pair turns by k radians");
    assert!(s.max_error < 1e-12);
}

#[test]
fn rope_scores_depend_on_the_offset_only() {
    let r = rope::compute(Method::Rope, 5, 2, 1);
    assert!(r.diagonal_gap < 1e-12, "{}", r.diagonal_gap);
    let shifted = rope::compute(Method::Rope, 9, 6, 1);
    assert!((r.score - shifted.score).abs() < 1e-12, "same offset 3, same score");
    let added = rope::compute(Method::Added, 5, 2, 1);
    assert!(added.diagonal_gap > 1e-2, "added encodings are not purely relative");
    // rotation keeps lengths
    let x = [0.3, -1.2, 2.0, 0.5];
    let y = rotate(&x, 7.0, 10000.0);
    let n = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>();
    assert!((n(&x) - n(&y)).abs() < 1e-12);
}

#[test]
fn block_pieces_by_hand() {
    // layer norm of (1, 2, 3): mean 2, variance 2/3 -> (−1, 0, 1)/√(2/3 + 1e-5) ≈ (−1.224736, 0, 1.224736)
    let ln = layer_norm(&arr2(&[[1.0, 2.0, 3.0]]), 1e-5);
    assert!((ln[[0, 0]] + 1.224736).abs() < 1e-6 && ln[[0, 1]].abs() < 1e-12 && (ln[[0, 2]] - 1.224736).abs() < 1e-6);
    // GELU (tanh form) at 1: 0.5 (1 + tanh(√(2/π) · 1.044715)) = 0.841192
    assert!((gelu(1.0) - 0.841192).abs() < 1e-6);
    assert_eq!(gelu(0.0), 0.0);
    assert_eq!((relu(-2.0), relu(3.0)), (0.0, 3.0));
    assert_eq!(spread(&arr2(&[[1.0, 2.0], [1.0, 2.0]])), 0.0, "identical rows: no spread");
}

#[test]
fn attention_alone_collapses_and_the_full_block_does_not() {
    // the figures quoted in chapters/transformer-block.md (seed 1, n = 8, d = 16)
    let none = BlockParts { residual: false, ffn: false, layer_norm: false };
    let c = |p| collapse::compute(24, 8, p, 1).block;
    let attn = c(none);
    assert!((attn[0] - 0.96).abs() < 0.01);
    assert!(attn[3] < 1e-3);
    let res = c(BlockParts { residual: true, ..none });
    assert!((res[6] - 0.33).abs() < 0.01 && (res[12] - 0.06).abs() < 0.01, "{} {}", res[6], res[12]);
    let ln = c(BlockParts { layer_norm: true, ..none });
    assert!((ln[3] - 0.004).abs() < 0.001);
    let res_ffn = c(BlockParts { residual: true, ffn: true, ..none });
    assert!((res_ffn[9] - 0.53).abs() < 0.01 && (res_ffn[24] - 0.02).abs() < 0.01, "{} {}", res_ffn[9], res_ffn[24]);
    let full = c(BlockParts { residual: true, ffn: true, layer_norm: true });
    assert!((full[24] - 0.35).abs() < 0.01, "{}", full[24]);
    // the reference curve is attention only, whatever is toggled
    assert_eq!(
        collapse::compute(24, 8, BlockParts { residual: true, ffn: true, layer_norm: true }, 1).attention_only,
        attn
    );
    // collapsed tokens have cosine similarity 1
    let collapsed = collapse::compute(12, 8, none, 1);
    assert!(collapsed.cosine.iter().flatten().all(|&c| (c - 1.0).abs() < 1e-6));
}

#[test]
fn context_moves_bank() {
    let river = bank::compute("river", 1.0);
    assert!(river.output[1] > river.output[0], "{:?}", river.output);
    let money = bank::compute("money", 1.0);
    assert!(money.output[0] > money.output[1], "{:?}", money.output);
    let alone = bank::compute("alone", 1.0);
    assert!((alone.output[0] - alone.output[1]).abs() < 1e-12, "on the diagonal");
    // β = 0: the plain average of the sentence's tokens
    let flat = bank::compute("river", 0.0);
    let mean = flat.vectors.iter().fold([0.0, 0.0], |a, v| [a[0] + v[0] / 5.0, a[1] + v[1] / 5.0]);
    assert!((flat.output[0] - mean[0]).abs() < 1e-12 && (flat.output[1] - mean[1]).abs() < 1e-12);
}

#[test]
fn numbers_quoted_in_the_last_chapters() {
    // layer norm of (2, 4, 6, 8): mean 5, variance 5 -> (−3, −1, 1, 3)/√5 ≈ (−1.342, −0.447, 0.447, 1.342)
    let ln = layer_norm(&arr2(&[[2.0, 4.0, 6.0, 8.0]]), 1e-5);
    for (a, b) in ln.iter().zip([-1.342, -0.447, 0.447, 1.342]) {
        assert!((a - b).abs() < 1e-3);
    }
    // shifting or scaling the input changes nothing (up to ε)
    let shifted = layer_norm(&arr2(&[[102.0, 104.0, 106.0, 108.0]]), 1e-5);
    assert!(ln.iter().zip(shifted.iter()).all(|(a, b)| (a - b).abs() < 1e-12));
    // bank at β = 0: plain averages (0.3, 0.96) and (0.98, 0.3)
    let r = bank::compute("river", 0.0).output;
    let m = bank::compute("money", 0.0).output;
    assert!((r[0] - 0.3).abs() < 1e-12 && (r[1] - 0.96).abs() < 1e-12);
    assert!((m[0] - 0.98).abs() < 1e-12 && (m[1] - 0.3).abs() < 1e-12);
    // positional: d/4 and d/2 columns at d = 64 have wavelengths 2π·10 and 2π·100
    let s = sinusoidal::compute(64, 10000.0, 64);
    assert_eq!(s.columns, vec![0, 2, 16, 32]);
    assert!(
        (s.wavelengths[1] - 8.38).abs() < 0.01
            && (s.wavelengths[2] - 62.83).abs() < 0.01
            && (s.wavelengths[3] - 628.3).abs() < 0.1
    );
}

#[test]
fn cosine_similarity_of_rows_by_hand_and_by_offset() {
    use attention_live::numerics::positional::{cosine_matrix, mean_by_offset};
    // Rows (1, 0), (1, 1), (0, 2): cos(r0, r1) = 1/√2, cos(r0, r2) = 0, cos(r1, r2) = 2/(√2·2) = 1/√2.
    let m = ndarray::arr2(&[[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]]);
    let s = cosine_matrix(m.view());
    let h = std::f64::consts::FRAC_1_SQRT_2;
    for (got, want) in s.iter().zip([1.0, h, 0.0, h, 1.0, h, 0.0, h, 1.0]) {
        assert!((got - want).abs() < 1e-12);
    }
    // Offsets: k = 0 → 1, k = 1 → mean(1/√2, 1/√2), k = 2 → 0.
    let by = mean_by_offset(&s);
    assert!((by[0] - 1.0).abs() < 1e-12 && (by[1] - h).abs() < 1e-12 && by[2].abs() < 1e-12);
}

/// The numbers the positional chapter quotes about the bundled models' learned tables.
#[test]
fn the_bundled_wpe_tables_are_as_the_chapter_says() {
    use attention_live::formats::safetensors::SafeTensors;
    use attention_live::numerics::positional::{cosine_matrix, mean_by_offset};
    let wpe = |name: &str| {
        let bytes =
            std::fs::read(format!("{}/static/models/{name}/model.safetensors", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let st = SafeTensors::parse(&bytes).unwrap();
        let info = &st.tensors["wpe.weight"];
        ndarray::Array2::from_shape_vec(
            (info.shape[0], info.shape[1]),
            st.to_f32(info).into_iter().map(f64::from).collect(),
        )
        .unwrap()
    };
    let by = mean_by_offset(&cosine_matrix(wpe("stories").view()));
    let text = std::fs::read_to_string(format!("{}/chapters/positional.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for (k, quoted) in [(1, "0.68"), (30, "0.35"), (60, "−0.27")] {
        let got = format!("{:.2}", by[k]).replace('-', "−");
        assert_eq!(got, quoted, "mean cosine at offset {k}");
        assert!(text.contains(quoted));
    }
    // The induction model trained on 48 positions: rows 48..64 stayed small.
    let w = wpe("induction");
    let norm = |p: usize| w.row(p).dot(&w.row(p)).sqrt();
    let trained = (1..48).map(norm).sum::<f64>() / 47.0;
    let unused = (48..64).map(norm).sum::<f64>() / 16.0;
    assert!(unused < trained / 2.0, "unused rows {unused} vs trained {trained}");
}
