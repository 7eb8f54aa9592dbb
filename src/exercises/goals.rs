//! "Make it happen" goals: named predicates over a demo's typed parameters and output, checked
//! against the demo's live state. Only demos with an `impl Demo` can have goals; adding one is
//! one line in the `goals!` list at the end.

use crate::demos::collapse::CollapseDemo;
use crate::demos::kv_cache::{self, KvCacheDemo};
use crate::demos::pe_shift::PeShiftDemo;
use crate::demos::sliding_window::SlidingWindowDemo;
use crate::demos::two_heads::TwoHeadsDemo;
use crate::demos::{self, gauss_dot::GaussDotDemo, scaling::ScalingDemo, temperature::TemperatureDemo, Demo};
use crate::state::{Params, Values};

pub struct Goal {
    /// What an exercise's `goal:` names; unique.
    pub name: &'static str,
    /// The demo it reads.
    pub demo: &'static str,
    /// The goal in words (the exercise's question says it to the reader).
    pub describe: &'static str,
    /// Whether the demo's state meets it. The values must be the demo's (see [`met`]).
    pub met: fn(&Values) -> bool,
}

/// `name, Demo type, description, |params, output| predicate;` per goal.
macro_rules! goals {
    ($($name:literal, $demo:ty, $describe:literal, |$p:ident, $o:ident| $body:expr;)*) => {
        pub static GOALS: &[Goal] = &[$(Goal {
            name: $name,
            demo: <$demo as Demo>::ID,
            describe: $describe,
            met: |v: &Values| {
                let $p = &<<$demo as Demo>::Params as Params>::read(v);
                let $o = &<$demo as Demo>::compute($p);
                $body
            },
        }),*];
    };
}

pub fn find(name: &str) -> Option<&'static Goal> {
    GOALS.iter().find(|g| g.name == name)
}

/// Whether `values` (the state of the goal's demo) meet the goal.
pub fn met(name: &str, values: &Values) -> Result<bool, String> {
    let goal = find(name).ok_or_else(|| format!("no goal named \"{name}\""))?;
    let spec = demos::find(goal.demo).ok_or_else(|| format!("goal \"{name}\": no demo \"{}\"", goal.demo))?;
    let same = spec.params.len() == values.params().len()
        && spec.params.iter().zip(values.params()).all(|(a, b)| a.key == b.key);
    if !same {
        return Err(format!("goal \"{name}\" reads demo \"{}\", and these values are another demo's", goal.demo));
    }
    Ok((goal.met)(values))
}

/// Whether the demo state given as URL pairs (`temperature.gap=2.5`; unset keys take the demo's
/// baseline, as a link's) meets the goal. A pair the demo cannot use is an error, not a silent
/// default.
pub fn met_by_pairs(name: &str, pairs: &[(String, String)]) -> Result<bool, String> {
    let goal = find(name).ok_or_else(|| format!("no goal named \"{name}\""))?;
    let spec = demos::find(goal.demo).ok_or_else(|| format!("goal \"{name}\": no demo \"{}\"", goal.demo))?;
    let (values, notices) = spec.from_link(pairs);
    if let Some(n) = notices.first() {
        return Err(n.message());
    }
    if let Some((k, _)) = pairs.iter().find(|(k, _)| !k.starts_with(&format!("{}.", spec.id))) {
        return Err(format!("\"{k}\" is not a setting of demo \"{}\"", spec.id));
    }
    met(name, &values)
}

/// The index of the largest weight (the first on ties).
fn top(w: &[f64]) -> usize {
    w.iter().enumerate().fold(0, |best, (i, x)| if *x > w[best] { i } else { best })
}

/// Whether, in the shipped curve, `model` reversed every string of `len` letters exactly and
/// not every string of `len + 1`.
fn last_perfect(c: &crate::demos::bottleneck::Curve, model: &str, len: usize) -> bool {
    let exact = |l: usize| Some(c.variants.get(model)?.exact[c.lengths.iter().position(|&x| x == l)?]);
    exact(len) == Some(1.0) && exact(len + 1).is_some_and(|x| x < 1.0)
}

/// A key's weight in the colour lookup (0 for a name that is no key).
fn key_weight(o: &crate::numerics::soft_lookup::Lookup, key: &str) -> f64 {
    o.keys.iter().position(|k| *k == key).map_or(0.0, |i| o.weights[i])
}

goals! {
    "gauss-dot-agree", GaussDotDemo, "with unequal key lengths, both scores give the most weight to the same key",
        |p, o| !p.equal && top(&o.w_gauss) == top(&o.w_dot);
    "sharp-at-t-1", TemperatureDemo, "T stays at 1 and the top key takes at least 90% of the weight",
        |p, o| (p.t - 1.0).abs() < 0.005 && o.weights[0] >= 0.9;
    "raw-equals-scaled", ScalingDemo, "the softmax weights with and without 1/√d are the same",
        |_p, o| o.w_raw.iter().zip(&o.w_scaled).all(|(a, b)| (a - b).abs() < 1e-12);
    "fixed-last-perfect", crate::demos::bottleneck::BottleneckDemo, "the last length the fixed context gets all right",
        |p, o| o.as_ref().is_ok_and(|c| last_perfect(c, "fixed", p.length));
    "grey-second-to-green", crate::demos::lookup::LookupDemo, "grey takes 15% or more while green keeps the most",
        |_p, o| o.keys[top(&o.weights)] == "green" && key_weight(o, "grey") >= 0.15;
    "boxcar-gaps", crate::demos::nadaraya_watson::NwDemo, "boxcar, 40 points, 10 or more queries without an estimate",
        |p, o| p.kernel == crate::demos::nadaraya_watson::KernelChoice::Boxcar && p.n == 40 && o.undefined >= 10;
    "causal-rows-0-4-equal", crate::demos::causal::CausalDemo, "rows 0 and 4 of the weights are the same",
        |_p, o| o.weights.len() >= 5 && o.weights[0].iter().zip(&o.weights[4]).all(|(a, b)| (a - b).abs() < 1e-12);
    "bank-leans-money", crate::demos::bank::BankDemo, "in the money sentence, the first entry of bank's output is 1.5+",
        |p, o| p.sentence == "money" && o.output[0] >= 1.5;
    "previous-token-99", TwoHeadsDemo, "head A gives every token after the first at least 99% on its predecessor",
        |_p, o| (1..o.previous_token.len()).all(|i| o.previous_token[i][i - 1] >= 0.99);
    "slowest-pair-turns", PeShiftDemo, "the slowest pair turns by at least 0.1 radians",
        |_p, o| o.rotation.last().is_some_and(|r| r.abs() >= 0.1);
    "spread-without-ffn", CollapseDemo, "after 48 layers without the feed-forward network, a spread of 0.15 or more",
        |p, o| !p.ffn && p.layers == 48 && o.block.last().is_some_and(|s| *s >= 0.15);
    "window-reaches-start", SlidingWindowDemo, "query 31 hears from token 0 through windows of at most 8",
        |p, o| p.window <= 8 && o.query == 31 && o.first_layer.first().is_some_and(|l| l.is_some());
    "batch-64-in-16-gib", KvCacheDemo, "32 layers, 32 heads of 128, 64 sequences of 8192 positions in 16 GiB",
        |p, _o| p.layers == 32 && p.heads == 32 && p.head_size == 128 && p.context == 8192 && p.batch == 64
            && kv_cache::shape(p).is_ok_and(|s| s.bytes() <= 16 << 30);
}
