//! Demo `train-lab`: train a small transformer in the page and watch its heads form (chapter
//! "training"). The run itself happens in the compute worker (`crate::train`); `compute` here
//! is what needs no training: the settings checked, a sample batch, the probe, the size.
//! `run` is the page's record of a run, DOM-free.

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::rng::Rng;
use crate::train::task::token_char;
use crate::train::{Positions, Task, TrainConfig, MAX_STEPS};

pub mod run;

crate::options! {
    /// The task (`train::Task`).
    pub enum TaskChoice {
        Copy = ("copy", "Copy (induction)"),
        Sort = ("sort", "Sort digits"),
        Reverse = ("reverse", "Reverse letters"),
        Repeat = ("repeat", "Repeated strings (induction)"),
    }
}

crate::options! {
    /// How positions reach the model (`train::Positions`).
    pub enum PosChoice {
        Learned = ("learned", "Learned (GPT-2)"),
        Sinusoidal = ("sinusoidal", "Sinusoidal"),
        Rope = ("rope", "RoPE"),
        None = ("none", "None"),
    }
}

crate::params! {
    pub struct Params {
        task: TaskChoice = Param::choice("task", "Task", TaskChoice::OPTIONS, 3),
        /// items per example (the task's n)
        length: i64 = Param::int("n", "Length n", 2, 16, 8),
        layers: i64 = Param::int("layers", "Layers", 1, 4, 2),
        heads: i64 = Param::int("heads", "Heads", 1, 8, 4),
        width: i64 = Param::log_int("width", "Width", 16, 128, 64),
        mlp: bool = Param::boolean("mlp", "MLP in each block", false),
        positions: PosChoice = Param::choice("pos", "Positions", PosChoice::OPTIONS, 2),
        lr: f64 = Param::log_float("lr", "Learning rate", 1e-4, 0.3, 5e-3),
        batch: i64 = Param::log_int("batch", "Batch size", 1, 128, 32),
        steps: i64 = Param::log_int("steps", "Steps", 10, 20000, 3000),
        seed: u32 = Param::seed("seed", "Seed", 1),
        /// the step the heads are shown at (0: the latest); a link retrains to it
        step: i64 = Param::int("step", "Show step (0 = latest)", 0, 20000, 0),
    }
}

impl Params {
    /// The run these settings describe (`step` is where it is shown, not part of it).
    pub fn config(&self) -> TrainConfig {
        let clamp = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi) as usize;
        TrainConfig {
            task: match self.task {
                TaskChoice::Copy => Task::Copy,
                TaskChoice::Sort => Task::Sort,
                TaskChoice::Reverse => Task::Reverse,
                TaskChoice::Repeat => Task::Repeat,
            },
            length: clamp(self.length, 2, 16),
            n_layer: clamp(self.layers, 1, 4),
            n_head: clamp(self.heads, 1, 8),
            n_embd: clamp(self.width, 16, 128),
            mlp: self.mlp,
            positions: match self.positions {
                PosChoice::Learned => Positions::Learned,
                PosChoice::Sinusoidal => Positions::Sinusoidal,
                PosChoice::Rope => Positions::Rope,
                PosChoice::None => Positions::None,
            },
            lr: self.lr as f32,
            batch: clamp(self.batch, 1, 128),
            steps: clamp(self.steps, 1, MAX_STEPS as i64),
            seed: self.seed,
        }
    }
}

pub struct TrainLabDemo;

impl Demo for TrainLabDemo {
    const ID: &'static str = "train-lab";
    const TITLE: &'static str = "Train a transformer, watch its heads form";
    const CAPTION: &'static str =
        "A small GPT-2-architecture model trained from scratch in your browser on the chosen \
        task: the loss and accuracy as it learns, every head's attention on a fixed probe sequence, and each head's \
        previous-token and induction scores over the run. Drag Show step back to see the heads as they were.";
    type Params = Params;
    const MAIN: &'static [&'static str] = &["task", "n", "layers", "heads"];
    /// The step scrubber sits above the plots it moves through.
    const IN_VIEW: &'static [&'static str] = &["step"];
    type Output = Setup;
    /// No "Show numbers": its numbers are the readouts and the scores printed on every head.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> Setup {
        setup(&p.config())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<TrainLabDemo>();

/// One example of the task as the reader sees it: its characters, and for each input position
/// whether its next token is scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Example {
    pub text: String,
    /// The characters whose prediction counts (the scored targets), as a mask over `text`.
    pub scored: Vec<bool>,
}

/// What the settings give before any training.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setup {
    pub config: TrainConfig,
    /// Why these settings cannot train, naming the constraint.
    pub refused: Option<String>,
    /// Four examples of the task (from a fixed seed, not the run's).
    pub samples: Vec<Example>,
    /// The probe the heads are shown on.
    pub probe: String,
    pub n_params: usize,
    /// Tokens read per example (T) and scored per example (`None`: it varies, as in repeat).
    pub seq_len: usize,
    pub scored: Option<usize>,
}

pub fn setup(config: &TrainConfig) -> Setup {
    let refused = config.check().err();
    let task = config.task;
    let n = config.length.clamp(crate::train::task::MIN_LENGTH, crate::train::task::MAX_LENGTH);
    let mut rng = Rng::new(20_241);
    let samples = (0..4)
        .map(|_| {
            let (seq, scored) = task.scored_example(n, &mut rng);
            Example {
                text: seq.iter().map(|&id| token_char(id)).collect(),
                // Character i + 1 is the target of input position i.
                scored: (0..seq.len()).map(|i| i > 0 && scored[i - 1]).collect(),
            }
        })
        .collect();
    let n_params =
        if refused.is_none() { crate::train::Model::zeros(&config.model()).map_or(0, |m| m.params.len()) } else { 0 };
    Setup {
        config: config.clone(),
        refused,
        samples,
        probe: task.probe(n).iter().map(|&id| token_char(id)).collect(),
        n_params,
        seq_len: task.input_len(n),
        scored: task.scored_count(n),
    }
}

#[cfg(target_arch = "wasm32")]
mod view;
