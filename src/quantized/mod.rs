//! Products with quantized weights kept in their GGUF blocks: [`QMatMul`] (a drop-in for
//! `candle_core::quantized::QMatMul`), [`QLinear`] (with a bias) and [`QEmbedding`] (rows
//! of a quantized table), for every block type of candle's `GgmlDType`: F32, F16, BF16,
//! Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2K, Q3K, Q4K, Q5K, Q6K, Q8K. The weight stays in
//! the bytes it was loaded in: a model needs no more memory than its file.
//!
//! # Definition
//! A weight's value is the exact value of its block's reference dequantization ([`blocks`]
//! has the table: a q - c per weight with a, c products of the block's f16 scales and
//! small integers), so it is a real number independent of how it is decoded. Then
//!
//! ```text
//!     out[i, j] = round( sum_k x[i, k] w[j, k]  (+ bias[j]) )
//! ```
//!
//! the exact sum of the exact products rounded once to nearest-even into x's dtype (f32,
//! bf16 or f16), the definition of [`crate::matmul()`] with the weight's exact values:
//! no order, no block decomposition, no batch and no device in it. An exact zero is -0
//! exactly when every term is -0; NaN and infinities as an IEEE sum of the exact products
//! gives them (a weight is NaN where its scale is NaN, inf * 0 is NaN); every NaN output
//! is the canonical quiet NaN. The bias (f32, bf16 or f16) enters with its exact value.
//!
//! # How it is reached, and why every output is correctly rounded
//! Every weight is exact in f64 and a multiple of 2^-149 below 2^137 ([`blocks`]); every
//! x widens exactly to f32.
//!
//! 0. The GEMV (decode) of a quantized type first tries the integer tier ([`int_tier`]):
//!    x cut per weight block into i16 slices under one power of two, exact integer block
//!    sums against the codes (times their sub-scales) on VNNI/AVX2/scalar kernels, the
//!    blocks combined in f64 and accepted under a bound that also carries what the slices
//!    leave uncovered; what it leaves goes on to tier 1.
//! 1. Tier 1 sums in f64, in whatever order the kernel likes: the GEMV forms each weight
//!    a q - c exactly in a register and multiplies it into lanes of partial sums; the
//!    GEMM decodes panels of weights exactly and runs the matmul's micro-kernel. Each
//!    product x w is rounded once (w has up to 53 bits), and each term then meets at most
//!    k - 1 additions on its way to the total, plus the fold of the lanes (at most 5
//!    levels) and the bias. Higham's bound for any evaluation tree of products and sums
//!    ("Accuracy and Stability of Numerical Algorithms", 2nd ed., 3.1 and 4.2) gives
//!    |computed - exact| <= gamma_h sum |x_k w_k| with h <= k + 8 roundings on any path
//!    (+1 for the bias, whose term is |bias|). By Cauchy-Schwarz, sum |x_k w_k| <=
//!    |x|_2 |w|_2; the norms are computed in f64 (x's per call, each weight row's once
//!    when the weight is built) within (1 + (k + 2) u) of the true ones. The bound used,
//!    err = (k + 8 + bias) 2^-53 (1 + 2^-20) (|x| |w| + |bias|), exceeds
//!    gamma_h (1 + (k + 2) u)^2 (|x| |w| + |bias|) and the roundings of its own
//!    evaluation for k < 2^26 (the argument of `crate::matmul`). An output is accepted
//!    when every number within err of its sum rounds to the same value of the dtype; an
//!    exact zero (err = 0: x's row or w's row is all zeros) takes its sign from the sign
//!    classes of both rows, as in the matmul.
//! 2. What tier 1 leaves (sums within about k 2^-53 |x| |w| of a rounding boundary,
//!    non-finite inputs or weights, k >= 2^26) goes to a compensated sum over the decoded
//!    row (`crate::math::exact_dot::dot2_wide`: each product split exactly into two f64
//!    by Dekker's TwoProduct, the high parts chained with TwoSum, every error term summed
//!    apart), within 2^-52 |result| + (2k + 8)^2 2^-106 (1 + 2^-20) (|x| |w| + |bias|),
//!    tested the same way.
//! 3. The rest (sums at or within about 2^-100 of a midpoint, special values) goes to the
//!    exact fixed-point sum (`ExactDot::add_product_wide`: integer arithmetic,
//!    order-free), rounded to odd in f64 and then once to the dtype.
//!
//! Each tier returns the correctly rounded value or nothing, so which tier decides an
//! output, and everything that influences that (GEMV or GEMM, the vector path, the lanes,
//! the threads, the rows computed with it), is invisible in the output.
//!
//! # Compared with ggml and stock candle
//! ggml's reference dequantization rounds some weights to f32 (Q4_1, Q5_1, Q2_K, Q4_K,
//! Q5_K, Q8_K; [`blocks`]), and stock candle's `QMatMul` quantizes x to 8 bits per block
//! and adds the block sums in f32, choosing its kernel by batch size: its outputs differ
//! from the exact product and between decode and prefill. Ours are the exact product.

pub mod blocks;
pub(crate) mod cpu;
pub mod cuda;
pub mod int_tier;

use crate::math::Format;
use crate::matmul::Input;
use crate::matmul::cpu::{CpuConfig, LineStats, View};
use crate::ops::buffer;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{
    CpuStorage, CustomOp1, CustomOp2, DType, Device, Error, Layout, Module, Result, Shape, Tensor,
    bail,
};
use half::{bf16, f16};
use std::sync::Arc;

/// Where a weight's block bytes live.
enum Bytes {
    /// In a QTensor (read in place on the CPU; copied back when it lives on a GPU).
    Tensor(Arc<QTensor>),
    /// In a buffer of their own (read straight from a file: no second copy at load).
    Owned(Vec<u8>),
}

/// A weight in its blocks, validated, with what the product needs of it alone.
struct QWeight {
    ty: GgmlDType,
    n: usize,
    k: usize,
    bytes: Bytes,
    device: Device,
    /// Per weight row: the norm of its exact values and its sign classes (tier 1's bound
    /// and the sign of exact zeros).
    stats: Vec<LineStats>,
    /// Per weight row of a type with a min: the integer tier's P_j (`int_tier::abs_norms`).
    abs_norms: Vec<f64>,
    /// CUDA: the bytes and row stats on the weight's device (uploaded when the weight is
    /// built on a CUDA device).
    #[cfg(feature = "cuda")]
    cuda: Option<cuda::QDeviceWeight<candle_core::CudaStorage>>,
}

impl std::fmt::Debug for QWeight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QWeight({:?}, {} x {})", self.ty, self.n, self.k)
    }
}

impl QWeight {
    /// The block bytes on the host.
    fn host_bytes(&self) -> Result<std::borrow::Cow<'_, [u8]>> {
        match &self.bytes {
            Bytes::Tensor(t) => t.data(),
            Bytes::Owned(v) => Ok(std::borrow::Cow::Borrowed(v)),
        }
    }

    fn new(ty: GgmlDType, dims: &[usize], bytes: Bytes, device: &Device) -> Result<QWeight> {
        let (n, k) = match *dims {
            [n, k] => (n, k),
            ref d => bail!("candle-repro QMatMul: the weight must be (out, in), got shape {d:?}"),
        };
        let (len, size) = blocks::geometry(ty);
        if !k.is_multiple_of(len) {
            bail!("candle-repro QMatMul: rows of {k} weights are not whole {ty:?} blocks of {len}")
        }
        if !supports(device) {
            bail!(
                "candle-repro QMatMul: weights on {:?} are not supported yet (CPU, and CUDA \
                 with the `cuda` feature)",
                device.location()
            )
        }
        let mut w = QWeight {
            ty,
            n,
            k,
            bytes,
            device: device.clone(),
            stats: Vec::new(),
            abs_norms: Vec::new(),
            #[cfg(feature = "cuda")]
            cuda: None,
        };
        let host = w.host_bytes()?;
        let expected = n * (k / len) * size;
        if host.len() != expected {
            bail!(
                "candle-repro QMatMul: a {ty:?} weight of {n} x {k} has {} bytes, expected {expected}",
                host.len()
            )
        }
        let rows = blocks::QRows {
            ty,
            n,
            k,
            bytes: &host,
        };
        let stats = cpu::row_stats(rows);
        let abs_norms = int_tier::abs_norms(rows);
        #[cfg(feature = "cuda")]
        let cuda = match device {
            Device::Cuda(dev) => Some(cuda::upload(dev, ty, n, k, &host, &stats)?),
            _ => None,
        };
        drop(host);
        w.stats = stats;
        w.abs_norms = abs_norms;
        #[cfg(feature = "cuda")]
        {
            w.cuda = cuda;
        }
        Ok(w)
    }
}

// ---- CUDA plumbing (the device half is `cuda.rs`) ----

#[cfg(feature = "cuda")]
impl QMatMulOp {
    /// The product on the weight's CUDA device (x there too: `product` checked it).
    fn cuda(
        &self,
        x: (&candle_core::CudaStorage, &Layout),
        bias: Option<(&candle_core::CudaStorage, &Layout)>,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let Some(w) = &self.w.cuda else {
            bail!("candle-repro QMatMul: the weight is not on a CUDA device")
        };
        let start_tier = self.cfg.and_then(|c| c.start_tier);
        cuda::qmatmul(&x.0.device, x, w, bias, start_tier)
    }
}

// ---- end of the CUDA plumbing ----

/// A product with a quantized weight (see the module documentation): a drop-in for
/// `candle_core::quantized::QMatMul` whose every output is the exact product rounded once.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::quantized::{GgmlDType, QTensor};
/// use candle_core::{Device, Module, Tensor};
/// use candle_repro::quantized::QMatMul;
/// let w = Tensor::randn(0f32, 1., (64, 256), &Device::Cpu)?; // (out, in)
/// let q = QMatMul::from_qtensor(QTensor::quantize(&w, GgmlDType::Q4K)?)?;
/// // Prefill (8 rows) and decode (one row alone) give the same bits.
/// let x = Tensor::randn(0f32, 1., (8, 256), &Device::Cpu)?;
/// let all = q.forward(&x)?;
/// let row = q.forward(&x.narrow(0, 5, 1)?)?;
/// assert_eq!(row.get(0)?.to_vec1::<f32>()?, all.get(5)?.to_vec1::<f32>()?);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct QMatMul {
    w: Arc<QWeight>,
}

impl QMatMul {
    /// The product with `qtensor`, a weight (out, in) whose rows are whole blocks.
    pub fn from_qtensor(qtensor: QTensor) -> Result<Self> {
        Self::from_arc(Arc::new(qtensor))
    }

    /// The product with a shared weight (out, in); its bytes are read in place.
    pub fn from_arc(qtensor: Arc<QTensor>) -> Result<Self> {
        let (ty, dims, device) = (
            qtensor.dtype(),
            qtensor.shape().dims().to_vec(),
            qtensor.device(),
        );
        Ok(QMatMul {
            w: Arc::new(QWeight::new(ty, &dims, Bytes::Tensor(qtensor), &device)?),
        })
    }

    /// The product with a weight (out, in) of type `ty` given as its block bytes (as a
    /// GGUF file stores them), kept as they are; on `device` (the CPU, or CUDA with the
    /// `cuda` feature, where they are uploaded).
    pub fn from_bytes(
        ty: GgmlDType,
        (out, inp): (usize, usize),
        bytes: Vec<u8>,
        device: &Device,
    ) -> Result<Self> {
        Ok(QMatMul {
            w: Arc::new(QWeight::new(ty, &[out, inp], Bytes::Owned(bytes), device)?),
        })
    }

    /// The weight's block type.
    pub fn dtype(&self) -> GgmlDType {
        self.w.ty
    }

    /// (out, in): the weight's shape.
    pub fn dims(&self) -> (usize, usize) {
        (self.w.n, self.w.k)
    }

    /// The weight's block bytes (read in place on the CPU).
    pub fn bytes(&self) -> Result<std::borrow::Cow<'_, [u8]>> {
        self.w.host_bytes()
    }

    /// The device the weight lives on.
    pub fn device(&self) -> &Device {
        &self.w.device
    }

    /// x w^T + bias with one rounding (the bias: a vector of `out` values, f32, bf16 or
    /// f16, entering with its exact value).
    pub fn forward_with_bias(&self, x: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        product(&self.w, x, bias, None)
    }
}

impl Module for QMatMul {
    /// x (.., in) times the weight's transpose: (.., out), x's dtype (f32, bf16 or f16).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        product(&self.w, x, None, None)
    }
}

/// [`QMatMul`] under a chosen CPU configuration (vector path, GEMV on or off, tier 1 off,
/// k-blocking of the GEMM): for tests that show none of them changes a bit.
#[doc(hidden)]
pub fn qmatmul_with_config(
    w: &QMatMul,
    x: &Tensor,
    bias: Option<&Tensor>,
    cfg: CpuConfig,
) -> Result<Tensor> {
    product(&w.w, x, bias, Some(cfg))
}

/// How many outputs of x (at most 4 rows, f32, bf16 or f16) times `w`'s transpose the
/// integer first tier of the GEMV decides on its own on `path`'s integer kernel:
/// (decided, outputs). For tests that check the tier is not silently always deferring.
#[doc(hidden)]
pub fn int_tier_decided(
    w: &QMatMul,
    x: &Tensor,
    path: crate::math::VectorPath,
) -> Result<(usize, usize)> {
    let w = &w.w;
    let (m, k) = x.dims2()?;
    if k != w.k || !(1..=4).contains(&m) {
        bail!(
            "int_tier_decided: x must be (1..=4, {}), got {:?}",
            w.k,
            x.dims()
        )
    }
    let bytes = w.host_bytes()?;
    fn run<T: Input + Format>(
        v: &[T],
        m: usize,
        k: usize,
        w: &QWeight,
        bytes: &[u8],
        path: crate::math::VectorPath,
    ) -> (usize, usize) {
        let p = cpu::Problem {
            x: View {
                data: v,
                base: 0,
                rs: k,
                cs: 1,
            },
            m,
            w: blocks::QRows {
                ty: w.ty,
                n: w.n,
                k: w.k,
                bytes,
            },
            w_stats: &w.stats,
            w_abs: &w.abs_norms,
            bias: None,
        };
        cpu::int_decided::<T, T>(&p, path)
    }
    let x = x.contiguous()?;
    Ok(match x.dtype() {
        DType::F32 => run(&x.flatten_all()?.to_vec1::<f32>()?, m, k, w, &bytes, path),
        DType::BF16 => run(&x.flatten_all()?.to_vec1::<bf16>()?, m, k, w, &bytes, path),
        DType::F16 => run(&x.flatten_all()?.to_vec1::<f16>()?, m, k, w, &bytes, path),
        other => return Err(Error::UnsupportedDTypeForOp(other, "int_tier_decided").bt()),
    })
}

/// A linear layer over a quantized weight: y = x w^T + b with one rounding, the shapes of
/// `candle_nn::Linear` (and of candle_transformers' `quantized_nn::Linear`).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::quantized::{GgmlDType, QTensor};
/// use candle_core::{Device, Module, Tensor};
/// use candle_repro::quantized::{QLinear, QMatMul};
/// let w = QTensor::quantize(&Tensor::randn(0f32, 1., (16, 32), &Device::Cpu)?, GgmlDType::Q8_0)?;
/// let b = Tensor::randn(0f32, 1., 16, &Device::Cpu)?;
/// let layer = QLinear::new(QMatMul::from_qtensor(w)?, Some(b));
/// let y = layer.forward(&Tensor::randn(0f32, 1., (2, 3, 32), &Device::Cpu)?)?;
/// assert_eq!(y.dims(), [2, 3, 16]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct QLinear {
    weight: QMatMul,
    bias: Option<Tensor>,
}

impl QLinear {
    /// A layer over `weight` (out, in) and an optional `bias` (out).
    pub fn new(weight: QMatMul, bias: Option<Tensor>) -> Self {
        QLinear { weight, bias }
    }

    /// The weight.
    pub fn weight(&self) -> &QMatMul {
        &self.weight
    }

    /// The bias, if any.
    pub fn bias(&self) -> Option<&Tensor> {
        self.bias.as_ref()
    }
}

impl Module for QLinear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.weight.forward_with_bias(x, self.bias.as_ref())
    }
}

/// Whether quantized weights can live on `device`: the CPU, and CUDA with the `cuda` feature
/// (elsewhere [`QMatMul`] refuses them and the models dequantize).
pub fn supports(device: &Device) -> bool {
    matches!(device, Device::Cpu) || (cfg!(feature = "cuda") && device.is_cuda())
}

/// Rows of a quantized table (vocab, dim): an embedding whose rows are decoded exactly when
/// gathered and rounded once to the compute dtype; the table stays in its blocks (and can
/// share them with a tied output head).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::quantized::{GgmlDType, QTensor};
/// use candle_core::{DType, Device, Module, Tensor};
/// use candle_repro::quantized::{QEmbedding, QMatMul};
/// let table = QTensor::quantize(&Tensor::randn(0f32, 1., (10, 32), &Device::Cpu)?, GgmlDType::Q8_0)?;
/// let emb = QEmbedding::new(&QMatMul::from_qtensor(table)?, DType::BF16);
/// let h = emb.forward(&Tensor::new(&[[3u32, 7]], &Device::Cpu)?)?;
/// assert_eq!((h.dims(), h.dtype()), (&[1, 2, 32][..], DType::BF16));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct QEmbedding {
    w: Arc<QWeight>,
    dtype: DType,
    /// n when every value is multiplied by sqrt(n) (within the one rounding).
    sqrt_scale: Option<u64>,
}

impl QEmbedding {
    /// The rows of `table`'s weight (vocab, dim), produced in `dtype` (f32, bf16 or f16).
    pub fn new(table: &QMatMul, dtype: DType) -> Self {
        QEmbedding {
            w: table.w.clone(),
            dtype,
            sqrt_scale: None,
        }
    }

    /// The rows times sqrt(n), each value's exact product rounded once (Gemma scales its
    /// embedding by sqrt(hidden size)); 1 <= n < 2^40.
    pub fn scaled_by_sqrt(table: &QMatMul, dtype: DType, n: u64) -> Result<Self> {
        if !(1..1u64 << 40).contains(&n) {
            bail!("candle-repro QEmbedding: sqrt scale of {n} outside 1..2^40")
        }
        Ok(QEmbedding {
            sqrt_scale: Some(n),
            ..QEmbedding::new(table, dtype)
        })
    }
}

impl Module for QEmbedding {
    /// ids (any shape, u8/u32/i64) to (ids.., dim): each row's exact values rounded once.
    fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let w = &self.w;
        let ids_v: Vec<i64> = ids.flatten_all()?.to_dtype(DType::I64)?.to_vec1()?;
        let bytes = w.host_bytes()?;
        let rows = blocks::QRows {
            ty: w.ty,
            n: w.n,
            k: w.k,
            bytes: &bytes,
        };
        let mut values = vec![0f64; ids_v.len() * w.k];
        for (&id, out) in ids_v.iter().zip(values.chunks_exact_mut(w.k.max(1))) {
            if id < 0 || id as usize >= w.n {
                bail!(
                    "candle-repro QEmbedding: id {id} outside the table's {} rows",
                    w.n
                )
            }
            rows.decode_row(id as usize, out);
        }
        let mut shape = ids.dims().to_vec();
        shape.push(w.k);
        fn round<F: Format>(v: &[f64], sqrt_scale: Option<u64>) -> Vec<F> {
            match sqrt_scale {
                None => v.iter().map(|&x| F::round(x)).collect(),
                Some(n) => v
                    .iter()
                    .map(|&x| match x.is_finite() {
                        true => crate::math::exact_round::round_mul_sqrt::<F>(x, n),
                        false => F::round(x), // inf times sqrt(n) is inf; NaN is NaN
                    })
                    .collect(),
            }
        }
        let s = self.sqrt_scale;
        match self.dtype {
            DType::F32 => Tensor::from_vec(round::<f32>(&values, s), shape, ids.device()),
            DType::BF16 => Tensor::from_vec(round::<bf16>(&values, s), shape, ids.device()),
            DType::F16 => Tensor::from_vec(round::<f16>(&values, s), shape, ids.device()),
            other => Err(Error::UnsupportedDTypeForOp(other, "QEmbedding").bt()),
        }
    }
}

/// The product op: x (a CustomOp1) or x and a bias (CustomOp2).
struct QMatMulOp {
    w: Arc<QWeight>,
    cfg: Option<CpuConfig>,
}

impl QMatMulOp {
    fn cpu(
        &self,
        x: (&CpuStorage, &Layout),
        bias: Option<(&CpuStorage, &Layout)>,
    ) -> Result<(CpuStorage, Shape)> {
        let w = &self.w;
        let (xs, xl) = x;
        let dims = xl.dims();
        let (&k, lead) = dims.split_last().expect("checked: rank >= 1");
        let m: usize = lead.iter().product();
        let mut out_dims = lead.to_vec();
        out_dims.push(w.n);
        let bias = match bias {
            None => None,
            Some((s, l)) => Some(match s {
                CpuStorage::F32(v) => logical_elements(v, l).to_vec(),
                CpuStorage::BF16(v) => logical_elements(v, l).iter().map(|b| b.widen()).collect(),
                CpuStorage::F16(v) => logical_elements(v, l).iter().map(|b| b.widen()).collect(),
                other => return Err(Error::UnsupportedDTypeForOp(other.dtype(), "QMatMul").bt()),
            }),
        };
        let bytes = w.host_bytes()?;
        let cfg = self.cfg.unwrap_or_default();
        #[allow(clippy::too_many_arguments)]
        fn run<T: Input + Format>(
            data: &[T],
            xl: &Layout,
            m: usize,
            k: usize,
            w: &QWeight,
            bytes: &[u8],
            bias: Option<Vec<f32>>,
            cfg: CpuConfig,
        ) -> Vec<T> {
            let x = logical_elements(data, xl);
            let p = cpu::Problem {
                x: View {
                    data: &x,
                    base: 0,
                    rs: k,
                    cs: 1,
                },
                m,
                w: blocks::QRows {
                    ty: w.ty,
                    n: w.n,
                    k: w.k,
                    bytes,
                },
                w_stats: &w.stats,
                w_abs: &w.abs_norms,
                bias,
            };
            let mut out = buffer::uninit::<T>(m * w.n);
            cpu::qmatmul::<T, T>(&p, cfg, &mut out);
            // SAFETY: qmatmul writes every element.
            unsafe { buffer::assume_init(out) }
        }
        let out = match xs {
            CpuStorage::F32(d) => CpuStorage::F32(run(d, xl, m, k, w, &bytes, bias, cfg)),
            CpuStorage::BF16(d) => CpuStorage::BF16(run(d, xl, m, k, w, &bytes, bias, cfg)),
            CpuStorage::F16(d) => CpuStorage::F16(run(d, xl, m, k, w, &bytes, bias, cfg)),
            other => return Err(Error::UnsupportedDTypeForOp(other.dtype(), "QMatMul").bt()),
        };
        Ok((out, Shape::from(out_dims)))
    }
}

impl CustomOp1 for QMatMulOp {
    fn name(&self) -> &'static str {
        "repro-qmatmul"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        self.cpu((s, l), None)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s: &candle_core::CudaStorage,
        l: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        self.cuda((s, l), None)
    }
}

impl CustomOp2 for QMatMulOp {
    fn name(&self) -> &'static str {
        "repro-qmatmul-bias"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        self.cpu((s1, l1), Some((s2, l2)))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        self.cuda((s1, l1), Some((s2, l2)))
    }
}

/// The product with every check: x's dtype, shape and device, the bias's.
fn product(
    w: &Arc<QWeight>,
    x: &Tensor,
    bias: Option<&Tensor>,
    cfg: Option<CpuConfig>,
) -> Result<Tensor> {
    let op = "QMatMul";
    if !matches!(x.dtype(), DType::F32 | DType::BF16 | DType::F16) {
        return Err(Error::UnsupportedDTypeForOp(x.dtype(), op).bt());
    }
    let Some(&k) = x.dims().last() else {
        bail!("candle-repro QMatMul: a scalar input has no feature dimension")
    };
    if k != w.k {
        return Err(Error::ShapeMismatchBinaryOp {
            lhs: x.shape().clone(),
            rhs: Shape::from((w.n, w.k)),
            op,
        }
        .bt());
    }
    if !x.device().same_device(&w.device) {
        return Err(Error::DeviceMismatchBinaryOp {
            lhs: x.device().location(),
            rhs: w.device.location(),
            op,
        }
        .bt());
    }
    let x = x.contiguous()?;
    let op_struct = QMatMulOp { w: w.clone(), cfg };
    match bias {
        None => x.apply_op1_no_bwd(&op_struct),
        Some(b) => {
            if b.dims() != [w.n] || !matches!(b.dtype(), DType::F32 | DType::BF16 | DType::F16) {
                bail!(
                    "candle-repro QMatMul: the bias must be an f32, bf16 or f16 vector of {} values, got {:?} {:?}",
                    w.n,
                    b.dtype(),
                    b.dims()
                )
            }
            if !b.device().same_device(x.device()) {
                return Err(Error::DeviceMismatchBinaryOp {
                    lhs: x.device().location(),
                    rhs: b.device().location(),
                    op,
                }
                .bt());
            }
            x.apply_op2_no_bwd(b, &op_struct)
        }
    }
}
