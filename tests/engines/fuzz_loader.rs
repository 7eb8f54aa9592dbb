//! Structure-aware fuzzing of the checkpoint loader: valid small checkpoints mutated where a bad
//! file or a bad server would break them (the header's length, tensor offsets near 2³² and 2⁶⁴,
//! shapes, dtypes, duplicate keys, overlapping ranges, truncation, JSON garbage, NaN weights,
//! `config.json`'s sizes), each loaded through the worker's entry under `catch_unwind`. Zero
//! panics, and no accepted file may have a tensor outside its data section. Seeded: the same
//! cases on every run. The browser's 32-bit offset arithmetic is tested natively through
//! `byte_range::<u32>`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use attention_live::formats::safetensors::{self, byte_range, Dtype, SafeTensors};
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::{Config, Gpt2, LoadError};
use attention_live::llama::Llama;
use attention_live::marian::Marian;
use attention_live::model::stream::{StreamLoader, Streamed};
use attention_live::numerics::rng::Rng;
use attention_live::session::Gpt2Session as Session;
use serde_json::{json, Map, Value};

use crate::common;

/// A checkpoint taken apart: its config text, its header's entries and its data section.
#[derive(Clone)]
struct Parts {
    config: String,
    header: Map<String, Value>,
    data: Vec<u8>,
}

impl Parts {
    fn of(config: String, file: &[u8]) -> Parts {
        let n = u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
        let header = serde_json::from_slice(&file[8..8 + n]).unwrap();
        Parts { config, header, data: file[8 + n..].to_vec() }
    }

    fn header_text(&self) -> String {
        Value::Object(self.header.clone()).to_string()
    }

    fn file(&self, header: &str) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.data);
        out
    }

    /// The tensors whose entry still has the shape of one (earlier mutations may have broken some).
    fn tensor_names(&self) -> Vec<String> {
        let whole = |v: &Value| v.is_object() && v["data_offsets"].as_array().is_some_and(|a| a.len() == 2);
        self.header.iter().filter(|(k, v)| *k != "__metadata__" && whole(v)).map(|(k, _)| k.clone()).collect()
    }

    /// A tensor's (begin, end).
    fn offsets(&self, name: &str) -> (u64, u64) {
        let o = &self.header[name]["data_offsets"];
        (o[0].as_u64().unwrap_or(0), o[1].as_u64().unwrap_or(0))
    }

    fn span(&self, name: &str) -> u64 {
        let (b, e) = self.offsets(name);
        e.wrapping_sub(b)
    }
}

/// The checkpoints mutated: the F32 fixture (2 layers, width 32, 256 tokens) and a tiny random
/// model in F16 and in BF16.
fn bases() -> Vec<Parts> {
    let (config, file) = common::checkpoint("tests/fixtures/gpt2/a");
    let mut out = vec![Parts::of(config, &file)];
    let cfg = Config::new(40, 16, 8, 1, 2);
    let config = json!({"model_type": "gpt2", "vocab_size": 40, "n_positions": 16, "n_embd": 8, "n_layer": 1,
        "n_head": 2, "n_inner": null, "layer_norm_epsilon": 1e-5})
    .to_string();
    for dtype in [Dtype::F16, Dtype::BF16] {
        let file = safetensors::write(&Weights::random(&cfg, 3).named(), dtype, &[("format", "pt")]);
        out.push(Parts::of(config.clone(), &file));
    }
    out
}

fn pick<T: Clone>(rng: &mut Rng, from: &[T]) -> T {
    from[(rng.next_u64() % from.len() as u64) as usize].clone()
}

/// Offsets and lengths where arithmetic goes wrong: around the data's end, and values whose sum
/// with the data's start wraps past 2³² (the browser's usize) or 2⁶⁴ to a small number.
fn interesting(rng: &mut Rng, data_start: u64, data_len: u64) -> u64 {
    let wrap32 = (1u64 << 32).wrapping_sub(data_start);
    let wrap64 = 0u64.wrapping_sub(data_start);
    let k = rng.next_u64() % 64;
    let inside = rng.next_u64() % (data_len + 1);
    pick(
        rng,
        &[
            0,
            1,
            4,
            data_len,
            data_len.saturating_sub(4),
            data_len + 4,
            inside,
            (1 << 31) - k,
            wrap32,
            wrap32.wrapping_add(k),
            (1 << 32) - k,
            1 << 32,
            (1 << 32) + k,
            1 << 63,
            wrap64,
            wrap64.wrapping_add(k),
            u64::MAX - k,
            u64::MAX,
        ],
    )
}

/// A JSON value of any type that a size could be wrongly given as.
fn odd_value(rng: &mut Rng) -> Value {
    pick(
        rng,
        &[
            json!(0),
            json!(-1),
            json!(-4096),
            json!(1.5),
            json!(1e300),
            json!("12"),
            json!(null),
            json!(true),
            json!([]),
            json!({}),
            json!(1u64 << 30),
            json!(1u64 << 32),
            json!((1u64 << 32) + 1),
            json!(100_000_000),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(3),
            json!(7),
        ],
    )
}

/// One mutated case: (what was done, config text, file bytes).
fn mutate(rng: &mut Rng, base: &Parts) -> (String, String, Vec<u8>) {
    let mut p = base.clone();
    let mut what = Vec::new();
    let mut raw_header: Option<String> = None;
    let mut length_field: Option<u64> = None;
    let mut cut: Option<usize> = None;
    let rounds = 1 + rng.next_u64() % 2;
    for _ in 0..rounds {
        let names = p.tensor_names();
        if names.is_empty() {
            break;
        }
        let name = pick(rng, &names);
        let data_start = 8 + p.header_text().len() as u64;
        let data_len = p.data.len() as u64;
        match rng.next_u64() % 12 {
            0 => {
                let n = p.header_text().len() as u64;
                let v = pick(rng, &[0, 1, 7, n - 1, n + 1, n + 8, 1 << 32, (1 << 32) + n, 100 << 20, u64::MAX]);
                what.push(format!("header length {v}"));
                length_field = Some(v);
            }
            1 | 2 => {
                // Offsets: one end or both; keeping the span passes the size check, so the sum
                // with the data's start is what has to refuse it.
                let span = p.span(&name);
                let begin = interesting(rng, data_start, data_len);
                let end = match rng.next_u64() % 3 {
                    0 => begin.wrapping_add(span),
                    1 => interesting(rng, data_start, data_len),
                    _ => begin.saturating_add(span),
                };
                what.push(format!("{name} offsets [{begin}, {end}]"));
                p.header[&name]["data_offsets"] = json!([begin, end]);
            }
            3 => {
                let mut shape: Vec<Value> = p.header[&name]["shape"].as_array().cloned().unwrap_or_default();
                match rng.next_u64() % 4 {
                    0 if !shape.is_empty() => {
                        let i = (rng.next_u64() % shape.len() as u64) as usize;
                        shape[i] = json!(interesting(rng, data_start, data_len));
                    }
                    1 => shape.push(json!(pick(rng, &[0u64, 1, 2, 1 << 32]))),
                    2 => shape.reverse(),
                    _ => shape = vec![odd_value(rng)],
                }
                what.push(format!("{name} shape {shape:?}"));
                p.header[&name]["shape"] = Value::Array(shape);
            }
            4 => {
                let dtype = pick(rng, &[json!("F32"), json!("F16"), json!("BF16"), json!("I64"), json!(""), json!(4)]);
                what.push(format!("{name} dtype {dtype}"));
                p.header[&name]["dtype"] = dtype;
            }
            5 => {
                // Another tensor's range, whole or half-way in: an overlap.
                let other = pick(rng, &names);
                let (b, e) = p.offsets(&other);
                let shift = if rng.next_u64().is_multiple_of(2) { 0 } else { e.saturating_sub(b) / 2 / 4 * 4 };
                what.push(format!("{name} over {other} (+{shift})"));
                let begin = b.saturating_add(shift);
                p.header[&name]["data_offsets"] = json!([begin, begin.saturating_add(p.span(&name))]);
            }
            6 => {
                // A key twice: the text keeps both (a map cannot).
                let mut changed = p.header[&name].clone();
                changed["data_offsets"] = json!([0, p.span(&name)]);
                let text = p.header_text();
                raw_header = Some(format!("{{{}:{changed},{}", json!(name), &text[1..]));
                what.push(format!("{name} twice"));
            }
            7 => {
                let len = 8 + p.header_text().len() + p.data.len();
                let at = (rng.next_u64() % len as u64) as usize;
                what.push(format!("cut at {at}"));
                cut = Some(at);
            }
            8 => {
                // JSON garbage: a byte of the header replaced by a structural one.
                let mut text = raw_header.take().unwrap_or_else(|| p.header_text()).into_bytes();
                let at = (rng.next_u64() % text.len() as u64) as usize;
                let b = pick(rng, b"{}[]\",:-0e\\ \xff\x00");
                text[at] = b;
                what.push(format!("header byte {at} = {b:#x}"));
                raw_header = Some(String::from_utf8_lossy(&text).into_owned());
            }
            9 => {
                let v = odd_value(rng);
                what.push(format!("{name} = {v}"));
                p.header[&name] = v;
            }
            10 => {
                // A NaN, an infinity or a subnormal in the data.
                let at = (rng.next_u64() % (p.data.len() as u64 / 2)) as usize * 2;
                let v = pick(rng, &[[0x00, 0x7e], [0x00, 0x7c], [0x80, 0xff], [0x01, 0x00]]);
                p.data[at..at + 2].copy_from_slice(&v);
                what.push(format!("data bytes {at} = {v:?}"));
            }
            _ => {
                // config.json: a size, a flag or the whole text.
                let mut cfg: Map<String, Value> = serde_json::from_str(&p.config).unwrap_or_default();
                let key = pick(
                    rng,
                    &[
                        "n_layer",
                        "n_embd",
                        "n_head",
                        "n_positions",
                        "vocab_size",
                        "n_inner",
                        "n_ctx",
                        "layer_norm_epsilon",
                    ],
                );
                let v = odd_value(rng);
                what.push(format!("config {key} = {v}"));
                cfg.insert(key.into(), v);
                p.config = match rng.next_u64() % 8 {
                    0 => Value::Object(cfg).to_string().replacen('{', "{\"n_layer\": 1,", 1),
                    1 => "[1, 2]".into(),
                    _ => Value::Object(cfg).to_string(),
                };
            }
        }
    }
    let header = raw_header.unwrap_or_else(|| p.header_text());
    let mut file = p.file(&header);
    if let Some(v) = length_field {
        file[..8].copy_from_slice(&v.to_le_bytes());
    }
    if let Some(at) = cut {
        file.truncate(at);
    }
    (what.join("; "), p.config, file)
}

/// Every tensor of an accepted file lies inside its data section.
fn inside_data(file: &[u8]) -> Result<(), String> {
    let st = SafeTensors::parse(file).map_err(|e| format!("loaded, but the parser refuses it: {e}"))?;
    for (name, t) in &st.tensors {
        if !(st.data_start <= t.start && t.start <= t.end && t.end <= file.len()) {
            return Err(format!(
                "`{name}` reads bytes {}..{} of a file whose data is {}..{}",
                t.start,
                t.end,
                st.data_start,
                file.len()
            ));
        }
    }
    Ok(())
}

#[test]
fn mutated_checkpoints_never_panic_nor_read_outside_the_data() {
    const CASES: usize = 6000;
    let bases = bases();
    for b in &bases {
        Gpt2::load(&b.config, &b.file(&b.header_text())).expect("the unmutated checkpoints load");
    }
    let mut rng = Rng::new(2024);
    let (mut accepted, mut failures) = (0, Vec::new());
    let t0 = Instant::now();
    for i in 0..CASES {
        let base = &bases[i % bases.len()];
        let (what, config, file) = mutate(&mut rng, base);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let model = Gpt2::load(&config, &file)?;
            // An accepted model must also run: a sane config and weights the forward pass reads.
            let _ = model.forward(&[0, 1], &mut model.new_cache(), &Default::default());
            Ok::<_, LoadError>(())
        }));
        match outcome {
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("case {i} ({what}) panicked: {msg}"));
            }
            Ok(Ok(())) => {
                accepted += 1;
                if let Err(e) = inside_data(&file) {
                    failures.push(format!("case {i} ({what}): {e}"));
                }
            }
            Ok(Err(e)) => assert!(!e.to_string().is_empty()),
        }
    }
    let elapsed = t0.elapsed();
    println!(
        "{CASES} mutated checkpoints in {:.2} s: {accepted} accepted, {} refused",
        elapsed.as_secs_f64(),
        CASES - accepted
    );
    assert!(failures.is_empty(), "{} failures, first: {:#?}", failures.len(), &failures[..failures.len().min(10)]);
    assert!(accepted > 0 && accepted < CASES / 2, "the mutations should mostly break the file: {accepted}");
}

/// `file` fed to a family's streaming loader in chunks of random sizes (1 byte to all of it), with
/// or without its length announced.
fn streamed<M: Streamed>(
    rng: &mut Rng,
    config: &str,
    file: &[u8],
    declared: bool,
    packed: bool,
) -> Result<M, LoadError> {
    let mut loader = StreamLoader::<M>::with_layout(config, declared.then_some(file.len() as u64), packed)?;
    let mut at = 0;
    while at < file.len() {
        let n = pick(rng, &[1usize, 2, 3, 5, 8, 13, 64, 1000, 4096, file.len()]).min(file.len() - at);
        loader.feed(&file[at..at + n])?;
        at += n;
    }
    loader.finish()
}

/// The Llama family's checkpoints to mutate: tied (F32, BF16) and untied output layers.
fn llama_bases() -> Vec<Parts> {
    ["gqa", "gqa_bf16", "mqa"]
        .iter()
        .map(|f| {
            let (config, file) = common::checkpoint(&format!("tests/fixtures/llama/{f}"));
            Parts::of(config, &file)
        })
        .collect()
}

/// The fuzz corpus of `bases` loaded whole (`whole`) and streamed: both refuse, or both load the
/// same tensors (`named`, in the plain layout).
fn stream_like_whole<M: Streamed>(
    bases: &[Parts],
    cases: usize,
    whole: impl Fn(&str, &[u8]) -> Result<M, LoadError>,
    named: impl Fn(&M, bool) -> Vec<(String, Vec<usize>, Vec<f32>)>,
) {
    let mut rng = Rng::new(7);
    let (mut accepted, mut failures) = (0, Vec::new());
    for i in 0..cases {
        let (what, config, file) = mutate(&mut rng, &bases[i % bases.len()]);
        let whole = whole(&config, &file);
        for declared in [true, false] {
            let packed = i % 4 == 0;
            let outcome = catch_unwind(AssertUnwindSafe(|| streamed::<M>(&mut rng, &config, &file, declared, packed)));
            let Ok(stream) = outcome else {
                failures.push(format!("case {i} ({what}) panicked"));
                continue;
            };
            match (&whole, stream) {
                (Ok(a), Ok(b)) => {
                    accepted += 1;
                    if named(a, false) != named(&b, true) {
                        failures.push(format!("case {i} ({what}): other weights when streamed"));
                    }
                }
                (Err(_), Err(_)) => {}
                (a, b) => failures.push(format!(
                    "case {i} ({what}, length announced: {declared}): whole file {:?}, streamed {:?}",
                    a.as_ref().err(),
                    b.err()
                )),
            }
        }
    }
    println!("{cases} mutated checkpoints streamed: {accepted} accepted");
    assert!(failures.is_empty(), "{} failures, first: {:#?}", failures.len(), &failures[..failures.len().min(10)]);
    assert!(accepted > 0, "some cases load");
}

/// The download path refuses exactly what the whole-file path refuses, and what it accepts
/// holds the same weights: the fuzz corpus, fed in chunks, for each family.
#[test]
fn the_streaming_loader_accepts_and_refuses_what_the_whole_file_loader_does() {
    let named = |m: &Gpt2, relayout: bool| match relayout {
        true => m.weights.with_layout(false).named(),
        false => m.weights.named(),
    };
    stream_like_whole(&bases(), 3000, Gpt2::load, named);
    let named = |m: &Llama, relayout: bool| match relayout {
        true => m.weights.with_layout(false).named(),
        false => m.weights.named(),
    };
    stream_like_whole(&llama_bases(), 1500, Llama::load, named);
    let marian = ["tied", "untied"].map(|f| {
        let (config, file) = common::checkpoint(&format!("tests/fixtures/marian/{f}"));
        Parts::of(config, &file)
    });
    stream_like_whole(&marian, 1000, Marian::load, |m: &Marian, _| m.weights.named());
}

/// The worker's entry, `Session::new`, on a few of the same cases (it also builds the tokenizer).
#[test]
fn the_session_refuses_bad_checkpoints_with_a_message() {
    let bases = bases();
    let mut rng = Rng::new(99);
    for i in 0..30 {
        let (what, config, file) = mutate(&mut rng, &bases[i % bases.len()]);
        match catch_unwind(AssertUnwindSafe(|| Session::new(&config, &file).map(|_| ()))) {
            Err(_) => panic!("case {i} ({what}) panicked"),
            Ok(Err(e)) => assert!(!e.to_string().is_empty()),
            Ok(Ok(())) => inside_data(&file).unwrap(),
        }
    }
}

/// The browser's usize is 32 bits: the offset arithmetic, run with `u32` indices, never wraps.
/// A sum past 2³² is refused whatever the file's length, and an accepted range is the exact sum.
#[test]
fn offsets_are_never_wrapped_in_32_bit_arithmetic() {
    // The fault seen in the browser: begin and end both past 2³², wrapping back into the header.
    let (data_start, file_len) = (100u64, 1_000u64);
    let begin = (1u64 << 32) - data_start; // data_start + begin = 2³², which wraps to 0 in u32
    assert_eq!((data_start as u32).wrapping_add(begin as u32), 0, "u32 arithmetic wraps here");
    let e = byte_range::<u32>("w", data_start, begin, begin + 8, file_len).unwrap_err();
    assert!(matches!(e, LoadError::Truncated { needed, .. } if needed == (1 << 32) + 8), "{e}");
    // Inside a file longer than 4 GiB (possible natively) but past what 32 bits address.
    let e = byte_range::<u32>("w", data_start, 1 << 32, (1 << 32) + 8, 5 << 30).unwrap_err();
    assert!(e.to_string().contains("address"), "{e}");
    assert_eq!(
        byte_range::<u64>("w", data_start, 1 << 32, (1 << 32) + 8, 5 << 30).unwrap(),
        (data_start + (1 << 32), data_start + (1 << 32) + 8)
    );
    // Near 2⁶⁴: the u64 sum itself would wrap.
    let e = byte_range::<u32>("w", data_start, u64::MAX - 50, u64::MAX - 42, file_len).unwrap_err();
    assert!(e.to_string().contains("past the end"), "{e}");

    // And at random, around every boundary: accepted only when the exact sums fit the file and
    // 32 bits, and then equal to them.
    let mut rng = Rng::new(32);
    let t0 = Instant::now();
    const CASES: usize = 200_000;
    for _ in 0..CASES {
        let data_start = pick(&mut rng, &[8u64, 16, 100, 4096, (1 << 32) - 8, (1 << 32) + 8]);
        let file_len =
            data_start + pick(&mut rng, &[0u64, 8, 1000, 1 << 31, (1 << 32) - data_start.min(1 << 31), 5 << 30]);
        let begin = interesting(&mut rng, data_start, file_len - data_start);
        let end = if rng.next_u64().is_multiple_of(2) {
            begin.wrapping_add(8)
        } else {
            interesting(&mut rng, data_start, file_len)
        };
        let exact = (data_start as u128 + begin as u128, data_start as u128 + end as u128);
        let fits = begin <= end && exact.1 <= file_len as u128 && exact.1 <= u32::MAX as u128;
        match byte_range::<u32>("w", data_start, begin, end, file_len) {
            Ok((a, b)) => {
                assert!(fits, "accepted [{begin}, {end}] from {data_start} in {file_len}");
                assert_eq!((a as u128, b as u128), exact);
                assert!(a as u64 >= data_start && b as u64 <= file_len);
            }
            Err(_) => assert!(!fits, "refused [{begin}, {end}] from {data_start} in {file_len}"),
        }
    }
    println!("{CASES} offset pairs checked in 32-bit arithmetic in {:.2} s", t0.elapsed().as_secs_f64());
}
