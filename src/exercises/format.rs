//! The exercise blocks of a chapter: a fenced block with the info string `exercise` and one
//! `key: value` per line (a line that starts with a space continues the previous value).
//!
//! ````text
//! ```exercise
//! id: scaled-weight
//! kind: compute
//! question: With $d = 4$ the scores are 4 and 2. What weight does the first key get?
//! answer: softmax([4, 2], 1, 1/sqrt(4))
//! tolerance: 0.002
//! mistake: softmax([4, 2], 1) => That is the weight without the division by $\sqrt{d}$.
//! hint: Divide both scores by $\sqrt{4} = 2$ first.
//! solution: The scaled scores are 2 and 1, so the weight is $e^2 / (e^2 + e) = e / (1 + e) \approx 0.731$.
//! ```
//! ````
//!
//! Keys: `id`, `kind` (compute, predict, make, explain), `question`, `hint` (once or twice),
//! `solution` (`model` for explain); compute: `answer`, `tolerance` (`0.002` absolute, `1%`
//! relative), `mistake` (repeatable, `expression => message`); predict: `choice` (repeatable),
//! `correct` (one letter, or every letter in the right order), `see` (URL pairs such as
//! `temperature.t=2 temperature.gap=2`), `demo` (optional, the demo `see` sets); make: `demo`,
//! `goal` (a name in `exercises::goals`), `witness` (URL pairs that meet the goal).
//!
//! Std only: `build.rs` includes this file to turn each block into a static `Exercise` (or a
//! notice with the reason), and the native tests use it directly.

use std::fmt::Write as _;

/// A parsed exercise block; the text fields are the block's markdown until the renderer
/// replaces them with HTML (`map_text`).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub id: String,
    pub question: String,
    pub task: TaskSpec,
    pub hints: Vec<String>,
    /// The worked solution, or for `explain` the model answer.
    pub solution: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TaskSpec {
    Compute { answer: String, tolerance: ToleranceSpec, mistakes: Vec<(String, String)> },
    Predict { choices: Vec<String>, correct: Vec<usize>, see: Option<(String, Vec<(String, String)>)> },
    Make { demo: String, goal: String, witness: Vec<(String, String)> },
    Explain,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ToleranceSpec {
    Abs(f64),
    Rel(f64),
}

/// Every key a block may use, and whether it may repeat.
const KEYS: &[(&str, bool)] = &[
    ("id", false),
    ("kind", false),
    ("question", false),
    ("answer", false),
    ("tolerance", false),
    ("mistake", true),
    ("choice", true),
    ("correct", false),
    ("see", false),
    ("demo", false),
    ("goal", false),
    ("witness", false),
    ("hint", true),
    ("solution", false),
    ("model", false),
];

/// The keys only one kind uses (the common ones are id, kind, question, hint).
fn kind_keys(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "compute" => &["answer", "tolerance", "mistake", "solution"],
        "predict" => &["choice", "correct", "see", "demo", "solution"],
        "make" => &["demo", "goal", "witness", "solution"],
        "explain" => &["model"],
        _ => return None,
    })
}

pub const MAX_CHOICES: usize = 8;
pub const MAX_HINTS: usize = 2;

/// Lower-case letters, digits and dashes, as demo ids: usable in an anchor and a URL.
pub fn valid_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Parses the lines between the fences. `first_line` is the chapter's line number of the
/// block's first line, for the messages. The error says what is wrong and where.
pub fn parse(body: &str, first_line: usize) -> Result<Spec, String> {
    let mut fields: Vec<(String, String, usize)> = Vec::new(); // key, value, line
    for (i, line) in body.lines().enumerate() {
        let lineno = first_line + i;
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            let Some(last) = fields.last_mut() else {
                return Err(format!("line {lineno}: an indented line continues a value, but no key comes before it"));
            };
            last.1.push(' ');
            last.1.push_str(line.trim());
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("line {lineno}: expected `key: value`, found \"{}\"", line.trim()));
        };
        let key = key.trim();
        let Some(&(_, repeatable)) = KEYS.iter().find(|(k, _)| *k == key) else {
            let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err(format!("line {lineno}: unknown key \"{key}\" (known: {})", known.join(", ")));
        };
        if !repeatable && fields.iter().any(|(k, _, _)| k == key) {
            return Err(format!("line {lineno}: \"{key}\" is given twice"));
        }
        fields.push((key.to_string(), value.trim().to_string(), lineno));
    }
    let one = |key: &str| fields.iter().find(|(k, _, _)| k == key).map(|(_, v, l)| (v.as_str(), *l));
    let all = |key: &str| fields.iter().filter(|(k, _, _)| k == key).map(|(_, v, l)| (v.as_str(), *l)).collect();
    let id = one("id").map(|(v, _)| v).unwrap_or("");
    // Every message after this point names the exercise.
    let at = |line: usize, msg: String| format!("exercise \"{id}\", line {line}: {msg}");
    let whole = |msg: &str| format!("exercise \"{id}\" (from line {first_line}): {msg}");
    let Some((id, id_line)) = one("id") else {
        return Err(format!("the exercise from line {first_line} has no \"id\""));
    };
    if !valid_id(id) {
        return Err(at(id_line, format!("id \"{id}\" is not lower-case letters, digits and dashes")));
    }
    let Some((kind, kind_line)) = one("kind") else {
        return Err(whole("no \"kind\" (compute, predict, make or explain)"));
    };
    let Some(own) = kind_keys(kind) else {
        return Err(at(kind_line, format!("kind \"{kind}\" is not compute, predict, make or explain")));
    };
    for (key, _, line) in &fields {
        if !["id", "kind", "question", "hint"].contains(&key.as_str()) && !own.contains(&key.as_str()) {
            return Err(at(*line, format!("\"{key}\" does not belong in a {kind} exercise")));
        }
    }
    let need = |key: &str| match one(key) {
        Some((v, _)) if !v.is_empty() => Ok(v.to_string()),
        Some((_, line)) => Err(at(line, format!("\"{key}\" is empty"))),
        None => Err(whole(&format!("a {kind} exercise needs \"{key}\""))),
    };
    let question = need("question")?;
    let hints: Vec<(&str, usize)> = all("hint");
    if hints.is_empty() || hints.len() > MAX_HINTS {
        return Err(whole(&format!("an exercise has one or two hints, this one has {}", hints.len())));
    }
    if let Some((_, line)) = hints.iter().find(|(h, _)| h.is_empty()) {
        return Err(at(*line, "a hint is empty".into()));
    }
    let hints = hints.into_iter().map(|(h, _)| h.to_string()).collect();
    let solution = need(if kind == "explain" { "model" } else { "solution" })?;
    let task = match kind {
        "compute" => {
            let answer = need("answer")?;
            let (tol, tol_line) = one("tolerance").ok_or_else(|| whole("a compute exercise needs \"tolerance\""))?;
            let tolerance = parse_tolerance(tol).map_err(|e| at(tol_line, e))?;
            let mut mistakes = Vec::new();
            for (m, line) in all("mistake") {
                let Some((expr, message)) = m.split_once("=>") else {
                    return Err(at(line, "a mistake is written `expression => message`".into()));
                };
                let (expr, message) = (expr.trim(), message.trim());
                if expr.is_empty() || message.is_empty() {
                    return Err(at(line, "a mistake needs both an expression and a message".into()));
                }
                mistakes.push((expr.to_string(), message.to_string()));
            }
            TaskSpec::Compute { answer, tolerance, mistakes }
        }
        "predict" => {
            let choices: Vec<(&str, usize)> = all("choice");
            if choices.len() < 2 || choices.len() > MAX_CHOICES {
                return Err(whole(&format!(
                    "a predict exercise has 2 to {MAX_CHOICES} choices, not {}",
                    choices.len()
                )));
            }
            if let Some((_, line)) = choices.iter().find(|(c, _)| c.is_empty()) {
                return Err(at(*line, "a choice is empty".into()));
            }
            let (c, c_line) = one("correct").ok_or_else(|| whole("a predict exercise needs \"correct\""))?;
            let correct = parse_correct(c, choices.len()).map_err(|e| at(c_line, e))?;
            let see = match one("see") {
                None => None,
                Some((s, line)) => {
                    let pairs = parse_pairs(s).map_err(|e| at(line, e))?;
                    let demo = pairs_demo(&pairs).map_err(|e| at(line, e))?;
                    if let Some((d, d_line)) = one("demo") {
                        if d != demo {
                            return Err(at(d_line, format!("demo \"{d}\", but \"see\" sets demo \"{demo}\"")));
                        }
                    }
                    Some((demo, pairs))
                }
            };
            if see.is_none() {
                if let Some((_, line)) = one("demo") {
                    return Err(at(line, "\"demo\" names the demo that \"see\" sets, and there is no \"see\"".into()));
                }
            }
            TaskSpec::Predict { choices: choices.into_iter().map(|(c, _)| c.to_string()).collect(), correct, see }
        }
        "make" => {
            let demo = need("demo")?;
            if !valid_id(&demo) {
                return Err(whole(&format!("demo \"{demo}\" is not a demo id")));
            }
            let goal = need("goal")?;
            let (w, w_line) = one("witness").ok_or_else(|| whole("a make exercise needs \"witness\""))?;
            let witness = parse_pairs(w).map_err(|e| at(w_line, e))?;
            let wd = pairs_demo(&witness).map_err(|e| at(w_line, e))?;
            if wd != demo {
                return Err(at(w_line, format!("the witness sets demo \"{wd}\", not \"{demo}\"")));
            }
            TaskSpec::Make { demo, goal, witness }
        }
        _ => TaskSpec::Explain,
    };
    Ok(Spec { id: id.to_string(), question, task, hints, solution })
}

/// `0.002` (absolute) or `1%` (relative); positive and finite.
pub fn parse_tolerance(s: &str) -> Result<ToleranceSpec, String> {
    let (num, rel) = match s.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (s, false),
    };
    let x: f64 = num.parse().map_err(|_| format!("tolerance \"{s}\" is not a number like 0.002 or 1%"))?;
    if !(x.is_finite() && x > 0.0) || (rel && x >= 100.0) {
        return Err(format!("tolerance \"{s}\" must be above 0 (and a percentage below 100)"));
    }
    Ok(if rel { ToleranceSpec::Rel(x / 100.0) } else { ToleranceSpec::Abs(x) })
}

/// `B` (choose one) or `C, A, B` (the order of all of them); letters A, B, C… name the choices.
pub fn parse_correct(s: &str, choices: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return Err(format!("\"{part}\" in \"correct\" is not one letter"));
        };
        let i = (c.to_ascii_uppercase() as usize).wrapping_sub('A' as usize);
        if i >= choices {
            return Err(format!("\"{part}\" in \"correct\" names no choice (there are {choices})"));
        }
        if out.contains(&i) {
            return Err(format!("\"{part}\" is named twice in \"correct\""));
        }
        out.push(i);
    }
    if out.is_empty() {
        return Err("\"correct\" names no choice".into());
    }
    if out.len() > 1 && out.len() != choices {
        return Err(format!(
            "\"correct\" is one letter, or all {choices} in order (an ordering), not {} of them",
            out.len()
        ));
    }
    Ok(out)
}

/// URL pairs, `demo.key=value`, separated by spaces or `&`.
pub fn parse_pairs(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for part in s.split([' ', '&']).filter(|p| !p.is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!("\"{part}\" is not a `demo.key=value` pair"));
        };
        let Some((demo, sub)) = key.split_once('.') else {
            return Err(format!("\"{key}\" does not start with a demo id and a dot, as `temperature.t`"));
        };
        if !valid_id(demo) || sub.is_empty() || value.is_empty() {
            return Err(format!("\"{part}\" is not a `demo.key=value` pair"));
        }
        out.push((key.to_string(), value.to_string()));
    }
    if out.is_empty() {
        return Err("no `demo.key=value` pairs".into());
    }
    Ok(out)
}

/// The one demo a list of pairs sets.
fn pairs_demo(pairs: &[(String, String)]) -> Result<String, String> {
    let demo = |k: &str| k.split_once('.').map_or(String::new(), |(d, _)| d.to_string());
    let first = demo(&pairs[0].0);
    match pairs.iter().find(|(k, _)| demo(k) != first) {
        Some((k, _)) => Err(format!("the pairs set two demos, \"{first}\" and \"{}\"", demo(k))),
        None => Ok(first),
    }
}

impl Spec {
    /// Replaces every text the reader sees (question, hints, solution, choices, mistake
    /// messages) with `f` of it: the renderer's markdown and math to HTML.
    pub fn map_text(&mut self, mut f: impl FnMut(&str) -> String) {
        self.question = f(&self.question);
        self.solution = f(&self.solution);
        for h in &mut self.hints {
            *h = f(h);
        }
        match &mut self.task {
            TaskSpec::Compute { mistakes, .. } => {
                for (_, m) in mistakes {
                    *m = f(m);
                }
            }
            TaskSpec::Predict { choices, .. } => {
                for c in choices {
                    *c = f(c);
                }
            }
            TaskSpec::Make { .. } | TaskSpec::Explain => {}
        }
    }

    /// The static `crate::exercises::Exercise` this block becomes, as Rust code.
    pub fn rust_code(&self) -> String {
        let strs = |v: &[String]| format!("&[{}]", v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", "));
        let pairs = |v: &[(String, String)]| {
            format!("&[{}]", v.iter().map(|(k, x)| format!("({k:?}, {x:?})")).collect::<Vec<_>>().join(", "))
        };
        let task = match &self.task {
            TaskSpec::Compute { answer, tolerance, mistakes } => {
                let tol = match tolerance {
                    ToleranceSpec::Abs(t) => format!("Abs({t:?})"),
                    ToleranceSpec::Rel(r) => format!("Rel({r:?})"),
                };
                let mut ms = String::new();
                for (e, m) in mistakes {
                    let _ = write!(ms, "crate::exercises::Mistake {{ expr: {e:?}, message: {m:?} }}, ");
                }
                format!(
                    "crate::exercises::Task::Compute {{ answer: {answer:?}, \
                     tolerance: crate::exercises::Tolerance::{tol}, mistakes: &[{ms}] }}"
                )
            }
            TaskSpec::Predict { choices, correct, see } => {
                let see = match see {
                    None => "None".to_string(),
                    Some((demo, p)) => {
                        format!("Some(crate::exercises::See {{ demo: {demo:?}, pairs: {} }})", pairs(p))
                    }
                };
                format!(
                    "crate::exercises::Task::Predict {{ choices: {}, correct: &{correct:?}, see: {see} }}",
                    strs(choices)
                )
            }
            TaskSpec::Make { demo, goal, witness } => format!(
                "crate::exercises::Task::Make {{ demo: {demo:?}, goal: {goal:?}, witness: {} }}",
                pairs(witness)
            ),
            TaskSpec::Explain => "crate::exercises::Task::Explain".to_string(),
        };
        format!(
            "crate::exercises::Exercise {{ id: {:?}, question: {:?}, task: {task}, hints: {}, solution: {:?} }}",
            self.id,
            self.question,
            strs(&self.hints),
            self.solution
        )
    }
}
