//! The emulated CUDA device (`tools/cuda-emu`) as a [`candle_repro::launch::Device`]: the
//! crate's launch code computes its plans exactly as for a GPU, and the plans run the
//! `kernels/*/*.cu` text compiled as host C++. Tensors go in and out by their bytes.

use candle_core::{CpuStorage, DType, Layout, Result, Shape, Storage, Tensor};
use candle_repro::launch::{Device, KernelArg, LaunchPlan, Slot};
use cuda_emu::{Arg, Buffer};

/// The emulated device.
pub struct Emu;

thread_local! {
    static LAUNCHED: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// `f`'s result and the kernels it launched on [`Emu`] from this thread, in order (so a test
/// can tell which path a launch plan took).
#[allow(dead_code)]
pub fn launched<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let outer = LAUNCHED.with(|l| l.borrow_mut().replace(Vec::new()));
    let r = f();
    let got = LAUNCHED.with(|l| std::mem::replace(&mut *l.borrow_mut(), outer));
    (r, got.unwrap_or_default())
}

/// A buffer of the emulated device: `len` elements of `dtype`.
pub struct EmuBuf {
    pub dtype: DType,
    pub len: usize,
    pub mem: Buffer,
}

impl Device for Emu {
    type Buffer = EmuBuf;

    fn dtype(&self, b: &EmuBuf) -> DType {
        b.dtype
    }

    fn len(&self, b: &EmuBuf) -> usize {
        b.len
    }

    fn alloc(&self, dtype: DType, len: usize) -> Result<EmuBuf> {
        Ok(EmuBuf {
            dtype,
            len,
            mem: Buffer::new(len * dtype.size_in_bytes()),
        })
    }

    fn upload_u64(&self, data: &[u64]) -> Result<EmuBuf> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        Ok(EmuBuf {
            dtype: DType::I64,
            len: data.len(),
            mem: Buffer::from_bytes(&bytes),
        })
    }

    fn upload_u8(&self, data: &[u8]) -> Result<EmuBuf> {
        Ok(EmuBuf {
            dtype: DType::U8,
            len: data.len(),
            mem: Buffer::from_bytes(data),
        })
    }

    fn upload_f32(&self, data: &[f32]) -> Result<EmuBuf> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        Ok(EmuBuf {
            dtype: DType::F32,
            len: data.len(),
            mem: Buffer::from_bytes(&bytes),
        })
    }

    fn upload_f64(&self, data: &[f64]) -> Result<EmuBuf> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        Ok(EmuBuf {
            dtype: DType::F64,
            len: data.len(),
            mem: Buffer::from_bytes(&bytes),
        })
    }

    fn launch(&self, plan: &LaunchPlan, slots: &mut [Slot<'_, EmuBuf>]) -> Result<()> {
        plan.check(self, slots)?;
        LAUNCHED.with(|l| {
            if let Some(v) = l.borrow_mut().as_mut() {
                v.push(plan.kernel.clone());
            }
        });
        let args: Vec<Arg<'_>> = plan
            .args
            .iter()
            .map(|a| match *a {
                KernelArg::Buf {
                    slot,
                    dtype,
                    offset,
                    ..
                } => {
                    let at = offset * dtype.size_in_bytes();
                    match &slots[slot] {
                        Slot::In(b) => Arg::In(&b.mem, at),
                        Slot::Out(b) => Arg::Out(&b.mem, at),
                    }
                }
                KernelArg::Null => Arg::Null,
                KernelArg::I32(v) => Arg::Value(v.to_le_bytes().to_vec()),
                KernelArg::U32(v) => Arg::Value(v.to_le_bytes().to_vec()),
                KernelArg::U64(v) => Arg::Value(v.to_le_bytes().to_vec()),
                KernelArg::F32(v) => Arg::Value(v.to_le_bytes().to_vec()),
                KernelArg::F64(v) => Arg::Value(v.to_le_bytes().to_vec()),
            })
            .collect();
        let (g, b) = (plan.grid, plan.block);
        cuda_emu::launch(
            plan.module.stem(),
            &plan.kernel,
            [g.0, g.1, g.2],
            [b.0, b.1, b.2],
            &args,
        )
        .map_err(candle_core::Error::Msg)
    }
}

fn storage_bytes(s: &CpuStorage) -> Vec<u8> {
    fn raw<T: Copy>(v: &[T]) -> Vec<u8> {
        // SAFETY: plain-old-data elements, read as bytes.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
            .to_vec()
    }
    match s {
        CpuStorage::U8(v) => raw(v),
        CpuStorage::U32(v) => raw(v),
        CpuStorage::I64(v) => raw(v),
        CpuStorage::BF16(v) => raw(v),
        CpuStorage::F16(v) => raw(v),
        CpuStorage::F32(v) => raw(v),
        CpuStorage::F64(v) => raw(v),
        CpuStorage::F8E4M3(v) => raw(v),
        _ => panic!("unsupported dtype"),
    }
}

/// A CPU tensor's whole storage on the emulated device, with its layout (strides and
/// start offset kept: the launch code sees the same view as on a GPU).
pub fn upload(t: &Tensor) -> (EmuBuf, Layout) {
    let (storage, layout) = t.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else {
        panic!("upload wants a CPU tensor")
    };
    let bytes = storage_bytes(cpu);
    let buf = EmuBuf {
        dtype: t.dtype(),
        len: bytes.len() / t.dtype().size_in_bytes(),
        mem: Buffer::from_bytes(&bytes),
    };
    (buf, layout.clone())
}

/// A contiguous buffer as a CPU tensor of `shape`.
pub fn download(b: &EmuBuf, shape: impl Into<Shape>) -> Tensor {
    let bytes = b.mem.as_bytes();
    let shape = shape.into();
    assert_eq!(shape.elem_count(), b.len, "shape and buffer differ");
    macro_rules! vec_of {
        ($t:ty, $from:expr) => {{
            let v: Vec<$t> = bytes
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|c| $from(c.try_into().unwrap()))
                .collect();
            Tensor::from_vec(v, shape, &candle_core::Device::Cpu).unwrap()
        }};
    }
    match b.dtype {
        DType::F32 => vec_of!(f32, f32::from_le_bytes),
        DType::BF16 => vec_of!(half::bf16, |c| half::bf16::from_bits(u16::from_le_bytes(c))),
        DType::F16 => vec_of!(half::f16, |c| half::f16::from_bits(u16::from_le_bytes(c))),
        DType::U8 => vec_of!(u8, u8::from_le_bytes),
        DType::U32 => vec_of!(u32, u32::from_le_bytes),
        DType::I64 => vec_of!(i64, i64::from_le_bytes),
        DType::F64 => vec_of!(f64, f64::from_le_bytes),
        other => panic!("unsupported dtype {other:?}"),
    }
}

/// The emulated device uploads a plan's tables afresh for every transform.
impl candle_repro::fft::cuda::FftDevice for Emu {
    fn fft_tables(
        &self,
        plan: &candle_repro::fft::FftPlan,
    ) -> Result<std::sync::Arc<candle_repro::fft::cuda::FftTables<EmuBuf>>> {
        Ok(std::sync::Arc::new(candle_repro::fft::cuda::upload_tables(
            self, plan,
        )?))
    }
}
