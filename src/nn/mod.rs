//! Layers in the shape of `candle_nn`'s, built on the crate's correctly rounded ops:
//! `Linear` (`crate::matmul`), `RmsNorm` and `LayerNorm` (`crate::norm`).

mod linear;

pub use crate::norm::{LayerNorm, RmsNorm, layer_norm, layer_norm_no_bias, rms_norm};
pub use linear::{Linear, linear, linear_b, linear_no_bias};
