//! The autodiff route: a tracked tensor on an autodiff device over Flex
//! (`Device::flex().autodiff()`) is unwrapped to its `Autodiff<Flex, C>` primitive, C the
//! device's checkpointing strategy (Burn 0.22 has two), the op runs on the inner Flex
//! primitives and registers a backward step that runs the core's backward kernels. A
//! tracked tensor over another backend gets [`Error::NoBackward`].

pub(crate) use burn_autodiff::Autodiff;
pub(crate) use burn_autodiff::NodeId;
pub(crate) use burn_autodiff::checkpoint::strategy::{BalancedCheckpointing, NoCheckpointing};
use burn_autodiff::grads::Gradients;
use burn_backend::ops::FloatTensorOps;
use burn_backend::tensor::FloatTensor;
pub(crate) use burn_flex::Flex;
use burn_flex::FlexTensor;

/// The autodiff primitive of Flex under strategy C.
pub(crate) type AdTensor<C> = FloatTensor<Autodiff<Flex, C>>;

/// Evaluates `$body` with each of `$x` rebound to its `Autodiff<Flex, C>` primitive and
/// `$C` to the strategy of their device (the same for all), and wraps the primitive it
/// returns into a `Tensor`; `Err(NoBackward)` when the tensors are not on one autodiff
/// device over Flex.
macro_rules! on_autodiff_flex {
    ($op:expr, [$($x:ident),+], |$C:ident| $body:expr) => {{
        use $crate::autodiff::{Autodiff, BalancedCheckpointing, Flex, NoCheckpointing};
        if let ($(Ok($x),)+) =
            ($($x.clone().try_into_primitive::<Autodiff<Flex, NoCheckpointing>>(),)+)
        {
            type $C = NoCheckpointing;
            Ok(burn_tensor::Tensor::from_primitive::<Autodiff<Flex, $C>>($body))
        } else if let ($(Ok($x),)+) =
            ($($x.clone().try_into_primitive::<Autodiff<Flex, BalancedCheckpointing>>(),)+)
        {
            type $C = BalancedCheckpointing;
            Ok(burn_tensor::Tensor::from_primitive::<Autodiff<Flex, $C>>($body))
        } else {
            Err($crate::Error::NoBackward { op: $op })
        }
    }};
}
pub(crate) use on_autodiff_flex;

/// Hands each computed gradient to its parent (in order): a parent that is not tracked
/// (`None`), or a gradient that was not computed, registers nothing.
pub(crate) fn register_grads<const N: usize>(
    grads: &mut Gradients,
    parents: [Option<NodeId>; N],
    computed: impl IntoIterator<Item = Option<FlexTensor>>,
) {
    for (parent, grad) in parents.into_iter().zip(computed) {
        if let (Some(id), Some(grad)) = (parent, grad) {
            grads.register::<Flex>(id, grad);
        }
    }
}

/// A gradient in the dtype of the value it belongs to (Burn seeds `backward` in the
/// loss's dtype; a mixed graph could bring another).
pub(crate) fn grad_like(g: FlexTensor, like: &FlexTensor) -> FlexTensor {
    if g.dtype() == like.dtype() {
        g
    } else {
        Flex::float_cast(g, like.dtype().into())
    }
}
