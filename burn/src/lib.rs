//! candle-repro's reproducible ops for [Burn](https://burn.dev) 0.22 tensors: the same
//! framework-free code (`repro-core`), so the same output bits as `candle-repro` for the
//! same values, on every CPU, vector width and thread count.
//!
//! The ops, over `burn_tensor::Tensor` (the type `burn::tensor::Tensor` re-exports) of
//! dtype f32, bf16 or f16:
//! * the correctly rounded elementwise functions ([`exp`], [`log`], [`sin`], [`tanh`],
//!   [`silu`], [`gelu_erf`], ... : [`FUNCTIONS`]): each output the exact function value
//!   rounded once to the dtype;
//! * [`softmax`] and [`log_softmax`] along a dimension, with exact, order-free row sums;
//! * [`rms_norm`], [`layer_norm`] and [`layer_norm_no_bias`] over the last dimension, each
//!   output correctly rounded;
//! * rotary position embeddings: [`rope_tables`] (transformers' tables for a
//!   [`RopeConfig`], the transcendental steps correctly rounded) and the rotations [`rope`],
//!   [`rope_i`] and [`rope_thd`] (candle_nn's three layouts), each output rounded once;
//! * [`matmul`] and [`linear`]: each output the exact sum of products (plus the bias)
//!   rounded once;
//! * the FFT along a dimension with burn-signal's signatures, for every length: [`rfft`],
//!   [`irfft`], [`cfft`] and [`icfft`] (f32; numpy's [`Norm`] and the transform's
//!   [`Precision`] in the `*_with` variants).
//!
//! NaN outputs are the canonical quiet NaN. The definitions, their error bounds and the
//! special rows are `repro-core`'s (`repro_core::softmax`, `repro_core::norm`,
//! `repro_core::rope`).
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
//!   storage (`FlexTensor::as_slice`, no copy when it is contiguous, from its offset; a
//!   strided view is made contiguous first, by Flex), the slice kernels of `repro-core` run
//!   over it on rayon's threads (the kernels candle-repro's CPU ops run), and the output
//!   `Vec` becomes the new primitive without a copy.
//! * **Any other backend** (Burn's CubeCL runtimes, ...): the values are read back to the
//!   host (`Tensor::try_into_data`) as a Flex primitive, transformed by the same kernels,
//!   and uploaded to the tensor's device: the same bits, at the cost of two transfers.
//!   (Launching candle-repro's own PTX on Burn's CUDA buffers is a later step.)
//! * **Autodiff** (`Device::flex().autodiff()`, either checkpointing strategy): the
//!   elementwise functions, softmax, log-softmax, the norms, the rotations (with respect
//!   to x) and the matmul register a backward step that runs the core's backward kernels
//!   (the bits of candle-repro's backward ops: `repro_core::math::grad`'s factors for the
//!   elementwise functions, order-free sums for softmax, one fixed f64 sequence for the
//!   norms); the gradients reach Burn's graph as Flex primitives. Tensors that take no
//!   part in a recorded graph are computed on the inner backend and returned on the
//!   autodiff device. The FFT has no backward pass (nor in candle-repro): a tracked input
//!   is refused ([`Error::NoBackward`]) rather than silently cut from the graph; so is a
//!   tracked tensor over another backend than Flex.
//!
//! # Errors
//! Nothing here panics on bad input: a dtype other than f32/bf16/f16, mixed dtypes or
//! devices, a shape that does not fit, an eps below 0 or not finite, a tracked tensor the
//! op cannot differentiate, or a failed read from the device gives an [`Error`] whose
//! message has the layout of Burn's own tensor-operation errors.

mod autodiff;
mod elementwise;
mod error;
mod fft;
mod flex;
mod matmul;
mod norm;
mod rope;
mod softmax;

pub use elementwise::*;
pub use error::Error;
pub use fft::{cfft, cfft_with, icfft, icfft_with, irfft, irfft_with, rfft, rfft_with};
pub use matmul::{linear, matmul};
pub use norm::{layer_norm, layer_norm_no_bias, rms_norm};
pub use repro_core::fft::{Norm, Precision};
pub use repro_core::rope::{RopeConfig, RopeFreqs, RopeLayout, RopeScaling};
pub use rope::{rope, rope_freqs, rope_fused, rope_i, rope_tables, rope_thd};
pub use softmax::{log_softmax, softmax};
