//! "Compare two models": the same prompt in a second model (`model-b`), beside the first. What
//! the second side runs (its parameters) and where the shared selection lands in it. The two
//! models may split the prompt into different tokens (GPT-2's byte-level BPE against a Llama
//! tokenizer), so a query token is matched by where it ends in the prompt's text. The layer and
//! head reach the larger model's last; a side whose model lacks them shows its last, with a note.

use super::{fit_selection, Fit, Model, Params};
use crate::session::protocol::Token;

crate::options! {
    /// The second model: none (one model, as every link made before the comparison means), or
    /// one that needs nothing more from the reader (no URL, no files). New options come last.
    pub enum ModelB {
        None = ("none", "None (one model)"),
        Stories = ("stories", "Pet stories (4 layers, bundled)"),
        Induction = ("induction", "Induction (2 layers, bundled)"),
        Gpt2 = ("gpt2", "GPT-2 small, 124M (download 548 MB)"),
        Smollm2 = ("smollm2", "SmolLM2-135M (Llama family, download ~270 MB)"),
        StoriesLlama = ("stories-llama", "Pet stories, Llama family (bundled)"),
    }
}

impl ModelB {
    /// The model this option runs (`None` for no second model).
    pub fn model(self) -> Option<Model> {
        match self {
            ModelB::None => None,
            ModelB::Stories => Some(Model::Stories),
            ModelB::Induction => Some(Model::Induction),
            ModelB::Gpt2 => Some(Model::Gpt2),
            ModelB::Smollm2 => Some(Model::Smollm2),
            ModelB::StoriesLlama => Some(Model::StoriesLlama),
        }
    }
}

/// The parameters the second side runs: the reader's, with its model; the hub for a hub model
/// (the folder URL is the first model's); the prompt alone (no second prompt) and intact (the
/// knock-outs name heads of the first model); the layer inside the second model once its shape
/// (`dims`: layers, heads) is known, since the worker sends that layer's full weights.
pub fn side_b_params(p: &Params, dims: Option<(usize, usize)>) -> Params {
    let mut b = p.clone();
    b.model = p.model_b.model().unwrap_or(p.model);
    b.base = String::new();
    b.compare = String::new();
    b.ablate = String::new();
    if let Some((n_layer, _)) = dims {
        b.layer = b.layer.clamp(0, n_layer.max(1) as i64 - 1);
    }
    b
}

/// The token of `to` that ends where token `at` of `from` ends in the prompt's text (the first
/// that reaches that far), for two tokenizations of the same text. Both keep the text's end (a
/// prompt longer than a model's window loses tokens at its start, as many as each model's
/// tokenizer needs), so the place is counted back from the end. A place before the start of
/// what `to` kept: its first token. Out of range, or with `from` empty (the other model has not
/// answered yet): `to`'s last token.
pub fn matching_token(from: &[Token], at: usize, to: &[Token]) -> usize {
    let last = to.len().saturating_sub(1);
    if at >= from.len() {
        return last;
    }
    let chars = |t: &[Token]| t.iter().map(|t| t.text.chars().count()).sum::<usize>();
    // Characters after the place, and so where it is in `to`'s text, counted from its start.
    let end = chars(to).saturating_sub(chars(&from[at + 1..]));
    let mut reach = 0;
    for (j, t) in to.iter().enumerate() {
        reach += t.text.chars().count();
        if reach >= end {
            return j;
        }
    }
    last
}

/// Where the selection lands in the second model: the query token matched to the first model's
/// (`a`: its tokens, empty until it answers) among the second's (`b`), the layer and head kept
/// when the second model (`n_layer` × `n_head`) has them, else moved to its last, with the moves.
pub fn side_b_selection(p: &Params, a: &[Token], b: &[Token], n_layer: usize, n_head: usize) -> Fit {
    let token = matching_token(a, p.token.max(0) as usize, b);
    let mut fit = fit_selection(p.layer, p.head, token as i64, n_layer, n_head, b.len());
    fit.moved.retain(|m| m.key != "token");
    fit
}

/// The note for a layer or head moved to fit one side's model ("This model has heads 0 to 3:
/// showing head 3."), if one moved (a query token's move is not one: each side shows its own).
pub fn moved_note(fit: &Fit) -> Option<String> {
    let parts: Vec<String> = fit
        .moved
        .iter()
        .filter(|m| m.key != "token")
        .map(|m| format!("{}: showing {} {}", m.why, m.key, m.now))
        .collect();
    let text = parts.join("; ");
    let mut chars = text.chars();
    let first = chars.next()?;
    Some(format!("{}{}.", first.to_uppercase(), chars.as_str()))
}

/// The heading of each side: "Model A: Pet stories (4 layers, bundled)".
pub fn side_title(side: char, model: Model) -> String {
    format!("Model {side}: {}", model.label())
}
