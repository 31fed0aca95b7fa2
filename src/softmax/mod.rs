//! Order-independent softmax and log-softmax over the last dimension, with backward passes:
//! drop-in replacements for `candle_nn::ops::softmax_last_dim` and `log_softmax`, whose
//! bits do not depend on the batch size, the thread count, the vector width or the way a
//! row is split into blocks (on the CPU or on CUDA).
//!
//! The definition, its error bound, the special rows and the CPU rows are the core's
//! ([`repro_core::softmax`], re-exported here); this module holds the candle ops over them
//! and the device half.

/// The CPU half: the candle ops on candle's CPU storage, over the core's rows.
mod cpu;
/// The device half: launch plans of `kernels/softmax/softmax.cu` over [`crate::launch::Device`].
pub mod cuda;

pub use repro_core::softmax::{
    BLOCK, LONG_ROW, TASK_ELEMS, log_softmax_slice_with, softmax_bwd_slice, softmax_slice_with,
};

use candle_core::{CpuStorage, CustomOp1, CustomOp2, DType, Error, Layout, Result, Shape, Tensor};

// ---------------------------------------------------------------------------------------
// candle ops
// ---------------------------------------------------------------------------------------

struct Softmax {
    log: bool,
}

impl CustomOp1 for Softmax {
    fn name(&self) -> &'static str {
        if self.log {
            "repro-log-softmax-last-dim"
        } else {
            "repro-softmax-last-dim"
        }
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        cpu::softmax_fwd(self.log, storage, layout)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        storage: &candle_core::CudaStorage,
        layout: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let out = cuda::softmax_fwd(&storage.device, self.log, storage, layout)?;
        Ok((out, layout.shape().clone()))
    }

    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        // CPU and CUDA both have kernels (the same bits); other devices have none.
        let op = SoftmaxBwd { log: self.log };
        Ok(Some(res.apply_op2_no_bwd(grad_res, &op)?))
    }
}

struct SoftmaxBwd {
    log: bool,
}

impl CustomOp2 for SoftmaxBwd {
    fn name(&self) -> &'static str {
        if self.log {
            "repro-log-softmax-last-dim-bwd"
        } else {
            "repro-softmax-last-dim-bwd"
        }
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        if l1.dims() != l2.dims() {
            candle_core::bail!(
                "{}: output and gradient shapes differ ({:?} vs {:?})",
                self.name(),
                l1.dims(),
                l2.dims()
            )
        }
        cpu::softmax_bwd(self.log, (s1, l1), (s2, l2))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let out = cuda::softmax_bwd(&s1.device, self.log, (s1, l1), (s2, l2))?;
        Ok((out, l1.shape().clone()))
    }
}

/// Softmax over the last dimension (any rank; f32, f16, bf16, the same dtype out), with
/// the same bits for a row whatever the batch, the thread count, the block split or the
/// device; differentiable (order-independent backward). See the module documentation for
/// the algorithm, its error bound and the special rows.
pub fn softmax_last_dim(x: &Tensor) -> Result<Tensor> {
    check_dtype(x, "softmax_last_dim")?;
    x.apply_op1(Softmax { log: false })
}

/// Log-softmax over the last dimension, like [`softmax_last_dim`].
///
/// ```
/// # fn main() -> candle_core::Result<()> {
/// use candle_core::{Device, Tensor};
/// let x = Tensor::new(&[[5f32, 5.], [0., f32::NEG_INFINITY]], &Device::Cpu)?;
/// let y = candle_repro::log_softmax_last_dim(&x)?.to_vec2::<f32>()?;
/// assert_eq!(y[0][0].to_bits(), 0xBF31_7218); // -ln 2, correctly rounded
/// assert_eq!(y[1], [0.0, f32::NEG_INFINITY]);
/// # Ok(()) }
/// ```
pub fn log_softmax_last_dim(x: &Tensor) -> Result<Tensor> {
    check_dtype(x, "log_softmax_last_dim")?;
    x.apply_op1(Softmax { log: true })
}

fn check_dtype(x: &Tensor, name: &'static str) -> Result<()> {
    match x.dtype() {
        DType::F32 | DType::F16 | DType::BF16 => Ok(()),
        d => Err(Error::UnsupportedDTypeForOp(d, name)),
    }
}
