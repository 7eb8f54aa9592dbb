//! The streaming loader (`model::stream`, with `gpt2::stream`'s and `llama::stream`'s plans): a
//! checkpoint fed in chunks cut at every awkward place (inside the 8-byte length, inside the
//! header, inside a value, across tensors) loads the same weights as the whole file, in both
//! layouts; a file that ends early, goes on past its last tensor, or contradicts its announced
//! length is refused as the whole-file path refuses it. GPT-2's cases first, then the Llama
//! family's (projections stored (out, in), written transposed into packed matrices; an output
//! layer tied or not).

use attention_live::formats::safetensors::{self, Dtype, SafeTensors};
use attention_live::gpt2::stream::StreamLoader;
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::{Config, Gpt2, LoadError};

use crate::common;

fn fixture() -> (String, Vec<u8>) {
    common::checkpoint("tests/fixtures/gpt2/a")
}

/// `file` fed in the pieces that the cut points `cuts` (ascending) make.
fn fed(config: &str, file: &[u8], cuts: &[usize], declared: Option<u64>, packed: bool) -> Result<Gpt2, LoadError> {
    let mut loader = StreamLoader::with_layout(config, declared, packed)?;
    let mut from = 0;
    for &to in cuts.iter().chain([&file.len()]) {
        loader.feed(&file[from..to])?;
        from = to;
    }
    loader.finish()
}

fn refused(r: Result<Gpt2, LoadError>) -> LoadError {
    match r {
        Err(e) => e,
        Ok(_) => panic!("loaded"),
    }
}

fn same(a: &Gpt2, b: &Gpt2) -> bool {
    a.config == b.config && a.weights.named() == b.weights.with_layout(false).named()
}

/// Where the data section starts and every tensor's byte range begins.
fn boundaries(file: &[u8]) -> Vec<usize> {
    let st = SafeTensors::parse(file).unwrap();
    let mut out: Vec<usize> = st.tensors.values().map(|t| t.start).collect();
    out.push(st.data_start);
    out.sort_unstable();
    out
}

#[test]
fn every_cut_in_the_length_the_header_and_around_each_tensor_loads_the_same_weights() {
    let (config, file) = fixture();
    let whole = Gpt2::load(&config, &file).unwrap();
    let mut cuts: Vec<usize> = (0..=boundaries(&file)[0] + 9).collect();
    for b in boundaries(&file) {
        cuts.extend(b.saturating_sub(5)..(b + 6).min(file.len()));
    }
    for &k in &cuts {
        for packed in [false, true] {
            for declared in [Some(file.len() as u64), None] {
                let m = fed(&config, &file, &[k], declared, packed).unwrap_or_else(|e| panic!("cut at {k}: {e}"));
                assert!(same(&whole, &m), "cut at {k}, packed {packed}: other weights");
            }
        }
    }
    // Two cuts: one inside the header, one inside a value of each tensor.
    for b in boundaries(&file).into_iter().skip(1) {
        let m = fed(&config, &file, &[3, b + 1], None, true).unwrap();
        assert!(same(&whole, &m), "cuts at 3 and {}", b + 1);
    }
}

#[test]
fn one_byte_at_a_time_in_f32_f16_and_bf16() {
    let cfg = Config::new(40, 16, 8, 1, 2);
    let config = r#"{"model_type": "gpt2", "vocab_size": 40, "n_positions": 16, "n_embd": 8, "n_layer": 1,
        "n_head": 2}"#;
    for dtype in [Dtype::F32, Dtype::F16, Dtype::BF16] {
        let file = safetensors::write(&Weights::random(&cfg, 5).named(), dtype, &[("format", "pt")]);
        let whole = Gpt2::load(config, &file).unwrap();
        let cuts: Vec<usize> = (1..file.len()).collect();
        for packed in [false, true] {
            assert!(same(&whole, &fed(config, &file, &cuts, None, packed).unwrap()), "{dtype:?}");
        }
    }
}

/// The fixture with an `lm_head.weight` placed before or after `wte` in the data, equal to it
/// or one value off.
fn with_lm_head(first: bool, off: bool) -> Vec<u8> {
    let (config, file) = fixture();
    let mut named = Gpt2::load(&config, &file).unwrap().weights.named();
    let (_, shape, mut values) = named[0].clone();
    if off {
        values[7] += 0.5;
    }
    let tie = ("lm_head.weight".to_string(), shape, values);
    if first {
        named.insert(0, tie);
    } else {
        named.push(tie);
    }
    safetensors::write(&named, Dtype::F32, &[])
}

#[test]
fn a_tied_lm_head_before_or_after_wte_is_compared_with_it() {
    let (config, _) = fixture();
    for first in [true, false] {
        let file = with_lm_head(first, false);
        let whole = Gpt2::load(&config, &file).unwrap();
        let m = fed(&config, &file, &[9, 1001, 5003], None, true).unwrap();
        assert!(same(&whole, &m), "lm_head first: {first}");
        let bad = with_lm_head(first, true);
        assert!(Gpt2::load(&config, &bad).is_err());
        let e = refused(fed(&config, &bad, &[9, 1001, 5003], None, true));
        assert!(e.to_string().contains("lm_head.weight differs from wte.weight"), "{e}");
    }
}

#[test]
fn a_file_that_ends_early_or_runs_on_is_refused() {
    let (config, file) = fixture();
    let bounds = boundaries(&file);
    let mut ends: Vec<usize> = vec![0, 1, 7, 8, 9, bounds[0] - 1, bounds[0], file.len() - 1];
    ends.extend(bounds.iter().map(|b| b + 3));
    for end in ends {
        let cut = &file[..end];
        assert!(Gpt2::load(&config, cut).is_err(), "the whole-file path refuses a cut at {end}");
        let e = refused(fed(&config, cut, &[end / 2], None, true));
        assert!(matches!(e, LoadError::Truncated { .. }), "cut at {end}: {e}");
        // Announced whole, then cut (the worker also refuses the short body itself).
        let e = refused(fed(&config, cut, &[], Some(file.len() as u64), true));
        assert!(matches!(e, LoadError::Truncated { .. }), "cut at {end}, announced: {e}");
        // Announced as cut: refused from the header, before the data arrives.
        if end > bounds[0] {
            let mut loader = StreamLoader::new(&config, Some(end as u64)).unwrap();
            let e = loader.feed(&file[..bounds[0]]).unwrap_err();
            assert!(matches!(e, LoadError::Truncated { needed, .. } if needed > end as u64), "{e}");
        }
    }
    // Bytes past the last tensor: refused, announced or not.
    let mut longer = file.clone();
    longer.extend_from_slice(&[0; 12]);
    assert!(Gpt2::load(&config, &longer).is_err());
    for declared in [None, Some(longer.len() as u64)] {
        let e = refused(fed(&config, &longer, &[file.len() - 2], declared, true));
        assert!(e.to_string().contains("last 12 bytes"), "{e}");
    }
    // A header longer than the announced file is refused once its length is read.
    let mut loader = StreamLoader::new(&config, Some(100)).unwrap();
    let e = loader.feed(&file[..8]).unwrap_err();
    assert!(matches!(e, LoadError::Truncated { have: 100, .. }), "{e}");
}

#[test]
fn refusals_name_the_problem_as_the_whole_file_path_does() {
    let (config, file) = fixture();
    // A NaN in the middle of a weight: the tensor and the value's index, cut inside the value.
    let st = SafeTensors::parse(&file).unwrap();
    let t = &st.tensors["transformer.h.1.mlp.c_fc.weight"];
    let mut bad = file.clone();
    let at = t.start + 4 * 37;
    bad[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let whole = refused(Gpt2::load(&config, &bad));
    let streamed = refused(fed(&config, &bad, &[at + 2], None, true));
    assert_eq!(whole, streamed);
    assert!(streamed.to_string().contains("h.1.mlp.c_fc.weight") && streamed.to_string().contains("37"));
    // The config's checks come first, before any byte of the file.
    let other = config.replace("\"n_layer\": 2", "\"n_layer\": 3");
    assert_ne!(other, config, "the fixture's config names n_layer");
    let e = refused(fed(&other, &file, &[100], None, true));
    assert_eq!(e, refused(Gpt2::load(&other, &file)));
    // A mismatched pair is refused as soon as the header is in.
    let mut loader = StreamLoader::new(&other, None).unwrap();
    assert!(loader.feed(&file[..boundaries(&file)[0]]).is_err());
}

#[test]
fn the_pinned_hash_is_checked_chunk_by_chunk() {
    use attention_live::session::manifest::{sha256_hex, verify, FileCheck, Verifier};
    let (_, file) = fixture();
    let want = FileCheck { size: file.len() as u64, sha256: sha256_hex(&file) };
    let fed = |bytes: &[u8]| {
        let mut v = Verifier::default();
        for piece in bytes.chunks(1000) {
            v.update(piece);
        }
        v.check("model.safetensors", &want)
    };
    assert_eq!(fed(&file), Ok(()));
    let mut other = file.clone();
    other[5000] ^= 1;
    assert_eq!(fed(&other), verify("model.safetensors", &other, &want));
    assert!(fed(&other).unwrap_err().contains("SHA-256"));
    assert!(fed(&file[..file.len() - 1]).unwrap_err().contains("bytes"));
}

#[test]
fn a_packed_matrix_written_piece_by_piece_equals_one_packed_whole() {
    use attention_live::numerics::packed::PackedMatrix;
    use ndarray::Array2;
    for (rows, cols) in [(5, 3), (7, 8), (9, 21), (4, 17)] {
        let w = Array2::from_shape_fn((rows, cols), |(i, j)| (i * 100 + j) as f32);
        let flat = w.as_slice().unwrap();
        for step in [1, 3, 8, 11, rows * cols] {
            let mut p = PackedMatrix::zeros(rows, cols);
            for (k, piece) in flat.chunks(step).enumerate() {
                p.write(k * step, piece);
            }
            assert_eq!(p, PackedMatrix::pack(w.view()), "{rows} x {cols} in pieces of {step}");
        }
    }
}

#[test]
fn a_packed_matrix_written_transposed_piece_by_piece_equals_the_packed_transpose() {
    use attention_live::numerics::packed::PackedMatrix;
    use ndarray::Array2;
    for (out, inp) in [(5, 3), (7, 8), (9, 21), (16, 4)] {
        // W (out, in) as nn.Linear stores it; the packed matrix holds Wᵀ (in, out).
        let w = Array2::from_shape_fn((out, inp), |(i, j)| (i * 100 + j) as f32);
        let flat = w.as_slice().unwrap();
        for step in [1, 3, 8, 11, out * inp] {
            let mut p = PackedMatrix::zeros(inp, out);
            for (k, piece) in flat.chunks(step).enumerate() {
                p.write_transposed(k * step, piece);
            }
            assert_eq!(p, PackedMatrix::pack(w.t()), "{out} x {inp} in pieces of {step}");
        }
    }
}

mod llama {
    use super::boundaries;
    use crate::common;
    use attention_live::formats::safetensors::{self, Dtype, SafeTensors};
    use attention_live::formats::LoadError;
    use attention_live::llama::stream::StreamLoader;
    use attention_live::llama::Llama;

    fn fed(config: &str, file: &[u8], cuts: &[usize], packed: bool) -> Result<Llama, LoadError> {
        let mut loader = StreamLoader::with_layout(config, Some(file.len() as u64), packed)?;
        let mut from = 0;
        for &to in cuts.iter().chain([&file.len()]) {
            loader.feed(&file[from..to])?;
            from = to;
        }
        loader.finish()
    }

    fn same(a: &Llama, b: &Llama) -> bool {
        a.config == b.config && a.weights.named() == b.weights.with_layout(false).named()
    }

    /// Tied (F32, BF16) and untied output layers, cut around every tensor and inside values.
    #[test]
    fn every_cut_around_each_tensor_loads_the_same_weights_tied_or_not() {
        for fixture in ["gqa", "gqa_bf16", "mqa"] {
            let (config, file) = common::checkpoint(&format!("tests/fixtures/llama/{fixture}"));
            let whole = Llama::load(&config, &file).unwrap();
            let mut cuts: Vec<usize> = (0..12).collect();
            for b in boundaries(&file) {
                cuts.extend(b.saturating_sub(3)..(b + 4).min(file.len()));
            }
            for &k in &cuts {
                for packed in [false, true] {
                    let m = fed(&config, &file, &[k], packed).unwrap_or_else(|e| panic!("{fixture}, cut at {k}: {e}"));
                    assert!(same(&whole, &m), "{fixture}, cut at {k}, packed {packed}: other weights");
                }
            }
            // In the browser's layout the projections are packed, read back as stored.
            let m = fed(&config, &file, &[], true).unwrap();
            let q = &m.weights.layers[1].self_attn.q_proj;
            assert!(matches!(q, attention_live::llama::weights::Linear::Packed(_)));
            assert_eq!(q.weight(), whole.weights.layers[1].self_attn.q_proj.weight());
        }
    }

    /// A tied fixture with an `lm_head.weight` placed before or after the embeddings, equal to
    /// them or one value off.
    #[test]
    fn a_tied_lm_head_before_or_after_the_embeddings_is_compared_with_them() {
        let (config, file) = common::checkpoint("tests/fixtures/llama/gqa");
        let named = Llama::load(&config, &file).unwrap().weights.named();
        for first in [true, false] {
            for off in [false, true] {
                let (_, shape, mut values) = named[0].clone();
                if off {
                    values[7] += 0.5;
                }
                let mut with = named.clone();
                let tie = ("lm_head.weight".to_string(), shape, values);
                if first {
                    with.insert(0, tie);
                } else {
                    with.push(tie);
                }
                let bytes = safetensors::write(&with, Dtype::F32, &[]);
                let whole = Llama::load(&config, &bytes);
                let streamed = fed(&config, &bytes, &[9, 1001, 5003], true);
                match (whole, streamed) {
                    (Ok(a), Ok(b)) => assert!(!off && same(&a, &b), "first {first}, off {off}"),
                    (Err(a), Err(b)) => {
                        assert!(off, "first {first}: refused");
                        assert_eq!(a, b);
                        assert!(b.to_string().contains("tie_word_embeddings is true"), "{b}");
                    }
                    (a, b) => panic!("first {first}, off {off}: whole {:?}, streamed {:?}", a.err(), b.err()),
                }
            }
        }
    }

    #[test]
    fn refusals_name_the_problem_as_the_whole_file_path_does() {
        let (config, file) = common::checkpoint("tests/fixtures/llama/gqa");
        let st = SafeTensors::parse(&file).unwrap();
        let t = &st.tensors["model.layers.1.mlp.up_proj.weight"];
        let mut bad = file.clone();
        let at = t.start + 4 * 37;
        bad[at..at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
        let whole = Llama::load(&config, &bad).err().unwrap();
        let streamed = fed(&config, &bad, &[at + 2], true).err().unwrap();
        assert_eq!(whole, streamed);
        assert!(streamed.to_string().contains("model.layers.1.mlp.up_proj.weight"), "{streamed}");
        // A config with fewer layers than the file: refused from the header, as the whole file is.
        let other = config.replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1");
        assert_ne!(other, config, "the fixture's config names num_hidden_layers");
        let mut loader = StreamLoader::new(&other, None).unwrap();
        let e = loader.feed(&file[..boundaries(&file)[0]]).unwrap_err();
        assert_eq!(e, Llama::load(&other, &file).err().unwrap());
        // A file cut short.
        let e = fed(&config, &file[..file.len() - 3], &[], true).err().unwrap();
        assert!(matches!(e, LoadError::Truncated { .. }), "{e}");
    }
}

mod marian {
    use crate::common;
    use attention_live::formats::safetensors::{self, Dtype};
    use attention_live::formats::LoadError;
    use attention_live::marian::stream::StreamLoader;
    use attention_live::marian::Marian;

    fn fed(config: &str, file: &[u8], packed: bool) -> Result<Marian, LoadError> {
        let mut loader = StreamLoader::with_layout(config, Some(file.len() as u64), packed)?;
        for piece in file.chunks(1001) {
            loader.feed(piece)?;
        }
        loader.finish()
    }

    /// The tied fixture with the shared table's three copies in the file (as checkpoints converted
    /// from PyTorch have them), before or after it, equal or one of them a value off.
    #[test]
    fn the_shared_tables_copies_are_compared_with_it_wherever_they_are() {
        let (config, file) = common::checkpoint("tests/fixtures/marian/tied");
        let named = Marian::load(&config, &file).unwrap().weights.named();
        let copies = ["model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"];
        for (first, off) in [(true, None), (false, None), (true, Some(1)), (false, Some(2)), (true, Some(0))] {
            let mut with = named.clone();
            for (i, copy) in copies.iter().enumerate() {
                let (_, shape, mut values) = named[0].clone();
                if off == Some(i) {
                    values[3] += 0.25;
                }
                let entry = (copy.to_string(), shape, values);
                if first {
                    with.insert(0, entry);
                } else {
                    with.push(entry);
                }
            }
            let bytes = safetensors::write(&with, Dtype::F32, &[]);
            for packed in [false, true] {
                match (Marian::load(&config, &bytes), fed(&config, &bytes, packed)) {
                    (Ok(a), Ok(b)) => assert!(off.is_none() && a.weights.named() == b.weights.named()),
                    (Err(a), Err(b)) => {
                        let copy = copies[off.expect("refused only when a copy differs")];
                        assert!(b.to_string().contains(copy) || b.to_string().contains("model.shared.weight"), "{b}");
                        assert!(a.to_string().contains("tie_word_embeddings is true"), "{a}");
                    }
                    (a, b) => panic!("first {first}, off {off:?}: whole {:?}, streamed {:?}", a.err(), b.err()),
                }
            }
        }
    }

    /// An untied checkpoint whose encoder and decoder read the shared table (no tables of their own).
    #[test]
    fn an_untied_model_without_its_own_tables_reads_the_shared_one() {
        let (config, file) = common::checkpoint("tests/fixtures/marian/untied");
        let mut named = Marian::load(&config, &file).unwrap().weights.named();
        named.retain(|(name, ..)| !name.ends_with("embed_tokens.weight"));
        let bytes = safetensors::write(&named, Dtype::F32, &[]);
        let whole = Marian::load(&config, &bytes).unwrap();
        let streamed = fed(&config, &bytes, true).unwrap();
        assert_eq!(whole.weights.named(), streamed.weights.named());
        assert!(streamed.weights.decoder_embed.is_none(), "the decoder reads the encoder's (shared) table");
    }
}
