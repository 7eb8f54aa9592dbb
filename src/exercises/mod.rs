//! Checked exercises at the end of a chapter, DOM-free: what the page renders and what checks
//! a reader's answer.
//!
//! - `format`: the `exercise` blocks of the chapter markdown, parsed at build time (std only,
//!   so `build.rs` includes it) into the static [`Exercise`] each page carries;
//! - `expr`: a small, strict evaluator for what a reader types (`e^2/(1+e^2)`, `3/4`, `0.731`)
//!   and, in answer keys only, the book's own computations (`book`), so a key cannot drift
//!   from the code;
//! - `check`: a reader's text against an answer (tolerance, targeted hints for known mistakes);
//! - `goals`: "make it happen" goals, named predicates over a typed demo's parameters and output.
//!
//! Four kinds: compute (a number, checked), predict (choose or order, then "See it" sets the
//! demo), make (a goal checked live against the demo) and explain (free text, a model answer).

pub mod book;
pub mod check;
pub mod expr;
pub mod format;
pub mod goals;

/// One exercise, as the build writes it into the chapter (`Segment::Exercise`). Every text
/// field is HTML (inline `$math$` already MathML), from our own files, never from a URL.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exercise {
    /// Unique in the book: lower-case letters, digits and dashes (for anchors and progress).
    pub id: &'static str,
    pub question: &'static str,
    pub task: Task,
    /// One or two hints, shown one at a time on request.
    pub hints: &'static [&'static str],
    /// The worked solution (for `Task::Explain`, the model answer).
    pub solution: &'static str,
}

/// What the reader does, by kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Task {
    /// Type a number or simple expression; checked with [`check::check_answer`].
    Compute {
        /// The answer key: an expression that may call the book's computations (`book`).
        answer: &'static str,
        tolerance: Tolerance,
        /// Recognisable wrong answers, each with its targeted hint.
        mistakes: &'static [Mistake],
    },
    /// Choose one of `choices` (`correct` has one index) or put them all in order (`correct`
    /// is the right order, a permutation of the indices). Checked with [`check::check_choice`].
    Predict {
        choices: &'static [&'static str],
        correct: &'static [usize],
        /// "See it": the demo to set and its URL pairs (`("temperature.t", "2")`); no demo, no button.
        see: Option<See>,
    },
    /// Reach a goal in a demo: `goals::find(goal)` checks the demo's live state.
    Make {
        demo: &'static str,
        goal: &'static str,
        /// A state that meets the goal (URL pairs), for the tests and a "show me" button.
        witness: &'static [(&'static str, &'static str)],
    },
    /// Free text, not graded: the solution is the model answer.
    Explain,
}

/// A demo state, as URL pairs of that demo (`temperature.t` = `2`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct See {
    pub demo: &'static str,
    pub pairs: &'static [(&'static str, &'static str)],
}

/// How close a reader's number must be: within `Abs(t)` of the key, or within `Rel(r)` times it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    Abs(f64),
    Rel(f64),
}

impl Tolerance {
    pub fn accepts(self, got: f64, want: f64) -> bool {
        let room = match self {
            Tolerance::Abs(t) => t,
            Tolerance::Rel(r) => r * want.abs(),
        };
        // A hair of slack so that a key printed at exactly the tolerance's precision counts.
        (got - want).abs() <= room * (1.0 + 1e-9) + f64::EPSILON * want.abs()
    }

    /// As the page states it: "±0.002" or "±1%".
    pub fn describe(self) -> String {
        match self {
            Tolerance::Abs(t) => format!("±{t}"),
            Tolerance::Rel(r) => format!("±{}%", r * 100.0),
        }
    }
}

/// A recognisable wrong answer: its value (an answer-key expression) and the hint it earns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mistake {
    pub expr: &'static str,
    pub message: &'static str,
}
