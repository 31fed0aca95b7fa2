//! The device half of the deterministic FFT: launch plans of `kernels/fft/fft.cu` following an
//! [`FftPlan`](crate::fft::FftPlan)'s
//! [`DevicePlan`](crate::fft::device_plan::DevicePlan) (its launch steps and its own
//! tables, uploaded as the same bytes), so that a device transform has the CPU's bits.
//! The kernels' per-thread bodies are `kernels/fft/threads.cuh`, mirrors of src/fft
//! operation for operation; `tests/emulated_device.rs` runs these very launches on the
//! emulated device, and `tests/fft_cuda.rs` compares the real launches when a GPU is there.
//!
//! Every kernel is a grid-stride loop of independent threads, one launch per step (a
//! Stockham stage is one launch over all butterflies of all rows), so neither the grid, the
//! block size nor the schedule can change a bit, with one exception: a pure Stockham plan
//! of n <= [`FUSED_MAX_F32`](crate::fft::cuda::FUSED_MAX_F32) (F32) or [`FUSED_MAX_F64`](crate::fft::cuda::FUSED_MAX_F64) (F64Internal) runs as one launch of
//! `repro_fft_fused_<t>` ([`fused_stages`](crate::fft::cuda::fused_stages)), whole rows per block in shared memory, every
//! stage between `__syncthreads()` barriers. It applies the same per-butterfly functions to
//! the same values with the same table entries (see `kernels/fft/fft.cu`), so its bits are
//! the per-stage launches'; it only saves the round trip of the whole batch through device
//! memory at every stage. The choice depends on n and the precision alone.

use crate::fft::device_plan::{DevicePlan, Step, Table};
use crate::fft::kind::{FftKind, Norm, norm_divisor};
use crate::fft::plan::cached_plan;
use crate::fft::plan::{FftPlan, Precision};
use crate::launch::{Device, KernelArg, LaunchPlan, Module, Slot, contiguous};
use candle_core::{DType, Layout, Result, bail};
use std::sync::Arc;

/// Every kernel of `kernels/fft/fft.cu` (for the PTX lint).
pub const FFT_KERNELS: &[&str] = &[
    "repro_fft_deinterleave_f32",
    "repro_fft_deinterleave_f64",
    "repro_fft_interleave_f32",
    "repro_fft_interleave_f64",
    "repro_fft_stockham2_f32",
    "repro_fft_stockham4_f32",
    "repro_fft_stockham8_f32",
    "repro_fft_stockham2_f64",
    "repro_fft_stockham4_f64",
    "repro_fft_stockham8_f64",
    "repro_fft_stockham3_f32",
    "repro_fft_stockham5_f32",
    "repro_fft_stockham7_f32",
    "repro_fft_stockham3_f64",
    "repro_fft_stockham5_f64",
    "repro_fft_stockham7_f64",
    "repro_fft_stockham8_ozaki",
    "repro_fft_gemm_f32",
    "repro_fft_gemm_f64",
    "repro_fft_gemm_ozaki",
    "repro_fft_bluestein_in_f32",
    "repro_fft_bluestein_in_f64",
    "repro_fft_bluestein_mul_f32",
    "repro_fft_bluestein_mul_f64",
    "repro_fft_bluestein_out_f32",
    "repro_fft_bluestein_out_f64",
    "repro_fft_stockham8_ozaki_mma",
    "repro_fft_op_scale",
    "repro_fft_op_real_to_complex",
    "repro_fft_op_take_half",
    "repro_fft_op_hermitian",
    "repro_fft_op_real_part",
    "repro_fft_fused_f32",
    "repro_fft_fused_f64",
    "repro_fft_fused_swz_f32",
    "repro_fft_fused_swz_f64",
    "repro_fft_fused_swzv_f32",
    "repro_fft_fused_swzv_f64",
    "repro_fft_fused_swzv_cap1_f32",
    "repro_fft_fused_swzv_cap1_f64",
    "repro_fft_fused_swzv_cap2_f32",
    "repro_fft_fused_swzv_cap2_f64",
];

/// Which kernel runs a fused plan ([`fused_stages`]). All of them run the same butterflies
/// with the same functions on the same values in the same order, and differ only in where
/// the values live in shared memory and how wide the global accesses are (see
/// `kernels/fft/fft.cu`), so they give the same bits; the choice is fixed
/// ([`FusedVariant::DEFAULT`]), the others stay launchable for `examples/gpu_report.rs fft`,
/// which times them against each other and compares their bits on a GPU, and for the tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FusedVariant {
    /// `repro_fft_fused_<t>`: the first fused kernel, the plain shared layout (8-way and
    /// 4-way bank conflicts in the first two stages' stores) and 4-byte global accesses.
    Plain,
    /// `repro_fft_fused_swz_<t>`: the XOR-swizzled shared layout (no bank conflicts from
    /// n = 64 on), 4-byte global accesses.
    Swizzle,
    /// `repro_fft_fused_swzv_<t>`: the swizzle and 8-byte (float2) global accesses where the
    /// input and output are 8-byte aligned.
    SwizzleVec,
    /// `repro_fft_fused_swzv_cap1_<t>`: swzv capped at 96 registers (f32) / 128 (f64), for
    /// more resident blocks per SM (possibly spilling).
    SwizzleVecCap1,
    /// `repro_fft_fused_swzv_cap2_<t>`: swzv capped at 64 registers (f32) / 96 (f64).
    SwizzleVecCap2,
}

impl FusedVariant {
    /// The variant the library launches.
    pub const DEFAULT: FusedVariant = FusedVariant::SwizzleVec;
    /// Every variant.
    pub const ALL: [FusedVariant; 5] = [
        FusedVariant::Plain,
        FusedVariant::Swizzle,
        FusedVariant::SwizzleVec,
        FusedVariant::SwizzleVecCap1,
        FusedVariant::SwizzleVecCap2,
    ];

    /// The kernel's name without the type suffix.
    pub fn kernel(self) -> &'static str {
        match self {
            FusedVariant::Plain => "repro_fft_fused",
            FusedVariant::Swizzle => "repro_fft_fused_swz",
            FusedVariant::SwizzleVec => "repro_fft_fused_swzv",
            FusedVariant::SwizzleVecCap1 => "repro_fft_fused_swzv_cap1",
            FusedVariant::SwizzleVecCap2 => "repro_fft_fused_swzv_cap2",
        }
    }
}

/// Precision::Ozaki radix-8 stages on tensor cores (`repro_fft_stockham8_ozaki_mma`,
/// `kernels/fft/ozaki_mma.cuh`, sm_80+) instead of the plain f32 loop. Off: the mma kernel
/// has not run on a GPU yet, while the plain kernel's bits are host-checked against the CPU.
/// Both compute the same exact slice products, so turning it on must change no bit: the
/// emulated device shows it (tests/emulated_device.rs), tests/fft_cuda.rs on a GPU.
pub const OZAKI_MMA: bool = false;

/// Threads per block (`REPRO_FFT_BLOCK`).
const BLOCK: u32 = 256;

/// Complex values per block of `repro_fft_fused_f32` (`REPRO_FFT_FUSED_F32`): its static
/// shared memory holds that many f32 real and imaginary parts (32 KiB; CUDA's static
/// limit is 48 KiB), so it takes rows of n up to this, `FUSED_MAX_F32 / n` rows per block.
pub const FUSED_MAX_F32: usize = 4096;
/// Complex values per block of `repro_fft_fused_f64` (`REPRO_FFT_FUSED_F64`, f64 parts:
/// 32 KiB again).
pub const FUSED_MAX_F64: usize = 2048;
/// Rows shorter than this many complex values are grouped into blocks of this many values in
/// `repro_fft_fused_f32` (`REPRO_FFT_FUSED_BLOCK_F32`): blocks of 128 threads, so that
/// several blocks share an SM and one block's loads overlap another's stages.
pub const FUSED_BLOCK_F32: usize = 1024;
/// The same for `repro_fft_fused_f64` (`REPRO_FFT_FUSED_BLOCK_F64`, blocks of 64 threads).
pub const FUSED_BLOCK_F64: usize = 512;

/// The stages (radix, ns, twiddle offset) of `p` when it runs as one launch of
/// `repro_fft_fused_<t>`: a plan that is exactly Deinterleave, Stockham stages of its own
/// length n without Ozaki digits, Interleave (Precision::F32 and F64Internal, n a power of
/// two 16..=[`FUSED_MAX_F32`] resp. [`FUSED_MAX_F64`]); `None` for every other plan (the
/// DFT-GEMM sizes, Bluestein, Ozaki, longer rows), which runs step by step. A function of
/// the plan alone, hence of (n, precision).
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_repro::fft::cuda::fused_stages;
/// use candle_repro::fft::{FftPlan, Precision};
///
/// let st = fused_stages(&FftPlan::new(1024, Precision::F32)?.device_plan()).unwrap();
/// assert_eq!(st.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(), [(8, 1), (8, 8), (8, 64), (2, 512)]);
/// assert!(fused_stages(&FftPlan::new(4096, Precision::F64Internal)?.device_plan()).is_none());
/// assert!(fused_stages(&FftPlan::new(1024, Precision::Ozaki)?.device_plan()).is_none());
/// # Ok(()) }
/// ```
pub fn fused_stages(p: &DevicePlan) -> Option<Vec<(usize, usize, usize)>> {
    let max = if p.is_f64() {
        FUSED_MAX_F64
    } else {
        FUSED_MAX_F32
    };
    let n = p.n;
    if p.precision == Precision::Ozaki || !n.is_power_of_two() || n < 16 || n > max {
        return None;
    }
    let [
        Step::Deinterleave { dst: first },
        middle @ ..,
        Step::Interleave { src: last },
    ] = p.steps.as_slice()
    else {
        return None;
    };
    // One chain of stages from the loaded buffer to the stored one.
    let mut at = *first;
    let mut stages = Vec::with_capacity(middle.len());
    for step in middle {
        match *step {
            Step::Stage {
                src,
                dst,
                len,
                radix,
                ns,
                tw,
                ozaki: None,
            } if src == at && len == n && matches!(radix, 2 | 4 | 8) => {
                stages.push((radix, ns, tw));
                at = dst;
            }
            _ => return None,
        }
    }
    // The kernel takes at most 4 stages (8^4 = 4096) and runs n / 8 threads per row.
    let fits = (1..=4).contains(&stages.len()) && stages[0].0 == 8;
    (fits && at == *last).then_some(stages)
}

/// A plan's device tables: the launch steps, the table (F32 or F64, the working type) and
/// the Ozaki digits (F32).
pub struct FftTables<B> {
    /// The flattened plan.
    pub plan: DevicePlan,
    /// [`DevicePlan::table`] on the device.
    pub table: B,
    /// [`DevicePlan::digits`] on the device.
    pub digits: B,
}

/// Where a device gets a plan's tables: [`upload_tables`] each time, or a cache (the GPU
/// keeps one per device, n and precision).
pub trait FftDevice: Device {
    /// The tables of `plan` on this device.
    fn fft_tables(&self, plan: &FftPlan) -> Result<Arc<FftTables<Self::Buffer>>>;
}

/// `plan`'s tables uploaded to `dev`.
pub fn upload_tables<D: Device + ?Sized>(dev: &D, plan: &FftPlan) -> Result<FftTables<D::Buffer>> {
    let dp = plan.device_plan();
    let table = match &dp.table {
        Table::F32(t) => dev.upload_f32(t)?,
        Table::F64(t) => dev.upload_f64(t)?,
    };
    let digits = dev.upload_f32(&dp.digits)?;
    Ok(FftTables {
        plan: dp,
        table,
        digits,
    })
}

/// One thread per item, grid-stride (the grid changes no result).
fn plan(kernel: String, total: usize) -> LaunchPlan {
    let blocks = total.div_ceil(BLOCK as usize).clamp(1, i32::MAX as usize) as u32;
    LaunchPlan::new(Module::Fft, kernel, blocks, BLOCK).arg(KernelArg::U64(total as u64))
}

/// `d` of the op kernels: (has_d, d).
fn d_args(p: LaunchPlan, d: Option<f32>) -> LaunchPlan {
    p.arg(KernelArg::I32(d.is_some() as i32))
        .arg(KernelArg::F32(d.unwrap_or(1.0)))
}

/// One op kernel over contiguous f32 `x` (from element `x0`, `x_len` values) into a new
/// buffer of `out_len` values; `args` adds the arguments between the count and the input.
fn op_kernel<D: Device + ?Sized>(
    dev: &D,
    kernel: &str,
    total: usize,
    args: impl FnOnce(LaunchPlan) -> LaunchPlan,
    (x, x0, x_len): (&D::Buffer, usize, usize),
    out_len: usize,
) -> Result<D::Buffer> {
    let mut out = dev.alloc(DType::F32, out_len)?;
    if total == 0 {
        return Ok(out);
    }
    let p = args(plan(kernel.to_string(), total))
        .buf(0, DType::F32, x0, x_len)
        .buf(1, DType::F32, 0, out_len);
    dev.launch(&p, &mut [Slot::In(x), Slot::Out(&mut out)])?;
    Ok(out)
}

/// Forward (or, `inverse`, unnormalized inverse) transforms of the rows of interleaved
/// complex f32 values in `src` (from element `start`, `values` of them, rows of n): a new
/// buffer with the bits of [`FftPlan::forward_out_of_place`] /
/// [`FftPlan::inverse_out_of_place`]. `mma`: the Ozaki radix-8 stages on tensor cores.
pub fn transform<D: FftDevice + ?Sized>(
    dev: &D,
    plan: &FftPlan,
    inverse: bool,
    mma: bool,
    (src, start, values): (&D::Buffer, usize, usize),
) -> Result<D::Buffer> {
    let n = plan.len();
    if !values.is_multiple_of(2 * n) {
        bail!("fft (cuda): {values} f32 values are not rows of {n} complex values")
    }
    let rows = values / (2 * n);
    let mut out = dev.alloc(DType::F32, values)?;
    if rows > 0 {
        let tables = dev.fft_tables(plan)?;
        run(dev, &tables, rows, inverse, mma, (src, start), &mut out)?;
    }
    Ok(out)
}

/// A split working buffer.
struct SplitBuf<B> {
    re: B,
    im: B,
}

fn pair<T>(v: &mut [T], a: usize, b: usize) -> (&T, &mut T) {
    assert_ne!(a, b, "a step reads and writes different buffers");
    if a < b {
        let (x, y) = v.split_at_mut(b);
        (&x[a], &mut y[0])
    } else {
        let (x, y) = v.split_at_mut(a);
        (&y[0], &mut x[b])
    }
}

/// Launches the plan's steps (see [`DevicePlan`]); `src` holds rows * n interleaved complex
/// f32 values from `start`, `out` receives as many.
fn run<D: Device + ?Sized>(
    dev: &D,
    u: &FftTables<D::Buffer>,
    rows: usize,
    inverse: bool,
    mma: bool,
    (src, start): (&D::Buffer, usize),
    out: &mut D::Buffer,
) -> Result<()> {
    let p = &u.plan;
    let n = p.n;
    let work = if p.is_f64() { DType::F64 } else { DType::F32 };
    let suffix = if p.is_f64() { "f64" } else { "f32" };
    let len = rows * p.buffer_len;
    if p.precision == Precision::Ozaki && p.is_f64() {
        bail!("fft (cuda): Ozaki steps on f64 buffers")
    }
    if let Some(stages) = fused_stages(p) {
        return run_fused(dev, u, rows, inverse, &stages, (src, start), out);
    }
    let mut bufs = Vec::with_capacity(p.buffers);
    for _ in 0..p.buffers {
        bufs.push(SplitBuf {
            re: dev.alloc(work, len)?,
            im: dev.alloc(work, len)?,
        });
    }
    let table = &u.table;
    let inv = KernelArg::I32(inverse as i32);
    let typed = |name: &str| format!("repro_fft_{name}_{suffix}");
    // Most steps: (total, [values], src re/im (slots 0, 1), dst re/im (2, 3), [tables from
    // slot 4 on]); `tables` lists (offset, len) views of the table, or of the digits.
    for step in &p.steps {
        match *step {
            Step::Deinterleave { dst } => {
                let total = rows * n;
                let d = &mut bufs[dst];
                let pl = plan(typed("deinterleave"), total)
                    .arg(inv.clone())
                    .buf(0, DType::F32, start, 2 * total)
                    .buf(1, work, 0, total)
                    .buf(2, work, 0, total);
                dev.launch(
                    &pl,
                    &mut [Slot::In(src), Slot::Out(&mut d.re), Slot::Out(&mut d.im)],
                )?;
            }
            Step::Interleave { src: s } => {
                let total = rows * n;
                let s = &bufs[s];
                let pl = plan(typed("interleave"), total)
                    .arg(inv.clone())
                    .buf(0, work, 0, total)
                    .buf(1, work, 0, total)
                    .buf(2, DType::F32, 0, 2 * total);
                dev.launch(&pl, &mut [Slot::In(&s.re), Slot::In(&s.im), Slot::Out(out)])?;
            }
            Step::Gemm { src: s, dst, w } => {
                let total = rows * n;
                let (s, d) = pair(&mut bufs, s, dst);
                let pl = plan(typed("gemm"), total)
                    .arg(KernelArg::I32(n as i32))
                    .buf(0, work, 0, total)
                    .buf(1, work, 0, total)
                    .buf(2, work, 0, total)
                    .buf(3, work, 0, total)
                    .buf(4, work, w, n * n)
                    .buf(4, work, w + n * n, n * n);
                launch_step(dev, &pl, s, d, table)?;
            }
            Step::GemmOzaki {
                src: s,
                dst,
                digits,
            } => {
                let total = rows * 2 * n;
                let values = rows * n;
                let (s, d) = pair(&mut bufs, s, dst);
                let pl = plan("repro_fft_gemm_ozaki".into(), total)
                    .arg(KernelArg::I32(n as i32))
                    .buf(0, DType::F32, 0, values)
                    .buf(1, DType::F32, 0, values)
                    .buf(2, DType::F32, 0, values)
                    .buf(3, DType::F32, 0, values)
                    .buf(4, DType::F32, digits, dev.len(&u.digits) - digits);
                launch_step(dev, &pl, s, d, &u.digits)?;
            }
            Step::Stage {
                src: s,
                dst,
                len: l,
                radix,
                ns,
                tw,
                ozaki,
            } => {
                let total = rows * l / radix;
                let values = rows * l;
                let k = (radix - 1) * ns;
                // ns = 1: no twiddle is read; the table's start stands in.
                let (tr, ti) = if ns > 1 { (tw, tw + k) } else { (0, 0) };
                let k = if ns > 1 { k } else { 0 };
                let (s, d) = pair(&mut bufs, s, dst);
                let kernel = match ozaki {
                    Some(_) if mma => "repro_fft_stockham8_ozaki_mma".to_string(),
                    Some(_) => "repro_fft_stockham8_ozaki".to_string(),
                    None => format!("repro_fft_stockham{radix}_{suffix}"),
                };
                let pl = plan(kernel, total)
                    .arg(KernelArg::U64(l as u64))
                    .arg(KernelArg::U64(ns as u64))
                    .buf(0, work, 0, values)
                    .buf(1, work, 0, values)
                    .buf(2, work, 0, values)
                    .buf(3, work, 0, values)
                    .buf(4, work, tr, k)
                    .buf(4, work, ti, k);
                match ozaki {
                    Some(w8) => {
                        let pl = pl.buf(5, DType::F32, w8, dev.len(&u.digits) - w8);
                        let slots = &mut [
                            Slot::In(&s.re),
                            Slot::In(&s.im),
                            Slot::Out(&mut d.re),
                            Slot::Out(&mut d.im),
                            Slot::In(table),
                            Slot::In(&u.digits),
                        ];
                        dev.launch(&pl, slots)?;
                    }
                    None => launch_step(dev, &pl, s, d, table)?,
                }
            }
            Step::BluesteinIn {
                src: s,
                dst,
                m,
                chirp,
            }
            | Step::BluesteinOut {
                src: s,
                dst,
                m,
                chirp,
            } => {
                let into = matches!(step, Step::BluesteinIn { .. });
                // In: x (rows of n) -> a (rows of m); out: a -> x.
                let (total, src_len, dst_len) = if into {
                    (rows * m, rows * n, rows * m)
                } else {
                    (rows * n, rows * m, rows * n)
                };
                let name = if into {
                    "bluestein_in"
                } else {
                    "bluestein_out"
                };
                let (s, d) = pair(&mut bufs, s, dst);
                let pl = plan(typed(name), total)
                    .arg(KernelArg::U64(n as u64))
                    .arg(KernelArg::U64(m as u64))
                    .buf(0, work, 0, src_len)
                    .buf(1, work, 0, src_len)
                    .buf(2, work, 0, dst_len)
                    .buf(3, work, 0, dst_len)
                    .buf(4, work, chirp, n)
                    .buf(4, work, chirp + n, n);
                launch_step(dev, &pl, s, d, table)?;
            }
            Step::BluesteinMul { buf, m, kernel } => {
                let total = rows * m;
                let a = &mut bufs[buf];
                let pl = plan(typed("bluestein_mul"), total)
                    .arg(KernelArg::U64(m as u64))
                    .buf(0, work, 0, total)
                    .buf(1, work, 0, total)
                    .buf(2, work, kernel, m)
                    .buf(2, work, kernel + m, m);
                let slots = &mut [Slot::Out(&mut a.re), Slot::Out(&mut a.im), Slot::In(table)];
                dev.launch(&pl, slots)?;
            }
        }
    }
    Ok(())
}

/// A pure Stockham plan ([`fused_stages`]) as one launch of the fused kernel
/// ([`FusedVariant::DEFAULT`]).
fn run_fused<D: Device + ?Sized>(
    dev: &D,
    u: &FftTables<D::Buffer>,
    rows: usize,
    inverse: bool,
    stages: &[(usize, usize, usize)],
    (src, start): (&D::Buffer, usize),
    out: &mut D::Buffer,
) -> Result<()> {
    let pl = fused_launch(
        &u.plan,
        stages,
        rows,
        inverse,
        start,
        dev.len(&u.table),
        u32::MAX,
    );
    dev.launch(
        &pl,
        &mut [Slot::In(src), Slot::Out(out), Slot::In(&u.table)],
    )
}

/// The launch of the fused kernel ([`FusedVariant::DEFAULT`]; `repro_fft_fused_<t>` and its
/// variants share grid, block and arguments) for `rows` rows of `p` (its [`fused_stages`]), input
/// from element `start` of slot 0, output slot 1, the table (`table_len` values) slot 2:
/// blocks of max(n, b) / 8 threads, each taking max(b / n, 1) whole rows at a time (b =
/// [`FUSED_BLOCK_F32`] or [`FUSED_BLOCK_F64`]), one block per group of rows up to
/// `max_blocks` (and the grid limit); the blocks stride over the groups beyond.
/// Rows per block, threads per row and the grid change no bit. Public for the tests, which
/// also launch it with fewer blocks than groups.
#[doc(hidden)]
pub fn fused_launch(
    p: &DevicePlan,
    stages: &[(usize, usize, usize)],
    rows: usize,
    inverse: bool,
    start: usize,
    table_len: usize,
    max_blocks: u32,
) -> LaunchPlan {
    fused_launch_variant(
        p,
        stages,
        rows,
        inverse,
        start,
        table_len,
        max_blocks,
        FusedVariant::DEFAULT,
    )
}

/// [`fused_launch`] of a given [`FusedVariant`] (same grid, block and arguments).
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn fused_launch_variant(
    p: &DevicePlan,
    stages: &[(usize, usize, usize)],
    rows: usize,
    inverse: bool,
    start: usize,
    table_len: usize,
    max_blocks: u32,
    variant: FusedVariant,
) -> LaunchPlan {
    let n = p.n;
    let (suffix, work, block) = if p.is_f64() {
        ("f64", DType::F64, FUSED_BLOCK_F64)
    } else {
        ("f32", DType::F32, FUSED_BLOCK_F32)
    };
    let values_per_block = block.max(n);
    let groups = rows.div_ceil(values_per_block / n);
    let blocks = groups.clamp(1, (i32::MAX as usize).min(max_blocks as usize)) as u32;
    let values = 2 * rows * n;
    let mut pl = LaunchPlan::new(
        Module::Fft,
        format!("{}_{suffix}", variant.kernel()),
        blocks,
        (values_per_block / 8) as u32,
    )
    .arg(KernelArg::U64(rows as u64))
    .arg(KernelArg::U64(n as u64))
    .arg(KernelArg::I32(inverse as i32))
    .buf(0, DType::F32, start, values)
    .buf(1, DType::F32, 0, values)
    .buf(2, work, 0, table_len)
    .arg(KernelArg::I32(stages.len() as i32));
    for s in 0..4 {
        let (radix, ns, tw) = stages.get(s).copied().unwrap_or((0, 0, 0));
        pl = pl
            .arg(KernelArg::I32(radix as i32))
            .arg(KernelArg::U64(ns as u64))
            .arg(KernelArg::U64(tw as u64));
    }
    pl
}

/// A step reading split buffer `s` (slots 0, 1), writing `d` (2, 3), with views of `table`
/// (slot 4).
fn launch_step<D: Device + ?Sized>(
    dev: &D,
    pl: &LaunchPlan,
    s: &SplitBuf<D::Buffer>,
    d: &mut SplitBuf<D::Buffer>,
    table: &D::Buffer,
) -> Result<()> {
    let slots = &mut [
        Slot::In(&s.re),
        Slot::In(&s.im),
        Slot::Out(&mut d.re),
        Slot::Out(&mut d.im),
        Slot::In(table),
    ];
    dev.launch(pl, slots)
}

/// The forward pass of the candle FFT ops ([`crate::fft::fft`], `ifft`, `rfft`, `irfft`)
/// on a device (dimensions as the op checks them): the CPU op's steps (core/src/fft/rows.rs
/// `transform`) with the same arithmetic: rfft transforms x + 0i and keeps the first
/// n/2 + 1 outputs, irfft extends the half spectrum Hermitian, transforms it inversely and
/// keeps the real parts, and the outputs are divided by the op's [`norm_divisor`] (one IEEE
/// division per value, canonical NaN). A strided input is first gathered on the device.
#[allow(clippy::too_many_arguments)]
pub fn fft_op<D: FftDevice + ?Sized>(
    dev: &D,
    kind: FftKind,
    n: usize,
    norm: Norm,
    precision: Precision,
    mma: bool,
    x: &D::Buffer,
    layout: &Layout,
) -> Result<D::Buffer> {
    if dev.dtype(x) != DType::F32 {
        return Err(candle_core::Error::UnsupportedDTypeForOp(
            dev.dtype(x),
            kind.name(),
        ));
    }
    let mut slot = None;
    let (src, start) = contiguous(dev, x, layout, &mut slot)?;
    let count = layout.shape().elem_count();
    let plan = cached_plan(n, precision)?;
    let d = norm_divisor(kind, norm, n);
    let scale = |y: D::Buffer, values: usize| -> Result<D::Buffer> {
        match d {
            Some(_) => op_kernel(
                dev,
                "repro_fft_op_scale",
                values,
                |p| d_args(p, d),
                (&y, 0, values),
                values,
            ),
            None => Ok(y),
        }
    };
    match kind {
        FftKind::Fft | FftKind::Ifft => {
            let y = transform(dev, &plan, kind == FftKind::Ifft, mma, (src, start, count))?;
            scale(y, count)
        }
        FftKind::Rfft => {
            let c = op_kernel(
                dev,
                "repro_fft_op_real_to_complex",
                count,
                |p| p,
                (src, start, count),
                2 * count,
            )?;
            let y = transform(dev, &plan, false, mma, (&c, 0, 2 * count))?;
            let rows = count / n;
            let half = n / 2 + 1;
            let args = |p: LaunchPlan| {
                d_args(
                    p.arg(KernelArg::U64(n as u64))
                        .arg(KernelArg::U64(half as u64)),
                    d,
                )
            };
            op_kernel(
                dev,
                "repro_fft_op_take_half",
                rows * half,
                args,
                (&y, 0, 2 * count),
                2 * rows * half,
            )
        }
        FftKind::Irfft => {
            let dims = layout.dims();
            let m = dims[dims.len() - 2];
            let rows = if m == 0 { 0 } else { count / (2 * m) };
            let total = rows * n;
            let args = |p: LaunchPlan| {
                p.arg(KernelArg::U64(m as u64))
                    .arg(KernelArg::U64(n as u64))
            };
            let c = op_kernel(
                dev,
                "repro_fft_op_hermitian",
                total,
                args,
                (src, start, count),
                2 * total,
            )?;
            let y = transform(dev, &plan, true, mma, (&c, 0, 2 * total))?;
            op_kernel(
                dev,
                "repro_fft_op_real_part",
                total,
                |p| d_args(p, d),
                (&y, 0, 2 * total),
                total,
            )
        }
    }
}

#[cfg(feature = "cuda")]
mod on_cuda {
    use super::{FftDevice, FftKind, FftTables, Norm, upload_tables};
    use crate::fft::{FftPlan, Precision};
    use candle_core::cuda_backend::WrapErr;
    use candle_core::{CudaDevice, CudaStorage, Layout, Result};
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};

    /// A plan's tables on one device, with the context they live in.
    struct Uploaded {
        tables: Arc<FftTables<CudaStorage>>,
        ctx: Arc<candle_core::cuda_backend::cudarc::driver::CudaContext>,
    }

    impl Drop for Uploaded {
        /// Kernels on any stream of the context may still read the tables (a thread that
        /// launched one may drop the last reference right after, and the cache may evict
        /// an entry another thread is using): wait for all of the context's work before
        /// the tables can be freed. The context is bound first, so the tables of another
        /// GPU are waited for on that GPU.
        fn drop(&mut self) {
            let _ = self.ctx.synchronize();
        }
    }

    type Key = (candle_core::cuda_backend::DeviceId, usize, Precision);

    /// Plans uploaded per (device, n, precision): the tables are a pure function of (n,
    /// precision), so a cached copy is the same bytes. Cleared when it grows past
    /// [`CACHE_MAX`] entries.
    fn cache() -> &'static Mutex<HashMap<Key, Arc<Uploaded>>> {
        static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Uploaded>>>> = OnceLock::new();
        CACHE.get_or_init(|| Mutex::new(HashMap::new()))
    }

    const CACHE_MAX: usize = 64;

    impl FftDevice for CudaDevice {
        fn fft_tables(&self, plan: &FftPlan) -> Result<Arc<FftTables<CudaStorage>>> {
            let key = (self.id(), plan.len(), plan.precision());
            if let Some(u) = cache().lock().unwrap().get(&key) {
                return Ok(u.tables.clone());
            }
            let tables = Arc::new(upload_tables(self, plan)?);
            // The copies ran on this device's stream; another stream (another thread's
            // device handle) may use the cached tables at once: wait for them to land.
            let stream = self.cuda_stream();
            stream.synchronize().w()?;
            let u = Arc::new(Uploaded {
                tables: tables.clone(),
                ctx: stream.context().clone(),
            });
            let mut c = cache().lock().unwrap();
            if c.len() >= CACHE_MAX {
                c.clear();
            }
            c.insert(key, u);
            Ok(tables)
        }
    }

    /// The candle op's CUDA forward pass (`FftOp::cuda_fwd`).
    pub(crate) fn op_fwd(
        kind: FftKind,
        n: usize,
        norm: Norm,
        precision: Precision,
        storage: &CudaStorage,
        layout: &Layout,
    ) -> Result<CudaStorage> {
        let dev = &storage.device;
        super::fft_op(
            dev,
            kind,
            n,
            norm,
            precision,
            super::OZAKI_MMA,
            storage,
            layout,
        )
    }

    /// Forward (or, `inverse`, unnormalized inverse) transforms of the rows of a contiguous
    /// f32 tensor of shape (.., n, 2) on CUDA, `mma` as [`super::transform`]: a test hook
    /// (tests/fft_cuda.rs compares with the CPU).
    #[doc(hidden)]
    pub fn fft_rows_with(
        plan: &FftPlan,
        inverse: bool,
        mma: bool,
        storage: &CudaStorage,
        layout: &Layout,
    ) -> Result<CudaStorage> {
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("fft (cuda): the input must be contiguous")
        };
        super::transform(
            &storage.device,
            plan,
            inverse,
            mma,
            (storage, start, end - start),
        )
    }
}
#[cfg(feature = "cuda")]
pub use on_cuda::fft_rows_with;
#[cfg(feature = "cuda")]
pub(crate) use on_cuda::op_fwd;
