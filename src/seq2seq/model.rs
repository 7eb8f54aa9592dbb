//! A GRU encoder-decoder for one variant, and the set of variants the book ships.
//!
//! Encoder: h_j = GRU(embed(x_j), h_{j−1}), h_0 = 0, j = 1..S (the letters, then `</s>`).
//! Decoder: s_0 = h_S; y_0 = `<s>`; greedy, stopping at `</s>` or after S + 5 steps.
//! - fixed:    s_i = GRU([emb(y_{i−1}); h_S], s_{i−1}); logits = out([s_i; h_S])
//! - Bahdanau: α_i = softmax(score(s_{i−1}, h)); c_i = Σ α_ij h_j;
//!   s_i = GRU([emb(y_{i−1}); c_i], s_{i−1}); logits = out([s_i; c_i])
//! - Luong:    s_i = GRU(emb(y_{i−1}), s_{i−1}); α_i from score(s_i, h); c_i = Σ α_ij h_j;
//!   s̃_i = tanh(W_c [c_i; s_i]); logits = out(s̃_i)

use ndarray::{Array1, Array2, ArrayView1};

use super::attention::{cat, softmax, Local, Score};
use super::gru::GruCell;
use super::{BOS, EOS, VOCAB};
use crate::formats::safetensors::SafeTensors;
use crate::formats::LoadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    Fixed,
    Bahdanau,
    LuongDot,
    LuongGeneral,
    LuongConcat,
    LuongLocal,
}

impl Variant {
    pub const ALL: [Variant; 6] = [
        Variant::Fixed,
        Variant::Bahdanau,
        Variant::LuongDot,
        Variant::LuongGeneral,
        Variant::LuongConcat,
        Variant::LuongLocal,
    ];

    /// The tensor-name prefix in the shipped file and the URL value.
    pub fn key(self) -> &'static str {
        match self {
            Variant::Fixed => "fixed",
            Variant::Bahdanau => "bahdanau",
            Variant::LuongDot => "luong_dot",
            Variant::LuongGeneral => "luong_general",
            Variant::LuongConcat => "luong_concat",
            Variant::LuongLocal => "luong_local",
        }
    }

    pub fn parse(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.key() == s)
    }

    fn luong(self) -> bool {
        matches!(self, Variant::LuongDot | Variant::LuongGeneral | Variant::LuongConcat | Variant::LuongLocal)
    }
}

#[derive(Debug, Clone)]
pub struct Seq2Seq {
    pub variant: Variant,
    /// (V, E)
    pub enc_embed: Array2<f32>,
    pub enc: GruCell,
    pub dec_embed: Array2<f32>,
    pub dec: GruCell,
    pub score: Option<Score>,
    pub local: Option<Local>,
    /// Luong's (H, 2H) combination of context and state.
    pub w_c: Option<Array2<f32>>,
    /// (V, 2H) for fixed and Bahdanau, (V, H) for Luong.
    pub out_weight: Array2<f32>,
    pub out_bias: Array1<f32>,
}

/// One greedy decoding, with everything the page draws.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Decoded {
    pub src: Vec<u32>,
    /// The encoder states h_1..h_S: (S, H).
    #[serde(skip)]
    pub enc_states: Array2<f32>,
    /// The ids produced, including the final `</s>` when there is one.
    pub out: Vec<u32>,
    /// Per step: logits over the vocabulary.
    #[serde(skip)]
    pub logits: Vec<Vec<f32>>,
    /// Per step: the attention weights over the S source positions (empty for `fixed`).
    pub attn: Vec<Vec<f32>>,
    /// Per step, local-p only: the predicted centre.
    pub centres: Vec<f32>,
}

struct Reader<'a, 'b> {
    st: &'b SafeTensors<'a>,
    prefix: String,
}

impl Reader<'_, '_> {
    fn get(&self, name: &str) -> Result<(Vec<usize>, Vec<f32>), LoadError> {
        let full = format!("{}.{name}", self.prefix);
        let info = self.st.tensors.get(&full).ok_or(LoadError::Missing(full))?;
        Ok((info.shape.clone(), self.st.to_f32(info)))
    }
    fn matrix(&self, name: &str, rows: Option<usize>, cols: Option<usize>) -> Result<Array2<f32>, LoadError> {
        let (shape, v) = self.get(name)?;
        let bad = || LoadError::Shape {
            tensor: format!("{}.{name}", self.prefix),
            expected: vec![rows.unwrap_or(0), cols.unwrap_or(0)],
            found: shape.clone(),
        };
        match shape[..] {
            [r, c] if rows.is_none_or(|x| x == r) && cols.is_none_or(|x| x == c) => {
                Array2::from_shape_vec((r, c), v).map_err(|_| bad())
            }
            _ => Err(bad()),
        }
    }
    fn vector(&self, name: &str, n: usize) -> Result<Array1<f32>, LoadError> {
        let (shape, v) = self.get(name)?;
        if shape != [n] {
            return Err(LoadError::Shape {
                tensor: format!("{}.{name}", self.prefix),
                expected: vec![n],
                found: shape,
            });
        }
        Ok(Array1::from(v))
    }
    fn gru(&self, name: &str, input: usize, hidden: usize) -> Result<GruCell, LoadError> {
        Ok(GruCell {
            weight_ih: self.matrix(&format!("{name}.weight_ih"), Some(3 * hidden), Some(input))?,
            weight_hh: self.matrix(&format!("{name}.weight_hh"), Some(3 * hidden), Some(hidden))?,
            bias_ih: self.vector(&format!("{name}.bias_ih"), 3 * hidden)?,
            bias_hh: self.vector(&format!("{name}.bias_hh"), 3 * hidden)?,
        })
    }
}

impl Seq2Seq {
    /// Reads one variant's tensors (`<variant>.<name>`), checking every shape against the
    /// embedding and hidden sizes the file's own tensors imply. `window` is local-p's D.
    pub fn load(st: &SafeTensors, variant: Variant, window: usize) -> Result<Self, LoadError> {
        let r = Reader { st, prefix: variant.key().to_string() };
        let enc_embed = r.matrix("enc.embed", Some(VOCAB), None)?;
        let e = enc_embed.ncols();
        let h = r.matrix("enc.gru.weight_hh", None, None)?.ncols();
        let enc = r.gru("enc.gru", e, h)?;
        let dec_embed = r.matrix("dec.embed", Some(VOCAB), Some(e))?;
        let dec_in = if variant.luong() { e } else { e + h };
        let dec = r.gru("dec.gru", dec_in, h)?;
        let general =
            || -> Result<Score, LoadError> { Ok(Score::General { w: r.matrix("attn.W", Some(h), Some(h))? }) };
        let score = match variant {
            Variant::Fixed => None,
            Variant::Bahdanau => {
                let w_a = r.matrix("attn.W_a", None, Some(h))?;
                let a = w_a.nrows();
                Some(Score::Bahdanau {
                    u_a: r.matrix("attn.U_a", Some(a), Some(h))?,
                    v_a: r.vector("attn.v_a", a)?,
                    w_a,
                })
            }
            Variant::LuongDot => Some(Score::Dot),
            Variant::LuongGeneral | Variant::LuongLocal => Some(general()?),
            Variant::LuongConcat => {
                let w = r.matrix("attn.W", None, Some(2 * h))?;
                let a = w.nrows();
                Some(Score::Concat { v: r.vector("attn.v", a)?, w })
            }
        };
        let local = match variant {
            Variant::LuongLocal => {
                Some(Local { w_p: r.matrix("attn.W_p", Some(h), Some(h))?, v_p: r.vector("attn.v_p", h)?, d: window })
            }
            _ => None,
        };
        let w_c = if variant.luong() { Some(r.matrix("attn.W_c", Some(h), Some(2 * h))?) } else { None };
        let out_in = if variant.luong() { h } else { 2 * h };
        Ok(Seq2Seq {
            variant,
            enc_embed,
            enc,
            dec_embed,
            dec,
            score,
            local,
            w_c,
            out_weight: r.matrix("out.weight", Some(VOCAB), Some(out_in))?,
            out_bias: r.vector("out.bias", VOCAB)?,
        })
    }

    pub fn hidden(&self) -> usize {
        self.enc.hidden()
    }

    /// The encoder's states h_1..h_S: (S, H).
    pub fn encode(&self, src: &[u32]) -> Array2<f32> {
        let mut h = Array1::<f32>::zeros(self.hidden());
        let mut states = Array2::zeros((src.len(), self.hidden()));
        for (j, &x) in src.iter().enumerate() {
            h = self.enc.step(self.enc_embed.row(x as usize), h.view());
            states.row_mut(j).assign(&h);
        }
        states
    }

    /// Attention weights and context for state s over the encoder states.
    fn attend(&self, s: ArrayView1<f32>, hs: &Array2<f32>) -> (Array1<f32>, Array1<f32>, Option<f32>) {
        let score = self.score.as_ref().expect("attention variants have a score");
        let e = score.scores(s, hs.view());
        let (alpha, centre) = match &self.local {
            Some(l) => {
                let p = l.centre(s, hs.nrows());
                (l.weights(e.view(), p), Some(p))
            }
            None => (softmax(e.view()), None),
        };
        // (S,) x (S, H) -> (H,)
        let context = alpha.dot(hs);
        (alpha, context, centre)
    }

    /// Greedy decoding of `src` (ids ending in `</s>`), at most S + 5 steps.
    pub fn greedy(&self, src: &[u32]) -> Decoded {
        let hs = self.encode(src);
        if src.is_empty() {
            // Nothing read: nothing to write (`encode` in the chapter never gives this).
            return Decoded {
                src: Vec::new(),
                enc_states: hs,
                out: Vec::new(),
                logits: Vec::new(),
                attn: Vec::new(),
                centres: Vec::new(),
            };
        }
        let last = hs.row(hs.nrows() - 1).to_owned();
        let mut s = last.clone();
        let mut y = BOS;
        let mut d = Decoded {
            src: src.to_vec(),
            enc_states: hs.clone(),
            out: Vec::new(),
            logits: Vec::new(),
            attn: Vec::new(),
            centres: Vec::new(),
        };
        for _ in 0..src.len() + 5 {
            let emb = self.dec_embed.row(y as usize);
            // (V, ·) x (·,) -> (V,)
            let logits = match self.variant {
                Variant::Fixed => {
                    s = self.dec.step(cat(emb, last.view()).view(), s.view());
                    self.out_weight.dot(&cat(s.view(), last.view())) + &self.out_bias
                }
                Variant::Bahdanau => {
                    // Bahdanau scores with the previous state s_{i−1}, before the GRU step.
                    let (alpha, c, _) = self.attend(s.view(), &hs);
                    s = self.dec.step(cat(emb, c.view()).view(), s.view());
                    d.attn.push(alpha.to_vec());
                    self.out_weight.dot(&cat(s.view(), c.view())) + &self.out_bias
                }
                _ => {
                    // Luong scores with the current state s_i, after the GRU step.
                    s = self.dec.step(emb, s.view());
                    let (alpha, c, centre) = self.attend(s.view(), &hs);
                    d.attn.push(alpha.to_vec());
                    d.centres.extend(centre);
                    let w_c = self.w_c.as_ref().expect("Luong variants have W_c");
                    let tilde = w_c.dot(&cat(c.view(), s.view())).mapv(f32::tanh);
                    self.out_weight.dot(&tilde) + &self.out_bias
                }
            };
            y = crate::numerics::softmax::argmax(logits.view());
            d.logits.push(logits.to_vec());
            d.out.push(y);
            if y == EOS {
                break;
            }
        }
        d
    }
}

/// Every variant in the shipped file.
pub struct Models {
    pub variants: Vec<Seq2Seq>,
    /// The longest input length trained on.
    pub max_len: usize,
}

impl Models {
    pub fn load(bytes: &[u8]) -> Result<Models, LoadError> {
        let st = SafeTensors::parse(bytes)?;
        let meta = |k: &str| {
            st.metadata
                .get(k)
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| LoadError::BadHeader(format!("the metadata has no number `{k}`")))
        };
        let (window, max_len) = (meta("D")?, meta("MAXLEN")?);
        let variants = Variant::ALL.iter().map(|&v| Seq2Seq::load(&st, v, window)).collect::<Result<_, _>>()?;
        Ok(Models { variants, max_len })
    }

    pub fn get(&self, v: Variant) -> &Seq2Seq {
        self.variants.iter().find(|m| m.variant == v).expect("every variant is loaded")
    }
}
