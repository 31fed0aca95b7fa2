//! The launch layer: every CUDA path of the crate first computes a [`LaunchPlan`] (kernel,
//! grid, block, typed arguments) from the op's parameters alone, then a [`Device`] runs it.
//!
//! Two devices implement [`Device`]: candle's `CudaDevice` (feature `cuda`, `cuda.rs`: the
//! plan's kernel from the module's PTX, launched with cudarc), and the CPU-emulated device
//! of the repository's tests (`tools/cuda-emu`, through `tests/common/emu.rs`), which runs
//! the same `kernels/*/*.cu` text compiled as host C++. Both run the very plans and argument
//! lists computed here and in each family's device half (`launch_*` functions), so the
//! emulator checks the launch code (sizes, offsets, argument order, grid) along with the
//! kernels, on any machine.
//!
//! A plan depends only on the op's parameters (shape, dtype, layout, mode): never on the
//! device it runs on.

pub mod gather;
pub use gather::{contiguous, gather};

#[cfg(feature = "cuda")]
pub(crate) mod cuda;
#[cfg(feature = "cuda")]
pub use cuda::PTX_MODULES;

use candle_core::{DType, Result, bail};

/// A kernel module: `kernels/<family>/<stem>.cu`, one PTX module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    /// `kernels/elementwise/elementwise.cu`: the unary functions.
    Elementwise,
    /// `kernels/softmax/softmax.cu`: softmax and log-softmax, forward and backward.
    Softmax,
    /// `kernels/launch/gather.cu`: strided gathers with 64-bit offsets.
    Gather,
    /// `kernels/arith/arith.cu`: the correctly rounded add.
    Arith,
    /// `kernels/rope/rope.cu`: rotary embeddings.
    Rope,
    /// `kernels/fft/fft.cu`: the FFT plan steps.
    Fft,
    /// `kernels/matmul/matmul.cu`: the matmul and its statistics, the f8 conversion.
    Matmul,
    /// `kernels/norm/norm.cu`: RMS and layer norms.
    Norm,
    /// `kernels/quantized/quantized.cu`: products with quantized weights.
    Quantized,
    /// `kernels/audio/audio.cu`: the audio front end's framing, power and log-mel steps.
    Audio,
}

impl Module {
    /// Every module.
    pub const ALL: [Module; 10] = [
        Module::Elementwise,
        Module::Softmax,
        Module::Gather,
        Module::Arith,
        Module::Rope,
        Module::Fft,
        Module::Matmul,
        Module::Norm,
        Module::Quantized,
        Module::Audio,
    ];

    /// The file stem: `kernels/<family>/<stem>.cu`, the PTX module's name.
    pub fn stem(self) -> &'static str {
        match self {
            Module::Elementwise => "elementwise",
            Module::Softmax => "softmax",
            Module::Gather => "gather",
            Module::Arith => "arith",
            Module::Rope => "rope",
            Module::Fft => "fft",
            Module::Matmul => "matmul",
            Module::Norm => "norm",
            Module::Quantized => "quantized",
            Module::Audio => "audio",
        }
    }
}

/// One kernel argument, in the kernel's parameter order.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    /// A pointer into buffer `slot` of the launch's buffer list, at element `offset`; the
    /// kernel may touch `len` elements from there (checked against the buffer's length).
    Buf {
        /// Index into the launch's slots.
        slot: usize,
        /// Element type the kernel reads the buffer as.
        dtype: DType,
        /// Elements before the pointer.
        offset: usize,
        /// Elements the kernel may touch from the pointer.
        len: usize,
    },
    /// A null pointer (an absent optional array).
    Null,
    /// `int32_t`.
    I32(i32),
    /// `uint32_t`.
    U32(u32),
    /// `uint64_t` / `size_t`.
    U64(u64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
}

/// A kernel launch, computed from an op's parameters: what a [`Device`] runs.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchPlan {
    /// The kernel file.
    pub module: Module,
    /// The `extern "C"` kernel name.
    pub kernel: String,
    /// Blocks (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads per block (x, y, z).
    pub block: (u32, u32, u32),
    /// The arguments.
    pub args: Vec<KernelArg>,
}

/// A launch's buffer: read only, or written.
pub enum Slot<'a, B> {
    /// The kernel reads it.
    In(&'a B),
    /// The kernel writes it (and may read it).
    Out(&'a mut B),
}

impl<B> Slot<'_, B> {
    /// The buffer.
    pub fn buffer(&self) -> &B {
        match self {
            Slot::In(b) => b,
            Slot::Out(b) => b,
        }
    }
}

/// A device that runs launch plans: candle's CUDA device, or the emulated one of the tests.
pub trait Device {
    /// Device memory of one dtype.
    type Buffer;
    /// The buffer's element type.
    fn dtype(&self, b: &Self::Buffer) -> DType;
    /// The buffer's length in elements.
    fn len(&self, b: &Self::Buffer) -> usize;
    /// A buffer of `len` elements of `dtype`, contents unspecified (every plan writes all
    /// of its output).
    fn alloc(&self, dtype: DType, len: usize) -> Result<Self::Buffer>;
    /// A buffer holding `data` (dims and strides; I64 elements with the u64 bits).
    fn upload_u64(&self, data: &[u64]) -> Result<Self::Buffer>;
    /// A buffer holding `data` (U8: a quantized weight's block bytes and sign classes).
    fn upload_u8(&self, data: &[u8]) -> Result<Self::Buffer>;
    /// A buffer holding `data` (F32: tables such as rope's frequencies, the FFT's).
    fn upload_f32(&self, data: &[f32]) -> Result<Self::Buffer>;
    /// A buffer holding `data` (F64: the FFT's tables in f64 plans).
    fn upload_f64(&self, data: &[f64]) -> Result<Self::Buffer>;
    /// Run `plan` with `slots` as its buffers. Implementations call [`LaunchPlan::check`]
    /// first.
    fn launch(&self, plan: &LaunchPlan, slots: &mut [Slot<'_, Self::Buffer>]) -> Result<()>;
}

impl LaunchPlan {
    /// A one-dimensional launch of `kernel`.
    pub fn new(module: Module, kernel: String, blocks: u32, threads: u32) -> Self {
        LaunchPlan {
            module,
            kernel,
            grid: (blocks, 1, 1),
            block: (threads, 1, 1),
            args: Vec::new(),
        }
    }

    /// Append an argument.
    pub fn arg(mut self, a: KernelArg) -> Self {
        self.args.push(a);
        self
    }

    /// Append a pointer to buffer `slot` from element `offset`, `len` elements of `dtype`.
    pub fn buf(self, slot: usize, dtype: DType, offset: usize, len: usize) -> Self {
        self.arg(KernelArg::Buf {
            slot,
            dtype,
            offset,
            len,
        })
    }

    /// Check the plan against its buffers: every pointer names a slot of its dtype and
    /// stays inside it, every slot is used, the configuration is launchable.
    pub fn check<D: Device + ?Sized>(&self, dev: &D, slots: &[Slot<'_, D::Buffer>]) -> Result<()> {
        let k = &self.kernel;
        let (b, g) = (self.block, self.grid);
        let threads = b.0 as u64 * b.1 as u64 * b.2 as u64;
        if threads == 0 || threads > 1024 || g.0 == 0 || g.1 == 0 || g.2 == 0 {
            bail!("{k}: cannot launch grid {g:?} of blocks {b:?}")
        }
        let mut used = vec![false; slots.len()];
        for (i, a) in self.args.iter().enumerate() {
            if let KernelArg::Buf {
                slot,
                dtype,
                offset,
                len,
            } = *a
            {
                let Some(s) = slots.get(slot) else {
                    bail!("{k}: argument {i} names buffer {slot} of {}", slots.len())
                };
                used[slot] = true;
                let (have, n) = (dev.dtype(s.buffer()), dev.len(s.buffer()));
                if have.size_in_bytes() != dtype.size_in_bytes() {
                    bail!("{k}: argument {i} reads a {have:?} buffer as {dtype:?}")
                }
                if offset.checked_add(len).is_none_or(|end| end > n) {
                    bail!(
                        "{k}: argument {i} spans elements {offset}..+{len} of a {n}-element buffer"
                    )
                }
            }
        }
        if let Some(unused) = used.iter().position(|u| !u) {
            bail!("{k}: buffer {unused} is passed but no argument points into it")
        }
        Ok(())
    }
}

/// The kernel-name suffix of a float dtype (`f32`, `bf16`, `f16`).
pub fn float_suffix(dtype: DType, op: &'static str) -> Result<&'static str> {
    Ok(match dtype {
        DType::F32 => "f32",
        DType::BF16 => "bf16",
        DType::F16 => "f16",
        other => return Err(candle_core::Error::UnsupportedDTypeForOp(other, op).bt()),
    })
}

/// Blocks for a grid-stride loop over `count` items, `threads` per block, at most
/// `max_blocks` (the loop covers the rest; no result depends on the grid).
pub fn grid_stride_blocks(count: u64, threads: u32, max_blocks: u64) -> u32 {
    count.div_ceil(threads as u64).clamp(1, max_blocks) as u32
}
