//! The deterministic FFT on CUDA: launches of `kernels/fft.cu` following an
//! [`FftPlan`]'s [`DevicePlan`] (its launch steps and its own tables, uploaded as the same
//! bytes), so that a CUDA transform has the CPU's bits. The kernels' per-thread bodies are
//! `kernels/fft/threads.cuh`, mirrors of src/fft operation for operation; the host check
//! `tests/fft_kernel_hostcheck.rs` runs those bodies through the same steps on the CPU and
//! compares with [`FftPlan`] bit for bit (no GPU needed); `tests/fft_cuda.rs` compares the
//! real launches when a GPU is there.
//!
//! Every kernel is a grid-stride loop of independent threads, one launch per step (a
//! Stockham stage is one launch over all butterflies of all rows), so neither the grid, the
//! block size nor the schedule can change a bit.

use crate::fft::device_plan::{DevicePlan, Step, Table};
use crate::fft::{FftPlan, Precision};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{CudaSlice, CudaView, DeviceRepr, PushKernelArg};
use candle_core::cuda_backend::{CudaDType, CudaStorageSlice, WrapErr};
use candle_core::{CudaDevice, CudaStorage, Layout, Result};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// PTX of `kernels/fft.cu`.
pub const FFT_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/fft.ptx"));

/// Module name under which the PTX is loaded into candle's per-device module cache.
const FFT_MODULE: &str = "candle_repro_fft";

/// Every kernel of `kernels/fft.cu` (for the PTX lint).
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
];

/// Precision::Ozaki radix-8 stages on tensor cores (`repro_fft_stockham8_ozaki_mma`,
/// `kernels/fft/ozaki_mma.cuh`, sm_80+) instead of the plain f32 loop. Off: the mma kernel
/// has not run on a GPU yet (no hardware where it was written), while the plain kernel's
/// bits are host-checked against the CPU. Both compute the same exact slice products, so
/// turning it on must change no bit; tests/fft_cuda.rs checks that on a GPU.
pub const OZAKI_MMA: bool = false;

/// A plan's tables on one device.
struct Uploaded {
    plan: DevicePlan,
    table: UploadedTable,
    digits: CudaSlice<f32>,
    /// The context the tables live in, synchronized before they are freed.
    ctx: Arc<candle_core::cuda_backend::cudarc::driver::CudaContext>,
}

impl Drop for Uploaded {
    /// Kernels on any stream of the context may still read the tables (a thread that
    /// launched one may drop the last reference right after, and the cache may evict an
    /// entry another thread is using): wait for all of the context's work before the
    /// slices are freed. The context is bound first, so the tables of another GPU are
    /// freed on that GPU.
    fn drop(&mut self) {
        let _ = self.ctx.synchronize();
    }
}

enum UploadedTable {
    F32(CudaSlice<f32>),
    F64(CudaSlice<f64>),
}

type Key = (candle_core::cuda_backend::DeviceId, usize, Precision);

/// Plans uploaded per (device, n, precision): the tables are a pure function of (n,
/// precision), so a cached copy is the same bytes. Cleared when it grows past
/// [`CACHE_MAX`] entries (each entry waits for its context's work before it is freed,
/// see [`Uploaded`]'s `Drop`).
fn cache() -> &'static Mutex<HashMap<Key, Arc<Uploaded>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Uploaded>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

const CACHE_MAX: usize = 64;

fn uploaded(dev: &CudaDevice, plan: &FftPlan) -> Result<Arc<Uploaded>> {
    let key = (dev.id(), plan.len(), plan.precision());
    if let Some(u) = cache().lock().unwrap().get(&key) {
        return Ok(u.clone());
    }
    let dp = plan.device_plan();
    let table = match &dp.table {
        Table::F32(t) => UploadedTable::F32(dev.clone_htod(t.as_slice())?),
        Table::F64(t) => UploadedTable::F64(dev.clone_htod(t.as_slice())?),
    };
    let digits = dev.clone_htod(dp.digits.as_slice())?;
    // The copies ran on this device's stream; another stream (another thread's device
    // handle) may use the cached tables at once: wait for them to land.
    let stream = dev.cuda_stream();
    stream.synchronize().w()?;
    let u = Arc::new(Uploaded {
        plan: dp,
        table,
        digits,
        ctx: stream.context().clone(),
    });
    let mut c = cache().lock().unwrap();
    if c.len() >= CACHE_MAX {
        c.clear();
    }
    c.insert(key, u.clone());
    Ok(u)
}

/// Forward (or, `inverse`, unnormalized inverse) transforms of the rows of a contiguous
/// f32 tensor of shape (.., n, 2) on CUDA (`layout` must be contiguous; its start offset
/// is honoured): a new contiguous (.., n, 2) f32 storage with the bits of
/// [`FftPlan::forward_out_of_place`] / [`FftPlan::inverse_out_of_place`].
pub fn fft_rows(
    plan: &FftPlan,
    inverse: bool,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<CudaStorage> {
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("fft (cuda): the input must be contiguous")
    };
    let CudaStorageSlice::F32(src) = &storage.slice else {
        return Err(candle_core::Error::UnsupportedDTypeForOp(
            storage.dtype(),
            "fft",
        ));
    };
    let dev = &storage.device;
    let out = transform(dev, plan, inverse, &src.slice(start..end))?;
    Ok(CudaStorage::wrap_cuda_slice(out, dev.clone()))
}

/// [`fft_rows`] on a device view of rows of n interleaved complex f32 values: a new buffer
/// of the same length.
pub fn transform(
    dev: &CudaDevice,
    plan: &FftPlan,
    inverse: bool,
    src: &CudaView<'_, f32>,
) -> Result<CudaSlice<f32>> {
    transform_with(dev, plan, inverse, OZAKI_MMA, src)
}

/// [`transform`] with the Ozaki radix-8 stages on tensor cores (`mma`) or not, whatever
/// [`OZAKI_MMA`] says: a test hook (tests/fft_cuda.rs compares both with the CPU).
#[doc(hidden)]
pub fn transform_with(
    dev: &CudaDevice,
    plan: &FftPlan,
    inverse: bool,
    mma: bool,
    src: &CudaView<'_, f32>,
) -> Result<CudaSlice<f32>> {
    let n = plan.len();
    let values = src.len();
    if !values.is_multiple_of(2 * n) {
        candle_core::bail!("fft (cuda): {values} f32 values are not rows of {n} complex values")
    }
    let rows = values / (2 * n);
    // SAFETY: the interleave step writes every value.
    let mut out = unsafe { dev.alloc::<f32>(values)? };
    if rows > 0 {
        let u = uploaded(dev, plan)?;
        match &u.table {
            UploadedTable::F32(t) => run::<f32>(dev, &u, t, rows, inverse, mma, src, &mut out)?,
            UploadedTable::F64(t) => run::<f64>(dev, &u, t, rows, inverse, mma, src, &mut out)?,
        }
    }
    Ok(out)
}

/// `d` of the op kernels: (has_d, d).
fn d_args(d: Option<f32>) -> (i32, f32) {
    (d.is_some() as i32, d.unwrap_or(1.0))
}

/// The ops' scaling (src/ops/fft.rs `scaled`): every value v / d (`None`: v), NaN
/// canonical; a new buffer.
pub fn op_scale(dev: &CudaDevice, d: Option<f32>, x: &CudaView<'_, f32>) -> Result<CudaSlice<f32>> {
    let total = x.len();
    // SAFETY: the kernel writes every value.
    let mut out = unsafe { dev.alloc::<f32>(total)? };
    if total == 0 {
        return Ok(out);
    }
    let (h, d) = d_args(d);
    let f = dev.get_or_load_custom_func("repro_fft_op_scale", FFT_MODULE, FFT_PTX)?;
    let mut b = f.builder();
    b.arg(&total);
    b.arg(&h);
    b.arg(&d);
    b.arg(x);
    b.arg(&mut out);
    // SAFETY: (total, has_d, d, inp, out) as declared; both hold total values.
    unsafe { b.launch(launch_config(total)) }.w()?;
    Ok(out)
}

/// rfft's input: real values -> interleaved complex (v, +0).
pub fn op_real_to_complex(dev: &CudaDevice, x: &CudaView<'_, f32>) -> Result<CudaSlice<f32>> {
    let total = x.len();
    // SAFETY: the kernel writes every value.
    let mut out = unsafe { dev.alloc::<f32>(2 * total)? };
    if total == 0 {
        return Ok(out);
    }
    let f = dev.get_or_load_custom_func("repro_fft_op_real_to_complex", FFT_MODULE, FFT_PTX)?;
    let mut b = f.builder();
    b.arg(&total);
    b.arg(x);
    b.arg(&mut out);
    // SAFETY: (total, inp, out) as declared; out holds 2 total values.
    unsafe { b.launch(launch_config(total)) }.w()?;
    Ok(out)
}

/// rfft's output: rows of n complex values -> their first n/2 + 1, scaled by `d`.
pub fn op_take_half(
    dev: &CudaDevice,
    n: usize,
    d: Option<f32>,
    x: &CudaView<'_, f32>,
) -> Result<CudaSlice<f32>> {
    let rows = x.len() / (2 * n);
    let half = n / 2 + 1;
    let total = rows * half;
    // SAFETY: the kernel writes every value.
    let mut out = unsafe { dev.alloc::<f32>(2 * total)? };
    if total == 0 {
        return Ok(out);
    }
    let (h, d) = d_args(d);
    let f = dev.get_or_load_custom_func("repro_fft_op_take_half", FFT_MODULE, FFT_PTX)?;
    let mut b = f.builder();
    b.arg(&total);
    b.arg(&n);
    b.arg(&half);
    b.arg(&h);
    b.arg(&d);
    b.arg(x);
    b.arg(&mut out);
    // SAFETY: (total, n, half, has_d, d, inp, out) as declared; inp holds rows 2n values,
    // out rows 2 half.
    unsafe { b.launch(launch_config(total)) }.w()?;
    Ok(out)
}

/// irfft's input: rows of m complex values (a half spectrum) -> full Hermitian spectra of
/// n (src/ops/fft.rs `hermitian_row`).
pub fn op_hermitian(
    dev: &CudaDevice,
    m: usize,
    n: usize,
    x: &CudaView<'_, f32>,
) -> Result<CudaSlice<f32>> {
    let rows = if m == 0 { 0 } else { x.len() / (2 * m) };
    let total = rows * n;
    // SAFETY: the kernel writes every value.
    let mut out = unsafe { dev.alloc::<f32>(2 * total)? };
    if total == 0 {
        return Ok(out);
    }
    let f = dev.get_or_load_custom_func("repro_fft_op_hermitian", FFT_MODULE, FFT_PTX)?;
    let mut b = f.builder();
    b.arg(&total);
    b.arg(&m);
    b.arg(&n);
    b.arg(x);
    b.arg(&mut out);
    // SAFETY: (total, m, n, inp, out) as declared; inp holds rows 2m values, out rows 2n.
    unsafe { b.launch(launch_config(total)) }.w()?;
    Ok(out)
}

/// irfft's output: interleaved complex values -> their real parts, scaled by `d`.
pub fn op_real_part(
    dev: &CudaDevice,
    d: Option<f32>,
    x: &CudaView<'_, f32>,
) -> Result<CudaSlice<f32>> {
    let total = x.len() / 2;
    // SAFETY: the kernel writes every value.
    let mut out = unsafe { dev.alloc::<f32>(total)? };
    if total == 0 {
        return Ok(out);
    }
    let (h, d) = d_args(d);
    let f = dev.get_or_load_custom_func("repro_fft_op_real_part", FFT_MODULE, FFT_PTX)?;
    let mut b = f.builder();
    b.arg(&total);
    b.arg(&h);
    b.arg(&d);
    b.arg(x);
    b.arg(&mut out);
    // SAFETY: (total, has_d, d, inp, out) as declared; inp holds 2 total values.
    unsafe { b.launch(launch_config(total)) }.w()?;
    Ok(out)
}

/// The working type of a launch: its kernel-name suffix.
trait Work: DeviceRepr + CudaDType + Any {
    const SUFFIX: &'static str;
}
impl Work for f32 {
    const SUFFIX: &'static str = "f32";
}
impl Work for f64 {
    const SUFFIX: &'static str = "f64";
}

struct SplitBuf<T> {
    re: CudaSlice<T>,
    im: CudaSlice<T>,
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

/// The Ozaki steps run in f32 (the planner never pairs Ozaki with f64).
fn f32_of<T: Any>(s: &CudaSlice<T>) -> Result<&CudaSlice<f32>> {
    (s as &dyn Any)
        .downcast_ref::<CudaSlice<f32>>()
        .ok_or_else(|| candle_core::Error::Msg("fft (cuda): Ozaki step on f64 buffers".into()))
}

fn f32_of_mut<T: Any>(s: &mut CudaSlice<T>) -> Result<&mut CudaSlice<f32>> {
    (s as &mut dyn Any)
        .downcast_mut::<CudaSlice<f32>>()
        .ok_or_else(|| candle_core::Error::Msg("fft (cuda): Ozaki step on f64 buffers".into()))
}

/// Launches the plan's steps (see [`DevicePlan`]); `src` holds rows * n interleaved complex
/// f32 values, `out` receives as many.
#[allow(clippy::too_many_arguments)]
fn run<T: Work>(
    dev: &CudaDevice,
    u: &Uploaded,
    table: &CudaSlice<T>,
    rows: usize,
    inverse: bool,
    mma: bool,
    src: &CudaView<'_, f32>,
    out: &mut CudaSlice<f32>,
) -> Result<()> {
    let p = &u.plan;
    let n = p.n;
    let len = rows * p.buffer_len;
    let mut bufs = Vec::with_capacity(p.buffers);
    for _ in 0..p.buffers {
        // SAFETY: every value a step reads was written by an earlier step (the steps of a
        // plan read only what the previous ones produced, row by row).
        bufs.push(SplitBuf {
            re: unsafe { dev.alloc::<T>(len)? },
            im: unsafe { dev.alloc::<T>(len)? },
        });
    }
    let func = |name: &str| dev.get_or_load_custom_func(name, FFT_MODULE, FFT_PTX);
    let typed = |name: &str| func(&format!("repro_fft_{name}_{}", T::SUFFIX));
    let inv = inverse as i32;
    for step in &p.steps {
        match *step {
            Step::Deinterleave { dst } => {
                let total = rows * n;
                let f = typed("deinterleave")?;
                let d = &mut bufs[dst];
                let mut b = f.builder();
                b.arg(&total);
                b.arg(&inv);
                b.arg(src);
                b.arg(&mut d.re);
                b.arg(&mut d.im);
                // SAFETY: (total, inverse, inp, re, im) as declared; inp holds 2 total
                // f32, re and im at least total values.
                unsafe { b.launch(launch_config(total)) }.w()?;
            }
            Step::Interleave { src: s } => {
                let total = rows * n;
                let f = typed("interleave")?;
                let s = &bufs[s];
                let mut b = f.builder();
                b.arg(&total);
                b.arg(&inv);
                b.arg(&s.re);
                b.arg(&s.im);
                b.arg(&mut *out);
                // SAFETY: (total, inverse, re, im, out) as declared; out holds 2 total f32.
                unsafe { b.launch(launch_config(total)) }.w()?;
            }
            Step::Gemm { src: s, dst, w } => {
                let total = rows * n;
                let f = typed("gemm")?;
                let (s, d) = pair(&mut bufs, s, dst);
                let (wr, wi) = (table.slice(w..), table.slice(w + n * n..));
                let n32 = n as i32;
                let mut b = f.builder();
                b.arg(&total);
                b.arg(&n32);
                b.arg(&s.re);
                b.arg(&s.im);
                b.arg(&mut d.re);
                b.arg(&mut d.im);
                b.arg(&wr);
                b.arg(&wi);
                // SAFETY: (total, n, x_re, x_im, out_re, out_im, w_re, w_im) as declared;
                // buffers of rows * n, W of n * n from each offset.
                unsafe { b.launch(launch_config(total)) }.w()?;
            }
            Step::GemmOzaki {
                src: s,
                dst,
                digits,
            } => {
                let total = rows * 2 * n;
                let f = func("repro_fft_gemm_ozaki")?;
                let (s, d) = pair(&mut bufs, s, dst);
                let dg = u.digits.slice(digits..);
                let n32 = n as i32;
                let mut b = f.builder();
                b.arg(&total);
                b.arg(&n32);
                b.arg(f32_of(&s.re)?);
                b.arg(f32_of(&s.im)?);
                b.arg(f32_of_mut(&mut d.re)?);
                b.arg(f32_of_mut(&mut d.im)?);
                b.arg(&dg);
                // SAFETY: (total, n, x_re, x_im, out_re, out_im, digits) as declared;
                // buffers of rows * n, SLICES matrices of 2n x 2n from the offset.
                unsafe { b.launch(launch_config(total)) }.w()?;
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
                let k = (radix - 1) * ns;
                // ns = 1: no twiddle is read; any valid pointer will do.
                let (tr, ti) = if ns > 1 {
                    (table.slice(tw..tw + k), table.slice(tw + k..tw + 2 * k))
                } else {
                    (table.slice(..), table.slice(..))
                };
                let (s, d) = pair(&mut bufs, s, dst);
                match ozaki {
                    Some(w8) => {
                        let f = func(if mma {
                            "repro_fft_stockham8_ozaki_mma"
                        } else {
                            "repro_fft_stockham8_ozaki"
                        })?;
                        let t32 = f32_of(table)?;
                        let (tr, ti) = if ns > 1 {
                            (t32.slice(tw..tw + k), t32.slice(tw + k..tw + 2 * k))
                        } else {
                            (t32.slice(..), t32.slice(..))
                        };
                        let dg = u.digits.slice(w8..);
                        let mut b = f.builder();
                        b.arg(&total);
                        b.arg(&l);
                        b.arg(&ns);
                        b.arg(f32_of(&s.re)?);
                        b.arg(f32_of(&s.im)?);
                        b.arg(f32_of_mut(&mut d.re)?);
                        b.arg(f32_of_mut(&mut d.im)?);
                        b.arg(&tr);
                        b.arg(&ti);
                        b.arg(&dg);
                        // SAFETY: (total, len, ns, src.., dst.., tw_re, tw_im, w8) as
                        // declared; buffers of rows * len, 7 ns twiddles each, 4 16x16
                        // digit matrices.
                        unsafe { b.launch(launch_config(total)) }.w()?;
                    }
                    None => {
                        let f = func(&format!("repro_fft_stockham{radix}_{}", T::SUFFIX))?;
                        let mut b = f.builder();
                        b.arg(&total);
                        b.arg(&l);
                        b.arg(&ns);
                        b.arg(&s.re);
                        b.arg(&s.im);
                        b.arg(&mut d.re);
                        b.arg(&mut d.im);
                        b.arg(&tr);
                        b.arg(&ti);
                        // SAFETY: (total, len, ns, src.., dst.., tw_re, tw_im) as declared;
                        // buffers of rows * len, (radix - 1) ns twiddles each.
                        unsafe { b.launch(launch_config(total)) }.w()?;
                    }
                }
            }
            Step::BluesteinIn {
                src: s,
                dst,
                m,
                chirp,
            } => {
                let total = rows * m;
                let f = typed("bluestein_in")?;
                let (s, d) = pair(&mut bufs, s, dst);
                let (cr, ci) = (table.slice(chirp..), table.slice(chirp + n..));
                let mut b = f.builder();
                b.arg(&total);
                b.arg(&n);
                b.arg(&m);
                b.arg(&s.re);
                b.arg(&s.im);
                b.arg(&mut d.re);
                b.arg(&mut d.im);
                b.arg(&cr);
                b.arg(&ci);
                // SAFETY: (total, n, m, x.., a.., chirp_re, chirp_im) as declared; x of
                // rows * n, a of rows * m, n chirp values each.
                unsafe { b.launch(launch_config(total)) }.w()?;
            }
            Step::BluesteinMul { buf, m, kernel } => {
                let total = rows * m;
                let f = typed("bluestein_mul")?;
                let a = &mut bufs[buf];
                let (kr, ki) = (table.slice(kernel..), table.slice(kernel + m..));
                let mut b = f.builder();
                b.arg(&total);
                b.arg(&m);
                b.arg(&mut a.re);
                b.arg(&mut a.im);
                b.arg(&kr);
                b.arg(&ki);
                // SAFETY: (total, m, a_re, a_im, k_re, k_im) as declared; a of rows * m,
                // m kernel values each.
                unsafe { b.launch(launch_config(total)) }.w()?;
            }
            Step::BluesteinOut {
                src: s,
                dst,
                m,
                chirp,
            } => {
                let total = rows * n;
                let f = typed("bluestein_out")?;
                let (s, d) = pair(&mut bufs, s, dst);
                let (cr, ci) = (table.slice(chirp..), table.slice(chirp + n..));
                let mut b = f.builder();
                b.arg(&total);
                b.arg(&n);
                b.arg(&m);
                b.arg(&s.re);
                b.arg(&s.im);
                b.arg(&mut d.re);
                b.arg(&mut d.im);
                b.arg(&cr);
                b.arg(&ci);
                // SAFETY: (total, n, m, a.., x.., chirp_re, chirp_im) as declared; a of
                // rows * m, x of rows * n, n chirp values each.
                unsafe { b.launch(launch_config(total)) }.w()?;
            }
        }
    }
    Ok(())
}

/// The forward pass of the candle FFT ops ([`crate::fft::fft`], `ifft`, `rfft`, `irfft`)
/// on CUDA, for `FftOp::cuda_fwd` (dimensions already checked): the CPU op's steps
/// (src/ops/fft.rs `FftOp::cpu`) with the same arithmetic: rfft transforms x + 0i and
/// keeps the first n/2 + 1 outputs, irfft extends the half spectrum Hermitian, transforms
/// it inversely and keeps the real parts, and the outputs are divided by the op's
/// [`norm_divisor`](crate::ops::fft::norm_divisor) (one IEEE division per value, canonical
/// NaN). A strided input is first gathered on the device.
pub(crate) fn op_fwd(
    op: &crate::ops::fft::FftOp,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<CudaStorage> {
    use crate::ops::fft::{FftKind, cached_plan, norm_divisor};
    let dev = &storage.device;
    // Strided inputs are gathered with 64-bit offsets (crate::launch::contiguous).
    let mut slot = None;
    let (src, start) = crate::launch::contiguous(&storage.device, storage, layout, &mut slot)?;
    let end = start + layout.shape().elem_count();
    let CudaStorageSlice::F32(x) = &src.slice else {
        return Err(candle_core::Error::UnsupportedDTypeForOp(
            storage.dtype(),
            op.kind.name(),
        ));
    };
    let x = x.slice(start..end);
    let n = op.n;
    let plan = cached_plan(n, op.precision)?;
    let d = norm_divisor(op.kind, op.norm, n);
    let out = match op.kind {
        FftKind::Fft | FftKind::Ifft => {
            let y = transform(dev, &plan, op.kind == FftKind::Ifft, &x)?;
            match d {
                Some(_) => op_scale(dev, d, &y.slice(..))?,
                None => y,
            }
        }
        FftKind::Rfft => {
            let c = op_real_to_complex(dev, &x)?;
            let y = transform(dev, &plan, false, &c.slice(..))?;
            op_take_half(dev, n, d, &y.slice(..))?
        }
        FftKind::Irfft => {
            let dims = layout.dims();
            let m = dims[dims.len() - 2];
            let c = op_hermitian(dev, m, n, &x)?;
            let y = transform(dev, &plan, true, &c.slice(..))?;
            op_real_part(dev, d, &y.slice(..))?
        }
    };
    Ok(CudaStorage::wrap_cuda_slice(out, dev.clone()))
}

/// One thread per item in blocks of 256 (`__launch_bounds__(256)`); the kernels loop with a
/// grid stride, so capping the grid changes no result.
fn launch_config(n: usize) -> candle_core::cuda_backend::cudarc::driver::LaunchConfig {
    let blocks = n.div_ceil(256).clamp(1, i32::MAX as usize) as u32;
    candle_core::cuda_backend::cudarc::driver::LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}
