//! RMSNorm and LayerNorm over the last dimension, correctly rounded: drop-ins for
//! `candle_nn::ops::{rms_norm, layer_norm}` and the `candle_nn` modules, whose bits do not
//! depend on the batch, the thread count, the vector width or the device.
//!
//! The definition, the tiers and their bounds, the CPU rows and the backward pass are the
//! core's ([`repro_core::norm`]); this module holds the candle ops and modules over them and
//! the device half (`kernels/norm/norm.cu`, mirrored from the core's rows).

use crate::ops::buffer;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{
    CpuStorage, CustomOp2, CustomOp3, DType, Device, Error, Layout, Module, Result, Shape, Tensor,
    bail,
};
use half::{bf16, f16};
use repro_core::math::Format;
pub(crate) use repro_core::norm::NormParams;
use repro_core::norm::{norm_backward, norm_rows};

#[derive(Clone, Copy, Debug)]
struct Norm(NormParams);

impl Norm {
    fn cpu(
        &self,
        x: (&CpuStorage, &Layout),
        w: (&CpuStorage, &Layout),
        b: Option<(&CpuStorage, &Layout)>,
    ) -> Result<(CpuStorage, Shape)> {
        fn run<F: Format>(
            p: NormParams,
            x: (&[F], &Layout),
            w: (&[F], &Layout),
            b: Option<(&[F], &Layout)>,
        ) -> Vec<F> {
            let xs = logical_elements(x.0, x.1);
            let ws = logical_elements(w.0, w.1);
            let bs = b.map(|(b, l)| logical_elements(b, l));
            let mut out = buffer::uninit::<F>(xs.len());
            norm_rows(&xs, &ws, bs.as_deref(), p, &mut out);
            // SAFETY: every row, hence every element, was written.
            unsafe { buffer::assume_init(out) }
        }
        let p = self.0;
        let out = match (x.0, w.0, b.map(|b| b.0)) {
            (CpuStorage::F32(xv), CpuStorage::F32(wv), None) => {
                CpuStorage::F32(run(p, (xv, x.1), (wv, w.1), None))
            }
            (CpuStorage::F32(xv), CpuStorage::F32(wv), Some(CpuStorage::F32(bv))) => {
                CpuStorage::F32(run(p, (xv, x.1), (wv, w.1), Some((bv, b.unwrap().1))))
            }
            (CpuStorage::BF16(xv), CpuStorage::BF16(wv), None) => {
                CpuStorage::BF16(run(p, (xv, x.1), (wv, w.1), None))
            }
            (CpuStorage::BF16(xv), CpuStorage::BF16(wv), Some(CpuStorage::BF16(bv))) => {
                CpuStorage::BF16(run(p, (xv, x.1), (wv, w.1), Some((bv, b.unwrap().1))))
            }
            (CpuStorage::F16(xv), CpuStorage::F16(wv), None) => {
                CpuStorage::F16(run(p, (xv, x.1), (wv, w.1), None))
            }
            (CpuStorage::F16(xv), CpuStorage::F16(wv), Some(CpuStorage::F16(bv))) => {
                CpuStorage::F16(run(p, (xv, x.1), (wv, w.1), Some((bv, b.unwrap().1))))
            }
            (xs, _, _) => return Err(Error::UnsupportedDTypeForOp(xs.dtype(), self.name()).bt()),
        };
        Ok((out, x.1.shape().clone()))
    }

    fn name(&self) -> &'static str {
        if self.0.remove_mean {
            "repro-layer-norm"
        } else {
            "repro-rms-norm"
        }
    }
}

impl CustomOp2 for Norm {
    fn name(&self) -> &'static str {
        Norm::name(self)
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        self.cpu((s1, l1), (s2, l2), None)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let p = self.0;
        let out = cuda::norm(
            &s1.device,
            p.remove_mean,
            p.eps,
            p.exact_only,
            (s1, l1),
            (s2, l2),
            None,
        )?;
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (dx, dw, _) = backward(self.0, x, w, None, g)?;
        Ok((Some(dx), Some(dw)))
    }
}

impl CustomOp3 for Norm {
    fn name(&self) -> &'static str {
        Norm::name(self)
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        self.cpu((s1, l1), (s2, l2), Some((s3, l3)))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
        s3: &candle_core::CudaStorage,
        l3: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let p = self.0;
        let b = Some((s3, l3));
        let out = cuda::norm(
            &s1.device,
            p.remove_mean,
            p.eps,
            p.exact_only,
            (s1, l1),
            (s2, l2),
            b,
        )?;
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (dx, dw, db) = backward(self.0, x, w, Some(b), g)?;
        Ok((Some(dx), Some(dw), db))
    }
}

/// Checks shared by the entry points; returns the feature size.
fn check(x: &Tensor, w: &Tensor, b: Option<&Tensor>, eps: f32, op: &'static str) -> Result<usize> {
    let n = x.dim(candle_core::D::Minus1)?;
    let nw = w.dims1()?;
    if nw != n || b.is_some_and(|b| b.dims1().ok() != Some(n)) {
        bail!(
            "candle-repro {op}: shape mismatch: x {:?}, weight {:?}, bias {:?}",
            x.shape(),
            w.shape(),
            b.map(|b| b.shape().clone())
        )
    }
    for t in [Some(w), b].into_iter().flatten() {
        if t.dtype() != x.dtype() {
            return Err(Error::DTypeMismatchBinaryOp {
                lhs: x.dtype(),
                rhs: t.dtype(),
                op,
            }
            .bt());
        }
        if !t.device().same_device(x.device()) {
            return Err(Error::DeviceMismatchBinaryOp {
                lhs: x.device().location(),
                rhs: t.device().location(),
                op,
            }
            .bt());
        }
    }
    if !matches!(x.dtype(), DType::F32 | DType::BF16 | DType::F16) {
        return Err(Error::UnsupportedDTypeForOp(x.dtype(), op).bt());
    }
    if !(eps.is_finite() && eps >= 0.0) {
        bail!("candle-repro {op}: eps must be finite and >= 0, got {eps}")
    }
    Ok(n)
}

/// RMSNorm over the last dimension, correctly rounded (the signature of
/// `candle_nn::ops::rms_norm`): x (.., n), weight `alpha` (n).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// let x = Tensor::new(&[[3f32, 4.]], &Device::Cpu)?;
/// let w = Tensor::new(&[1f32, 1.], &Device::Cpu)?;
/// let y = candle_repro::nn::rms_norm(&x, &w, 0.0)?.to_vec2::<f32>()?;
/// // 3 / sqrt(12.5) and 4 / sqrt(12.5), rounded once (bits from mpmath).
/// assert_eq!([y[0][0].to_bits(), y[0][1].to_bits()], [0x3F59_3924, 0x3F90_D0C3]);
/// # Ok(()) }
/// ```
pub fn rms_norm(xs: &Tensor, alpha: &Tensor, eps: f32) -> Result<Tensor> {
    check(xs, alpha, None, eps, "rms-norm")?;
    let op = Norm(NormParams {
        remove_mean: false,
        eps,
        exact_only: false,
    });
    xs.apply_op2_arc(alpha, std::sync::Arc::new(Box::new(op)))
}

/// LayerNorm over the last dimension, correctly rounded (the signature of
/// `candle_nn::ops::layer_norm`): x (.., n), weight `alpha` (n), bias `beta` (n).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// let x = Tensor::new(&[[1f32, 2., 3., 4.]], &Device::Cpu)?;
/// let w = Tensor::new(&[1f32; 4], &Device::Cpu)?;
/// let b = Tensor::new(&[0f32, 0., 0., 10.], &Device::Cpu)?;
/// let y = candle_repro::nn::layer_norm(&x, &w, &b, 0.0)?.to_vec2::<f32>()?;
/// // (x - 2.5) / sqrt(1.25) (+ 10 in the last channel), each rounded once.
/// assert_eq!(y[0][0].to_bits(), 0xBFAB_BAE3);
/// assert_eq!(y[0][1].to_bits(), 0xBEE4_F92E);
/// assert_eq!(y[0][3], 10.0 + 1.341_640_8);
/// # Ok(()) }
/// ```
pub fn layer_norm(xs: &Tensor, alpha: &Tensor, beta: &Tensor, eps: f32) -> Result<Tensor> {
    check(xs, alpha, Some(beta), eps, "layer-norm")?;
    let op = Norm(NormParams {
        remove_mean: true,
        eps,
        exact_only: false,
    });
    xs.apply_op3_arc(alpha, beta, std::sync::Arc::new(Box::new(op)))
}

/// LayerNorm without a bias (`candle_nn::LayerNorm::new_no_bias`).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// let x = Tensor::new(&[[7f32, 7., 7.]], &Device::Cpu)?;
/// let w = Tensor::new(&[1f32; 3], &Device::Cpu)?;
/// // A constant row has zero variance: (x - mean) / sqrt(0 + eps) = 0.
/// let y = candle_repro::nn::layer_norm_no_bias(&x, &w, 1e-5)?.to_vec2::<f32>()?;
/// assert_eq!(y, [[0.0; 3]]);
/// # Ok(()) }
/// ```
pub fn layer_norm_no_bias(xs: &Tensor, alpha: &Tensor, eps: f32) -> Result<Tensor> {
    check(xs, alpha, None, eps, "layer-norm")?;
    let op = Norm(NormParams {
        remove_mean: true,
        eps,
        exact_only: false,
    });
    xs.apply_op2_arc(alpha, std::sync::Arc::new(Box::new(op)))
}

/// Either norm with tier 1 on or off (`exact_only`: every output from the exact tier),
/// for tests that check each tier against the oracle.
#[doc(hidden)]
pub fn norm_with(
    xs: &Tensor,
    alpha: &Tensor,
    beta: Option<&Tensor>,
    eps: f32,
    remove_mean: bool,
    exact_only: bool,
) -> Result<Tensor> {
    check(xs, alpha, beta, eps, "norm")?;
    let op = Norm(NormParams {
        remove_mean,
        eps,
        exact_only,
    });
    match beta {
        Some(b) => xs.apply_op3_arc(alpha, b, std::sync::Arc::new(Box::new(op))),
        None => xs.apply_op2_arc(alpha, std::sync::Arc::new(Box::new(op))),
    }
}

/// The backward pass: the core's [`norm_backward`] (a fixed sequence of f64 operations per
/// row, rounded once to the dtype at the end) on the values read to the CPU. CUDA tensors
/// are differentiated on the CPU.
pub(crate) fn backward(
    p: NormParams,
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    g: &Tensor,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    fn run<F: Format + candle_core::WithDType>(
        p: NormParams,
        x: &Tensor,
        w: &Tensor,
        b: Option<&Tensor>,
        g: &Tensor,
    ) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        let dev = x.device();
        let read = |t: &Tensor| -> Result<Vec<F>> {
            t.to_device(&Device::Cpu)?.flatten_all()?.to_vec1::<F>()
        };
        let grads = norm_backward(p, &read(x)?, &read(w)?, &read(g)?);
        let make =
            |v: Vec<F>, t: &Tensor| Tensor::from_vec(v, t.shape(), &Device::Cpu)?.to_device(dev);
        let db = match b {
            Some(b) => Some(make(grads.db, b)?),
            None => None,
        };
        Ok((make(grads.dx, x)?, make(grads.dw, w)?, db))
    }
    match x.dtype() {
        DType::F32 => run::<f32>(p, x, w, b, g),
        DType::BF16 => run::<bf16>(p, x, w, b, g),
        DType::F16 => run::<f16>(p, x, w, b, g),
        d => bail!("candle-repro norm backward: unsupported dtype {d:?}"),
    }
}

/// `candle_nn::RmsNorm`'s drop-in: RMSNorm with a weight (n) and eps.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Module, Tensor};
/// use candle_repro::nn::RmsNorm;
/// let norm = RmsNorm::new(Tensor::ones(64, DType::BF16, &Device::Cpu)?, 1e-5);
/// let x = Tensor::randn(0f32, 1., (2, 5, 64), &Device::Cpu)?.to_dtype(DType::BF16)?;
/// let y = norm.forward(&x)?;
/// // One token alone has the bits it has inside the batch.
/// let one = norm.forward(&x.narrow(0, 0, 1)?.narrow(1, 3, 1)?)?;
/// assert_eq!(
///     one.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()?,
///     y.get(0)?.get(3)?.to_dtype(DType::F32)?.to_vec1::<f32>()?,
/// );
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RmsNorm {
    weight: Tensor,
    eps: f64,
}

impl RmsNorm {
    /// As `candle_nn::RmsNorm::new`.
    pub fn new(weight: Tensor, eps: f64) -> Self {
        RmsNorm { weight, eps }
    }

    /// Loaded from a `VarBuilder` as `candle_nn::rms_norm` does (name "weight", init 1).
    pub fn load(size: usize, eps: f64, vb: candle_nn::VarBuilder) -> Result<Self> {
        let weight = vb.get_with_hints(size, "weight", candle_nn::Init::Const(1.))?;
        Ok(RmsNorm::new(weight, eps))
    }

    /// The per-channel scale.
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The epsilon added to the mean square (used as f32 in the forward pass).
    pub fn eps(&self) -> f64 {
        self.eps
    }
}

impl Module for RmsNorm {
    /// eps is used as f32, as candle's kernels use it.
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        rms_norm(xs, &self.weight, self.eps as f32)
    }
}

/// `candle_nn::LayerNorm`'s drop-in: mean removed, weight, optional bias, eps.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Module, Tensor};
/// use candle_nn::VarBuilder;
/// let vb = VarBuilder::zeros(DType::F32, &Device::Cpu);
/// // With remove_mean = true (candle_nn's default config); weight and bias from `vb`.
/// let norm = candle_repro::nn::LayerNorm::load(4, 1e-5, vb)?;
/// let y = norm.forward(&Tensor::new(&[[1f32, 2., 3., 4.]], &Device::Cpu)?)?;
/// assert_eq!(y.to_vec2::<f32>()?, [[0.0; 4]]); // a zero weight from VarBuilder::zeros
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct LayerNorm {
    weight: Tensor,
    bias: Option<Tensor>,
    eps: f64,
}

impl LayerNorm {
    /// As `candle_nn::LayerNorm::new`.
    pub fn new(weight: Tensor, bias: Tensor, eps: f64) -> Self {
        LayerNorm {
            weight,
            bias: Some(bias),
            eps,
        }
    }

    /// As `candle_nn::LayerNorm::new_no_bias`.
    pub fn new_no_bias(weight: Tensor, eps: f64) -> Self {
        LayerNorm {
            weight,
            bias: None,
            eps,
        }
    }

    /// Loaded from a `VarBuilder` as `candle_nn::layer_norm` does (names "weight" or
    /// "gamma", "bias" or "beta"; init 1 and 0). `remove_mean = false` in the config is
    /// refused: use [`RmsNorm`].
    pub fn load(
        size: usize,
        config: impl Into<candle_nn::LayerNormConfig>,
        vb: candle_nn::VarBuilder,
    ) -> Result<Self> {
        let config = config.into();
        if !config.remove_mean {
            bail!("candle-repro LayerNorm: remove_mean = false is RmsNorm")
        }
        let pick = |names: [&'static str; 2]| {
            names
                .into_iter()
                .find(|n| vb.contains_tensor(n))
                .unwrap_or(names[0])
        };
        let weight =
            vb.get_with_hints(size, pick(["weight", "gamma"]), candle_nn::Init::Const(1.))?;
        let bias = if config.affine {
            Some(vb.get_with_hints(size, pick(["bias", "beta"]), candle_nn::Init::Const(0.))?)
        } else {
            None
        };
        Ok(LayerNorm {
            weight,
            bias,
            eps: config.eps,
        })
    }

    /// The per-channel scale.
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The per-channel shift, if the norm has one.
    pub fn bias(&self) -> Option<&Tensor> {
        self.bias.as_ref()
    }

    /// The epsilon added to the variance (used as f32 in the forward pass).
    pub fn eps(&self) -> f64 {
        self.eps
    }
}

impl Module for LayerNorm {
    /// eps is used as f32, as candle's kernels use it.
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        match &self.bias {
            Some(b) => layer_norm(xs, &self.weight, b, self.eps as f32),
            None => layer_norm_no_bias(xs, &self.weight, self.eps as f32),
        }
    }
}

/// The device half: launch plans of `kernels/norm/norm.cu` over [`crate::launch::Device`].
pub mod cuda;
