//! Contiguous copies of strided CUDA tensors with 64-bit indices (`kernels/layout.cu`):
//! candle's strided copy computes offsets in 32 bits, wrong beyond 2^32 elements.

use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaStorageSlice, WrapErr};
use candle_core::{CudaDevice, CudaStorage, Layout, Result};

/// PTX of `kernels/layout.cu`.
pub const LAYOUT_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/layout.ptx"));

const MODULE: &str = "candle_repro_layout";
const BLOCK: u32 = 256;
const MAX_BLOCKS: u64 = 65_535;

fn gather_slice<T: DeviceRepr>(
    dev: &CudaDevice,
    src: &CudaSlice<T>,
    layout: &Layout,
    kernel: &str,
) -> Result<CudaSlice<T>> {
    let count = layout.shape().elem_count() as u64;
    // SAFETY: the kernel writes every element.
    let mut out = unsafe { dev.alloc::<T>(count as usize)? };
    if count == 0 {
        return Ok(out);
    }
    let mut ds: Vec<u64> = layout.dims().iter().map(|&d| d as u64).collect();
    ds.extend(layout.stride().iter().map(|&s| s as u64));
    let ds = dev.clone_htod(ds.as_slice())?;
    let rank = layout.dims().len() as u32;
    let base = layout.start_offset() as u64;
    let func = dev.get_or_load_custom_func(kernel, MODULE, LAYOUT_PTX)?;
    let mut b = func.builder();
    b.arg(&count);
    b.arg(src);
    b.arg(&base);
    b.arg(&rank);
    b.arg(&ds);
    b.arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (count.div_ceil(BLOCK as u64).min(MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments follow the kernel's signature; every offset lies in the
    // layout's extent inside `src`, `out` has `count` elements of the same size.
    unsafe { b.launch(cfg) }.w()?;
    Ok(out)
}

/// A contiguous copy of the elements `layout` describes (any dtype, any rank).
pub fn gather(s: &CudaStorage, layout: &Layout) -> Result<CudaStorage> {
    let dev = &s.device;
    let slice = match &s.slice {
        CudaStorageSlice::U8(v) => {
            CudaStorageSlice::U8(gather_slice(dev, v, layout, "repro_gather_u8")?)
        }
        CudaStorageSlice::U32(v) => {
            CudaStorageSlice::U32(gather_slice(dev, v, layout, "repro_gather_u32")?)
        }
        CudaStorageSlice::I64(v) => {
            CudaStorageSlice::I64(gather_slice(dev, v, layout, "repro_gather_u64")?)
        }
        CudaStorageSlice::BF16(v) => {
            CudaStorageSlice::BF16(gather_slice(dev, v, layout, "repro_gather_u16")?)
        }
        CudaStorageSlice::F16(v) => {
            CudaStorageSlice::F16(gather_slice(dev, v, layout, "repro_gather_u16")?)
        }
        CudaStorageSlice::F32(v) => {
            CudaStorageSlice::F32(gather_slice(dev, v, layout, "repro_gather_u32")?)
        }
        CudaStorageSlice::F64(v) => {
            CudaStorageSlice::F64(gather_slice(dev, v, layout, "repro_gather_u64")?)
        }
        CudaStorageSlice::F8E4M3(v) => {
            CudaStorageSlice::F8E4M3(gather_slice(dev, v, layout, "repro_gather_u8")?)
        }
        _ => candle_core::bail!("candle-repro gather: unsupported dtype {:?}", s.dtype()),
    };
    Ok(CudaStorage {
        slice,
        device: dev.clone(),
    })
}

/// `s` with its contiguous start offset, or a gathered copy starting at 0 (kept in
/// `slot`).
pub fn contiguous<'a>(
    s: &'a CudaStorage,
    layout: &Layout,
    slot: &'a mut Option<CudaStorage>,
) -> Result<(&'a CudaStorage, usize)> {
    match layout.contiguous_offsets() {
        Some((start, _)) => Ok((s, start)),
        None => Ok((slot.insert(gather(s, layout)?), 0)),
    }
}
