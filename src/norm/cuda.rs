//! The CUDA half of the norms: launches of `kernels/norm.cu` (one block per row), which
//! mirror `cpu.rs` step for step (`kernels/norm/row.cuh`, checked on the host by
//! `tests/norm_cuda_hostcheck.rs`). Inputs that are not contiguous are first copied to
//! contiguous device buffers with the crate's own 64-bit strided gather
//! (`crate::cuda::layout`).

use super::cpu::NormParams;
use crate::cuda::layout::contiguous;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{CudaView, LaunchConfig, PushKernelArg};
use candle_core::cuda_backend::{CudaStorageSlice, WrapErr};
use candle_core::{CudaStorage, DType, Error, Layout, Result, Shape};

/// PTX of `kernels/norm.cu`.
pub const NORM_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/norm.ptx"));

const MODULE: &str = "candle_repro_norm";
/// Threads per block (`REPRO_NORM_BLOCK`).
const BLOCK: u32 = 256;
const MAX_BLOCKS: u64 = 65_535;

/// The forward pass on CUDA tensors: x (.., n), w (n), optional b (n).
pub(crate) fn norm(
    p: NormParams,
    x: (&CudaStorage, &Layout),
    w: (&CudaStorage, &Layout),
    b: Option<(&CudaStorage, &Layout)>,
) -> Result<(CudaStorage, Shape)> {
    let dev = &x.0.device;
    let n = x.1.dims().last().copied().unwrap_or(1) as u64;
    let total = x.1.shape().elem_count() as u64;
    let rows = total.checked_div(n).unwrap_or(0);
    let (mut xslot, mut wslot, mut bslot) = (None, None, None);
    let (xs, x0) = contiguous(x.0, x.1, &mut xslot)?;
    let (ws, w0) = contiguous(w.0, w.1, &mut wslot)?;
    let bs = match b {
        Some((s, l)) => Some(contiguous(s, l, &mut bslot)?),
        None => None,
    };
    let dtype = x.0.dtype();
    let suffix = match dtype {
        DType::F32 => "f32",
        DType::BF16 => "bf16",
        DType::F16 => "f16",
        other => return Err(Error::UnsupportedDTypeForOp(other, "norm").bt()),
    };
    macro_rules! launch {
        ($t:ty, $variant:ident) => {{
            // SAFETY: the kernel writes every element.
            let mut out = unsafe { dev.alloc::<$t>(total as usize)? };
            if rows > 0 {
                fn slice(s: &CudaStorage, start: usize) -> Result<CudaView<'_, $t>> {
                    match &s.slice {
                        CudaStorageSlice::$variant(v) => Ok(v.slice(start..)),
                        _ => candle_core::bail!("candle-repro norm: mixed dtypes"),
                    }
                }
                let xv = slice(xs, x0)?;
                let wv = slice(ws, w0)?;
                let bv = match &bs {
                    Some((s, start)) => slice(s, *start)?,
                    None => slice(ws, w0)?, // never read without a bias
                };
                let has_bias = bs.is_some() as i32;
                let (remove_mean, exact_only) = (p.remove_mean as i32, p.exact_only as i32);
                let func =
                    dev.get_or_load_custom_func(&format!("repro_norm_{suffix}"), MODULE, NORM_PTX)?;
                let mut bld = func.builder();
                bld.arg(&rows);
                bld.arg(&n);
                bld.arg(&xv);
                bld.arg(&wv);
                bld.arg(&bv);
                bld.arg(&has_bias);
                bld.arg(&remove_mean);
                bld.arg(&p.eps);
                bld.arg(&exact_only);
                bld.arg(&mut out);
                let cfg = LaunchConfig {
                    grid_dim: (rows.min(MAX_BLOCKS) as u32, 1, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: the arguments follow the kernel's signature; x holds rows * n
                // elements from its start, w and b n, out rows * n.
                unsafe { bld.launch(cfg) }.w()?;
            }
            CudaStorage::wrap_cuda_slice(out, dev.clone())
        }};
    }
    let out = match dtype {
        DType::F32 => launch!(f32, F32),
        DType::BF16 => launch!(half::bf16, BF16),
        _ => launch!(half::f16, F16),
    };
    Ok((out, x.1.shape().clone()))
}
