//! Correctly rounded matrix products: drop-in replacements for `Tensor::matmul` and
//! `Tensor::broadcast_matmul` whose every output is defined mathematically, so no CPU
//! instruction set, thread count, batch size, tiling or device can change a bit.
//!
//! out[.., i, j] = round(sum over k of a[.., i, k] * b[.., k, j] (+ `bias[j]`)): the exact
//! real sum of the exact products, rounded once to nearest-even into the output dtype
//! (f32, bf16 or f16, the inputs' dtype; f32 or bf16 for f8e4m3 inputs). The definition,
//! its special values, the three tiers and their proofs, and the CPU kernels are the
//! core's ([`repro_core::matmul`]); this module holds the candle ops over them (with
//! backward passes) and the device half (`cuda.rs`, `kernels/matmul/`), which reaches the
//! same values by the same decision and tiers.

/// The core's CPU half (tiers, kernels, plans), shared with the quantized product.
pub(crate) use repro_core::matmul::{Input, cpu, kernel};
/// The device half: launch plans of `kernels/matmul/matmul.cu` over [`crate::launch::Device`].
pub mod cuda;

pub use cpu::CpuConfig;
#[doc(hidden)]
pub use cpu::{TierCounts, tier_counts};

use crate::math::Format;
use crate::ops::core_error;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{
    CpuStorage, CustomOp2, CustomOp3, DType, Error, Layout, Result, Shape, Tensor, bail,
};
use cpu::{Problem, View};
use half::{bf16, f16};
use std::sync::Arc;

/// The element offset of each batch index of a (batch.., rows, cols) layout (its start
/// offset included), in row-major order of the batch indices.
pub(crate) fn batch_bases(layout: &Layout) -> Vec<u64> {
    let dims = layout.dims();
    let strides = layout.stride();
    let batch_dims = &dims[..dims.len() - 2];
    let count: usize = batch_dims.iter().product();
    let mut bases = Vec::with_capacity(count);
    let mut index = vec![0usize; batch_dims.len()];
    for _ in 0..count {
        let base =
            layout.start_offset() + index.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
        bases.push(base as u64);
        for d in (0..batch_dims.len()).rev() {
            index[d] += 1;
            if index[d] < batch_dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    bases
}

/// The 2-D views of each batch index of a (batch.., rows, cols) layout.
fn batch_views<'a, T>(data: &'a [T], layout: &Layout) -> Vec<View<'a, T>> {
    let strides = layout.stride();
    let r = strides.len();
    let (rs, cs) = (strides[r - 2], strides[r - 1]);
    batch_bases(layout)
        .into_iter()
        .map(|base| View {
            data,
            base: base as usize,
            rs,
            cs,
        })
        .collect()
}

/// Shapes of a product: (output shape, m, k, n), with candle's `Tensor::matmul` checks.
pub(crate) fn product_shape(
    a: &Shape,
    b: &Shape,
    op: &'static str,
) -> Result<(Shape, usize, usize, usize)> {
    let (ad, bd) = (a.dims(), b.dims());
    let r = ad.len();
    let mismatch = || Error::ShapeMismatchBinaryOp {
        lhs: a.clone(),
        rhs: b.clone(),
        op,
    };
    if r < 2 || bd.len() != r {
        return Err(mismatch().bt());
    }
    let (m, k, k2, n) = (ad[r - 2], ad[r - 1], bd[r - 2], bd[r - 1]);
    let batch: usize = ad[..r - 2].iter().product();
    let batch_b: usize = bd[..r - 2].iter().product();
    if k != k2 || batch != batch_b {
        return Err(mismatch().bt());
    }
    let out = Shape::from(&ad[..r - 2]).extend(&[m, n]);
    Ok((out, m, k, n))
}

/// The output dtype of a product of `input` tensors when `requested` (None: the default).
fn output_dtype(input: DType, requested: Option<DType>, op: &'static str) -> Result<DType> {
    match (input, requested) {
        (DType::F32 | DType::BF16 | DType::F16, None) => Ok(input),
        (DType::F32 | DType::BF16 | DType::F16, Some(o)) if o == input => Ok(input),
        (DType::F8E4M3, None) => Ok(DType::F32),
        (DType::F8E4M3, Some(o @ (DType::F32 | DType::BF16))) => Ok(o),
        (DType::F32 | DType::BF16 | DType::F16 | DType::F8E4M3, Some(o)) => bail!(
            "candle-repro {op}: {input:?} inputs give {} output, not {o:?}",
            if input == DType::F8E4M3 {
                "f32 or bf16"
            } else {
                "the same dtype as"
            }
        ),
        (other, _) => Err(Error::UnsupportedDTypeForOp(other, op).bt()),
    }
}

/// Checks shared by every product entry point; returns the output dtype.
fn check_operands(
    a: &Tensor,
    b: &Tensor,
    requested: Option<DType>,
    op: &'static str,
) -> Result<DType> {
    if !a.device().same_device(b.device()) {
        return Err(Error::DeviceMismatchBinaryOp {
            lhs: a.device().location(),
            rhs: b.device().location(),
            op,
        }
        .bt());
    }
    if a.dtype() != b.dtype() {
        return Err(Error::DTypeMismatchBinaryOp {
            lhs: a.dtype(),
            rhs: b.dtype(),
            op,
        }
        .bt());
    }
    output_dtype(a.dtype(), requested, op)
}

/// Column stats of a weight prepared once (see [`crate::nn::Linear`]).
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    pub cols: Vec<cpu::LineStats>,
}

/// One CPU product: the sizes, the widened bias and the plan knobs.
struct Job<'p> {
    m: usize,
    k: usize,
    n: usize,
    bias: Option<Vec<f32>>,
    cfg: CpuConfig,
    prepared: Option<&'p [cpu::LineStats]>,
}

impl Job<'_> {
    fn run<T: Input, O: Format>(
        self,
        a: &[T],
        la: &Layout,
        b: &[T],
        lb: &Layout,
    ) -> Result<Vec<O>> {
        let p = Problem::new(
            (self.m, self.k, self.n),
            batch_views(a, la),
            batch_views(b, lb),
            self.bias,
        )
        .map_err(core_error)?;
        repro_core::matmul::matmul_with::<T, O>(&p, self.cfg, self.prepared).map_err(core_error)
    }
}

/// The stats of a weight (out, in) that a product against its transpose needs (its rows'
/// norms and sign classes), for a CPU tensor of an input dtype; None elsewhere.
pub(crate) fn prepare_weight(w: &Tensor) -> Result<Option<Prepared>> {
    let (n, k) = w.dims2()?;
    let (storage, layout) = w.storage_and_layout();
    let candle_core::Storage::Cpu(s) = &*storage else {
        return Ok(None);
    };
    // w^T: element (q, j) is w[j][q].
    let (st, base) = (layout.stride(), layout.start_offset());
    fn cols<T: Input>(
        data: &[T],
        base: usize,
        st: &[usize],
        k: usize,
        n: usize,
    ) -> Result<Vec<cpu::LineStats>> {
        let b = View {
            data,
            base,
            rs: st[1],
            cs: st[0],
        };
        repro_core::matmul::column_stats(b, k, n).map_err(core_error)
    }
    let cols = match s {
        CpuStorage::F32(d) => cols(d, base, st, k, n)?,
        CpuStorage::BF16(d) => cols(d, base, st, k, n)?,
        CpuStorage::F16(d) => cols(d, base, st, k, n)?,
        CpuStorage::F8E4M3(d) => cols(d, base, st, k, n)?,
        _ => return Ok(None),
    };
    Ok(Some(Prepared { cols }))
}

/// The product op, with or without a fused bias.
#[derive(Clone)]
struct Matmul {
    out: DType,
    cfg: Option<CpuConfig>,
    prepared: Option<Arc<Prepared>>,
}

impl Matmul {
    /// The tier the products start from (tests set it through the CPU configuration;
    /// the CUDA half honours it too).
    #[cfg(feature = "cuda")]
    fn start_tier(&self) -> Option<u8> {
        self.cfg.and_then(|c| c.start_tier)
    }

    /// The device's tier-1 kernel: the integer tier where the configuration asks for it
    /// (`CpuConfig::int_tier = Some(true)`), else the default.
    #[cfg(feature = "cuda")]
    fn tier1(&self) -> cuda::Tier1 {
        match self.cfg.and_then(|c| c.int_tier) {
            Some(true) if self.cfg.is_some_and(|c| c.int_tiled) => cuda::Tier1::Int8Tiled,
            Some(true) => cuda::Tier1::Int8Slices,
            Some(false) => cuda::Tier1::F64Tiles,
            None => cuda::Tier1::Auto,
        }
    }

    fn cpu(
        &self,
        a: (&CpuStorage, &Layout),
        b: (&CpuStorage, &Layout),
        bias: Option<(&CpuStorage, &Layout)>,
    ) -> Result<(CpuStorage, Shape)> {
        let (shape, m, k, n) = product_shape(a.1.shape(), b.1.shape(), "matmul")?;
        let bias = match bias {
            None => None,
            Some((s, l)) => {
                if l.dims() != [n] {
                    bail!(
                        "candle-repro matmul: bias shape {:?}, expected [{n}]",
                        l.dims()
                    );
                }
                if s.dtype() != self.out {
                    bail!(
                        "candle-repro matmul: bias dtype {:?}, expected {:?}",
                        s.dtype(),
                        self.out
                    );
                }
                Some(match s {
                    CpuStorage::F32(v) => logical_elements(v, l).to_vec(),
                    CpuStorage::BF16(v) => {
                        logical_elements(v, l).iter().map(|x| x.widen()).collect()
                    }
                    CpuStorage::F16(v) => {
                        logical_elements(v, l).iter().map(|x| x.widen()).collect()
                    }
                    _ => unreachable!("checked: the output dtype"),
                })
            }
        };
        let job = Job {
            m,
            k,
            n,
            bias,
            cfg: self.cfg.unwrap_or_default(),
            prepared: self.prepared.as_ref().map(|p| p.cols.as_slice()),
        };
        let out = match (a.0, b.0, self.out) {
            (CpuStorage::F32(x), CpuStorage::F32(y), DType::F32) => {
                CpuStorage::F32(job.run::<f32, f32>(x, a.1, y, b.1)?)
            }
            (CpuStorage::BF16(x), CpuStorage::BF16(y), DType::BF16) => {
                CpuStorage::BF16(job.run::<bf16, bf16>(x, a.1, y, b.1)?)
            }
            (CpuStorage::F16(x), CpuStorage::F16(y), DType::F16) => {
                CpuStorage::F16(job.run::<f16, f16>(x, a.1, y, b.1)?)
            }
            (CpuStorage::F8E4M3(x), CpuStorage::F8E4M3(y), DType::F32) => {
                CpuStorage::F32(job.run::<float8::F8E4M3, f32>(x, a.1, y, b.1)?)
            }
            (CpuStorage::F8E4M3(x), CpuStorage::F8E4M3(y), DType::BF16) => {
                CpuStorage::BF16(job.run::<float8::F8E4M3, bf16>(x, a.1, y, b.1)?)
            }
            (x, _, _) => return Err(Error::UnsupportedDTypeForOp(x.dtype(), "matmul").bt()),
        };
        Ok((out, shape))
    }

    /// Gradients of out = a b (+ bias) from the output's gradient g: a's is g b^T, b's
    /// is a^T g and the bias's the column sums of g, each a product of this definition
    /// (the bias's as ones(1, rows) times g).
    fn grads(
        &self,
        a: &Tensor,
        b: &Tensor,
        bias: bool,
        g: &Tensor,
    ) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        if a.dtype() == DType::F8E4M3 {
            return Err(Error::BackwardNotSupported {
                op: "repro-matmul (f8e4m3)",
            }
            .bt());
        }
        let ga = matmul(g, &b.t()?)?;
        let gb = matmul(&a.t()?, g)?;
        let gbias = if bias {
            let n = g.dim(g.rank() - 1)?;
            let rows = g.elem_count() / n.max(1);
            let g2 = g.reshape((rows, n))?;
            let ones = Tensor::ones((1, rows), g.dtype(), g.device())?;
            Some(matmul(&ones, &g2)?.reshape(n)?)
        } else {
            None
        };
        Ok((ga, gb, gbias))
    }
}

impl CustomOp2 for Matmul {
    fn name(&self) -> &'static str {
        "repro-matmul"
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
        let (out, shape) = cuda::matmul_tier1(
            &s1.device,
            (s1, l1),
            (s2, l2),
            None,
            self.out,
            self.start_tier(),
            self.tier1(),
        )?;
        Ok((out, shape))
    }

    fn bwd(
        &self,
        a: &Tensor,
        b: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (ga, gb, _) = self.grads(a, b, false, g)?;
        Ok((Some(ga), Some(gb)))
    }
}

impl CustomOp3 for Matmul {
    fn name(&self) -> &'static str {
        "repro-matmul-bias"
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
        let (_, _, _, n) = product_shape(l1.shape(), l2.shape(), "matmul")?;
        if l3.dims() != [n] || s3.dtype() != self.out {
            bail!(
                "candle-repro matmul: bias must be a {:?} vector of {n} values",
                self.out
            );
        }
        let bias = Some((s3, l3));
        cuda::matmul_tier1(
            &s1.device,
            (s1, l1),
            (s2, l2),
            bias,
            self.out,
            self.start_tier(),
            self.tier1(),
        )
    }

    fn bwd(
        &self,
        a: &Tensor,
        b: &Tensor,
        _bias: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (ga, gb, gbias) = self.grads(a, b, true, g)?;
        Ok((Some(ga), Some(gb), gbias))
    }
}

/// The product with every option: output dtype, a fused bias, a CPU configuration (tests)
/// and prepared column stats of b.
pub(crate) fn product(
    a: &Tensor,
    b: &Tensor,
    bias: Option<&Tensor>,
    out: Option<DType>,
    cfg: Option<CpuConfig>,
    prepared: Option<Arc<Prepared>>,
) -> Result<Tensor> {
    let op_name = "matmul";
    let out = check_operands(a, b, out, op_name)?;
    let (_, _, _, n) = product_shape(a.shape(), b.shape(), op_name)?;
    let op = Matmul { out, cfg, prepared };
    match bias {
        None => a.apply_op2_arc(b, Arc::new(Box::new(op))),
        Some(c) => {
            if !c.device().same_device(a.device()) {
                return Err(Error::DeviceMismatchBinaryOp {
                    lhs: a.device().location(),
                    rhs: c.device().location(),
                    op: op_name,
                }
                .bt());
            }
            if c.dims() != [n] || c.dtype() != out {
                bail!(
                    "candle-repro matmul: bias must be a {out:?} vector of {n} values, got {:?} {:?}",
                    c.dtype(),
                    c.dims()
                );
            }
            a.apply_op3_arc(b, c, Arc::new(Box::new(op)))
        }
    }
}

/// `a.matmul(b)`, correctly rounded: a (.., m, k) times b (.., k, n) with the same batch
/// dimensions (as candle: the same number of batch elements), f32, bf16 or f16 (both
/// inputs the same dtype, the output too) or f8e4m3 (f32 output; [`matmul_to`] for bf16).
/// Any layout: a transposed weight `w.t()` is read in place.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::matmul;
/// // 1e8 + 1 - 1e8: a running f32 sum loses the 1; the exact sum rounded once keeps it.
/// let a = Tensor::new(&[[1e8f32, 1., -1e8]], &Device::Cpu)?;
/// let b = Tensor::new(&[[1f32], [1.], [1.]], &Device::Cpu)?;
/// assert_eq!(matmul(&a, &b)?.to_vec2::<f32>()?, [[1.0]]);
///
/// // A row alone (decode) has the bits it has inside a batch (prefill), with a transposed
/// // weight read in place.
/// let x = Tensor::randn(0f32, 1., (16, 64), &Device::Cpu)?;
/// let w = Tensor::randn(0f32, 1., (48, 64), &Device::Cpu)?;
/// let all = matmul(&x, &w.t()?)?;
/// let row = matmul(&x.narrow(0, 7, 1)?, &w.t()?)?;
/// assert_eq!(row.get(0)?.to_vec1::<f32>()?, all.get(7)?.to_vec1::<f32>()?);
/// // bf16 and f16 are rounded once from the exact sum, too.
/// let h = matmul(&x.to_dtype(DType::BF16)?, &w.t()?.to_dtype(DType::BF16)?)?;
/// assert_eq!(h.dims(), [16, 48]);
/// # Ok(()) }
/// ```
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    product(a, b, None, None, None, None)
}

/// [`matmul`] into a chosen output dtype: the inputs' for f32, bf16 and f16, f32 or bf16
/// for f8e4m3 inputs.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::{Overflow, matmul_to, to_f8e4m3};
/// let a = to_f8e4m3(&Tensor::new(&[[1.5f32, 2.0]], &Device::Cpu)?, Overflow::Saturate)?;
/// let b = to_f8e4m3(&Tensor::new(&[[4f32], [0.25]], &Device::Cpu)?, Overflow::Saturate)?;
/// let y = matmul_to(&a, &b, DType::BF16)?;
/// assert_eq!(y.dtype(), DType::BF16);
/// assert_eq!(y.to_dtype(DType::F32)?.to_vec2::<f32>()?, [[6.5]]);
/// # Ok(()) }
/// ```
pub fn matmul_to(a: &Tensor, b: &Tensor, out: DType) -> Result<Tensor> {
    product(a, b, None, Some(out), None, None)
}

/// a b + bias with one rounding: out[.., i, j] = round(sum_k a[.., i, k] b[.., k, j] +
/// `bias[j]`). The bias is a vector of n values in the output dtype.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// // 1 + 2^-24 + 2^-24: rounding a b first (to 1, a tie) and then adding the bias gives
/// // 1; the exact value rounded once is 1 + 2^-23.
/// let t = 2f32.powi(-24);
/// let a = Tensor::new(&[[1f32, t]], &Device::Cpu)?;
/// let b = Tensor::new(&[[1f32], [1.]], &Device::Cpu)?;
/// let bias = Tensor::new(&[t], &Device::Cpu)?;
/// let y = candle_repro::matmul_bias(&a, &b, &bias)?.to_vec2::<f32>()?;
/// assert_eq!(y, [[1.0 + 2f32.powi(-23)]]);
/// # Ok(()) }
/// ```
pub fn matmul_bias(a: &Tensor, b: &Tensor, bias: &Tensor) -> Result<Tensor> {
    product(a, b, Some(bias), None, None, None)
}

/// [`matmul`] (with an optional fused bias and output dtype) under a chosen CPU
/// configuration (vector path, k-blocking, GEMV on or off, tiers): for tests that show none of them changes a bit.
#[doc(hidden)]
pub fn matmul_with_config(
    a: &Tensor,
    b: &Tensor,
    bias: Option<&Tensor>,
    out: Option<DType>,
    cfg: CpuConfig,
) -> Result<Tensor> {
    product(a, b, bias, out, Some(cfg), None)
}

/// The shapes both operands of a broadcast product take (candle's rules: the batch
/// dimensions broadcast as in binary ops).
fn broadcast_shapes(a: &Shape, b: &Shape) -> Result<(Shape, Shape)> {
    let (ad, bd) = (a.dims(), b.dims());
    if ad.len() < 2 || bd.len() < 2 {
        return Err(Error::ShapeMismatchBinaryOp {
            lhs: a.clone(),
            rhs: b.clone(),
            op: "broadcast_matmul",
        }
        .bt());
    }
    let (m, k) = (ad[ad.len() - 2], ad[ad.len() - 1]);
    let (k2, n) = (bd[bd.len() - 2], bd[bd.len() - 1]);
    if k != k2 {
        return Err(Error::ShapeMismatchBinaryOp {
            lhs: a.clone(),
            rhs: b.clone(),
            op: "broadcast_matmul",
        }
        .bt());
    }
    let batch = Shape::from(&ad[..ad.len() - 2])
        .broadcast_shape_binary_op(&Shape::from(&bd[..bd.len() - 2]), "broadcast_matmul")?;
    Ok((batch.clone().extend(&[m, k]), batch.extend(&[k, n])))
}

/// `a.broadcast_matmul(b)`, correctly rounded: the batch dimensions broadcast as in
/// candle. Broadcast operands are read through stride-0 views, not copied; a rank-2 `b`
/// against a contiguous `a` is one 2-D product over a's folded rows, as in candle. The
/// backward pass of the other broadcast cases sums the gradient over the broadcast
/// dimensions with candle's own (not exact) `sum`.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// let x = Tensor::randn(0f32, 1., (2, 3, 8), &Device::Cpu)?;
/// let w = Tensor::randn(0f32, 1., (8, 5), &Device::Cpu)?;
/// let y = candle_repro::broadcast_matmul(&x, &w)?;
/// assert_eq!(y.dims(), [2, 3, 5]);
/// // Each batch element is the plain product of its own matrices.
/// let y1 = candle_repro::matmul(&x.get(1)?, &w)?;
/// assert_eq!(y.get(1)?.to_vec2::<f32>()?, y1.to_vec2::<f32>()?);
/// # Ok(()) }
/// ```
pub fn broadcast_matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (l_shape, r_shape) = broadcast_shapes(a.shape(), b.shape())?;
    if b.rank() == 2 && l_shape == *a.shape() && a.is_contiguous() && a.rank() > 2 {
        let dims = a.dims();
        let (m, k) = (dims[a.rank() - 2], dims[a.rank() - 1]);
        let batch: usize = dims[..a.rank() - 2].iter().product();
        let mut out_dims = dims.to_vec();
        *out_dims.last_mut().unwrap() = b.dim(1)?;
        return matmul(&a.reshape((batch * m, k))?, b)?.reshape(out_dims);
    }
    matmul(&a.broadcast_as(&l_shape)?, &b.broadcast_as(&r_shape)?)
}
