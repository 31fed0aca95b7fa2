//! The correctly rounded elementwise functions (the core's list, [`crate::FUNCTIONS`]).

use crate::Error;
use crate::flex::{Home, check_float, contiguous, from_flex, to_flex, values};
use burn_backend::TensorMetadata;
use burn_flex::FlexTensor;
use burn_tensor::{DType, Element, Tensor, TensorData, bf16, f16};
use repro_core::buffer::map_parallel;
use repro_core::math::Format;
use std::mem::MaybeUninit;

/// An elementwise kernel of `repro-core` for each float dtype (it writes every slot).
pub(crate) struct Kernels {
    pub(crate) f32: fn(&[f32], &mut [MaybeUninit<f32>]),
    pub(crate) bf16: fn(&[bf16], &mut [MaybeUninit<bf16>]),
    pub(crate) f16: fn(&[f16], &mut [MaybeUninit<f16>]),
}

/// The kernel over a Flex primitive, read in place when contiguous, in fixed chunks on
/// rayon's threads; the output `Vec` becomes the new primitive.
fn flex_map<T: Format + Element + bytemuck::Pod>(
    x: FlexTensor,
    kernel: fn(&[T], &mut [MaybeUninit<T>]),
) -> FlexTensor {
    let x = contiguous(x);
    let out = map_parallel(values::<T>(&x), kernel);
    FlexTensor::from_data(TensorData::new(out, x.shape()))
}

/// One elementwise op on any backend (the crate's header says how).
pub(crate) fn unary<const D: usize>(
    op: &'static str,
    x: Tensor<D>,
    k: &Kernels,
) -> Result<Tensor<D>, Error> {
    let dtype = x.dtype();
    check_float(op, dtype)?;
    if x.is_autodiff() {
        if x.is_tracked() {
            return Err(Error::NoBackward { op });
        }
        return Ok(unary(op, x.inner(), k)?.autodiff());
    }
    let (p, home): (FlexTensor, Home) = to_flex(op, x)?;
    let out = match dtype {
        DType::F32 => flex_map(p, k.f32),
        DType::BF16 => flex_map(p, k.bf16),
        _ => flex_map(p, k.f16),
    };
    Ok(from_flex(out, &home))
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
