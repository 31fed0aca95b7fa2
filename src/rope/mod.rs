//! Deterministic rotary position embeddings: correctly rounded cos/sin tables and the
//! `rope`, `rope_i`, `rope_thd` ops of `candle_nn::rotary_emb`, with backward passes and a
//! fused variant that takes positions.
//!
//! * Tables ([`RopeTables`]): Hugging Face transformers' Llama rotary embedding (default,
//!   linear, llama3 and YaRN scaling) with every f32 step done as PyTorch does it on the
//!   CPU and the two transcendental steps correctly rounded: `theta^e` to f32, and
//!   `cos(angle) * attention_factor` (and sin) to the output dtype, once. The tables are
//!   built on the host and copied to the device, so they have the same bits everywhere.
//!   See [`tables`] for the exact sequence of operations.
//! * Apply ([`rope`], [`rope_i`], [`rope_thd`]): the signatures, layouts and shape rules of
//!   candle_nn's functions (2D `(t, d/2)` or per-batch 3D `(b, t, d/2)` cos/sin, tables
//!   may be longer than the sequence). Every output is the exact `x1*c - x2*s` or
//!   `x1*s + x2*c` of the stored inputs rounded once to the dtype (see [`apply`]), on the
//!   CPU and in `kernels/rope/rope.cu`. Backward ([`rope_bwd`], ... and candle autograd) is the
//!   rotation by -theta with the same scheme.
//! * Fused ([`rope_fused`]): positions instead of tables; the same bits as the table path.
//!   On CUDA the cos/sin values are computed per element in the kernel
//!   (`repro_rope_fused_*`, with the device trig mirror); on the CPU one row per (batch,
//!   time) slot is computed inside the op and shared by the heads.
//!
//! Differences from candle_nn: non-contiguous inputs are made contiguous instead of
//! rejected; a per-batch 3D table may have more rows than the sequence (candle_nn then
//! reads the wrong rows); f64 is rejected (the exact-product scheme needs inputs of at most
//! 26 significant bits). Bad shapes, dtypes and devices give a `candle_core::Error`.

pub mod apply;
/// The device half: launch plans of `kernels/rope/rope.cu` over [`crate::launch::Device`].
pub mod cuda;
pub mod tables;

pub use apply::RopeLayout;
pub use tables::{RopeConfig, RopeFreqs, RopeScaling, cos_sin_entry, pow_f32, rope_freqs};

use apply::Geometry;
use candle_core::{CpuStorage, CustomOp3, DType, Device, Layout, Result, Shape, Tensor};
use half::{bf16, f16};

fn err(msg: String) -> candle_core::Error {
    candle_core::Error::Msg(format!("candle-repro {msg}"))
}

/// Correctly rounded cos and sin tables of shape (max_positions, rotary_dim / 2).
#[derive(Debug, Clone)]
pub struct RopeTables {
    /// cos(angle) * attention_factor, rounded once to the dtype: row p is position p, column
    /// i the feature pair i (see [`cos_sin_entry`]).
    pub cos: Tensor,
    /// sin(angle) * attention_factor, laid out as `cos`.
    pub sin: Tensor,
    /// The frequencies the tables were computed from (what [`rope_fused`] takes).
    pub freqs: RopeFreqs,
}

impl RopeTables {
    /// Tables for positions 0..max_positions of `cfg`, in `dtype` (f32, bf16 or f16), on
    /// `device` (computed on the host, so the bits do not depend on the device).
    ///
    /// ```rust
    /// # fn main() -> candle_core::Result<()> {
    /// use candle_core::{DType, Device};
    /// use candle_repro::rope::{RopeConfig, RopeTables};
    ///
    /// // rotary_dim 4, theta 10000: inverse frequencies 1 and 10000^-1/2 = 1/100.
    /// let t = RopeTables::new(&RopeConfig::new(10000.0, 4), 8, DType::F32, &Device::Cpu)?;
    /// assert_eq!(t.cos.dims(), &[8, 2]);
    /// assert_eq!(t.freqs.inv_freq, [1.0, 0.01]);
    /// let (cos, sin) = (t.cos.to_vec2::<f32>()?, t.sin.to_vec2::<f32>()?);
    /// assert_eq!((cos[0].as_slice(), sin[0].as_slice()), (&[1f32, 1.][..], &[0f32, 0.][..]));
    /// // Position 1, pair 0: angle 1 rad, cos(1) and sin(1) correctly rounded to f32 (bits
    /// // from mpmath).
    /// const COS_1: f32 = f32::from_bits(0x3F0A_5140);
    /// const SIN_1: f32 = f32::from_bits(0x3F57_6AA4);
    /// assert_eq!((cos[1][0], sin[1][0]), (COS_1, SIN_1));
    ///
    /// // Other dtypes are rounded once from the exact values, not via f32.
    /// let h = RopeTables::new(&RopeConfig::llama31(64), 4, DType::BF16, &Device::Cpu)?;
    /// assert_eq!((h.sin.dims(), h.sin.dtype()), (&[4, 32][..], DType::BF16));
    /// # Ok(()) }
    /// ```
    pub fn new(
        cfg: &RopeConfig,
        max_positions: usize,
        dtype: DType,
        device: &Device,
    ) -> Result<RopeTables> {
        let freqs = rope_freqs(cfg)?;
        RopeTables::from_freqs(freqs, max_positions, dtype, device)
    }

    /// Tables from already computed frequencies.
    ///
    /// ```rust
    /// # fn main() -> candle_core::Result<()> {
    /// use candle_core::{DType, Device};
    /// use candle_repro::rope::{RopeConfig, RopeTables, rope_freqs};
    ///
    /// let cfg = RopeConfig::yarn(10000.0, 8, 4.0, 2048);
    /// let freqs = rope_freqs(&cfg)?;
    /// let t = RopeTables::from_freqs(freqs.clone(), 3, DType::F16, &Device::Cpu)?;
    /// let same = RopeTables::new(&cfg, 3, DType::F16, &Device::Cpu)?;
    /// assert_eq!(t.cos.to_vec2::<half::f16>()?, same.cos.to_vec2::<half::f16>()?);
    /// assert_eq!(t.freqs, freqs);
    /// assert!(freqs.attention_factor > 1.0); // YaRN's default 0.1 ln 4 + 1
    /// # Ok(()) }
    /// ```
    pub fn from_freqs(
        freqs: RopeFreqs,
        max_positions: usize,
        dtype: DType,
        device: &Device,
    ) -> Result<RopeTables> {
        let positions: Vec<u64> = (0..max_positions as u64).collect();
        let shape = (max_positions, freqs.inv_freq.len());
        let (cos, sin) = rows_tensors(&freqs, &positions, shape.into(), dtype, device)?;
        Ok(RopeTables { cos, sin, freqs })
    }
}

/// cos/sin rows of `freqs` at `positions` as tensors of `shape` (elements = positions x
/// inv_freq.len()).
fn rows_tensors(
    freqs: &RopeFreqs,
    positions: &[u64],
    shape: Shape,
    dtype: DType,
    device: &Device,
) -> Result<(Tensor, Tensor)> {
    fn build<F: Format + Default + candle_core::WithDType>(
        freqs: &RopeFreqs,
        positions: &[u64],
        shape: &Shape,
        device: &Device,
    ) -> Result<(Tensor, Tensor)> {
        let n = positions.len() * freqs.inv_freq.len();
        let mut c = vec![F::default(); n];
        let mut s = vec![F::default(); n];
        tables::fill_rows(
            &freqs.inv_freq,
            freqs.attention_factor,
            positions,
            &mut c,
            &mut s,
        );
        Ok((
            Tensor::from_vec(c, shape.clone(), device)?,
            Tensor::from_vec(s, shape.clone(), device)?,
        ))
    }
    use crate::math::Format;
    match dtype {
        DType::F32 => build::<f32>(freqs, positions, &shape, device),
        DType::BF16 => build::<bf16>(freqs, positions, &shape, device),
        DType::F16 => build::<f16>(freqs, positions, &shape, device),
        other => Err(err(format!(
            "rope tables: dtype {other:?} not supported (f32, bf16, f16)"
        ))),
    }
}

use crate::math::Format;

/// The op: one layout, forward (`sgn = 1`) or backward (`sgn = -1`).
#[derive(Debug, Clone, Copy)]
struct RopeOp {
    layout: RopeLayout,
    sgn: f64,
}

impl RopeOp {
    fn geometry(&self, lx: &Layout, lc: &Layout) -> Result<Geometry> {
        let (b, h, t, d) = match self.layout {
            RopeLayout::Thd => {
                let (b, t, h, d) = lx.shape().dims4()?;
                (b, h, t, d)
            }
            _ => lx.shape().dims4()?,
        };
        let (cs_t, batched) = match *lc.dims() {
            [t, _] => (t, false),
            [_, t, _] => (t, true),
            _ => return Err(err("rope: cos/sin must be 2D or 3D".into())),
        };
        Ok(Geometry {
            layout: self.layout,
            b,
            h,
            t,
            d,
            cs_t,
            batched,
        })
    }
}

fn contiguous<'a, T>(s: &'a [T], l: &Layout, what: &str) -> Result<&'a [T]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&s[a..b]),
        None => Err(err(format!("rope: {what} has to be contiguous"))),
    }
}

impl CustomOp3 for RopeOp {
    fn name(&self) -> &'static str {
        match (self.layout, self.sgn > 0.0) {
            (RopeLayout::Halves, true) => "repro-rope",
            (RopeLayout::Interleaved, true) => "repro-rope-i",
            (RopeLayout::Thd, true) => "repro-rope-thd",
            (RopeLayout::Halves, false) => "repro-rope-bwd",
            (RopeLayout::Interleaved, false) => "repro-rope-i-bwd",
            (RopeLayout::Thd, false) => "repro-rope-thd-bwd",
        }
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
        let g = self.geometry(l1, l2)?;
        #[allow(clippy::too_many_arguments)]
        fn run<F: Format + Default + candle_core::WithDType>(
            g: &Geometry,
            sgn: f64,
            x: &[F],
            l1: &Layout,
            c: &[F],
            l2: &Layout,
            s: &[F],
            l3: &Layout,
        ) -> Result<CpuStorage> {
            let x = contiguous(x, l1, "xs")?;
            let c = contiguous(c, l2, "cos")?;
            let s = contiguous(s, l3, "sin")?;
            let y = apply::apply(g, x, c, s, sgn);
            Ok(F::to_cpu_storage_owned(y))
        }
        let out = match (s1, s2, s3) {
            (CpuStorage::F32(x), CpuStorage::F32(c), CpuStorage::F32(s)) => {
                run(&g, self.sgn, x, l1, c, l2, s, l3)?
            }
            (CpuStorage::BF16(x), CpuStorage::BF16(c), CpuStorage::BF16(s)) => {
                run(&g, self.sgn, x, l1, c, l2, s, l3)?
            }
            (CpuStorage::F16(x), CpuStorage::F16(c), CpuStorage::F16(s)) => {
                run(&g, self.sgn, x, l1, c, l2, s, l3)?
            }
            _ => {
                use candle_core::backend::BackendStorage;
                return Err(err(format!(
                    "{}: unsupported dtypes {:?} {:?} {:?} (f32, bf16 or f16, all the same)",
                    self.layout.name(),
                    s1.dtype(),
                    s2.dtype(),
                    s3.dtype()
                )));
            }
        };
        Ok((out, l1.shape().clone()))
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
        let (x, c, s) = ((s1, l1), (s2, l2), (s3, l3));
        let out = cuda::rope(&s1.device, self.layout, self.sgn, x, c, s)?;
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        _xs: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        // The gradient with respect to xs only (the tables are constants).
        let op = RopeOp {
            layout: self.layout,
            sgn: -self.sgn,
        };
        let dx = grad.contiguous()?.apply_op3_no_bwd(cos, sin, &op)?;
        Ok((Some(dx), None, None))
    }
}

/// Checks of candle_nn's shape rules, plus dtype, device and head-size checks; returns the
/// contiguous inputs.
fn check(
    layout: RopeLayout,
    xs: &Tensor,
    cos: &Tensor,
    sin: &Tensor,
) -> Result<(Tensor, Tensor, Tensor)> {
    let name = layout.name();
    let dims = xs.dims();
    if dims.len() != 4 {
        return Err(err(format!(
            "{name}: xs must be 4D ({}), got shape {:?}",
            if layout == RopeLayout::Thd {
                "b, t, h, d"
            } else {
                "b, h, t, d"
            },
            xs.shape()
        )));
    }
    let (b, t, d) = match layout {
        RopeLayout::Thd => (dims[0], dims[1], dims[3]),
        _ => (dims[0], dims[2], dims[3]),
    };
    if d % 2 != 0 {
        return Err(err(format!("{name}: the head size must be even, got {d}")));
    }
    if cos.dims() != sin.dims() {
        return Err(err(format!(
            "{name}: cos and sin shapes differ: {:?} vs {:?}",
            cos.shape(),
            sin.shape()
        )));
    }
    let (cs_t, cs_d) = match *cos.dims() {
        [t, d] => (t, d),
        [bb, t, d] => {
            if bb != b {
                return Err(err(format!(
                    "{name}: inconsistent batch size: xs {:?}, cos/sin {:?}",
                    xs.shape(),
                    cos.shape()
                )));
            }
            (t, d)
        }
        _ => {
            return Err(err(format!(
                "{name}: cos/sin must be 2D (t, d/2) or 3D (b, t, d/2), got {:?}",
                cos.shape()
            )));
        }
    };
    if cs_d * 2 != d || t > cs_t {
        return Err(err(format!(
            "{name}: inconsistent last dim size: xs {:?}, cos/sin {:?} (need (>= {t}, {}))",
            xs.shape(),
            cos.shape(),
            d / 2
        )));
    }
    let dt = xs.dtype();
    if !matches!(dt, DType::F32 | DType::BF16 | DType::F16) {
        return Err(err(format!(
            "{name}: dtype {dt:?} not supported (f32, bf16, f16)"
        )));
    }
    if cos.dtype() != dt || sin.dtype() != dt {
        return Err(err(format!(
            "{name}: mismatched dtypes: xs {dt:?}, cos {:?}, sin {:?}",
            cos.dtype(),
            sin.dtype()
        )));
    }
    if !xs.device().same_device(cos.device()) || !xs.device().same_device(sin.device()) {
        return Err(err(format!(
            "{name}: xs, cos and sin must be on the same device ({:?}, {:?}, {:?})",
            xs.device().location(),
            cos.device().location(),
            sin.device().location()
        )));
    }
    Ok((xs.contiguous()?, cos.contiguous()?, sin.contiguous()?))
}

fn run(layout: RopeLayout, sgn: f64, xs: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let (xs, cos, sin) = check(layout, xs, cos, sin)?;
    let op = RopeOp { layout, sgn };
    if sgn > 0.0 {
        xs.apply_op3(&cos, &sin, op)
    } else {
        xs.apply_op3_no_bwd(&cos, &sin, &op)
    }
}

/// `candle_nn::rotary_emb::rope`: xs (b, h, t, d), cos/sin (t', d/2) or (b, t', d/2) with
/// t' >= t; `y[i] = x[i] c - x[i+d/2] s`, `y[i+d/2] = x[i] s + x[i+d/2] c`, correctly
/// rounded. Differentiable with respect to xs.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::rope::{RopeConfig, RopeTables, rope};
///
/// let dev = Device::Cpu;
/// let t = RopeTables::new(&RopeConfig::new(10000.0, 4), 16, DType::F32, &dev)?;
/// // xs (b, h, t, d) = (1, 1, 2, 4), both positions e_0; the tables are longer than t.
/// let xs = Tensor::new(&[1f32, 0., 0., 0.], &dev)?.reshape((1, 1, 1, 4))?.repeat((1, 1, 2, 1))?;
/// let y = rope(&xs, &t.cos, &t.sin)?;
/// assert_eq!(y.dims(), &[1, 1, 2, 4]);
/// let y = y.flatten_all()?.to_vec1::<f32>()?;
/// // Position 0 is the identity, exactly.
/// assert_eq!(y[..4], [1., 0., 0., 0.]);
/// // Position 1 rotates the pair (x[0], x[2]) by 1 rad: (cos 1, sin 1), correctly rounded.
/// let (c, s) = (t.cos.to_vec2::<f32>()?[1][0], t.sin.to_vec2::<f32>()?[1][0]);
/// assert_eq!(y[4..], [c, 0., s, 0.]);
/// # Ok(()) }
/// ```
pub fn rope(xs: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    run(RopeLayout::Halves, 1.0, xs, cos, sin)
}

/// `candle_nn::rotary_emb::rope_i`: interleaved pairs (`x[2i]`, `x[2i+1]`).
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::rope::{RopeConfig, RopeTables, rope_i};
///
/// let dev = Device::Cpu;
/// let t = RopeTables::new(&RopeConfig::new(10000.0, 4), 2, DType::F32, &dev)?;
/// let xs = Tensor::new(&[1f32, 0., 0., 0.], &dev)?.reshape((1, 1, 1, 4))?.repeat((1, 1, 2, 1))?;
/// let y = rope_i(&xs, &t.cos, &t.sin)?.flatten_all()?.to_vec1::<f32>()?;
/// assert_eq!(y[..4], [1., 0., 0., 0.]); // position 0: the identity
/// // Position 1 rotates the pair (x[0], x[1]) by 1 rad: cos(1) and sin(1) correctly
/// // rounded to f32 (bits from mpmath).
/// assert_eq!(y[4..], [f32::from_bits(0x3F0A_5140), f32::from_bits(0x3F57_6AA4), 0., 0.]);
/// # Ok(()) }
/// ```
pub fn rope_i(xs: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    run(RopeLayout::Interleaved, 1.0, xs, cos, sin)
}

/// `candle_nn::rotary_emb::rope_thd`: xs (b, t, h, d), rotated halves.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::rope::{RopeConfig, RopeTables, rope, rope_thd};
///
/// let dev = Device::Cpu;
/// let t = RopeTables::new(&RopeConfig::new(10000.0, 8), 3, DType::BF16, &dev)?;
/// // (b, t, h, d) = (2, 3, 2, 8): the same bits as `rope` on the (b, h, t, d) transpose.
/// let xs = Tensor::arange(0f32, 96., &dev)?.to_dtype(DType::BF16)?.reshape((2, 3, 2, 8))?;
/// let y = rope_thd(&xs, &t.cos, &t.sin)?;
/// let z = rope(&xs.transpose(1, 2)?, &t.cos, &t.sin)?.transpose(1, 2)?;
/// assert_eq!(y.dims(), &[2, 3, 2, 8]);
/// assert_eq!(
///     y.flatten_all()?.to_vec1::<half::bf16>()?,
///     z.flatten_all()?.to_vec1::<half::bf16>()?
/// );
/// # Ok(()) }
/// ```
pub fn rope_thd(xs: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    run(RopeLayout::Thd, 1.0, xs, cos, sin)
}

/// Gradient of [`rope`] with respect to xs: the rotation by -theta of `grad`.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::rope::{RopeConfig, RopeTables, rope, rope_bwd};
///
/// let dev = Device::Cpu;
/// let t = RopeTables::new(&RopeConfig::new(10000.0, 4), 5, DType::F32, &dev)?;
/// let xs = Tensor::arange(0f32, 20., &dev)?.reshape((1, 1, 5, 4))?;
/// // A rotation is orthogonal: undoing it gives x back up to the two roundings.
/// let back = rope_bwd(&rope(&xs, &t.cos, &t.sin)?, &t.cos, &t.sin)?;
/// let err = (&back - &xs)?.abs()?.max_all()?.to_scalar::<f32>()?;
/// assert!(err < 1e-5, "{err}");
/// # Ok(()) }
/// ```
pub fn rope_bwd(grad: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    run(RopeLayout::Halves, -1.0, grad, cos, sin)
}

/// Gradient of [`rope_i`] with respect to xs.
pub fn rope_i_bwd(grad: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    run(RopeLayout::Interleaved, -1.0, grad, cos, sin)
}

/// Gradient of [`rope_thd`] with respect to xs.
pub fn rope_thd_bwd(grad: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    run(RopeLayout::Thd, -1.0, grad, cos, sin)
}

/// Any of the three ops by layout.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::rope::{RopeConfig, RopeLayout, RopeTables, rope_i, rope_with};
///
/// let dev = Device::Cpu;
/// let t = RopeTables::new(&RopeConfig::new(10000.0, 4), 3, DType::F16, &dev)?;
/// let xs = Tensor::ones((1, 2, 3, 4), DType::F16, &dev)?;
/// let a = rope_with(RopeLayout::Interleaved, &xs, &t.cos, &t.sin)?;
/// let b = rope_i(&xs, &t.cos, &t.sin)?;
/// assert_eq!(
///     a.flatten_all()?.to_vec1::<half::f16>()?,
///     b.flatten_all()?.to_vec1::<half::f16>()?
/// );
/// # Ok(()) }
/// ```
pub fn rope_with(layout: RopeLayout, xs: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    run(layout, 1.0, xs, cos, sin)
}

/// Rotary embedding from positions: `positions` is (t,) or (b, t), integer (u8, u32, i64)
/// and non-negative; cos/sin of `freqs` at those positions are computed inside the op
/// (one row per distinct (batch, time) slot, shared by the heads) in xs's dtype and applied
/// as [`rope_with`] would apply [`RopeTables`] rows: the same bits as the table path.
/// Differentiable with respect to xs.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::rope::{RopeConfig, RopeLayout, RopeTables, rope, rope_fused};
///
/// let dev = Device::Cpu;
/// let t = RopeTables::new(&RopeConfig::llama31(8), 1000, DType::F32, &dev)?;
/// // Three tokens at positions 7, 999 and 0 (decode-style, not 0..t).
/// let positions = Tensor::new(&[7u32, 999, 0], &dev)?;
/// let xs = Tensor::arange(0f32, 48., &dev)?.reshape((1, 2, 3, 8))?;
/// let y = rope_fused(RopeLayout::Halves, &xs, &positions, &t.freqs)?;
/// // The same bits as the table path on the rows of those positions.
/// let (cos, sin) = (t.cos.index_select(&positions, 0)?, t.sin.index_select(&positions, 0)?);
/// let z = rope(&xs, &cos, &sin)?;
/// assert_eq!(y.flatten_all()?.to_vec1::<f32>()?, z.flatten_all()?.to_vec1::<f32>()?);
/// # Ok(()) }
/// ```
pub fn rope_fused(
    layout: RopeLayout,
    xs: &Tensor,
    positions: &Tensor,
    freqs: &RopeFreqs,
) -> Result<Tensor> {
    let name = layout.name();
    let dims = xs.dims();
    if dims.len() != 4 {
        return Err(err(format!(
            "{name} (fused): xs must be 4D, got {:?}",
            xs.shape()
        )));
    }
    let (b, t, d) = match layout {
        RopeLayout::Thd => (dims[0], dims[1], dims[3]),
        _ => (dims[0], dims[2], dims[3]),
    };
    if d != 2 * freqs.inv_freq.len() {
        return Err(err(format!(
            "{name} (fused): head size {d} does not match rotary_dim {}",
            2 * freqs.inv_freq.len()
        )));
    }
    let pos: Vec<i64> = match positions.dtype() {
        DType::U8 | DType::U32 | DType::I64 => positions
            .to_dtype(DType::I64)?
            .flatten_all()?
            .to_vec1::<i64>()?,
        other => {
            return Err(err(format!(
                "{name} (fused): positions must be integers (u8, u32, i64), got {other:?}"
            )));
        }
    };
    let batched = match *positions.dims() {
        [pt] if pt == t => false,
        [pb, pt] if pb == b && pt == t => true,
        _ => {
            return Err(err(format!(
                "{name} (fused): positions must be (t,) = ({t},) or (b, t) = ({b}, {t}), got {:?}",
                positions.shape()
            )));
        }
    };
    if let Some(p) = pos.iter().find(|p| **p < 0) {
        return Err(err(format!("{name} (fused): negative position {p}")));
    }
    if let Some(p) = pos.iter().find(|p| **p > u32::MAX as i64) {
        return Err(err(format!("{name} (fused): position {p} above 2^32 - 1")));
    }
    if !matches!(xs.dtype(), DType::F32 | DType::BF16 | DType::F16) {
        return Err(err(format!(
            "{name} (fused): dtype {:?} not supported (f32, bf16, f16)",
            xs.dtype()
        )));
    }
    if !xs.device().same_device(positions.device()) {
        return Err(err(format!(
            "{name} (fused): xs and positions must be on the same device"
        )));
    }
    // CPU: one row of cos/sin per (batch, time) slot, shared by the heads, then the table
    // kernel; CUDA: cos/sin computed per element in the kernel (repro_rope_fused_*).
    let op = FusedOp {
        layout,
        sgn: 1.0,
        inv: std::sync::Arc::new(freqs.inv_freq.clone()),
        af: freqs.attention_factor,
    };
    let pos = positions.to_dtype(DType::U32)?.contiguous()?;
    let _ = batched;
    xs.contiguous()?.apply_op2(&pos, op)
}

/// The fused op on a device: xs and u32 positions ((t,) or (b, t)), cos/sin computed per
/// element from the frequencies (the same [`cos_sin_entry`] as the tables), forward
/// (`sgn = 1`) or backward (`sgn = -1`).
#[derive(Debug, Clone)]
struct FusedOp {
    layout: RopeLayout,
    sgn: f64,
    inv: std::sync::Arc<Vec<f32>>,
    af: f32,
}

impl FusedOp {
    fn geometry(&self, lx: &Layout, lp: &Layout) -> Result<Geometry> {
        let (b, h, t, d) = match self.layout {
            RopeLayout::Thd => {
                let (b, t, h, d) = lx.shape().dims4()?;
                (b, h, t, d)
            }
            _ => lx.shape().dims4()?,
        };
        Ok(Geometry {
            layout: self.layout,
            b,
            h,
            t,
            d,
            cs_t: t,
            batched: lp.dims().len() == 2,
        })
    }
}

impl candle_core::CustomOp2 for FusedOp {
    fn name(&self) -> &'static str {
        "repro-rope-fused"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let g = self.geometry(l1, l2)?;
        let pos: Vec<u64> = match s2 {
            CpuStorage::U32(p) => contiguous(p, l2, "positions")?
                .iter()
                .map(|&v| v as u64)
                .collect(),
            _ => return Err(err("rope (fused): positions must be u32 here".into())),
        };
        fn go<F: Format + Default + candle_core::WithDType>(
            op: &FusedOp,
            g: &Geometry,
            pos: &[u64],
            x: &[F],
            l1: &Layout,
        ) -> Result<CpuStorage> {
            let x = contiguous(x, l1, "xs")?;
            let n = pos.len() * op.inv.len();
            let (mut c, mut s) = (vec![F::default(); n], vec![F::default(); n]);
            tables::fill_rows(&op.inv, op.af, pos, &mut c, &mut s);
            Ok(F::to_cpu_storage_owned(apply::apply(g, x, &c, &s, op.sgn)))
        }
        let out = match s1 {
            CpuStorage::F32(x) => go(self, &g, &pos, x, l1)?,
            CpuStorage::BF16(x) => go(self, &g, &pos, x, l1)?,
            CpuStorage::F16(x) => go(self, &g, &pos, x, l1)?,
            _ => return Err(err("rope (fused): dtype not supported".into())),
        };
        Ok((out, l1.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let (x, pos) = ((s1, l1), (s2, l2));
        let out = cuda::rope_fused(
            &s1.device,
            self.layout,
            self.sgn,
            &self.inv,
            self.af,
            x,
            pos,
        )?;
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        _xs: &Tensor,
        positions: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let op = FusedOp {
            sgn: -self.sgn,
            ..self.clone()
        };
        let dx = grad.contiguous()?.apply_op2_no_bwd(positions, &op)?;
        Ok((Some(dx), None))
    }
}
