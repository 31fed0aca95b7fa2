//! candle-repro: candle ops whose output bits are defined mathematically, so the same
//! checkpoint and input give the same logits on every device, thread count and batch.
//!
//! Where to start:
//! * tensor ops, drop-ins for candle's: [`matmul()`](fn@matmul), [`broadcast_matmul`], [`nn::Linear`],
//!   [`nn::RmsNorm`], [`nn::LayerNorm`], [`softmax_last_dim`], [`exp`], [`silu`] and the
//!   other elementwise functions, [`add`], [`to_f8e4m3`], [`rope`] and [`fft`];
//! * correctly rounded scalar and slice math: [`math`];
//! * products with weights kept in their GGUF blocks: [`quantized::QMatMul`],
//!   [`quantized::QLinear`], [`quantized::QEmbedding`] (every block type);
//! * whole models: [`models::llama::ModelWeights`] (its module has a runnable example of
//!   prefill and decode giving the same bits) and [`models::gemma3::ModelWeights`];
//! * reproducible sampling: [`sampling::LogitsProcessor`];
//! * CUDA kernels for every op under the feature `cuda`, written to the same definitions.
//!
//! The rest of this page is the contract (also `docs/CONTRACT.md` in the repository).
//!
#![doc = include_str!("../docs/CONTRACT.md")]
#![warn(missing_docs)]

pub mod arith;
pub mod audio;
pub mod elementwise;
pub mod fft;
pub mod launch;
/// The correctly rounded elementwise math and the exact sums, from the framework-free core
/// crate `repro-core` (the same code any other adapter of the core runs).
pub use repro_core::math;
pub mod matmul;
pub mod models;
pub mod nn;
pub mod norm;
pub mod ops;
pub mod quantized;
pub mod rope;
pub mod sampling;
pub mod softmax;

pub use arith::add;
pub use elementwise::{
    UnaryFn, cos, erf, exp, expm1, gelu, gelu_erf, log, log1p, log10, sigmoid, silu, sin, softplus,
    softplus_with, softplus_with_bwd, tanh, unary, unary_bwd,
};
pub use math::f8::Overflow;
pub use matmul::{broadcast_matmul, matmul, matmul_bias, matmul_to};
pub use ops::cast::to_f8e4m3;
pub use softmax::{log_softmax_last_dim, softmax_last_dim};
