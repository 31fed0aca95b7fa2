//! The framework-free core of candle-repro: the correctly rounded elementwise math, the
//! exact sums and the rounding tests, and the CPU halves of the op families (softmax, the
//! norms, RoPE's tables and rotation, the correctly rounded matmul, the FFT's plans), over plain values and
//! slices. Neither candle nor any
//! other tensor framework is a dependency: the framework adapters (`candle-repro`, which
//! re-exports [`math`] as `candle_repro::math`) call into this crate, never the reverse, so
//! every adapter gives the same bits.
//!
//! Items marked `#[doc(hidden)]` are internals shared with the adapters (vector-path
//! dispatch, the exact accumulators); they are not part of the API.

#![warn(missing_docs)]

/// Output buffers for the CPU kernels (uninitialized, huge pages for large ones) and the
/// parallel map the elementwise kernels run under.
#[doc(hidden)]
pub mod buffer;
mod error;
pub mod fft;
pub mod math;
pub mod matmul;
pub mod norm;
pub mod rope;
pub mod softmax;

pub use error::{Error, Result};
