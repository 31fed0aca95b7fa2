//! The device half of the quantized product: launch plans of
//! `kernels/quantized/quantized.cu` (PTX built by `build.rs`), with the same definition and
//! the same decisions as `cpu.rs` (run whole on the emulated device by
//! `tests/emulated_device.rs`, every block type against the CPU op). The matmul's stats
//! kernel computes x's row norms and sign classes, then one of two product kernels sums
//! each output in f64 over the weight row's exact values (`kernels/quantized/blocks.cuh`,
//! the mirror of `blocks.rs`) and decides it with the CPU's tiers:
//!
//! * decode, m <= [`GEMV_MAX_ROWS`] rows of x: `repro_qgemv_*`, one warp per output column
//!   for all m rows at once (the weight row read and decoded once, 8 weights per lane per
//!   chunk of 256, per-element decoding in registers, a fixed shuffle reduction);
//! * otherwise `repro_qmatmul_*`, one thread per output (the weight row decoded block by
//!   block).
//!
//! The choice depends on m alone (invariant 3), and it cannot show in the bits anyway: each
//! output is defined as the exact sum rounded once, both kernels sum in orders covered by
//! tier 1's bound (the kernel header has the count for each) and every tier returns the
//! correctly rounded value or nothing.
//!
//! The weight lives on the device as a [`QDeviceWeight`]: its block bytes (U8, row j at
//! j * row_bytes, as in the GGUF tensor) and the row stats computed once on the host when
//! the weight is built (`cpu::row_stats`: each row's norm as F64, its sign classes as U8).
//! The kernels know the block type by its `ggml_type` number ([`type_id`], the table of
//! `blocks.cuh`).

use super::QMatMul;
use super::blocks;
use crate::launch::{
    Device, KernelArg, LaunchPlan, Module, Slot, float_suffix, grid_stride_blocks,
};
use crate::matmul::cpu::LineStats;
use candle_core::quantized::GgmlDType;
use candle_core::{DType, Layout, Result, Shape, bail};

/// Threads per block (`REPRO_QMM_BLOCK`).
const BLOCK: u32 = 128;
/// Blocks at most (more outputs are taken by the grid-stride loop; no effect on the bits).
const MAX_BLOCKS: u64 = 65_535;
/// Rows of x up to which the decode kernel `repro_qgemv_*` runs (`REPRO_QGEMV_MAX_ROWS`: its
/// per-row sums live in registers); more rows take `repro_qmatmul_*`.
pub const GEMV_MAX_ROWS: usize = 4;
/// Output columns per block of the decode kernel (`REPRO_QGEMV_WARPS`: one warp each).
const GEMV_WARPS: u32 = 4;

/// The block type's id in the kernels: ggml's `ggml_type` number, the tensor type field of
/// a GGUF file (the same table as `RQ_TYPE_*` in `kernels/quantized/blocks.cuh`).
pub fn type_id(ty: GgmlDType) -> u32 {
    match ty {
        GgmlDType::F32 => 0,
        GgmlDType::F16 => 1,
        GgmlDType::Q4_0 => 2,
        GgmlDType::Q4_1 => 3,
        GgmlDType::Q5_0 => 6,
        GgmlDType::Q5_1 => 7,
        GgmlDType::Q8_0 => 8,
        GgmlDType::Q8_1 => 9,
        GgmlDType::Q2K => 10,
        GgmlDType::Q3K => 11,
        GgmlDType::Q4K => 12,
        GgmlDType::Q5K => 13,
        GgmlDType::Q6K => 14,
        GgmlDType::Q8K => 15,
        GgmlDType::BF16 => 30,
    }
}

/// A quantized weight (n, k) on a device: what the product kernel reads of it.
pub struct QDeviceWeight<B> {
    /// The block type.
    pub ty: GgmlDType,
    /// Rows (outputs).
    pub n: usize,
    /// Weights per row (inputs), whole blocks.
    pub k: usize,
    /// The block bytes (U8), row j at `j * k / LEN * BYTES`.
    pub bytes: B,
    /// Each row's norm of its exact values (F64; any summation order: a bound only).
    pub norms: B,
    /// Each row's sign classes (U8; bit 0: some value has its sign bit clear, bit 1: some
    /// has it set).
    pub signs: B,
}

impl<B> std::fmt::Debug for QDeviceWeight<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QDeviceWeight({:?}, {} x {})", self.ty, self.n, self.k)
    }
}

/// Bytes per weight row.
fn row_bytes(ty: GgmlDType, k: usize) -> usize {
    let (len, size) = blocks::geometry(ty);
    k / len * size
}

/// The weight's bytes and row stats uploaded to `dev` (every buffer at least one element
/// long: a weight of no rows or no columns allocates nothing empty).
pub(crate) fn upload<D: Device + ?Sized>(
    dev: &D,
    ty: GgmlDType,
    n: usize,
    k: usize,
    bytes: &[u8],
    stats: &[LineStats],
) -> Result<QDeviceWeight<D::Buffer>> {
    if bytes.len() != n * row_bytes(ty, k) || stats.len() != n {
        bail!(
            "candle-repro QMatMul: a {ty:?} weight of {n} x {k} with {} bytes and {} row stats",
            bytes.len(),
            stats.len()
        )
    }
    let norms: Vec<f64> = stats.iter().map(|s| s.norm).collect();
    let signs: Vec<u8> = stats.iter().map(|s| s.signs).collect();
    let at_least_one = |v: &[u8]| if v.is_empty() { vec![0] } else { v.to_vec() };
    Ok(QDeviceWeight {
        ty,
        n,
        k,
        bytes: dev.upload_u8(&at_least_one(bytes))?,
        norms: dev.upload_f64(if norms.is_empty() { &[0.0] } else { &norms })?,
        signs: dev.upload_u8(&at_least_one(&signs))?,
    })
}

/// `w`'s weight (its bytes as read on the host, and its row stats) uploaded to `dev`: for the device tests (a `QMatMul` of a CUDA QTensor keeps its
/// own copy, uploaded when built).
#[doc(hidden)]
pub fn upload_weight<D: Device + ?Sized>(dev: &D, w: &QMatMul) -> Result<QDeviceWeight<D::Buffer>> {
    let w = &w.w;
    let bytes = w.host_bytes()?;
    upload(dev, w.ty, w.n, w.k, &bytes, &w.stats)
}

/// x (.., k; f32, bf16 or f16, contiguous) times the weight's transpose (+ bias: n values
/// of f32, bf16 or f16, any stride), every output the exact sum rounded once into x's
/// dtype (see `super`'s header): a new contiguous buffer (.., n) and its shape.
/// `start_tier` as `CpuConfig::start_tier` (tests).
pub fn qmatmul<D: Device + ?Sized>(
    dev: &D,
    x: (&D::Buffer, &Layout),
    w: &QDeviceWeight<D::Buffer>,
    bias: Option<(&D::Buffer, &Layout)>,
    start_tier: Option<u8>,
) -> Result<(D::Buffer, Shape)> {
    let (xb, xl) = x;
    let dtype = dev.dtype(xb);
    let xs = float_suffix(dtype, "QMatMul")?;
    let dims = xl.dims();
    let Some((&k, lead)) = dims.split_last() else {
        bail!("candle-repro QMatMul: a scalar input has no feature dimension")
    };
    if k != w.k {
        bail!(
            "candle-repro QMatMul: input {dims:?} against a weight of {} x {}",
            w.n,
            w.k
        )
    }
    if !xl.is_contiguous() {
        bail!("candle-repro QMatMul: the device input must be contiguous")
    }
    let (n, m) = (w.n, lead.iter().product::<usize>());
    let rb = row_bytes(w.ty, k);
    if dev.dtype(&w.bytes) != DType::U8
        || dev.len(&w.bytes) < n * rb
        || dev.dtype(&w.norms) != DType::F64
        || dev.len(&w.norms) < n
        || dev.dtype(&w.signs) != DType::U8
        || dev.len(&w.signs) < n
    {
        bail!("candle-repro QMatMul: the device weight's buffers do not hold {w:?}")
    }
    let bias_dtype = match bias {
        None => dtype,
        Some((b, l)) => {
            if l.dims() != [n] {
                bail!(
                    "candle-repro QMatMul: the bias must be a vector of {n} values, got {:?}",
                    l.dims()
                )
            }
            dev.dtype(b)
        }
    };
    let bs = float_suffix(bias_dtype, "QMatMul")?;
    let mut out_dims = lead.to_vec();
    out_dims.push(n);
    let total = m * n;
    let mut out = dev.alloc(dtype, total)?;
    if total == 0 {
        return Ok((out, Shape::from(out_dims)));
    }
    let bases = dev.upload_u64(&[xl.start_offset() as u64])?;
    let (m64, k64) = (m as u64, k as u64);
    let rows = crate::matmul::cuda::line_stats(dev, xb, &bases, m64, m64, k64, k64, 1)?;
    let coeff = super::cpu::tier1_coeff(k, bias.is_some(), start_tier.is_none());
    let (bias_base, bias_stride) = match bias {
        Some((_, l)) => (l.start_offset() as u64, l.stride()[0] as u64),
        None => (0, 0),
    };
    // Slots: 0 x, 1 the weight's bytes, 2 and 3 x's stats, 4 and 5 the weight's, 6 the
    // output, 7 the bias.
    // The decode kernel for up to GEMV_MAX_ROWS rows (one warp per column: n warps), else
    // one thread per output. Either gives the same bits (the module header).
    let (name, blocks, threads) = if m <= GEMV_MAX_ROWS {
        let t = GEMV_WARPS * 32;
        (
            format!("repro_qgemv_{xs}_{bs}"),
            grid_stride_blocks(n as u64 * 32, t, MAX_BLOCKS),
            t,
        )
    } else {
        (
            format!("repro_qmatmul_{xs}_{bs}"),
            grid_stride_blocks(total as u64, BLOCK, MAX_BLOCKS),
            BLOCK,
        )
    };
    let plan = LaunchPlan::new(Module::Quantized, name, blocks, threads)
        .arg(KernelArg::U64(m64))
        .arg(KernelArg::U64(n as u64))
        .arg(KernelArg::U64(k64))
        .arg(KernelArg::U32(type_id(w.ty)))
        .buf(0, dtype, xl.start_offset(), m * k)
        .buf(1, DType::U8, 0, n * rb)
        .buf(2, DType::F64, 0, m)
        .buf(3, DType::U8, 0, m)
        .buf(4, DType::F64, 0, n)
        .buf(5, DType::U8, 0, n);
    let plan = match bias {
        Some((b, _)) => plan.buf(7, bias_dtype, 0, dev.len(b)),
        None => plan.arg(KernelArg::Null),
    };
    let plan = plan
        .arg(KernelArg::U64(bias_base))
        .arg(KernelArg::U64(bias_stride))
        .arg(KernelArg::I32(bias.is_some() as i32))
        .arg(KernelArg::F64(coeff))
        .arg(KernelArg::I32(start_tier.unwrap_or(1) as i32))
        .buf(6, dtype, 0, total);
    let mut slots = vec![
        Slot::In(xb),
        Slot::In(&w.bytes),
        Slot::In(&rows.norm),
        Slot::In(&rows.signs),
        Slot::In(&w.norms),
        Slot::In(&w.signs),
        Slot::Out(&mut out),
    ];
    if let Some((b, _)) = bias {
        slots.push(Slot::In(b));
    }
    dev.launch(&plan, &mut slots)?;
    Ok((out, Shape::from(out_dims)))
}
