//! `to_f8e4m3`: the correctly rounded cast of f32, bf16 and f16 tensors to float8 E4M3
//! (`crate::math::f8`), with the overflow rule chosen explicitly: saturate to +-448 as the
//! `float8` crate and candle do, or NaN as PyTorch's `float8_e4m3fn`. Every input value
//! is exact in f32, so one rounding from it is the whole cast; NaN becomes the canonical
//! NaN 0x7F. The CUDA kernel runs the same integer and exact f64 steps.

use crate::math::Format;
use crate::math::f8::{Overflow, f32_to_f8e4m3};
use crate::ops::layout::logical_elements;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, Error, Layout, Result, Shape, Tensor};
use float8::F8E4M3;
use rayon::prelude::*;

struct ToF8E4M3(Overflow);

impl CustomOp1 for ToF8E4M3 {
    fn name(&self) -> &'static str {
        "to_f8e4m3"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        fn run<T: Format>(v: &[T], layout: &Layout, overflow: Overflow) -> Vec<F8E4M3> {
            let x = logical_elements(v, layout);
            x.par_iter()
                .with_min_len(1 << 14)
                .map(|&x| F8E4M3::from_bits(f32_to_f8e4m3(x.to_f32(), overflow)))
                .collect()
        }
        let out = match storage {
            CpuStorage::F32(v) => run(v, layout, self.0),
            CpuStorage::BF16(v) => run(v, layout, self.0),
            CpuStorage::F16(v) => run(v, layout, self.0),
            other => return Err(Error::UnsupportedDTypeForOp(other.dtype(), self.name()).bt()),
        };
        Ok((CpuStorage::F8E4M3(out), layout.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        storage: &candle_core::CudaStorage,
        layout: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let out = crate::matmul::cuda::to_f8e4m3(&storage.device, storage, layout, self.0)?;
        Ok((out, layout.shape().clone()))
    }
}

/// `x` (f32, bf16 or f16) cast to f8e4m3, correctly rounded, with `overflow` deciding what
/// values above 448 (after rounding) and infinities become.
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{DType, Device, Tensor};
/// use candle_repro::{Overflow, to_f8e4m3};
/// let x = Tensor::new(&[0.3f32, 1000.0], &Device::Cpu)?;
/// let sat = to_f8e4m3(&x, Overflow::Saturate)?;
/// assert_eq!(sat.dtype(), DType::F8E4M3);
/// // 0.3 rounds to 0.3125 (3 mantissa bits); 1000 saturates to 448.
/// assert_eq!(sat.to_dtype(DType::F32)?.to_vec1::<f32>()?, [0.3125, 448.0]);
/// let nan = to_f8e4m3(&x, Overflow::Nan)?.to_dtype(DType::F32)?.to_vec1::<f32>()?;
/// assert!(nan[1].is_nan());
/// # Ok(()) }
/// ```
pub fn to_f8e4m3(x: &Tensor, overflow: Overflow) -> Result<Tensor> {
    x.apply_op1_no_bwd(&ToF8E4M3(overflow))
}
