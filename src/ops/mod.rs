//! candle ops over the math core. The families with a device half live in their own
//! slices (`crate::elementwise`, `crate::softmax`, `crate::arith`, ...), re-exported here
//! under their old paths.

pub use crate::arith;
pub(crate) use repro_core::buffer;
pub mod cast;
pub use crate::elementwise;
pub use crate::fft::ops as fft;
pub(crate) mod layout;
pub use crate::softmax;

/// A core function's refusal as candle's error (the message prefixed with the crate's name,
/// as candle-repro's own messages are).
pub(crate) fn core_error(e: repro_core::Error) -> candle_core::Error {
    candle_core::Error::Msg(format!("candle-repro {e}"))
}
