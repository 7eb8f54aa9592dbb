//! Checks a reader's answer. A number is read with the reader's grammar (`expr::eval_reader`),
//! compared with the key within the stated tolerance, and, when wrong, compared with each
//! recognisable mistake so that the hint can say what probably went wrong.

use super::expr::{eval_key, eval_reader};
use super::{Exercise, Mistake, Task, Tolerance};

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Right,
    /// Wrong, with the targeted hint of the mistake it matches (HTML), if any.
    Wrong(Option<&'static str>),
    /// The text is not a number or expression we can read; the reason, for the reader.
    Unreadable(String),
}

/// A compute exercise's answer against what the reader typed. Any other kind is not checked
/// this way, and says so.
pub fn check_answer(ex: &Exercise, text: &str) -> Verdict {
    match ex.task {
        Task::Compute { answer, tolerance, mistakes } => check_number(answer, tolerance, mistakes, text),
        _ => Verdict::Unreadable(format!("exercise \"{}\" does not take a number", ex.id)),
    }
}

pub fn check_number(answer: &str, tolerance: Tolerance, mistakes: &[Mistake], text: &str) -> Verdict {
    let got = match eval_reader(text) {
        Ok(x) => x,
        Err(e) => return Verdict::Unreadable(e),
    };
    let want = match eval_key(answer) {
        Ok(x) => x,
        // Our fault, not the reader's (tests/book/exercises.rs evaluates every key).
        Err(e) => return Verdict::Unreadable(format!("the answer key cannot be evaluated: {e}")),
    };
    if tolerance.accepts(got, want) {
        return Verdict::Right;
    }
    let hint = mistakes.iter().find(|m| eval_key(m.expr).is_ok_and(|x| tolerance.accepts(got, x)));
    Verdict::Wrong(hint.map(|m| m.message))
}

/// A predict exercise: `picked` is the one choice, or all of them in the reader's order.
pub fn check_choice(correct: &[usize], picked: &[usize]) -> bool {
    correct == picked
}
