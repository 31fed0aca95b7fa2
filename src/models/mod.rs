//! Models built from candle-repro ops, loading GGUF files.

pub mod gemma3;
pub mod gguf;
pub mod llama;
pub mod tokenizer;
