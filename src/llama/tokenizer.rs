//! The tokenizer of a Llama-family checkpoint, read from its Hugging Face `tokenizer.json`: a
//! byte-level BPE, as SmolLM2's (vocabulary 49,152; pre-tokenizer `Digits` then `ByteLevel`;
//! `<|endoftext|>` = 0, `<|im_start|>`, `<|im_end|>`, … as added tokens). The ids are Hugging Face's
//! own (`tests/engines/llama_tokenizer.rs` checks them against `transformers` on edge cases).
//!
//! Encoding, in Hugging Face's order:
//! 1. the text is cut at the added tokens (the longest one that starts at the leftmost place);
//! 2. each piece between them is pre-tokenized: `Digits` isolates digits, `Split` and `ByteLevel`
//!    cut with a regex (GPT-2's: words with their leading space, numbers, punctuation runs,
//!    whitespace), and `ByteLevel` writes each UTF-8 byte as one printable character (space → `Ġ`);
//! 3. each word is merged by BPE: start from its characters, then merge the adjacent pair that
//!    comes first in `merges` (the leftmost on a tie) until no pair is in `merges`;
//! 4. the post-processor's template puts special tokens around the text's ids ([`Template`]):
//!    Llama 3 adds its begin-of-text token this way (as do Llama 2 and TinyLlama, whose
//!    SentencePiece-style BPE this does not read), and `transformers` 5.x writes such a
//!    `TemplateProcessing` whenever it saves a tokenizer made with `add_bos_token` /
//!    `add_eos_token`. `ByteLevel`, the other post-processor, adds no ids. [`Tokenizer::encode`]
//!    applies the template, so the tokenizer is the one place a begin-of-text token comes from.
//!
//! The merges are applied here rather than by `tiktoken-rs` (which merges the pair whose *joined
//! text* has the lowest id, and always keeps a word that is in the vocabulary whole): the two agree
//! on GPT-2, but only Hugging Face's rule is right for every `tokenizer.json`. The regex engine is
//! `fancy-regex` (GPT-2's pattern needs a look-ahead), already in the build for GPT-2's tokenizer.
//! Why not Hugging Face's `tokenizers` crate: docs/performance.md, "Llama tokenizer: which implementation".
//!
//! Anything else (another normalizer, pre-tokenizer, model, post-processor or decoder) is refused
//! with a message that names it: the ids would silently differ.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;

use fancy_regex::Regex;
use serde_json::{Map, Value};

/// GPT-2's pre-tokenizer regex (`ByteLevel` with `use_regex`).
pub const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// How many embedding rows a model may have beyond its tokenizer's ids (padding to a round
/// size: Qwen2 pads 271, others to a multiple of 64 or 128); more means another tokenizer.
pub const MAX_PADDING: usize = 1024;

/// Why a `tokenizer.json` was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenizerError {
    /// Not JSON, or a field missing or of the wrong kind.
    Malformed(String),
    /// A component this tokenizer does not implement: `component` (e.g. "pre-tokenizer"), what
    /// the file has, and what is supported.
    Unsupported { component: &'static str, found: String, supported: &'static str },
    /// The tokenizer's ids do not fit the model's embedding rows.
    VocabMismatch { tokenizer: usize, model: usize },
}

impl fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenizerError::Malformed(why) => write!(f, "tokenizer.json is not a valid tokenizer: {why}"),
            TokenizerError::Unsupported { component, found, supported } => {
                write!(f, "{component} {found} is not supported: {supported}")
            }
            TokenizerError::VocabMismatch { tokenizer, model } => write!(
                f,
                "the tokenizer has {tokenizer} tokens but the model's vocabulary has {model} rows: \
                 tokenizer.json belongs to another model"
            ),
        }
    }
}

impl std::error::Error for TokenizerError {}

const BYTE_LEVEL_ONLY: &str = "this reads byte-level BPE tokenizers (GPT-2, SmolLM2, Llama 3 style)";

/// One step of the pre-tokenizer, on raw text (`ByteLevel`, the last, also maps bytes to characters).
enum PreStep {
    /// `Digits`: each digit alone (`individual`) or runs of digits together.
    Digits { individual: bool },
    /// `Split` with a regex, `Isolated` (matches and gaps are pieces) or `Removed` (gaps only).
    Split { regex: Regex, keep_matches: bool },
    /// `ByteLevel`: a space before each piece that has none (`prefix`), then GPT-2's regex.
    ByteLevel { prefix: bool, regex: Option<Regex> },
}

/// (left id, right id) → (rank in `merges`, id of the joined token).
type Merges = HashMap<(u32, u32), (u32, u32)>;

pub struct Tokenizer {
    /// Byte-level token text → id (the BPE model's vocabulary).
    vocab: HashMap<String, u32>,
    merges: Merges,
    /// Id → its text as the file writes it (byte-level characters; an added token's content).
    tokens: Vec<Option<String>>,
    /// The added tokens (content, id), longest first: the first that matches at a place wins.
    added: Vec<(String, u32)>,
    pre: Vec<PreStep>,
    /// `ignore_merges`: a word that is in the vocabulary is one token, whatever the merges say.
    ignore_merges: bool,
    /// What the post-processor puts around the text's ids (nothing, for `ByteLevel` or none).
    template: Template,
    /// Byte b is written as character `byte_char[b]`; `char_byte` reverses it.
    byte_char: [char; 256],
    char_byte: HashMap<char, u8>,
}

impl Tokenizer {
    /// Reads a `tokenizer.json`. Malformed or unsupported files are refused, never a panic.
    pub fn from_json(text: &str) -> Result<Self, TokenizerError> {
        let root: Value = serde_json::from_str(text).map_err(|e| malformed(format!("not JSON ({e})")))?;
        let root = root.as_object().ok_or_else(|| malformed("the file is not a JSON object"))?;
        check_normalizer(root.get("normalizer"))?;
        check_decoder(root.get("decoder"))?;
        let pre = pre_steps(root.get("pre_tokenizer").unwrap_or(&Value::Null))?;
        let model = root.get("model").and_then(Value::as_object).ok_or_else(|| malformed("no \"model\" object"))?;
        check_model(model)?;
        let ignore_merges = model.get("ignore_merges").and_then(Value::as_bool).unwrap_or(false);

        let vocab_json = model.get("vocab").and_then(Value::as_object).ok_or_else(|| malformed("no model.vocab"))?;
        let mut vocab = HashMap::with_capacity(vocab_json.len());
        for (token, id) in vocab_json {
            vocab.insert(token.clone(), as_id(id, "model.vocab")?);
        }
        let byte_char = byte_chars();
        let char_byte = byte_char.iter().enumerate().map(|(b, &c)| (c, b as u8)).collect();
        if let Some(b) = (0..256).find(|&b| !vocab.contains_key(&byte_char[b].to_string())) {
            let c = byte_char[b];
            return Err(malformed(format!("the vocabulary has no token for byte 0x{b:02X} ({c:?})")));
        }
        let merges = read_merges(model.get("merges"), &vocab)?;
        let added = read_added(root.get("added_tokens"))?;

        let len = vocab.values().chain(added.iter().map(|(_, id)| id)).map(|&id| id as usize + 1).max().unwrap_or(0);
        let mut tokens = vec![None; len];
        for (token, &id) in &vocab {
            tokens[id as usize] = Some(token.clone());
        }
        for (content, id) in &added {
            tokens[*id as usize] = Some(content.clone());
        }
        let template = post_processor(root.get("post_processor"), &tokens)?;
        let mut added = added;
        added.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
        Ok(Tokenizer { vocab, merges, tokens, added, pre, ignore_merges, template, byte_char, char_byte })
    }

    /// How many ids the tokenizer has (one more than the largest).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Refuses a tokenizer that does not belong to a model with `vocab_size` embedding rows: one
    /// with ids past the last row, or one that leaves more than [`MAX_PADDING`] rows unused.
    pub fn check_vocab(&self, vocab_size: usize) -> Result<(), TokenizerError> {
        if self.len() > vocab_size || vocab_size - self.len() > MAX_PADDING {
            return Err(TokenizerError::VocabMismatch { tokenizer: self.len(), model: vocab_size });
        }
        Ok(())
    }

    /// The id of an added token (`"<|endoftext|>"`, `"<|im_start|>"`, …).
    pub fn added_id(&self, content: &str) -> Option<u32> {
        self.added.iter().find(|(c, _)| c == content).map(|&(_, id)| id)
    }

    /// Hugging Face's ids for `text` as a model reads it: the text's own ids (added tokens
    /// included) inside the post-processor's single template, so with the begin-of-text token
    /// of a tokenizer whose template adds one. What `transformers` gives for `tokenizer(text)`
    /// (`add_special_tokens=True`, its default).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.template.apply_single(&self.encode_text(text))
    }

    /// The ids of two texts in the post-processor's pair template (`tokenizer(a, b)`).
    pub fn encode_pair(&self, a: &str, b: &str) -> Vec<u32> {
        self.template.apply_pair(&self.encode_text(a), &self.encode_text(b))
    }

    /// What the post-processor puts around the text's ids.
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// The text's own ids, added tokens included, without the template's special tokens
    /// (`add_special_tokens=False`).
    pub fn encode_text(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut start = 0; // the text before `start` is encoded
        let mut at = 0;
        while at < text.len() {
            let rest = &text[at..];
            match self.added.iter().find(|(content, _)| rest.starts_with(content.as_str())) {
                Some((content, id)) => {
                    self.encode_plain(&text[start..at], &mut ids);
                    ids.push(*id);
                    at += content.len();
                    start = at;
                }
                None => at += rest.chars().next().map_or(1, char::len_utf8),
            }
        }
        self.encode_plain(&text[start..], &mut ids);
        ids
    }

    /// Text without added tokens: pre-tokenize, then BPE each word.
    fn encode_plain(&self, text: &str, ids: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        let mut pieces = vec![text.to_string()];
        for step in &self.pre {
            pieces = pieces.iter().flat_map(|p| step.split(p)).collect();
        }
        for piece in pieces {
            let word: String = piece.bytes().map(|b| self.byte_char[b as usize]).collect();
            self.bpe(&word, ids);
        }
    }

    /// Merges one byte-level word as Hugging Face does: a queue of the adjacent pairs that are
    /// merges, first by rank then leftmost; a popped pair whose symbols have changed since it was
    /// queued is skipped. O(n log n) in the word's length, so a run of 100,000 dashes is quick.
    fn bpe(&self, word: &str, ids: &mut Vec<u32>) {
        if self.ignore_merges {
            if let Some(&id) = self.vocab.get(word) {
                ids.push(id);
                return;
            }
        }
        let mut buf = [0u8; 4];
        // Every byte's character is in the vocabulary (checked at load).
        let mut id: Vec<u32> = word.chars().filter_map(|c| self.vocab.get(c.encode_utf8(&mut buf)).copied()).collect();
        let n = id.len();
        // A doubly linked list over the symbols: `next[i]`, `prev[i]` (n and usize::MAX: none);
        // `alive[i]` is false once symbol i has been merged into its left neighbour.
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut queue = BinaryHeap::new(); // Reverse((rank, left position)): the smallest first
        for i in 1..n {
            if let Some(&(rank, _)) = self.merges.get(&(id[i - 1], id[i])) {
                queue.push(Reverse((rank, i - 1)));
            }
        }
        while let Some(Reverse((rank, i))) = queue.pop() {
            let j = next[i];
            if !alive[i] || j >= n {
                continue;
            }
            // Stale when either symbol has changed since: ranks are unique, so the pair must still
            // be the merge of this rank.
            let Some(&(r, joined)) = self.merges.get(&(id[i], id[j])) else { continue };
            if r != rank {
                continue;
            }
            id[i] = joined;
            alive[j] = false;
            next[i] = next[j];
            if next[i] < n {
                prev[next[i]] = i;
            }
            // The merged symbol's pairs with its neighbours may be merges now.
            let (p, k) = (prev[i], next[i]);
            if p < n {
                if let Some(&(rank, _)) = self.merges.get(&(id[p], id[i])) {
                    queue.push(Reverse((rank, p)));
                }
            }
            if k < n {
                if let Some(&(rank, _)) = self.merges.get(&(id[i], id[k])) {
                    queue.push(Reverse((rank, i)));
                }
            }
        }
        ids.extend((0..n).filter(|&i| alive[i]).map(|i| id[i]));
    }

    /// The bytes one token stands for (a BPE token may be part of a UTF-8 character). An id the
    /// tokenizer has no text for is its label, `<id>`.
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        match self.tokens.get(id as usize) {
            Some(Some(text)) => self.text_bytes(text),
            _ => unknown(id).into_bytes(),
        }
    }

    /// Hugging Face's `ByteLevel` decoder on one token: each character back to its byte, or, when
    /// a character is not a byte's (an added token such as `<|im start|>` with a space), the
    /// token's own UTF-8.
    fn text_bytes(&self, text: &str) -> Vec<u8> {
        text.chars()
            .map(|c| self.char_byte.get(&c).copied())
            .collect::<Option<Vec<u8>>>()
            .unwrap_or_else(|| text.as_bytes().to_vec())
    }

    /// A token as text to show on a chip: invalid UTF-8 (half a character) becomes `\xNN`
    /// escapes rather than being dropped; an id the tokenizer has no text for, `<id>`.
    pub fn token_text(&self, id: u32) -> String {
        crate::formats::echo::token_chip_text(&self.token_bytes(id))
    }

    /// Decodes ids to text, added tokens included (invalid UTF-8 across the whole sequence
    /// becomes U+FFFD, as in Hugging Face's decoder).
    pub fn decode(&self, ids: &[u32]) -> String {
        String::from_utf8_lossy(&ids.iter().flat_map(|&id| self.token_bytes(id)).collect::<Vec<_>>()).into_owned()
    }
}

/// One piece of a post-processor's template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// The first text's ids (`{"Sequence": {"id": "A", "type_id": n}}`).
    A,
    /// The second text's ids (`{"Sequence": {"id": "B", "type_id": n}}`), in a pair template only.
    B,
    /// A special token's ids (`{"SpecialToken": {"id": name, "type_id": n}}`, the name looked up
    /// in the template's `special_tokens`): usually one id, possibly several.
    Special(Vec<u32>),
}

/// Hugging Face's `TemplateProcessing`: the ids of one text (`single`) or of two (`pair`) are its
/// pieces' ids, in order. The pieces' `type_id`s (token type ids, which a Llama-family model does
/// not read) play no part in the ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    single: Vec<Piece>,
    pair: Vec<Piece>,
}

impl Default for Template {
    /// The template that adds nothing, single `$A` and pair `$A $B`: a tokenizer without a
    /// post-processor, or with `ByteLevel` alone.
    fn default() -> Self {
        Template { single: vec![Piece::A], pair: vec![Piece::A, Piece::B] }
    }
}

impl Template {
    /// A template from its pieces: the single one must hold the text (A) and no second text (B),
    /// the pair one both (as `tokenizers` requires of it).
    pub fn new(single: Vec<Piece>, pair: Vec<Piece>) -> Result<Template, TokenizerError> {
        let has = |pieces: &[Piece], which: &Piece| pieces.contains(which);
        if has(&single, &Piece::B) {
            return Err(malformed("the post-processor's single template uses Sequence B, which only a pair has"));
        }
        if !has(&single, &Piece::A) {
            return Err(malformed("the post-processor's single template has no Sequence A (the text's place)"));
        }
        if !has(&pair, &Piece::A) || !has(&pair, &Piece::B) {
            return Err(malformed("the post-processor's pair template must use both sequences, A and B"));
        }
        Ok(Template { single, pair })
    }

    pub fn single(&self) -> &[Piece] {
        &self.single
    }

    pub fn pair(&self) -> &[Piece] {
        &self.pair
    }

    /// One text's ids `a` in the single template.
    pub fn apply_single(&self, a: &[u32]) -> Vec<u32> {
        fill(&self.single, a, &[])
    }

    /// Two texts' ids `a` and `b` in the pair template.
    pub fn apply_pair(&self, a: &[u32], b: &[u32]) -> Vec<u32> {
        fill(&self.pair, a, b)
    }
}

/// The pieces' ids in order: A's place gets `a`, B's `b`, a special token its ids.
fn fill(pieces: &[Piece], a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut ids = Vec::with_capacity(a.len() + b.len() + pieces.len());
    for piece in pieces {
        match piece {
            Piece::A => ids.extend_from_slice(a),
            Piece::B => ids.extend_from_slice(b),
            Piece::Special(special) => ids.extend_from_slice(special),
        }
    }
    ids
}

impl PreStep {
    /// One piece of text → the pieces this step cuts it into (never empty ones).
    fn split(&self, text: &str) -> Vec<String> {
        match self {
            PreStep::Digits { individual } => {
                let mut pieces: Vec<String> = Vec::new();
                let mut last_digit = false;
                for c in text.chars() {
                    // Hugging Face tests `char::is_numeric` (so '½' and '٣' count).
                    let digit = c.is_numeric();
                    let join = !pieces.is_empty() && digit == last_digit && !(digit && *individual);
                    match pieces.last_mut() {
                        Some(last) if join => last.push(c),
                        _ => pieces.push(c.to_string()),
                    }
                    last_digit = digit;
                }
                pieces
            }
            PreStep::Split { regex, keep_matches } => regex_split(regex, text, *keep_matches),
            PreStep::ByteLevel { prefix, regex } => {
                let text = if *prefix && !text.starts_with(' ') { format!(" {text}") } else { text.to_string() };
                match regex {
                    Some(regex) => regex_split(regex, &text, true),
                    None => vec![text],
                }
            }
        }
    }
}

/// The gaps between the regex's matches, and the matches too when `keep_matches`, in order. If
/// the regex engine gives up (its backtracking limit), the rest of the text is one piece.
fn regex_split(regex: &Regex, text: &str, keep_matches: bool) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut end = 0;
    for m in regex.find_iter(text) {
        let Ok(m) = m else { break };
        if m.start() > end {
            pieces.push(text[end..m.start()].to_string());
        }
        if keep_matches && !m.as_str().is_empty() {
            pieces.push(m.as_str().to_string());
        }
        end = m.end();
    }
    if end < text.len() {
        pieces.push(text[end..].to_string());
    }
    pieces
}

/// GPT-2's byte ↔ character table: printable Latin-1 bytes are themselves, the other 68 bytes
/// (controls, space, …) take the characters from U+0100 on, in byte order (space → `Ġ` U+0120).
fn byte_chars() -> [char; 256] {
    let printable = |b: u32| (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let mut table = ['\0'; 256];
    let mut next = 0x100;
    for (b, slot) in table.iter_mut().enumerate() {
        let b = b as u32;
        *slot = if printable(b) {
            char::from_u32(b).unwrap_or('\0')
        } else {
            next += 1;
            char::from_u32(next - 1).unwrap_or('\0')
        };
    }
    table
}

fn malformed(why: impl Into<String>) -> TokenizerError {
    TokenizerError::Malformed(why.into())
}

fn unsupported(component: &'static str, found: impl Into<String>, supported: &'static str) -> TokenizerError {
    TokenizerError::Unsupported { component, found: found.into(), supported }
}

/// The `"type"` of a component object.
fn kind<'a>(value: &'a Value, what: &str) -> Result<&'a str, TokenizerError> {
    value.get("type").and_then(Value::as_str).ok_or_else(|| malformed(format!("{what} has no \"type\"")))
}

fn as_id(value: &Value, what: &str) -> Result<u32, TokenizerError> {
    value
        .as_u64()
        .and_then(|id| u32::try_from(id).ok())
        .filter(|&id| id < 1 << 24) // no real vocabulary is near; keeps the id table's size sane
        .ok_or_else(|| malformed(format!("{what} has an id that is not a token id: {value}")))
}

fn check_normalizer(value: Option<&Value>) -> Result<(), TokenizerError> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(()) };
    let kind = kind(value, "the normalizer")?;
    let empty = value.get("normalizers").and_then(Value::as_array).is_some_and(|a| a.is_empty());
    if kind == "Sequence" && empty {
        return Ok(());
    }
    Err(unsupported("normalizer", kind, "this reads tokenizers without one (byte-level BPE needs none)"))
}

const POST_PROCESSORS: &str =
    "the supported ones are ByteLevel (which adds no ids) and TemplateProcessing, alone or in a Sequence";

/// The post-processor, as the template it applies: none and `ByteLevel` (which only moves
/// offsets) add nothing; `TemplateProcessing`, alone or in a `Sequence` beside `ByteLevel`s
/// (Llama 3's files have [ByteLevel, TemplateProcessing]), is read by [`read_template`].
fn post_processor(value: Option<&Value>, tokens: &[Option<String>]) -> Result<Template, TokenizerError> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(Template::default()) };
    let items: Vec<&Value> = match kind(value, "the post-processor")? {
        "Sequence" => value
            .get("processors")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed("the post-processor Sequence has no \"processors\" list"))?
            .iter()
            .collect(),
        _ => vec![value],
    };
    let mut template = None;
    for item in items {
        match kind(item, "a post-processor")? {
            "ByteLevel" => {}
            "TemplateProcessing" if template.is_none() => template = Some(read_template(item, tokens)?),
            "TemplateProcessing" => {
                return Err(unsupported("post-processor", "Sequence with two TemplateProcessing", POST_PROCESSORS))
            }
            other => return Err(unsupported("post-processor", other, POST_PROCESSORS)),
        }
    }
    Ok(template.unwrap_or_default())
}

/// A `TemplateProcessing`, as `tokenizers` writes it: `single` and `pair`, lists of pieces
/// `{"Sequence": {"id": "A" | "B", "type_id": n}}` and `{"SpecialToken": {"id": name, "type_id": n}}`,
/// and `special_tokens`, a map from each name to `{"id": name, "ids": [id, …], "tokens": [text, …]}`.
/// All three are required (as `tokenizers` requires them); a name the template uses must be a
/// key of `special_tokens`, and its ids tokens of this tokenizer.
fn read_template(value: &Value, tokens: &[Option<String>]) -> Result<Template, TokenizerError> {
    let specials = value
        .get("special_tokens")
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("the post-processor TemplateProcessing has no \"special_tokens\" map"))?;
    let pieces = |which: &str| -> Result<Vec<Piece>, TokenizerError> {
        let list = value.get(which).and_then(Value::as_array).ok_or_else(|| {
            malformed(format!("the post-processor TemplateProcessing has no \"{which}\" template (a list of pieces)"))
        })?;
        list.iter().map(|piece| read_piece(piece, which, specials, tokens)).collect()
    };
    Template::new(pieces("single")?, pieces("pair")?)
}

/// One piece of the `which` template (an object with one key, `Sequence` or `SpecialToken`).
fn read_piece(
    piece: &Value,
    which: &str,
    specials: &Map<String, Value>,
    tokens: &[Option<String>],
) -> Result<Piece, TokenizerError> {
    let what = format!("a piece of the post-processor's {which} template");
    let mut entries = piece.as_object().into_iter().flatten();
    let (key, body) = match (entries.next(), entries.next()) {
        (Some((key, body)), None) => (key.as_str(), body),
        _ => return Err(malformed(format!("{what} is not {{\"Sequence\": …}} or {{\"SpecialToken\": …}}: {piece}"))),
    };
    let id = body.get("id").and_then(Value::as_str);
    let id = id.ok_or_else(|| malformed(format!("{what} has no \"id\" string: {piece}")))?;
    if body.get("type_id").and_then(Value::as_u64).and_then(|t| u32::try_from(t).ok()).is_none() {
        return Err(malformed(format!("{what} has no \"type_id\" number: {piece}")));
    }
    match key {
        "Sequence" => match id {
            "A" => Ok(Piece::A),
            "B" => Ok(Piece::B),
            other => Err(malformed(format!(
                "the post-processor's {which} template has Sequence {other:?}; the sequences are A and B"
            ))),
        },
        "SpecialToken" => special_ids(id, specials, tokens).map(Piece::Special),
        other => Err(malformed(format!("{what} is {other:?}, neither Sequence nor SpecialToken"))),
    }
}

/// The ids of the template's special token `name`, each a token of this tokenizer.
fn special_ids(
    name: &str,
    specials: &Map<String, Value>,
    tokens: &[Option<String>],
) -> Result<Vec<u32>, TokenizerError> {
    let what = format!("the post-processor's special token {name:?}");
    let entry = specials.get(name).ok_or_else(|| {
        malformed(format!("the post-processor's template uses {name:?}, which its special_tokens lack"))
    })?;
    let ids = entry.get("ids").and_then(Value::as_array);
    let ids = ids.ok_or_else(|| malformed(format!("{what} has no \"ids\" list")))?;
    if let Some(texts) = entry.get("tokens") {
        if texts.as_array().map(Vec::len) != Some(ids.len()) {
            return Err(malformed(format!("{what} has {} ids but not as many tokens", ids.len())));
        }
    }
    ids.iter()
        .map(|id| {
            let id = as_id(id, &what)?;
            match tokens.get(id as usize) {
                Some(Some(_)) => Ok(id),
                _ => {
                    Err(malformed(format!("{what} has id {id}, which is not in the vocabulary ({} ids)", tokens.len())))
                }
            }
        })
        .collect()
}

fn check_decoder(value: Option<&Value>) -> Result<(), TokenizerError> {
    let value = value.filter(|v| !v.is_null()).ok_or_else(|| unsupported("decoder", "none", BYTE_LEVEL_ONLY))?;
    match byte_level_kind(value, "decoders", "the decoder")? {
        "ByteLevel" => Ok(()),
        other => Err(unsupported("decoder", other, "only ByteLevel is supported")),
    }
}

/// A component's type, where a `Sequence` of ByteLevel alone (as some files write it) counts as
/// ByteLevel; in another Sequence, the first type that is not ByteLevel.
fn byte_level_kind<'a>(value: &'a Value, list: &str, what: &str) -> Result<&'a str, TokenizerError> {
    let outer = kind(value, what)?;
    if outer != "Sequence" {
        return Ok(outer);
    }
    let items = value.get(list).and_then(Value::as_array).ok_or_else(|| malformed(format!("{what} has no {list}")))?;
    for item in items {
        let inner = kind(item, what)?;
        if inner != "ByteLevel" {
            return Ok(inner);
        }
    }
    Ok(if items.is_empty() { "Sequence" } else { "ByteLevel" })
}

fn check_model(model: &Map<String, Value>) -> Result<(), TokenizerError> {
    let kind = model.get("type").and_then(Value::as_str).unwrap_or("BPE"); // older files omit it
    if kind != "BPE" {
        return Err(unsupported("model", kind, "only BPE (byte-level) is supported"));
    }
    let set = |key: &str| model.get(key).is_some_and(|v| !v.is_null() && v != "" && v != false);
    if set("byte_fallback") {
        return Err(unsupported("model option", "byte_fallback", BYTE_LEVEL_ONLY));
    }
    for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
        if set(key) {
            return Err(unsupported("model option", key, BYTE_LEVEL_ONLY));
        }
    }
    if model.get("dropout").and_then(Value::as_f64).is_some_and(|p| p > 0.0) {
        return Err(unsupported("model option", "dropout", "BPE dropout is for training, not for reading text"));
    }
    Ok(())
}

/// The pre-tokenizer: `ByteLevel`, or a `Sequence` of `Digits` and `Split` steps ending with it.
fn pre_steps(value: &Value) -> Result<Vec<PreStep>, TokenizerError> {
    const SUPPORTED: &str = "the supported ones are ByteLevel, Digits and Split (regex, Isolated or Removed), \
                             alone or in a Sequence that ends with ByteLevel";
    if value.is_null() {
        return Err(unsupported("pre-tokenizer", "none", SUPPORTED));
    }
    let items: Vec<&Value> = match kind(value, "the pre-tokenizer")? {
        "Sequence" => value
            .get("pretokenizers")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed("the pre-tokenizer Sequence has no \"pretokenizers\" list"))?
            .iter()
            .collect(),
        _ => vec![value],
    };
    let mut steps = Vec::new();
    for item in items {
        let step = match kind(item, "a pre-tokenizer")? {
            "Digits" => PreStep::Digits { individual: flag(item, "individual_digits", false) },
            "ByteLevel" => PreStep::ByteLevel {
                prefix: flag(item, "add_prefix_space", true),
                regex: if flag(item, "use_regex", true) { Some(compile(GPT2_PATTERN)?) } else { None },
            },
            "Split" => split_step(item)?,
            other => return Err(unsupported("pre-tokenizer", other, SUPPORTED)),
        };
        steps.push(step);
    }
    let byte_levels = steps.iter().filter(|s| matches!(s, PreStep::ByteLevel { .. })).count();
    if byte_levels != 1 || !matches!(steps.last(), Some(PreStep::ByteLevel { .. })) {
        return Err(unsupported("pre-tokenizer", "without ByteLevel as its last step", SUPPORTED));
    }
    Ok(steps)
}

fn flag(value: &Value, key: &str, default: bool) -> bool {
    value.get(key).and_then(Value::as_bool).unwrap_or(default)
}

fn split_step(item: &Value) -> Result<PreStep, TokenizerError> {
    const SUPPORTED: &str = "Split is supported with a regex or a string, behavior Isolated or Removed, not inverted";
    let pattern = item.get("pattern").ok_or_else(|| malformed("a Split pre-tokenizer has no pattern"))?;
    let regex = match (pattern.get("Regex").and_then(Value::as_str), pattern.get("String").and_then(Value::as_str)) {
        (Some(regex), _) => compile(regex)?,
        (None, Some(literal)) => compile(&fancy_regex::escape(literal))?,
        _ => return Err(malformed("a Split pre-tokenizer's pattern is neither Regex nor String")),
    };
    let behavior = item.get("behavior").and_then(Value::as_str).unwrap_or("");
    let keep_matches = match behavior {
        "Isolated" => true,
        "Removed" => false,
        other => return Err(unsupported("pre-tokenizer", format!("Split with behavior {other:?}"), SUPPORTED)),
    };
    if flag(item, "invert", false) {
        return Err(unsupported("pre-tokenizer", "Split with invert", SUPPORTED));
    }
    Ok(PreStep::Split { regex, keep_matches })
}

fn compile(pattern: &str) -> Result<Regex, TokenizerError> {
    Regex::new(pattern).map_err(|e| {
        unsupported(
            "pre-tokenizer regex",
            format!("{pattern:?} ({e})"),
            "the regex engine (fancy-regex) cannot read it",
        )
    })
}

/// `merges`, as "a b" strings or [a, b] pairs; a pair's rank is its place in the list.
fn read_merges(value: Option<&Value>, vocab: &HashMap<String, u32>) -> Result<Merges, TokenizerError> {
    let list = value.and_then(Value::as_array).ok_or_else(|| malformed("no model.merges list"))?;
    let mut merges = HashMap::with_capacity(list.len());
    for (rank, merge) in list.iter().enumerate() {
        let (a, b) = match merge {
            Value::String(s) => {
                let mut parts = s.split(' ');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(a), Some(b), None) => (a, b),
                    _ => return Err(malformed(format!("merge {rank} ({s:?}) is not two tokens"))),
                }
            }
            Value::Array(pair) => match pair.as_slice() {
                [Value::String(a), Value::String(b)] => (a.as_str(), b.as_str()),
                _ => return Err(malformed(format!("merge {rank} is not a pair of tokens"))),
            },
            _ => return Err(malformed(format!("merge {rank} is neither \"a b\" nor [a, b]"))),
        };
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| malformed(format!("merge {rank} uses {t:?}, which is not in the vocabulary")))
        };
        // Hugging Face keeps the last of repeated merges, as a map does.
        merges.insert((id(a)?, id(b)?), (rank as u32, id(&format!("{a}{b}"))?));
    }
    Ok(merges)
}

/// `added_tokens`: (content, id). Options that change how they match are refused.
fn read_added(value: Option<&Value>) -> Result<Vec<(String, u32)>, TokenizerError> {
    let Some(list) = value.filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
    let list = list.as_array().ok_or_else(|| malformed("added_tokens is not a list"))?;
    let mut added = Vec::with_capacity(list.len());
    for token in list {
        let content = token
            .get("content")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .ok_or_else(|| malformed("an added token has no content"))?;
        let id = as_id(token.get("id").unwrap_or(&Value::Null), "added_tokens")?;
        for option in ["lstrip", "rstrip", "single_word"] {
            if flag(token, option, false) {
                return Err(unsupported(
                    "added token option",
                    format!("{option} (on {content:?})"),
                    "added tokens match their exact text",
                ));
            }
        }
        added.push((content.to_string(), id));
    }
    Ok(added)
}

/// The label of an id the tokenizer has no text for (a model may have padding rows).
fn unknown(id: u32) -> String {
    format!("<{id}>")
}
