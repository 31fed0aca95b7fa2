//! candle ops over the math core, one file per family.

pub mod arith;
pub(crate) mod buffer;
pub mod cast;
pub mod elementwise;
pub mod fft;
pub(crate) mod layout;
pub mod softmax;
