//! The device half of softmax and log-softmax over the last dimension, forward and
//! backward: launches of `kernels/softmax/softmax.cu` (one block of `BLOCK` threads per row,
//! grid-stride over rows), which compute the same bits as the CPU half (`super::cpu`):
//! the per-element math is the operation-for-operation mirror `kernels/softmax/row.cuh`
//! over the math core's device functions (`kernels/math/`), and the row sums are exact
//! 128-bit integer sums, which no block size, warp schedule or reduction order can change.
//!
//! Everything stays on the device: log-softmax computes L = log1p(T) per row in the kernel
//! (the device `log1p_dd`), the backward passes have their own kernels (the CPU's exact
//! fixed-point sums), and inputs that are not contiguous are first gathered into contiguous
//! device buffers with 64-bit offsets ([`crate::launch::contiguous`]). A row is handled by
//! one block: correct for any length, but long rows (2^20 and more) do not spread over the
//! GPU.

use crate::launch::{Device, LaunchPlan, Module, Slot, contiguous, float_suffix};
use candle_core::{DType, Layout, Result, bail};

/// Threads per block (`REPRO_SOFTMAX_BLOCK` in `kernels/softmax/softmax.cu`).
const BLOCK: u32 = 256;

/// Blocks at most (rows beyond are taken by the grid-stride loop; no effect on the bits).
const MAX_BLOCKS: usize = 65_535;

/// One block per row (grid-stride beyond MAX_BLOCKS); the arguments start with (rows, n).
fn plan(kernel: String, rows: usize, n: usize) -> LaunchPlan {
    LaunchPlan::new(Module::Softmax, kernel, rows.min(MAX_BLOCKS) as u32, BLOCK)
        .arg(crate::launch::KernelArg::U64(rows as u64))
        .arg(crate::launch::KernelArg::U64(n as u64))
}

/// The forward launch over `rows` contiguous rows of `n` elements: input (slot 0) from
/// element `start`, output (slot 1) from 0. The block size is a detail the bits do not
/// depend on (any power of two up to `BLOCK`; the emulated-device tests vary it).
pub fn softmax_fwd_plan(
    log: bool,
    dtype: DType,
    rows: usize,
    n: usize,
    start: usize,
) -> Result<LaunchPlan> {
    let name = if log {
        "repro_log_softmax"
    } else {
        "repro_softmax"
    };
    let suffix = float_suffix(dtype, name)?;
    let total = rows * n;
    Ok(plan(format!("{name}_{suffix}"), rows, n)
        .buf(0, dtype, start, total)
        .buf(1, dtype, 0, total))
}

/// The backward launch: y (slot 0) from `y_start`, g (slot 1) from `g_start`, the input's
/// gradient (slot 2) from 0, all contiguous rows of `n`.
pub fn softmax_bwd_plan(
    log: bool,
    dtype: DType,
    rows: usize,
    n: usize,
    y_start: usize,
    g_start: usize,
) -> Result<LaunchPlan> {
    let name = if log {
        "repro_log_softmax_bwd"
    } else {
        "repro_softmax_bwd"
    };
    let suffix = float_suffix(dtype, name)?;
    let total = rows * n;
    Ok(plan(format!("{name}_{suffix}"), rows, n)
        .buf(0, dtype, y_start, total)
        .buf(1, dtype, g_start, total)
        .buf(2, dtype, 0, total))
}

/// softmax (`log = false`) or log-softmax (`log = true`) over the last dimension of the
/// elements `layout` describes: a new contiguous buffer.
pub fn softmax_fwd<D: Device + ?Sized>(
    dev: &D,
    log: bool,
    x: &D::Buffer,
    layout: &Layout,
) -> Result<D::Buffer> {
    let dtype = dev.dtype(x);
    float_suffix(dtype, "softmax")?;
    let total = layout.shape().elem_count();
    let n = layout.dims().last().copied().unwrap_or(1);
    let mut out = dev.alloc(dtype, total)?;
    if total == 0 || n == 0 {
        return Ok(out);
    }
    let mut slot = None;
    let (src, start) = contiguous(dev, x, layout, &mut slot)?;
    let plan = softmax_fwd_plan(log, dtype, total / n, n, start)?;
    dev.launch(&plan, &mut [Slot::In(src), Slot::Out(&mut out)])?;
    Ok(out)
}

/// The backward pass of softmax (`log = false`) or log-softmax: `y` the forward output, `g`
/// the output's gradient (same shape), the input's gradient out (contiguous).
pub fn softmax_bwd<D: Device + ?Sized>(
    dev: &D,
    log: bool,
    y: (&D::Buffer, &Layout),
    g: (&D::Buffer, &Layout),
) -> Result<D::Buffer> {
    let (yl, gl) = (y.1, g.1);
    if yl.dims() != gl.dims() {
        bail!(
            "softmax-bwd: output and gradient shapes differ ({:?} vs {:?})",
            yl.dims(),
            gl.dims()
        )
    }
    let dtype = dev.dtype(y.0);
    if dev.dtype(g.0) != dtype {
        return Err(candle_core::Error::DTypeMismatchBinaryOp {
            lhs: dtype,
            rhs: dev.dtype(g.0),
            op: "softmax-bwd",
        }
        .bt());
    }
    float_suffix(dtype, "softmax-bwd")?;
    let total = yl.shape().elem_count();
    let n = yl.dims().last().copied().unwrap_or(1);
    let mut out = dev.alloc(dtype, total)?;
    if total == 0 || n == 0 {
        return Ok(out);
    }
    let (mut y_slot, mut g_slot) = (None, None);
    let (yb, y0) = contiguous(dev, y.0, yl, &mut y_slot)?;
    let (gb, g0) = contiguous(dev, g.0, gl, &mut g_slot)?;
    let plan = softmax_bwd_plan(log, dtype, total / n, n, y0, g0)?;
    dev.launch(
        &plan,
        &mut [Slot::In(yb), Slot::In(gb), Slot::Out(&mut out)],
    )?;
    Ok(out)
}
