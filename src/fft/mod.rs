//! A deterministic complex FFT: the same output bits on every CPU and in the CUDA mirror.
//!
//! * [`FftPlan`]: a plan for length n at a [`Precision`], transforming
//!   `num_complex::Complex32` buffers (any number of rows of n) in place or out of place.
//! * Candle ops [`fft`], [`ifft`], [`rfft`], [`irfft`] on f32 tensors whose last
//!   dimension is 2 (re, im), transforming the second-to-last dimension, with numpy's
//!   [`Norm`] conventions ([`ops`](mod@ops); also reachable as `crate::ops::fft`; the
//!   transform kinds and normalizations in [`kind`](mod@kind), shared with the device half).
//!
//! One file per algorithm: [`dft_gemm`](mod@dft_gemm) (small n as a matrix product),
//! [`stockham`](mod@stockham) (autosort stages of radix 8/4/2, 7, 5 and 3 for every
//! n = 2^a 3^b 5^c 7^d), [`bluestein`](mod@bluestein) (every other n), [`ozaki`](mod@ozaki) (exact bf16 slice products for tensor cores);
//! [`butterflies`](mod@butterflies) holds the operation DAGs both devices evaluate,
//! [`twiddles`](mod@twiddles) the correctly rounded twiddle tables, `lanes` the vector
//! types the stages run on, and [`plan`](mod@plan) the planner, a pure function of
//! (n, precision). The device half: [`cuda`](mod@cuda) (launch plans of
//! `kernels/fft/fft.cu`) over [`device_plan`](mod@device_plan) (a plan flattened for the
//! kernels).

pub mod bluestein;
pub mod butterflies;
/// The device half: launch plans of `kernels/fft/fft.cu` over [`crate::launch::Device`].
pub mod cuda;
pub mod device_plan;
pub mod dft_gemm;
pub mod kind;
pub(crate) mod lanes;
pub mod ops;
pub mod ozaki;
pub mod plan;
pub(crate) mod scalar;
pub mod stockham;
pub mod twiddles;

pub use kind::Norm;
pub use ops::{fft, fft_with, ifft, ifft_with, irfft, irfft_with, rfft, rfft_with};
pub use plan::{DFT_GEMM_MAX, DFT_GEMM_MAX_POW2, FftPlan, MAX_LEN, Precision};
