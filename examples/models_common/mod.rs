//! Our models and stock candle's behind one interface, for the examples that run both
//! (`generate`, `gpu_report`): the architecture from the GGUF metadata, the weights loaded
//! on any device.

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use candle_repro::models::gguf::WeightMode;
use candle_repro::models::{gemma3, llama};
use std::path::Path;

/// The file's architecture.
pub fn architecture(c: &gguf_file::Content) -> String {
    c.metadata
        .get("general.architecture")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_default()
}

pub enum Model {
    Llama(llama::ModelWeights),
    Gemma(gemma3::ModelWeights),
    StockLlama(candle_transformers::models::quantized_llama::ModelWeights),
    StockGemma(candle_transformers::models::quantized_gemma3::ModelWeights),
}

impl Model {
    /// Ours (compute `dtype`, weights held as `mode` says) or stock candle's model of the
    /// file's architecture, on `dev`.
    pub fn load(stock: bool, path: &Path, dev: &Device, dtype: DType, mode: WeightMode) -> Model {
        let mut f = std::fs::File::open(path).unwrap();
        let c = gguf_file::Content::read(&mut f).unwrap();
        match (architecture(&c).as_str(), stock) {
            ("llama", false) => Model::Llama(
                llama::ModelWeights::from_gguf_with(c, &mut f, dev, dtype, mode).unwrap(),
            ),
            ("gemma3", false) => Model::Gemma(
                gemma3::ModelWeights::from_gguf_with(c, &mut f, dev, dtype, mode).unwrap(),
            ),
            ("llama", true) => Model::StockLlama(
                candle_transformers::models::quantized_llama::ModelWeights::from_gguf(
                    c, &mut f, dev,
                )
                .unwrap(),
            ),
            ("gemma3", true) => Model::StockGemma(
                candle_transformers::models::quantized_gemma3::ModelWeights::from_gguf(
                    c, &mut f, dev,
                )
                .unwrap(),
            ),
            (other, _) => panic!("architecture {other:?}: llama and gemma3 are supported"),
        }
    }

    /// The logits of the last position.
    pub fn forward(&mut self, x: &Tensor, pos: usize) -> Tensor {
        match self {
            Model::Llama(m) => m.forward(x, pos).unwrap(),
            Model::Gemma(m) => m.forward(x, pos).unwrap(),
            Model::StockLlama(m) => m.forward(x, pos).unwrap(),
            Model::StockGemma(m) => m.forward(x, pos).unwrap(),
        }
    }

    /// The logits of every position (ours only: stock's models give the last one).
    #[allow(dead_code)] // used by gpu_report, not by generate
    pub fn forward_all(&mut self, x: &Tensor, pos: usize) -> Tensor {
        match self {
            Model::Llama(m) => m.forward_all(x, pos).unwrap(),
            Model::Gemma(m) => m.forward_all(x, pos).unwrap(),
            _ => panic!("stock candle's models give the last position's logits only"),
        }
    }

    pub fn clear(&mut self) {
        match self {
            Model::Llama(m) => m.clear_kv_cache(),
            Model::Gemma(m) => m.clear_kv_cache(),
            Model::StockLlama(m) => m.clear_kv_cache(),
            // Stock Gemma resets its cache when a forward starts at position 0.
            Model::StockGemma(_) => {}
        }
    }
}
