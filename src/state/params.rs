//! A demo's controls, declared once: each `Param` knows its URL key, label, type, range and
//! default. Values parsed from a URL are validated here; anything malformed or out of range
//! falls back to the default and produces a `Notice` the page shows. Nothing here panics on
//! input (see the fuzz-style test in `tests/book/url_state.rs`).

use serde::Serialize;

/// What kind of control a parameter is, with its range and default.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A real number in `[min, max]`. `log` sliders move exponentially, for widths like σ.
    Float { min: f64, max: f64, step: f64, log: bool, default: f64 },
    /// An integer in `[min, max]`; `log` sliders move exponentially (for sizes like d).
    Int { min: i64, max: i64, log: bool, default: i64 },
    /// One of a fixed list: `(url value, label)`.
    Choice { options: &'static [(&'static str, &'static str)], default: usize },
    /// Free text up to `max_len` characters (always rendered as text, never as HTML).
    Text { max_len: usize, default: &'static str },
    /// A random seed (any u32); the page offers a "resample" button.
    Seed { default: u32 },
    /// On or off.
    Bool { default: bool },
    /// A small matrix of numbers, at most `max_rows` × `max_cols`, each within ±`limit`, that
    /// the demo's own view edits cell by cell (there is no generic control). URL form: rows
    /// separated by `;`, cells by `,` (`1,0.5;-2,0`); empty means "none typed in", and the demo
    /// draws its own. Stored as `Value::Text`.
    Cells { max_rows: usize, max_cols: usize, limit: f64 },
}

/// One control of a demo.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Key in the URL, under the demo's id: `<demo>.<key>`.
    pub key: &'static str,
    /// Visible label (also the accessible name of the control).
    pub label: &'static str,
    pub kind: Kind,
    /// The key this integer had in older links, and what was added to its value there: a link
    /// with `<old key>=v` restores `v − offset` under today's key.
    pub formerly: Option<(&'static str, i64)>,
}

/// A parameter's current value. The variant always matches the `Param`'s `Kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Float(f64),
    Int(i64),
    Choice(String),
    Text(String),
    Seed(u32),
    Bool(bool),
}

/// A URL value that was ignored, and why. Shown in the page next to the demo.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub key: String,
    pub raw: String,
    pub reason: String,
    /// The value was used cut to its allowed length (a long text), not ignored.
    pub cut: bool,
}

impl Notice {
    /// One sentence for the page. `raw` is shortened so a huge URL cannot flood the page;
    /// it is displayed as text by the UI, never interpreted as HTML.
    pub fn message(&self) -> String {
        let (before, raw, after) = self.parts();
        format!("{before}{raw}{after}")
    }

    /// [`Notice::message`] in three parts: the text before the quoted value, the value from the
    /// link (shortened), and the text after it. The page isolates the value (`<bdi>`), so that
    /// direction marks in a link cannot reorder the sentence around it.
    pub fn parts(&self) -> (String, String, String) {
        let mut raw: String = self.raw.chars().take(40).collect();
        if self.raw.chars().count() > 40 {
            raw.push('…');
        }
        let verb = if self.cut { "Cut" } else { "Ignored" };
        (format!("{verb} {}=\"", self.key), raw, format!("\" from the link: {}.", self.reason))
    }
}

/// A logarithmic slider moves through this many steps (positions 0 to `LOG_STEPS`).
pub const LOG_STEPS: usize = 1000;

/// Rounds to `sig` significant digits, so values moved by a slider make short URLs.
pub fn round_sig(x: f64, sig: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let p = 10f64.powi(sig - 1 - x.abs().log10().floor() as i32);
    (x * p).round() / p
}

/// The values a logarithmic slider stops at, ascending and distinct: position `i` of the slider
/// is value `i`. Equal spacing in log(x) over `LOG_STEPS` steps, floats rounded to 3 significant
/// digits and integers to whole numbers, and repeats dropped: with repeats, two positions would
/// give one value, and a link (which carries the value) could not say which of them the sender's
/// thumb was on, nor where the next arrow press goes.
pub fn log_stops(min: f64, max: f64, integer: bool) -> Vec<f64> {
    let mut stops: Vec<f64> = Vec::with_capacity(LOG_STEPS + 1);
    if !(min > 0.0 && max >= min && max.is_finite()) {
        return vec![min];
    }
    for i in 0..=LOG_STEPS {
        let x = (min.ln() + i as f64 / LOG_STEPS as f64 * (max.ln() - min.ln())).exp();
        let x = if integer { x.round() } else { round_sig(x, 3) }.clamp(min, max);
        if stops.last().is_none_or(|&last| x > last) {
            stops.push(x);
        }
    }
    stops
}

/// The position of the stop nearest to `x` in log(x) (for a value from a link that is no stop).
pub fn nearest_stop(stops: &[f64], x: f64) -> usize {
    let i = stops.partition_point(|&s| s < x);
    match (i.checked_sub(1), stops.get(i)) {
        (Some(below), Some(&above)) if x > 0.0 && (x / stops[below]).ln() < (above / x).ln() => below,
        (Some(below), None) => below,
        _ => i.min(stops.len().saturating_sub(1)),
    }
}

impl Param {
    /// A logarithmic slider's stops ([`log_stops`]); `None` for every other control.
    pub fn log_stops(&self) -> Option<Vec<f64>> {
        match self.kind {
            Kind::Float { min, max, log: true, .. } => Some(log_stops(min, max, false)),
            Kind::Int { min, max, log: true, .. } => Some(log_stops(min as f64, max as f64, true)),
            _ => None,
        }
    }

    pub const fn float(key: &'static str, label: &'static str, min: f64, max: f64, step: f64, default: f64) -> Self {
        Param { key, label, formerly: None, kind: Kind::Float { min, max, step, log: false, default } }
    }
    pub const fn log_float(key: &'static str, label: &'static str, min: f64, max: f64, default: f64) -> Self {
        Param { key, label, formerly: None, kind: Kind::Float { min, max, step: 0.0, log: true, default } }
    }
    pub const fn int(key: &'static str, label: &'static str, min: i64, max: i64, default: i64) -> Self {
        Param { key, label, formerly: None, kind: Kind::Int { min, max, log: false, default } }
    }
    /// An integer whose older links used another key and a value `offset` larger (a 1-based
    /// position that became 0-based, say): see [`Param::formerly`].
    pub const fn int_formerly(
        key: &'static str,
        label: &'static str,
        min: i64,
        max: i64,
        default: i64,
        old_key: &'static str,
        offset: i64,
    ) -> Self {
        Param { key, label, formerly: Some((old_key, offset)), kind: Kind::Int { min, max, log: false, default } }
    }
    pub const fn log_int(key: &'static str, label: &'static str, min: i64, max: i64, default: i64) -> Self {
        Param { key, label, formerly: None, kind: Kind::Int { min, max, log: true, default } }
    }
    pub const fn choice(
        key: &'static str,
        label: &'static str,
        options: &'static [(&'static str, &'static str)],
        default: usize,
    ) -> Self {
        Param { key, label, formerly: None, kind: Kind::Choice { options, default } }
    }
    pub const fn text(key: &'static str, label: &'static str, max_len: usize, default: &'static str) -> Self {
        Param { key, label, formerly: None, kind: Kind::Text { max_len, default } }
    }
    pub const fn seed(key: &'static str, label: &'static str, default: u32) -> Self {
        Param { key, label, formerly: None, kind: Kind::Seed { default } }
    }
    pub const fn cells(key: &'static str, label: &'static str, max_rows: usize, max_cols: usize, limit: f64) -> Self {
        Param { key, label, formerly: None, kind: Kind::Cells { max_rows, max_cols, limit } }
    }
    pub const fn boolean(key: &'static str, label: &'static str, default: bool) -> Self {
        Param { key, label, formerly: None, kind: Kind::Bool { default } }
    }

    pub fn default_value(&self) -> Value {
        match self.kind {
            Kind::Float { default, .. } => Value::Float(default),
            Kind::Int { default, .. } => Value::Int(default),
            Kind::Choice { options, default } => Value::Choice(options[default].0.to_string()),
            Kind::Text { default, .. } => Value::Text(default.to_string()),
            Kind::Seed { default } => Value::Seed(default),
            Kind::Bool { default } => Value::Bool(default),
            Kind::Cells { .. } => Value::Text(String::new()),
        }
    }

    /// Parses a raw URL value, or says why it cannot be used.
    pub fn parse(&self, raw: &str) -> Result<Value, String> {
        match self.kind {
            Kind::Float { min, max, .. } => {
                let x: f64 = raw.trim().parse().map_err(|_| "not a number".to_string())?;
                if !x.is_finite() {
                    return Err("not a finite number".into());
                }
                if x < min || x > max {
                    return Err(format!("outside the range {} to {}", fmt_num(min), fmt_num(max)));
                }
                Ok(Value::Float(x))
            }
            Kind::Int { min, max, .. } => {
                let x: i64 = raw.trim().parse().map_err(|_| "not a whole number".to_string())?;
                if x < min || x > max {
                    return Err(format!("outside the range {min} to {max}"));
                }
                Ok(Value::Int(x))
            }
            Kind::Choice { options, .. } => {
                options.iter().find(|(v, _)| *v == raw).map(|(v, _)| Value::Choice(v.to_string())).ok_or_else(|| {
                    let names: Vec<&str> = options.iter().map(|(v, _)| *v).collect();
                    format!("not one of {}", names.join(", "))
                })
            }
            Kind::Text { max_len, .. } => {
                if raw.chars().count() > max_len {
                    return Err(format!("longer than {max_len} characters"));
                }
                // Long texts are edited in a text area (prompts): line breaks and tabs belong there
                // (a model may generate them); other control characters never do.
                let multiline = max_len > 1000;
                if raw.chars().any(|c| c.is_control() && !(multiline && matches!(c, '\n' | '\r' | '\t'))) {
                    return Err("contains control characters".into());
                }
                Ok(Value::Text(raw.to_string()))
            }
            Kind::Seed { .. } => raw
                .trim()
                .parse::<u32>()
                .map(Value::Seed)
                .map_err(|_| "not a seed (a whole number from 0 to 4294967295)".to_string()),
            Kind::Bool { .. } => match raw {
                "1" | "true" => Ok(Value::Bool(true)),
                "0" | "false" => Ok(Value::Bool(false)),
                _ => Err("not 1 or 0".into()),
            },
            Kind::Cells { max_rows, max_cols, limit } => {
                parse_cells(raw, max_rows, max_cols, limit).map(|_| Value::Text(raw.to_string()))
            }
        }
    }

    /// A text too long for this parameter, cut to its first `max_len` characters, when that is
    /// a value it accepts (`None` for other kinds, or text that is not too long).
    pub fn cut_text(&self, raw: &str) -> Option<Value> {
        let Kind::Text { max_len, .. } = self.kind else { return None };
        let (end, _) = raw.char_indices().nth(max_len)?;
        self.parse(&raw[..end]).ok()
    }

    /// Clamps or snaps a value coming from a control (not from a URL) into range. A text that is
    /// too long (a paste, a generation that ran on) is cut to its allowed length.
    pub fn sanitize(&self, v: Value) -> Value {
        match (self.kind, v) {
            (Kind::Float { min, max, .. }, Value::Float(x)) if x.is_finite() => Value::Float(x.clamp(min, max)),
            (Kind::Int { min, max, .. }, Value::Int(x)) => Value::Int(x.clamp(min, max)),
            (Kind::Text { .. }, Value::Text(t)) if self.cut_text(&t).is_some() => {
                self.cut_text(&t).unwrap_or(Value::Text(t))
            }
            (_, v) if self.parse(&format_value(&v)).is_ok() => v,
            _ => self.default_value(),
        }
    }
}

/// Reads a `Kind::Cells` value: rows separated by `;`, cells by `,`, every row as long as the
/// first; empty is no rows. Says what is wrong otherwise.
pub fn parse_cells(raw: &str, max_rows: usize, max_cols: usize, limit: f64) -> Result<Vec<Vec<f64>>, String> {
    if raw.trim().is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<&str> = raw.split(';').collect();
    if rows.len() > max_rows {
        return Err(format!("{} rows, more than {max_rows}", rows.len()));
    }
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split(',').collect();
        if cells.len() > max_cols {
            return Err(format!("row {} has {} cells, more than {max_cols}", i + 1, cells.len()));
        }
        let mut r = Vec::with_capacity(cells.len());
        for c in cells {
            let x: f64 = c.trim().parse().map_err(|_| {
                format!("row {}: \"{}\" is not a number", i + 1, c.chars().take(12).collect::<String>())
            })?;
            if !x.is_finite() || x.abs() > limit {
                return Err(format!("row {}: {c} is outside −{} to {}", i + 1, fmt_num(limit), fmt_num(limit)));
            }
            r.push(x);
        }
        if let Some(first) = out.first().map(Vec::len).filter(|&n| n != r.len()) {
            return Err(format!("row {} has {} cells, row 1 has {first}", i + 1, r.len()));
        }
        out.push(r);
    }
    Ok(out)
}

/// The URL form of a matrix for `Kind::Cells` (`parse_cells` reads it back, to 4 decimals).
pub fn format_cells(rows: &[Vec<f64>]) -> String {
    rows.iter().map(|r| r.iter().map(|&x| fmt_num(x)).collect::<Vec<_>>().join(",")).collect::<Vec<_>>().join(";")
}

/// The URL form of a value; `Param::parse` reads it back exactly.
pub fn format_value(v: &Value) -> String {
    match v {
        // Rust prints the shortest decimal that parses back to the same f64.
        Value::Float(x) => format!("{x}"),
        Value::Int(x) => x.to_string(),
        Value::Choice(s) | Value::Text(s) => s.clone(),
        Value::Seed(s) => s.to_string(),
        Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
    }
}

/// A slider's value as shown beside it: three significant digits, however small (a learning
/// rate of 0.00015 is not "0.0001"), and every digit of a number of a thousand or more.
pub fn fmt_sig(x: f64) -> String {
    if x.abs() >= 1e3 {
        return fmt_num(x.round()); // whole numbers keep their digits (1024 is not "1020")
    }
    // Rounded to three digits, a number prints its shortest form: 0.00153, 0.3, 2.5.
    match round_sig(x, 3) {
        0.0 => "0".to_string(),
        r => format!("{r}"),
    }
}

/// A short human form of a number for messages and labels.
pub fn fmt_num(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e9 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
