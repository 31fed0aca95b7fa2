//! The tokenizer of a GGUF file, built from its own metadata: GPT-2 byte-level BPE
//! (`tokenizer.ggml.model = "gpt2"`) with the file's tokens and merges, the pre-tokenizer
//! named by `tokenizer.ggml.pre` (digits split one by one, then the GPT-2 regex split, as
//! llama.cpp and the original tokenizer.json do for "smollm"; the same without the digit
//! split for "gpt2" and "default"), its control tokens as special tokens, and the
//! chat template of the file rendered for one user message.

use super::gguf::{md_strings, md_u32};
use candle_core::quantized::gguf_file;
use candle_core::{Result, bail};
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, Tokenizer};

/// The chat template of SmolLM2's GGUF (ChatML with a default system message), which
/// [`chat_prompt`] renders.
pub const SMOLLM2_CHAT_TEMPLATE: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

fn err(e: impl std::fmt::Display) -> candle_core::Error {
    candle_core::Error::Msg(format!("candle-repro tokenizer: {e}"))
}

/// The tokenizer described by the GGUF metadata.
pub fn tokenizer_from_gguf(c: &gguf_file::Content) -> Result<Tokenizer> {
    let model = c
        .metadata
        .get("tokenizer.ggml.model")
        .and_then(|v| v.to_string().ok());
    if model.map(|s| s.as_str()) != Some("gpt2") {
        bail!(
            "candle-repro tokenizer: only GPT-2 byte-level BPE is supported, the file has {model:?}"
        )
    }
    let tokens = md_strings(c, "tokenizer.ggml.tokens")?;
    let merges: Vec<(String, String)> = md_strings(c, "tokenizer.ggml.merges")?
        .into_iter()
        .map(|m| match m.split_once(' ') {
            Some((a, b)) => Ok((a.to_string(), b.to_string())),
            None => Err(err(format!("merge without a space: {m:?}"))),
        })
        .collect::<Result<_>>()?;
    let vocab: ahash::AHashMap<String, u32> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(err)?;
    let mut tok = Tokenizer::new(bpe);
    let pre = c
        .metadata
        .get("tokenizer.ggml.pre")
        .and_then(|v| v.to_string().ok())
        .cloned();
    let byte_level = ByteLevel::new(false, true, true);
    match pre.as_deref() {
        Some("smollm") => {
            tok.with_pre_tokenizer(Some(Sequence::new(vec![
                Digits::new(true).into(),
                byte_level.into(),
            ])));
        }
        Some("gpt2") | Some("default") | None => {
            tok.with_pre_tokenizer(Some(byte_level));
        }
        Some(other) => bail!("candle-repro tokenizer: pre-tokenizer {other:?} is not supported"),
    }
    tok.with_decoder(Some(ByteLevel::default()));
    // Control tokens (type 3) are matched whole in the text, before BPE.
    if let Some(gguf_file::Value::Array(types)) = c.metadata.get("tokenizer.ggml.token_type") {
        let special: Vec<AddedToken> = types
            .iter()
            .zip(&tokens)
            .filter(|(t, _)| t.to_i32().ok() == Some(3))
            .map(|(_, s)| AddedToken::from(s.clone(), true))
            .collect();
        tok.add_special_tokens(special).map_err(err)?;
    }
    Ok(tok)
}

/// The end-of-sequence token id of the file.
pub fn eos_token_id(c: &gguf_file::Content) -> Result<u32> {
    md_u32(c, "tokenizer.ggml.eos_token_id")
}

/// The file's chat template applied to one user message, with the generation prompt:
/// implemented for the template SmolLM2 ships ([`SMOLLM2_CHAT_TEMPLATE`]); another
/// template is an error rather than a guess.
pub fn chat_prompt(c: &gguf_file::Content, user: &str) -> Result<String> {
    let t = c
        .metadata
        .get("tokenizer.chat_template")
        .and_then(|v| v.to_string().ok());
    if t.map(|s| s.as_str()) != Some(SMOLLM2_CHAT_TEMPLATE) {
        bail!("candle-repro: this file's chat template is not SmolLM2's; render it yourself")
    }
    Ok(format!(
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    ))
}
