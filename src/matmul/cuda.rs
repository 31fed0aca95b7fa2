//! The device half of the matmul: launch plans of `kernels/matmul/matmul.cu` (PTX built by
//! `build.rs`). The same definition and the same decisions as `cpu.rs`
//! (`kernels/matmul/tiers.cuh` mirrors them, run whole on the emulated device by
//! `tests/emulated_device.rs`; its dot products checked on the host by
//! `tests/matmul_cuda_hostcheck.rs`): the stats kernel
//! computes every row norm of A and column norm of B with their sign classes, then the
//! product kernel sums each output's products in f64 in its own tiled order and decides it
//! with the same tiers. Inputs are read in place through their strides (64-bit indices),
//! with one base offset per batch index; the output is contiguous.

use super::{batch_bases, product_shape};
use crate::launch::{Device, KernelArg, LaunchPlan, Module, Slot, grid_stride_blocks};
use crate::math::f8::Overflow;
use candle_core::{DType, Error, Layout, Result, Shape};

/// Threads per block (`REPRO_MM_BLOCK`) and outputs per block side (`REPRO_MM_TILE`).
const BLOCK: u32 = 256;
const TILE: u64 = 64;
/// Warps per block of the integer tier's product kernel (`REPRO_MM_OZ_WARPS`).
const OZ_WARPS: u32 = 4;
/// Warps per block of the tiled integer tier (`REPRO_MM_OZT_WARPS`), rows of A per block
/// (`RM_OZT_BM`).
const OZT_WARPS: u32 = 4;
const OZT_BM: u64 = 64;
/// Blocks at most (more work is taken by the grid-stride loops; no effect on the bits).
const MAX_BLOCKS: u64 = 65_535;

/// The kernel-name suffix of an input or output dtype.
fn suffix(d: DType) -> Result<&'static str> {
    Ok(match d {
        DType::F32 => "f32",
        DType::BF16 => "bf16",
        DType::F16 => "f16",
        DType::F8E4M3 => "f8e4m3",
        other => return Err(Error::UnsupportedDTypeForOp(other, "matmul").bt()),
    })
}

/// Norms (F64) and sign classes (U8) of `lines` lines of a strided operand.
#[doc(hidden)]
pub struct LineStats<B> {
    pub norm: B,
    pub signs: B,
}

/// The launch of a kernel over an operand's lines (`<kernel>_<in>`, `threads_per_line`),
/// with the arguments every such kernel starts with: `lines_at` = (per_batch, lines, len,
/// line_stride, elem_stride) as [`line_stats`] takes them.
fn per_line_plan<D: Device + ?Sized>(
    dev: &D,
    kernel: &str,
    s: &D::Buffer,
    bases: &D::Buffer,
    (per_batch, lines, len, line_stride, elem_stride): (u64, u64, u64, u64, u64),
    threads_per_line: u64,
) -> Result<LaunchPlan> {
    let dtype = dev.dtype(s);
    let name = format!("{kernel}_{}", suffix(dtype)?);
    let blocks = grid_stride_blocks(lines * threads_per_line, BLOCK, MAX_BLOCKS);
    Ok(LaunchPlan::new(Module::Matmul, name, blocks, BLOCK)
        .arg(KernelArg::U64(lines))
        .arg(KernelArg::U64(len))
        .buf(0, dtype, 0, dev.len(s))
        .buf(1, DType::I64, 0, dev.len(bases))
        .arg(KernelArg::U64(per_batch))
        .arg(KernelArg::U64(line_stride))
        .arg(KernelArg::U64(elem_stride)))
}

/// The operand's lines: `lines` of `len` elements, line `i` of batch `i / per_batch` at
/// `bases[i / per_batch] + (i % per_batch) line_stride`, elements `elem_stride` apart.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn line_stats<D: Device + ?Sized>(
    dev: &D,
    s: &D::Buffer,
    bases: &D::Buffer,
    per_batch: u64,
    lines: u64,
    len: u64,
    line_stride: u64,
    elem_stride: u64,
) -> Result<LineStats<D::Buffer>> {
    let mut norm = dev.alloc(DType::F64, lines.max(1) as usize)?;
    let mut signs = dev.alloc(DType::U8, lines.max(1) as usize)?;
    if lines > 0 {
        let lines_at = (per_batch, lines, len, line_stride, elem_stride);
        // Contiguous lines one warp each, strided ones 8 threads each (the kernel's
        // header): a function of the layout only.
        let threads_per_line = if elem_stride == 1 { 32 } else { 8 };
        let plan = per_line_plan(
            dev,
            "repro_matmul_stats",
            s,
            bases,
            lines_at,
            threads_per_line,
        )?
        .buf(2, DType::F64, 0, lines as usize)
        .buf(3, DType::U8, 0, lines as usize);
        let slots = &mut [
            Slot::In(s),
            Slot::In(bases),
            Slot::Out(&mut norm),
            Slot::Out(&mut signs),
        ];
        dev.launch(&plan, slots)?;
    }
    Ok(LineStats { norm, signs })
}

/// The kernel that forms each output's first sum. Which one runs changes no bit: each gives
/// the correctly rounded value or hands the output to tiers 2 and 3.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tier1 {
    /// The kernel measured fastest for the input dtype ([`Tier1::for_input`]).
    #[default]
    Auto,
    /// f64 sums in shared-memory tiles (`repro_matmul_<in>_<out>`), every input dtype.
    F64Tiles,
    /// The integer tier on the int8 tensor cores (`kernels/matmul/ozaki.cuh`, sm_80+) for
    /// f32, bf16 and f16 inputs; f8e4m3 inputs keep the f64 tiles, where their sums are
    /// exact.
    Int8Slices,
    /// The integer tier from shared-memory tiles (`repro_matmul_ozakit_*`, 64 x 8 NT
    /// outputs per block of 4 warps, ozaki.cuh's "The tiled kernel"): the same integers.
    Int8Tiled,
}

impl Tier1 {
    /// The default kernel per input dtype, from the 4096³ products timed on an H100
    /// (docs/PERFORMANCE.md, "Matmul on the int8 tensor cores"): the integer tier's tiled
    /// kernel for f32, bf16 and f16; the f64 tiles for f8e4m3, whose sums they form
    /// exactly. A function of the dtype alone.
    pub fn for_input(dtype: DType) -> Tier1 {
        match dtype {
            DType::F32 | DType::BF16 | DType::F16 => Tier1::Int8Tiled,
            _ => Tier1::F64Tiles,
        }
    }
}

/// The integer tier's k-block (`RM_OZ_KB`) and slices per input dtype (`OzSlices`).
const OZ_KB: u64 = 64;
fn oz_slices(d: DType) -> u64 {
    if d == DType::F32 { 6 } else { 4 }
}
/// The tiled kernel's n8 tiles per warp (`OzTile`): its block is 64 x 8 NT outputs.
fn oz_tile_nt(d: DType) -> u64 {
    if d == DType::F32 { 2 } else { 4 }
}

/// The integer tier's coefficient c = N 2^-53 (1 + 2^-20), N = nb (2S - 1) (+ 1 with a
/// bias), nb = ceil(k / 64), S slices (`kernels/matmul/ozaki.cuh`'s header); NaN with tier
/// 1 off or k >= 2^26, as `cpu::tier1_coeff`.
pub(crate) fn ozaki_coeff(k: usize, has_bias: bool, slices: u64, tier1_on: bool) -> f64 {
    if !tier1_on || k >= super::cpu::FAST_MAX_K {
        f64::NAN
    } else {
        let nb = (k as u64).div_ceil(OZ_KB);
        (nb * (2 * slices - 1) + has_bias as u64) as f64 * super::cpu::GAMMA_UNIT
    }
}

/// The integer tier's slices (U8), block exponents (U32, read as int32) and tail norms
/// (F64) of `lines` lines, read as [`line_stats`] reads them.
struct Slices<B> {
    bytes: B,
    exps: B,
    tail: B,
}

#[allow(clippy::too_many_arguments)]
fn slices<D: Device + ?Sized>(
    dev: &D,
    s: &D::Buffer,
    bases: &D::Buffer,
    per_batch: u64,
    lines: u64,
    len: u64,
    line_stride: u64,
    elem_stride: u64,
) -> Result<Slices<D::Buffer>> {
    let dtype = dev.dtype(s);
    let nb = len.div_ceil(OZ_KB);
    let count = (lines * nb * oz_slices(dtype) * OZ_KB) as usize;
    let mut bytes = dev.alloc(DType::U8, count.max(1))?;
    let mut exps = dev.alloc(DType::U32, ((lines * nb) as usize).max(1))?;
    let mut tail = dev.alloc(DType::F64, (lines as usize).max(1))?;
    if lines > 0 {
        let lines_at = (per_batch, lines, len, line_stride, elem_stride);
        let plan = per_line_plan(dev, "repro_matmul_slices", s, bases, lines_at, 32)?
            .arg(KernelArg::U64(nb))
            .buf(2, DType::U8, 0, count)
            .buf(3, DType::U32, 0, (lines * nb) as usize)
            .buf(4, DType::F64, 0, lines as usize);
        let slots = &mut [
            Slot::In(s),
            Slot::In(bases),
            Slot::Out(&mut bytes),
            Slot::Out(&mut exps),
            Slot::Out(&mut tail),
        ];
        dev.launch(&plan, slots)?;
    }
    Ok(Slices { bytes, exps, tail })
}

/// The product a b (+ bias) into dtype `out` (see `super`'s header), a new contiguous
/// buffer and its shape; `start_tier` as `CpuConfig::start_tier` (tests; here also
/// `Some(0)`: tier 1 alone, the outputs it cannot decide written as NaN). The operands'
/// shapes as [`crate::matmul()`] admits them (the bias a vector of n values of `out`).
pub fn matmul<D: Device + ?Sized>(
    dev: &D,
    a: (&D::Buffer, &Layout),
    b: (&D::Buffer, &Layout),
    bias: Option<(&D::Buffer, &Layout)>,
    out: DType,
    start_tier: Option<u8>,
) -> Result<(D::Buffer, Shape)> {
    matmul_tier1(dev, a, b, bias, out, start_tier, Tier1::default())
}

/// [`matmul`] with tier 1 from the given kernel (tests and benchmarks: no output changes
/// with it).
#[doc(hidden)]
pub fn matmul_tier1<D: Device + ?Sized>(
    dev: &D,
    a: (&D::Buffer, &Layout),
    b: (&D::Buffer, &Layout),
    bias: Option<(&D::Buffer, &Layout)>,
    out: DType,
    start_tier: Option<u8>,
    tier1: Tier1,
) -> Result<(D::Buffer, Shape)> {
    let (shape, m, k, n) = product_shape(a.1.shape(), b.1.shape(), "matmul")?;
    let (m, k, n) = (m as u64, k as u64, n as u64);
    let in_dtype = dev.dtype(a.0);
    if dev.dtype(b.0) != in_dtype {
        candle_core::bail!("candle-repro matmul: operands of different dtypes")
    }
    let tier1 = match tier1 {
        Tier1::Auto => Tier1::for_input(in_dtype),
        t => t,
    };
    let a_bases = batch_bases(a.1);
    let batch = a_bases.len() as u64;
    let b_bases = batch_bases(b.1);
    let total = (batch * m * n) as usize;
    let name = format!("repro_matmul_{}_{}", suffix(in_dtype)?, suffix(out)?);
    if !matches!(out, DType::F32 | DType::BF16 | DType::F16) {
        return Err(Error::UnsupportedDTypeForOp(out, "matmul").bt());
    }
    let mut out_buf = dev.alloc(out, total)?;
    if total == 0 {
        return Ok((out_buf, shape));
    }
    let a_bases = dev.upload_u64(&a_bases)?;
    let b_bases = dev.upload_u64(&b_bases)?;
    let (ast, bst) = (a.1.stride(), b.1.stride());
    let r = ast.len();
    let (a_rs, a_cs) = (ast[r - 2] as u64, ast[r - 1] as u64);
    let (b_rs, b_cs) = (bst[r - 2] as u64, bst[r - 1] as u64);
    let rows = line_stats(dev, a.0, &a_bases, m, batch * m, k, a_rs, a_cs)?;
    let cols = line_stats(dev, b.0, &b_bases, n, batch * n, k, b_cs, b_rs)?;
    let exact_sums = in_dtype == DType::F8E4M3 && k as usize <= super::cpu::F8_EXACT_MAX_K;
    let int8 = tier1 != Tier1::F64Tiles && in_dtype != DType::F8E4M3;
    // Some(0): tier 1 alone, its undecided outputs NaN (tests count what it decides).
    let tier1_on = start_tier.is_none_or(|t| t == 0);
    let coeff = if int8 {
        ozaki_coeff(k as usize, bias.is_some(), oz_slices(in_dtype), tier1_on)
    } else {
        super::cpu::tier1_coeff(k as usize, bias.is_some(), exact_sums, tier1_on)
    };
    // The integer tier's slices of A's rows and B's columns.
    let sliced = if int8 {
        Some((
            slices(dev, a.0, &a_bases, m, batch * m, k, a_rs, a_cs)?,
            slices(dev, b.0, &b_bases, n, batch * n, k, b_cs, b_rs)?,
        ))
    } else {
        None
    };
    let start_tier = start_tier.unwrap_or(1) as i32;
    let (bias_base, bias_stride, has_bias) = match bias {
        Some((_, l)) => (l.start_offset() as u64, l.stride()[0] as u64, 1i32),
        None => (0u64, 0u64, 0i32),
    };
    // Slots: 0 A, 1 its bases, 2 B, 3 its bases, 4..=7 the stats, 8 the output, 9 the bias,
    // 10..=15 the slices.
    let (name, grid, threads) = if int8 && tier1 == Tier1::Int8Tiled {
        let bn = 8 * oz_tile_nt(in_dtype);
        let tiles = batch * m.div_ceil(OZT_BM) * n.div_ceil(bn);
        let name = format!("repro_matmul_ozakit_{}_{}", suffix(in_dtype)?, suffix(out)?);
        (
            name,
            grid_stride_blocks(tiles, 1, MAX_BLOCKS),
            32 * OZT_WARPS,
        )
    } else if int8 {
        let tiles = batch * m.div_ceil(16) * n.div_ceil(8);
        let name = format!("repro_matmul_ozaki_{}_{}", suffix(in_dtype)?, suffix(out)?);
        (
            name,
            grid_stride_blocks(tiles, OZ_WARPS, MAX_BLOCKS),
            32 * OZ_WARPS,
        )
    } else {
        let tiles = batch * m.div_ceil(TILE) * n.div_ceil(TILE);
        (name, grid_stride_blocks(tiles, 1, MAX_BLOCKS), BLOCK)
    };
    let plan = LaunchPlan::new(Module::Matmul, name, grid, threads)
        .arg(KernelArg::U64(batch))
        .arg(KernelArg::U64(m))
        .arg(KernelArg::U64(n))
        .arg(KernelArg::U64(k))
        .buf(0, in_dtype, 0, dev.len(a.0))
        .buf(1, DType::I64, 0, batch as usize)
        .arg(KernelArg::U64(a_rs))
        .arg(KernelArg::U64(a_cs))
        .buf(2, in_dtype, 0, dev.len(b.0))
        .buf(3, DType::I64, 0, batch as usize)
        .arg(KernelArg::U64(b_rs))
        .arg(KernelArg::U64(b_cs));
    // Without a bias the kernel never reads it: the column signs stand in (slot 9).
    let plan = match bias {
        Some((s, _)) => plan.buf(9, out, 0, dev.len(s)),
        None => plan.buf(9, DType::U8, 0, 0),
    };
    let plan = plan
        .arg(KernelArg::U64(bias_base))
        .arg(KernelArg::U64(bias_stride))
        .arg(KernelArg::I32(has_bias))
        .arg(KernelArg::F64(coeff))
        .arg(KernelArg::I32(start_tier))
        .buf(4, DType::F64, 0, (batch * m) as usize)
        .buf(5, DType::U8, 0, (batch * m) as usize)
        .buf(6, DType::F64, 0, (batch * n) as usize)
        .buf(7, DType::U8, 0, (batch * n) as usize);
    let plan = match &sliced {
        Some((sa, sb)) => plan
            .buf(10, DType::U8, 0, dev.len(&sa.bytes))
            .buf(11, DType::U32, 0, dev.len(&sa.exps))
            .buf(12, DType::F64, 0, dev.len(&sa.tail))
            .buf(13, DType::U8, 0, dev.len(&sb.bytes))
            .buf(14, DType::U32, 0, dev.len(&sb.exps))
            .buf(15, DType::F64, 0, dev.len(&sb.tail)),
        None => plan,
    };
    let plan = plan.buf(8, out, 0, total);
    let mut slots = vec![
        Slot::In(a.0),
        Slot::In(&a_bases),
        Slot::In(b.0),
        Slot::In(&b_bases),
        Slot::In(&rows.norm),
        Slot::In(&rows.signs),
        Slot::In(&cols.norm),
        Slot::In(&cols.signs),
        Slot::Out(&mut out_buf),
    ];
    // Slot 9: the bias, or (unread) the column signs in its place.
    slots.push(Slot::In(bias.map_or(&cols.signs, |(s, _)| s)));
    if let Some((sa, sb)) = &sliced {
        for s in [&sa.bytes, &sa.exps, &sa.tail, &sb.bytes, &sb.exps, &sb.tail] {
            slots.push(Slot::In(s));
        }
    }
    dev.launch(&plan, &mut slots)?;
    Ok((out_buf, shape))
}

/// The f8e4m3 cast (`crate::ops::cast`) of the elements `layout` describes: a new
/// contiguous buffer.
pub fn to_f8e4m3<D: Device + ?Sized>(
    dev: &D,
    s: &D::Buffer,
    layout: &Layout,
    overflow: Overflow,
) -> Result<D::Buffer> {
    let dtype = dev.dtype(s);
    let count = layout.shape().elem_count() as u64;
    let name = match dtype {
        DType::F32 | DType::BF16 | DType::F16 => format!("repro_to_f8e4m3_{}", suffix(dtype)?),
        other => return Err(Error::UnsupportedDTypeForOp(other, "to_f8e4m3").bt()),
    };
    let mut out = dev.alloc(DType::F8E4M3, count as usize)?;
    if count > 0 {
        let mut dims_strides: Vec<u64> = layout.dims().iter().map(|&d| d as u64).collect();
        dims_strides.extend(layout.stride().iter().map(|&x| x as u64));
        let rank = layout.dims().len();
        let dims_strides = dev.upload_u64(&dims_strides)?;
        let mode: i32 = match overflow {
            Overflow::Saturate => 0,
            Overflow::Nan => 1,
        };
        let blocks = grid_stride_blocks(count, BLOCK, MAX_BLOCKS);
        let plan = LaunchPlan::new(Module::Matmul, name, blocks, BLOCK)
            .arg(KernelArg::U64(count))
            .arg(KernelArg::I32(mode))
            .buf(0, dtype, 0, dev.len(s))
            .arg(KernelArg::U64(layout.start_offset() as u64))
            .arg(KernelArg::U32(rank as u32))
            .buf(1, DType::I64, 0, 2 * rank)
            .buf(2, DType::F8E4M3, 0, count as usize);
        dev.launch(
            &plan,
            &mut [Slot::In(s), Slot::In(&dims_strides), Slot::Out(&mut out)],
        )?;
    }
    Ok(out)
}
