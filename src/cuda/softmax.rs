//! CUDA softmax and log-softmax over the last dimension, forward and backward: launches of
//! `kernels/softmax.cu` (one block of `BLOCK` threads per row, grid-stride over rows),
//! which compute the same bits as the CPU (`crate::ops::softmax`): the per-element math is
//! the operation-for-operation mirror `kernels/softmax_math.cuh` over the math core's device
//! functions (`kernels/math/`), checked on the host by `tests/softmax_cuda_hostcheck.rs`,
//! and the row sums are exact 128-bit integer sums, which no block size, warp schedule or
//! reduction order can change.
//!
//! Everything stays on the device: log-softmax computes L = log1p(T) per row in the kernel
//! (the device `log1p_dd`), the backward passes have their own kernels (the CPU's exact
//! fixed-point sums), and inputs that are not contiguous are first gathered into contiguous
//! device buffers with 64-bit offsets (`crate::cuda::layout`). A row is handled by one block: correct
//! for any length, but long rows (2^20 and more) do not spread over the GPU.

use crate::math::Format;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaDType, CudaStorageSlice, WrapErr};
use candle_core::{CudaDevice, CudaStorage, Error, Layout, Result, Shape};

/// PTX of `kernels/softmax.cu`.
pub const SOFTMAX_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/softmax.ptx"));

/// Module name under which the PTX is loaded into candle's per-device module cache.
const SOFTMAX_MODULE: &str = "candle_repro_softmax";

/// Threads per block (`REPRO_SOFTMAX_BLOCK` in `kernels/softmax.cu`).
const BLOCK: u32 = 256;

/// Blocks at most (rows beyond are taken by the grid-stride loop; no effect on the bits).
const MAX_BLOCKS: usize = 65_535;

use super::layout::contiguous;

fn launch_cfg(rows: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (rows.min(MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// softmax (`log = false`) or log-softmax (`log = true`) of a CUDA tensor over its last
/// dimension: a new contiguous tensor of the same shape and dtype.
pub(crate) fn softmax_fwd(
    log: bool,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<(CudaStorage, Shape)> {
    let mut slot = None;
    let (src, start) = contiguous(storage, layout, &mut slot)?;
    let dev = &storage.device;
    let name = if log {
        "repro_log_softmax"
    } else {
        "repro_softmax"
    };
    let slice = match &src.slice {
        CudaStorageSlice::F32(s) => CudaStorage::wrap_cuda_slice(
            fwd::<f32>(dev, name, "f32", s, start, layout)?,
            dev.clone(),
        ),
        CudaStorageSlice::BF16(s) => CudaStorage::wrap_cuda_slice(
            fwd::<half::bf16>(dev, name, "bf16", s, start, layout)?,
            dev.clone(),
        ),
        CudaStorageSlice::F16(s) => CudaStorage::wrap_cuda_slice(
            fwd::<half::f16>(dev, name, "f16", s, start, layout)?,
            dev.clone(),
        ),
        _ => return Err(Error::UnsupportedDTypeForOp(storage.dtype(), name)),
    };
    Ok((slice, layout.shape().clone()))
}

fn fwd<T: DeviceRepr + CudaDType + Format>(
    dev: &CudaDevice,
    name: &str,
    suffix: &str,
    src: &CudaSlice<T>,
    start: usize,
    layout: &Layout,
) -> Result<CudaSlice<T>> {
    let total = layout.shape().elem_count();
    let n = layout.dims().last().copied().unwrap_or(1);
    // SAFETY: every element is written by the kernel below before it is read.
    let mut out = unsafe { dev.alloc::<T>(total)? };
    if total == 0 || n == 0 {
        return Ok(out);
    }
    let rows = total / n;
    let src = src.slice(start..);
    let func =
        dev.get_or_load_custom_func(&format!("{name}_{suffix}"), SOFTMAX_MODULE, SOFTMAX_PTX)?;
    let mut builder = func.builder();
    builder.arg(&rows);
    builder.arg(&n);
    builder.arg(&src);
    builder.arg(&mut out);
    // SAFETY: the arguments match the kernel's signature (rows, n, inp, out); `src` holds
    // rows * n elements from its start, `out` rows * n.
    unsafe { builder.launch(launch_cfg(rows)) }.w()?;
    Ok(out)
}

/// The backward pass of softmax (`log = false`) or log-softmax on CUDA: `y` the forward
/// output, `g` the output's gradient (same shape), the input's gradient out (contiguous).
pub(crate) fn softmax_bwd(
    log: bool,
    ys: &CudaStorage,
    yl: &Layout,
    gs: &CudaStorage,
    gl: &Layout,
) -> Result<(CudaStorage, Shape)> {
    if yl.dims() != gl.dims() {
        candle_core::bail!(
            "softmax-bwd: output and gradient shapes differ ({:?} vs {:?})",
            yl.dims(),
            gl.dims()
        )
    }
    let (mut y_slot, mut g_slot) = (None, None);
    let (y, y0) = contiguous(ys, yl, &mut y_slot)?;
    let (g, g0) = contiguous(gs, gl, &mut g_slot)?;
    let dev = &ys.device;
    let name = if log {
        "repro_log_softmax_bwd"
    } else {
        "repro_softmax_bwd"
    };
    let slice = match (&y.slice, &g.slice) {
        (CudaStorageSlice::F32(y), CudaStorageSlice::F32(g)) => CudaStorage::wrap_cuda_slice(
            bwd::<f32>(dev, name, "f32", (y, y0), (g, g0), yl)?,
            dev.clone(),
        ),
        (CudaStorageSlice::BF16(y), CudaStorageSlice::BF16(g)) => CudaStorage::wrap_cuda_slice(
            bwd::<half::bf16>(dev, name, "bf16", (y, y0), (g, g0), yl)?,
            dev.clone(),
        ),
        (CudaStorageSlice::F16(y), CudaStorageSlice::F16(g)) => CudaStorage::wrap_cuda_slice(
            bwd::<half::f16>(dev, name, "f16", (y, y0), (g, g0), yl)?,
            dev.clone(),
        ),
        _ => {
            return Err(Error::DTypeMismatchBinaryOp {
                lhs: ys.dtype(),
                rhs: gs.dtype(),
                op: "softmax-bwd",
            }
            .bt());
        }
    };
    Ok((slice, yl.shape().clone()))
}

fn bwd<T: DeviceRepr + CudaDType + Format>(
    dev: &CudaDevice,
    name: &str,
    suffix: &str,
    (y, y0): (&CudaSlice<T>, usize),
    (g, g0): (&CudaSlice<T>, usize),
    layout: &Layout,
) -> Result<CudaSlice<T>> {
    let total = layout.shape().elem_count();
    let n = layout.dims().last().copied().unwrap_or(1);
    // SAFETY: every element is written by the kernel below before it is read.
    let mut out = unsafe { dev.alloc::<T>(total)? };
    if total == 0 || n == 0 {
        return Ok(out);
    }
    let rows = total / n;
    let y = y.slice(y0..);
    let g = g.slice(g0..);
    let func =
        dev.get_or_load_custom_func(&format!("{name}_{suffix}"), SOFTMAX_MODULE, SOFTMAX_PTX)?;
    let mut builder = func.builder();
    builder.arg(&rows);
    builder.arg(&n);
    builder.arg(&y);
    builder.arg(&g);
    builder.arg(&mut out);
    // SAFETY: (rows, n, y, g, out) as the kernel declares; y and g hold rows * n elements
    // from their starts (same shape, checked by the caller), out rows * n.
    unsafe { builder.launch(launch_cfg(rows)) }.w()?;
    Ok(out)
}
