//! Correctly rounded matrix products: drop-in replacements for `Tensor::matmul` and
//! `Tensor::broadcast_matmul` whose every output is defined mathematically, so no CPU
//! instruction set, thread count, batch size, tiling or device can change a bit.
//!
//! # Definition
//! out[.., i, j] = round(sum over k of a[.., i, k] * b[.., k, j] (+ `bias[j]`)): the exact
//! real sum of the exact products, rounded once to nearest-even into the output dtype
//! (f32, bf16 or f16, the inputs' dtype; f32 or bf16 for f8e4m3 inputs). Overflow gives
//! +-inf as IEEE rounding does. Special values are those of an IEEE sum of the exact
//! products in any order: NaN if any product is NaN (a NaN input, or 0 * inf) or if
//! products +inf and -inf meet, +-inf if an infinite product remains; an exact zero sum is
//! -0 exactly when every term (each product, and the bias) is -0, and +0 otherwise (an
//! empty sum, k = 0, is +0 or the bias). Every NaN is the canonical quiet NaN.
//!
//! # How the CPU reaches it (`cpu.rs`)
//! Every input widens exactly to f32, and a product of two f32 is exact in f64 (48-bit
//! significands, exponents from -298 to 256). So:
//!
//! 1. Tier 1 sums the products (and the bias) in f64, in whatever order the kernel likes:
//!    a blocked GEMM with a register micro-kernel (`kernel.rs`) or, for at most four rows
//!    against a B contiguous along k, a streaming GEMV. Any summation tree of n = k + 1
//!    terms has |computed - exact| <= gamma_n sum|terms|, gamma_n = n u / (1 - n u), u =
//!    2^-53 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., 4.2;
//!    additions of a zero are exact and do not count). By Cauchy-Schwarz, sum|a_k b_k| <=
//!    |a|_2 |b|_2, computed once per row of A and column of B in f64 (within (1 + k u) of
//!    the true norms). For k < 2^26 the bound used, err = n 2^-53 (1 + 2^-20) (|a| |b| +
//!    |bias|) with the computed norms, exceeds gamma_n (1 + k u)^2 (|a| |b| + |bias|) and
//!    the four roundings of its own evaluation. The output is accepted when every number
//!    within err of the f64 sum rounds to the same value of the dtype
//!    (`crate::math::round::round_within`); with err = 0 and a zero sum (all products
//!    zero) the sign of the zero comes from the sign bits of the row and column.
//!    f8e4m3 products are multiples of 2^-18 below 2^17.7, so for k <= 2^17 every partial
//!    sum is exact in f64 in any order: err = 0 (the one rounding of adding the bias is
//!    covered by the test's own widening).
//!
//!    **The float route** (the GEMM on bf16 and f16 inputs, where `cpu::float_route`
//!    takes it: bf16 on the AVX2 and baseline paths, where it was measured faster): the
//!    products are summed in f32 multiply-adds, each lane in k order, in runs of R = 8
//!    consecutive k (`kernel::RUN`, restarting at every k-block); the run sums are added
//!    in f32 in groups of G = 8 runs (`kernel::GROUP`), and each group's sum is widened
//!    exactly and added to the f64 sum of its output, in any order. The bound:
//!    * every step rounds once: an FMA computes s + ab exactly and rounds it, and a
//!      product of two bf16 (8-bit significands) or f16 (11-bit) values has at most 22
//!      significant bits, so an unfused multiply is exact too, except that a bf16
//!      product below 2^-126 may round (bf16 has f32's exponent range). With u = 2^-24,
//!      each step's result is v (1 + d) + e with v the exact sum of its operands, |d| <=
//!      u and |e| <= 2^-148 (at most 2^-150 from a product's rounding, 2^-150 from the
//!      sum's in the subnormal range; e = 0 for f16 inputs, whose products and their
//!      sums are multiples of 2^-48, and nonzero ones at least 2^-48, normal in f32);
//!    * a run of r <= R products p_q (the first step, 0 + p, exact but for e) is within
//!      ((1 + u)^(r-1) - 1) P + r (1 + u)^(r-1) 2^-148 of its exact sum, P = sum |p_q|
//!      (Higham 4.3, recursive summation), so within gamma_(R-1) P + 2R 2^-148; a group
//!      of g <= G run sums, recursively summed, adds gamma_(G-1) (1 + gamma_(R-1)) of
//!      the sum of |products| of the group (sums of two f32 values that land below
//!      2^-126 are exact: no e there). Over all groups: (gamma_(R-1) + gamma_(G-1) (1 +
//!      gamma_(R-1))) sum|a_k b_k| + 2k 2^-148 <= (R + G - 2) u (1 + 2^-19) sum|a_k b_k|
//!      + k 2^-147;
//!    * the f64 sum of the groups' f32 sums (exact in f64) and the bias, at most k + 1
//!      terms in any order, adds gamma_(k+1) (2^-53) of the sum of their magnitudes,
//!      each within the above of its exact value;
//!    * with Cauchy-Schwarz and the computed norms as above, the bound used, err = c
//!      (|a| |b| + |bias|) + k 2^-145 (the last term for bf16 inputs and only when
//!      |a| |b| > 0: a zero row or column gives exact zeros), c = ((R + G - 2) 2^-24 +
//!      (k + 1 + bias) 2^-53) (1 + 2^-16), covers all of it and the roundings of its own
//!      evaluation for k < 2^26.
//!
//!    Infinities and NaN: a product or sum beyond f32's range becomes +-inf (f32
//!    overflows where the f64 route would not: bf16 values reach 2^128, their products
//!    2^256), and +inf meeting -inf gives NaN; either one stays in the f64 sum, and the
//!    rounding test never accepts a non-finite sum, so such an output goes on below
//!    like every other the route leaves. With R + G - 2 = 14 the bound is about 2^-20
//!    |a| |b|: at k = 576 it leaves about 3.5% of random bf16 outputs and 18% of f16
//!    ones (their 11-bit outputs are finer). Those get a second try: the products in f32
//!    (exact, or rounded by 2^-150 below 2^-126, covered by the same k 2^-145) summed
//!    in f64 in any order (`kernel::dot_f32_products`), under the f64 route's bound plus
//!    that term; what it leaves goes to tier 2.
//! 2. Tier 2, for the outputs tier 1 leaves (with random data about 1 in 10^3 in f32 at
//!    k = 576, fewer in bf16 and f16): a compensated dot product with error below 2^-52
//!    relative plus (k + 8)^2 2^-106 |a| |b| (`crate::math::exact_dot::dot2`), tested the
//!    same way.
//! 3. Tier 3, for what is left (sums at a rounding midpoint, inf and NaN rows, k >= 2^26):
//!    the exact fixed-point sum (`crate::math::exact_dot::ExactDot`), rounded to odd in
//!    f64 and then once to the dtype.
//!
//! Each tier returns the correctly rounded value or nothing, so which tier decides an
//! output, and everything that influences that (vector width, k-blocking, thread count,
//! the GEMV/GEMM choice, the device), is invisible in the output. The CUDA half
//! (`cuda.rs`, `kernels/matmul/matmul.cu`) reaches the same values the same way, with the second
//! and third tiers in headers that compile as host C++ (`kernels/matmul/*.cuh`). Its tier 1
//! is, by default for f32, bf16 and f16 inputs (`cuda::Tier1::for_input`), the integer tier
//! on the int8 tensor cores: each row of a and column of b cut into s8 slices under one
//! power of two per 64 k, the slice products exact in s32, combined in f64 under a bound
//! that also carries what the slices do not cover (`kernels/matmul/ozaki.cuh` has the
//! proof), then the same decision and tiers; f8e4m3 inputs, and `CpuConfig::int_tier =
//! Some(false)`, take f64 sums in shared-memory tiles.

pub(crate) mod cpu;
/// The device half: launch plans of `kernels/matmul/matmul.cu` over [`crate::launch::Device`].
pub mod cuda;
pub(crate) mod kernel;

pub use cpu::CpuConfig;
#[doc(hidden)]
pub use cpu::{TierCounts, tier_counts};

use crate::math::Format;
use crate::math::f8::f8e4m3_to_f32;
use crate::ops::buffer;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{
    CpuStorage, CustomOp2, CustomOp3, DType, Error, Layout, Result, Shape, Tensor, bail,
};
use cpu::{Problem, View};
use half::{bf16, f16};
use std::sync::Arc;

/// An input element type: widens exactly to f32.
pub(crate) trait Input: Copy + Send + Sync + 'static {
    fn widen(self) -> f32;
}

impl Input for f32 {
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

impl Input for bf16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        <bf16 as Format>::to_f32(self)
    }
}

impl Input for f16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        <f16 as Format>::to_f32(self)
    }
}

/// Every f8e4m3 value as f32 bits (a table: the widening is a lookup).
static F8E4M3_TABLE: std::sync::LazyLock<[f32; 256]> =
    std::sync::LazyLock::new(|| std::array::from_fn(|b| f8e4m3_to_f32(b as u8)));

impl Input for float8::F8E4M3 {
    #[inline(always)]
    fn widen(self) -> f32 {
        F8E4M3_TABLE[self.to_bits() as usize]
    }
}

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
    fn run<T: Input, O: Format>(self, a: &[T], la: &Layout, b: &[T], lb: &Layout) -> Vec<O> {
        let (m, k, n) = (self.m, self.k, self.n);
        let exact_sums = std::any::TypeId::of::<T>() == std::any::TypeId::of::<float8::F8E4M3>()
            && k <= cpu::F8_EXACT_MAX_K;
        let p = Problem {
            m,
            n,
            k,
            a: batch_views(a, la),
            b: batch_views(b, lb),
            bias: self.bias,
            exact_sums,
        };
        let mut out = buffer::uninit::<O>(p.a.len() * m * n);
        cpu::matmul::<T, O>(&p, self.cfg, self.prepared, &mut out);
        // SAFETY: cpu::matmul writes every element.
        unsafe { buffer::assume_init(out) }
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
    ) -> Vec<cpu::LineStats> {
        cpu::column_stats(
            View {
                data,
                base,
                rs: st[1],
                cs: st[0],
            },
            k,
            n,
        )
    }
    let cols = match s {
        CpuStorage::F32(d) => cols(d, base, st, k, n),
        CpuStorage::BF16(d) => cols(d, base, st, k, n),
        CpuStorage::F16(d) => cols(d, base, st, k, n),
        CpuStorage::F8E4M3(d) => cols(d, base, st, k, n),
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
                CpuStorage::F32(job.run::<f32, f32>(x, a.1, y, b.1))
            }
            (CpuStorage::BF16(x), CpuStorage::BF16(y), DType::BF16) => {
                CpuStorage::BF16(job.run::<bf16, bf16>(x, a.1, y, b.1))
            }
            (CpuStorage::F16(x), CpuStorage::F16(y), DType::F16) => {
                CpuStorage::F16(job.run::<f16, f16>(x, a.1, y, b.1))
            }
            (CpuStorage::F8E4M3(x), CpuStorage::F8E4M3(y), DType::F32) => {
                CpuStorage::F32(job.run::<float8::F8E4M3, f32>(x, a.1, y, b.1))
            }
            (CpuStorage::F8E4M3(x), CpuStorage::F8E4M3(y), DType::BF16) => {
                CpuStorage::BF16(job.run::<float8::F8E4M3, bf16>(x, a.1, y, b.1))
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
