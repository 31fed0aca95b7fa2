//! candle-repro: candle ops whose output bits are the same on every device.
//!
//! * [`math`]: correctly rounded scalar and slice math (exp, log, sin, cos, tanh, sigmoid,
//!   silu, softplus, expm1, log1p) for f32, bf16 and f16.

pub mod math;
