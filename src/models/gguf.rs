//! What a model needs from a GGUF file: its weights (kept in their blocks, or dequantized
//! by one rule), its metadata, and its tokenizer.
//!
//! # Weights
//! Every weight has an exact value, the reference dequantization of its block taken
//! exactly ([`crate::quantized::blocks`]). A model holds its matrices either in their
//! blocks, as [`QMatMul`]s whose products use those exact values ([`WeightMode::Quantized`],
//! the default: the model needs the file's memory), or dequantized once to the compute
//! dtype, each exact value rounded once ([`WeightMode::Dequantized`]: the dense
//! [`Linear`] path, which rounds weights that need more bits than the dtype has).
//! Vectors (norm weights, biases) are always dequantized: they are small.

use crate::math::Format;
use crate::nn::Linear;
use crate::quantized::{QEmbedding, QMatMul, blocks};
use candle_core::quantized::{QTensor, gguf_file};
use candle_core::{DType, Device, Module, Result, Tensor, bail};
use half::{bf16, f16};
use rayon::prelude::*;

/// A quantized tensor dequantized to `dtype` (f32, bf16, f16, or f64 for references): each
/// weight's exact value rounded once (nearest even); f64 holds it exactly.
pub fn dequantize(q: &QTensor, dtype: DType, device: &Device) -> Result<Tensor> {
    let values = blocks::dequantize_exact(q.dtype(), &q.data()?)?;
    let shape = q.shape().clone();
    if values.len() != shape.elem_count() {
        bail!(
            "candle-repro: a GGUF tensor of shape {shape:?} holds {} weights",
            values.len()
        )
    }
    fn round<F: Format>(v: &[f64]) -> Vec<F> {
        v.par_iter().map(|&x| F::round(x)).collect()
    }
    match dtype {
        DType::F32 => Tensor::from_vec(round::<f32>(&values), shape, device),
        DType::BF16 => Tensor::from_vec(round::<bf16>(&values), shape, device),
        DType::F16 => Tensor::from_vec(round::<f16>(&values), shape, device),
        DType::F64 => Tensor::from_vec(values, shape, device),
        other => bail!("candle-repro: dequantizing to {other:?} is not supported"),
    }
}

/// How a model holds its weight matrices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WeightMode {
    /// In their GGUF blocks; products through [`QMatMul`] with the weights' exact values.
    /// On the CPU and on CUDA (with the `cuda` feature); on other devices the models
    /// dequantize.
    #[default]
    Quantized,
    /// Dequantized at load to the compute dtype (each exact value rounded once); products
    /// through [`Linear`].
    Dequantized,
}

/// A weight matrix (out, in) as the model holds it.
#[derive(Clone, Debug)]
pub enum Projection {
    /// Dequantized: a correctly rounded [`Linear`] without bias.
    Dense(Linear),
    /// In its blocks.
    Quantized(QMatMul),
}

impl Module for Projection {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Projection::Dense(l) => l.forward(x),
            Projection::Quantized(q) => q.forward(x),
        }
    }
}

/// An embedding table (vocab, dim) as the model holds it.
#[derive(Clone, Debug)]
pub enum Embedding {
    /// Dequantized to the compute dtype: rows gathered by copy.
    Dense(Tensor),
    /// In its blocks: rows decoded exactly and rounded once when gathered.
    Quantized(QEmbedding),
}

impl Embedding {
    /// The rows of `ids` (a vector of u32): (ids, dim).
    pub fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        match self {
            Embedding::Dense(t) => t.index_select(ids, 0),
            Embedding::Quantized(e) => e.forward(ids),
        }
    }
}

/// Reads a GGUF file's tensors into the form a model wants.
pub struct Loader<'a, R> {
    /// The file's header.
    pub content: &'a gguf_file::Content,
    reader: &'a mut R,
    /// The compute dtype.
    pub dtype: DType,
    /// Where the model runs.
    pub device: Device,
    /// How matrices are held (`Quantized` on the CPU and CUDA).
    pub mode: WeightMode,
}

impl<'a, R: std::io::Read + std::io::Seek> Loader<'a, R> {
    /// A loader; `mode` falls back to `Dequantized` on devices without quantized products
    /// (all but the CPU and, with the `cuda` feature, CUDA).
    pub fn new(
        content: &'a gguf_file::Content,
        reader: &'a mut R,
        dtype: DType,
        device: &Device,
        mode: WeightMode,
    ) -> Self {
        let mode = if crate::quantized::supports(device) {
            mode
        } else {
            WeightMode::Dequantized
        };
        Loader {
            content,
            reader,
            dtype,
            device: device.clone(),
            mode,
        }
    }

    /// Whether the file has a tensor of this name.
    pub fn has(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }

    /// The tensor as stored.
    pub fn qtensor(&mut self, name: &str) -> Result<QTensor> {
        self.content.tensor(self.reader, name, &Device::Cpu)
    }

    /// A tensor's block type, shape and bytes, read straight from the file into one
    /// buffer (candle's reader copies a tensor's bytes once more into typed blocks, which
    /// doubles the largest tensor at load).
    pub fn raw(
        &mut self,
        name: &str,
    ) -> Result<(candle_core::quantized::GgmlDType, Vec<usize>, Vec<u8>)> {
        use std::io::SeekFrom;
        let Some(info) = self.content.tensor_infos.get(name) else {
            bail!("candle-repro: the file has no tensor {name}")
        };
        let (ty, dims) = (info.ggml_dtype, info.shape.dims().to_vec());
        let (len, size) = blocks::geometry(ty);
        let elems = info.shape.elem_count();
        if !elems.is_multiple_of(len) {
            bail!("candle-repro: tensor {name} of {elems} weights is not whole {ty:?} blocks")
        }
        let mut bytes = vec![0u8; elems / len * size];
        self.reader.seek(SeekFrom::Start(
            self.content.tensor_data_offset + info.offset,
        ))?;
        self.reader.read_exact(&mut bytes)?;
        Ok((ty, dims, bytes))
    }

    /// A weight matrix in its blocks.
    fn qmatmul(&mut self, name: &str) -> Result<QMatMul> {
        let (ty, dims, bytes) = self.raw(name)?;
        if dims.len() != 2 {
            bail!("candle-repro: {name} has shape {dims:?}, not (out, in)")
        }
        QMatMul::from_bytes(ty, (dims[0], dims[1]), bytes, &self.device)
    }

    /// A vector (or any small tensor), dequantized to the compute dtype.
    pub fn dense(&mut self, name: &str) -> Result<Tensor> {
        let q = self.qtensor(name)?;
        dequantize(&q, self.dtype, &self.device)
    }

    /// A weight matrix (out, in).
    pub fn projection(&mut self, name: &str) -> Result<Projection> {
        Ok(match self.mode {
            WeightMode::Quantized => Projection::Quantized(self.qmatmul(name)?),
            WeightMode::Dequantized => {
                let q = self.qtensor(name)?;
                Projection::Dense(Linear::new(dequantize(&q, self.dtype, &self.device)?, None))
            }
        })
    }

    /// An embedding table in its blocks, whatever the mode (rows are decoded when
    /// gathered), e.g. for an embedding with its own scale.
    pub fn table(&mut self, name: &str) -> Result<QMatMul> {
        self.qmatmul(name)
    }

    /// An embedding table (vocab, dim) and the same table as an output projection (for
    /// tied embeddings), sharing its storage.
    pub fn embedding(&mut self, name: &str) -> Result<(Embedding, Projection)> {
        Ok(match self.mode {
            WeightMode::Quantized => {
                let m = self.qmatmul(name)?;
                (
                    Embedding::Quantized(QEmbedding::new(&m, self.dtype)),
                    Projection::Quantized(m),
                )
            }
            WeightMode::Dequantized => {
                let q = self.qtensor(name)?;
                let t = dequantize(&q, self.dtype, &self.device)?;
                (
                    Embedding::Dense(t.clone()),
                    Projection::Dense(Linear::new(t, None)),
                )
            }
        })
    }
}

/// A metadata value as u32 (GGUF integers of any width).
pub(crate) fn md_u32(c: &gguf_file::Content, key: &str) -> Result<u32> {
    match c.metadata.get(key) {
        Some(v) => v.to_u32().or_else(|_| v.to_u64().map(|x| x as u32)),
        None => bail!("candle-repro: GGUF metadata has no {key}"),
    }
}

/// A metadata value as f32.
pub(crate) fn md_f32(c: &gguf_file::Content, key: &str) -> Result<f32> {
    match c.metadata.get(key) {
        Some(v) => v.to_f32(),
        None => bail!("candle-repro: GGUF metadata has no {key}"),
    }
}

/// A metadata array of strings.
pub(crate) fn md_strings(c: &gguf_file::Content, key: &str) -> Result<Vec<String>> {
    match c.metadata.get(key) {
        Some(gguf_file::Value::Array(v)) => v.iter().map(|s| s.to_string().cloned()).collect(),
        _ => bail!("candle-repro: GGUF metadata has no string array {key}"),
    }
}
