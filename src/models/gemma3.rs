//! Gemma 3 (text) from a GGUF file, every op through candle-repro, so that its logits
//! have the same bits on every device, thread count, vector width, batch and
//! prefill/decode split. The API is that of
//! `candle_transformers::models::quantized_gemma3::ModelWeights` (`from_gguf`, `forward`),
//! plus the logits of every position and padded batches, as [`super::llama`] has.
//!
//! # What each step computes (compute dtype f32 or bf16)
//! * weights: in their GGUF blocks, each with its exact value (or dequantized once, see
//!   [`super::gguf::WeightMode`]); norm weights as stored (llama.cpp's converter stores
//!   Gemma's `1 + w`, so the file's value is the factor itself);
//! * embedding: the token's row times sqrt(hidden size), each value's exact product
//!   rounded once ([`crate::quantized::QEmbedding::scaled_by_sqrt`]);
//! * every RMSNorm (before and after attention, before and after the feed-forward block,
//!   on each query and key head, and at the end): [`crate::norm::rms_norm`], correctly
//!   rounded;
//! * q, k, v, o, gate, up, down and the output head (tied to the embedding):
//!   [`crate::quantized::QMatMul`], each output the exact dot product rounded once;
//! * RoPE: [`crate::rope::rope_fused`] in the halves layout (llama.cpp's NEOX type) with
//!   correctly rounded cos/sin of Hugging Face's f32 frequencies, base `rope.freq_base`
//!   on global layers and `rope.local_freq_base` (default 10000) on sliding-window layers;
//! * attention: scores = the correctly rounded product q k^T (the query heads of each KV
//!   head stacked), times 1/sqrt(head_dim) (rounded to f32, then to the compute dtype) as
//!   one IEEE multiplication (exact for head_dim 256); a key is visible to a query at or
//!   after it, and on sliding-window layers only within the window (query - key < window,
//!   Hugging Face's and llama.cpp's rule), masked keys set to -inf (a selection);
//!   [`crate::softmax_last_dim`]; the product with v, correctly rounded;
//! * feed-forward: [`crate::gelu`] (PyTorch's tanh form, correctly rounded) of gate, times
//!   up with candle's multiplication (one IEEE rounding);
//! * residual adds: [`crate::add`], the exact sum rounded once.
//!
//! Layer l uses a sliding window unless (l + 1) is a multiple of
//! `attention.sliding_window_type` (6 when the file does not say). Every step is defined
//! by its exact value or is one IEEE operation per element, and positions only meet in
//! exact sums: a position's logits depend neither on how many positions are computed with
//! it nor on padding beyond it, and the sliding window is the same in prefill and decode
//! (the KV cache keeps every position; the mask hides the old ones).
//!
//! Stock candle's `quantized_gemma3` differs from the reference model in three ways this
//! module does not copy: it applies SiLU where Gemma 3 uses GELU, its sliding window
//! admits one key more than the reference (query - key <= window), and it applies the
//! window only within a prefill chunk, not while decoding.

use super::attention::{attend, attention_mask, with_cache};
use super::gguf::{Embedding, Loader, Projection, WeightMode, md_f32, md_u32};
use crate::nn::RmsNorm;
use crate::quantized::QEmbedding;
use crate::rope::{RopeConfig, RopeFreqs, RopeLayout, rope_freqs};
use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, IndexOp, Module, Result, Tensor, bail};

/// The shape of a Gemma 3 model (from the GGUF metadata).
#[derive(Clone, Debug)]
pub struct Config {
    /// Tokens in the vocabulary.
    pub vocab_size: usize,
    /// Width of the residual stream (`embedding_length`).
    pub hidden_size: usize,
    /// Number of transformer blocks.
    pub n_layer: usize,
    /// Query heads.
    pub n_head: usize,
    /// Key/value heads.
    pub n_kv_head: usize,
    /// Width of one head (`attention.key_length`).
    pub head_dim: usize,
    /// The RMS norms' epsilon.
    pub rms_eps: f32,
    /// RoPE base of the global layers.
    pub rope_theta: f32,
    /// RoPE base of the sliding-window layers.
    pub rope_local_theta: f32,
    /// Keys a sliding-window layer sees, the query's own included.
    pub sliding_window: usize,
    /// Every this-many-th layer is global, the others slide.
    pub sliding_window_pattern: usize,
    /// Longest sequence (`context_length`).
    pub max_positions: usize,
}

struct Layer {
    attn_norm: RmsNorm,
    wq: Projection,
    wk: Projection,
    wv: Projection,
    wo: Projection,
    q_norm: RmsNorm,
    k_norm: RmsNorm,
    post_attn_norm: RmsNorm,
    ffn_norm: RmsNorm,
    w_gate: Projection,
    w_up: Projection,
    w_down: Projection,
    post_ffn_norm: RmsNorm,
    sliding: bool,
    kv_cache: Option<(Tensor, Tensor)>,
}

/// A Gemma 3 model with its KV cache.
pub struct ModelWeights {
    /// The model's shape, read from the GGUF metadata.
    pub config: Config,
    dtype: DType,
    device: Device,
    embeddings: Embedding,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: Projection,
    rope_global: RopeFreqs,
    rope_local: RopeFreqs,
}

impl ModelWeights {
    /// The model of a GGUF file (architecture `gemma3`), computing in f32, weights in their
    /// blocks.
    pub fn from_gguf<R: std::io::Seek + std::io::Read>(
        content: gguf_file::Content,
        reader: &mut R,
        device: &Device,
    ) -> Result<Self> {
        Self::from_gguf_with(content, reader, device, DType::F32, WeightMode::Quantized)
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
            bail!("candle-repro gemma3: compute dtype f32 or bf16, not {dtype:?}")
        }
        let arch = c
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok());
        if arch.map(|s| s.as_str()) != Some("gemma3") {
            bail!("candle-repro gemma3: the file's architecture is {arch:?}, not gemma3")
        }
        let key = |k: &str| format!("gemma3.{k}");
        let n_head = md_u32(&c, &key("attention.head_count"))? as usize;
        let Some(embd) = c.tensor_infos.get("token_embd.weight") else {
            bail!("candle-repro gemma3: the file has no token_embd.weight")
        };
        let config = Config {
            vocab_size: embd.shape.dims()[0],
            hidden_size: md_u32(&c, &key("embedding_length"))? as usize,
            n_layer: md_u32(&c, &key("block_count"))? as usize,
            n_head,
            n_kv_head: md_u32(&c, &key("attention.head_count_kv")).map_or(n_head, |v| v as usize),
            head_dim: md_u32(&c, &key("attention.key_length"))? as usize,
            rms_eps: md_f32(&c, &key("attention.layer_norm_rms_epsilon"))?,
            rope_theta: md_f32(&c, &key("rope.freq_base")).unwrap_or(1_000_000.0),
            rope_local_theta: md_f32(&c, &key("rope.local_freq_base")).unwrap_or(10_000.0),
            sliding_window: md_u32(&c, &key("attention.sliding_window"))? as usize,
            sliding_window_pattern: md_u32(&c, &key("attention.sliding_window_type"))
                .map_or(6, |v| v as usize),
            max_positions: md_u32(&c, &key("context_length")).map_or(8192, |v| v as usize),
        };
        if config.n_kv_head == 0
            || !n_head.is_multiple_of(config.n_kv_head)
            || config.head_dim == 0
            || config.head_dim % 2 == 1
            || config.sliding_window == 0
            || config.sliding_window_pattern == 0
        {
            bail!("candle-repro gemma3: inconsistent shape {config:?}")
        }
        let eps = config.rms_eps as f64;
        let mut ld = Loader::new(&c, r, dtype, device, mode);
        // The embedding in its blocks (scaled by sqrt(d) when gathered), tied to the output.
        let table = ld.table("token_embd.weight")?;
        let embeddings = Embedding::Quantized(QEmbedding::scaled_by_sqrt(
            &table,
            dtype,
            config.hidden_size as u64,
        )?);
        let output = if ld.has("output.weight") {
            ld.projection("output.weight")?
        } else {
            match ld.mode {
                WeightMode::Quantized => Projection::Quantized(table),
                WeightMode::Dequantized => ld.projection("token_embd.weight")?,
            }
        };
        let mut layers = Vec::with_capacity(config.n_layer);
        for i in 0..config.n_layer {
            let p = format!("blk.{i}");
            let mut norm = |n: &str| -> Result<RmsNorm> {
                Ok(RmsNorm::new(ld.dense(&format!("{p}.{n}.weight"))?, eps))
            };
            let attn_norm = norm("attn_norm")?;
            let q_norm = norm("attn_q_norm")?;
            let k_norm = norm("attn_k_norm")?;
            let post_attn_norm = norm("post_attention_norm")?;
            let ffn_norm = norm("ffn_norm")?;
            let post_ffn_norm = norm("post_ffw_norm")?;
            layers.push(Layer {
                attn_norm,
                wq: ld.projection(&format!("{p}.attn_q.weight"))?,
                wk: ld.projection(&format!("{p}.attn_k.weight"))?,
                wv: ld.projection(&format!("{p}.attn_v.weight"))?,
                wo: ld.projection(&format!("{p}.attn_output.weight"))?,
                q_norm,
                k_norm,
                post_attn_norm,
                ffn_norm,
                w_gate: ld.projection(&format!("{p}.ffn_gate.weight"))?,
                w_up: ld.projection(&format!("{p}.ffn_up.weight"))?,
                w_down: ld.projection(&format!("{p}.ffn_down.weight"))?,
                post_ffn_norm,
                sliding: (i + 1) % config.sliding_window_pattern != 0,
                kv_cache: None,
            });
        }
        let norm = RmsNorm::new(ld.dense("output_norm.weight")?, eps);
        let rope_global = rope_freqs(&RopeConfig::new(config.rope_theta, config.head_dim))?;
        let rope_local = rope_freqs(&RopeConfig::new(config.rope_local_theta, config.head_dim))?;
        Ok(ModelWeights {
            config,
            dtype,
            device: device.clone(),
            embeddings,
            layers,
            norm,
            output,
            rope_global,
            rope_local,
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
    /// index_pos.., appending to the KV cache: `quantized_gemma3::ModelWeights::forward`.
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
            bail!("candle-repro gemma3: lengths {lengths:?} for a batch of {b} x {s}")
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
                "candle-repro gemma3: position {} beyond the context length {}",
                index_pos + s,
                cfg.max_positions
            )
        }
        let ids = x.flatten_all()?;
        let mut h = self
            .embeddings
            .forward(&ids)?
            .reshape((b, s, cfg.hidden_size))?;
        let positions = Tensor::arange(index_pos as u32, (index_pos + s) as u32, &self.device)?;
        let total = index_pos + s;
        let global_mask = attention_mask(b, s, index_pos, lengths, None, &self.device)?;
        let local_mask = attention_mask(
            b,
            s,
            index_pos,
            lengths,
            Some(cfg.sliding_window),
            &self.device,
        )?;
        for layer in &mut self.layers {
            let (mask, freqs) = if layer.sliding {
                (local_mask.as_ref(), &self.rope_local)
            } else {
                (global_mask.as_ref(), &self.rope_global)
            };
            let a = layer.attn_norm.forward(&h)?;
            let att = attention(layer, &cfg, &a, &positions, freqs, mask, total, cache)?;
            h = crate::add(&h, &layer.post_attn_norm.forward(&att)?)?;
            let f = layer.ffn_norm.forward(&h)?;
            let g = crate::gelu(&layer.w_gate.forward(&f)?)?;
            let u = layer.w_up.forward(&f)?;
            let m = layer.w_down.forward(&(g * u)?)?;
            h = crate::add(&h, &layer.post_ffn_norm.forward(&m)?)?;
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
    positions: &Tensor,
    freqs: &RopeFreqs,
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
    // Each head normalized over its own width, then rotated.
    let q = layer.q_norm.forward(&heads(&layer.wq, nh)?)?;
    let k = layer.k_norm.forward(&heads(&layer.wk, nkv)?)?;
    let v = heads(&layer.wv, nkv)?;
    let q = crate::rope::rope_fused(RopeLayout::Halves, &q, positions, freqs)?;
    let k = crate::rope::rope_fused(RopeLayout::Halves, &k, positions, freqs)?;
    let (k, v) = with_cache(&mut layer.kv_cache, k, v, cache, total)?;
    layer.wo.forward(&attend(&q, &k, &v, mask, (nh, nkv, hd))?)
}
