//! The constant tables of the front end, computed on the host: the Hann window and the
//! Slaney-style mel filter bank, each entry the exact real value rounded once to f32.
//!
//! Both are evaluated in double-double arithmetic (the crate's `sincos` of a fraction of a
//! turn, `log_dd` and `exp_dd`, relative error below 2^-100 each) and rounded to f32 by the
//! rounding test with a proven absolute error bound (below). Where the test decides, the
//! entry is the correctly rounded exact value; the test is run on every entry, and the
//! tests check it decides every entry of the usual configurations (n_fft up to 4096;
//! Whisper's 16 kHz / 400 / 80 and 128 mels; 22.05 kHz and 44.1 kHz banks). An undecided
//! entry (none known) takes the double-double value rounded to odd and then to f32: still
//! one fixed sequence of basic operations, so the tables have the same bits everywhere.

use crate::math::dd::{DD, round_odd};
use crate::math::exp::exp_dd;
use crate::math::log::log_dd;
use crate::math::round::round_within;
use crate::math::trig::sincos_dd_of_turns;
use candle_core::{Result, bail};

/// A double-double value rounded to f32 under an absolute error bound: the correctly
/// rounded value where the rounding test decides, else the value rounded to odd and then
/// to f32. The flag says whether the test decided.
fn round_dd(v: DD, err: f64) -> (f32, bool) {
    // hi + lo is within ulp(hi)/2 of the double-double: widen by it (|lo| <= that).
    match round_within::<f32>(v.hi, err + v.lo.abs()) {
        Some(r) => (r, true),
        None => (round_odd(v) as f32, false),
    }
}

/// The periodic Hann window of length n (torch.hann_window's default, Whisper's window):
/// `w[j] = 0.5 - 0.5 cos(2 pi j / n) = sin^2(pi j / n)`, each rounded once to f32.
/// `periodic = false` gives the symmetric window sin^2(pi j / (n - 1)) (n = 1: `[1]`).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// let w = candle_repro::audio::hann_window(4, true)?;
/// assert_eq!(w, [0.0, 0.5, 1.0, 0.5]);
/// let w = candle_repro::audio::hann_window(400, true)?;
/// assert_eq!(w[100], 0.5); // sin^2(pi / 4), exactly
/// # Ok(()) }
/// ```
pub fn hann_window(n: usize, periodic: bool) -> Result<Vec<f32>> {
    Ok(hann_window_checked(n, periodic)?.0)
}

/// [`hann_window`] and the number of entries the rounding test left undecided.
pub(crate) fn hann_window_checked(n: usize, periodic: bool) -> Result<(Vec<f32>, usize)> {
    if n == 0 {
        bail!("hann_window: the length must be at least 1")
    }
    if n > 1 << 30 {
        bail!("hann_window: length {n} is above 2^30")
    }
    if !periodic && n == 1 {
        return Ok((vec![1.0], 0));
    }
    let period = if periodic { n } else { n - 1 } as u64;
    let mut undecided = 0;
    let w = (0..n as u64)
        .map(|j| {
            // sin(pi j / period) = sin(2 pi j / (2 period)); its square in double-double.
            let (s, _) = sincos_dd_of_turns(j, 2 * period);
            let sq = s.mul(s);
            // sincos: 2^-100 relative; the square doubles it and adds its own 2^-104.
            let (r, decided) = round_dd(sq, sq.hi.abs() * f64::from_bits(0x39C0_0000_0000_0000)); // 2^-99
            undecided += usize::from(!decided);
            r
        })
        .collect();
    Ok((w, undecided))
}

/// ln(6.4) / 27, the step of the Slaney mel scale's logarithmic part (Hz above 1000).
fn log_step() -> DD {
    log_dd(DD::from_f64(32.0).div(DD::from_f64(5.0))).div(DD::from_f64(27.0))
}

/// Slaney's mel of a frequency in Hz (librosa's `hz_to_mel`, htk=False): f / (200/3) below
/// 1000 Hz, 15 + ln(f / 1000) / step above.
fn hz_to_mel(f: DD) -> DD {
    if f.hi < 1000.0 {
        f.mul_f64(3.0).div(DD::from_f64(200.0))
    } else {
        log_dd(f.div(DD::from_f64(1000.0)))
            .div(log_step())
            .add_f64(15.0)
    }
}

/// The inverse: (200/3) m below 15 mels, 1000 e^(step (m - 15)) above.
fn mel_to_hz(m: DD) -> DD {
    if m.hi < 15.0 {
        m.mul_f64(200.0).div(DD::from_f64(3.0))
    } else {
        exp_dd(m.add_f64(-15.0).mul(log_step())).mul_f64(1000.0)
    }
}

/// The mel filter bank of Whisper and librosa (`librosa.filters.mel(sr=sample_rate,
/// n_fft=n_fft, n_mels=n_mels)`: Slaney's mel scale, fmin 0, fmax sample_rate / 2,
/// Slaney's area normalization), as the `n_mels` x (n_fft/2 + 1) row-major table that
/// [`pcm_to_mel`](super::pcm_to_mel) and [`log_mel_spectrogram`](super::log_mel_spectrogram)
/// take. With f_k = k sr / n_fft and m_0 < ... < m_{n_mels+1} the frequencies (Hz) of
/// n_mels + 2 points equally spaced in mels from 0 to mel(sr/2):
///
/// ```text
/// w[i][k] = max(0, min((f_k - m_i) / (m_{i+1} - m_i), (m_{i+2} - f_k) / (m_{i+2} - m_{i+1})))
///           * 2 / (m_{i+2} - m_i)
/// ```
///
/// the exact real value rounded once to f32 (see the module header for how that is
/// decided). librosa evaluates the same formula in f64 steps and rounds the result to f32;
/// Whisper's `mel_filters.npz` holds librosa's tables for 80 and 128 mels at 16 kHz.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// let f = candle_repro::audio::mel_filters(16000, 400, 80)?;
/// assert_eq!(f.len(), 80 * 201);
/// // The first triangle peaks at its centre bin: 2 / (m_2 - m_0) there.
/// assert!(f[..201].iter().all(|&w| w >= 0.0));
/// # Ok(()) }
/// ```
pub fn mel_filters(sample_rate: usize, n_fft: usize, n_mels: usize) -> Result<Vec<f32>> {
    Ok(mel_filters_checked(sample_rate, n_fft, n_mels)?.0)
}

/// [`mel_filters`] and the number of entries the rounding test left undecided.
pub(crate) fn mel_filters_checked(
    sample_rate: usize,
    n_fft: usize,
    n_mels: usize,
) -> Result<(Vec<f32>, usize)> {
    if sample_rate == 0 || sample_rate > 1 << 24 {
        bail!("mel_filters: sample rate {sample_rate} outside 1..=2^24")
    }
    if !(2..=1 << 20).contains(&n_fft) {
        bail!("mel_filters: n_fft {n_fft} outside 2..=2^20")
    }
    if n_mels == 0 || n_mels > 1 << 12 {
        bail!("mel_filters: n_mels {n_mels} outside 1..=4096")
    }
    let bins = n_fft / 2 + 1;
    let top = hz_to_mel(DD::from_f64(sample_rate as f64 * 0.5));
    // m_i in Hz, i = 0..n_mels + 2; m_0 = 0 exactly.
    // The end points are exact: m_0 = 0 and m_{n_mels+1} = mel_to_hz(mel(sr/2)) = sr/2
    // (so the last filter is exactly 0 at the Nyquist bin, not a rounding residue).
    let hz: Vec<DD> = (0..n_mels + 2)
        .map(|i| match i {
            0 => DD::from_f64(0.0),
            i if i == n_mels + 1 => DD::from_f64(sample_rate as f64 * 0.5),
            i => mel_to_hz(top.mul_f64(i as f64).div(DD::from_f64((n_mels + 1) as f64))),
        })
        .collect();
    let mut undecided = 0;
    let mut out = Vec::with_capacity(n_mels * bins);
    for i in 0..n_mels {
        let (lo, mid, hi) = (hz[i], hz[i + 1], hz[i + 2]);
        let (d1, d2, span) = (mid.sub(lo), hi.sub(mid), hi.sub(lo));
        let norm = DD::from_f64(2.0).div(span);
        for k in 0..bins {
            // f_k = k sr / n_fft: the product is exact (below 2^43), the division errs by
            // at most 2^-104 relative.
            let f = DD::from_f64(k as f64 * sample_rate as f64).div(DD::from_f64(n_fft as f64));
            let up = f.sub(lo).div(d1);
            let down = hi.sub(f).div(d2);
            let tri = if up.hi < down.hi { up } else { down };
            if tri.hi <= 0.0 {
                out.push(0.0);
                continue;
            }
            let w = tri.mul(norm);
            // Error bound. Each m_i has relative error below 2^-96 (log, exp, the divisions
            // and products, each below 2^-100 relative, a dozen of them with the mel
            // scale's derivative near 1 in relative terms), f_k below 2^-104. So a
            // numerator (f - m_i) errs by at most 2^-95 (f + m_{i+2}), a difference
            // m_{i+1} - m_i by at most 2^-95 m_{i+2} (relative to itself: 2^-95 m_{i+2} /
            // d); the ratio then by (2^-95 (f + m_{i+2}) + |tri| 2^-95 m_{i+2}) / d, and the
            // normalization adds 2^-94 (1 + m_{i+2} / span) relative. Bounded generously by
            // 2^-90 ((f + m_{i+2}) / min(d1, d2) + |tri|) (1 + m_{i+2} / span) |norm|; the
            // selection of min() and of the clamp at 0 compares values whose errors are
            // below this bound, so a wrong choice changes the result by less than it.
            let dmin = d1.hi.min(d2.hi);
            let scale = (f.hi + hi.hi) / dmin + tri.hi;
            let err = f64::from_bits(0x3A50_0000_0000_0000) // 2^-90
                * scale
                * (1.0 + hi.hi / span.hi)
                * norm.hi.abs();
            let (r, decided) = round_dd(w, err);
            undecided += usize::from(!decided);
            out.push(r);
        }
    }
    Ok((out, undecided))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hann_is_decided_and_symmetric() {
        for n in [1usize, 2, 3, 4, 7, 400, 512, 1024] {
            let (w, undecided) = hann_window_checked(n, true).unwrap();
            assert_eq!(undecided, 0, "n = {n}");
            for j in 1..n {
                assert_eq!(w[j].to_bits(), w[n - j].to_bits(), "n = {n}, j = {j}");
            }
        }
        assert_eq!(hann_window(3, false).unwrap(), [0.0, 1.0, 0.0]);
        assert!(hann_window(0, true).is_err());
    }

    #[test]
    fn whisper_banks_are_decided() {
        for (sr, n_fft, n_mels) in [(16000, 400, 80), (16000, 400, 128), (22050, 2048, 128)] {
            let (w, undecided) = mel_filters_checked(sr, n_fft, n_mels).unwrap();
            assert_eq!(undecided, 0, "{sr} {n_fft} {n_mels}");
            assert!(w.iter().all(|v| v.is_finite() && *v >= 0.0));
        }
    }
}
