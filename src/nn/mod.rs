//! Layers in the shape of `candle_nn`'s, built on the crate's correctly rounded ops.

mod linear;

pub use linear::{Linear, linear, linear_b, linear_no_bias};
