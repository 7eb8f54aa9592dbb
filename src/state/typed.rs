//! Typed demo parameters. A demo declares its parameters once, with [`params!`](crate::params):
//! a struct whose fields are the values its code reads (`p.sigma`), each beside the [`Param`]
//! that gives its URL key, label, range and default. From that one table follow the controls,
//! URL parsing and its notices, "Download data" and the reset. A misspelt field does not
//! compile; a field whose type does not fit its `Param` fails `tests/book/registry.rs`, which reads
//! every demo's defaults back and forth.

use super::params::{format_cells, parse_cells, Kind, Param, Value};
use super::Values;

/// A demo's parameters as a typed struct (written by [`params!`](crate::params), not by hand).
pub trait Params: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The controls, in the order of the struct's fields.
    const TABLE: &'static [Param];
    /// Reads the typed struct from the values (which are always valid: `Values` checks them).
    fn read(values: &Values) -> Self;
    /// Writes every field back into `values`, each clamped or checked by its `Param`.
    fn write(&self, values: &mut Values);
    /// The declared defaults.
    fn defaults() -> Self {
        Self::read(&Values::defaults(Self::TABLE))
    }
}

/// How a field's Rust type is read from, and written to, a control's value.
pub trait Field: Sized {
    fn from_value(v: &Value, p: &Param) -> Self;
    fn to_value(&self, p: &Param) -> Value;
}

impl Field for f64 {
    fn from_value(v: &Value, _: &Param) -> Self {
        match v {
            Value::Float(x) => *x,
            Value::Int(x) => *x as f64,
            _ => 0.0,
        }
    }
    fn to_value(&self, _: &Param) -> Value {
        Value::Float(*self)
    }
}

impl Field for i64 {
    fn from_value(v: &Value, _: &Param) -> Self {
        match v {
            Value::Int(x) => *x,
            Value::Choice(s) => s.parse().unwrap_or(0),
            _ => 0,
        }
    }
    fn to_value(&self, p: &Param) -> Value {
        match p.kind {
            Kind::Choice { .. } => Value::Choice(self.to_string()),
            _ => Value::Int(*self),
        }
    }
}

/// Sizes and counts: an integer control (never negative), or a choice whose values are numbers.
impl Field for usize {
    fn from_value(v: &Value, p: &Param) -> Self {
        i64::from_value(v, p).max(0) as usize
    }
    fn to_value(&self, p: &Param) -> Value {
        (*self as i64).to_value(p)
    }
}

/// Random seeds.
impl Field for u32 {
    fn from_value(v: &Value, _: &Param) -> Self {
        match v {
            Value::Seed(s) => *s,
            _ => 0,
        }
    }
    fn to_value(&self, _: &Param) -> Value {
        Value::Seed(*self)
    }
}

impl Field for bool {
    fn from_value(v: &Value, _: &Param) -> Self {
        matches!(v, Value::Bool(true))
    }
    fn to_value(&self, _: &Param) -> Value {
        Value::Bool(*self)
    }
}

/// Free text, or a choice kept as its URL value (for choices that name something, like a model).
impl Field for String {
    fn from_value(v: &Value, _: &Param) -> Self {
        match v {
            Value::Text(s) | Value::Choice(s) => s.clone(),
            _ => String::new(),
        }
    }
    fn to_value(&self, p: &Param) -> Value {
        match p.kind {
            Kind::Choice { .. } => Value::Choice(self.clone()),
            _ => Value::Text(self.clone()),
        }
    }
}

/// A matrix typed in by the reader ([`Kind::Cells`]); empty when none was typed.
impl Field for Vec<Vec<f64>> {
    fn from_value(v: &Value, p: &Param) -> Self {
        match (v, p.kind) {
            (Value::Text(raw), Kind::Cells { max_rows, max_cols, limit }) => {
                parse_cells(raw, max_rows, max_cols, limit).unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }
    fn to_value(&self, _: &Param) -> Value {
        Value::Text(format_cells(self))
    }
}

/// Declares a demo's parameters once: a struct of typed fields, each with its control.
///
/// ```
/// attention_live::params! {
///     /// What the `kernels` demo reads.
///     pub struct Params {
///         /// bandwidth σ of every kernel
///         sigma: f64 = Param::log_float("sigma", "Width σ", 0.05, 5.0, 0.5),
///         seed: u32 = Param::seed("seed", "Random draw", 1),
///     }
/// }
/// let p = <Params as attention_live::state::Params>::defaults();
/// assert_eq!((p.sigma, p.seed), (0.5, 1));
/// ```
#[macro_export]
macro_rules! params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = Param::$ctor:ident ( $($arg:expr),* $(,)? ) ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::state::Params for $name {
            const TABLE: &'static [$crate::state::Param] = &[ $( $crate::state::Param::$ctor($($arg),*) ),* ];

            fn read(values: &$crate::state::Values) -> Self {
                let mut fields = values.iter();
                $name {
                    $( $field: {
                        let (param, value) = fields.next().expect("a value per field");
                        <$ty as $crate::state::Field>::from_value(value, param)
                    }, )*
                }
            }

            fn write(&self, values: &mut $crate::state::Values) {
                let mut _index = 0;
                $(
                    let param = &<Self as $crate::state::Params>::TABLE[_index];
                    values.set_at(_index, <$ty as $crate::state::Field>::to_value(&self.$field, param));
                    _index += 1;
                )*
            }
        }
    };
}

/// Declares the options of a choice control as an enum: each variant with its URL value and
/// label. `Kernel::OPTIONS` goes in the `Param::choice`, and the field's type is the enum.
///
/// ```
/// attention_live::options! {
///     pub enum Fill { Minus = ("minus", "−∞"), Zero = ("zero", "0") }
/// }
/// assert_eq!(Fill::OPTIONS[1], ("zero", "0"));
/// assert_eq!(Fill::Zero.key(), "zero");
/// ```
#[macro_export]
macro_rules! options {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident = ($key:literal, $label:literal) ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $( $(#[$vmeta])* $variant, )+ }

        impl $name {
            /// `(URL value, label)` of every option, for `Param::choice`.
            pub const OPTIONS: &'static [(&'static str, &'static str)] = &[ $( ($key, $label) ),+ ];
            pub const ALL: &'static [$name] = &[ $( $name::$variant ),+ ];

            /// The option's URL value.
            pub fn key(self) -> &'static str {
                match self { $( $name::$variant => $key, )+ }
            }

            /// The option's label, as the control shows it.
            pub fn label(self) -> &'static str {
                match self { $( $name::$variant => $label, )+ }
            }
        }

        impl $crate::state::Field for $name {
            fn from_value(v: &$crate::state::Value, _: &$crate::state::Param) -> Self {
                let key = match v { $crate::state::Value::Choice(s) => s.as_str(), _ => "" };
                $name::ALL.iter().copied().find(|o| o.key() == key).unwrap_or($name::ALL[0])
            }
            fn to_value(&self, _: &$crate::state::Param) -> $crate::state::Value {
                $crate::state::Value::Choice(self.key().to_string())
            }
        }
    };
}
