//! Pinned model files: where the real GPT-2 lives and what its files must be (size and
//! SHA-256), so a download that is truncated, replaced or corrupted is refused with the reason.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Where "GPT-2 small" is fetched from unless the reader gives another folder.
pub const HUB_GPT2: &str = "https://huggingface.co/openai-community/gpt2/resolve/main/";

/// Where "SmolLM2-135M" (a Llama-family model) is fetched from unless the reader gives another
/// folder: `config.json`, `model.safetensors` and `tokenizer.json`.
pub const HUB_SMOLLM2: &str = "https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/main/";

/// The browser's Cache Storage bucket that keeps models (the worker's downloads, and the
/// training lab's model handed to the GPT-2 chapter).
pub const MODEL_CACHE: &str = "attention-live-models";

/// The folder of this site under which the training lab stores its trained model in
/// [`MODEL_CACHE`] (`config.json`, `model.safetensors`). Nothing is served there: the files
/// exist only in the browser that trained the model.
pub const TRAINED_BASE: &str = "/models/trained/";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileCheck {
    pub size: u64,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub config: FileCheck,
    pub model: FileCheck,
    /// `tokenizer.json`, for a Llama-family model (GPT-2's tokenizer is built in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<FileCheck>,
}

/// openai-community/gpt2 at revision 607a30d783dfa663caf39e06633721c8d4cfcd7e (the hub's LFS
/// metadata for `model.safetensors`, and the `config.json` blob).
pub fn gpt2_small() -> Manifest {
    Manifest {
        config: FileCheck {
            size: 665,
            sha256: "0daed7749b4f02b8f76240d5444551d7b08712dab4d0adb8239c56ba823bb7b4".into(),
        },
        model: FileCheck {
            size: 548_105_171,
            sha256: "248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707".into(),
        },
        tokenizer: None,
    }
}

/// HuggingFaceTB/SmolLM2-135M's pins, once recorded: `None` until `scripts/llama/pin_smollm2.py`
/// (run where the hub is reachable) has written the revision, sizes and SHA-256 of its three files
/// into `SMOLLM2_PINS` below. Until then the download is checked as any URL's (size against
/// `Content-Length`, a web page refused, the checkpoint and tokenizer refused when malformed or
/// mismatched), not against pinned hashes, and the page says so.
pub fn smollm2_135m() -> Option<Manifest> {
    let [config, model, tokenizer] = SMOLLM2_PINS?;
    let check = |(size, sha256): (u64, &str)| FileCheck { size, sha256: sha256.into() };
    Some(Manifest { config: check(config), model: check(model), tokenizer: Some(check(tokenizer)) })
}

/// (size, SHA-256) of SmolLM2-135M's config.json, model.safetensors and tokenizer.json at the
/// revision `scripts/llama/pin_smollm2.py` printed. NOT PINNED YET: the hub was not reachable where
/// this was written; run the script and paste its output here.
pub const SMOLLM2_PINS: Option<[(u64, &str); 3]> = None;

/// A bundled model's files as the build recorded them (`formats::bundled`), for a folder of the
/// site such as `/models/stories/` (with `tokenizer.json` where the folder has one); `None`
/// elsewhere.
pub fn bundled(base: &str) -> Option<Manifest> {
    let file = |name: &str| {
        crate::formats::bundled::expected(&format!("{base}{name}"))
            .map(|(size, sha256)| FileCheck { size, sha256: sha256.to_string() })
    };
    Some(Manifest {
        config: file("config.json")?,
        model: file("model.safetensors")?,
        tokenizer: file("tokenizer.json"),
    })
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks a downloaded file against its pinned size and hash; the error names both.
pub fn verify(name: &str, bytes: &[u8], want: &FileCheck) -> Result<(), String> {
    let mut v = Verifier::default();
    v.update(bytes);
    v.check(name, want)
}

/// [`verify`] for a file that arrives in chunks: each goes through [`Verifier::update`] as it
/// arrives, and [`Verifier::check`] at the end.
#[derive(Default)]
pub struct Verifier {
    hash: Sha256,
    size: u64,
}

impl Verifier {
    pub fn update(&mut self, bytes: &[u8]) {
        self.hash.update(bytes);
        self.size += bytes.len() as u64;
    }

    /// The file's size and hash against the pinned ones; the error names both.
    pub fn check(self, name: &str, want: &FileCheck) -> Result<(), String> {
        if self.size != want.size {
            return Err(format!(
                "{name} is {} bytes, but the pinned file is {} bytes: \
                 the download is incomplete or it is a different file",
                self.size, want.size
            ));
        }
        let got: String = self.hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        if got != want.sha256 {
            return Err(format!(
                "{name} has SHA-256 {}…, but the pinned file's is {}…: it is a different or corrupted file",
                &got[..12],
                &want.sha256[..12]
            ));
        }
        Ok(())
    }
}
