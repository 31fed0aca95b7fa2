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

/// The tokenizer described by the GGUF metadata: GPT-2 byte-level BPE (`gpt2`) or
/// SentencePiece BPE with byte fallback (`llama`: Llama 2, Gemma).
pub fn tokenizer_from_gguf(c: &gguf_file::Content) -> Result<Tokenizer> {
    let model = c
        .metadata
        .get("tokenizer.ggml.model")
        .and_then(|v| v.to_string().ok());
    match model.map(|s| s.as_str()) {
        Some("gpt2") => gpt2_tokenizer(c),
        Some("llama") => sentencepiece_tokenizer(c),
        other => bail!(
            "candle-repro tokenizer: GPT-2 byte-level BPE (gpt2) and SentencePiece BPE (llama) are supported, the file has {other:?}"
        ),
    }
}

/// The token types of the file (llama.cpp's: 1 normal, 2 unknown, 3 control, 4 user
/// defined, 5 unused, 6 byte), or all normal when absent.
fn token_types(c: &gguf_file::Content, n: usize) -> Result<Vec<i32>> {
    match c.metadata.get("tokenizer.ggml.token_type") {
        Some(gguf_file::Value::Array(v)) => v.iter().map(|t| t.to_i32()).collect(),
        _ => Ok(vec![1; n]),
    }
}

/// SentencePiece BPE as llama.cpp runs a `llama` vocabulary: spaces become U+2581 (with
/// one prepended when `tokenizer.ggml.add_space_prefix` is true, the default), then the
/// adjacent pair whose concatenation is the vocabulary piece of highest score is merged,
/// repeatedly; what no piece covers falls back to its UTF-8 bytes (`<0xXX>` tokens).
/// Expressed for the `tokenizers` crate as BPE merges ranked by the merged piece's score
/// (ties: lower id first), which makes the same choices; control tokens (type 3) are
/// special and user-defined ones (type 4: Gemma's runs of newlines and spaces) matched
/// whole, both before BPE.
fn sentencepiece_tokenizer(c: &gguf_file::Content) -> Result<Tokenizer> {
    use tokenizers::decoders::byte_fallback::ByteFallback;
    use tokenizers::decoders::fuse::Fuse;
    use tokenizers::decoders::sequence::Sequence as DecoderSequence;
    use tokenizers::decoders::strip::Strip;
    use tokenizers::normalizers::{Prepend, Replace};
    let tokens = md_strings(c, "tokenizer.ggml.tokens")?;
    let scores: Vec<f32> = match c.metadata.get("tokenizer.ggml.scores") {
        Some(gguf_file::Value::Array(v)) => v.iter().map(|s| s.to_f32()).collect::<Result<_>>()?,
        _ => bail!("candle-repro tokenizer: a SentencePiece vocabulary without scores"),
    };
    let types = token_types(c, tokens.len())?;
    if scores.len() != tokens.len() || types.len() != tokens.len() {
        bail!("candle-repro tokenizer: tokens, scores and types differ in length")
    }
    let vocab: ahash::AHashMap<String, u32> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    // Every split of a normal piece into two pieces is a merge, ranked by the piece's score.
    let mut ranked: Vec<(f32, u32, String, String)> = Vec::new();
    for (id, piece) in tokens.iter().enumerate() {
        if types[id] != 1 {
            continue;
        }
        for (at, _) in piece.char_indices().skip(1) {
            let (l, r) = piece.split_at(at);
            if vocab.contains_key(l) && vocab.contains_key(r) {
                ranked.push((scores[id], id as u32, l.to_string(), r.to_string()));
            }
        }
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let merges: Vec<(String, String)> = ranked.into_iter().map(|(_, _, l, r)| (l, r)).collect();
    let unk = c
        .metadata
        .get("tokenizer.ggml.unknown_token_id")
        .and_then(|v| v.to_u32().ok())
        .and_then(|i| tokens.get(i as usize).cloned());
    let mut builder = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .byte_fallback(true)
        .fuse_unk(true);
    if let Some(u) = unk {
        builder = builder.unk_token(u);
    }
    let mut tok = Tokenizer::new(builder.build().map_err(err)?);
    let space_prefix = c
        .metadata
        .get("tokenizer.ggml.add_space_prefix")
        .and_then(|v| v.to_bool().ok())
        .unwrap_or(true);
    let replace = Replace::new(" ", "\u{2581}").map_err(err)?;
    let mut decoders = vec![
        tokenizers::decoders::DecoderWrapper::Replace(
            tokenizers::normalizers::Replace::new("\u{2581}", " ").map_err(err)?,
        ),
        ByteFallback::default().into(),
        Fuse::default().into(),
    ];
    if space_prefix {
        tok.with_normalizer(Some(tokenizers::normalizers::Sequence::new(vec![
            Prepend::new("\u{2581}".into()).into(),
            replace.into(),
        ])))
        .map_err(err)?;
        decoders.push(Strip::new(' ', 1, 0).into());
    } else {
        tok.with_normalizer(Some(replace)).map_err(err)?;
    }
    tok.with_decoder(Some(DecoderSequence::new(decoders)));
    let added = |ty: i32, special: bool| -> Vec<AddedToken> {
        types
            .iter()
            .zip(&tokens)
            .filter(|(t, _)| **t == ty)
            .map(|(_, s)| AddedToken::from(s.clone(), special).normalized(false))
            .collect()
    };
    tok.add_special_tokens(added(3, true)).map_err(err)?;
    tok.add_tokens(added(4, false)).map_err(err)?;
    Ok(tok)
}

/// GPT-2 byte-level BPE.
fn gpt2_tokenizer(c: &gguf_file::Content) -> Result<Tokenizer> {
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
