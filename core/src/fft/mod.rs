//! A deterministic complex FFT over plain slices: the same output bits on every CPU and in
//! candle-repro's CUDA mirror.
//!
//! * [`rows::transform`]: numpy's `fft`, `ifft`, `rfft` and `irfft` over
//!   the rows of a row-major buffer, with numpy's [`Norm`]; the CPU op of both adapters
//!   (candle-repro's `fft::fft`, ..., burn-repro's `rfft`, ...).
//! * [`FftPlan`]: a plan for length n at a [`Precision`], transforming
//!   `num_complex::Complex32` buffers (any number of rows of n) in place or out of place;
//!   [`plan::cached_plan`] shares one plan per (n, precision) in the process.
//! * [`kind`](mod@kind): the transform kinds and numpy's [`Norm`] conventions, shared by
//!   the adapters and the device half.
//!
//! One file per algorithm: [`dft_gemm`](mod@dft_gemm) (small n as a matrix product),
//! [`stockham`](mod@stockham) (autosort stages of radix 8/4/2, 7, 5 and 3 for every
//! n = 2^a 3^b 5^c 7^d), [`bluestein`](mod@bluestein) (every other n), [`ozaki`](mod@ozaki)
//! (exact bf16 slice products for tensor cores); [`butterflies`](mod@butterflies) holds the
//! operation DAGs both devices evaluate, [`twiddles`](mod@twiddles) the correctly rounded
//! twiddle tables, `lanes` the vector types the stages run on, and [`plan`](mod@plan) the
//! planner, a pure function of (n, precision). [`device_plan`](mod@device_plan) flattens a
//! plan for the CUDA kernels (candle-repro's `fft::cuda` launches them).

pub mod bluestein;
pub mod butterflies;
pub mod device_plan;
pub mod dft_gemm;
pub mod kind;
#[doc(hidden)]
pub mod lanes;
pub mod ozaki;
pub mod plan;
pub mod rows;
#[doc(hidden)]
pub mod scalar;
pub mod stockham;
pub mod twiddles;

pub use kind::Norm;
pub use plan::{DFT_GEMM_MAX, DFT_GEMM_MAX_POW2, FftPlan, MAX_LEN, Precision};
