//! The CPU half of softmax and log-softmax over the last dimension: the entry points on
//! candle's CPU storage, `softmax_fwd` and `softmax_bwd`, named like the device half's
//! (`super::cuda`), over the core's rows (`repro_core::softmax`).

use crate::ops::buffer;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, Error, Layout, Result, Shape};
use repro_core::math::Format;
use repro_core::softmax::{softmax_bwd_slice, softmax_rows};

fn last_dim(layout: &Layout) -> usize {
    layout.dims().last().copied().unwrap_or(1)
}

/// The forward pass on CPU storage (any layout: a strided input is gathered first).
pub(crate) fn softmax_fwd(
    log: bool,
    storage: &CpuStorage,
    layout: &Layout,
) -> Result<(CpuStorage, Shape)> {
    fn run<F: Format + Default>(log: bool, v: &[F], layout: &Layout) -> Vec<F> {
        let x = logical_elements(v, layout);
        let mut out = buffer::uninit(x.len());
        softmax_rows(log, last_dim(layout), &x, &mut out);
        // SAFETY: softmax_rows wrote every element.
        unsafe { buffer::assume_init(out) }
    }
    let name = if log { "log_softmax" } else { "softmax" };
    let out = match storage {
        CpuStorage::F32(v) => CpuStorage::F32(run(log, v, layout)),
        CpuStorage::BF16(v) => CpuStorage::BF16(run(log, v, layout)),
        CpuStorage::F16(v) => CpuStorage::F16(run(log, v, layout)),
        other => return Err(Error::UnsupportedDTypeForOp(other.dtype(), name)),
    };
    Ok((out, layout.shape().clone()))
}

/// The backward pass on CPU storage: `y` the forward output, `g` its gradient, of the same
/// shape (checked by the op) and dtype.
pub(crate) fn softmax_bwd(
    log: bool,
    (y, l1): (&CpuStorage, &Layout),
    (g, l2): (&CpuStorage, &Layout),
) -> Result<(CpuStorage, Shape)> {
    fn run<F: Format + Default>(log: bool, y: &[F], l1: &Layout, g: &[F], l2: &Layout) -> Vec<F> {
        let y = logical_elements(y, l1);
        let g = logical_elements(g, l2);
        softmax_bwd_slice(log, last_dim(l1), &y, &g)
    }
    let out = match (y, g) {
        (CpuStorage::F32(y), CpuStorage::F32(g)) => CpuStorage::F32(run(log, y, l1, g, l2)),
        (CpuStorage::BF16(y), CpuStorage::BF16(g)) => CpuStorage::BF16(run(log, y, l1, g, l2)),
        (CpuStorage::F16(y), CpuStorage::F16(g)) => CpuStorage::F16(run(log, y, l1, g, l2)),
        (a, b) => {
            return Err(Error::DTypeMismatchBinaryOp {
                lhs: a.dtype(),
                rhs: b.dtype(),
                op: "softmax-bwd",
            }
            .bt());
        }
    };
    Ok((out, l1.shape().clone()))
}
