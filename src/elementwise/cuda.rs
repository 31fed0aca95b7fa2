//! The device half of the elementwise functions: launch plans of
//! `kernels/elementwise/elementwise.cu` over [`crate::launch::Device`], which run on a GPU
//! (feature `cuda`) and on the emulated device of the tests alike.
//!
//! The kernels run `kernels/math/all.cuh`, an operation-for-operation mirror of
//! [`crate::math`] compiled with `--fmad=false -prec-div=true -prec-sqrt=true -ftz=false`,
//! so a CUDA tensor gets the same bits as a CPU tensor. The mirror is checked without a GPU
//! by `tests/cuda_host_crosscheck.rs` (the header compiled as host C++, compared bit for bit
//! with the Rust functions), by `tests/emulated_device.rs` (these very launches on the
//! emulated device) and `tests/cuda_ptx_lint.rs` (no approximate or flush-to-zero
//! instruction in the PTX, and the PTX assembles for sm_80 and sm_90).

use crate::elementwise::UnaryFn;
use crate::launch::{
    Device, KernelArg, LaunchPlan, Module, Slot, contiguous, float_suffix, grid_stride_blocks,
};
use candle_core::{Layout, Result, bail};

/// Threads per block: the kernels are compiled with `__launch_bounds__(256)` (`REPRO_BLOCK`
/// in `kernels/elementwise/elementwise.cu`), so the register allocation fits this size.
const BLOCK: u32 = 256;

/// The plan of an elementwise kernel over `layout` (elements of `src`, slot 0, from the
/// layout's start offset; `src_len` its elements) into slot 1 (contiguous), with the dims
/// and strides in slot 2 unless the layout is contiguous (then a null `info`).
/// `params`: softplus_with's (beta, threshold).
fn plan_elementwise(
    kernel: String,
    dtype: candle_core::DType,
    src_len: usize,
    layout: &Layout,
    params: Option<(f32, f32)>,
) -> LaunchPlan {
    let n = layout.shape().elem_count();
    let rank = layout.dims().len();
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, i32::MAX as usize) as u32;
    let start = layout.start_offset();
    let mut plan = LaunchPlan::new(Module::Elementwise, kernel, blocks, BLOCK)
        .arg(KernelArg::U64(n as u64))
        .arg(KernelArg::U64(rank as u64));
    plan = if layout.is_contiguous() {
        plan.arg(KernelArg::Null)
    } else {
        plan.buf(2, candle_core::DType::I64, 0, 2 * rank)
    };
    if let Some((beta, threshold)) = params {
        plan = plan
            .arg(KernelArg::F32(beta))
            .arg(KernelArg::F32(threshold));
    }
    plan.buf(0, dtype, start, src_len - start)
        .buf(1, dtype, 0, n)
}

fn elementwise<D: Device + ?Sized>(
    dev: &D,
    kernel: String,
    src: &D::Buffer,
    layout: &Layout,
    params: Option<(f32, f32)>,
) -> Result<D::Buffer> {
    let dtype = dev.dtype(src);
    let n = layout.shape().elem_count();
    let mut out = dev.alloc(dtype, n)?;
    if n == 0 {
        return Ok(out);
    }
    let plan = plan_elementwise(kernel, dtype, dev.len(src), layout, params);
    if layout.is_contiguous() {
        dev.launch(&plan, &mut [Slot::In(src), Slot::Out(&mut out)])?;
    } else {
        // The dims then the strides, as candle's kernels take them.
        let mut info: Vec<u64> = layout.dims().iter().map(|&d| d as u64).collect();
        info.extend(layout.stride().iter().map(|&s| s as u64));
        let info = dev.upload_u64(&info)?;
        dev.launch(
            &plan,
            &mut [Slot::In(src), Slot::Out(&mut out), Slot::In(&info)],
        )?;
    }
    Ok(out)
}

/// Unary function `f` of the elements `layout` describes in `src` (f32, bf16 or f16): a
/// new contiguous buffer, from kernel `repro_<name>_<f32|bf16|f16>`.
pub fn unary<D: Device + ?Sized>(
    dev: &D,
    f: UnaryFn,
    src: &D::Buffer,
    layout: &Layout,
) -> Result<D::Buffer> {
    let name = f.name();
    let suffix = float_suffix(dev.dtype(src), name)?;
    elementwise(dev, format!("repro_{name}_{suffix}"), src, layout, None)
}

/// `softplus_with(x, beta, threshold)` (see [`crate::elementwise::softplus_with`]) of
/// the elements `layout` describes: kernels `repro_softplus_with_<f32|bf16|f16>`, the same
/// element function as the CPU op.
pub fn softplus_with<D: Device + ?Sized>(
    dev: &D,
    beta: f32,
    threshold: f32,
    src: &D::Buffer,
    layout: &Layout,
) -> Result<D::Buffer> {
    let suffix = float_suffix(dev.dtype(src), "softplus_with")?;
    let kernel = format!("repro_softplus_with_{suffix}");
    elementwise(dev, kernel, src, layout, Some((beta, threshold)))
}

/// Grid-stride blocks of the backward kernels (at most this many).
const MAX_BWD_BLOCKS: u64 = 65_535;

/// A backward kernel over `x` and `g` (same shape and dtype; strided operands gathered
/// first): `params` softplus_with's (beta, threshold).
fn elementwise_bwd<D: Device + ?Sized>(
    dev: &D,
    kernel: String,
    x: (&D::Buffer, &Layout),
    g: (&D::Buffer, &Layout),
    params: Option<(f32, f32)>,
) -> Result<D::Buffer> {
    let dtype = dev.dtype(x.0);
    if dev.dtype(g.0) != dtype || x.1.dims() != g.1.dims() {
        bail!("candle-repro {kernel}: the input and its gradient differ in dtype or shape")
    }
    let count = x.1.shape().elem_count();
    let mut out = dev.alloc(dtype, count)?;
    if count == 0 {
        return Ok(out);
    }
    let (mut sx, mut sg) = (None, None);
    let (cx, x0) = contiguous(dev, x.0, x.1, &mut sx)?;
    let (cg, g0) = contiguous(dev, g.0, g.1, &mut sg)?;
    let blocks = grid_stride_blocks(count as u64, BLOCK, MAX_BWD_BLOCKS);
    let mut plan = LaunchPlan::new(Module::Elementwise, kernel, blocks, BLOCK)
        .arg(KernelArg::U64(count as u64));
    if let Some((beta, threshold)) = params {
        plan = plan
            .arg(KernelArg::F32(beta))
            .arg(KernelArg::F32(threshold));
    }
    let plan = plan
        .buf(0, dtype, x0, count)
        .buf(1, dtype, g0, count)
        .buf(2, dtype, 0, count);
    dev.launch(
        &plan,
        &mut [Slot::In(cx), Slot::In(cg), Slot::Out(&mut out)],
    )?;
    Ok(out)
}

/// The backward pass of `f` (see [`crate::elementwise::unary_bwd`]): the gradient of the
/// input from the input `x` and the output's gradient `g`, from kernel
/// `repro_<name>_bwd_<f32|bf16|f16>`.
pub fn unary_backward<D: Device + ?Sized>(
    dev: &D,
    f: UnaryFn,
    x: (&D::Buffer, &Layout),
    g: (&D::Buffer, &Layout),
) -> Result<D::Buffer> {
    let name = f.name();
    let suffix = float_suffix(dev.dtype(x.0), name)?;
    elementwise_bwd(dev, format!("repro_{name}_bwd_{suffix}"), x, g, None)
}

/// The backward pass of `softplus_with(x, beta, threshold)`: kernels
/// `repro_softplus_with_bwd_<f32|bf16|f16>`.
pub fn softplus_with_backward<D: Device + ?Sized>(
    dev: &D,
    beta: f32,
    threshold: f32,
    x: (&D::Buffer, &Layout),
    g: (&D::Buffer, &Layout),
) -> Result<D::Buffer> {
    let suffix = float_suffix(dev.dtype(x.0), "softplus_with")?;
    let kernel = format!("repro_softplus_with_bwd_{suffix}");
    elementwise_bwd(dev, kernel, x, g, Some((beta, threshold)))
}

#[cfg(feature = "cuda")]
mod on_cuda {
    use crate::elementwise::UnaryFn;
    use candle_core::{CudaStorage, Layout, Result, Shape};

    /// Forward pass of [`UnaryFn`] `f` on a CUDA tensor of any layout.
    pub(crate) fn unary_fwd(
        f: UnaryFn,
        storage: &CudaStorage,
        layout: &Layout,
    ) -> Result<(CudaStorage, Shape)> {
        let out = super::unary(&storage.device, f, storage, layout)?;
        Ok((out, layout.shape().clone()))
    }

    /// Forward pass of `softplus_with(x, beta, threshold)` on a CUDA tensor of any layout.
    pub(crate) fn softplus_with_fwd(
        beta: f32,
        threshold: f32,
        storage: &CudaStorage,
        layout: &Layout,
    ) -> Result<(CudaStorage, Shape)> {
        let out = super::softplus_with(&storage.device, beta, threshold, storage, layout)?;
        Ok((out, layout.shape().clone()))
    }

    /// Backward pass of [`UnaryFn`] `f` on CUDA tensors: input and output gradient.
    pub(crate) fn unary_bwd(
        f: UnaryFn,
        x: (&CudaStorage, &Layout),
        g: (&CudaStorage, &Layout),
    ) -> Result<(CudaStorage, Shape)> {
        let out = super::unary_backward(&x.0.device, f, x, g)?;
        Ok((out, x.1.shape().clone()))
    }

    /// Backward pass of `softplus_with(x, beta, threshold)` on CUDA tensors.
    pub(crate) fn softplus_with_bwd(
        beta: f32,
        threshold: f32,
        x: (&CudaStorage, &Layout),
        g: (&CudaStorage, &Layout),
    ) -> Result<(CudaStorage, Shape)> {
        let out = super::softplus_with_backward(&x.0.device, beta, threshold, x, g)?;
        Ok((out, x.1.shape().clone()))
    }
}
#[cfg(feature = "cuda")]
pub(crate) use on_cuda::{softplus_with_bwd, softplus_with_fwd, unary_bwd, unary_fwd};
