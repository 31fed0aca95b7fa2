//! RMSNorm and LayerNorm over the last dimension: the core's rows (`repro_core::norm`: the
//! definition, the tiers and their bounds are there), with their backward pass.

use crate::Error;
use crate::autodiff::{AdTensor, grad_like, on_autodiff_flex, register_grads};
use crate::flex::{
    Home, by_dtype, check_float, check_same, contiguous, from_flex, from_vec, to_flex, values,
};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::CheckpointStrategy;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind};
use burn_backend::TensorMetadata;
use burn_flex::{Flex, FlexTensor};
use burn_tensor::{Element, Tensor};
use repro_core::buffer;
use repro_core::math::Format;
use repro_core::norm::{NormParams, norm_backward, norm_rows};

/// The forward rows over Flex primitives: x (.., n), w (n), b (n).
fn forward<T: Format + Element + bytemuck::Pod>(
    p: NormParams,
    x: FlexTensor,
    w: FlexTensor,
    b: Option<FlexTensor>,
) -> FlexTensor {
    let (x, w, b) = (contiguous(x), contiguous(w), b.map(contiguous));
    let xs = values::<T>(&x);
    let mut out = buffer::uninit::<T>(xs.len());
    norm_rows(
        xs,
        values::<T>(&w),
        b.as_ref().map(values::<T>),
        p,
        &mut out,
    );
    // SAFETY: norm_rows wrote every row, hence every element.
    from_vec(unsafe { buffer::assume_init(out) }, x.shape())
}

/// The gradients of x, w and b from the output's gradient `g`.
fn backward<T: Format + Element + bytemuck::Pod>(
    p: NormParams,
    x: &FlexTensor,
    w: &FlexTensor,
    g: FlexTensor,
) -> [FlexTensor; 3] {
    let (x, w, g) = (contiguous(x.clone()), contiguous(w.clone()), contiguous(g));
    let grads = norm_backward(p, values::<T>(&x), values::<T>(&w), values::<T>(&g));
    [
        from_vec(grads.dx, x.shape()),
        from_vec(grads.dw, w.shape()),
        from_vec(grads.db, w.shape()),
    ]
}

/// The backward step over the N inputs (x, w and, with a bias, b).
#[derive(Debug)]
struct NormBackward;

impl<const N: usize> Backward<Flex, N> for NormBackward {
    /// The norm and its inputs x and w.
    type State = (NormParams, FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (p, x, w) = ops.state;
        let g = grad_like(grads.consume::<Flex>(&ops.node), &x);
        let computed = by_dtype!(x.dtype(), backward(p, &x, &w, g));
        let parents = ops.parents.map(|p| p.map(|node| node.id));
        register_grads(grads, parents, computed.map(Some));
    }
}

/// The forward rows on tracked inputs, with the backward step registered.
fn tracked<C: CheckpointStrategy, const N: usize>(
    p: NormParams,
    inputs: [AdTensor<C>; N],
) -> AdTensor<C> {
    let guards = inputs.each_ref().map(|t| t.node());
    let [x, w, b] = {
        let mut it = inputs.into_iter().map(|t| t.into_primitive());
        [it.next(), it.next(), it.next()]
    };
    let (x, w) = (x.expect("x"), w.expect("w"));
    let y = by_dtype!(x.dtype(), forward(p, x.clone(), w.clone(), b));
    match NormBackward.prepare::<C>(guards).compute_bound().stateful() {
        OpsKind::Tracked(prep) => prep.finish((p, x, w), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

/// Checks, then the norm on any backend.
fn norm<const D: usize>(
    op: &'static str,
    p: NormParams,
    x: Tensor<D>,
    w: Tensor<1>,
    b: Option<Tensor<1>>,
) -> Result<Tensor<D>, Error> {
    check_float(op, x.dtype())?;
    check_same(op, &x, &w)?;
    if let Some(b) = &b {
        check_same(op, &x, b)?;
    }
    let n = if D == 0 { 1 } else { x.dims()[D - 1] };
    if w.dims()[0] != n || b.as_ref().is_some_and(|b| b.dims()[0] != n) {
        return Err(Error::Invalid {
            op,
            message: format!(
                "shape mismatch: x {:?}, weight {:?}, bias {:?}",
                x.dims(),
                w.dims(),
                b.as_ref().map(|b| b.dims())
            ),
        });
    }
    if !(p.eps.is_finite() && p.eps >= 0.0) {
        return Err(Error::Invalid {
            op,
            message: format!("eps must be finite and >= 0, got {}", p.eps),
        });
    }
    run(op, p, x, w, b)
}

fn run<const D: usize>(
    op: &'static str,
    p: NormParams,
    x: Tensor<D>,
    w: Tensor<1>,
    b: Option<Tensor<1>>,
) -> Result<Tensor<D>, Error> {
    if x.is_autodiff() {
        let tracked_any =
            x.is_tracked() || w.is_tracked() || b.as_ref().is_some_and(|b| b.is_tracked());
        if !tracked_any {
            return Ok(run(op, p, x.inner(), w.inner(), b.map(|b| b.inner()))?.autodiff());
        }
        // The primitives of every rank have one type (they carry their shape).
        return match b {
            Some(b) => on_autodiff_flex!(op, [x, w, b], |C| tracked::<C, 3>(p, [x, w, b])),
            None => on_autodiff_flex!(op, [x, w], |C| tracked::<C, 2>(p, [x, w])),
        };
    }
    let dtype = x.dtype();
    let (xp, home): (FlexTensor, Home) = to_flex(op, x)?;
    let (wp, _) = to_flex(op, w)?;
    let bp = match b {
        Some(b) => Some(to_flex(op, b)?.0),
        None => None,
    };
    Ok(from_flex(by_dtype!(dtype, forward(p, xp, wp, bp)), &home))
}

fn params(remove_mean: bool, eps: f32) -> NormParams {
    NormParams {
        remove_mean,
        eps,
        exact_only: false,
    }
}

/// RMSNorm over the last dimension: x (.., n), weight `alpha` (n), each output
/// x_i alpha_i / sqrt(mean x^2 + eps) exactly, rounded once to the dtype (f32, bf16, f16):
/// the bits of candle-repro's `nn::rms_norm`, whatever the batch or the thread count.
/// Differentiable on `Device::flex().autodiff()` (x and alpha): the core's backward pass
/// (a fixed sequence of f64 operations, rounded once), the bits of candle-repro's.
///
/// ```
/// use burn_tensor::{Device, Tensor};
/// let dev = Device::flex();
/// let x = Tensor::<2>::from_floats([[3.0, 4.0]], &dev);
/// let w = Tensor::<1>::from_floats([1.0, 1.0], &dev);
/// let y = burn_repro::rms_norm(x, w, 0.0).unwrap().into_data();
/// // 3 / sqrt(12.5) and 4 / sqrt(12.5), rounded once (bits from mpmath).
/// let bits: Vec<u32> = y.as_slice::<f32>().unwrap().iter().map(|v| v.to_bits()).collect();
/// assert_eq!(bits, [0x3F59_3924, 0x3F90_D0C3]);
/// ```
pub fn rms_norm<const D: usize>(
    x: Tensor<D>,
    alpha: Tensor<1>,
    eps: f32,
) -> Result<Tensor<D>, Error> {
    norm("rms_norm", params(false, eps), x, alpha, None)
}

/// LayerNorm over the last dimension: x (.., n), weight `alpha` (n), bias `beta` (n),
/// correctly rounded like [`rms_norm`]: the bits of candle-repro's `nn::layer_norm`.
pub fn layer_norm<const D: usize>(
    x: Tensor<D>,
    alpha: Tensor<1>,
    beta: Tensor<1>,
    eps: f32,
) -> Result<Tensor<D>, Error> {
    norm("layer_norm", params(true, eps), x, alpha, Some(beta))
}

/// LayerNorm without a bias: the bits of candle-repro's `nn::layer_norm_no_bias`.
pub fn layer_norm_no_bias<const D: usize>(
    x: Tensor<D>,
    alpha: Tensor<1>,
    eps: f32,
) -> Result<Tensor<D>, Error> {
    norm("layer_norm", params(true, eps), x, alpha, None)
}
