//! The routes from a Burn tensor to the core's slice kernels and back: Flex primitives read
//! in place, other backends read back to the host (as a Flex primitive, without a copy) and
//! uploaded again, autodiff devices unwrapped. Every op of the crate is written once, over
//! Flex primitives.

use crate::Error;
use burn_flex::{Flex, FlexTensor};
use burn_tensor::{DType, Device, Element, Tensor, TensorData};

/// The dtypes of the kernels.
pub(crate) fn check_float(op: &'static str, dtype: DType) -> Result<(), Error> {
    match dtype {
        DType::F32 | DType::BF16 | DType::F16 => Ok(()),
        dtype => Err(Error::UnsupportedDType { op, dtype }),
    }
}

/// The same dtype and device as the op's first input.
pub(crate) fn check_same<const D: usize, const E: usize>(
    op: &'static str,
    x: &Tensor<D>,
    other: &Tensor<E>,
) -> Result<(), Error> {
    if other.dtype() != x.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            lhs: x.dtype(),
            rhs: other.dtype(),
        });
    }
    if other.device() != x.device() || other.is_autodiff() != x.is_autodiff() {
        return Err(Error::DeviceMismatch {
            op,
            message: format!("{:?} and {:?}", x.device(), other.device()),
        });
    }
    Ok(())
}

/// Where an input came from, so that the output goes back there.
pub(crate) enum Home {
    /// Burn's Flex backend: the primitive itself.
    Flex,
    /// Any other backend: the values were read back and go up to this device again.
    Other(Device),
}

/// The tensor's Flex primitive: its own on Flex, else its values read back from its device.
/// (Not for autodiff tensors: the callers unwrap those first.)
pub(crate) fn to_flex<const D: usize>(
    op: &'static str,
    x: Tensor<D>,
) -> Result<(FlexTensor, Home), Error> {
    match x.clone().try_into_primitive::<Flex>() {
        Ok(p) => Ok((p, Home::Flex)),
        Err(_) => {
            let device = x.device();
            let data = x.try_into_data().map_err(|e| Error::Read {
                op,
                message: format!("{e:?}"),
            })?;
            Ok((FlexTensor::from_data(data), Home::Other(device)))
        }
    }
}

/// The op's output where its input came from.
pub(crate) fn from_flex<const D: usize>(p: FlexTensor, home: &Home) -> Tensor<D> {
    match home {
        Home::Flex => Tensor::from_primitive::<Flex>(p),
        Home::Other(device) => {
            let dtype = p.dtype();
            Tensor::from_data(p.into_data(), (device, dtype))
        }
    }
}

/// A primitive whose storage is its values in order: itself when contiguous, else a
/// contiguous copy (made by Flex).
pub(crate) fn contiguous(p: FlexTensor) -> FlexTensor {
    if p.is_contiguous() {
        p
    } else {
        p.to_contiguous()
    }
}

/// The values of a contiguous primitive of dtype `T`, in place.
pub(crate) fn values<T: Element + bytemuck::Pod>(p: &FlexTensor) -> &[T] {
    p.as_slice::<T>()
        .expect("a contiguous Flex tensor of the dtype it reports")
}

/// A primitive of this shape that owns `v` (no copy).
pub(crate) fn from_vec<T: Element>(v: Vec<T>, shape: burn_backend::Shape) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(v, shape))
}

/// Calls `$f::<T>($args)` with T the Rust type of the float dtype `$dtype` (checked before).
macro_rules! by_dtype {
    ($dtype:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $dtype {
            burn_tensor::DType::F32 => $f::<f32>($($arg),*),
            burn_tensor::DType::BF16 => $f::<burn_tensor::bf16>($($arg),*),
            _ => $f::<burn_tensor::f16>($($arg),*),
        }
    };
}
pub(crate) use by_dtype;
