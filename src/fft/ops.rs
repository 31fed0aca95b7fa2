//! FFT candle ops over [`crate::fft::FftPlan`]: [`fft`], [`ifft`], [`rfft`], [`irfft`]
//! (and `*_with` variants taking a [`Precision`]), with numpy's [`Norm`] conventions.
//!
//! # Layout
//! Complex tensors are f32 tensors whose last dimension is 2, (re, im) interleaved, like
//! `torch.view_as_real`. The transform runs over the second-to-last dimension (the last
//! one for the real input of [`rfft`] and the real output of [`irfft`]), batched over all
//! leading dimensions. Any layout is accepted (a strided input is gathered first).
//!
//! # Semantics (numpy.fft's, with the unnormalized transforms of [`FftPlan`](crate::fft::FftPlan))
//! * `fft`: X_k = sum_j x_j exp(-2 pi i jk/n); `ifft`: the same with the + sign.
//! * `rfft`: real (..., n) -> (..., n/2 + 1, 2), computed as the complex transform of
//!   x + 0i, truncated to its first n/2 + 1 outputs (the others are their conjugates).
//! * `irfft(x, n)`: (..., m, 2) -> real (..., n), n = 2 (m - 1) by default (numpy's). The
//!   first n/2 + 1 inputs (zero-padded when m is smaller, extra ones ignored) are extended
//!   Hermitian, X_{n-k} = conj(X_k), with the imaginary parts of X_0 and (n even) of the
//!   Nyquist term X_{n/2} set to 0, as numpy does; the output is the real part of the
//!   inverse complex transform.
//! * [`Norm`]: `Backward` (default) leaves the forward transform unscaled and divides the
//!   inverse by n; `Ortho` divides both by sqrt(n); `Forward` divides the forward by n and
//!   leaves the inverse unscaled.
//!
//! # Scaling
//! The scale is applied to the f32 outputs of the unnormalized transform as one IEEE
//! division per value: `y / (n as f32)` (n is exact in f32: n <= 2^20 < 2^24) or, for
//! `Ortho`, `y / (n as f32).sqrt()` (square root correctly rounded, an IEEE basic
//! operation). A division, not a multiplication by a reciprocal, so that the result is
//! the correctly rounded quotient of the transform's output and the same on every device.
//!
//! # Determinism
//! Plans depend only on (n, precision) and are cached process-wide ([`cached_plan`]).
//! Rows are independent: they are grouped into rayon tasks of a fixed size, and a row's
//! bits never depend on the batch, its position in it or the thread count. Every NaN
//! output is the canonical quiet NaN 0x7FC00000.

use crate::fft::plan::{MAX_LEN, Precision};
use crate::ops::buffer;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, DType, Error, Layout, Result, Shape, Tensor, bail};
use num_complex::Complex32;
use rayon::prelude::*;
use std::borrow::Cow;
use std::mem::MaybeUninit;

pub use crate::fft::kind::{FftKind, Norm, norm_divisor};
pub use crate::fft::plan::cached_plan;

const CANONICAL_NAN: f32 = f32::from_bits(0x7FC0_0000);

/// `v / d` (or v), NaN made canonical.
#[inline(always)]
fn scaled(v: f32, d: Option<f32>) -> f32 {
    let y = match d {
        Some(d) => v / d,
        None => v,
    };
    if y.is_nan() { CANONICAL_NAN } else { y }
}

/// `dst[i] = scaled(src(i), d)` for every i, with the division decided once, outside the
/// loop (so that the loop vectorizes).
#[inline(always)]
fn write_scaled(dst: &mut [MaybeUninit<f32>], src: impl Fn(usize) -> f32, d: Option<f32>) {
    match d {
        None => {
            for (i, o) in dst.iter_mut().enumerate() {
                o.write(scaled(src(i), None));
            }
        }
        Some(d) => {
            for (i, o) in dst.iter_mut().enumerate() {
                o.write(scaled(src(i), Some(d)));
            }
        }
    }
}

/// The f32 values (re, im, re, im, ...) of complex values.
fn as_f32(c: &[Complex32]) -> &[f32] {
    // SAFETY: Complex<f32> is #[repr(C)] { re: f32, im: f32 } (see `as_complex_mut`).
    unsafe { std::slice::from_raw_parts(c.as_ptr() as *const f32, 2 * c.len()) }
}

/// Complex values per rayon task (whole rows per task; a longer row is one task).
const TASK_COMPLEX: usize = 1 << 14;

fn rows_per_task(n: usize) -> usize {
    (TASK_COMPLEX / n).max(1)
}

/// An f32 slice of even length as complex values (re, im).
fn as_complex_mut(v: &mut [f32]) -> &mut [Complex32] {
    assert!(v.len().is_multiple_of(2));
    // SAFETY: Complex<f32> is #[repr(C)] { re: f32, im: f32 }: the size, alignment and
    // field order of [f32; 2]; the length is halved, so the view covers the same bytes.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut Complex32, v.len() / 2) }
}

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
        let mut d = dims.to_vec();
        match self.kind {
            FftKind::Fft | FftKind::Ifft => {}
            FftKind::Rfft => {
                *d.last_mut().expect("rank >= 1") = self.n / 2 + 1;
                d.push(2);
            }
            FftKind::Irfft => {
                d.pop();
                *d.last_mut().expect("rank >= 2") = self.n;
            }
        }
        d
    }

    /// Input values per row.
    fn in_row(&self, dims: &[usize]) -> usize {
        match self.kind {
            FftKind::Fft | FftKind::Ifft => 2 * self.n,
            FftKind::Rfft => self.n,
            FftKind::Irfft => 2 * dims[dims.len() - 2],
        }
    }

    fn cpu(&self, x: Cow<'_, [f32]>, dims: &[usize]) -> Result<Vec<f32>> {
        let plan = cached_plan(self.n, self.precision)?;
        let n = self.n;
        let d = norm_divisor(self.kind, self.norm, n);
        let rpt = rows_per_task(n);
        match self.kind {
            FftKind::Fft | FftKind::Ifft => {
                let inverse = self.kind == FftKind::Ifft;
                let transform = |o: &mut [f32]| {
                    let c = as_complex_mut(o);
                    if inverse {
                        plan.inverse(c)?;
                    } else {
                        plan.forward(c)?;
                    }
                    if d.is_some() {
                        for v in o.iter_mut() {
                            *v = scaled(*v, d);
                        }
                    }
                    Ok::<(), Error>(())
                };
                let chunk = rpt * 2 * n;
                match x {
                    // A gathered (strided) input is already a fresh buffer: in place.
                    Cow::Owned(mut out) => {
                        out.par_chunks_mut(chunk).try_for_each(transform)?;
                        Ok(out)
                    }
                    // A contiguous input is copied task by task into the output, where
                    // the copy stays in cache for the transform (a whole-buffer copy first
                    // would read every value from memory twice).
                    Cow::Borrowed(input) => {
                        let mut out = buffer::uninit::<f32>(input.len());
                        out.par_chunks_mut(chunk)
                            .zip(input.par_chunks(chunk))
                            .try_for_each(|(o, i)| transform(write_all(o, i)))?;
                        // SAFETY: the tasks cover the buffer and write every value.
                        Ok(unsafe { buffer::assume_init(out) })
                    }
                }
            }
            FftKind::Rfft => {
                let half = n / 2 + 1;
                let rows = x.len() / n;
                let mut out = buffer::uninit::<f32>(rows * 2 * half);
                out.par_chunks_mut(rpt * 2 * half)
                    .zip(x.par_chunks(rpt * n))
                    .try_for_each(|(o, xs)| {
                        with_rows(xs.len(), |c| {
                            plan.forward_real(xs, c)?;
                            for (orow, crow) in o.chunks_exact_mut(2 * half).zip(c.chunks_exact(n))
                            {
                                let v = as_f32(&crow[..half]);
                                write_scaled(orow, |i| v[i], d);
                            }
                            Ok::<(), Error>(())
                        })
                    })?;
                // SAFETY: the tasks cover the buffer and write every value of their rows.
                Ok(unsafe { buffer::assume_init(out) })
            }
            FftKind::Irfft => {
                let m = dims[dims.len() - 2];
                let rows = x.len() / (2 * m);
                let mut out = buffer::uninit::<f32>(rows * n);
                out.par_chunks_mut(rpt * n)
                    .zip(x.par_chunks(rpt * 2 * m))
                    .try_for_each(|(o, xs)| {
                        with_rows((xs.len() / (2 * m)) * n, |c| {
                            for (crow, xrow) in c.chunks_exact_mut(n).zip(xs.chunks_exact(2 * m)) {
                                hermitian_row(xrow, crow);
                            }
                            plan.inverse(c)?;
                            let v = as_f32(c);
                            write_scaled(o, |i| v[2 * i], d);
                            Ok::<(), Error>(())
                        })
                    })?;
                // SAFETY: the tasks cover the buffer and write every value of their rows.
                Ok(unsafe { buffer::assume_init(out) })
            }
        }
    }
}

thread_local! {
    /// A task's complex rows for the real transforms, reused by this thread's next task.
    /// Apart from the plan's own scratch (`plan::with_scratch`), which the transform
    /// borrows while these rows are in use.
    static ROWS: std::cell::RefCell<Vec<Complex32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on `len` complex values of scratch (contents unspecified: `f` writes every
/// value before reading it): this thread's buffer, or a fresh one if it is in use.
fn with_rows<R>(len: usize, f: impl FnOnce(&mut [Complex32]) -> R) -> R {
    let mut f = Some(f);
    let reused = ROWS.try_with(|cell| {
        let mut buf = cell.try_borrow_mut().ok()?;
        if buf.len() < len {
            buf.resize(len, Complex32::new(0.0, 0.0));
        }
        Some((f.take().expect("called once"))(&mut buf[..len]))
    });
    match reused {
        Ok(Some(r)) => r,
        _ => (f.take().expect("called once"))(&mut vec![Complex32::new(0.0, 0.0); len]),
    }
}

/// Writes `src` into `dst` (same length) and returns it as initialized values.
fn write_all<'a>(dst: &'a mut [MaybeUninit<f32>], src: &[f32]) -> &'a mut [f32] {
    assert_eq!(dst.len(), src.len());
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(s);
    }
    // SAFETY: every element was just written; MaybeUninit<f32> has f32's layout.
    unsafe { &mut *(dst as *mut [MaybeUninit<f32>] as *mut [f32]) }
}

/// The full spectrum of length n = `out.len()` from the interleaved half spectrum `x`
/// (m values): X_k = x_k for k <= n/2 (0 beyond m), imaginary parts of X_0 and (n even)
/// X_{n/2} zeroed, X_{n-k} = conj(X_k).
fn hermitian_row(x: &[f32], out: &mut [Complex32]) {
    let n = out.len();
    let m = x.len() / 2;
    let half = n / 2;
    let take = m.min(half + 1);
    for (o, p) in out[..take].iter_mut().zip(x.chunks_exact(2)) {
        *o = Complex32::new(p[0], p[1]);
    }
    out[take..=half].fill(Complex32::new(0.0, 0.0));
    out[0].im = 0.0;
    if n.is_multiple_of(2) {
        out[half].im = 0.0;
    }
    // X_k = conj(X_{n-k}) for k > n/2: n - k runs from n - half - 1 down to 1.
    let (lo, hi) = out.split_at_mut(half + 1);
    for (h, l) in hi.iter_mut().zip(lo[1..n - half].iter().rev()) {
        *h = l.conj();
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
        check_dims(self.kind, dims, Some(self.n))?;
        debug_assert_eq!(layout.shape().elem_count() % self.in_row(dims).max(1), 0);
        let x = logical_elements(v, layout);
        let out = self.cpu(x, dims)?;
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
    let name = kind.name();
    let len = match kind {
        FftKind::Fft | FftKind::Ifft | FftKind::Irfft => {
            if dims.len() < 2 {
                bail!(
                    "{name}: expected a complex f32 tensor (..., n, 2) of rank >= 2, got shape {dims:?}"
                )
            }
            if dims[dims.len() - 1] != 2 {
                bail!("{name}: the last dimension must be 2 (re, im), got shape {dims:?}")
            }
            let m = dims[dims.len() - 2];
            match kind {
                FftKind::Irfft => match n {
                    Some(n) => n,
                    None => {
                        if m == 0 {
                            bail!("{name}: empty transform dimension in shape {dims:?}")
                        }
                        2 * (m - 1)
                    }
                },
                _ => m,
            }
        }
        FftKind::Rfft => {
            if dims.is_empty() {
                bail!("{name}: expected a real f32 tensor (..., n) of rank >= 1, got a scalar")
            }
            dims[dims.len() - 1]
        }
    };
    if len == 0 {
        bail!("{name}: transform length 0 (shape {dims:?}, n {n:?})")
    }
    if len > MAX_LEN {
        bail!("{name}: transform length {len} exceeds {MAX_LEN}")
    }
    if kind == FftKind::Irfft && dims[dims.len() - 2] == 0 {
        bail!("{name}: empty input dimension in shape {dims:?}")
    }
    Ok(len)
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
    fn divisors_follow_numpy() {
        assert_eq!(norm_divisor(FftKind::Fft, Norm::Backward, 8), None);
        assert_eq!(norm_divisor(FftKind::Ifft, Norm::Backward, 8), Some(8.0));
        assert_eq!(norm_divisor(FftKind::Rfft, Norm::Forward, 8), Some(8.0));
        assert_eq!(norm_divisor(FftKind::Irfft, Norm::Forward, 8), None);
        assert_eq!(norm_divisor(FftKind::Fft, Norm::Ortho, 4), Some(2.0));
        assert_eq!(norm_divisor(FftKind::Irfft, Norm::Ortho, 4), Some(2.0));
    }

    #[test]
    fn hermitian_extension() {
        let x = [1.0, 5.0, 2.0, 3.0, 4.0, 7.0];
        let mut out = [Complex32::new(0.0, 0.0); 4];
        hermitian_row(&x, &mut out);
        assert_eq!(
            out,
            [
                Complex32::new(1.0, 0.0),
                Complex32::new(2.0, 3.0),
                Complex32::new(4.0, 0.0),
                Complex32::new(2.0, -3.0)
            ]
        );
        let mut out = [Complex32::new(0.0, 0.0); 7];
        hermitian_row(&x, &mut out);
        assert_eq!(out[3], Complex32::new(0.0, 0.0));
        assert_eq!(out[4], Complex32::new(0.0, -0.0));
        assert_eq!(out[6], Complex32::new(2.0, -3.0));
    }

    #[test]
    fn plans_are_shared() {
        let a = cached_plan(64, Precision::F32).unwrap();
        let b = cached_plan(64, Precision::F32).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(cached_plan(0, Precision::F32).is_err());
    }
}
