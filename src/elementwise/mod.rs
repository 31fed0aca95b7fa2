//! Correctly rounded elementwise ops: drop-in replacements for `Tensor::exp`, `log`, `sin`,
//! `cos`, `tanh`, `erf`, `gelu` (the tanh approximation), `gelu_erf`,
//! `candle_nn::ops::sigmoid`, `silu` and the softplus that models write as
//! `(x.exp() + 1).log()`, and `expm1`, `log1p`, `log10`. The functions are listed once, in
//! `core/src/math/functions.rs`, which generates [`UnaryFn`] and the ops below.
//!
//! Each op is a `CustomOp1` over the slice kernels of [`crate::math`]: f32, f16 and bf16
//! (the same dtype out), any shape and layout (a strided input is gathered first), empty
//! tensors included. On the CPU the elements are split into fixed chunks over rayon's
//! threads; the output bits do not depend on the split, the thread count or the vector
//! width, since each element is computed alone by the same operations. On CUDA the kernels
//! in `kernels/elementwise/elementwise.cu` run the same operations (see `kernels/math/all.cuh`).
//!
//! Every op here is differentiable: candle's autograd calls [`unary_bwd`] (and
//! [`softplus_with_bwd`]), the gradient `repro_core::math::grad` defines (g times a
//! derivative factor of x, one rounding), with CPU and CUDA kernels of the same bits
//! (`kernels/math/grad.cuh`).

/// The CPU half: the slice kernels of [`crate::math`] over rayon, on candle's CPU storage.
mod cpu;
/// The device half: launch plans of `kernels/elementwise/elementwise.cu` over [`crate::launch::Device`].
pub mod cuda;

use crate::math::{self, Format};
use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Result, Shape, Tensor, bail};
use std::mem::MaybeUninit;

/// `UnaryFn`, its table and one op per function, from the list in `math::functions`.
macro_rules! unary_fns {
    ($($name:ident $ty:ident in $family:ident: $doc:literal, $x:literal => $bits:literal;)*) => {
        /// The elementwise functions, by name (the CUDA kernels are named after them).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum UnaryFn {
            $(#[doc = concat!($doc, ".")] $ty,)*
        }

        impl UnaryFn {
            /// Every function, in the list's order.
            pub const ALL: [UnaryFn; [$(stringify!($name)),*].len()] = [$(UnaryFn::$ty),*];

            /// The function's name, which is also the op's name and the CUDA kernels' prefix.
            pub fn name(self) -> &'static str {
                match self {
                    $(UnaryFn::$ty => stringify!($name),)*
                }
            }

            /// The slice kernel for format `T`.
            fn slice_kernel<T: Format>(self) -> fn(&[T], &mut [MaybeUninit<T>]) {
                paste::paste! {
                    match self {
                        $(UnaryFn::$ty => math::[<$name _slice_uninit>]::<T>,)*
                    }
                }
            }

            /// The backward slice kernel for format `T` (input, output gradient, out).
            fn grad_kernel<T: Format>(self) -> fn(&[T], &[T], &mut [MaybeUninit<T>]) {
                paste::paste! {
                    match self {
                        $(UnaryFn::$ty => math::grad::[<$name _grad_slice>]::<T>,)*
                    }
                }
            }
        }

        $(op_fn!($name, $ty, $doc, $x, $bits);)*
    };
}

struct Elementwise(UnaryFn);

impl CustomOp1 for Elementwise {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        cpu::unary_fwd(self.0, storage, layout)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        storage: &candle_core::CudaStorage,
        layout: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::unary_fwd(self.0, storage, layout)
    }

    fn bwd(&self, arg: &Tensor, _res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(unary_bwd(arg, grad_res, self.0)?))
    }
}

/// The backward pass of an elementwise function (CPU and CUDA kernels, the same bits).
struct ElementwiseBwd(Bwd);

#[derive(Clone, Copy)]
enum Bwd {
    Unary(UnaryFn),
    SoftplusWith { beta: f32, threshold: f32 },
}

impl CustomOp2 for ElementwiseBwd {
    fn name(&self) -> &'static str {
        match self.0 {
            Bwd::Unary(f) => f.name(),
            Bwd::SoftplusWith { .. } => "softplus_with",
        }
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        match self.0 {
            Bwd::Unary(f) => cpu::unary_bwd(f, (s1, l1), (s2, l2)),
            Bwd::SoftplusWith { beta, threshold } => {
                cpu::softplus_with_bwd(beta, threshold, (s1, l1), (s2, l2))
            }
        }
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        match self.0 {
            Bwd::Unary(f) => cuda::unary_bwd(f, (s1, l1), (s2, l2)),
            Bwd::SoftplusWith { beta, threshold } => {
                cuda::softplus_with_bwd(beta, threshold, (s1, l1), (s2, l2))
            }
        }
    }
}

/// Checks the operands of a backward pass and runs it.
fn apply_bwd(x: &Tensor, grad: &Tensor, op: Bwd) -> Result<Tensor> {
    let name = ElementwiseBwd(op).name();
    if x.shape() != grad.shape() {
        return Err(candle_core::Error::ShapeMismatchBinaryOp {
            lhs: x.shape().clone(),
            rhs: grad.shape().clone(),
            op: name,
        }
        .bt());
    }
    if x.dtype() != grad.dtype() {
        return Err(candle_core::Error::DTypeMismatchBinaryOp {
            lhs: x.dtype(),
            rhs: grad.dtype(),
            op: name,
        }
        .bt());
    }
    x.apply_op2_no_bwd(grad, &ElementwiseBwd(op))
}

/// Apply `f` elementwise, correctly rounded, with the same bits on every device.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::{UnaryFn, unary};
/// let x = Tensor::new(&[0.0f32, f32::NEG_INFINITY, f32::NAN], &Device::Cpu)?;
/// let y = unary(&x, UnaryFn::Exp)?.to_vec1::<f32>()?;
/// assert_eq!(&y[..2], [1.0, 0.0]);
/// assert_eq!(y[2].to_bits(), 0x7FC0_0000); // every NaN out is the canonical one
/// # Ok(()) }
/// ```
pub fn unary(x: &Tensor, f: UnaryFn) -> Result<Tensor> {
    x.apply_op1(Elementwise(f))
}

/// The backward pass of `f`: the gradient of `x` given the gradient `grad` of `f(x)`
/// (same shape and dtype), `grad` times the derivative at `x` as `repro_core::math::grad`
/// defines it, with the same bits on every device. candle's autograd calls it for every
/// op of this module (`Tensor::backward` through `exp`, `silu`, ...).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// use candle_repro::{UnaryFn, unary_bwd};
/// let x = Tensor::new(&[0.0f32, 1.0], &Device::Cpu)?;
/// let g = Tensor::new(&[3.0f32, 1.0], &Device::Cpu)?;
/// let dx = unary_bwd(&x, &g, UnaryFn::Exp)?.to_vec1::<f32>()?;
/// // g times e^x correctly rounded, the product rounded once.
/// assert_eq!(dx, [3.0, candle_repro::math::exp(1.0)]);
/// // The same through candle's autograd.
/// let v = candle_core::Var::new(&[0.0f32, 1.0], &Device::Cpu)?;
/// let grads = candle_repro::exp(v.as_tensor())?.sum_all()?.backward()?;
/// assert_eq!(grads.get(&v).unwrap().to_vec1::<f32>()?[1], dx[1]);
/// # Ok(()) }
/// ```
pub fn unary_bwd(x: &Tensor, grad: &Tensor, f: UnaryFn) -> Result<Tensor> {
    apply_bwd(x, grad, Bwd::Unary(f))
}

/// The backward pass of [`softplus_with`]: `grad` where `beta x > threshold` (the forward
/// returned x), else `grad` times sigmoid(beta x) correctly rounded, the product rounded
/// once (`repro_core::math::grad::softplus_with_factor`).
pub fn softplus_with_bwd(x: &Tensor, grad: &Tensor, beta: f64, threshold: f64) -> Result<Tensor> {
    check_softplus_params(beta, threshold)?;
    let (beta, threshold) = (beta as f32, threshold as f32);
    apply_bwd(x, grad, Bwd::SoftplusWith { beta, threshold })
}

fn check_softplus_params(beta: f64, threshold: f64) -> Result<()> {
    if !(beta.is_finite() && beta > 0.0) {
        bail!("softplus_with: beta must be finite and positive, got {beta}")
    }
    if threshold.is_nan() {
        bail!("softplus_with: threshold is NaN")
    }
    Ok(())
}

macro_rules! op_fn {
    ($name:ident, $variant:ident, $what:literal, $arg:literal, $bits:literal) => {
        #[doc = concat!($what, ", elementwise, correctly rounded (f32, f16, bf16).")]
        ///
        /// ```
        /// # fn main() -> candle_core::Result<()> {
        /// use candle_core::{DType, Device, Tensor};
        #[doc = concat!("let x = Tensor::new(&[", stringify!($arg), "f32], &Device::Cpu)?;")]
        #[doc = concat!("let y = candle_repro::", stringify!($name), "(&x)?;")]
        /// // The exact value rounded to the nearest f32 (the bits computed with mpmath).
        #[doc = concat!("assert_eq!(y.to_vec1::<f32>()?[0].to_bits(), ", stringify!($bits), ");")]
        /// // bf16 and f16 are rounded once from the exact value, not through f32.
        #[doc = concat!("let h = candle_repro::", stringify!($name), "(&x.to_dtype(DType::BF16)?)?;")]
        /// assert_eq!(h.dtype(), DType::BF16);
        /// # Ok(()) }
        /// ```
        pub fn $name(x: &Tensor) -> Result<Tensor> {
            unary(x, UnaryFn::$variant)
        }
    };
}

repro_core::unary_functions!(unary_fns);

/// Softplus with PyTorch's parameters: `ln(1 + e^(beta x)) / beta`, and `x` itself where
/// `beta * x > threshold`.
///
/// With `beta = 1` every element that is not thresholded is correctly rounded (the
/// defaults, `beta = 1, threshold = 20`, give exactly [`softplus`]). Other betas compute
/// `softplus(beta * x) / beta` in f32 with the correctly rounded softplus in the middle and
/// round to the output dtype once more: deterministic, the same bits on every device, but
/// not correctly rounded as a whole.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// let x = Tensor::new(&[1.0f32, 30.0], &Device::Cpu)?;
/// let y = candle_repro::softplus_with(&x, 1.0, 20.0)?.to_vec1::<f32>()?;
/// assert_eq!(y[0], candle_repro::math::softplus(1.0)); // beta = 1: the CR softplus
/// assert_eq!(y[1], 30.0); // beta x above the threshold: x itself
/// assert!(candle_repro::softplus_with(&x, 0.0, 20.0).is_err()); // beta must be positive
/// # Ok(()) }
/// ```
pub fn softplus_with(x: &Tensor, beta: f64, threshold: f64) -> Result<Tensor> {
    check_softplus_params(beta, threshold)?;
    x.apply_op1(SoftplusWith {
        beta: beta as f32,
        threshold: threshold as f32,
    })
}

struct SoftplusWith {
    beta: f32,
    threshold: f32,
}

impl CustomOp1 for SoftplusWith {
    fn name(&self) -> &'static str {
        "softplus_with"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        cpu::softplus_with_fwd(self.beta, self.threshold, storage, layout)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        storage: &candle_core::CudaStorage,
        layout: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        cuda::softplus_with_fwd(self.beta, self.threshold, storage, layout)
    }

    fn bwd(&self, arg: &Tensor, _res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        let op = Bwd::SoftplusWith {
            beta: self.beta,
            threshold: self.threshold,
        };
        Ok(Some(apply_bwd(arg, grad_res, op)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn unsupported_dtype_is_an_error_naming_the_op() {
        let x = Tensor::new(&[1.0f64, 2.0], &Device::Cpu).unwrap();
        let err = exp(&x).unwrap_err().to_string();
        assert!(
            err.contains("exp") && err.to_lowercase().contains("f64"),
            "{err}"
        );
        let x = Tensor::new(&[1u32, 2], &Device::Cpu).unwrap();
        assert!(sigmoid(&x).unwrap_err().to_string().contains("sigmoid"));
    }

    #[test]
    fn softplus_with_rejects_bad_parameters() {
        let x = Tensor::new(&[1.0f32], &Device::Cpu).unwrap();
        assert!(softplus_with(&x, 0.0, 20.0).is_err());
        assert!(softplus_with(&x, f64::NAN, 20.0).is_err());
        assert!(softplus_with(&x, 1.0, f64::NAN).is_err());
    }
}
