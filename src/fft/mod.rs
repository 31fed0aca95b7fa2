//! A deterministic complex FFT: the same output bits on every CPU and in the CUDA mirror.
//!
//! * [`FftPlan`]: a plan for length n at a [`Precision`], transforming
//!   `num_complex::Complex32` buffers (any number of rows of n) in place or out of place.
//! * Candle ops [`fft`], [`ifft`], [`rfft`], [`irfft`] on f32 tensors whose last
//!   dimension is 2 (re, im), transforming the second-to-last dimension, with numpy's
//!   [`Norm`] conventions ([`ops`](mod@ops); also reachable as `crate::ops::fft`; the
//!   transform kinds and normalizations in [`kind`](mod@kind), shared with the device half).
//!
//! The plans, the algorithms (one file per algorithm), the butterflies and the twiddle
//! tables are the core's ([`repro_core::fft`], re-exported here module by module); this
//! module holds [`FftPlan`] with candle's error type ([`plan`](mod@plan)), the candle ops
//! ([`ops`](mod@ops)) and the device half: [`cuda`](mod@cuda) (launch plans of
//! `kernels/fft/fft.cu`) over [`device_plan`](mod@device_plan) (a plan flattened for the
//! kernels).

pub use repro_core::fft::{
    bluestein, butterflies, device_plan, dft_gemm, kind, ozaki, stockham, twiddles,
};
#[allow(unused_imports)]
pub(crate) use repro_core::fft::{lanes, scalar};
/// The device half: launch plans of `kernels/fft/fft.cu` over [`crate::launch::Device`].
pub mod cuda;
pub mod ops;
pub mod plan;

pub use kind::Norm;
pub use ops::{fft, fft_with, ifft, ifft_with, irfft, irfft_with, rfft, rfft_with};
pub use plan::{DFT_GEMM_MAX, DFT_GEMM_MAX_POW2, FftPlan, MAX_LEN, Precision};
