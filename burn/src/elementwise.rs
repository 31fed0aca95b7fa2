//! The correctly rounded elementwise functions (the core's list, [`crate::FUNCTIONS`]),
//! with their backward passes (`repro_core::math::grad`: the definition of each).

use crate::Error;
use crate::autodiff::{AdTensor, grad_like, on_autodiff_flex};
use crate::flex::{Home, check_float, contiguous, from_flex, to_flex, values};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::CheckpointStrategy;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind, unary as unary_step};
use burn_backend::TensorMetadata;
use burn_flex::FlexTensor;
use burn_tensor::{DType, Element, Tensor, TensorData, bf16, f16};
use repro_core::buffer::{map_parallel, map2_parallel};
use repro_core::math::Format;
use std::mem::MaybeUninit;

/// A backward kernel: the input, the output's gradient, the input's gradient.
type GradKernel<T> = fn(&[T], &[T], &mut [MaybeUninit<T>]);

/// The forward and backward kernels of `repro-core` for each float dtype (each writes
/// every slot).
#[derive(Debug)]
pub(crate) struct Kernels {
    pub(crate) f32: fn(&[f32], &mut [MaybeUninit<f32>]),
    pub(crate) bf16: fn(&[bf16], &mut [MaybeUninit<bf16>]),
    pub(crate) f16: fn(&[f16], &mut [MaybeUninit<f16>]),
    pub(crate) grad_f32: GradKernel<f32>,
    pub(crate) grad_bf16: GradKernel<bf16>,
    pub(crate) grad_f16: GradKernel<f16>,
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

/// The forward kernel of `k` for the primitive's dtype.
fn forward(x: FlexTensor, k: &Kernels) -> FlexTensor {
    match x.dtype() {
        DType::F32 => flex_map(x, k.f32),
        DType::BF16 => flex_map(x, k.bf16),
        _ => flex_map(x, k.f16),
    }
}

/// The backward kernel over two Flex primitives of one shape and dtype.
fn flex_map2<T: Format + Element + bytemuck::Pod>(
    x: &FlexTensor,
    g: FlexTensor,
    kernel: GradKernel<T>,
) -> FlexTensor {
    let (x, g) = (contiguous(x.clone()), contiguous(g));
    let out = map2_parallel(values::<T>(&x), values::<T>(&g), kernel);
    FlexTensor::from_data(TensorData::new(out, x.shape()))
}

/// The input's gradient from the input `x` and the output's gradient `g`.
fn backward(x: &FlexTensor, g: FlexTensor, k: &Kernels) -> FlexTensor {
    let g = grad_like(g, x);
    match x.dtype() {
        DType::F32 => flex_map2(x, g, k.grad_f32),
        DType::BF16 => flex_map2(x, g, k.grad_bf16),
        _ => flex_map2(x, g, k.grad_f16),
    }
}

/// The backward step: the core's backward kernel on the saved input.
#[derive(Debug)]
struct UnaryBackward;

impl Backward<burn_flex::Flex, 1> for UnaryBackward {
    /// The function's kernels and the forward input.
    type State = (&'static Kernels, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (k, x) = ops.state;
        unary_step::<burn_flex::Flex, _>(ops.parents, ops.node, grads, |g| backward(&x, g, k));
    }
}

/// The forward kernel on a tracked input, with the backward step registered.
fn tracked<C: CheckpointStrategy>(k: &'static Kernels, x: AdTensor<C>) -> AdTensor<C> {
    let guard = x.node();
    let p = x.into_primitive();
    let y = forward(p.clone(), k);
    match UnaryBackward
        .prepare::<C>([guard])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish((k, p), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

/// One elementwise op on any backend (the crate's header says how).
pub(crate) fn unary<const D: usize>(
    op: &'static str,
    x: Tensor<D>,
    k: &'static Kernels,
) -> Result<Tensor<D>, Error> {
    check_float(op, x.dtype())?;
    if x.is_autodiff() {
        if !x.is_tracked() {
            return Ok(unary(op, x.inner(), k)?.autodiff());
        }
        return on_autodiff_flex!(op, [x], |C| tracked::<C>(k, x));
    }
    let (p, home): (FlexTensor, Home) = to_flex(op, x)?;
    Ok(from_flex(forward(p, k), &home))
}

/// One public function per entry of the core's list of correctly rounded functions.
macro_rules! burn_unary {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        paste::paste! {
            $(
                #[doc = concat!($doc, ", elementwise, correctly rounded to the tensor's dtype \
                    (f32, bf16 or f16): the bits of candle-repro's `", stringify!($name), "`. \
                    Differentiable on `Device::flex().autodiff()`: the backward pass is \
                    `repro_core::math::grad`'s, the bits of candle-repro's `unary_bwd`.")]
                pub fn $name<const D: usize>(x: Tensor<D>) -> Result<Tensor<D>, Error> {
                    static K: Kernels = Kernels {
                        f32: repro_core::math::[<$name _slice_uninit>]::<f32>,
                        bf16: repro_core::math::[<$name _slice_uninit>]::<bf16>,
                        f16: repro_core::math::[<$name _slice_uninit>]::<f16>,
                        grad_f32: repro_core::math::grad::[<$name _grad_slice>]::<f32>,
                        grad_bf16: repro_core::math::grad::[<$name _grad_slice>]::<bf16>,
                        grad_f16: repro_core::math::grad::[<$name _grad_slice>]::<f16>,
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
