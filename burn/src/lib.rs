//! candle-repro's reproducible ops for [Burn](https://burn.dev) 0.22 tensors: the same
//! framework-free code (`repro-core`), so the same output bits as `candle-repro` for the
//! same values, on every CPU, vector width and thread count.
//!
//! Today this adapter offers the correctly rounded elementwise functions ([`exp`],
//! [`log`], [`sin`], [`tanh`], [`silu`], [`gelu_erf`], ... : [`FUNCTIONS`]) over
//! `burn_tensor::Tensor` (the type `burn::tensor::Tensor` re-exports) of dtype f32, bf16 or
//! f16. Each output element is the exact function value rounded once to the dtype; NaN
//! outputs are the canonical quiet NaN.
//!
//! ```
//! use burn_tensor::{Device, Tensor};
//! let x = Tensor::<1>::from_floats([0.5, 1.0, 2.0], &Device::flex());
//! let y = burn_repro::exp(x).unwrap();
//! // e, rounded once to f32 (the bits computed with mpmath).
//! assert_eq!(y.into_data().as_slice::<f32>().unwrap()[1].to_bits(), 0x402D_F854);
//! ```
//!
//! # Backends
//! * **Flex** (Burn's CPU backend): the input is read in place from the primitive's
//!   storage (`FlexTensor::as_slice`, no copy when it is contiguous; a strided view is made
//!   contiguous first, by Flex), the slice kernels of `repro-core` run over it in fixed
//!   chunks on rayon's threads (the kernels candle-repro's CPU ops run), and the output
//!   `Vec` becomes the new primitive without a copy.
//! * **Any other backend** (Burn's CubeCL runtimes, ...): the values are read back to the
//!   host (`Tensor::try_into_data`), transformed by the same kernels, and uploaded to the
//!   tensor's device: the same bits, at the cost of two transfers. (Launching candle-repro's
//!   own PTX on Burn's CUDA buffers is a later step.)
//! * **Autodiff**: a tensor on an autodiff device that takes no part in a recorded graph is
//!   computed as above and returned on the autodiff device. A tracked tensor is refused
//!   ([`Error::NoBackward`]): these functions have no backward pass yet (as in
//!   candle-repro), and a result detached from the graph would silently cut its gradient.
//!
//! # Errors
//! Nothing here panics on bad input: a dtype other than f32/bf16/f16, a tracked autodiff
//! tensor, or a failed read from the device gives an [`Error`] whose message has the
//! layout of Burn's own tensor-operation errors.

mod autodiff;
mod elementwise;
mod error;
mod flex;
mod norm;
mod softmax;

pub use elementwise::*;
pub use error::Error;
pub use norm::{layer_norm, layer_norm_no_bias, rms_norm};
pub use softmax::{log_softmax, softmax};
