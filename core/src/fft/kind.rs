//! What an FFT op computes: the transform ([`FftKind`]) and numpy's normalization
//! ([`Norm`], applied as [`norm_divisor`]). Shared by the CPU rows (`rows.rs`) and the device
//! half (`cuda.rs`), so neither half imports the other.

/// numpy's normalization modes (`norm=` of `numpy.fft`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Norm {
    /// Forward unscaled, inverse divided by n (numpy's default).
    #[default]
    Backward,
    /// Both directions divided by sqrt(n).
    Ortho,
    /// Forward divided by n, inverse unscaled.
    Forward,
}

/// Which transform an op computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftKind {
    /// Complex -> complex, sign -.
    Fft,
    /// Complex -> complex, sign +.
    Ifft,
    /// Real (..., n) -> complex (..., n/2 + 1, 2).
    Rfft,
    /// Complex (..., m, 2) -> real (..., n), Hermitian input.
    Irfft,
}

impl FftKind {
    /// The numpy name of the transform (`"fft"`, `"ifft"`, `"rfft"`, `"irfft"`), used in
    /// error messages.
    pub fn name(self) -> &'static str {
        match self {
            FftKind::Fft => "fft",
            FftKind::Ifft => "ifft",
            FftKind::Rfft => "rfft",
            FftKind::Irfft => "irfft",
        }
    }

    /// Whether the transform has the + sign.
    pub fn is_inverse(self) -> bool {
        matches!(self, FftKind::Ifft | FftKind::Irfft)
    }
}

/// The divisor of the outputs for a transform of length n in direction `kind` under
/// `norm`, or `None` when the outputs are left unscaled. The outputs are `y / divisor`
/// (IEEE division, see the module documentation); a CUDA path must do the same.
///
/// ```rust
/// use repro_core::fft::Norm;
/// use repro_core::fft::kind::{FftKind, norm_divisor};
///
/// assert_eq!(norm_divisor(FftKind::Fft, Norm::Backward, 8), None);
/// assert_eq!(norm_divisor(FftKind::Irfft, Norm::Backward, 8), Some(8.0));
/// assert_eq!(norm_divisor(FftKind::Ifft, Norm::Ortho, 16), Some(4.0));
/// ```
pub fn norm_divisor(kind: FftKind, norm: Norm, n: usize) -> Option<f32> {
    let nf = n as f32; // exact: n <= MAX_LEN = 2^20
    match (norm, kind.is_inverse()) {
        (Norm::Backward, false) | (Norm::Forward, true) => None,
        (Norm::Backward, true) | (Norm::Forward, false) => Some(nf),
        (Norm::Ortho, _) => Some(nf.sqrt()),
    }
}
