//! Audio front ends with defined bits: the short-time Fourier transform, the power
//! spectrum, mel filter banks and Whisper's log-mel spectrogram (`pcm_to_mel`, a drop-in
//! for `candle_transformers::models::whisper::audio::pcm_to_mel`).
//!
//! # Definitions
//! Every step is an op with a definition, or the crate's FFT (one fixed documented
//! sequence, the same on every device):
//! * [`hann_window`], [`mel_filters`]: each entry the exact real value rounded once to
//!   f32 (host tables, `filters.rs`).
//! * framing ([`stft`]): frame t of the (centered: reflect- or zero-padded by n_fft/2)
//!   signal, times the window: one f32 product per sample.
//! * the transform: [`crate::fft::rfft_with`] of each frame (`Norm::Backward`; f32
//!   precision in [`stft`] as torch, f64 inside and one rounding to f32 in
//!   [`log_mel_spectrogram`], which keeps the quiet bins' energies accurate: against an
//!   f64 reference of the whole recipe its features err 5x less than with the f32 FFT).
//! * [`power_spectrum`]: re^2 + im^2, the exact value rounded once.
//! * the mel projection: [`crate::broadcast_matmul`] of the power spectrum and the filters,
//!   each output the exact dot product rounded once (no order in the definition).
//! * Whisper's end ([`log_mel_spectrogram`]): v = log10(max(m, 1e-10)) with the correctly
//!   rounded [`crate::math::log10`] (1e-10 as f32), M = max v over the example (exact),
//!   out = (max(v, M - 8) + 4) / 4 with M - 8 and the sum rounded once each in f32 (the
//!   division by 4 is exact). This is `whisper.audio.log_mel_spectrogram` step by step
//!   (torch.stft with `center=True`, `pad_mode="reflect"`, the periodic Hann window, the
//!   last frame dropped), with each of its roundings defined.
//!
//! So the features depend on neither the device, the thread count, how the frames are
//! split, nor what else is in the batch. NaN in a signal propagates: every frame that
//! reads it is NaN, so M and the whole example's output are NaN (canonical), as in torch;
//! [`pcm_to_mel`] instead refuses non-finite samples with an error.
//!
//! # Against stock candle's `pcm_to_mel`
//! Stock candle's Whisper front end (whisper.cpp's) differs from Whisper's Python recipe
//! the models were trained with: its frames start at the signal's first sample instead of
//! being centered, it doubles the power of every bin but the first and the last (a
//! one-sided sum), and computes (v/4 + 1) where Whisper computes (v + 4)/4; its window
//! and twiddles come from the platform's `cos` and `sin`. [`pcm_to_mel`] keeps its
//! signature and output shape (n_mels x frames, frames padded as candle pads them) and
//! computes Whisper's recipe on the same zero-padded signal.

/// The CPU half (slices).
pub(crate) mod cpu;
/// The device half: launch plans of `kernels/audio/audio.cu` over [`crate::launch::Device`].
pub mod cuda;
mod filters;

pub use filters::{hann_window, mel_filters};

use crate::fft::{Norm, Precision, rfft_with};
use candle_core::backend::BackendStorage;
use candle_core::{
    CpuStorage, CustomOp1, CustomOp2, DType, Device, Layout, Result, Shape, Tensor, bail,
};

/// How [`stft`] extends a centered signal past its ends (torch.stft's `pad_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// Mirror without repeating the edge sample (`x[-i] = x[i]`): torch's default, Whisper's.
    Reflect,
    /// Zeros.
    Constant,
}

/// The geometry of the frames of one signal (torch.stft's): where each frame's samples
/// come from and how many frames there are. The device half's [`cuda::frames`] takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Framing {
    /// Samples per signal.
    pub len: usize,
    /// Samples per frame.
    pub n_fft: usize,
    /// Samples between frame starts.
    pub hop: usize,
    /// Samples of padding before the signal (n_fft / 2 when centered).
    pub pad: usize,
    /// The padding's values.
    pub mode: PadMode,
    /// Frames computed.
    pub frames: usize,
}

impl Framing {
    /// The frames of torch.stft for these parameters: `center` pads n_fft/2 samples on
    /// both sides in that mode (`None`: no padding); `drop_last` drops the last frame
    /// (Whisper's `stft[..., :-1]`). Errors for n_fft < 2, hop 0, a signal too short for
    /// one frame or for reflect padding.
    pub fn new(
        len: usize,
        n_fft: usize,
        hop: usize,
        center: Option<PadMode>,
        drop_last: bool,
    ) -> Result<Framing> {
        if n_fft < 2 {
            bail!("stft: n_fft must be at least 2, got {n_fft}")
        }
        if hop == 0 {
            bail!("stft: the hop length must be at least 1")
        }
        if n_fft > 1 << 20 || len > 1 << 40 || hop > 1 << 40 {
            bail!("stft: sizes above the supported range (n_fft <= 2^20, length <= 2^40)")
        }
        let (pad, mode) = match center {
            Some(mode) => (n_fft / 2, mode),
            None => (0, PadMode::Constant),
        };
        if mode == PadMode::Reflect && pad >= len {
            bail!(
                "stft: reflect padding of {pad} samples needs a signal longer than that, got {len} samples"
            )
        }
        let padded = len + 2 * pad;
        if padded < n_fft {
            bail!("stft: a signal of {len} samples is shorter than one frame of {n_fft}")
        }
        let frames = 1 + (padded - n_fft) / hop - usize::from(drop_last);
        if frames == 0 {
            bail!("stft: a signal of {len} samples leaves no frame once the last is dropped")
        }
        Ok(Framing {
            len,
            n_fft,
            hop,
            pad,
            mode,
            frames,
        })
    }

    /// The sample at position `i` of the padded signal's coordinates shifted by `pad`
    /// (i = -pad .. len + pad): its index in the signal, or `None` for a zero.
    #[inline(always)]
    pub fn source(&self, i: i64) -> Option<usize> {
        let len = self.len as i64;
        if (0..len).contains(&i) {
            return Some(i as usize);
        }
        match self.mode {
            // |i| <= pad < len: the mirror images stay inside the signal.
            PadMode::Reflect => Some(if i < 0 { -i } else { 2 * (len - 1) - i } as usize),
            PadMode::Constant => None,
        }
    }
}

/// The frames op: (signal, window) -> (..., frames, n_fft).
struct Frames(Framing);

impl CustomOp2 for Frames {
    fn name(&self) -> &'static str {
        "repro-stft-frames"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (CpuStorage::F32(x), CpuStorage::F32(w)) = (s1, s2) else {
            bail!("stft: signal and window must be f32")
        };
        let x = crate::ops::layout::logical_elements(x, l1);
        let w = crate::ops::layout::logical_elements(w, l2);
        let out = cpu::frames(&x, &w, &self.0);
        Ok((CpuStorage::F32(out), frames_shape(l1.shape(), &self.0)))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let out = cuda::frames(&s1.device, (s1, l1), (s2, l2), &self.0)?;
        Ok((out, frames_shape(l1.shape(), &self.0)))
    }
}

/// (..., len) -> (..., frames, n_fft).
fn frames_shape(x: &Shape, g: &Framing) -> Shape {
    let d = x.dims();
    let mut dims = d[..d.len() - 1].to_vec();
    dims.extend([g.frames, g.n_fft]);
    Shape::from(dims)
}

/// The power op: (..., 2) -> (...).
struct Power;

impl CustomOp1 for Power {
    fn name(&self) -> &'static str {
        "repro-power-spectrum"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(z) = s else {
            bail!("power_spectrum: expected f32, got {:?}", s.dtype())
        };
        let z = crate::ops::layout::logical_elements(z, l);
        Ok((CpuStorage::F32(cpu::power(&z)), power_shape(l.shape())))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s: &candle_core::CudaStorage,
        l: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        Ok((cuda::power(&s.device, (s, l))?, power_shape(l.shape())))
    }
}

fn power_shape(z: &Shape) -> Shape {
    let d = z.dims();
    Shape::from(&d[..d.len() - 1])
}

/// Whisper's end of the recipe: (..., frames, n_mels) -> (..., n_mels, frames).
struct LogMelFinish;

impl CustomOp1 for LogMelFinish {
    fn name(&self) -> &'static str {
        "repro-log-mel-finish"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(m) = s else {
            bail!("log_mel_spectrogram: expected f32, got {:?}", s.dtype())
        };
        let (frames, n_mels) = last_two(l.shape());
        let m = crate::ops::layout::logical_elements(m, l);
        let out = cpu::log_mel_finish(&m, frames, n_mels);
        Ok((CpuStorage::F32(out), transposed_shape(l.shape())))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s: &candle_core::CudaStorage,
        l: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let out = cuda::log_mel_finish(&s.device, (s, l))?;
        Ok((out, transposed_shape(l.shape())))
    }
}

fn last_two(s: &Shape) -> (usize, usize) {
    let d = s.dims();
    (d[d.len() - 2], d[d.len() - 1])
}

fn transposed_shape(s: &Shape) -> Shape {
    let mut d = s.dims().to_vec();
    let r = d.len();
    d.swap(r - 2, r - 1);
    Shape::from(d)
}

fn check_f32(t: &Tensor, what: &str, op: &str) -> Result<()> {
    if t.dtype() != DType::F32 {
        bail!("{op}: {what} must be f32, got {:?}", t.dtype())
    }
    Ok(())
}

fn check_same_device(a: &Tensor, b: &Tensor, op: &str) -> Result<()> {
    if !a.device().same_device(b.device()) {
        bail!(
            "{op}: tensors on different devices ({:?} and {:?})",
            a.device().location(),
            b.device().location()
        )
    }
    Ok(())
}

/// The windowed frames (..., frames, n_fft) of signals (..., len).
fn windowed_frames(
    x: &Tensor,
    window: &Tensor,
    (n_fft, hop): (usize, usize),
    center: Option<PadMode>,
    drop_last: bool,
    op: &str,
) -> Result<Tensor> {
    check_f32(x, "the signal", op)?;
    check_f32(window, "the window", op)?;
    check_same_device(x, window, op)?;
    if x.rank() == 0 {
        bail!("{op}: the signal must have at least one dimension (..., samples)")
    }
    if window.dims() != [n_fft] {
        bail!(
            "{op}: the window must have shape [{n_fft}] (n_fft), got {:?}",
            window.dims()
        )
    }
    let len = *x.dims().last().expect("rank >= 1");
    let g = Framing::new(len, n_fft, hop, center, drop_last)?;
    if x.elem_count() == 0 {
        return Tensor::zeros(frames_shape(x.shape(), &g), DType::F32, x.device());
    }
    x.apply_op2_no_bwd(window, &Frames(g))
}

/// The short-time Fourier transform, as `torch.stft(x, n_fft, hop_length=hop,
/// window=window, center=center, pad_mode=pad_mode, onesided=True, return_complex=True)`:
/// x (..., len) f32, window (n_fft) f32 -> (..., n_fft/2 + 1, frames, 2), the last dimension
/// (re, im). Frame t holds samples t hop .. t hop + n_fft of the signal, padded by n_fft/2
/// on both sides when `center`; each sample is multiplied by its window value (one f32
/// rounding) and the frame transformed by [`crate::fft::rfft`]. So the bits are the same
/// on every device and thread count, and a frame's spectrum does not depend on the other
/// frames or signals of the batch.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::audio::{PadMode, hann_window, stft};
/// let x = Tensor::arange(0f32, 64., &Device::Cpu)?.reshape((2, 32))?;
/// let w = Tensor::new(hann_window(16, true)?, &Device::Cpu)?;
/// let s = stft(&x, 16, 4, &w, true, PadMode::Reflect)?;
/// assert_eq!(s.dims(), [2, 9, 9, 2]); // 9 bins, 1 + 32/4 frames, (re, im)
/// // Each example is transformed alone: the second row's bits do not depend on the first.
/// let alone = stft(&x.get(1)?, 16, 4, &w, true, PadMode::Reflect)?;
/// assert_eq!(alone.flatten_all()?.to_vec1::<f32>()?, s.get(1)?.flatten_all()?.to_vec1::<f32>()?);
/// # Ok(()) }
/// ```
pub fn stft(
    x: &Tensor,
    n_fft: usize,
    hop: usize,
    window: &Tensor,
    center: bool,
    pad_mode: PadMode,
) -> Result<Tensor> {
    stft_with(x, n_fft, hop, window, center, pad_mode, Precision::F32)
}

/// [`stft`] with the FFT at a chosen [`Precision`] (`F64Internal`: f64 inside each frame's
/// transform, rounded once to f32 at the end, what [`log_mel_spectrogram`] uses).
pub fn stft_with(
    x: &Tensor,
    n_fft: usize,
    hop: usize,
    window: &Tensor,
    center: bool,
    pad_mode: PadMode,
    precision: Precision,
) -> Result<Tensor> {
    let center = center.then_some(pad_mode);
    let frames = windowed_frames(x, window, (n_fft, hop), center, false, "stft")?;
    let spec = rfft_with(&frames, Norm::Backward, precision)?;
    // (..., frames, bins, 2) -> (..., bins, frames, 2), torch's order.
    let r = spec.rank();
    spec.transpose(r - 3, r - 2)?.contiguous()
}

/// |z|^2 of complex values (..., 2) f32 -> (...): re^2 + im^2, the exact value rounded
/// once (NaN canonical).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// // (1 + 2^-23)^2 + (2^-12)^2 = 1 + 2^-22 + 2^-24 + 2^-46: just above 1 + 2.5 ulp, so
/// // 1 + 3 ulp. Squaring and adding in f32 rounds the first square to 1 + 2^-22 and then
/// // meets a tie (1 + 2.5 ulp), which goes to even: 1 + 2 ulp.
/// let t = 2f32.powi(-12);
/// let z = Tensor::new(&[[3f32, 4.], [1. + 2f32.powi(-23), t]], &Device::Cpu)?;
/// let p = candle_repro::audio::power_spectrum(&z)?.to_vec1::<f32>()?;
/// assert_eq!(p[0], 25.0);
/// assert_eq!(p[1], 1.0 + 3.0 * 2f32.powi(-23));
/// let (a, b) = (1f32 + 2f32.powi(-23), t);
/// assert_eq!(a * a + b * b, 1.0 + 2.0 * 2f32.powi(-23));
/// # Ok(()) }
/// ```
pub fn power_spectrum(z: &Tensor) -> Result<Tensor> {
    check_f32(z, "the spectrum", "power_spectrum")?;
    if z.dims().last() != Some(&2) {
        bail!(
            "power_spectrum: expected (..., 2) complex values, got {:?}",
            z.dims()
        )
    }
    if z.elem_count() == 0 {
        return Tensor::zeros(power_shape(z.shape()), DType::F32, z.device());
    }
    z.apply_op1_no_bwd(&Power)
}

/// Whisper's log-mel spectrogram, `whisper.audio.log_mel_spectrogram(x, n_mels)` with its
/// `n_fft` and `hop` (Whisper: 400 and 160 at 16 kHz): signals (..., len) f32 and filters
/// (n_mels, n_fft/2 + 1) f32 (Whisper's `mel_filters.npz`, or [`mel_filters`]) ->
/// (..., n_mels, len / hop) (for even n_fft). The centered STFT with the periodic Hann
/// window and reflect padding (its FFT at [`Precision::F64Internal`]), the last frame dropped, the power spectrum, the mel
/// projection, then per example log10(max(m, 1e-10)), clamped to (its maximum - 8) and
/// mapped by (v + 4) / 4. Every step is defined (module header), so the features have the
/// same bits on every device, thread count and batch. Signals must be longer than n_fft/2
/// (reflect padding).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::audio::{log_mel_spectrogram, mel_filters};
/// let sr = 16000;
/// let t = Tensor::arange(0u32, 3200, &Device::Cpu)?.to_dtype(candle_core::DType::F32)?;
/// let x = candle_repro::sin(&(t * (2.0 * std::f64::consts::PI * 440.0 / sr as f64))?)?; // 0.2 s of A4
/// let filters = Tensor::from_vec(mel_filters(sr, 400, 80)?, (80, 201), &Device::Cpu)?;
/// let mel = log_mel_spectrogram(&x, &filters, 400, 160)?;
/// assert_eq!(mel.dims(), [80, 20]);
/// // The largest value is (M + 4) / 4 and nothing is below (M - 8 + 4) / 4.
/// let v = mel.flatten_all()?.to_vec1::<f32>()?;
/// let top = v.iter().cloned().fold(f32::MIN, f32::max);
/// assert!(v.iter().all(|&x| x >= top - 2.0));
/// # Ok(()) }
/// ```
pub fn log_mel_spectrogram(
    samples: &Tensor,
    filters: &Tensor,
    n_fft: usize,
    hop: usize,
) -> Result<Tensor> {
    const OP: &str = "log_mel_spectrogram";
    check_f32(filters, "the filters", OP)?;
    check_same_device(samples, filters, OP)?;
    let bins = n_fft / 2 + 1;
    if filters.rank() != 2 || filters.dim(1)? != bins || filters.dim(0)? == 0 {
        bail!(
            "{OP}: the filters must have shape (n_mels, n_fft/2 + 1) = (n_mels, {bins}), got {:?}",
            filters.dims()
        )
    }
    let window = Tensor::from_vec(hann_window(n_fft, true)?, n_fft, samples.device())?;
    let frames = windowed_frames(
        samples,
        &window,
        (n_fft, hop),
        Some(PadMode::Reflect),
        true,
        OP,
    )?;
    let power = power_spectrum(&rfft_with(&frames, Norm::Backward, Precision::F64Internal)?)?;
    let mel = crate::broadcast_matmul(&power, &filters.t()?)?;
    if mel.elem_count() == 0 {
        return Tensor::zeros(transposed_shape(mel.shape()), DType::F32, mel.device());
    }
    mel.apply_op1_no_bwd(&LogMelFinish)
}

/// Whisper's log-mel features of 16 kHz samples: the signature and output of
/// `candle_transformers::models::whisper::audio::pcm_to_mel` (n_mels x frames, row-major,
/// with `cfg.num_mel_bins` mels and candle's frame count: len / 160 rounded up to a
/// multiple of 1500, plus 1500), computed as [`log_mel_spectrogram`] of the samples padded
/// with zeros to 160 samples per frame, which is Whisper's Python recipe on that padded
/// signal (see the module header for how stock candle differs). `filters` is the
/// (n_mels, 201) table (Whisper's `mel_filters.npz`, as candle's example loads it, or
/// [`mel_filters`]`(16000, 400, n_mels)`). Runs on the CPU's threads; the bits do not
/// depend on their number. Non-finite samples are an error.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// // Whisper tiny's configuration (normally read from its config.json).
/// let cfg = candle_transformers::models::whisper::Config {
///     num_mel_bins: 80, max_source_positions: 1500, d_model: 384,
///     encoder_attention_heads: 6, encoder_layers: 4, vocab_size: 51865,
///     max_target_positions: 448, decoder_attention_heads: 6, decoder_layers: 4,
///     suppress_tokens: vec![],
/// };
/// let filters = candle_repro::audio::mel_filters(16000, 400, 80)?;
/// let pcm: Vec<f32> = (0..16000).map(|i| ((i % 80) as f32 / 40.0 - 1.0) * 0.1).collect();
/// let mel = candle_repro::audio::pcm_to_mel(&cfg, &pcm, &filters)?;
/// assert_eq!(mel.len(), 80 * 3000); // 100 frames, padded to 1500, plus 1500
/// # Ok(()) }
/// ```
#[cfg(feature = "whisper")]
pub fn pcm_to_mel(
    cfg: &candle_transformers::models::whisper::Config,
    samples: &[f32],
    filters: &[f32],
) -> Result<Vec<f32>> {
    pcm_to_mel_bins(cfg.num_mel_bins, samples, filters)
}

/// [`pcm_to_mel`] with the number of mels given directly (no `Config` needed).
pub fn pcm_to_mel_bins(n_mels: usize, samples: &[f32], filters: &[f32]) -> Result<Vec<f32>> {
    const N_FFT: usize = 400;
    const HOP: usize = 160;
    const CHUNK_FRAMES: usize = 1500;
    let bins = N_FFT / 2 + 1;
    if n_mels == 0 || filters.len() != n_mels * bins {
        bail!(
            "pcm_to_mel: the filters must hold n_mels x {bins} = {} values, got {}",
            n_mels * bins,
            filters.len()
        )
    }
    if let Some(i) = samples.iter().position(|s| !s.is_finite()) {
        bail!("pcm_to_mel: sample {i} is not finite ({})", samples[i])
    }
    // candle's frame count: len / hop, up to a multiple of 1500, plus 1500.
    let frames = (samples.len() / HOP).div_ceil(CHUNK_FRAMES) * CHUNK_FRAMES + CHUNK_FRAMES;
    let mut padded = Vec::with_capacity(frames * HOP);
    padded.extend_from_slice(samples);
    padded.resize(frames * HOP, 0.0);
    let x = Tensor::from_vec(padded, frames * HOP, &Device::Cpu)?;
    let f = Tensor::from_slice(filters, (n_mels, bins), &Device::Cpu)?;
    log_mel_spectrogram(&x, &f, N_FFT, HOP)?
        .flatten_all()?
        .to_vec1()
}

/// The undecided entries of [`hann_window`] and [`mel_filters`] (for the tests: every usual
/// configuration has none). Not part of the API.
#[doc(hidden)]
pub fn tables_undecided(sample_rate: usize, n_fft: usize, n_mels: usize) -> Result<(usize, usize)> {
    Ok((
        filters::hann_window_checked(n_fft, true)?.1,
        filters::mel_filters_checked(sample_rate, n_fft, n_mels)?.1,
    ))
}
