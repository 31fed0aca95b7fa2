//! The CPU half of the elementwise ops: the slice kernels of [`crate::math`] over the
//! logical elements of candle's CPU storage, split into fixed chunks over rayon's threads.
//! Each element is computed alone by the same operations, so neither the split, the thread
//! count nor the vector width changes a bit. The entry points are named like the device
//! half's (`super::cuda`): `unary_fwd`, `softplus_with_fwd`, `unary_bwd`,
//! `softplus_with_bwd`.

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

/// The backward kernel over the logical elements of the input and its output gradient
/// (same shape and dtype, checked by the caller), in fixed chunks over rayon's threads.
fn map2_parallel<T: Format>(
    (x, lx): (&[T], &Layout),
    (g, lg): (&[T], &Layout),
    kernel: impl Fn(&[T], &[T], &mut [MaybeUninit<T>]) + Sync,
) -> Vec<T> {
    buffer::map2_parallel(&logical_elements(x, lx), &logical_elements(g, lg), kernel)
}

/// Runs `$kernel` (generic over the format) on two CPU storages of the same float dtype.
macro_rules! bwd_storages {
    ($op:expr, $x:expr, $g:expr, |$T:ident| $kernel:expr) => {{
        let ((sx, lx), (sg, lg)) = ($x, $g);
        let out = match (sx, sg) {
            (CpuStorage::F32(x), CpuStorage::F32(g)) => {
                type $T = f32;
                CpuStorage::F32(map2_parallel((x, lx), (g, lg), $kernel))
            }
            (CpuStorage::BF16(x), CpuStorage::BF16(g)) => {
                type $T = half::bf16;
                CpuStorage::BF16(map2_parallel((x, lx), (g, lg), $kernel))
            }
            (CpuStorage::F16(x), CpuStorage::F16(g)) => {
                type $T = half::f16;
                CpuStorage::F16(map2_parallel((x, lx), (g, lg), $kernel))
            }
            (x, _) => return Err(Error::UnsupportedDTypeForOp(x.dtype(), $op)),
        };
        Ok((out, lx.shape().clone()))
    }};
}

/// The backward pass of `f`: the input and the output's gradient.
pub(crate) fn unary_bwd(
    f: UnaryFn,
    x: (&CpuStorage, &Layout),
    g: (&CpuStorage, &Layout),
) -> Result<(CpuStorage, Shape)> {
    bwd_storages!(f.name(), x, g, |T| f.grad_kernel::<T>())
}

/// The backward pass of `softplus_with(x, beta, threshold)`.
pub(crate) fn softplus_with_bwd(
    beta: f32,
    threshold: f32,
    x: (&CpuStorage, &Layout),
    g: (&CpuStorage, &Layout),
) -> Result<(CpuStorage, Shape)> {
    use crate::math::grad::{apply, softplus_with_factor};
    fn kernel<T: Format>(
        beta: f32,
        threshold: f32,
    ) -> impl Fn(&[T], &[T], &mut [MaybeUninit<T>]) + Sync {
        move |x, g, o| {
            for ((o, &x), &g) in o.iter_mut().zip(x).zip(g) {
                let factor = softplus_with_factor(beta, threshold, x.to_f32());
                o.write(apply::<T>(factor, g.to_f32() as f64));
            }
        }
    }
    bwd_storages!("softplus_with", x, g, |T| kernel::<T>(beta, threshold))
}
