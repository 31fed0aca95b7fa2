//! Launches of `kernels/arith.cu`: the correctly rounded elementwise sum of
//! `crate::ops::arith` (strided operands gathered first, with 64-bit indices).

use super::layout::contiguous;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{CudaView, LaunchConfig, PushKernelArg};
use candle_core::cuda_backend::{CudaStorageSlice, WrapErr};
use candle_core::{CudaStorage, DType, Error, Layout, Result, Shape};

/// PTX of `kernels/arith.cu`.
pub const ARITH_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/arith.ptx"));

const MODULE: &str = "candle_repro_arith";
const BLOCK: u32 = 256;
const MAX_BLOCKS: u64 = 65_535;

/// a + b (same shape and dtype), a new contiguous tensor.
pub(crate) fn add(
    a: (&CudaStorage, &Layout),
    b: (&CudaStorage, &Layout),
) -> Result<(CudaStorage, Shape)> {
    let dev = &a.0.device;
    let count = a.1.shape().elem_count() as u64;
    let (mut sa, mut sb) = (None, None);
    let (ca, a0) = contiguous(a.0, a.1, &mut sa)?;
    let (cb, b0) = contiguous(b.0, b.1, &mut sb)?;
    macro_rules! launch {
        ($t:ty, $variant:ident, $suffix:literal) => {{
            fn view(s: &CudaStorage, start: usize) -> Result<CudaView<'_, $t>> {
                match &s.slice {
                    CudaStorageSlice::$variant(v) => Ok(v.slice(start..)),
                    _ => candle_core::bail!("candle-repro add: mixed dtypes"),
                }
            }
            // SAFETY: the kernel writes every element.
            let mut out = unsafe { dev.alloc::<$t>(count as usize)? };
            if count > 0 {
                let (va, vb) = (view(ca, a0)?, view(cb, b0)?);
                let func =
                    dev.get_or_load_custom_func(concat!("repro_add_", $suffix), MODULE, ARITH_PTX)?;
                let mut bld = func.builder();
                bld.arg(&count);
                bld.arg(&va);
                bld.arg(&vb);
                bld.arg(&mut out);
                let cfg = LaunchConfig {
                    grid_dim: (count.div_ceil(BLOCK as u64).min(MAX_BLOCKS) as u32, 1, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: (count, a, b, out) as the kernel declares; all hold count elements.
                unsafe { bld.launch(cfg) }.w()?;
            }
            CudaStorage::wrap_cuda_slice(out, dev.clone())
        }};
    }
    let out = match a.0.dtype() {
        DType::F32 => launch!(f32, F32, "f32"),
        DType::BF16 => launch!(half::bf16, BF16, "bf16"),
        DType::F16 => launch!(half::f16, F16, "f16"),
        other => return Err(Error::UnsupportedDTypeForOp(other, "add").bt()),
    };
    Ok((out, a.1.shape().clone()))
}
