//! The device half of the norms: launches of `kernels/norm/norm.cu` (one block per row), which
//! mirror `cpu.rs` step for step (`kernels/norm/row.cuh`), run whole on the emulated
//! device by `tests/emulated_device.rs` at several block sizes. Inputs that are not
//! contiguous are first copied to contiguous device buffers with the crate's own 64-bit
//! strided gather ([`crate::launch::contiguous`]).

use crate::launch::{
    Device, KernelArg, LaunchPlan, Module, Slot, contiguous, float_suffix, grid_stride_blocks,
};
use candle_core::{DType, Layout, Result, bail};

/// Threads per block (`REPRO_NORM_BLOCK`).
const BLOCK: u32 = 256;
const MAX_BLOCKS: u64 = 65_535;

/// The launch over `rows` contiguous rows of `n` elements: x (slot 0) from element
/// `starts.0`, w (slot 1) from `starts.1`, the output (slot 2) from 0 and, when `starts.2`
/// has one, the bias (slot 3) from there. The block size is a detail the bits do not depend
/// on (any power of two up to `BLOCK`; the emulated-device tests vary it).
pub fn norm_plan(
    dtype: DType,
    rows: usize,
    n: usize,
    starts: (usize, usize, Option<usize>),
    remove_mean: bool,
    eps: f32,
    exact_only: bool,
) -> Result<LaunchPlan> {
    let suffix = float_suffix(dtype, "norm")?;
    let (x0, w0, b0) = starts;
    let total = rows * n;
    let blocks = grid_stride_blocks(rows as u64, 1, MAX_BLOCKS);
    let mut plan = LaunchPlan::new(Module::Norm, format!("repro_norm_{suffix}"), blocks, BLOCK)
        .arg(KernelArg::U64(rows as u64))
        .arg(KernelArg::U64(n as u64))
        .buf(0, dtype, x0, total)
        .buf(1, dtype, w0, n);
    // Without a bias the kernel never reads b: the weight's pointer stands in.
    plan = match b0 {
        Some(b0) => plan.buf(3, dtype, b0, n),
        None => plan.buf(1, dtype, w0, n),
    };
    Ok(plan
        .arg(KernelArg::I32(b0.is_some() as i32))
        .arg(KernelArg::I32(remove_mean as i32))
        .arg(KernelArg::F32(eps))
        .arg(KernelArg::I32(exact_only as i32))
        .buf(2, dtype, 0, total))
}

/// Layer norm (`remove_mean`) or RMS norm of x (.., n) with weight w (n) and optional bias
/// b (n), eps added to the variance; `exact_only` turns tier 1 off (tests). A new
/// contiguous buffer.
pub fn norm<D: Device + ?Sized>(
    dev: &D,
    remove_mean: bool,
    eps: f32,
    exact_only: bool,
    x: (&D::Buffer, &Layout),
    w: (&D::Buffer, &Layout),
    b: Option<(&D::Buffer, &Layout)>,
) -> Result<D::Buffer> {
    let dtype = dev.dtype(x.0);
    float_suffix(dtype, "norm")?;
    if dev.dtype(w.0) != dtype || b.is_some_and(|b| dev.dtype(b.0) != dtype) {
        bail!("candle-repro norm: mixed dtypes")
    }
    let n = x.1.dims().last().copied().unwrap_or(1);
    let total = x.1.shape().elem_count();
    let rows = total.checked_div(n).unwrap_or(0);
    let mut out = dev.alloc(dtype, total)?;
    if rows == 0 {
        return Ok(out);
    }
    let (mut xslot, mut wslot, mut bslot) = (None, None, None);
    let (xs, x0) = contiguous(dev, x.0, x.1, &mut xslot)?;
    let (ws, w0) = contiguous(dev, w.0, w.1, &mut wslot)?;
    let bs = match b {
        Some((s, l)) => Some(contiguous(dev, s, l, &mut bslot)?),
        None => None,
    };
    let b0 = bs.as_ref().map(|(_, b0)| *b0);
    let plan = norm_plan(dtype, rows, n, (x0, w0, b0), remove_mean, eps, exact_only)?;
    match bs {
        Some((bb, _)) => dev.launch(
            &plan,
            &mut [
                Slot::In(xs),
                Slot::In(ws),
                Slot::Out(&mut out),
                Slot::In(bb),
            ],
        )?,
        None => dev.launch(
            &plan,
            &mut [Slot::In(xs), Slot::In(ws), Slot::Out(&mut out)],
        )?,
    }
    Ok(out)
}
