//! Shareable demo state: every control's value lives in the URL under `<demo id>.<key>`.
pub mod params;
pub mod query;
pub mod typed;

pub use params::{
    fmt_num, fmt_sig, format_cells, format_value, log_stops, nearest_stop, parse_cells, round_sig, Kind, Notice, Param,
    Value,
};
pub use typed::{Field, Params};

/// The values of one demo's parameters, in the order of its `params` list.
#[derive(Debug, Clone)]
pub struct Values {
    params: &'static [Param],
    vals: Vec<Value>,
}

impl PartialEq for Values {
    fn eq(&self, other: &Self) -> bool {
        // The same table (a `const` table may sit at more than one address, so compare keys).
        self.vals == other.vals
            && self.params.len() == other.params.len()
            && self.params.iter().zip(other.params).all(|(a, b)| a.key == b.key)
    }
}

impl Values {
    pub fn defaults(params: &'static [Param]) -> Self {
        Values { params, vals: params.iter().map(Param::default_value).collect() }
    }

    /// Reads this demo's values from decoded URL pairs. Keys of other demos are not ours and
    /// are skipped; our keys that are unknown, malformed or out of range keep the default and
    /// produce a notice. If a key is given twice, the first value wins (as `URLSearchParams.get`).
    pub fn from_pairs(demo_id: &str, params: &'static [Param], pairs: &[(String, String)]) -> (Self, Vec<Notice>) {
        let mut values = Values::defaults(params);
        let mut seen = vec![false; params.len()];
        let mut notices = Vec::new();
        for (key, raw) in pairs {
            let Some(sub) = key.strip_prefix(demo_id).and_then(|r| r.strip_prefix('.')) else {
                continue;
            };
            // A key of older links: its value moved to today's key and scale.
            let renamed = params.iter().find_map(|p| p.formerly.filter(|f| f.0 == sub).map(|f| (p.key, f.1)));
            // Today's keys first: an old name never shadows a current one.
            let renamed = renamed.filter(|_| !params.iter().any(|p| p.key == sub));
            let (sub, value) = match renamed {
                Some((today, offset)) => match raw.trim().parse::<i64>() {
                    Ok(v) => (today, v.saturating_sub(offset).to_string()),
                    Err(_) => (today, raw.clone()),
                },
                None => (sub, raw.clone()),
            };
            match params.iter().position(|p| p.key == sub) {
                None => notices.push(Notice {
                    key: key.clone(),
                    raw: raw.clone(),
                    reason: "this demo has no such setting".into(),
                    cut: false,
                }),
                Some(i) if seen[i] => notices.push(Notice {
                    key: key.clone(),
                    raw: raw.clone(),
                    reason: "given twice; the first value is used".into(),
                    cut: false,
                }),
                Some(i) => {
                    seen[i] = true;
                    match (params[i].parse(&value), params[i].cut_text(&value)) {
                        (Ok(v), _) => values.vals[i] = v,
                        // A text too long is kept up to its limit (a long prompt loses its end, not all of it).
                        (Err(reason), Some(v)) => {
                            values.vals[i] = v;
                            let kept = match params[i].kind {
                                Kind::Text { max_len, .. } => max_len,
                                _ => 0,
                            };
                            notices.push(Notice {
                                key: key.clone(),
                                raw: raw.clone(),
                                reason: format!("{reason}; its first {kept} characters are used"),
                                cut: true,
                            })
                        }
                        (Err(reason), None) => notices.push(Notice {
                            key: key.clone(),
                            raw: raw.clone(),
                            reason: format!("{reason}; using the default {}", format_value(&params[i].default_value())),
                            cut: false,
                        }),
                    }
                }
            }
        }
        (values, notices)
    }

    /// Every (`<demo>.<key>`, value) pair (a link that names only what differs from the demo's
    /// baseline: `DemoSpec::link_pairs`).
    pub fn to_pairs(&self, demo_id: &str) -> Vec<(String, String)> {
        self.params.iter().zip(&self.vals).map(|(p, v)| (format!("{demo_id}.{}", p.key), format_value(v))).collect()
    }

    pub fn params(&self) -> &'static [Param] {
        self.params
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static Param, &Value)> {
        self.params.iter().zip(&self.vals)
    }

    fn index(&self, key: &str) -> Option<usize> {
        let i = self.params.iter().position(|p| p.key == key);
        debug_assert!(i.is_some(), "no parameter {key}");
        i
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.index(key).map(|i| &self.vals[i])
    }

    /// Sets a value from a control; it is clamped or replaced by the default if invalid.
    pub fn set(&mut self, key: &str, v: Value) {
        if let Some(i) = self.index(key) {
            self.vals[i] = self.params[i].sanitize(v);
        }
    }

    /// Sets the `i`-th value (in declaration order), clamped or checked like [`Values::set`].
    pub fn set_at(&mut self, i: usize, v: Value) {
        if let Some(p) = self.params.get(i) {
            self.vals[i] = p.sanitize(v);
        }
    }

    /// Every value as a JSON object, for "Download data".
    pub fn to_json(&self) -> serde_json::Value {
        let map = self.iter().map(|(p, v)| (p.key.to_string(), serde_json::to_value(v).unwrap_or_default())).collect();
        serde_json::Value::Object(map)
    }
}
