//! The efficient-attention chapter's cost formulas, against hand arithmetic, and the
//! benchmark's rows (naive, tiled and, where an adapter exists, GPU) against each other.

use crate::common;

use attention_live::demos::attention_cost::{full, low_rank, window};
use attention_live::gpu::bench::attention_row;
use attention_live::gpu::GpuError;

#[test]
fn the_printed_formulas_match_hand_arithmetic() {
    // 4n²d: n = 1024, d = 64 gives 4 · 1,048,576 · 64 = 268,435,456 (the "about 268 million"
    // of the chapter), and n² = 1,048,576 scores.
    assert_eq!(full(1024, 64).flops, 268_435_456.0);
    assert_eq!(full(1024, 64).scores, 1_048_576.0);
    // Window w = 2 over n = 4: queries see 1, 2, 2, 2 keys = 7 pairs; 4 · d · 7 with d = 1.
    assert_eq!(window(4, 1, 2).scores, 7.0);
    assert_eq!(window(4, 1, 2).flops, 28.0);
    // A window as wide as the sequence is full causal attention: n(n+1)/2 pairs.
    assert_eq!(window(100, 8, 100).scores, 5050.0);
    // 8nkd: n = 1000, k = 100, d = 64 → 51,200,000; k never exceeds n.
    assert_eq!(low_rank(1000, 64, 100).flops, 51_200_000.0);
    assert_eq!(low_rank(10, 1, 100).scores, 100.0);
    // Doubling n quadruples full attention and doubles the window's (once n ≫ w).
    assert_eq!(full(2048, 64).flops / full(1024, 64).flops, 4.0);
    let r = window(8192, 64, 256).flops / window(4096, 64, 256).flops;
    assert!((r - 2.0).abs() < 0.05, "{r}");
}

#[test]
fn benchmark_rows_agree_across_methods() {
    let gpu = common::gpu().ok_or_else(|| GpuError::NoAdapter("no adapter".into()));
    let start = std::time::Instant::now();
    let now = || start.elapsed().as_secs_f64() * 1e3;
    let row = pollster::block_on(attention_row(gpu.as_ref(), 300, 32, 1, &now));
    assert_eq!((row.n, row.d), (300, 32));
    assert!(row.tiled_max_diff < 1e-5, "tiled vs naive {}", row.tiled_max_diff);
    assert_eq!(row.naive_bytes, 4 * 300 * 300);
    assert!(row.naive_ms >= 0.0 && row.tiled_ms >= 0.0);
    match gpu {
        Ok(_) => {
            assert!(row.gpu_max_diff.expect("a GPU figure") < 1e-5, "{row:?}");
            assert!(row.gpu_ms.is_some() && row.gpu_name.is_some());
        }
        Err(_) => assert!(row.gpu_ms.is_none() && row.gpu_note.is_some()),
    }
}

#[test]
fn kv_cache_sizes_match_hand_arithmetic() {
    use attention_live::numerics::kv_cache::{KvShape, MODELS};
    let shape = |name: &str| MODELS.iter().find(|m| m.name.starts_with(name)).unwrap().shape();
    // Llama 2 7B, 16-bit, 4096 positions: 2 · 32 · 32 · 128 · 4096 · 2 = 2,147,483,648 bytes
    // = 2 GiB (the chapter's figure); per token 2 · 32 · 32 · 128 · 2 = 524,288 = 512 KiB.
    assert_eq!(shape("Llama 2").bytes(), 2 << 30);
    assert_eq!(shape("Llama 2").bytes_per_token(), 512 << 10);
    // Llama 3 8B: 8 KV heads, a quarter per token: 131,072 bytes; 8192 positions → 1 GiB.
    assert_eq!(shape("Llama 3").bytes_per_token(), 131_072);
    assert_eq!(shape("Llama 3").bytes(), 1 << 30);
    // Mistral 7B: the window caps the cache at 4096 positions: 512 MiB.
    assert_eq!(shape("Mistral").positions, 4096);
    assert_eq!(shape("Mistral").bytes(), 512 << 20);
    // GPT-2 small in f32 (our engine's cache): 2 · 12 · 12 · 64 · 4 = 73,728 bytes per token,
    // 1024 positions → 75,497,472 bytes.
    let gpt2_f32 = KvShape { bytes_per_value: 4, ..shape("GPT-2 small") };
    assert_eq!(gpt2_f32.bytes(), 75_497_472);
    // Falcon 7B (MQA): 71 heads of 64, one KV head: 2 · 32 · 1 · 64 · 2 = 8,192 bytes per token.
    assert_eq!(shape("Falcon").bytes_per_token(), 8192);
}

#[test]
fn the_kv_demo_reads_its_controls_and_compares_mha_gqa_mqa() {
    use attention_live::demos::kv_cache::{shape, variants, Params};
    let mut p = <Params as attention_live::state::Params>::defaults();
    let s = shape(&p).unwrap();
    // 128 layers × 128 heads of 256 × 131,072 positions × 256 sequences × 4 bytes = 2⁵⁰ bytes:
    // far past what a 32-bit usize (the browser's) holds; the size is a u64.
    let huge = attention_live::numerics::kv_cache::KvShape {
        layers: 128,
        heads: 128,
        kv_heads: 128,
        head_size: 256,
        positions: 131_072,
        batch: 256,
        bytes_per_value: 4,
    };
    assert_eq!(huge.bytes(), 2 * 128 * 128 * 256 * 131_072 * 256 * 4);
    // Defaults: Llama 3 8B's shape, 8192 positions, 16-bit: 1 GiB.
    assert_eq!(s.bytes(), 1 << 30);
    let [mha, set, mqa] = variants(&s);
    assert_eq!((mha.1.bytes(), set.1.bytes(), mqa.1.bytes()), (4 << 30, 1 << 30, 128 << 20));
    // More KV heads than query heads, or KV heads that do not divide them, is no model: refused
    // with the reason, never computed with another number than the slider shows.
    p.kv_heads = 100;
    let why = shape(&p).unwrap_err();
    assert!(why.contains("100 key-value heads for 32 query heads"), "{why}");
    p.kv_heads = 5;
    let why = shape(&p).unwrap_err();
    assert!(
        why.contains("32 query heads cannot be shared out evenly among 5") && why.contains("1, 2, 4, 8, 16, 32"),
        "{why}"
    );
    for kv in [1, 2, 4, 8, 16, 32] {
        p.kv_heads = kv;
        assert_eq!(shape(&p).unwrap().kv_heads, kv);
    }
    let out = <attention_live::demos::kv_cache::KvCacheDemo as attention_live::demos::Demo>::compute(&Params {
        kv_heads: 5,
        ..p
    });
    assert!(out["refused"].as_str().is_some_and(|w| w.contains("evenly")), "{out}");
}

#[test]
fn the_demos_formulas_follow_its_typed_parameters() {
    use attention_live::demos::attention_cost::{AttentionCostDemo, Params};
    use attention_live::demos::Demo;
    use attention_live::state::Params as _;
    // The defaults: lengths 128 … 2,048, d = 64, w = 256, k = 128.
    let mut p = Params::defaults();
    let f = AttentionCostDemo::compute(&p);
    assert_eq!(f.formulas.iter().map(|c| c.n).collect::<Vec<_>>(), [128, 256, 512, 1024, 2048]);
    assert_eq!((f.d, f.window, f.rank), (64, 256, 128));
    assert_eq!(f.formulas[3].full, full(1024, 64));
    assert_eq!(f.formulas[4].window, window(2048, 64, 256));
    assert_eq!(f.formulas[0].low_rank, low_rank(128, 64, 128));
    // "Download data" writes the same numbers, under the keys the first edition used.
    let json = AttentionCostDemo::data(&p).unwrap();
    assert_eq!(json["formulas"][3]["full"]["flops"], 268_435_456.0);
    assert_eq!(json["rank"], 128);
    p.n_max = 8192;
    assert_eq!(AttentionCostDemo::compute(&p).formulas.last().map(|c| c.n), Some(8192));
}
