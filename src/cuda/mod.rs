//! CUDA forward passes of the elementwise ops: launches of the kernels in
//! `kernels/elementwise.cu`, compiled to PTX by `build.rs` and embedded here.
//!
//! The kernels run `kernels/repro_math.cuh`, an operation-for-operation mirror of
//! [`crate::math`] compiled with `--fmad=false -prec-div=true -prec-sqrt=true -ftz=false`,
//! so a CUDA tensor gets the same bits as a CPU tensor. The mirror is checked without a GPU
//! by `tests/cuda_host_crosscheck.rs` (the header compiled as host C++, compared bit for bit
//! with the Rust functions) and `tests/cuda_ptx_lint.rs` (no approximate or flush-to-zero
//! instruction in the PTX, and the PTX assembles for sm_80 and sm_90).

pub mod arith;
pub mod fft;
pub mod layout;
pub mod rope;
pub mod softmax;

use crate::ops::elementwise::UnaryFn;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaDType, CudaStorageSlice, SlicePtrOrNull, WrapErr};
use candle_core::{CudaDevice, CudaStorage, Layout, Result, Shape};

/// PTX of `kernels/elementwise.cu`.
pub const ELEMENTWISE_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/elementwise.ptx"));

/// Every PTX module built from `kernels/*.cu`, as (file stem, PTX text): what the lint test
/// scans and assembles.
pub const PTX_MODULES: &[(&str, &str)] = &[
    ("elementwise", ELEMENTWISE_PTX),
    ("softmax", softmax::SOFTMAX_PTX),
    ("rope", rope::ROPE_PTX),
    ("fft", fft::FFT_PTX),
    ("matmul", crate::matmul::cuda::MATMUL_PTX),
    ("norm", crate::norm::cuda::NORM_PTX),
    ("layout", layout::LAYOUT_PTX),
    ("arith", arith::ARITH_PTX),
];

/// Module name under which the PTX is loaded into candle's per-device module cache.
const ELEMENTWISE_MODULE: &str = "candle_repro_elementwise";

/// Threads per block: the kernels are compiled with `__launch_bounds__(256)`
/// (`REPRO_BLOCK` in `kernels/elementwise.cu`), so the register allocation fits this size.
const BLOCK: u32 = 256;

/// The kernel names of the device math: `repro_<name>_<f32|bf16|f16>`.
pub const UNARY_KERNELS: &[&str] = &[
    "exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "sigmoid", "silu", "softplus",
];

/// Forward pass of [`UnaryFn`] `f` on a CUDA tensor of any layout: a new contiguous tensor
/// of the same shape and dtype (f32, bf16 or f16).
pub(crate) fn unary_fwd(
    f: UnaryFn,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<(CudaStorage, Shape)> {
    unary_fwd_by_name(f.name(), storage, layout)
}

/// `unary_fwd` by kernel name (one of [`UNARY_KERNELS`]), for the functions that have no
/// [`UnaryFn`] (expm1, log1p) and for tests.
pub fn unary_fwd_by_name(
    name: &str,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<(CudaStorage, Shape)> {
    if !UNARY_KERNELS.contains(&name) {
        candle_core::bail!("candle-repro: no CUDA kernel for unary function {name:?}")
    }
    let dev = &storage.device;
    let slice = match &storage.slice {
        CudaStorageSlice::F32(s) => {
            CudaStorage::wrap_cuda_slice(launch_unary(dev, name, "f32", s, layout)?, dev.clone())
        }
        CudaStorageSlice::BF16(s) => {
            CudaStorage::wrap_cuda_slice(launch_unary(dev, name, "bf16", s, layout)?, dev.clone())
        }
        CudaStorageSlice::F16(s) => {
            CudaStorage::wrap_cuda_slice(launch_unary(dev, name, "f16", s, layout)?, dev.clone())
        }
        other => {
            return Err(candle_core::Error::UnsupportedDTypeForOp(
                other_dtype(other),
                leak_name(name),
            ));
        }
    };
    Ok((slice, layout.shape().clone()))
}

/// Forward pass of `softplus_with(x, beta, threshold)` (see
/// [`crate::ops::elementwise::softplus_with`]) on a CUDA tensor of any layout: kernels
/// `repro_softplus_with_<f32|bf16|f16>`, the same element function as the CPU op.
#[allow(dead_code)] // called from SoftplusWith::cuda_fwd once wired
pub(crate) fn softplus_with_fwd(
    beta: f32,
    threshold: f32,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<(CudaStorage, Shape)> {
    let dev = &storage.device;
    let params = (beta, threshold);
    let slice = match &storage.slice {
        CudaStorageSlice::F32(s) => CudaStorage::wrap_cuda_slice(
            launch("repro_softplus_with_f32", dev, s, layout, Some(params))?,
            dev.clone(),
        ),
        CudaStorageSlice::BF16(s) => CudaStorage::wrap_cuda_slice(
            launch("repro_softplus_with_bf16", dev, s, layout, Some(params))?,
            dev.clone(),
        ),
        CudaStorageSlice::F16(s) => CudaStorage::wrap_cuda_slice(
            launch("repro_softplus_with_f16", dev, s, layout, Some(params))?,
            dev.clone(),
        ),
        other => {
            return Err(candle_core::Error::UnsupportedDTypeForOp(
                other_dtype(other),
                "softplus_with",
            ));
        }
    };
    Ok((slice, layout.shape().clone()))
}

fn other_dtype(s: &CudaStorageSlice) -> candle_core::DType {
    use candle_core::DType;
    match s {
        CudaStorageSlice::U8(_) => DType::U8,
        CudaStorageSlice::U32(_) => DType::U32,
        CudaStorageSlice::I16(_) => DType::I16,
        CudaStorageSlice::I32(_) => DType::I32,
        CudaStorageSlice::I64(_) => DType::I64,
        CudaStorageSlice::BF16(_) => DType::BF16,
        CudaStorageSlice::F16(_) => DType::F16,
        CudaStorageSlice::F32(_) => DType::F32,
        CudaStorageSlice::F64(_) => DType::F64,
        _ => DType::F64,
    }
}

/// The error type wants a `&'static str`; the names are the static ones of UNARY_KERNELS.
fn leak_name(name: &str) -> &'static str {
    UNARY_KERNELS
        .iter()
        .copied()
        .find(|n| *n == name)
        .unwrap_or("unary")
}

/// Launch configuration for `n` elements: one thread per element in blocks of [`BLOCK`];
/// the kernels loop with a grid stride, so capping the grid changes no result.
fn launch_config(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, i32::MAX as usize) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn launch_unary<T: DeviceRepr + CudaDType>(
    dev: &CudaDevice,
    name: &str,
    suffix: &str,
    src: &CudaSlice<T>,
    layout: &Layout,
) -> Result<CudaSlice<T>> {
    launch(&format!("repro_{name}_{suffix}"), dev, src, layout, None)
}

/// Launch elementwise kernel `kernel` (arguments: numel, num_dims, info, [beta, threshold,]
/// inp, out) over the layout's elements into a new contiguous buffer.
fn launch<T: DeviceRepr + CudaDType>(
    kernel: &str,
    dev: &CudaDevice,
    src: &CudaSlice<T>,
    layout: &Layout,
    params: Option<(f32, f32)>,
) -> Result<CudaSlice<T>> {
    let shape = layout.shape();
    let n = shape.elem_count();
    // SAFETY: every element is written by the kernel below before it is read.
    let mut out = unsafe { dev.alloc::<T>(n)? };
    if n == 0 {
        return Ok(out);
    }
    let func = dev.get_or_load_custom_func(kernel, ELEMENTWISE_MODULE, ELEMENTWISE_PTX)?;
    // Null for a contiguous layout, else the dims then the strides, as candle's kernels.
    let info = SlicePtrOrNull::params_from_layout(dev, layout)?;
    let src = src.slice(layout.start_offset()..);
    let num_dims = shape.dims().len();
    let mut builder = func.builder();
    builder.arg(&n);
    builder.arg(&num_dims);
    info.builder_arg(&mut builder);
    let (beta, threshold) = params.unwrap_or((1.0, 0.0));
    if params.is_some() {
        builder.arg(&beta);
        builder.arg(&threshold);
    }
    builder.arg(&src);
    builder.arg(&mut out);
    // SAFETY: the argument list matches the kernel's signature (numel, num_dims, info,
    // [beta, threshold,] inp, out); `out` holds n elements and `src` the layout's elements.
    unsafe { builder.launch(launch_config(n)) }.w()?;
    Ok(out)
}
