//! The training lab's model in the GPT-2 chapter. The lab's page stores the checkpoint (its
//! `config.json` and `model.safetensors`) in this browser's Cache Storage under
//! `session::manifest::TRAINED_BASE`, where the worker reads stored models from, and opens the GPT-2 chapter
//! with the model choice "trained" ([`link`]): the demo then loads it like any stored model.
//! A link naming the trained model in another browser finds nothing stored, and the demo says so.

use super::{Gpt2Demo, Model, Params};
use crate::demos::Demo;
use crate::state::Params as _;

/// The chapter that embeds the `gpt2` demo (tests/engines/gpt2_chars.rs checks it does).
pub const CHAPTER: &str = "gpt2-live";

/// A prompt in the model's vocabulary that fills its window, for when the lab gives none: for
/// a vocabulary with `^` and letters, the copy task's probe (`^`, distinct letters, then the
/// same letters again, as far as the window allows), where an induction head shows; else the
/// vocabulary's first characters.
pub fn probe_prompt(char_vocab: &str, n_positions: usize) -> String {
    let letters: Vec<char> = char_vocab.chars().filter(char::is_ascii_lowercase).collect();
    if !char_vocab.contains('^') || letters.len() < 2 || n_positions < 3 {
        return char_vocab.chars().take(n_positions.max(1)).collect();
    }
    // Letters in a scrambled order (a stride coprime with their number), so the repeat is not
    // the alphabet, which a model could continue without looking back.
    let stride = (2..letters.len()).rev().find(|s| gcd(*s, letters.len()) == 1 && *s * 3 < letters.len()).unwrap_or(1);
    let n = (n_positions / 2).min(letters.len());
    let first: String = (0..n).map(|i| letters[(i * stride) % letters.len()]).collect();
    let again: String = first.chars().take(n_positions - 1 - n).collect();
    format!("^{first}{again}")
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// For a model that reads only the characters of `char_vocab`: the prompt and second prompt to
/// use instead when either has a character outside them (a fitting prompt is kept, another
/// becomes [`probe_prompt`]; a second prompt that does not fit is cleared). `None` when both fit.
pub fn prompts_for_vocab(
    char_vocab: &str,
    n_positions: usize,
    prompt: &str,
    compare: &str,
) -> Option<(String, String)> {
    let fits = |t: &str| t.chars().all(|c| char_vocab.contains(c));
    if fits(prompt) && fits(compare) {
        return None;
    }
    let prompt =
        if fits(prompt) && !prompt.is_empty() { prompt.to_string() } else { probe_prompt(char_vocab, n_positions) };
    Some((prompt, if fits(compare) { compare.to_string() } else { String::new() }))
}

/// The GPT-2 chapter's address (path, query and `#gpt2`) with the trained model chosen, the
/// prompt `prompt` (no second prompt), and the first head of the first layer looking from the
/// last token.
pub fn link(prompt: &str) -> String {
    let mut p = Params::defaults();
    p.model = Model::Trained;
    p.prompt = prompt.to_string();
    p.compare = String::new();
    p.layer = 0;
    p.head = 0;
    p.token = prompt.chars().count().saturating_sub(1) as i64;
    format!("/{CHAPTER}/?{}#{}", crate::demos::link_query::<Gpt2Demo>(&p), Gpt2Demo::ID)
}

/// The prompt a hand-over opens on: the lab's, or a probe of the model's vocabulary.
pub fn prompt_for(config_json: &str, prompt: Option<String>) -> Result<String, String> {
    let cfg = crate::gpt2::Config::from_json(config_json).map_err(|e| e.to_string())?;
    let vocab = cfg.char_vocab.ok_or("this checkpoint has no char_vocab: it is not the training lab's model")?;
    Ok(prompt.filter(|p| !p.is_empty()).unwrap_or_else(|| probe_prompt(&vocab, cfg.n_positions)))
}

/// Stores the checkpoint where the GPT-2 demo reads the trained model, replacing the one
/// stored before.
#[cfg(target_arch = "wasm32")]
pub async fn store(config_json: &str, safetensors: &[u8]) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let why = "this browser does not allow this page to store files (Cache Storage is unavailable, as in some \
               private windows)";
    let storage = leptos::prelude::window().caches().map_err(|_| why.to_string())?;
    let cache: web_sys::Cache =
        JsFuture::from(storage.open(crate::session::manifest::MODEL_CACHE)).await.map_err(|_| why)?.unchecked_into();
    for (name, bytes) in [("config.json", config_json.as_bytes()), ("model.safetensors", safetensors)] {
        let body = js_sys::Uint8Array::from(bytes);
        let resp = web_sys::Response::new_with_opt_buffer_source(Some(&body)).map_err(|_| why)?;
        JsFuture::from(cache.put_with_str(&format!("{}{name}", crate::session::manifest::TRAINED_BASE), &resp))
            .await
            .map_err(|_| format!("the trained model could not be stored ({name}: the storage quota may be full)"))?;
    }
    Ok(())
}

/// Hands the training lab's checkpoint to the GPT-2 chapter: stores it ([`store`]) and goes to
/// that chapter with it loaded, on a probe of the model's vocabulary ([`probe_prompt`]). Call
/// from the lab's page (a click handler's task); an error says why nothing was opened.
#[cfg(target_arch = "wasm32")]
pub async fn open(config_json: String, safetensors: Vec<u8>) -> Result<(), String> {
    open_on(config_json, safetensors, None).await
}

/// [`open`], on the lab's own `prompt` (its probe sequence, say) when given one.
#[cfg(target_arch = "wasm32")]
pub async fn open_on(config_json: String, safetensors: Vec<u8>, prompt: Option<String>) -> Result<(), String> {
    let prompt = prompt_for(&config_json, prompt)?;
    store_and_go(&config_json, &safetensors, &link(&prompt)).await
}

/// Stores the checkpoint ([`store`]) and follows `href`, a page that loads the trained model.
#[cfg(target_arch = "wasm32")]
pub async fn store_and_go(config_json: &str, safetensors: &[u8], href: &str) -> Result<(), String> {
    store(config_json, safetensors).await?;
    go(href);
    Ok(())
}

/// Follows a link of this site as a click on it would: the router takes it (no reload), and
/// without one the browser loads the page.
#[cfg(target_arch = "wasm32")]
fn go(href: &str) {
    use wasm_bindgen::JsCast;
    let doc = leptos::prelude::document();
    let Ok(a) = doc.create_element("a") else { return };
    let a: web_sys::HtmlAnchorElement = a.unchecked_into();
    a.set_href(href);
    a.set_hidden(true);
    let Some(body) = doc.body() else {
        let _ = leptos::prelude::window().location().set_href(href);
        return;
    };
    let _ = body.append_child(&a);
    a.click();
    let _ = body.remove_child(&a);
}
