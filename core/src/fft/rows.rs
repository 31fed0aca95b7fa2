//! The FFT ops over batches of rows, as the adapters run them on the CPU: numpy's
//! `fft`, `ifft`, `rfft` and `irfft` over the last dimension of a row-major f32 buffer,
//! with numpy's [`Norm`] conventions. candle-repro's tensor ops (`candle_repro::fft`) and
//! burn-repro's (`burn_repro::rfft`, ...) both call [`transform`], so they give the same
//! bits by construction; candle-repro's CUDA half mirrors these steps.
//!
//! # Layout
//! Complex values are interleaved f32 pairs (re, im), like `torch.view_as_real`. With
//! `dims` the input's dimensions:
//! * `Fft`, `Ifft`: (..., n, 2) -> (..., n, 2);
//! * `Rfft`: real (..., n) -> (..., n/2 + 1, 2);
//! * `Irfft`: (..., m, 2) -> real (..., n).
//!
//! # Semantics (numpy.fft's, over the unnormalized transforms of [`FftPlan`])
//! * `fft`: X_k = sum_j x_j exp(-2 pi i jk/n); `ifft`: the same with the + sign.
//! * `rfft`: the complex transform of x + 0i, truncated to its first n/2 + 1 outputs (the
//!   others are their conjugates).
//! * `irfft`: the first n/2 + 1 inputs (zero-padded when m is smaller, extra ones
//!   ignored) are extended Hermitian, X_{n-k} = conj(X_k), with the imaginary parts of X_0
//!   and (n even) of the Nyquist term X_{n/2} set to 0, as numpy does; the output is the
//!   real part of the inverse complex transform.
//! * The scale of [`Norm`] is one IEEE division of each f32 output of the unnormalized
//!   transform by [`norm_divisor`]'s n or sqrt(n) (both correctly rounded): the correctly
//!   rounded quotient, the same on every device.
//!
//! # Determinism
//! Plans depend only on (n, precision) and are cached process-wide ([`cached_plan`]).
//! Rows are independent: they are grouped into rayon tasks of a fixed size, and a row's
//! bits never depend on the batch, its position in it or the thread count. Every NaN
//! output is the canonical quiet NaN 0x7FC00000.
//!
//! [`FftPlan`]: crate::fft::FftPlan

use crate::buffer;
use crate::fft::kind::{FftKind, Norm, norm_divisor};
use crate::fft::plan::{MAX_LEN, Precision, cached_plan};
use crate::{Error, Result};
use num_complex::Complex32;
use rayon::prelude::*;
use std::borrow::Cow;
use std::mem::MaybeUninit;

macro_rules! bail {
    ($($t:tt)*) => {
        return Err(Error::new(format!($($t)*)))
    };
}

const CANONICAL_NAN: f32 = f32::from_bits(0x7FC0_0000);

/// Checks the input dimensions for `kind` and returns the transform length: the last
/// dimension for `Rfft`, the second-to-last for `Fft`/`Ifft`, and for `Irfft` the requested
/// output length `n` (numpy's 2 (m - 1) when `None`).
///
/// ```rust
/// use repro_core::fft::kind::FftKind;
/// use repro_core::fft::rows::check_dims;
///
/// assert_eq!(check_dims(FftKind::Fft, &[3, 8, 2], None).unwrap(), 8);
/// assert_eq!(check_dims(FftKind::Rfft, &[5, 6], None).unwrap(), 6);
/// assert_eq!(check_dims(FftKind::Irfft, &[5, 2], None).unwrap(), 8);
/// assert!(check_dims(FftKind::Fft, &[8, 3], None).is_err()); // not (re, im) pairs
/// ```
pub fn check_dims(kind: FftKind, dims: &[usize], n: Option<usize>) -> Result<usize> {
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

/// The output dimensions of `kind` with transform length `n` for input dimensions `dims`
/// (already checked by [`check_dims`]).
pub fn out_dims(kind: FftKind, n: usize, dims: &[usize]) -> Vec<usize> {
    let mut d = dims.to_vec();
    match kind {
        FftKind::Fft | FftKind::Ifft => {}
        FftKind::Rfft => {
            *d.last_mut().expect("rank >= 1") = n / 2 + 1;
            d.push(2);
        }
        FftKind::Irfft => {
            d.pop();
            *d.last_mut().expect("rank >= 2") = n;
        }
    }
    d
}

/// The op `kind` of length `n` (as [`check_dims`] returned it for `dims`) over the row-major
/// values `x` of a tensor with dimensions `dims`: the output's values, row-major, with the
/// dimensions [`out_dims`] gives. A borrowed `x` is copied into the output task by task
/// (where the copy stays in cache for the transform); an owned one is transformed in place
/// when the kind allows.
///
/// ```rust
/// use repro_core::fft::Norm;
/// use repro_core::fft::kind::FftKind;
/// use repro_core::fft::plan::Precision;
/// use repro_core::fft::rows::{check_dims, transform};
///
/// // rfft of (1, 2, 3, 4): X_0 = 10, X_1 = -2 + 2i, X_2 = -2.
/// let dims = [4];
/// let n = check_dims(FftKind::Rfft, &dims, None).unwrap();
/// let x = [1f32, 2., 3., 4.];
/// let y = transform(FftKind::Rfft, n, Norm::Backward, Precision::F32, x[..].into(), &dims);
/// assert_eq!(y.unwrap(), [10., 0., -2., 2., -2., 0.]);
/// ```
pub fn transform(
    kind: FftKind,
    n: usize,
    norm: Norm,
    precision: Precision,
    x: Cow<'_, [f32]>,
    dims: &[usize],
) -> Result<Vec<f32>> {
    if check_dims(kind, dims, (kind == FftKind::Irfft).then_some(n))? != n {
        bail!(
            "{}: transform length {n} does not fit the shape {dims:?}",
            kind.name()
        )
    }
    let in_row = match kind {
        FftKind::Fft | FftKind::Ifft => 2 * n,
        FftKind::Rfft => n,
        FftKind::Irfft => 2 * dims[dims.len() - 2],
    };
    if x.len() != dims.iter().product::<usize>() || !x.len().is_multiple_of(in_row) {
        bail!(
            "{}: {} values do not make a tensor of shape {dims:?}",
            kind.name(),
            x.len()
        )
    }
    let plan = cached_plan(n, precision)?;
    let d = norm_divisor(kind, norm, n);
    let rpt = rows_per_task(n);
    match kind {
        FftKind::Fft | FftKind::Ifft => {
            let inverse = kind == FftKind::Ifft;
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
                // A fresh buffer already: in place.
                Cow::Owned(mut out) => {
                    out.par_chunks_mut(chunk).try_for_each(transform)?;
                    Ok(out)
                }
                // Copied task by task into the output, where the copy stays in cache for
                // the transform (a whole-buffer copy first would read every value from
                // memory twice).
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
                        for (orow, crow) in o.chunks_exact_mut(2 * half).zip(c.chunks_exact(n)) {
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
    hermitian_from(x.len() / 2, |k| Complex32::new(x[2 * k], x[2 * k + 1]), out)
}

/// [`hermitian_row`] with the half spectrum's m values given by `x(k)`.
#[inline(always)]
fn hermitian_from(m: usize, x: impl Fn(usize) -> Complex32, out: &mut [Complex32]) {
    let n = out.len();
    let half = n / 2;
    let take = m.min(half + 1);
    for (k, o) in out[..take].iter_mut().enumerate() {
        *o = x(k);
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

/// The transform length of `kind` for `rows` rows of `len` values given as parts (see
/// [`complex_parts`]), checked as [`check_dims`] checks a tensor's, and the parts' lengths.
fn check_parts(
    kind: FftKind,
    n: Option<usize>,
    rows: usize,
    len: usize,
    re: &[f32],
    im: Option<&[f32]>,
) -> Result<usize> {
    let name = kind.name();
    let n = match kind {
        FftKind::Rfft => check_dims(kind, &[rows, n.unwrap_or(len)], None)?,
        FftKind::Fft | FftKind::Ifft => check_dims(kind, &[rows, n.unwrap_or(len), 2], None)?,
        FftKind::Irfft => check_dims(kind, &[rows, len, 2], n)?,
    };
    let want = rows.checked_mul(len);
    if want != Some(re.len()) || im.is_some_and(|im| im.len() != re.len()) {
        bail!(
            "{name}: parts of {} and {:?} values for {rows} rows of {len}",
            re.len(),
            im.map(<[f32]>::len)
        )
    }
    if im.is_none() != (kind == FftKind::Rfft) {
        bail!("{name}: a real input has one part, a complex one two")
    }
    Ok(n)
}

/// The ops with complex outputs (`Fft`, `Ifft`, `Rfft`) on rows given as parts: `rows` rows
/// of `len` values in `re` and (not for `Rfft`) `im`, each row truncated or zero-padded to
/// the transform length `n` (numpy's `n=`; default `len`). Returns the output's real and
/// imaginary parts, `rows` rows of n (n/2 + 1 for `Rfft`) each. The same bits as
/// [`transform`] on the fitted rows interleaved: the same plan calls and the same scaling,
/// with the interleaving, the fitting and the split done per task, while the rows are in
/// cache (an adapter whose complex tensors are two real ones, as Burn's, needs no
/// whole-buffer interleave or split; the transform runs in a scratch buffer instead of the
/// output).
///
/// ```rust
/// use repro_core::fft::Norm;
/// use repro_core::fft::kind::FftKind;
/// use repro_core::fft::plan::Precision;
/// use repro_core::fft::rows::complex_parts;
///
/// // rfft of (1, 2, 3) zero-padded to n = 4: X_0 = 6, X_1 = -2 - 2i, X_2 = 2.
/// let (re, im) = complex_parts(FftKind::Rfft, Some(4), Norm::Backward, Precision::F32,
///                              1, 3, &[1., 2., 3.], None).unwrap();
/// assert_eq!((re, im), (vec![6., -2., 2.], vec![0., -2., 0.]));
/// ```
#[allow(clippy::too_many_arguments)]
pub fn complex_parts(
    kind: FftKind,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
    rows: usize,
    len: usize,
    re: &[f32],
    im: Option<&[f32]>,
) -> Result<(Vec<f32>, Vec<f32>)> {
    if kind == FftKind::Irfft {
        bail!("irfft: a real output (see irfft_parts)")
    }
    let n = check_parts(kind, n, rows, len, re, im)?;
    let plan = cached_plan(n, precision)?;
    let d = norm_divisor(kind, norm, n);
    let rpt = rows_per_task(n);
    let keep = len.min(n);
    let out_len = if kind == FftKind::Rfft { n / 2 + 1 } else { n };
    let mut ore = buffer::uninit::<f32>(rows * out_len);
    let mut oim = buffer::uninit::<f32>(rows * out_len);
    ore.par_chunks_mut(rpt * out_len)
        .zip(oim.par_chunks_mut(rpt * out_len))
        .enumerate()
        .try_for_each(|(t, (or, oi))| {
            let first = t * rpt;
            let count = or.len() / out_len;
            with_rows(count * n, |c| {
                match im {
                    // The real transform: the plan's real rows, from the input in place when
                    // no fitting is needed.
                    None => {
                        let xs = &re[first * len..(first + count) * len];
                        if len == n {
                            plan.forward_real(xs, c)?;
                        } else {
                            let mut fitted = vec![0f32; count * n];
                            if keep > 0 {
                                for (f, x) in fitted.chunks_exact_mut(n).zip(xs.chunks_exact(len)) {
                                    f[..keep].copy_from_slice(&x[..keep]);
                                }
                            }
                            plan.forward_real(&fitted, c)?;
                        }
                    }
                    Some(im) => {
                        for (i, crow) in c.chunks_exact_mut(n).enumerate() {
                            let at = (first + i) * len;
                            let (xr, xi) = (&re[at..at + keep], &im[at..at + keep]);
                            for ((o, &a), &b) in crow.iter_mut().zip(xr).zip(xi) {
                                *o = Complex32::new(a, b);
                            }
                            crow[keep..].fill(Complex32::new(0.0, 0.0));
                        }
                        if kind == FftKind::Ifft {
                            plan.inverse(c)?;
                        } else {
                            plan.forward(c)?;
                        }
                    }
                }
                let rows_out = or
                    .chunks_exact_mut(out_len)
                    .zip(oi.chunks_exact_mut(out_len));
                for ((r, i), crow) in rows_out.zip(c.chunks_exact(n)) {
                    write_scaled(r, |k| crow[k].re, d);
                    write_scaled(i, |k| crow[k].im, d);
                }
                Ok::<(), Error>(())
            })
        })?;
    // SAFETY: the tasks cover both buffers and write every value of their rows.
    Ok(unsafe { (buffer::assume_init(ore), buffer::assume_init(oim)) })
}

/// `Irfft` on a half spectrum given as parts: `rows` rows of `len` values in `re` and `im`;
/// the real output, `rows` rows of n (default 2 (len - 1)). The same bits as [`transform`]
/// on the parts interleaved (see [`complex_parts`]).
pub fn irfft_parts(
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
    rows: usize,
    len: usize,
    re: &[f32],
    im: &[f32],
) -> Result<Vec<f32>> {
    let n = check_parts(FftKind::Irfft, n, rows, len, re, Some(im))?;
    let plan = cached_plan(n, precision)?;
    let d = norm_divisor(FftKind::Irfft, norm, n);
    let rpt = rows_per_task(n);
    let mut out = buffer::uninit::<f32>(rows * n);
    out.par_chunks_mut(rpt * n)
        .enumerate()
        .try_for_each(|(t, o)| {
            let first = t * rpt;
            with_rows(o.len(), |c| {
                for (i, crow) in c.chunks_exact_mut(n).enumerate() {
                    let at = (first + i) * len;
                    let (xr, xi) = (&re[at..at + len], &im[at..at + len]);
                    hermitian_from(len, |k| Complex32::new(xr[k], xi[k]), crow);
                }
                plan.inverse(c)?;
                write_scaled(o, |k| c[k].re, d);
                Ok::<(), Error>(())
            })
        })?;
    // SAFETY: the tasks cover the buffer and write every value of their rows.
    Ok(unsafe { buffer::assume_init(out) })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn values_must_make_the_shape() {
        let x = [0f32; 6];
        let t = |dims: &[usize]| {
            transform(
                FftKind::Fft,
                3,
                Norm::Backward,
                Precision::F32,
                x[..].into(),
                dims,
            )
        };
        assert!(t(&[3, 2]).is_ok());
        assert!(t(&[2, 2]).is_err()); // n 3 for a length-2 dimension
        assert!(t(&[1, 3, 2]).is_ok());
        assert!(t(&[2, 3, 2]).is_err()); // 12 values expected
    }
}
