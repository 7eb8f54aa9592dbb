//! What "Generate" writes: the model's continuation of the prompt, kept apart from the prompt
//! (the reader's text) until the reader adds it, and why it ended.

use super::status::{cut_text, PROMPT_MAX};
use crate::session::ends_text;

/// Tokens one press of "Generate" asks for.
pub const STEPS: usize = 20;

/// Why a continuation ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// All [`STEPS`] tokens were written.
    Steps,
    /// The model wrote its end-of-text token (not shown: it is not text).
    EndOfText,
    /// The reader pressed Stop.
    Stopped,
}

/// A continuation: the prompt it continues, the text so far, its tokens, and why it ended
/// (`None` while it runs).
#[derive(Debug, Clone, PartialEq)]
pub struct Continuation {
    pub prompt: String,
    pub text: String,
    pub tokens: usize,
    pub end: Option<End>,
}

impl Continuation {
    pub fn start(prompt: String) -> Continuation {
        Continuation { prompt, text: String::new(), tokens: 0, end: None }
    }

    /// The worker's next token (`token`: its text as the vocabulary writes it), with the text so
    /// far without an end-of-text literal, and whether it was the last one asked for.
    pub fn step(&mut self, token: &str, text: String, last: bool) {
        self.text = text;
        let ended = ends_text(token);
        if !ended {
            self.tokens += 1;
        }
        self.end = if ended {
            Some(End::EndOfText)
        } else if last {
            Some(End::Steps)
        } else {
            None
        };
    }

    /// The reader's Stop, unless the continuation had already ended.
    pub fn stop(&mut self) {
        self.end.get_or_insert(End::Stopped);
    }

    /// What the line under the continuation says.
    pub fn note(&self) -> String {
        let n = match self.tokens {
            1 => "1 token".to_string(),
            n => format!("{n} tokens"),
        };
        match self.end {
            None => format!("Generating… {n} so far."),
            Some(End::Steps) => format!("{n} generated."),
            Some(End::EndOfText) => format!("{n} generated; then the model ended the text (its end-of-text token)."),
            Some(End::Stopped) => format!("Stopped after {n}."),
        }
    }

    /// The prompt with the continuation added, cut to the prompt's limit (and whether it was).
    pub fn appended(&self) -> (String, bool) {
        cut_text(&format!("{}{}", self.prompt, self.text), PROMPT_MAX)
    }
}

/// The last `max` characters of `prompt`, after "…" when it is longer: the context shown
/// before a continuation.
pub fn tail(prompt: &str, max: usize) -> String {
    let n = prompt.chars().count();
    if n <= max {
        return prompt.to_string();
    }
    let kept: String = prompt.chars().skip(n - max).collect();
    format!("…{kept}")
}
