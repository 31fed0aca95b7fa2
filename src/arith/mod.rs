//! `add`: the sum of two tensors of the same shape and dtype (f32, bf16, f16), each
//! element the exact sum rounded once. Both devices compute round(f64(a) + f64(b)), which
//! is the exact sum rounded once: the f64 sum of two such values is exact unless one is
//! below 2^-29 of the other, and then neither the sum nor its f64 rounding is near a
//! rounding boundary of the dtype. candle's own 16-bit CPU sum goes through f32 and rounds
//! twice; that double rounding happens to be innocuous for bf16 and f16 (f32's 24 bits are
//! at least 2p + 2 for p = 8 and 11), so candle's values agree, but its NaN payloads
//! depend on the device and no definition is promised. Here NaN outputs are canonical;
//! -0 + -0 = -0 and x + (-x) = +0 as in IEEE.

/// The device half: launch plans of `kernels/arith/arith.cu` over [`crate::launch::Device`].
pub mod cuda;

use crate::math::Format;
use crate::ops::buffer;
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp2, Error, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// The sum of one pair, as the op defines it (the CUDA kernel in `kernels/arith/arith.cu` runs
/// the same steps).
#[inline(always)]
pub fn add_one<F: Format>(a: F, b: F) -> F {
    F::round(a.to_f32() as f64 + b.to_f32() as f64)
}

struct Add;

impl CustomOp2 for Add {
    fn name(&self) -> &'static str {
        "repro-add"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        fn run<F: Format>(a: &[F], la: &Layout, b: &[F], lb: &Layout) -> Vec<F> {
            let (a, b) = (logical_elements(a, la), logical_elements(b, lb));
            let mut out = buffer::uninit::<F>(a.len());
            out.par_chunks_mut(1 << 14)
                .zip(a.par_chunks(1 << 14).zip(b.par_chunks(1 << 14)))
                .for_each(|(o, (a, b))| {
                    for ((o, &a), &b) in o.iter_mut().zip(a).zip(b) {
                        o.write(add_one(a, b));
                    }
                });
            // SAFETY: every element was written.
            unsafe { buffer::assume_init(out) }
        }
        let out = match (s1, s2) {
            (CpuStorage::F32(a), CpuStorage::F32(b)) => CpuStorage::F32(run(a, l1, b, l2)),
            (CpuStorage::BF16(a), CpuStorage::BF16(b)) => CpuStorage::BF16(run(a, l1, b, l2)),
            (CpuStorage::F16(a), CpuStorage::F16(b)) => CpuStorage::F16(run(a, l1, b, l2)),
            (a, _) => return Err(Error::UnsupportedDTypeForOp(a.dtype(), "add").bt()),
        };
        Ok((out, l1.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let out = cuda::add(&s1.device, (s1, l1), (s2, l2))?;
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        _a: &Tensor,
        _b: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        Ok((Some(g.clone()), Some(g.clone())))
    }
}

/// a + b elementwise, correctly rounded (same shape and dtype; see the module header).
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// let a = Tensor::new(&[1.0f32, -0.0, f32::INFINITY], &Device::Cpu)?;
/// let b = Tensor::new(&[2f32.powi(-24), -0.0, f32::NEG_INFINITY], &Device::Cpu)?;
/// let s = candle_repro::add(&a, &b)?.to_vec1::<f32>()?;
/// assert_eq!(s[0], 1.0); // 1 + 2^-24 is a tie: to even
/// assert!(s[1] == 0.0 && s[1].is_sign_negative());
/// assert_eq!(s[2].to_bits(), 0x7FC0_0000); // inf - inf: the canonical NaN
/// // bf16 and f16 round the exact sum once, too.
/// let h = candle_repro::add(&a.to_dtype(DType::BF16)?, &b.to_dtype(DType::BF16)?)?;
/// assert_eq!(h.dtype(), DType::BF16);
/// # Ok(()) }
/// ```
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.shape() != b.shape() {
        return Err(Error::ShapeMismatchBinaryOp {
            lhs: a.shape().clone(),
            rhs: b.shape().clone(),
            op: "add",
        }
        .bt());
    }
    if a.dtype() != b.dtype() {
        return Err(Error::DTypeMismatchBinaryOp {
            lhs: a.dtype(),
            rhs: b.dtype(),
            op: "add",
        }
        .bt());
    }
    a.apply_op2_arc(b, std::sync::Arc::new(Box::new(Add)))
}
