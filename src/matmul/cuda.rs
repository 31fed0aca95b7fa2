//! The CUDA half of the matmul: launches of `kernels/matmul.cu` (PTX built by `build.rs`).
//! The same definition and the same decisions as `cpu.rs` (`kernels/matmul/tiers.cuh`
//! mirrors them, checked by `tests/matmul_cuda_hostcheck.rs`): the stats kernel computes
//! every row norm of A and column norm of B with their sign classes, then the product
//! kernel sums each output's products in f64 in its own tiled order and decides it with
//! the same tiers. Inputs are read in place through their strides (64-bit indices), with
//! one base offset per batch index; the output is contiguous.

use super::{batch_bases, product_shape};
use crate::math::f8::Overflow;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use candle_core::cuda_backend::{CudaStorageSlice, WrapErr};
use candle_core::{CudaDevice, CudaStorage, DType, Error, Layout, Result, Shape};

/// PTX of `kernels/matmul.cu`.
pub const MATMUL_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/matmul.ptx"));

/// Module name under which the PTX is loaded into candle's per-device module cache.
const MODULE: &str = "candle_repro_matmul";

/// Threads per block (`REPRO_MM_BLOCK`) and outputs per block side (`REPRO_MM_TILE`).
const BLOCK: u32 = 256;
const TILE: u64 = 64;
/// Blocks at most (more work is taken by the grid-stride loops; no effect on the bits).
const MAX_BLOCKS: u64 = 65_535;

fn grid(units: u64, per_block: u64) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (units.div_ceil(per_block).clamp(1, MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

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

/// A storage's slice as a kernel argument, whatever its dtype.
fn push_slice<'a>(
    b: &mut candle_core::cuda_backend::cudarc::driver::LaunchArgs<'a>,
    s: &'a CudaStorageSlice,
) -> Result<()> {
    match s {
        CudaStorageSlice::F32(v) => b.arg(v),
        CudaStorageSlice::BF16(v) => b.arg(v),
        CudaStorageSlice::F16(v) => b.arg(v),
        CudaStorageSlice::F8E4M3(v) => b.arg(v),
        _ => candle_core::bail!("candle-repro matmul: unsupported CUDA storage"),
    };
    Ok(())
}

/// Norms and sign classes of `lines` lines of a strided operand.
struct LineStats {
    norm: CudaSlice<f64>,
    signs: CudaSlice<u8>,
}

#[allow(clippy::too_many_arguments)]
fn line_stats(
    dev: &CudaDevice,
    s: &CudaStorage,
    bases: &CudaSlice<u64>,
    per_batch: u64,
    lines: u64,
    len: u64,
    line_stride: u64,
    elem_stride: u64,
) -> Result<LineStats> {
    // SAFETY: the kernel writes every element.
    let mut norm = unsafe { dev.alloc::<f64>(lines.max(1) as usize)? };
    let mut signs = unsafe { dev.alloc::<u8>(lines.max(1) as usize)? };
    if lines > 0 {
        let name = format!("repro_matmul_stats_{}", suffix(s.dtype())?);
        let func = dev.get_or_load_custom_func(&name, MODULE, MATMUL_PTX)?;
        let mut b = func.builder();
        b.arg(&lines);
        b.arg(&len);
        push_slice(&mut b, &s.slice)?;
        b.arg(bases);
        b.arg(&per_batch);
        b.arg(&line_stride);
        b.arg(&elem_stride);
        b.arg(&mut norm);
        b.arg(&mut signs);
        // SAFETY: the arguments follow the kernel's signature; every line's elements lie
        // in the storage (the layout's own extent).
        unsafe { b.launch(grid(lines, BLOCK as u64)) }.w()?;
    }
    Ok(LineStats { norm, signs })
}

/// The product a b (+ bias) of CUDA tensors into dtype `out` (see `super`'s header);
/// `start_tier` as `CpuConfig::start_tier` (tests).
pub(crate) fn matmul(
    a: (&CudaStorage, &Layout),
    b: (&CudaStorage, &Layout),
    bias: Option<(&CudaStorage, &Layout)>,
    out: DType,
    start_tier: Option<u8>,
) -> Result<(CudaStorage, Shape)> {
    let (shape, m, k, n) = product_shape(a.1.shape(), b.1.shape(), "matmul")?;
    let dev = &a.0.device;
    let (m, k, n) = (m as u64, k as u64, n as u64);
    let a_bases = batch_bases(a.1);
    let batch = a_bases.len() as u64;
    let b_bases = batch_bases(b.1);
    let total = (batch * m * n) as usize;
    let name = format!("repro_matmul_{}_{}", suffix(a.0.dtype())?, suffix(out)?);
    let out_slice = match out {
        // SAFETY (each arm): the product kernel writes every output.
        DType::F32 => CudaStorageSlice::F32(unsafe { dev.alloc::<f32>(total)? }),
        DType::BF16 => CudaStorageSlice::BF16(unsafe { dev.alloc::<half::bf16>(total)? }),
        DType::F16 => CudaStorageSlice::F16(unsafe { dev.alloc::<half::f16>(total)? }),
        other => return Err(Error::UnsupportedDTypeForOp(other, "matmul").bt()),
    };
    let mut out_store = CudaStorage {
        slice: out_slice,
        device: dev.clone(),
    };
    if total == 0 {
        return Ok((out_store, shape));
    }
    let a_bases = dev.clone_htod(a_bases.as_slice())?;
    let b_bases = dev.clone_htod(b_bases.as_slice())?;
    let (ast, bst) = (a.1.stride(), b.1.stride());
    let r = ast.len();
    let (a_rs, a_cs) = (ast[r - 2] as u64, ast[r - 1] as u64);
    let (b_rs, b_cs) = (bst[r - 2] as u64, bst[r - 1] as u64);
    let rows = line_stats(dev, a.0, &a_bases, m, batch * m, k, a_rs, a_cs)?;
    let cols = line_stats(dev, b.0, &b_bases, n, batch * n, k, b_cs, b_rs)?;
    let exact_sums = a.0.dtype() == DType::F8E4M3 && k as usize <= super::cpu::F8_EXACT_MAX_K;
    let coeff =
        super::cpu::tier1_coeff(k as usize, bias.is_some(), exact_sums, start_tier.is_none());
    let start_tier = start_tier.unwrap_or(1) as i32;
    let (bias_base, bias_stride, has_bias) = match bias {
        Some((_, l)) => (l.start_offset() as u64, l.stride()[0] as u64, 1i32),
        None => (0u64, 0u64, 0i32),
    };
    let func = dev.get_or_load_custom_func(&name, MODULE, MATMUL_PTX)?;
    let mut bld = func.builder();
    bld.arg(&batch);
    bld.arg(&m);
    bld.arg(&n);
    bld.arg(&k);
    push_slice(&mut bld, &a.0.slice)?;
    bld.arg(&a_bases);
    bld.arg(&a_rs);
    bld.arg(&a_cs);
    push_slice(&mut bld, &b.0.slice)?;
    bld.arg(&b_bases);
    bld.arg(&b_rs);
    bld.arg(&b_cs);
    match bias {
        Some((s, _)) => push_slice(&mut bld, &s.slice)?,
        // Never read without a bias; any device pointer stands in.
        None => {
            bld.arg(&cols.signs);
        }
    }
    bld.arg(&bias_base);
    bld.arg(&bias_stride);
    bld.arg(&has_bias);
    bld.arg(&coeff);
    bld.arg(&start_tier);
    bld.arg(&rows.norm);
    bld.arg(&rows.signs);
    bld.arg(&cols.norm);
    bld.arg(&cols.signs);
    match &mut out_store.slice {
        CudaStorageSlice::F32(v) => bld.arg(v),
        CudaStorageSlice::BF16(v) => bld.arg(v),
        CudaStorageSlice::F16(v) => bld.arg(v),
        _ => unreachable!("allocated above"),
    };
    let tiles = batch * m.div_ceil(TILE) * n.div_ceil(TILE);
    // SAFETY: the arguments follow the kernel's signature; A, B and the bias are read at
    // offsets inside their layouts' extents, the output has batch * m * n elements, the
    // stats batch * m and batch * n.
    unsafe { bld.launch(grid(tiles, 1)) }.w()?;
    Ok((out_store, shape))
}

/// The f8e4m3 cast of a CUDA tensor (`crate::ops::cast`), any layout.
pub(crate) fn to_f8e4m3(
    s: &CudaStorage,
    layout: &Layout,
    overflow: Overflow,
) -> Result<(CudaStorage, Shape)> {
    let dev = &s.device;
    let count = layout.shape().elem_count() as u64;
    let name = match s.dtype() {
        DType::F32 | DType::BF16 | DType::F16 => format!("repro_to_f8e4m3_{}", suffix(s.dtype())?),
        other => return Err(Error::UnsupportedDTypeForOp(other, "to_f8e4m3").bt()),
    };
    // SAFETY: the kernel writes every element.
    let mut out = unsafe { dev.alloc::<float8::F8E4M3>(count as usize)? };
    if count > 0 {
        let mut dims_strides: Vec<u64> = layout.dims().iter().map(|&d| d as u64).collect();
        dims_strides.extend(layout.stride().iter().map(|&x| x as u64));
        let dims_strides = dev.clone_htod(dims_strides.as_slice())?;
        let rank = layout.dims().len() as u32;
        let base = layout.start_offset() as u64;
        let mode: i32 = match overflow {
            Overflow::Saturate => 0,
            Overflow::Nan => 1,
        };
        let func = dev.get_or_load_custom_func(&name, MODULE, MATMUL_PTX)?;
        let mut b = func.builder();
        b.arg(&count);
        b.arg(&mode);
        push_slice(&mut b, &s.slice)?;
        b.arg(&base);
        b.arg(&rank);
        b.arg(&dims_strides);
        b.arg(&mut out);
        // SAFETY: the arguments follow the kernel's signature; every element's offset
        // (base plus the strided index) lies inside the layout's extent, the output has
        // `count` elements.
        unsafe { b.launch(grid(count, BLOCK as u64)) }.w()?;
    }
    Ok((
        CudaStorage::wrap_cuda_slice(out, dev.clone()),
        layout.shape().clone(),
    ))
}
