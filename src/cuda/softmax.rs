//! CUDA forward pass of softmax over the last dimension: launches of `kernels/softmax.cu`
//! (one block of [`BLOCK`] threads per row, grid-stride over rows), which computes the same
//! bits as the CPU (`crate::ops::softmax`): the per-element math is the operation-for-
//! operation mirror `kernels/softmax_math.cuh` (checked on the host by
//! `tests/softmax_cuda_hostcheck.rs`), and the row sums are exact 128-bit integer sums,
//! which no block size, warp schedule or reduction order can change.
//!
//! log-softmax runs two kernels around a small host step: the stats kernel gives each row's
//! maximum, counts and exact scaled total (8 words per row), the host computes L = log1p(T)
//! per row with the CPU's double-double `log1p_dd` ([`crate::ops::softmax::log_softmax_params`],
//! 32 bytes per row back to the device), and the out kernel writes (x - m) - L.
//!
//! Not on the GPU yet (computed by the CPU code and copied back, so the bits are still the
//! same): inputs that are not contiguous and the backward passes. A row is handled by one
//! block: correct for any length, but long rows (2^20 and more) do not spread over the GPU.

use crate::math::Format;
use crate::ops::softmax::log_softmax_params;
use candle_core::backend::{BackendDevice, BackendStorage};
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaDType, CudaStorageSlice, WrapErr};
use candle_core::{CudaDevice, CudaStorage, Layout, Result, Shape};

/// PTX of `kernels/softmax.cu`.
pub const SOFTMAX_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/softmax.ptx"));

/// Module name under which the PTX is loaded into candle's per-device module cache.
const SOFTMAX_MODULE: &str = "candle_repro_softmax";

/// Threads per block (`REPRO_SOFTMAX_BLOCK` in `kernels/softmax.cu`).
const BLOCK: u32 = 256;

/// Blocks at most (rows beyond are taken by the grid-stride loop; no effect on the bits).
const MAX_BLOCKS: usize = 65_535;

/// softmax (`log = false`) or log-softmax (`log = true`) of a CUDA tensor over its last
/// dimension: a new contiguous tensor of the same shape and dtype.
pub(crate) fn softmax_fwd(
    log: bool,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<(CudaStorage, Shape)> {
    if layout.contiguous_offsets().is_none() {
        return cpu_fallback(log, storage, layout);
    }
    let dev = &storage.device;
    let slice = match &storage.slice {
        CudaStorageSlice::F32(s) => {
            CudaStorage::wrap_cuda_slice(launch(dev, log, "f32", s, layout)?, dev.clone())
        }
        CudaStorageSlice::BF16(s) => {
            CudaStorage::wrap_cuda_slice(launch(dev, log, "bf16", s, layout)?, dev.clone())
        }
        CudaStorageSlice::F16(s) => {
            CudaStorage::wrap_cuda_slice(launch(dev, log, "f16", s, layout)?, dev.clone())
        }
        _ => return cpu_fallback(log, storage, layout),
    };
    Ok((slice, layout.shape().clone()))
}

/// The CPU computation, copied back to the device (the same bits as the kernels).
fn cpu_fallback(log: bool, storage: &CudaStorage, layout: &Layout) -> Result<(CudaStorage, Shape)> {
    let cpu = storage.to_cpu_storage()?;
    let (out, shape) = crate::ops::softmax::cpu_forward(log, &cpu, layout)?;
    Ok((storage.device.storage_from_cpu_storage(&out)?, shape))
}

fn launch<T: DeviceRepr + CudaDType + Format>(
    dev: &CudaDevice,
    log: bool,
    suffix: &str,
    src: &CudaSlice<T>,
    layout: &Layout,
) -> Result<CudaSlice<T>> {
    let total = layout.shape().elem_count();
    let n = layout.dims().last().copied().unwrap_or(1);
    // SAFETY: every element is written by the kernels below before it is read.
    let mut out = unsafe { dev.alloc::<T>(total)? };
    if total == 0 || n == 0 {
        return Ok(out);
    }
    let rows = total / n;
    let (start, _) = layout
        .contiguous_offsets()
        .expect("softmax_fwd only launches on contiguous layouts");
    let src = src.slice(start..);
    let cfg = LaunchConfig {
        grid_dim: (rows.min(MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let load = |name: &str| {
        dev.get_or_load_custom_func(&format!("{name}_{suffix}"), SOFTMAX_MODULE, SOFTMAX_PTX)
    };
    if !log {
        let func = load("repro_softmax")?;
        let mut builder = func.builder();
        builder.arg(&rows);
        builder.arg(&n);
        builder.arg(&src);
        builder.arg(&mut out);
        // SAFETY: the arguments match the kernel's signature (rows, n, inp, out); `src`
        // holds rows * n elements from the layout's start, `out` rows * n.
        unsafe { builder.launch(cfg) }.w()?;
        return Ok(out);
    }
    // log-softmax: stats kernel, host step, out kernel.
    // SAFETY: the stats kernel writes all 8 words of every row.
    let mut stats = unsafe { dev.alloc::<u64>(rows * 8)? };
    let func = load("repro_log_softmax_stats")?;
    let mut builder = func.builder();
    builder.arg(&rows);
    builder.arg(&n);
    builder.arg(&src);
    builder.arg(&mut stats);
    // SAFETY: (rows, n, inp, stats) as the kernel declares; stats holds rows * 8 words.
    unsafe { builder.launch(cfg) }.w()?;
    let stats = dev.clone_dtoh(&stats)?;
    let params = dev.clone_htod(&log_softmax_params::<T>(n, &stats))?;
    let func = load("repro_log_softmax_out")?;
    let mut builder = func.builder();
    builder.arg(&rows);
    builder.arg(&n);
    builder.arg(&src);
    builder.arg(&params);
    builder.arg(&mut out);
    // SAFETY: (rows, n, inp, params, out) as the kernel declares; params holds rows * 4
    // f64, out rows * n elements.
    unsafe { builder.launch(cfg) }.w()?;
    Ok(out)
}
