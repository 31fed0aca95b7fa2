//! CUDA forward pass of softmax over the last dimension: launches of `kernels/softmax.cu`
//! (one block of [`BLOCK`] threads per row, grid-stride over rows), which computes the same
//! bits as the CPU (`crate::ops::softmax`): the per-element math is the operation-for-
//! operation mirror `kernels/softmax_math.cuh` (checked on the host by
//! `tests/softmax_cuda_hostcheck.rs`), and the row sums are exact 128-bit integer sums,
//! which no block size, warp schedule or reduction order can change.
//!
//! Not on the GPU yet (computed by the CPU code and copied back, so the bits are still the
//! same): log-softmax (its `log1p` needs the device mirror of the log family), inputs that
//! are not contiguous, and the backward passes.

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
    if log || layout.contiguous_offsets().is_none() {
        return cpu_fallback(log, storage, layout);
    }
    let dev = &storage.device;
    let slice = match &storage.slice {
        CudaStorageSlice::F32(s) => {
            CudaStorage::wrap_cuda_slice(launch(dev, "f32", s, layout)?, dev.clone())
        }
        CudaStorageSlice::BF16(s) => {
            CudaStorage::wrap_cuda_slice(launch(dev, "bf16", s, layout)?, dev.clone())
        }
        CudaStorageSlice::F16(s) => {
            CudaStorage::wrap_cuda_slice(launch(dev, "f16", s, layout)?, dev.clone())
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

fn launch<T: DeviceRepr + CudaDType>(
    dev: &CudaDevice,
    suffix: &str,
    src: &CudaSlice<T>,
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
    let func = dev.get_or_load_custom_func(
        &format!("repro_softmax_{suffix}"),
        SOFTMAX_MODULE,
        SOFTMAX_PTX,
    )?;
    let (start, _) = layout
        .contiguous_offsets()
        .expect("softmax_fwd only launches on contiguous layouts");
    let src = src.slice(start..);
    let cfg = LaunchConfig {
        grid_dim: (rows.min(MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut builder = func.builder();
    builder.arg(&rows);
    builder.arg(&n);
    builder.arg(&src);
    builder.arg(&mut out);
    // SAFETY: the arguments match the kernel's signature (rows, n, inp, out); `src` holds
    // rows * n elements from the layout's start, `out` rows * n.
    unsafe { builder.launch(cfg) }.w()?;
    Ok(out)
}
