//! Softmax and log-softmax along a dimension: the core's rows (`repro_core::softmax`: the
//! definition, its error bound and the special rows are there), with their backward pass.

use crate::Error;
use crate::autodiff::{AdTensor, grad_like, on_autodiff_flex};
use crate::flex::{by_dtype, check_float, contiguous, from_flex, from_vec, to_flex, values};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::CheckpointStrategy;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind, unary as unary_step};
use burn_backend::TensorMetadata;
use burn_flex::{Flex, FlexTensor};
use burn_tensor::{Element, Tensor};
use repro_core::buffer;
use repro_core::math::Format;
use repro_core::softmax::{softmax_bwd_slice, softmax_rows};

/// The forward rows over a Flex primitive whose last dimension is the softmax's.
fn forward<T: Format + Element + bytemuck::Pod + Default>(log: bool, x: FlexTensor) -> FlexTensor {
    let x = contiguous(x);
    let shape = x.shape();
    let n = shape.as_slice().last().copied().unwrap_or(1);
    let xs = values::<T>(&x);
    let mut out = buffer::uninit::<T>(xs.len());
    softmax_rows(log, n, xs, &mut out);
    // SAFETY: softmax_rows wrote every element.
    from_vec(unsafe { buffer::assume_init(out) }, shape)
}

/// The backward rows: `y` the forward output, `g` its gradient (same shape).
fn backward<T: Format + Element + bytemuck::Pod + Default>(
    log: bool,
    y: &FlexTensor,
    g: FlexTensor,
) -> FlexTensor {
    let y = contiguous(y.clone());
    let g = contiguous(g);
    let shape = y.shape();
    let n = shape.as_slice().last().copied().unwrap_or(1);
    from_vec(
        softmax_bwd_slice(log, n, values::<T>(&y), values::<T>(&g)),
        shape,
    )
}

/// The backward step: the core's backward rows on the output and its gradient.
#[derive(Debug)]
struct SoftmaxBackward;

impl Backward<Flex, 1> for SoftmaxBackward {
    /// Log-softmax or softmax, and the forward output.
    type State = (bool, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (log, y) = ops.state;
        unary_step::<Flex, _>(ops.parents, ops.node, grads, |g| {
            let g = grad_like(g, &y);
            by_dtype!(y.dtype(), backward(log, &y, g))
        });
    }
}

/// The forward rows on a tracked input, with the backward step registered.
fn tracked<C: CheckpointStrategy>(log: bool, x: AdTensor<C>) -> AdTensor<C> {
    let guard = x.node();
    let p = x.into_primitive();
    let y = by_dtype!(p.dtype(), forward(log, p));
    match SoftmaxBackward
        .prepare::<C>([guard])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish((log, y.clone()), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

/// Along the last dimension, on any backend.
fn last_dim<const D: usize>(op: &'static str, log: bool, x: Tensor<D>) -> Result<Tensor<D>, Error> {
    if x.is_autodiff() {
        if !x.is_tracked() {
            return Ok(last_dim(op, log, x.inner())?.autodiff());
        }
        return on_autodiff_flex!(op, [x], |C| tracked::<C>(log, x));
    }
    let dtype = x.dtype();
    let (p, home) = to_flex(op, x)?;
    Ok(from_flex(by_dtype!(dtype, forward(log, p)), &home))
}

fn along<const D: usize>(
    op: &'static str,
    log: bool,
    x: Tensor<D>,
    dim: usize,
) -> Result<Tensor<D>, Error> {
    check_float(op, x.dtype())?;
    if D == 0 || dim >= D {
        return Err(Error::Invalid {
            op,
            message: format!("dim {dim} is out of range for a tensor of rank {D}"),
        });
    }
    if dim == D - 1 {
        last_dim(op, log, x)
    } else {
        // The rows along `dim` become the last dimension and go back: a permutation (exact,
        // differentiable by Burn), so each row's bits are those of the row alone.
        Ok(last_dim(op, log, x.swap_dims(dim, D - 1))?.swap_dims(dim, D - 1))
    }
}

/// Softmax along `dim` (the signature of `burn::tensor::activation::softmax`), each output
/// the row's exact softmax rounded once to the dtype (f32, bf16, f16) within the bound of
/// `repro_core::softmax`: the bits of candle-repro's `softmax_last_dim` for the same rows,
/// whatever the batch, the thread count or the vector width. Differentiable on
/// `Device::flex().autodiff()`: the backward pass is the core's (order-free sums), the bits
/// of candle-repro's backward.
///
/// ```
/// use burn_tensor::{Device, Tensor};
/// let x = Tensor::<2>::from_floats([[1.0, 1.0], [0.0, f32::NEG_INFINITY]], &Device::flex());
/// let y = burn_repro::softmax(x, 1).unwrap().into_data();
/// assert_eq!(y.as_slice::<f32>().unwrap(), &[0.5, 0.5, 1.0, 0.0]);
/// ```
pub fn softmax<const D: usize>(x: Tensor<D>, dim: usize) -> Result<Tensor<D>, Error> {
    along("softmax", false, x, dim)
}

/// Log-softmax along `dim` (the signature of `burn::tensor::activation::log_softmax`), as
/// [`softmax`]: the bits of candle-repro's `log_softmax_last_dim`.
pub fn log_softmax<const D: usize>(x: Tensor<D>, dim: usize) -> Result<Tensor<D>, Error> {
    along("log_softmax", true, x, dim)
}
