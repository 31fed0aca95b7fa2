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

use burn_backend::TensorMetadata;
use burn_flex::{Flex, FlexTensor};
use burn_tensor::{DType, Element, Tensor, TensorData, bf16, f16};
use repro_core::buffer::map_parallel;
use repro_core::math::Format;
use std::mem::MaybeUninit;

/// Why an op refused its input.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The op takes f32, bf16 and f16 tensors only.
    UnsupportedDType {
        /// The op's name.
        op: &'static str,
        /// The input's dtype.
        dtype: DType,
    },
    /// The tensor is tracked by autodiff and the op has no backward pass yet.
    NoBackward {
        /// The op's name.
        op: &'static str,
    },
    /// Reading the tensor's values back from its device failed.
    Read {
        /// The op's name.
        op: &'static str,
        /// The backend's message.
        message: String,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (op, reason) = match self {
            Error::UnsupportedDType { op, dtype } => (
                op,
                format!("Unsupported dtype {dtype:?}: the op takes F32, BF16 and F16 tensors."),
            ),
            Error::NoBackward { op } => (
                op,
                "The tensor is tracked by autodiff and the op has no backward pass yet; \
                 compute it off the graph on the inner backend (`Tensor::inner`)."
                    .to_string(),
            ),
            Error::Read { op, message } => (op, format!("Reading the tensor failed: {message}")),
        };
        write!(
            f,
            "=== Tensor Operation Error ===\n  Operation: '{op}'\n  Reason:\n    1. {reason}\n"
        )
    }
}

impl std::error::Error for Error {}

/// An elementwise kernel of `repro-core` for each float dtype (it writes every slot).
struct Kernels {
    f32: fn(&[f32], &mut [MaybeUninit<f32>]),
    bf16: fn(&[bf16], &mut [MaybeUninit<bf16>]),
    f16: fn(&[f16], &mut [MaybeUninit<f16>]),
}

/// The kernel on a Flex primitive: its storage read in place when contiguous.
fn flex_map<T: Format + Element + bytemuck::Pod>(
    x: &FlexTensor,
    kernel: fn(&[T], &mut [MaybeUninit<T>]),
) -> FlexTensor {
    let contiguous;
    let x = if x.is_contiguous() {
        x
    } else {
        contiguous = x.to_contiguous();
        &contiguous
    };
    let values = x
        .as_slice::<T>()
        .expect("a contiguous Flex tensor of the dtype it reports");
    FlexTensor::from_data(TensorData::new(map_parallel(values, kernel), x.shape()))
}

/// The kernel on host values read back from any backend.
fn data_map<T: Format + Element>(
    op: &'static str,
    data: &TensorData,
    kernel: fn(&[T], &mut [MaybeUninit<T>]),
) -> Result<TensorData, Error> {
    let values = data.as_slice::<T>().map_err(|e| Error::Read {
        op,
        message: format!("{e:?}"),
    })?;
    Ok(TensorData::new(
        map_parallel(values, kernel),
        data.shape().clone(),
    ))
}

/// One elementwise op on any backend (the module header says how).
fn unary<const D: usize>(op: &'static str, x: Tensor<D>, k: &Kernels) -> Result<Tensor<D>, Error> {
    let dtype = x.dtype();
    if !matches!(dtype, DType::F32 | DType::BF16 | DType::F16) {
        return Err(Error::UnsupportedDType { op, dtype });
    }
    if x.is_autodiff() {
        if x.is_tracked() {
            return Err(Error::NoBackward { op });
        }
        return Ok(unary(op, x.inner(), k)?.autodiff());
    }
    match x.clone().try_into_primitive::<Flex>() {
        Ok(p) => {
            let out = match dtype {
                DType::F32 => flex_map(&p, k.f32),
                DType::BF16 => flex_map(&p, k.bf16),
                _ => flex_map(&p, k.f16),
            };
            Ok(Tensor::from_primitive::<Flex>(out))
        }
        Err(_) => {
            let device = x.device();
            let data = x.try_into_data().map_err(|e| Error::Read {
                op,
                message: format!("{e:?}"),
            })?;
            let out = match dtype {
                DType::F32 => data_map(op, &data, k.f32)?,
                DType::BF16 => data_map(op, &data, k.bf16)?,
                _ => data_map(op, &data, k.f16)?,
            };
            Ok(Tensor::from_data(out, (&device, dtype)))
        }
    }
}

/// One public function per entry of the core's list of correctly rounded functions.
macro_rules! burn_unary {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        paste::paste! {
            $(
                #[doc = concat!($doc, ", elementwise, correctly rounded to the tensor's dtype \
                    (f32, bf16 or f16): the bits of candle-repro's `", stringify!($name), "`.")]
                pub fn $name<const D: usize>(x: Tensor<D>) -> Result<Tensor<D>, Error> {
                    const K: Kernels = Kernels {
                        f32: repro_core::math::[<$name _slice_uninit>]::<f32>,
                        bf16: repro_core::math::[<$name _slice_uninit>]::<bf16>,
                        f16: repro_core::math::[<$name _slice_uninit>]::<f16>,
                    };
                    unary(stringify!($name), x, &K)
                }
            )*
        }

        /// The names of the elementwise functions, in the core's order.
        pub const FUNCTIONS: &[&str] = &[$(stringify!($name)),*];

        /// The elementwise function called `name` (for tests and benchmarks).
        pub fn by_name<const D: usize>(name: &str) -> Option<fn(Tensor<D>) -> Result<Tensor<D>, Error>> {
            match name {
                $(stringify!($name) => Some($name::<D>),)*
                _ => None,
            }
        }
    };
}
repro_core::unary_functions!(burn_unary);
