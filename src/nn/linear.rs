//! `Linear`, a drop-in for `candle_nn::Linear`: y = x w^T + b for a weight (out, in), an
//! optional bias (out) and any leading dimensions of x, with each output the exact value
//! rounded once (bias included: one rounding, not two; see `crate::matmul`).
//!
//! The weight is read in place through its transposed view (no copy). What the product
//! needs of the weight alone, the norm and sign classes of each of its rows (the columns
//! of w^T), is computed on the first CPU call and kept, unless the weight is a training
//! variable (`Tensor::is_variable`), whose values may change between calls.

use crate::matmul::{self, Prepared};
use candle_core::{Device, Module, Result, Tensor};
use candle_nn::{Init, VarBuilder};
use std::sync::{Arc, OnceLock};

/// A linear layer (see the module documentation).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Module, Tensor};
/// use candle_repro::nn::Linear;
/// let w = Tensor::randn(0f32, 1., (32, 64), &Device::Cpu)?; // (out, in)
/// let b = Tensor::randn(0f32, 1., 32, &Device::Cpu)?;
/// let layer = Linear::new(w, Some(b));
/// // Prefill: 3 sequences of 10 tokens; decode: one token alone.
/// let x = Tensor::randn(0f32, 1., (3, 10, 64), &Device::Cpu)?;
/// let prefill = layer.forward(&x)?;
/// let decode = layer.forward(&x.narrow(0, 2, 1)?.narrow(1, 9, 1)?)?;
/// assert_eq!(prefill.dims(), [3, 10, 32]);
/// assert_eq!(
///     decode.flatten_all()?.to_vec1::<f32>()?,
///     prefill.get(2)?.get(9)?.to_vec1::<f32>()?,
/// );
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Linear {
    weight: Tensor,
    bias: Option<Tensor>,
    prepared: Arc<OnceLock<Option<Arc<Prepared>>>>,
}

impl Linear {
    /// A layer over `weight` (out, in) and an optional `bias` (out), as `candle_nn::Linear::new`.
    pub fn new(weight: Tensor, bias: Option<Tensor>) -> Self {
        Linear {
            weight,
            bias,
            prepared: Arc::new(OnceLock::new()),
        }
    }

    /// The weight, (out, in).
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The bias, (out), if any.
    pub fn bias(&self) -> Option<&Tensor> {
        self.bias.as_ref()
    }

    /// The weight's stats for the CPU product, computed once (None on other devices and
    /// for training variables).
    fn prepared(&self) -> Result<Option<Arc<Prepared>>> {
        if !matches!(self.weight.device(), Device::Cpu) || self.weight.is_variable() {
            return Ok(None);
        }
        if let Some(p) = self.prepared.get() {
            return Ok(p.clone());
        }
        let p = matmul::prepare_weight(&self.weight)?.map(Arc::new);
        Ok(self.prepared.get_or_init(|| p).clone())
    }
}

impl Module for Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dims = x.dims().to_vec();
        let Some((&k, lead)) = dims.split_last() else {
            candle_core::bail!("candle-repro Linear: a scalar input has no feature dimension")
        };
        let out_features = self.weight.dim(0)?;
        let prepared = self.prepared()?;
        let w = self.weight.t()?;
        let bias = self.bias.as_ref();
        let y = if lead.len() != 1 && (x.is_contiguous() || lead.is_empty()) {
            // Fold every leading dimension into the rows of one 2-D product.
            let rows: usize = lead.iter().product();
            let y = matmul::product(&x.reshape((rows, k))?, &w, bias, None, None, prepared)?;
            let mut out = lead.to_vec();
            out.push(out_features);
            y.reshape(out)?
        } else if lead.len() == 1 {
            matmul::product(x, &w, bias, None, None, prepared)?
        } else {
            // A strided input: the weight broadcast over the batch dimensions (stride 0,
            // no copy), x read in place.
            let mut wd = lead[..lead.len() - 1].to_vec();
            wd.extend([k, out_features]);
            matmul::product(x, &w.broadcast_as(wd)?, bias, None, None, prepared)?
        };
        Ok(y)
    }
}

/// A linear layer with a bias from a `VarBuilder` (names "weight" and "bias", the
/// initializers of `candle_nn::linear`).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Module, Tensor};
/// use candle_nn::{VarBuilder, VarMap};
/// let vars = VarMap::new();
/// let vb = VarBuilder::from_varmap(&vars, DType::F32, &Device::Cpu);
/// let layer = candle_repro::nn::linear(4, 3, vb.pp("proj"))?;
/// assert_eq!(layer.weight().dims(), [3, 4]);
/// assert_eq!(layer.bias().map(|b| b.dims().to_vec()), Some(vec![3]));
/// let y = layer.forward(&Tensor::ones((2, 4), DType::F32, &Device::Cpu)?)?;
/// assert_eq!(y.dims(), [2, 3]);
/// # Ok(()) }
/// ```
pub fn linear(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<Linear> {
    let ws = vb.get_with_hints(
        (out_dim, in_dim),
        "weight",
        candle_nn::init::DEFAULT_KAIMING_NORMAL,
    )?;
    let bound = 1. / (in_dim as f64).sqrt();
    let bs = vb.get_with_hints(
        out_dim,
        "bias",
        Init::Uniform {
            lo: -bound,
            up: bound,
        },
    )?;
    Ok(Linear::new(ws, Some(bs)))
}

/// A linear layer without bias from a `VarBuilder` (as `candle_nn::linear_no_bias`).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Module, Tensor};
/// use candle_nn::VarBuilder;
/// let vb = VarBuilder::zeros(DType::BF16, &Device::Cpu);
/// let layer = candle_repro::nn::linear_no_bias(8, 2, vb)?;
/// assert!(layer.bias().is_none());
/// let y = layer.forward(&Tensor::ones((5, 8), DType::BF16, &Device::Cpu)?)?;
/// assert_eq!(y.to_dtype(DType::F32)?.to_vec2::<f32>()?, [[0.0; 2]; 5]);
/// # Ok(()) }
/// ```
pub fn linear_no_bias(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<Linear> {
    let ws = vb.get_with_hints(
        (out_dim, in_dim),
        "weight",
        candle_nn::init::DEFAULT_KAIMING_NORMAL,
    )?;
    Ok(Linear::new(ws, None))
}

/// [`linear`] or [`linear_no_bias`] (as `candle_nn::linear_b`).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device};
/// let vb = candle_nn::VarBuilder::zeros(DType::F32, &Device::Cpu);
/// assert!(candle_repro::nn::linear_b(8, 2, false, vb)?.bias().is_none());
/// # Ok(()) }
/// ```
pub fn linear_b(in_dim: usize, out_dim: usize, bias: bool, vb: VarBuilder) -> Result<Linear> {
    if bias {
        linear(in_dim, out_dim, vb)
    } else {
        linear_no_bias(in_dim, out_dim, vb)
    }
}
