//! candle ops over the math core, one file per family.

pub mod elementwise;
pub(crate) mod layout;
pub mod softmax;
