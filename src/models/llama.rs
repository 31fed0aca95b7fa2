//! The Llama architecture (Llama 2/3, TinyLlama, SmolLM2) from a GGUF file, every op
//! through candle-repro, so that its logits have the same bits on every device, thread
//! count, vector width, batch and prefill/decode split. The API is that of
//! `candle_transformers::models::quantized_llama::ModelWeights` (`from_gguf`, `forward`,
//! a KV cache), plus the logits of every position and padded batches.
//!
//! # What each step computes (compute dtype f32 or bf16)
//! * weights: kept in their GGUF blocks (any type of [`crate::quantized`]), each with its
//!   exact value ([`super::gguf::WeightMode::Quantized`], the default on the CPU), or
//!   dequantized once to the compute dtype, each exact value rounded once
//!   ([`super::gguf::WeightMode::Dequantized`]);
//! * embedding: the token's row, its exact values rounded once to the compute dtype (a
//!   row copy when dequantized);
//! * RMSNorm: [`crate::norm::rms_norm`], correctly rounded;
//! * q, k, v, o, gate, up, down and the output head: [`crate::quantized::QMatMul`] (or
//!   [`crate::nn::Linear`] when dequantized), each output the exact dot product with the
//!   weights' values rounded once (no bias in Llama);
//! * RoPE: [`crate::rope::rope_i`] (GGUF stores q and k in the interleaved layout) with
//!   correctly rounded tables;
//! * attention: scores = the correctly rounded product q k^T (per KV head, its query
//!   heads stacked), times c = 1/sqrt(head_dim) (rounded to f32, then to the compute
//!   dtype) as one IEEE multiplication (exact for head_dim 64, c = 1/8); masked
//!   positions set to -inf (a selection, exact);
//!   [`crate::softmax_last_dim`] (masked entries give exactly 0); the product with v,
//!   correctly rounded (exact zeros add nothing to an exact sum);
//! * SwiGLU: [`crate::silu`] of gate, times up with candle's multiplication (one IEEE
//!   rounding on every device: products of f32 are rounded once, products of bf16 are
//!   exact in f32);
//! * residual adds: [`crate::add`], the exact sum rounded once.
//!
//! Every step is either defined by its exact value or is one IEEE operation per element,
//! and none mixes positions except through exact sums: a position's logits cannot depend
//! on how many positions are computed with it, nor on padding beyond it.
//!
//! # Example
//!
//! A tiny random model (written as an in-memory GGUF file by the hidden lines): the
//! logits of every position from one prefill pass equal those of token-by-token decoding,
//! bit for bit.
//!
//! ```
//! # fn main() -> candle_core::Result<()> {
//! use candle_core::quantized::gguf_file;
//! use candle_core::{DType, Device, Tensor};
//! use candle_repro::models::llama::ModelWeights;
//! # use candle_core::quantized::{GgmlDType, QTensor};
//! # use gguf_file::Value;
//! # let dev = Device::Cpu;
//! # let (d, heads, kv_heads, ff, vocab) = (32usize, 4u32, 2usize, 64usize, 50usize);
//! # let q = |shape: &[usize], ty| QTensor::quantize(&Tensor::randn(0f32, 0.3, shape, &dev)?, ty);
//! # let ones = |n: usize| QTensor::quantize(&Tensor::ones(n, DType::F32, &dev)?, GgmlDType::F32);
//! # let kv = d / heads as usize * kv_heads;
//! # let tensors = vec![
//! #     ("token_embd.weight", q(&[vocab, d], GgmlDType::Q8_0)?),
//! #     ("output_norm.weight", ones(d)?),
//! #     ("blk.0.attn_norm.weight", ones(d)?),
//! #     ("blk.0.ffn_norm.weight", ones(d)?),
//! #     ("blk.0.attn_q.weight", q(&[d, d], GgmlDType::Q4_1)?),
//! #     ("blk.0.attn_k.weight", q(&[kv, d], GgmlDType::Q4_1)?),
//! #     ("blk.0.attn_v.weight", q(&[kv, d], GgmlDType::Q4_1)?),
//! #     ("blk.0.attn_output.weight", q(&[d, d], GgmlDType::Q4_1)?),
//! #     ("blk.0.ffn_gate.weight", q(&[ff, d], GgmlDType::Q4_1)?),
//! #     ("blk.0.ffn_up.weight", q(&[ff, d], GgmlDType::Q4_1)?),
//! #     ("blk.0.ffn_down.weight", q(&[d, ff], GgmlDType::Q4_1)?),
//! # ];
//! # let metadata = [
//! #     ("general.architecture", Value::String("llama".into())),
//! #     ("llama.attention.head_count", Value::U32(heads)),
//! #     ("llama.attention.head_count_kv", Value::U32(kv_heads as u32)),
//! #     ("llama.embedding_length", Value::U32(d as u32)),
//! #     ("llama.block_count", Value::U32(1)),
//! #     ("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5)),
//! #     ("llama.rope.freq_base", Value::F32(10000.0)),
//! #     ("llama.context_length", Value::U32(32)),
//! # ];
//! # let mut file = std::io::Cursor::new(Vec::new());
//! # let md: Vec<_> = metadata.iter().map(|(k, v)| (*k, v)).collect();
//! # let ts: Vec<_> = tensors.iter().map(|(k, t)| (*k, t)).collect();
//! # gguf_file::write(&mut file, &md, &ts)?;
//! # file.set_position(0);
//! // `file`: any Read + Seek over a GGUF file, e.g. a std::fs::File.
//! let content = gguf_file::Content::read(&mut file)?;
//! let mut model = ModelWeights::from_gguf(content, &mut file, &Device::Cpu)?;
//! let ids = [3u32, 14, 15, 9, 26];
//!
//! // Prefill: the logits (1, 5, vocab) of all five positions in one pass.
//! let prefill = model.forward_all(&Tensor::new(&ids, &Device::Cpu)?.unsqueeze(0)?, 0)?;
//! // Decode: one token at a time through the KV cache.
//! model.clear_kv_cache();
//! for (pos, &id) in ids.iter().enumerate() {
//!     let logits = model.forward(&Tensor::new(&[id], &Device::Cpu)?.unsqueeze(0)?, pos)?;
//!     let in_prefill = prefill.get(0)?.get(pos)?;
//!     assert_eq!(logits.get(0)?.to_vec1::<f32>()?, in_prefill.to_vec1::<f32>()?);
//! }
//! # Ok(()) }
//! ```
//!
//! With the real checkpoint and its tokenizer (`examples/generate.rs` is the full
//! program, including the download):
//!
//! ```no_run
//! # fn main() -> candle_core::Result<()> {
//! use candle_core::quantized::gguf_file;
//! use candle_core::{Device, Tensor};
//! use candle_repro::models::{llama, tokenizer};
//! let mut file = std::fs::File::open("SmolLM2-135M-Instruct.Q4_1.gguf")?;
//! let content = gguf_file::Content::read(&mut file)?;
//! let tok = tokenizer::tokenizer_from_gguf(&content)?;
//! let prompt = tokenizer::chat_prompt(&content, "What is the capital of France?")?;
//! let eos = tokenizer::eos_token_id(&content)?;
//! let mut model = llama::ModelWeights::from_gguf(content, &mut file, &Device::Cpu)?;
//! let mut ids = tok.encode(prompt, false).map_err(candle_core::Error::msg)?.get_ids().to_vec();
//! let mut pos = 0;
//! for _ in 0..32 {
//!     let input = Tensor::new(&ids[pos..], &Device::Cpu)?.unsqueeze(0)?;
//!     let next = llama::argmax_last(&model.forward(&input, pos)?)?;
//!     pos = ids.len();
//!     ids.push(next);
//!     if next == eos {
//!         break;
//!     }
//! }
//! # Ok(()) }
//! ```

use super::attention::{attend, attention_mask, with_cache};
use super::gguf::{Embedding, Loader, Projection, WeightMode, md_f32, md_u32};
use crate::nn::RmsNorm;
use crate::rope::{RopeConfig, RopeTables};
use candle_core::quantized::gguf_file;
use candle_core::{D, DType, Device, IndexOp, Module, Result, Tensor, bail};

/// The shape of a Llama model.
#[derive(Clone, Debug)]
pub struct Config {
    /// Number of tokens in the vocabulary (rows of the embedding and of the output head).
    pub vocab_size: usize,
    /// Width of the residual stream (`llama.embedding_length`).
    pub hidden_size: usize,
    /// Number of transformer blocks.
    pub n_layer: usize,
    /// Number of query heads.
    pub n_head: usize,
    /// Number of key/value heads (grouped-query attention when fewer than `n_head`).
    pub n_kv_head: usize,
    /// Width of one head: `hidden_size / n_head`.
    pub head_dim: usize,
    /// The RMS norms' epsilon.
    pub rms_eps: f32,
    /// RoPE base frequency theta.
    pub rope_theta: f32,
    /// Longest sequence the KV cache and the RoPE tables hold (`llama.context_length`).
    pub max_positions: usize,
}

struct Layer {
    attn_norm: RmsNorm,
    wq: Projection,
    wk: Projection,
    wv: Projection,
    wo: Projection,
    ffn_norm: RmsNorm,
    w_gate: Projection,
    w_up: Projection,
    w_down: Projection,
    kv_cache: Option<(Tensor, Tensor)>,
}

/// A Llama model with its KV cache.
pub struct ModelWeights {
    /// The model's shape, read from the GGUF metadata.
    pub config: Config,
    dtype: DType,
    device: Device,
    embeddings: Embedding,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: Projection,
    rope: RopeTables,
}

impl ModelWeights {
    /// The model of a GGUF file (architecture `llama`), computing in f32.
    pub fn from_gguf<R: std::io::Seek + std::io::Read>(
        content: gguf_file::Content,
        reader: &mut R,
        device: &Device,
    ) -> Result<Self> {
        Self::from_gguf_dtype(content, reader, device, DType::F32)
    }

    /// The model computing in `dtype` (f32 or bf16), weights in their blocks.
    pub fn from_gguf_dtype<R: std::io::Seek + std::io::Read>(
        c: gguf_file::Content,
        r: &mut R,
        device: &Device,
        dtype: DType,
    ) -> Result<Self> {
        Self::from_gguf_with(c, r, device, dtype, WeightMode::Quantized)
    }

    /// The model computing in `dtype` (f32 or bf16), its matrices held as `mode` says.
    pub fn from_gguf_with<R: std::io::Seek + std::io::Read>(
        c: gguf_file::Content,
        r: &mut R,
        device: &Device,
        dtype: DType,
        mode: WeightMode,
    ) -> Result<Self> {
        if !matches!(dtype, DType::F32 | DType::BF16) {
            bail!("candle-repro llama: compute dtype f32 or bf16, not {dtype:?}")
        }
        let arch = c
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok());
        if arch.map(|s| s.as_str()) != Some("llama") {
            bail!("candle-repro llama: the file's architecture is {arch:?}, not llama")
        }
        let n_head = md_u32(&c, "llama.attention.head_count")? as usize;
        let hidden_size = md_u32(&c, "llama.embedding_length")? as usize;
        let head_dim = match md_u32(&c, "llama.rope.dimension_count") {
            Ok(d) => d as usize,
            Err(_) => hidden_size / n_head,
        };
        let Some(embd) = c.tensor_infos.get("token_embd.weight") else {
            bail!("candle-repro llama: the file has no token_embd.weight")
        };
        let config = Config {
            vocab_size: embd.shape.dims()[0],
            hidden_size,
            n_layer: md_u32(&c, "llama.block_count")? as usize,
            n_head,
            n_kv_head: md_u32(&c, "llama.attention.head_count_kv").map_or(n_head, |v| v as usize),
            head_dim,
            rms_eps: md_f32(&c, "llama.attention.layer_norm_rms_epsilon")?,
            rope_theta: md_f32(&c, "llama.rope.freq_base").unwrap_or(10000.0),
            max_positions: md_u32(&c, "llama.context_length").map_or(4096, |v| v as usize),
        };
        if head_dim * n_head != hidden_size || !n_head.is_multiple_of(config.n_kv_head) {
            bail!("candle-repro llama: inconsistent head counts {config:?}")
        }
        let eps = config.rms_eps as f64;
        let mut ld = Loader::new(&c, r, dtype, device, mode);
        let (embeddings, tied) = ld.embedding("token_embd.weight")?;
        let output = if ld.has("output.weight") {
            ld.projection("output.weight")?
        } else {
            tied
        };
        let mut layers = Vec::with_capacity(config.n_layer);
        for i in 0..config.n_layer {
            let p = format!("blk.{i}");
            layers.push(Layer {
                attn_norm: RmsNorm::new(ld.dense(&format!("{p}.attn_norm.weight"))?, eps),
                wq: ld.projection(&format!("{p}.attn_q.weight"))?,
                wk: ld.projection(&format!("{p}.attn_k.weight"))?,
                wv: ld.projection(&format!("{p}.attn_v.weight"))?,
                wo: ld.projection(&format!("{p}.attn_output.weight"))?,
                ffn_norm: RmsNorm::new(ld.dense(&format!("{p}.ffn_norm.weight"))?, eps),
                w_gate: ld.projection(&format!("{p}.ffn_gate.weight"))?,
                w_up: ld.projection(&format!("{p}.ffn_up.weight"))?,
                w_down: ld.projection(&format!("{p}.ffn_down.weight"))?,
                kv_cache: None,
            });
        }
        let norm = RmsNorm::new(ld.dense("output_norm.weight")?, eps);
        let rope_cfg = RopeConfig::new(config.rope_theta, config.head_dim);
        let rope = RopeTables::new(&rope_cfg, config.max_positions, dtype, device)?;
        Ok(ModelWeights {
            config,
            dtype,
            device: device.clone(),
            embeddings,
            layers,
            norm,
            output,
            rope,
        })
    }

    /// The compute dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Forget the KV cache.
    pub fn clear_kv_cache(&mut self) {
        for l in &mut self.layers {
            l.kv_cache = None;
        }
    }

    /// Logits (b, vocab) of the last position of `x` (b, s) (u32 token ids) at positions
    /// index_pos.., appending to the KV cache: `quantized_llama::ModelWeights::forward`.
    pub fn forward(&mut self, x: &Tensor, index_pos: usize) -> Result<Tensor> {
        // Only the last position goes through the final norm and the output head: both
        // act on each position alone, so its logits have the bits `forward_all` gives.
        self.run(x, index_pos, None, true, true)?.i((.., 0))
    }

    /// Logits (b, s, vocab) of every position of `x`, appending to the KV cache.
    pub fn forward_all(&mut self, x: &Tensor, index_pos: usize) -> Result<Tensor> {
        self.run(x, index_pos, None, true, false)
    }

    /// Logits (b, s, vocab) of a batch of prompts right-padded to s: row i's first
    /// `lengths[i]` tokens are real, the rest padding (masked as keys; their logits are
    /// meaningless). From position 0, without touching the KV cache.
    pub fn forward_padded(&mut self, x: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (b, s) = x.dims2()?;
        if lengths.len() != b || lengths.iter().any(|&l| l == 0 || l > s) {
            bail!("candle-repro llama: lengths {lengths:?} for a batch of {b} x {s}")
        }
        let saved: Vec<_> = self.layers.iter_mut().map(|l| l.kv_cache.take()).collect();
        let out = self.run(x, 0, Some(lengths), false, false);
        for (l, c) in self.layers.iter_mut().zip(saved) {
            l.kv_cache = c;
        }
        out
    }

    fn run(
        &mut self,
        x: &Tensor,
        index_pos: usize,
        lengths: Option<&[usize]>,
        cache: bool,
        last_only: bool,
    ) -> Result<Tensor> {
        let (b, s) = x.dims2()?;
        let cfg = self.config.clone();
        if index_pos + s > cfg.max_positions {
            bail!(
                "candle-repro llama: position {} beyond the context length {}",
                index_pos + s,
                cfg.max_positions
            )
        }
        let ids = x.flatten_all()?;
        let mut h = self
            .embeddings
            .forward(&ids)?
            .reshape((b, s, cfg.hidden_size))?;
        let cos = self.rope.cos.narrow(0, index_pos, s)?;
        let sin = self.rope.sin.narrow(0, index_pos, s)?;
        let total = index_pos + s;
        let mask = attention_mask(b, s, index_pos, lengths, None, &self.device)?;
        for layer in &mut self.layers {
            let a = layer.attn_norm.forward(&h)?;
            let att = attention(layer, &cfg, &a, &cos, &sin, mask.as_ref(), total, cache)?;
            h = crate::add(&h, &att)?;
            let f = layer.ffn_norm.forward(&h)?;
            let g = crate::silu(&layer.w_gate.forward(&f)?)?;
            let u = layer.w_up.forward(&f)?;
            let m = layer.w_down.forward(&(g * u)?)?;
            h = crate::add(&h, &m)?;
        }
        let h = if last_only { h.narrow(1, s - 1, 1)? } else { h };
        let h = self.norm.forward(&h)?;
        self.output.forward(&h)
    }
}

#[allow(clippy::too_many_arguments)]
fn attention(
    layer: &mut Layer,
    cfg: &Config,
    x: &Tensor,
    cos: &Tensor,
    sin: &Tensor,
    mask: Option<&Tensor>,
    total: usize,
    cache: bool,
) -> Result<Tensor> {
    let (b, s, _) = x.dims3()?;
    let (nh, nkv, hd) = (cfg.n_head, cfg.n_kv_head, cfg.head_dim);
    let heads = |p: &Projection, n: usize| -> Result<Tensor> {
        p.forward(x)?
            .reshape((b, s, n, hd))?
            .transpose(1, 2)?
            .contiguous()
    };
    let q = crate::rope::rope_i(&heads(&layer.wq, nh)?, cos, sin)?;
    let k = crate::rope::rope_i(&heads(&layer.wk, nkv)?, cos, sin)?;
    let v = heads(&layer.wv, nkv)?;
    let (k, v) = with_cache(&mut layer.kv_cache, k, v, cache, total)?;
    layer.wo.forward(&attend(&q, &k, &v, mask, (nh, nkv, hd))?)
}

/// The index of the largest logit of the last dimension (the first on ties): greedy
/// decoding.
pub fn argmax_last(logits: &Tensor) -> Result<u32> {
    logits
        .argmax(D::Minus1)?
        .flatten_all()?
        .to_vec1::<u32>()?
        .first()
        .copied()
        .ok_or_else(|| candle_core::Error::Msg("candle-repro llama: empty logits".into()))
}
