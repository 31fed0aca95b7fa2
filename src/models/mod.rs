//! Models built from candle-repro ops, loading GGUF files.

pub(crate) mod attention;
pub mod gemma3;
pub mod gguf;
pub mod llama;
pub mod tokenizer;
