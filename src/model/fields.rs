//! Typed reads of a checkpoint's `config.json`, for every family: each field read with its type
//! and, for a size, its limit (`model::limits`), every refusal naming the field.

use serde_json::{Map, Value};

use crate::formats::LoadError;

/// Typed reads of the fields of a `config.json` object, each error naming the field.
pub struct Fields<'a>(pub &'a Map<String, Value>);

impl Fields<'_> {
    /// `config.json`'s text as a JSON object (a key written twice is refused: two readers could
    /// take different ones).
    pub fn object(text: &str) -> Result<Map<String, Value>, LoadError> {
        let json = crate::formats::json::parse_strict(text, 10_000)
            .map_err(|e| LoadError::Config(format!("not valid JSON ({e})")))?;
        match json {
            Value::Object(raw) => Ok(raw),
            _ => Err(LoadError::Config("it is not a JSON object".into())),
        }
    }

    pub fn text(&self, key: &str) -> Result<Option<&str>, LoadError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(LoadError::Config(format!("`{key}` must be a string, not {other}"))),
        }
    }
    pub fn flag(&self, key: &str) -> Result<Option<bool>, LoadError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(LoadError::Config(format!("`{key}` must be true or false, not {other}"))),
        }
    }
    pub fn number(&self, key: &str) -> Result<Option<f64>, LoadError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                v.as_f64().map(Some).ok_or_else(|| LoadError::Config(format!("`{key}` must be a number, not {v}")))
            }
        }
    }
    /// A size: a whole number from 1 to its limit (sizes past the limits are refused here,
    /// before anything is allocated from them or multiplied by them).
    pub fn size(&self, key: &str, max: usize) -> Result<Option<usize>, LoadError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(0) => Err(LoadError::Config(format!("`{key}` must be positive"))),
                Some(n) if n <= max as u64 => Ok(Some(n as usize)),
                _ => Err(LoadError::Config(format!("`{key}` must be a whole number from 1 to at most {max}, not {v}"))),
            },
        }
    }
}
