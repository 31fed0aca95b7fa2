//! The CPU half of the elementwise ops: the slice kernels of [`crate::math`] over the
//! logical elements of candle's CPU storage, split into fixed chunks over rayon's threads.
//! Each element is computed alone by the same operations, so neither the split, the thread
//! count nor the vector width changes a bit. The entry points are named like the device
//! half's (`super::cuda`): `unary_fwd`, `softplus_with_fwd`.

use super::UnaryFn;
use crate::math::{self, Format};
use crate::ops::buffer;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, Error, Layout, Result, Shape};
use std::mem::MaybeUninit;

/// Apply `kernel` (which writes every slot it is given) to the logical elements of `data`
/// into a new contiguous vector (`repro_core::buffer::map_parallel`: fixed chunks over
/// rayon's threads).
fn map_parallel<T: Format>(
    data: &[T],
    layout: &Layout,
    kernel: impl Fn(&[T], &mut [MaybeUninit<T>]) + Sync,
) -> Vec<T> {
    buffer::map_parallel(&logical_elements(data, layout), kernel)
}

/// `f` on every element of `storage` (f32, bf16 or f16), correctly rounded.
pub(crate) fn unary_fwd(
    f: UnaryFn,
    storage: &CpuStorage,
    layout: &Layout,
) -> Result<(CpuStorage, Shape)> {
    let out = match storage {
        CpuStorage::F32(v) => CpuStorage::F32(map_parallel(v, layout, f.slice_kernel())),
        CpuStorage::BF16(v) => CpuStorage::BF16(map_parallel(v, layout, f.slice_kernel())),
        CpuStorage::F16(v) => CpuStorage::F16(map_parallel(v, layout, f.slice_kernel())),
        other => return Err(Error::UnsupportedDTypeForOp(other.dtype(), f.name())),
    };
    Ok((out, layout.shape().clone()))
}

/// One element of `softplus_with` (see [`super::softplus_with`]): `x` above the
/// threshold, the correctly rounded softplus for `beta = 1`, else
/// `softplus(beta x) / beta` in f32 rounded to the dtype.
fn softplus_with_element<T: Format>(beta: f32, threshold: f32, x: T) -> T {
    let xf = x.to_f32();
    let bx = beta * xf;
    if bx > threshold {
        x
    } else if beta == 1.0 {
        math::softplus_in::<T>(x)
    } else {
        T::round((math::softplus(bx) / beta) as f64)
    }
}

/// `softplus_with(x, beta, threshold)` on every element of `storage`.
pub(crate) fn softplus_with_fwd(
    beta: f32,
    threshold: f32,
    storage: &CpuStorage,
    layout: &Layout,
) -> Result<(CpuStorage, Shape)> {
    fn run<T: Format>(beta: f32, threshold: f32, v: &[T], layout: &Layout) -> Vec<T> {
        map_parallel(v, layout, |x: &[T], o: &mut [MaybeUninit<T>]| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = MaybeUninit::new(softplus_with_element(beta, threshold, x));
            }
        })
    }
    let out = match storage {
        CpuStorage::F32(v) => CpuStorage::F32(run(beta, threshold, v, layout)),
        CpuStorage::BF16(v) => CpuStorage::BF16(run(beta, threshold, v, layout)),
        CpuStorage::F16(v) => CpuStorage::F16(run(beta, threshold, v, layout)),
        other => return Err(Error::UnsupportedDTypeForOp(other.dtype(), "softplus_with")),
    };
    Ok((out, layout.shape().clone()))
}
