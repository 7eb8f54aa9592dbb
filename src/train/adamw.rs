//! AdamW (Loshchilov and Hutter 2019) and global-norm gradient clipping, step for step as
//! PyTorch's `torch.optim.AdamW` and `clip_grad_norm_`, so the fixtures can check them.

/// Scales `grads` so their global L2 norm is at most `max_norm`; returns the norm before.
/// As PyTorch: the factor is max_norm / (norm + 1e-6), clamped at 1 (so small norms are kept).
pub fn clip_grad_norm(grads: &mut [f32], max_norm: f32) -> f32 {
    // Summed in f64: a sum of 10⁵ squares in f32 would lose the small ones.
    let norm = grads.iter().map(|&g| (g as f64) * (g as f64)).sum::<f64>().sqrt() as f32;
    let scale = (max_norm / (norm + 1e-6)).min(1.0);
    if scale < 1.0 {
        grads.iter_mut().for_each(|g| *g *= scale);
    }
    norm
}

pub struct AdamW {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    /// First and second moments, one per parameter.
    m: Vec<f32>,
    v: Vec<f32>,
    /// Steps taken.
    t: i32,
}

impl AdamW {
    /// Betas (0.9, 0.95) as GPT-2-style training uses; eps 1e-8.
    pub fn new(n_params: usize, lr: f32) -> Self {
        AdamW { lr, beta1: 0.9, beta2: 0.95, eps: 1e-8, m: vec![0.0; n_params], v: vec![0.0; n_params], t: 0 }
    }

    /// The first and second moments and the steps taken.
    pub fn moments(&self) -> (&[f32], &[f32], i32) {
        (&self.m, &self.v, self.t)
    }

    /// Takes moments and a step count saved by [`AdamW::moments`] (one moment each per parameter).
    pub fn set_moments(&mut self, m: Vec<f32>, v: Vec<f32>, t: i32) -> Result<(), String> {
        if m.len() != self.m.len() || v.len() != self.v.len() {
            return Err(format!("moments for {} parameters, not {}", m.len(), self.m.len()));
        }
        (self.m, self.v, self.t) = (m, v, t);
        Ok(())
    }

    /// One step on `params[range]` for every (range, weight decay) group.
    pub fn step(&mut self, params: &mut [f32], grads: &[f32], groups: &[(std::ops::Range<usize>, f32)]) {
        self.t += 1;
        let (b1, b2, lr, eps) = (self.beta1, self.beta2, self.lr, self.eps);
        let bias1 = 1.0 - b1.powi(self.t);
        let bias2_sqrt = (1.0 - b2.powi(self.t)).sqrt();
        let step_size = lr / bias1;
        for (range, wd) in groups {
            for i in range.clone() {
                let g = grads[i];
                // Decoupled weight decay: shrink the weight first, apart from the gradient.
                params[i] *= 1.0 - lr * wd;
                self.m[i] = b1 * self.m[i] + (1.0 - b1) * g;
                self.v[i] = b2 * self.v[i] + (1.0 - b2) * g * g;
                let denom = self.v[i].sqrt() / bias2_sqrt + eps;
                params[i] -= step_size * self.m[i] / denom;
            }
        }
    }
}
