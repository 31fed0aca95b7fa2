//! The GPU executor: [`Device`] for candle's `CudaDevice`. A plan's kernel is loaded from its
//! module's PTX (built from `kernels/<family>/<stem>.cu` by `build.rs`), its buffer arguments become
//! device pointers (cudarc's stream events record each buffer's read or write), its values
//! are pushed as declared.

use super::{Device, KernelArg, LaunchPlan, Module, Slot};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaStorageSlice, WrapErr};
use candle_core::{CudaDevice, CudaStorage, DType, Result, bail};

macro_rules! ptx {
    ($stem:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/", $stem, ".ptx"))
    };
}

/// Every PTX module built from `kernels/*/*.cu`, as (file stem, PTX text): what the lint test
/// scans and assembles.
pub const PTX_MODULES: &[(&str, &str)] = &[
    ("elementwise", ptx!("elementwise")),
    ("softmax", ptx!("softmax")),
    ("rope", ptx!("rope")),
    ("fft", ptx!("fft")),
    ("matmul", ptx!("matmul")),
    ("norm", ptx!("norm")),
    ("gather", ptx!("gather")),
    ("arith", ptx!("arith")),
    ("quantized", ptx!("quantized")),
    ("audio", ptx!("audio")),
];

impl Module {
    /// The module's PTX.
    fn ptx(self) -> &'static str {
        PTX_MODULES
            .iter()
            .find(|(stem, _)| *stem == self.stem())
            .map(|(_, ptx)| *ptx)
            .expect("every module has its PTX")
    }

    /// The name it is cached under in candle's per-device module cache.
    fn cache_name(self) -> String {
        format!("candle_repro_{}", self.stem())
    }
}

macro_rules! each_slice {
    ($slice:expr, $v:ident => $body:expr, $other:expr) => {
        match $slice {
            CudaStorageSlice::U8($v) => $body,
            CudaStorageSlice::U32($v) => $body,
            CudaStorageSlice::I16($v) => $body,
            CudaStorageSlice::I32($v) => $body,
            CudaStorageSlice::I64($v) => $body,
            CudaStorageSlice::BF16($v) => $body,
            CudaStorageSlice::F16($v) => $body,
            CudaStorageSlice::F32($v) => $body,
            CudaStorageSlice::F64($v) => $body,
            CudaStorageSlice::F8E4M3($v) => $body,
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
}

impl Device for CudaDevice {
    type Buffer = CudaStorage;

    fn dtype(&self, b: &CudaStorage) -> DType {
        b.dtype()
    }

    fn len(&self, b: &CudaStorage) -> usize {
        each_slice!(&b.slice, s => s.len(), 0)
    }

    fn alloc(&self, dtype: DType, len: usize) -> Result<CudaStorage> {
        // SAFETY (every arm): the plans write every element of their outputs before any
        // read.
        let slice = match dtype {
            DType::U8 => CudaStorageSlice::U8(unsafe { self.alloc(len)? }),
            DType::U32 => CudaStorageSlice::U32(unsafe { self.alloc(len)? }),
            DType::I64 => CudaStorageSlice::I64(unsafe { self.alloc(len)? }),
            DType::BF16 => CudaStorageSlice::BF16(unsafe { self.alloc(len)? }),
            DType::F16 => CudaStorageSlice::F16(unsafe { self.alloc(len)? }),
            DType::F32 => CudaStorageSlice::F32(unsafe { self.alloc(len)? }),
            DType::F64 => CudaStorageSlice::F64(unsafe { self.alloc(len)? }),
            DType::F8E4M3 => CudaStorageSlice::F8E4M3(unsafe { self.alloc(len)? }),
            other => bail!("candle-repro: no device buffers of {other:?}"),
        };
        Ok(CudaStorage {
            slice,
            device: self.clone(),
        })
    }

    fn upload_u64(&self, data: &[u64]) -> Result<CudaStorage> {
        let bits: Vec<i64> = data.iter().map(|&v| v as i64).collect();
        Ok(CudaStorage {
            slice: CudaStorageSlice::I64(self.clone_htod(bits.as_slice())?),
            device: self.clone(),
        })
    }

    fn upload_u8(&self, data: &[u8]) -> Result<CudaStorage> {
        Ok(CudaStorage {
            slice: CudaStorageSlice::U8(self.clone_htod(data)?),
            device: self.clone(),
        })
    }

    fn upload_f32(&self, data: &[f32]) -> Result<CudaStorage> {
        Ok(CudaStorage {
            slice: CudaStorageSlice::F32(self.clone_htod(data)?),
            device: self.clone(),
        })
    }

    fn upload_f64(&self, data: &[f64]) -> Result<CudaStorage> {
        Ok(CudaStorage {
            slice: CudaStorageSlice::F64(self.clone_htod(data)?),
            device: self.clone(),
        })
    }

    fn launch(&self, plan: &LaunchPlan, slots: &mut [Slot<'_, CudaStorage>]) -> Result<()> {
        plan.check(self, slots)?;
        let stream = self.cuda_stream();
        // Each slot's base pointer; the guards record the launch's use of each buffer on the
        // stream when dropped, after the launch.
        let mut bases = Vec::with_capacity(slots.len());
        let mut guards = Vec::with_capacity(slots.len());
        for s in slots.iter_mut() {
            let (ptr, guard) = match s {
                Slot::In(b) => each_slice!(&b.slice, v => v.device_ptr(&stream),
                    bail!("{}: unsupported buffer dtype", plan.kernel)),
                Slot::Out(b) => each_slice!(&mut b.slice, v => v.device_ptr_mut(&stream),
                    bail!("{}: unsupported buffer dtype", plan.kernel)),
            };
            bases.push(ptr);
            guards.push(guard);
        }
        let pointers: Vec<u64> = plan
            .args
            .iter()
            .map(|a| match *a {
                KernelArg::Buf {
                    slot,
                    dtype,
                    offset,
                    ..
                } => bases[slot] + (offset * dtype.size_in_bytes()) as u64,
                _ => 0,
            })
            .collect();
        let func = self.get_or_load_custom_func(
            &plan.kernel,
            &plan.module.cache_name(),
            plan.module.ptx(),
        )?;
        let mut builder = func.builder();
        for (a, ptr) in plan.args.iter().zip(&pointers) {
            match a {
                KernelArg::Buf { .. } | KernelArg::Null => builder.arg(ptr),
                KernelArg::I32(v) => builder.arg(v),
                KernelArg::U32(v) => builder.arg(v),
                KernelArg::U64(v) => builder.arg(v),
                KernelArg::F32(v) => builder.arg(v),
                KernelArg::F64(v) => builder.arg(v),
            };
        }
        let cfg = LaunchConfig {
            grid_dim: plan.grid,
            block_dim: plan.block,
            shared_mem_bytes: 0,
        };
        // SAFETY: the plan's arguments follow the kernel's signature (the emulated device
        // checks each against the kernel's declared parameters), and `check` kept every
        // pointer inside its buffer.
        unsafe { builder.launch(cfg) }.w()?;
        drop(guards);
        Ok(())
    }
}
