//! candle-repro: candle ops whose output bits are the same on every device.
//!
//! * [`math`]: correctly rounded scalar and slice math (exp, log, sin, cos, tanh, sigmoid,
//!   silu, softplus, expm1, log1p) for f32, bf16 and f16.
//! * Elementwise candle ops over it ([`exp`], [`log`], [`sin`], [`cos`], [`tanh`],
//!   [`sigmoid`], [`silu`], [`softplus`], [`softplus_with`]): CPU kernels here, CUDA kernels
//!   under the `cuda` feature, the same bits on both.

pub mod fft;
pub mod math;
pub mod matmul;
pub mod models;
pub mod nn;
pub mod norm;
pub mod ops;
pub mod rope;
pub(crate) mod vector;

/// CUDA launches of the kernels under `kernels/` (feature `cuda`).
#[cfg(feature = "cuda")]
pub mod cuda;

pub use math::f8::Overflow;
pub use matmul::{broadcast_matmul, matmul, matmul_bias, matmul_to};
pub use ops::arith::add;
pub use ops::cast::to_f8e4m3;
pub use ops::elementwise::{
    UnaryFn, cos, exp, log, sigmoid, silu, sin, softplus, softplus_with, tanh, unary,
};
pub use ops::softmax::{log_softmax_last_dim, softmax_last_dim};
