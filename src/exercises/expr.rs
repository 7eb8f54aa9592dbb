//! A strict evaluator for the numbers a reader types and for answer keys. No `eval`, no
//! panics: the text is tokenised and parsed by recursive descent with a length and a depth
//! limit, and every step checks that the number stays finite.
//!
//! The reader's grammar: numbers (`0.731`, `1e-3`), `+ - * / ^` (also `− × · ÷`), unary minus,
//! parentheses, `e`, `pi` (`π`), `sqrt` (`√`), `exp`, `ln`, `log2`. `^` binds tightest and to
//! the right, so `-2^2` is −4 and `2^3^2` is 2⁹. Answer keys may also call the book's own
//! computations (`super::book`), with lists `[2, 1, 0]` and quoted names as arguments.

use super::book;
use crate::formats::echo::{echo, echo_char};

/// The longest text a reader may type, in characters.
pub const MAX_LEN: usize = 200;
/// The longest answer key.
pub const MAX_KEY_LEN: usize = 1000;
/// How deeply parentheses, calls and unary signs may nest.
pub const MAX_DEPTH: usize = 32;
/// The longest list in a key.
pub const MAX_LIST: usize = 256;

/// An argument of a book function.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Num(f64),
    List(Vec<f64>),
    Text(String),
}

/// Evaluates what a reader typed: no book functions, no lists.
pub fn eval_reader(text: &str) -> Result<f64, String> {
    eval(text, false)
}

/// Evaluates an answer key (or a mistake's expression): the reader's grammar plus the book's
/// computations.
pub fn eval_key(text: &str) -> Result<f64, String> {
    eval(text, true)
}

fn eval(text: &str, key: bool) -> Result<f64, String> {
    let limit = if key { MAX_KEY_LEN } else { MAX_LEN };
    let n = text.chars().count();
    if n > limit {
        return Err(format!("too long ({n} characters; at most {limit})"));
    }
    let tokens = tokenize(text, key)?;
    if tokens.is_empty() {
        return Err("nothing to read: type a number or an expression".into());
    }
    let mut p = Parser { tokens, pos: 0, depth: 0, key };
    let v = p.expr()?;
    if let Some(t) = p.tokens.get(p.pos) {
        return Err(format!("unexpected {} after the expression", t.describe()));
    }
    p.num(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Text(String),
    Sym(char),
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Num(x) => format!("the number {x}"),
            Tok::Name(n) => echo(n),
            Tok::Text(t) => format!("the text {}", echo(t)),
            Tok::Sym(c) => echo_char(*c),
        }
    }
}

fn tokenize(text: &str, key: bool) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            _ if c.is_whitespace() => i += 1,
            '0'..='9' | '.' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                // An exponent only when digits follow: `2e` is 2 then the constant e (refused).
                if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                    let mut j = i + 1;
                    if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                        j += 1;
                    }
                    if j < chars.len() && chars[j].is_ascii_digit() {
                        i = j;
                        while i < chars.len() && chars[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
                let s: String = chars[start..i].iter().collect();
                let x: f64 = s.parse().map_err(|_| format!("{} is not a number", echo(&s)))?;
                if !x.is_finite() {
                    return Err(format!("{} is too large", echo(&s)));
                }
                out.push(Tok::Num(x));
            }
            'a'..='z' | 'A'..='Z' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push(Tok::Name(chars[start..i].iter().collect::<String>().to_ascii_lowercase()));
            }
            'π' => {
                out.push(Tok::Name("pi".into()));
                i += 1;
            }
            '√' => {
                out.push(Tok::Sym('√'));
                i += 1;
            }
            '"' if key => {
                let start = i + 1;
                i = start;
                while i < chars.len() && chars[i] != '"' {
                    i += 1;
                }
                if i == chars.len() {
                    return Err("a quoted name is not closed".into());
                }
                out.push(Tok::Text(chars[start..i].iter().collect()));
                i += 1;
            }
            '+' | '-' | '*' | '/' | '^' | '(' | ')' => {
                out.push(Tok::Sym(c));
                i += 1;
            }
            '[' | ']' | ',' if key => {
                out.push(Tok::Sym(c));
                i += 1;
            }
            '−' => {
                out.push(Tok::Sym('-'));
                i += 1;
            }
            '×' | '·' | '⋅' => {
                out.push(Tok::Sym('*'));
                i += 1;
            }
            '÷' => {
                out.push(Tok::Sym('/'));
                i += 1;
            }
            _ => {
                return Err(format!(
                    "{} cannot be used here (numbers, + − × / ^, parentheses, e, pi, sqrt)",
                    echo_char(c)
                ))
            }
        }
    }
    Ok(out)
}

/// A value while parsing: a number, or (as a book function's argument) a list or a name.
enum Val {
    Num(f64),
    List(Vec<f64>),
    Text(String),
}

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
    depth: usize,
    key: bool,
}

fn finite(x: f64, what: &str) -> Result<f64, String> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("{what} is not a finite number"))
    }
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            return Ok(());
        }
        Err(match self.peek() {
            Some(t) => format!("expected \"{c}\", found {}", t.describe()),
            None => format!("missing \"{c}\" at the end"),
        })
    }

    fn num(&self, v: Val) -> Result<f64, String> {
        match v {
            Val::Num(x) => Ok(x),
            Val::List(_) => Err("a list [..] can only be given to a function".into()),
            Val::Text(t) => Err(format!("the name \"{t}\" can only be given to a function")),
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nested too deeply (more than {MAX_DEPTH} levels)"));
        }
        Ok(())
    }

    /// expr := term (('+' | '-') term)*
    fn expr(&mut self) -> Result<Val, String> {
        self.enter()?;
        let first = self.term()?;
        let v = if matches!(self.peek(), Some(Tok::Sym('+' | '-'))) {
            let mut x = self.num(first)?;
            while let Some(Tok::Sym(op @ ('+' | '-'))) = self.peek().cloned() {
                self.pos += 1;
                let y = self.term()?;
                let y = self.num(y)?;
                x = finite(if op == '+' { x + y } else { x - y }, "the sum")?;
            }
            Val::Num(x)
        } else {
            first
        };
        self.depth -= 1;
        Ok(v)
    }

    /// term := unary (('*' | '/') unary)*
    fn term(&mut self) -> Result<Val, String> {
        let first = self.unary()?;
        if !matches!(self.peek(), Some(Tok::Sym('*' | '/'))) {
            return Ok(first);
        }
        let mut x = self.num(first)?;
        while let Some(Tok::Sym(op @ ('*' | '/'))) = self.peek().cloned() {
            self.pos += 1;
            let y = self.unary()?;
            let y = self.num(y)?;
            x = if op == '*' {
                finite(x * y, "the product")?
            } else if y == 0.0 {
                return Err("division by zero".into());
            } else {
                finite(x / y, "the quotient")?
            };
        }
        Ok(Val::Num(x))
    }

    /// unary := ('-' | '+' | '√') unary | power
    fn unary(&mut self) -> Result<Val, String> {
        self.enter()?;
        let v = if self.eat('-') {
            let v = self.unary()?;
            Val::Num(-self.num(v)?)
        } else if self.eat('+') {
            let v = self.unary()?;
            Val::Num(self.num(v)?)
        } else if self.eat('√') {
            let v = self.unary()?;
            Val::Num(apply("sqrt", self.num(v)?)?)
        } else {
            self.power()?
        };
        self.depth -= 1;
        Ok(v)
    }

    /// power := atom ('^' unary)?  (right-associative through `unary`)
    fn power(&mut self) -> Result<Val, String> {
        let base = self.atom()?;
        if !self.eat('^') {
            return Ok(base);
        }
        let b = self.num(base)?;
        let e = self.unary()?;
        let e = self.num(e)?;
        if b < 0.0 && e.fract() != 0.0 {
            return Err("a negative number to a fractional power".into());
        }
        if b == 0.0 && e < 0.0 {
            return Err("zero to a negative power".into());
        }
        Ok(Val::Num(finite(b.powf(e), "the power")?))
    }

    fn atom(&mut self) -> Result<Val, String> {
        let Some(t) = self.peek().cloned() else {
            return Err("the expression ends too early".into());
        };
        self.pos += 1;
        match t {
            Tok::Num(x) => {
                if let Some(next @ (Tok::Num(_) | Tok::Name(_) | Tok::Sym('(' | '√'))) = self.peek() {
                    return Err(format!("an operator is missing between {x} and {}", next.describe()));
                }
                Ok(Val::Num(x))
            }
            Tok::Text(s) => Ok(Val::Text(s)),
            Tok::Sym('(') => {
                let v = self.expr()?;
                self.expect(')')?;
                Ok(v)
            }
            Tok::Sym('[') => {
                let mut xs = Vec::new();
                if !self.eat(']') {
                    loop {
                        let v = self.expr()?;
                        xs.push(self.num(v)?);
                        if xs.len() > MAX_LIST {
                            return Err(format!("a list of more than {MAX_LIST} numbers"));
                        }
                        if self.eat(']') {
                            break;
                        }
                        self.expect(',')?;
                    }
                }
                Ok(Val::List(xs))
            }
            Tok::Name(name) => self.name(name),
            Tok::Sym(c) => Err(format!("unexpected \"{c}\"")),
        }
    }

    fn name(&mut self, name: String) -> Result<Val, String> {
        match name.as_str() {
            "e" => return Ok(Val::Num(std::f64::consts::E)),
            "pi" => return Ok(Val::Num(std::f64::consts::PI)),
            _ => {}
        }
        if !self.eat('(') {
            return Err(match name.as_str() {
                "sqrt" | "exp" | "ln" | "log2" => format!("{name} needs parentheses: {name}(…)"),
                _ => unknown(&name, self.key),
            });
        }
        self.enter()?;
        let mut args = Vec::new();
        if !self.eat(')') {
            loop {
                args.push(match self.expr()? {
                    Val::Num(x) => Arg::Num(x),
                    Val::List(xs) => Arg::List(xs),
                    Val::Text(t) => Arg::Text(t),
                });
                if self.eat(')') {
                    break;
                }
                if !self.key {
                    return Err(format!("{name}(…) takes one number"));
                }
                self.expect(',')?;
            }
        }
        self.depth -= 1;
        if let [Arg::Num(x)] = args[..] {
            if matches!(name.as_str(), "sqrt" | "exp" | "ln" | "log2") {
                return apply(&name, x).map(Val::Num);
            }
        }
        if matches!(name.as_str(), "sqrt" | "exp" | "ln" | "log2") {
            return Err(format!("{name}(…) takes one number"));
        }
        if !self.key {
            return Err(unknown(&name, false));
        }
        let f = book::find(&name).ok_or_else(|| unknown(&name, true))?;
        Ok(Val::Num(finite(f(&args).map_err(|e| format!("{name}: {e}"))?, &format!("{name}(…)"))?))
    }
}

fn unknown(name: &str, key: bool) -> String {
    if key {
        let known: Vec<&str> = book::FUNCTIONS.iter().map(|(n, _, _)| *n).collect();
        format!("unknown name \"{name}\" (besides e, pi, sqrt, exp, ln, log2 a key may use {})", known.join(", "))
    } else {
        format!("unknown name \"{name}\" (you may use e, pi, sqrt, exp, ln and log2)")
    }
}

fn apply(f: &str, x: f64) -> Result<f64, String> {
    match f {
        "sqrt" if x < 0.0 => Err("the square root of a negative number".into()),
        "ln" | "log2" if x <= 0.0 => Err(format!("{f} of a number that is not above 0")),
        "sqrt" => Ok(x.sqrt()),
        "ln" => Ok(x.ln()),
        "log2" => Ok(x.log2()),
        _ => finite(x.exp(), "exp(…)"),
    }
}
