//! GPT-2's byte-level BPE (OpenAI's `r50k_base`, via `tiktoken-rs`): the same ids as Hugging
//! Face's `GPT2TokenizerFast`, `<|endoftext|>` included (id 50256).

use tiktoken_rs::CoreBPE;

pub const END_OF_TEXT: u32 = 50256;

pub struct Tokenizer {
    bpe: CoreBPE,
}

impl Tokenizer {
    /// Builds the tokenizer from the ranks compiled into the binary (about 0.1 s natively).
    pub fn gpt2() -> Self {
        Tokenizer { bpe: tiktoken_rs::r50k_base().expect("the embedded r50k_base ranks parse") }
    }

    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.bpe.encode_with_special_tokens(text)
    }

    /// The bytes one token stands for (a token may be part of a UTF-8 character).
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        self.bpe.decode_bytes(&[id]).unwrap_or_default()
    }

    /// A token as text to show on a chip: invalid UTF-8 (half a character) becomes
    /// `\xNN` escapes rather than being dropped.
    pub fn token_text(&self, id: u32) -> String {
        let bytes = self.token_bytes(id);
        match std::str::from_utf8(&bytes) {
            Ok(s) => s.to_string(),
            Err(_) => bytes
                .iter()
                .map(|&b| if b.is_ascii() { (b as char).to_string() } else { format!("\\x{b:02X}") })
                .collect(),
        }
    }

    /// Decodes ids to text (invalid UTF-8 across the whole sequence becomes U+FFFD).
    pub fn decode(&self, ids: &[u32]) -> String {
        String::from_utf8_lossy(&self.bpe.decode_bytes(ids).unwrap_or_default()).into_owned()
    }
}
