//! FFT candle ops over [`crate::fft::FftPlan`]: [`fft`], [`ifft`], [`rfft`], [`irfft`]
//! (and `*_with` variants taking a [`Precision`]), with numpy's [`Norm`] conventions.
//!
//! # Layout
//! Complex tensors are f32 tensors whose last dimension is 2, (re, im) interleaved, like
//! `torch.view_as_real`. The transform runs over the second-to-last dimension (the last
//! one for the real input of [`rfft`] and the real output of [`irfft`]), batched over all
//! leading dimensions. Any layout is accepted (a strided input is gathered first).
//!
//! # Semantics
//! numpy.fft's, over the unnormalized transforms of [`FftPlan`](crate::fft::FftPlan): `irfft`
//! extends its input Hermitian as numpy does, and [`Norm`]'s scale is one IEEE division of
//! each f32 output by n or sqrt(n). The CPU op is [`repro_core::fft::rows::transform`]
//! (burn-repro's FFT runs it too), whose documentation gives the definitions; the CUDA op
//! mirrors it. Rows are independent and grouped into tasks of a fixed size: a row's bits
//! never depend on the batch, its position in it or the thread count. Every NaN output is
//! the canonical quiet NaN 0x7FC00000.

use crate::fft::plan::Precision;
use crate::ops::core_error;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, DType, Error, Layout, Result, Shape, Tensor};
use repro_core::fft::rows;

pub use crate::fft::kind::{FftKind, Norm, norm_divisor};
pub use crate::fft::plan::cached_plan;

/// The op: one transform kind, its length, normalization and precision. The length is
/// the transform's n (the output length for `Irfft`), so a device path needs nothing
/// else than these fields, the input layout and [`FftOp::out_dims`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct FftOp {
    pub kind: FftKind,
    pub n: usize,
    pub norm: Norm,
    pub precision: Precision,
}

impl FftOp {
    /// The output dimensions for input dimensions `dims` (already validated).
    pub fn out_dims(&self, dims: &[usize]) -> Vec<usize> {
        rows::out_dims(self.kind, self.n, dims)
    }
}

impl CustomOp1 for FftOp {
    fn name(&self) -> &'static str {
        match self.kind {
            FftKind::Fft => "repro-fft",
            FftKind::Ifft => "repro-ifft",
            FftKind::Rfft => "repro-rfft",
            FftKind::Irfft => "repro-irfft",
        }
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let v = match storage {
            CpuStorage::F32(v) => v,
            other => {
                return Err(Error::UnsupportedDTypeForOp(
                    other.dtype(),
                    self.kind.name(),
                ));
            }
        };
        let dims = layout.dims();
        // transform checks the dimensions (rows::check_dims) and the values' count.
        let x = logical_elements(v, layout);
        let out = rows::transform(self.kind, self.n, self.norm, self.precision, x, dims)
            .map_err(core_error)?;
        Ok((CpuStorage::F32(out), Shape::from(self.out_dims(dims))))
    }

    /// The same steps on CUDA (src/fft/cuda.rs `op_fwd`: the plan's tables uploaded, the
    /// kernels of kernels/fft/fft.cu), with the CPU's bits.
    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        storage: &candle_core::CudaStorage,
        layout: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let dims = layout.dims();
        check_dims(self.kind, dims, Some(self.n))?;
        let out = crate::fft::cuda::op_fwd(
            self.kind,
            self.n,
            self.norm,
            self.precision,
            storage,
            layout,
        )?;
        Ok((out, Shape::from(self.out_dims(dims))))
    }
}

/// Validates the input dimensions for `kind` and returns the transform length (the
/// requested output length `n` for `Irfft`, numpy's 2 (m - 1) when `None`).
fn check_dims(kind: FftKind, dims: &[usize], n: Option<usize>) -> Result<usize> {
    rows::check_dims(kind, dims, n).map_err(core_error)
}

fn apply(x: &Tensor, kind: FftKind, n: Option<usize>, norm: Norm, p: Precision) -> Result<Tensor> {
    if x.dtype() != DType::F32 {
        return Err(Error::UnsupportedDTypeForOp(x.dtype(), kind.name()));
    }
    let n = check_dims(kind, x.dims(), n)?;
    x.apply_op1_no_bwd(&FftOp {
        kind,
        n,
        norm,
        precision: p,
    })
}

/// Forward complex FFT over dimension -2 of an f32 tensor (..., n, 2), with
/// [`Precision::F32`]. See the module documentation.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::fft::{Norm, fft};
///
/// // A delta at j = 0, as (n, 2) = (4, (re, im)): its spectrum is all ones.
/// let x = Tensor::new(&[[1f32, 0.], [0., 0.], [0., 0.], [0., 0.]], &Device::Cpu)?;
/// let y = fft(&x, Norm::Backward)?;
/// assert_eq!(y.dims(), &[4, 2]);
/// assert_eq!(y.dtype(), DType::F32);
/// assert_eq!(y.to_vec2::<f32>()?, vec![vec![1f32, 0.]; 4]);
/// // Ortho divides by sqrt(4) = 2 (an exact IEEE division).
/// let y = fft(&x, Norm::Ortho)?;
/// assert_eq!(y.to_vec2::<f32>()?, vec![vec![0.5f32, 0.]; 4]);
/// # Ok(()) }
/// ```
pub fn fft(x: &Tensor, norm: Norm) -> Result<Tensor> {
    fft_with(x, norm, Precision::F32)
}

/// [`fft`] at a given precision.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::fft::{Norm, Precision, fft_with};
///
/// // Rows of a batch (2, 16, 2) are transformed independently, at any precision.
/// let x = Tensor::arange(0f32, 64., &Device::Cpu)?.reshape((2, 16, 2))?;
/// let a = fft_with(&x, Norm::Backward, Precision::F32)?;
/// let b = fft_with(&x, Norm::Backward, Precision::F64Internal)?;
/// let c = fft_with(&x, Norm::Backward, Precision::Ozaki)?;
/// assert_eq!(a.dims(), &[2, 16, 2]);
/// for other in [&b, &c] {
///     let diff = (&a - other)?.abs()?.max_all()?.to_scalar::<f32>()?;
///     assert!(diff < 1e-3, "{diff}"); // outputs up to |X_0| = 16 * 31
/// }
/// # Ok(()) }
/// ```
pub fn fft_with(x: &Tensor, norm: Norm, precision: Precision) -> Result<Tensor> {
    apply(x, FftKind::Fft, None, norm, precision)
}

/// Inverse complex FFT over dimension -2 of an f32 tensor (..., n, 2), with
/// [`Precision::F32`].
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::fft::{Norm, fft, ifft};
///
/// // With the same `norm` on both sides, ifft(fft(x)) = x up to rounding (n = 6 here).
/// let x = Tensor::new(&[0.5f32, -1., 2., 0.25, 3., -2., 1., 1., -0.5, 4., 0., 1.5], &Device::Cpu)?
///     .reshape((6, 2))?;
/// for norm in [Norm::Backward, Norm::Ortho, Norm::Forward] {
///     let back = ifft(&fft(&x, norm)?, norm)?;
///     let err = (&back - &x)?.abs()?.max_all()?.to_scalar::<f32>()?;
///     assert!(err < 1e-5, "{norm:?}: {err}");
/// }
/// # Ok(()) }
/// ```
pub fn ifft(x: &Tensor, norm: Norm) -> Result<Tensor> {
    ifft_with(x, norm, Precision::F32)
}

/// [`ifft`] at a given precision.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::fft::{Norm, Precision, fft_with, ifft_with};
///
/// // n = 22 = 2 * 11 goes through Bluestein (a length-64 convolution).
/// let x = Tensor::arange(0f32, 44., &Device::Cpu)?.reshape((22, 2))?;
/// let p = Precision::F64Internal;
/// let back = ifft_with(&fft_with(&x, Norm::Backward, p)?, Norm::Backward, p)?;
/// let err = (&back - &x)?.abs()?.max_all()?.to_scalar::<f32>()?;
/// assert!(err < 1e-4, "{err}");
/// # Ok(()) }
/// ```
pub fn ifft_with(x: &Tensor, norm: Norm, precision: Precision) -> Result<Tensor> {
    apply(x, FftKind::Ifft, None, norm, precision)
}

/// FFT of a real f32 tensor (..., n) over its last dimension: (..., n/2 + 1, 2), the
/// complex transform of x + 0i truncated; [`Precision::F32`].
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::fft::{Norm, rfft};
///
/// // n = 4: the twiddles are 1, -i, -1, i, so the half spectrum is exact.
/// let x = Tensor::new(&[1f32, 2., 3., 4.], &Device::Cpu)?;
/// let y = rfft(&x, Norm::Backward)?;
/// assert_eq!(y.dims(), &[3, 2]); // n/2 + 1 complex values
/// assert_eq!(y.to_vec2::<f32>()?, [[10f32, 0.], [-2., 2.], [-2., 0.]]);
/// # Ok(()) }
/// ```
pub fn rfft(x: &Tensor, norm: Norm) -> Result<Tensor> {
    rfft_with(x, norm, Precision::F32)
}

/// [`rfft`] at a given precision.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::fft::{Norm, Precision, rfft_with};
///
/// // A batch of 3 rows of 8, with numpy's `norm="forward"`: X_0 is the mean of the row.
/// let x = Tensor::ones((3, 8), candle_core::DType::F32, &Device::Cpu)?;
/// let y = rfft_with(&x, Norm::Forward, Precision::Ozaki)?;
/// assert_eq!(y.dims(), &[3, 5, 2]);
/// assert_eq!(y.get(2)?.get(0)?.to_vec1::<f32>()?, [1., 0.]);
/// # Ok(()) }
/// ```
pub fn rfft_with(x: &Tensor, norm: Norm, precision: Precision) -> Result<Tensor> {
    apply(x, FftKind::Rfft, None, norm, precision)
}

/// Inverse of [`rfft`]: (..., m, 2) -> real (..., n), n = 2 (m - 1) when `None`
/// (numpy's default); see the module documentation for the Hermitian extension.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::fft::{Norm, irfft, rfft};
///
/// // An odd length is not recoverable from the n/2 + 1 = 3 outputs: pass it.
/// let x = Tensor::new(&[1f32, -2., 0.5, 3., 0.], &Device::Cpu)?;
/// let half = rfft(&x, Norm::Backward)?;
/// let back = irfft(&half, Some(5), Norm::Backward)?;
/// let err = (&back - &x)?.abs()?.max_all()?.to_scalar::<f32>()?;
/// assert!(err < 1e-5, "{err}");
/// // `None` gives numpy's n = 2 (m - 1) = 4.
/// assert_eq!(irfft(&half, None, Norm::Backward)?.dims(), &[4]);
/// # Ok(()) }
/// ```
pub fn irfft(x: &Tensor, n: Option<usize>, norm: Norm) -> Result<Tensor> {
    irfft_with(x, n, norm, Precision::F32)
}

/// [`irfft`] at a given precision.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::fft::{Norm, Precision, irfft_with};
///
/// // A half spectrum with only X_0 = 8 is a constant signal: 8 / n = 1 under Backward.
/// let half = Tensor::new(&[[8f32, 0.], [0., 0.], [0., 0.], [0., 0.], [0., 0.]], &Device::Cpu)?;
/// let y = irfft_with(&half, None, Norm::Backward, Precision::F64Internal)?;
/// assert_eq!(y.to_vec1::<f32>()?, [1f32; 8]);
/// # Ok(()) }
/// ```
pub fn irfft_with(
    x: &Tensor,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
) -> Result<Tensor> {
    apply(x, FftKind::Irfft, n, norm, precision)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn plans_are_shared() {
        let a = cached_plan(64, Precision::F32).unwrap();
        let b = cached_plan(64, Precision::F32).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(cached_plan(0, Precision::F32).is_err());
    }
}
