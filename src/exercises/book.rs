//! The book's own computations, callable from answer keys (never from what a reader types),
//! so that a key states *how* its number arises and cannot drift from the code that the
//! demos and the prose use. Adding one is one line in `FUNCTIONS`.

use ndarray::Array1;

use super::expr::Arg;
use crate::demos::kv_cache::{shape as kv_shape, Params as KvCacheParams, PRECISION};
use crate::demos::multi_head::{MultiHeadDemo, MultiHeadOut, Params as MultiHeadParams, HEADS};
use crate::demos::pe_shift::{Params as PeShiftParams, PeShiftDemo, DIMS};
use crate::demos::temperature::{Params as TemperatureParams, TemperatureDemo};
use crate::demos::two_heads::{Params as TwoHeadsParams, TwoHeadsDemo, TOKENS};
use crate::demos::Demo;
use crate::formats::echo::echo;
use crate::model::sample::{distribution, Sampling};
use crate::numerics::attention::attention_flops_per_head;
use crate::numerics::block::{gelu, layer_norm};
use crate::numerics::kv_cache::{Model, MODELS};
use crate::numerics::positional::frequency;
use crate::numerics::softmax::softmax;
use crate::numerics::window::receptive_field;

pub type BookFn = fn(&[Arg]) -> Result<f64, String>;

/// Name, how it is called, and the function. Positions are counted from 1, as in the prose.
pub static FUNCTIONS: &[(&str, &str, BookFn)] = &[
    ("softmax", "softmax([scores], i, scale = 1): weight i of softmax(scale · scores)", softmax_at),
    ("dot", "dot([a], [b]): the dot product of two lists of one length", dot),
    ("temperature_weight", "temperature_weight(T, gap, i): weight i in the temperature demo", temperature_weight),
    ("temperature_entropy", "temperature_entropy(T, gap): entropy in bits, temperature demo", temperature_entropy),
    ("kv_bytes", "kv_bytes(\"Llama 2 7B\", positions): one sequence's KV cache, 16-bit", kv_bytes),
    ("kv_bytes_per_token", "kv_bytes_per_token(\"Llama 2 7B\"): cache bytes per position", kv_bytes_per_token),
    ("receptive_field", "receptive_field(w, layers): tokens one query reaches", window_field),
    ("attention_flops", "attention_flops(n, d_head): multiply-adds of one head", attention_flops),
    ("bottleneck_right", "bottleneck_right(\"fixed\", S): of 200 S-letter strings, how many right", bottleneck_right),
    ("local_gaussian", "local_gaussian(distance, D): local-p's Gaussian factor, window D", local_gaussian),
    ("bigram_score", "bigram_score(\"query\", \"key\"): cosine of the two words' bigram counts", bigram_score),
    ("lookup_weight", "lookup_weight(\"query\", β, \"key\"): that key's weight in the colour lookup", lookup_weight),
    ("lookup_channel", "lookup_channel(\"query\", β, c): channel c (1 = red) of the answer", lookup_channel),
    ("kernel", "kernel(\"gaussian\", d, σ): K(d), for gaussian, boxcar, epanechnikov, constant", kernel),
    ("nw_weight", "nw_weight([keys], q, \"kernel\", σ, i): Nadaraya–Watson weight of key i", nw_weight),
    ("nw_estimate", "nw_estimate([keys], [values], q, \"kernel\", σ): the estimate f(q)", nw_estimate),
    ("padded_weight", "padded_weight([s], valid, i, fill = −∞): weight i, keys past valid hidden", padded_weight),
    ("causal_hidden", "causal_hidden(n): entries the causal mask hides in an n × n score matrix", causal_hidden),
    ("xx_weight", "xx_weight([X by rows], d, i, j): weight of token i on j in softmax(X Xᵀ/√d)", xx_weight),
    ("bank_weight", "bank_weight(\"money\", β, \"word\"): the weight \"bank\" gives a word", bank_weight),
    ("bank_output", "bank_output(\"money\", β, c): entry c of the output of \"bank\"", bank_output),
    ("head_cost", "head_cost(n, h): multiply-adds of one head in the multi-head demo (d_model 16)", head_cost),
    ("heads_total_cost", "heads_total_cost(n, h): multiply-adds of all h heads, multi-head demo", heads_total_cost),
    ("two_heads_weight", "two_heads_weight(\"A\", β, causal, i, j): weight of token i on token j", two_heads_weight),
    ("pe_wavelength", "pe_wavelength(i, d, base): 2π/ω_i, the wavelength of pair i (from 0)", pe_wavelength),
    ("shift_angle", "shift_angle(p, k, d, i): pair i's turn from p to p + k, pe-shift demo", shift_angle),
    ("rope_angle", "rope_angle(p, i, d, base = 10000): RoPE's angle for pair i at position p", rope_angle),
    ("layer_norm", "layer_norm([x], i): entry i of LayerNorm(x), γ = 1, β = 0, ε = 10⁻⁵", layer_norm_at),
    ("variance", "variance([x]): the mean squared deviation from the mean, as layer norm takes it", variance),
    ("gelu", "gelu(x): GPT-2's GELU, tanh form", gelu_at),
    ("kv_cache_bytes", "kv_cache_bytes(L, H_kv, d_head, T, B, p): the kv-cache demo's bytes", kv_cache_bytes),
    ("vit_tokens", "vit_tokens(image, patch, extra = 1): a ViT's tokens, the patches and `extra` more", vit_tokens),
    ("next_token_prob", "next_token_prob([logits], i, τ = 1, k = 0, p = 1): the sampler's p_i", next_token_prob),
];

pub fn find(name: &str) -> Option<BookFn> {
    FUNCTIONS.iter().find(|(n, _, _)| *n == name).map(|(_, _, f)| *f)
}

fn arity(args: &[Arg], min: usize, max: usize) -> Result<(), String> {
    if args.len() < min || args.len() > max {
        let want = if min == max { format!("{min}") } else { format!("{min} to {max}") };
        return Err(format!("takes {want} arguments, not {}", args.len()));
    }
    Ok(())
}

fn num(args: &[Arg], i: usize) -> Result<f64, String> {
    match args.get(i) {
        Some(Arg::Num(x)) => Ok(*x),
        _ => Err(format!("argument {} should be a number", i + 1)),
    }
}

/// A whole number from 0 to a billion (sizes, positions, counts).
fn count(args: &[Arg], i: usize) -> Result<usize, String> {
    let x = num(args, i)?;
    if x.fract() != 0.0 || !(0.0..=1e9).contains(&x) {
        return Err(format!("argument {} should be a whole number from 0 to 10⁹, not {x}", i + 1));
    }
    Ok(x as usize)
}

fn list(args: &[Arg], i: usize) -> Result<&[f64], String> {
    match args.get(i) {
        Some(Arg::List(xs)) if !xs.is_empty() => Ok(xs),
        _ => Err(format!("argument {} should be a list [a, b, …]", i + 1)),
    }
}

/// Position `i` (from 1) of something `len` long, as an index.
fn position(args: &[Arg], i: usize, len: usize) -> Result<usize, String> {
    let p = count(args, i)?;
    if p == 0 || p > len {
        return Err(format!("position {p} is not between 1 and {len}"));
    }
    Ok(p - 1)
}

fn model(args: &[Arg], i: usize) -> Result<&'static Model, String> {
    let Some(Arg::Text(name)) = args.get(i) else {
        return Err(format!("argument {} should be a model's name in quotes", i + 1));
    };
    let found: Vec<&Model> = MODELS.iter().filter(|m| m.name.starts_with(name.as_str())).collect();
    match found[..] {
        [m] => Ok(m),
        _ => {
            let names: Vec<&str> = MODELS.iter().map(|m| m.name).collect();
            Err(format!("{} does not name exactly one of {}", echo(name), names.join("; ")))
        }
    }
}

fn softmax_at(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 3)?;
    let s = list(args, 0)?;
    let i = position(args, 1, s.len())?;
    let scale = if args.len() == 3 { num(args, 2)? } else { 1.0 };
    let w = softmax((Array1::from(s.to_vec()) * scale).view());
    Ok(w[i])
}

fn dot(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    let (a, b) = (list(args, 0)?, list(args, 1)?);
    if a.len() != b.len() {
        return Err(format!("the lists have lengths {} and {}", a.len(), b.len()));
    }
    Ok(a.iter().zip(b).map(|(x, y)| x * y).sum())
}

/// The temperature demo at (T, gap), as `compute` gives it; T and gap within its sliders.
fn temperature(args: &[Arg]) -> Result<crate::demos::temperature::Temperature, String> {
    let (t, gap) = (num(args, 0)?, num(args, 1)?);
    if !(f64::MIN_POSITIVE..=1e3).contains(&t) || !(0.0..=100.0).contains(&gap) {
        return Err(format!("T = {t}, gap = {gap}: T must be above 0 (at most 1000) and the gap from 0 to 100"));
    }
    Ok(TemperatureDemo::compute(&TemperatureParams { t, gap }))
}

fn temperature_weight(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 3)?;
    let out = temperature(args)?;
    let i = position(args, 2, out.weights.len())?;
    Ok(out.weights[i])
}

fn temperature_entropy(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    Ok(temperature(args)?.entropy_bits)
}

fn kv_bytes(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    let mut shape = model(args, 0)?.shape();
    let positions = count(args, 1)?;
    // A sliding window still caps what is kept.
    shape.positions = model(args, 0)?.window.map_or(positions, |w| w.min(positions));
    Ok(shape.bytes() as f64)
}

fn kv_bytes_per_token(args: &[Arg]) -> Result<f64, String> {
    arity(args, 1, 1)?;
    Ok(model(args, 0)?.shape().bytes_per_token() as f64)
}

fn window_field(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    let (w, layers) = (count(args, 0)?, count(args, 1)?);
    // usize is 32 bits in the browser: refuse what would overflow there.
    if (layers as u64) * (w as u64) >= u32::MAX as u64 {
        return Err(format!("w = {w} and {layers} layers are too large"));
    }
    Ok(receptive_field(w, layers) as f64)
}

fn attention_flops(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    let (n, d) = (count(args, 0)?, count(args, 1)?);
    if 2.0 * n as f64 * n as f64 * d as f64 >= u32::MAX as f64 {
        return Err(format!("n = {n} and d_head = {d} are too large"));
    }
    Ok(attention_flops_per_head(n, d) as f64)
}

/// The tokens a Vision Transformer reads: (image ÷ patch)² patches and `extra` tokens before them
/// (1: the class token; 2 with DeiT's distillation token), as `vit::Config::tokens` counts them.
fn vit_tokens(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 3)?;
    let (image, patch) = (count(args, 0)?, count(args, 1)?);
    let extra = if args.len() == 3 { count(args, 2)? } else { 1 };
    if patch == 0 || image % patch != 0 || image > 100_000 || extra > 2 {
        return Err(format!(
            "an image of {image} pixels in patches of {patch}: the patch must divide the image (up to 100,000 \
             pixels), with 0 to 2 extra tokens"
        ));
    }
    Ok(((image / patch).pow(2) + extra) as f64)
}

/// A text argument, such as a model's or a kernel's name.
fn text(args: &[Arg], i: usize) -> Result<&str, String> {
    match args.get(i) {
        Some(Arg::Text(t)) => Ok(t),
        _ => Err(format!("argument {} should be a name in quotes", i + 1)),
    }
}

/// How many of the shipped curve's held-out strings of one length a model reversed exactly.
fn bottleneck_right(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    let name = text(args, 0)?;
    let curve = crate::demos::bottleneck::curve()?;
    let keys: Vec<&str> = curve.variants.keys().map(String::as_str).collect();
    let series = curve.variants.get(name).ok_or_else(|| format!("{} is not one of {}", echo(name), keys.join(", ")))?;
    let len = count(args, 1)?;
    let at = curve.lengths.iter().position(|&l| l == len).ok_or_else(|| format!("no strings of length {len}"))?;
    // The curve stores fractions of n_per_length strings: back to a whole count.
    Ok((series.exact[at] * curve.n_per_length as f64).round())
}

/// The factor exp(−(j − p)² / (2σ²)), σ = D/2, that local-p multiplies a weight by at a key
/// `distance` from its centre (0 outside the window), from the model's own weighting.
fn local_gaussian(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    let (distance, d) = (num(args, 0)?, count(args, 1)?);
    if !(0.0..=1e3).contains(&distance) || !(1..=1000).contains(&d) {
        return Err(format!("distance {distance}, D = {d}: the distance runs from 0 to 1000 and D from 1 to 1000"));
    }
    let local = crate::seq2seq::attention::Local { w_p: ndarray::Array2::zeros((0, 0)), v_p: Array1::zeros(0), d };
    // One key at position 0 and the centre `distance` away: its softmax share is 1.
    Ok(f64::from(local.weights(ndarray::arr1(&[0.0f32]).view(), distance as f32)[0]))
}

fn bigram_score(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    Ok(crate::numerics::soft_lookup::similarity(text(args, 0)?, text(args, 1)?))
}

/// The colour lookup of the soft-lookup chapter, as its demo computes it; β within its slider.
fn colour_lookup(args: &[Arg]) -> Result<crate::numerics::soft_lookup::Lookup, String> {
    let (query, beta) = (text(args, 0)?, num(args, 1)?);
    if !(0.0..=100.0).contains(&beta) || query.chars().count() > 40 {
        return Err(format!("β = {beta}: β runs from 0 to 100 and a query has at most 40 letters"));
    }
    let p = crate::demos::lookup::Params { query: query.to_string(), beta };
    Ok(<crate::demos::lookup::LookupDemo as crate::demos::Demo>::compute(&p))
}

fn lookup_weight(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 3)?;
    let out = colour_lookup(args)?;
    let key = text(args, 2)?;
    let i = out.keys.iter().position(|k| *k == key).ok_or_else(|| format!("{} is not a key", echo(key)))?;
    Ok(out.weights[i])
}

fn lookup_channel(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 3)?;
    let out = colour_lookup(args)?;
    Ok(out.output[position(args, 2, 3)?])
}

/// A kernel by its id (argument `i`), and a width σ from 10⁻³ to 10³ (argument `j`).
fn kernel_and_width(
    args: &[Arg],
    i: usize,
    j: usize,
) -> Result<(crate::numerics::kernel_regression::Kernel, f64), String> {
    use crate::numerics::kernel_regression::Kernel;
    let name = text(args, i)?;
    let ids: Vec<&str> = Kernel::ALL.iter().map(|k| k.id()).collect();
    let k = Kernel::from_id(name).ok_or_else(|| format!("{} is not one of {}", echo(name), ids.join(", ")))?;
    let sigma = num(args, j)?;
    if !(1e-3..=1e3).contains(&sigma) {
        return Err(format!("σ = {sigma} is not between 0.001 and 1000"));
    }
    Ok((k, sigma))
}

fn kernel(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 3)?;
    let d = num(args, 1)?;
    let (k, sigma) = kernel_and_width(args, 0, 2)?;
    Ok(k.eval(d, sigma))
}

/// One query's Nadaraya–Watson weights over `keys`, as the demo computes them.
fn nw_row(keys: &[f64], q: f64, args: &[Arg], i: usize) -> Result<Array1<f64>, String> {
    use crate::numerics::kernel_regression::weights;
    let (k, sigma) = kernel_and_width(args, i, i + 1)?;
    let w = weights(ndarray::arr1(&[q]).view(), ndarray::ArrayView1::from(keys), k, sigma);
    if !w.defined[0] {
        return Err(format!("no key lies within reach of q = {q}: every kernel value is 0"));
    }
    Ok(w.w.row(0).to_owned())
}

fn nw_weight(args: &[Arg]) -> Result<f64, String> {
    arity(args, 5, 5)?;
    let keys = list(args, 0)?;
    let row = nw_row(keys, num(args, 1)?, args, 2)?;
    Ok(row[position(args, 4, keys.len())?])
}

fn nw_estimate(args: &[Arg]) -> Result<f64, String> {
    arity(args, 5, 5)?;
    let (keys, values) = (list(args, 0)?, list(args, 1)?);
    if keys.len() != values.len() {
        return Err(format!("{} keys and {} values", keys.len(), values.len()));
    }
    let row = nw_row(keys, num(args, 2)?, args, 3)?;
    Ok(row.dot(&Array1::from(values.to_vec())))
}

/// One query's weights with the keys past `valid` masked, filled with −∞ or the given number.
fn padded_weight(args: &[Arg]) -> Result<f64, String> {
    use crate::numerics::attention::{masked_softmax_rows, valid_length_mask, MaskFill};
    arity(args, 3, 4)?;
    let scores = list(args, 0)?;
    let valid = count(args, 1)?;
    let fill = if args.len() == 4 { MaskFill::Value(num(args, 3)?) } else { MaskFill::NegInf };
    let row = ndarray::ArrayView2::from_shape((1, scores.len()), scores).map_err(|e| e.to_string())?; // (1, n_k)
    let (_, w, defined) = masked_softmax_rows(row, valid_length_mask(1, scores.len(), valid).view(), fill);
    if !defined[0] {
        return Err("every key is masked with −∞: the weights are 0/0".into());
    }
    Ok(w[[0, position(args, 2, scores.len())?]])
}

fn causal_hidden(args: &[Arg]) -> Result<f64, String> {
    arity(args, 1, 1)?;
    let n = count(args, 0)?;
    if n > 4096 {
        return Err(format!("n = {n} is more than 4096 tokens"));
    }
    Ok(crate::numerics::attention::causal_mask(n).iter().filter(|&&seen| !seen).count() as f64)
}

/// Stage 2 of self-attention, softmax(X Xᵀ / √d), for X given row after row.
fn xx_weight(args: &[Arg]) -> Result<f64, String> {
    use crate::numerics::attention::{attention, MaskFill};
    arity(args, 4, 4)?;
    let (cells, d) = (list(args, 0)?, count(args, 1)?);
    if d == 0 || cells.len() % d != 0 {
        return Err(format!("{} numbers do not make rows of width {d}", cells.len()));
    }
    let x = ndarray::ArrayView2::from_shape((cells.len() / d, d), cells).map_err(|e| e.to_string())?; // (n, d)
    let steps = attention(x, x, x, None, MaskFill::NegInf, true);
    let n = cells.len() / d;
    Ok(steps.weights[[position(args, 2, n)?, position(args, 3, n)?]])
}

/// The bank demo for one of its sentences ("river", "money", "alone") and β within its slider.
fn bank(args: &[Arg]) -> Result<crate::demos::bank::Bank, String> {
    use crate::demos::bank::{BankDemo, Params, SENTENCES};
    let (sentence, beta) = (text(args, 0)?, num(args, 1)?);
    if !SENTENCES.iter().any(|(k, _)| *k == sentence) || !(0.0..=4.0).contains(&beta) {
        return Err(format!("{}, β = {beta}: the sentence is river, money or alone, β from 0 to 4", echo(sentence)));
    }
    Ok(<BankDemo as crate::demos::Demo>::compute(&Params { sentence: sentence.to_string(), beta }))
}

fn bank_weight(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 3)?;
    let out = bank(args)?;
    let word = text(args, 2)?;
    let i =
        out.tokens.iter().position(|t| *t == word).ok_or_else(|| format!("{} is not in the sentence", echo(word)))?;
    Ok(out.weights[i])
}

fn bank_output(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 3)?;
    Ok(bank(args)?.output[position(args, 2, 2)?])
}

/// The multi-head demo at n tokens and h heads, within its controls (the seed and the mask do
/// not change the cost).
fn multi_head(args: &[Arg]) -> Result<MultiHeadOut, String> {
    arity(args, 2, 2)?;
    let (n, h) = (count(args, 0)?, count(args, 1)?);
    if !(2..=12).contains(&n) || !HEADS.iter().any(|(v, _)| v.parse() == Ok(h)) {
        return Err(format!("n = {n}, h = {h}: the demo has 2 to 12 tokens and 1, 2, 4 or 8 heads"));
    }
    Ok(MultiHeadDemo::compute(&MultiHeadParams { h, n, seed: 1, causal: false }))
}

fn head_cost(args: &[Arg]) -> Result<f64, String> {
    Ok(multi_head(args)?.flops_per_head as f64)
}

fn heads_total_cost(args: &[Arg]) -> Result<f64, String> {
    Ok(multi_head(args)?.flops_total as f64)
}

/// Head "A" (previous token) or "B" (same word) of the two-heads demo at sharpness β, with the
/// causal mask when `causal` is 1: the weight token i puts on token j (both from 1).
fn two_heads_weight(args: &[Arg]) -> Result<f64, String> {
    arity(args, 5, 5)?;
    let (beta, causal) = (num(args, 1)?, num(args, 2)?);
    if !(0.0..=12.0).contains(&beta) || (causal != 0.0 && causal != 1.0) {
        return Err(format!("β = {beta}, causal = {causal}: β runs from 0 to 12 and causal is 0 or 1"));
    }
    let out = TwoHeadsDemo::compute(&TwoHeadsParams { beta, causal: causal == 1.0 });
    let (i, j) = (position(args, 3, TOKENS.len())?, position(args, 4, TOKENS.len())?);
    match args.first() {
        Some(Arg::Text(h)) if h == "A" => Ok(out.previous_token[i][j]),
        Some(Arg::Text(h)) if h == "B" => Ok(out.same_word[i][j]),
        _ => Err("argument 1 should be the head, \"A\" or \"B\"".into()),
    }
}

/// Pair `i` (counted from 0, as in the prose) of a width `d` that is even and at most 4096.
fn pair(args: &[Arg], i: usize, d: usize) -> Result<usize, String> {
    let p = count(args, i)?;
    if d < 2 || d % 2 == 1 || d > 4096 || p >= d / 2 {
        return Err(format!("pair {p} of d = {d}: d is even, from 2 to 4096, and the pairs run from 0 to d/2 − 1"));
    }
    Ok(p)
}

fn base(args: &[Arg], i: usize) -> Result<f64, String> {
    let b = if args.len() > i { num(args, i)? } else { 10000.0 };
    if !(2.0..=1e7).contains(&b) {
        return Err(format!("base {b} is not between 2 and 10⁷"));
    }
    Ok(b)
}

fn pe_wavelength(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 3)?;
    let d = count(args, 1)?;
    let i = pair(args, 0, d)?;
    Ok(2.0 * std::f64::consts::PI / frequency(i, d, base(args, 2)?))
}

/// The pe-shift demo at (p, k, d): the angle pair i turns through from p to p + k.
fn shift_angle(args: &[Arg]) -> Result<f64, String> {
    arity(args, 4, 4)?;
    let (p, k, d) = (num(args, 0)?, num(args, 1)?, count(args, 2)?);
    if p.fract() != 0.0 || !(0.0..=200.0).contains(&p) || k.fract() != 0.0 || !(-50.0..=50.0).contains(&k) {
        return Err(format!("p = {p}, k = {k}: the demo has whole p from 0 to 200 and k from −50 to 50"));
    }
    if !DIMS.iter().any(|(v, _)| v.parse() == Ok(d)) {
        return Err(format!("d = {d}: the demo has d = 4, 8, 16 or 32"));
    }
    let i = pair(args, 3, d)?;
    Ok(PeShiftDemo::compute(&PeShiftParams { p: p as i64, k: k as i64, d }).rotation[i])
}

fn rope_angle(args: &[Arg]) -> Result<f64, String> {
    arity(args, 3, 4)?;
    let (p, d) = (count(args, 0)?, count(args, 2)?);
    let i = pair(args, 1, d)?;
    Ok(p as f64 * frequency(i, d, base(args, 3)?))
}

fn layer_norm_at(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 2)?;
    let x = list(args, 0)?;
    let i = position(args, 1, x.len())?;
    // One row of width d: (1, d).
    let row = ndarray::Array2::from_shape_vec((1, x.len()), x.to_vec()).map_err(|e| e.to_string())?;
    Ok(layer_norm(&row, 1e-5)[[0, i]])
}

fn variance(args: &[Arg]) -> Result<f64, String> {
    arity(args, 1, 1)?;
    let x = Array1::from(list(args, 0)?.to_vec());
    let mean = x.mean().unwrap_or(0.0);
    Ok(x.mapv(|v| (v - mean).powi(2)).mean().unwrap_or(0.0))
}

fn gelu_at(args: &[Arg]) -> Result<f64, String> {
    arity(args, 1, 1)?;
    Ok(gelu(num(args, 0)?))
}

/// The kv-cache demo's formula for a shape within its controls (query heads = KV heads).
fn kv_cache_bytes(args: &[Arg]) -> Result<f64, String> {
    arity(args, 6, 6)?;
    let v: Vec<usize> = (0..6).map(|i| count(args, i)).collect::<Result<_, _>>()?;
    let ranges = [(1, 128), (1, 128), (16, 256), (1, 131_072), (1, 256)];
    if v.iter().zip(ranges).any(|(x, (lo, hi))| !(lo..=hi).contains(x))
        || !PRECISION.iter().any(|(b, _)| b.parse() == Ok(v[5]))
    {
        return Err(format!(
            "{v:?}: outside the demo's controls (1–128 layers and heads, head size 16–256, \
            1–131072 positions, 1–256 sequences, 4, 2 or 1 bytes)"
        ));
    }
    let p = KvCacheParams {
        layers: v[0],
        heads: v[1],
        kv_heads: v[1],
        head_size: v[2],
        context: v[3],
        batch: v[4],
        precision: v[5],
        model: crate::demos::kv_cache::RealModel::StoriesLlama,
    };
    kv_shape(&p).map(|s| s.bytes() as f64)
}

/// GPT-2's sampler on a list of logits: the probability of token i (from 1) after temperature τ,
/// top-k (0: all) and top-p (1: all), renormalised; 0 for a token the filters drop.
fn next_token_prob(args: &[Arg]) -> Result<f64, String> {
    arity(args, 2, 5)?;
    let z = list(args, 0)?;
    let i = position(args, 1, z.len())?;
    let t = if args.len() > 2 { num(args, 2)? } else { 1.0 };
    let k = if args.len() > 3 { count(args, 3)? } else { 0 };
    let p = if args.len() > 4 { num(args, 4)? } else { 1.0 };
    let fine = (f64::MIN_POSITIVE..=100.0).contains(&t) && (f64::MIN_POSITIVE..=1.0).contains(&p);
    if !fine || !z.iter().all(|x| x.abs() <= 1e4) {
        return Err(format!("τ = {t}, p = {p}: τ is above 0 (at most 100), p in (0, 1], logits within ±10⁴"));
    }
    let logits: Vec<f32> = z.iter().map(|&x| x as f32).collect();
    let s = Sampling { temperature: t as f32, top_k: k, top_p: p as f32 };
    let dist = distribution(ndarray::ArrayView1::from(&logits), &s);
    Ok(dist.iter().find(|(id, _)| *id as usize == i).map_or(0.0, |(_, q)| *q))
}
