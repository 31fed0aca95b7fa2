//! The FFT along a dimension, with burn-signal's signatures (`rfft`, `irfft`, `cfft`: a
//! complex tensor is two real tensors, its real and imaginary parts) and numpy's semantics
//! for every length 1 ..= 2^20, not only powers of two. Each op is the core's
//! [`repro_core::fft::rows::complex_parts`] or [`repro_core::fft::rows::irfft_parts`]: the
//! plan calls and the scaling of [`repro_core::fft::rows::transform`], candle-repro's CPU
//! op, so the same bits as candle-repro's `rfft`, `irfft`, `fft` and `ifft` for the same
//! values, on every CPU, vector width and thread count.
//!
//! The transform's dimension is swapped to the end and back (a permutation: exact), and the
//! rows are read in place from the Flex primitive (made contiguous first when they are
//! not). The two parts of a complex tensor are interleaved into the transform's working rows
//! and split out of them task by task, while the rows are in cache, so the separate parts
//! need no whole-buffer pass of their own. f32 only, as candle-repro's FFT: the transforms compute
//! in f32 with correctly rounded twiddles.

use crate::Error;
use crate::flex::{check_same, contiguous, from_flex, from_vec, to_flex, values};
use burn_backend::TensorMetadata;
use burn_tensor::{AsIndex, DType, Tensor};
use repro_core::fft::kind::FftKind;
use repro_core::fft::rows;
use repro_core::fft::{Norm, Precision};

/// The transform's dimension as an index, for an f32 tensor of rank D.
fn checked_dim<const D: usize>(
    op: &'static str,
    x: &Tensor<D>,
    dim: impl AsIndex,
) -> Result<usize, Error> {
    if x.dtype() != DType::F32 {
        return Err(Error::Invalid {
            op,
            message: format!(
                "Unsupported dtype {:?}: the FFT takes F32 tensors (its transforms compute in f32).",
                x.dtype()
            ),
        });
    }
    dim.try_dim_index(D).map_err(|e| Error::Invalid {
        op,
        message: format!("{e}"),
    })
}

/// The second part of a complex input: the first part's dtype, device and shape.
fn check_pair<const D: usize>(
    op: &'static str,
    re: &Tensor<D>,
    im: &Tensor<D>,
) -> Result<(), Error> {
    check_same(op, re, im)?;
    if re.dims() != im.dims() {
        return Err(Error::Invalid {
            op,
            message: format!(
                "The real and imaginary parts have different shapes: {:?} and {:?}.",
                re.dims(),
                im.dims()
            ),
        });
    }
    Ok(())
}

/// The core's error as the adapter's.
fn invalid(op: &'static str) -> impl Fn(repro_core::Error) -> Error {
    move |e| Error::Invalid {
        op,
        message: e.message().to_string(),
    }
}

/// `x` with dimension `dim` last (a view; the same tensor when it is last already).
fn to_last<const D: usize>(x: Tensor<D>, dim: usize) -> Tensor<D> {
    if dim + 1 == D {
        x
    } else {
        x.swap_dims(dim, D - 1)
    }
}

/// The rows of a tensor whose transform dimension is last: its values, in place when
/// contiguous, and its dimensions.
struct Rows {
    p: burn_flex::FlexTensor,
    dims: Vec<usize>,
}

impl Rows {
    fn of(p: burn_flex::FlexTensor) -> Rows {
        let p = contiguous(p);
        let dims = p.shape().as_slice().to_vec();
        Rows { p, dims }
    }

    fn values(&self) -> &[f32] {
        values::<f32>(&self.p)
    }

    /// The row length (the last dimension).
    fn len(&self) -> usize {
        *self.dims.last().expect("rank >= 1")
    }

    /// The number of rows (the product of the leading dimensions).
    fn count(&self) -> usize {
        self.dims[..self.dims.len() - 1].iter().product()
    }

    /// The leading dimensions followed by `tail`.
    fn dims_with(&self, tail: &[usize]) -> Vec<usize> {
        let mut d = self.dims[..self.dims.len() - 1].to_vec();
        d.extend_from_slice(tail);
        d
    }
}

/// The two parts of a complex result, rows of `len` values, where the input came from,
/// with the transform's dimension back at `dim`.
fn complex_out<const D: usize>(
    (re, im): (Vec<f32>, Vec<f32>),
    rows: &Rows,
    len: usize,
    home: &crate::flex::Home,
    dim: usize,
) -> (Tensor<D>, Tensor<D>) {
    let dims = rows.dims_with(&[len]);
    let part = |v: Vec<f32>| {
        let t: Tensor<D> = from_flex(from_vec(v, dims.clone().into()), home);
        to_last(t, dim)
    };
    (part(re), part(im))
}

/// The rows of a tensor (and of its imaginary part, when complex) with dimension `dim`
/// last, and where they came from.
fn load<const D: usize>(
    op: &'static str,
    re: Tensor<D>,
    im: Option<Tensor<D>>,
    dim: usize,
) -> Result<(Rows, Option<Rows>, crate::flex::Home), Error> {
    let (pr, home) = to_flex(op, to_last(re, dim))?;
    let im = match im {
        Some(im) => Some(Rows::of(to_flex(op, to_last(im, dim))?.0)),
        None => None,
    };
    Ok((Rows::of(pr), im, home))
}

/// The ops with complex outputs: `Rfft` of `re` alone, `Fft`/`Ifft` of `re` + i `im`.
#[allow(clippy::too_many_arguments)]
fn complex_op<const D: usize>(
    op: &'static str,
    kind: FftKind,
    re: Tensor<D>,
    im: Option<Tensor<D>>,
    dim: impl AsIndex,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
) -> Result<(Tensor<D>, Tensor<D>), Error> {
    let dim = checked_dim(op, &re, dim)?;
    if let Some(im) = &im {
        check_pair(op, &re, im)?;
    }
    if re.is_autodiff() {
        if re.is_tracked() || im.as_ref().is_some_and(Tensor::is_tracked) {
            return Err(Error::NoBackward { op });
        }
        let im = im.map(Tensor::inner);
        let (a, b) = complex_op(op, kind, re.inner(), im, dim, n, norm, precision)?;
        return Ok((a.autodiff(), b.autodiff()));
    }
    let (re, im, home) = load(op, re, im, dim)?;
    let (count, len) = (re.count(), re.len());
    let n = n.unwrap_or(len);
    let im_values = im.as_ref().map(Rows::values);
    let parts = rows::complex_parts(
        kind,
        Some(n),
        norm,
        precision,
        count,
        len,
        re.values(),
        im_values,
    )
    .map_err(invalid(op))?;
    let out_len = if kind == FftKind::Rfft { n / 2 + 1 } else { n };
    Ok(complex_out(parts, &re, out_len, &home, dim))
}

fn real_inverse<const D: usize>(
    op: &'static str,
    re: Tensor<D>,
    im: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
) -> Result<Tensor<D>, Error> {
    let dim = checked_dim(op, &re, dim)?;
    check_pair(op, &re, &im)?;
    if re.is_autodiff() {
        if re.is_tracked() || im.is_tracked() {
            return Err(Error::NoBackward { op });
        }
        return Ok(real_inverse(op, re.inner(), im.inner(), dim, n, norm, precision)?.autodiff());
    }
    let (re, im, home) = load(op, re, Some(im), dim)?;
    let im = im.expect("loaded with its imaginary part");
    let (count, m) = (re.count(), re.len());
    let n = rows::check_dims(FftKind::Irfft, &re.dims_with(&[m, 2]), n).map_err(invalid(op))?;
    let out = rows::irfft_parts(Some(n), norm, precision, count, m, re.values(), im.values())
        .map_err(invalid(op))?;
    let t: Tensor<D> = from_flex(from_vec(out, re.dims_with(&[n]).into()), &home);
    Ok(to_last(t, dim))
}

/// The real FFT along `dim` (burn-signal's `rfft`, for any length): X_k = sum_j x_j
/// exp(-2 pi i jk/n) for k = 0 ..= n/2, unnormalized, as (real part, imaginary part), each
/// with n/2 + 1 values along `dim`. `n` (default: the signal's length along `dim`, 1 ..= 2^20)
/// truncates or zero-pads the signal first, as numpy's `n=`. The bits of candle-repro's
/// `fft::rfft` (`Norm::Backward`, `Precision::F32`) for the same rows; f32 only.
///
/// ```
/// use burn_tensor::{Device, Tensor};
/// let x = Tensor::<1>::from_floats([1.0, 2.0, 3.0, 4.0], &Device::flex());
/// let (re, im) = burn_repro::rfft(x, 0, None).unwrap();
/// assert_eq!(re.into_data().as_slice::<f32>().unwrap(), &[10.0, -2.0, -2.0]);
/// assert_eq!(im.into_data().as_slice::<f32>().unwrap(), &[0.0, 2.0, 0.0]);
/// ```
pub fn rfft<const D: usize>(
    signal: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
) -> Result<(Tensor<D>, Tensor<D>), Error> {
    rfft_with(signal, dim, n, Norm::Backward, Precision::F32)
}

/// [`rfft`] with numpy's normalization `norm` and the transform's `precision`.
pub fn rfft_with<const D: usize>(
    signal: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
) -> Result<(Tensor<D>, Tensor<D>), Error> {
    complex_op("rfft", FftKind::Rfft, signal, None, dim, n, norm, precision)
}

/// The inverse real FFT along `dim` (burn-signal's `irfft`, numpy's semantics for any
/// length): the m input values along `dim` are a half spectrum; the output has `n` values
/// (default 2 (m - 1)), the real part of the inverse transform of the Hermitian extension
/// (inputs beyond n/2 ignored, missing ones zero, the imaginary parts of X_0 and of the
/// Nyquist term ignored), divided by n. The bits of candle-repro's `fft::irfft`.
///
/// ```
/// use burn_tensor::{Device, Tensor};
/// let re = Tensor::<1>::from_floats([10.0, -2.0, -2.0], &Device::flex());
/// let im = Tensor::<1>::from_floats([0.0, 2.0, 0.0], &Device::flex());
/// let x = burn_repro::irfft(re, im, 0, None).unwrap();
/// assert_eq!(x.into_data().as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
/// ```
pub fn irfft<const D: usize>(
    spectrum_re: Tensor<D>,
    spectrum_im: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
) -> Result<Tensor<D>, Error> {
    irfft_with(
        spectrum_re,
        spectrum_im,
        dim,
        n,
        Norm::Backward,
        Precision::F32,
    )
}

/// [`irfft`] with numpy's normalization `norm` and the transform's `precision`.
pub fn irfft_with<const D: usize>(
    spectrum_re: Tensor<D>,
    spectrum_im: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
) -> Result<Tensor<D>, Error> {
    real_inverse("irfft", spectrum_re, spectrum_im, dim, n, norm, precision)
}

/// The complex FFT along `dim` (burn-signal's `cfft`, for any length), unnormalized, of the
/// signal with parts `signal_re` and `signal_im` (same shape), truncated or zero-padded to
/// `n` values first (default: its length along `dim`). The bits of candle-repro's
/// `fft::fft`.
///
/// ```
/// use burn_tensor::{Device, Tensor};
/// let re = Tensor::<1>::from_floats([1.0, 0.0, 0.0], &Device::flex());
/// let im = Tensor::<1>::from_floats([0.0, 0.0, 0.0], &Device::flex());
/// let (sr, si) = burn_repro::cfft(re, im, 0, None).unwrap(); // a delta: all ones
/// assert_eq!(sr.into_data().as_slice::<f32>().unwrap(), &[1.0, 1.0, 1.0]);
/// assert_eq!(si.into_data().as_slice::<f32>().unwrap(), &[0.0, 0.0, 0.0]);
/// ```
pub fn cfft<const D: usize>(
    signal_re: Tensor<D>,
    signal_im: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
) -> Result<(Tensor<D>, Tensor<D>), Error> {
    cfft_with(signal_re, signal_im, dim, n, Norm::Backward, Precision::F32)
}

/// [`cfft`] with numpy's normalization `norm` and the transform's `precision`.
pub fn cfft_with<const D: usize>(
    signal_re: Tensor<D>,
    signal_im: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
) -> Result<(Tensor<D>, Tensor<D>), Error> {
    complex_op(
        "cfft",
        FftKind::Fft,
        signal_re,
        Some(signal_im),
        dim,
        n,
        norm,
        precision,
    )
}

/// The inverse complex FFT along `dim` (numpy's `ifft`; burn-signal has none): the sign +,
/// divided by n, the input truncated or zero-padded to `n` values first (default: its
/// length along `dim`). The bits of candle-repro's `fft::ifft`.
pub fn icfft<const D: usize>(
    spectrum_re: Tensor<D>,
    spectrum_im: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
) -> Result<(Tensor<D>, Tensor<D>), Error> {
    icfft_with(
        spectrum_re,
        spectrum_im,
        dim,
        n,
        Norm::Backward,
        Precision::F32,
    )
}

/// [`icfft`] with numpy's normalization `norm` and the transform's `precision`.
pub fn icfft_with<const D: usize>(
    spectrum_re: Tensor<D>,
    spectrum_im: Tensor<D>,
    dim: impl AsIndex,
    n: Option<usize>,
    norm: Norm,
    precision: Precision,
) -> Result<(Tensor<D>, Tensor<D>), Error> {
    complex_op(
        "icfft",
        FftKind::Ifft,
        spectrum_re,
        Some(spectrum_im),
        dim,
        n,
        norm,
        precision,
    )
}
