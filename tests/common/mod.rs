//! Shared by the GPT-2 tests: reading a checkpoint folder of this repository.

/// `config.json` text and `model.safetensors` bytes of a folder, relative to the repository.
pub fn checkpoint(folder: &str) -> (String, Vec<u8>) {
    let d = format!("{}/{folder}", env!("CARGO_MANIFEST_DIR"));
    (std::fs::read_to_string(format!("{d}/config.json")).unwrap(), std::fs::read(format!("{d}/model.safetensors")).unwrap())
}
