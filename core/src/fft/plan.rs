//! The planner: which algorithm runs, as a pure function of (n, precision).
//!
//! | n | algorithm |
//! |---|---|
//! | 1 | identity |
//! | 2..=8, and 9..=16 other than 16 | DFT-GEMM (dft_gemm.rs) |
//! | power of two >= 16 | Stockham radix-8 (stockham.rs) |
//! | other 2^a 3^b 5^c 7^d > 16 | Stockham mixed radix 8/4/2, 7, 5, 3 (stockham.rs) |
//! | every other n > 16 (a prime factor >= 11) | Bluestein (bluestein.rs) over a power-of-two Stockham |
//!
//! `Precision` picks the working type and the product: F32 (f32, butterfly DAGs),
//! Ozaki (f32, DFT-GEMM and W8 products on exact bf16 slices, ozaki.rs) and F64Internal
//! (f64 throughout, f32 out; the same stages). Nothing here looks at the device, the CPU's features, the
//! thread count or the batch, so a transform's bits never depend on them.

use super::bluestein::Bluestein;
use super::butterflies::Cx;
use super::dft_gemm::DftGemm;
use super::lanes::canonical;
use super::ozaki::SlicedMatrix;
use super::scalar::FftScalar;
use super::stockham::Stockham;
use crate::Result;
use crate::math::VectorPath;
use crate::math::vector::best_path;

/// Returns the core's error with a formatted message.
macro_rules! bail {
    ($($t:tt)*) => {
        return Err(crate::Error::new(format!($($t)*)))
    };
}
use num_complex::Complex32;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Largest n done as a dense DFT-GEMM (powers of two only up to [`DFT_GEMM_MAX_POW2`]).
pub const DFT_GEMM_MAX: usize = 16;
/// Largest power of two done as a DFT-GEMM: at n = 16 the 16-term dot products measured
/// 1.28x rustfft's error (tests/fft_accuracy.rs), the radix 8 x 2 Stockham stays within
/// 1.2x.
pub const DFT_GEMM_MAX_POW2: usize = 8;

/// True when the planner does n as a dense DFT-GEMM.
#[doc(hidden)]
pub fn uses_dft_gemm(n: usize) -> bool {
    n > 1 && n <= DFT_GEMM_MAX && (!n.is_power_of_two() || n <= DFT_GEMM_MAX_POW2)
}
/// Largest transform length planned (Bluestein's inner length is at most 2^22 then).
pub const MAX_LEN: usize = 1 << 20;

/// The arithmetic of a transform.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// f32 arithmetic, correctly rounded f32 twiddles, butterfly DAGs (the default).
    #[default]
    F32,
    /// f32 arithmetic with the DFT-GEMM and W8 products evaluated exactly on bf16 slices
    /// with one power-of-two scale per vector: the tensor-core formulation.
    Ozaki,
    /// f64 arithmetic and twiddles inside, rounded once to f32 at the end.
    F64Internal,
}

/// One algorithm in one working type.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub enum Kernel<T> {
    Identity,
    Gemm(DftGemm<T>, Option<SlicedMatrix>),
    Stockham(Stockham<T>),
    Bluestein(Box<Bluestein<T>>),
}

impl<T: FftScalar> Kernel<T> {
    fn new(n: usize, ozaki: bool) -> Self {
        if n == 1 {
            Kernel::Identity
        } else if uses_dft_gemm(n) {
            let g = DftGemm::<T>::new(n);
            let sliced = ozaki.then(|| {
                let (re, im): (Vec<f64>, Vec<f64>) = (0..n * n)
                    .map(|idx| {
                        super::twiddles::twiddle::<f64>(((idx / n) * (idx % n)) as u64, n as u64)
                    })
                    .unzip();
                SlicedMatrix::complex(n, &re, &im)
            });
            Kernel::Gemm(g, sliced)
        } else if super::stockham::is_smooth(n) {
            Kernel::Stockham(Stockham::new(n, ozaki))
        } else {
            Kernel::Bluestein(Box::new(Bluestein::new(n, ozaki)))
        }
    }

    fn scratch_len(&self, n: usize) -> usize {
        match self {
            Kernel::Identity => 0,
            Kernel::Gemm(..) | Kernel::Stockham(_) => 2 * n,
            Kernel::Bluestein(b) => b.scratch_len(),
        }
    }

    /// Forward transform of one row held as split (re, im), in place.
    fn forward(&self, re: &mut [T], im: &mut [T], scratch: &mut [T]) {
        match self {
            Kernel::Identity => {}
            Kernel::Gemm(g, None) => {
                let n = g.n;
                let (or, oi) = scratch[..2 * n].split_at_mut(n);
                g.forward(re, im, or, oi);
                re.copy_from_slice(or);
                im.copy_from_slice(oi);
            }
            Kernel::Gemm(_, Some(w)) => {
                // n <= DFT_GEMM_MAX: a stack buffer, no allocation per row.
                let mut buf = [Cx::<T>::default(); DFT_GEMM_MAX];
                let v = &mut buf[..re.len()];
                for (z, (&a, &b)) in v.iter_mut().zip(re.iter().zip(im.iter())) {
                    *z = Cx::new(a, b);
                }
                super::ozaki::apply_sliced(w, v);
                for (k, z) in v.iter().enumerate() {
                    re[k] = z.re;
                    im[k] = z.im;
                }
            }
            Kernel::Stockham(s) => {
                let n = s.n;
                let (sr, si) = scratch[..2 * n].split_at_mut(n);
                s.forward(re, im, sr, si);
            }
            Kernel::Bluestein(b) => b.forward(re, im, scratch),
        }
    }
}

#[derive(Clone, Debug)]
enum Typed {
    F32(Kernel<f32>),
    F64(Kernel<f64>),
}

/// A planned complex transform of length n: twiddle tables and the algorithm, built once
/// and reused for any number of rows.
///
/// ```rust
/// # fn main() -> repro_core::Result<()> {
/// use repro_core::fft::{FftPlan, Precision};
/// use num_complex::Complex32;
///
/// let plan = FftPlan::new(8, Precision::F32)?;
/// // Two rows of 8: a delta at 0 (its transform is all ones) and a constant 1 (its
/// // transform is 8 at k = 0, zero elsewhere).
/// let mut data = vec![Complex32::new(0.0, 0.0); 16];
/// data[0] = Complex32::new(1.0, 0.0);
/// data[8..].fill(Complex32::new(1.0, 0.0));
/// plan.forward(&mut data)?;
/// assert!(data[..8].iter().all(|z| *z == Complex32::new(1.0, 0.0)));
/// assert_eq!(data[8], Complex32::new(8.0, 0.0));
/// assert!(data[9..].iter().all(|z| z.norm() < 1e-6));
/// // The inverse is unnormalized: inverse(forward(x)) = n x.
/// plan.inverse(&mut data)?;
/// assert!((data[0].re - 8.0).abs() < 1e-6 && data[1].norm() < 1e-6);
/// assert!(plan.forward(&mut data[..5]).is_err()); // not a whole number of rows
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct FftPlan {
    n: usize,
    precision: Precision,
    kernel: Typed,
}

impl FftPlan {
    /// Plans a transform of length `n` (1 ..= 2^20) at `precision`.
    pub fn new(n: usize, precision: Precision) -> Result<Self> {
        if n == 0 || n > MAX_LEN {
            bail!("fft: length {n} is outside 1..={MAX_LEN}");
        }
        let kernel = match precision {
            Precision::F32 => Typed::F32(Kernel::new(n, false)),
            Precision::Ozaki => Typed::F32(Kernel::new(n, true)),
            Precision::F64Internal => Typed::F64(Kernel::new(n, false)),
        };
        Ok(FftPlan {
            n,
            precision,
            kernel,
        })
    }

    /// The transform length.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false: a plan has length at least 1.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The precision the plan was built for.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Forward transforms (X_k = sum_j x_j exp(-2 pi i jk/n), unnormalized) of every row of
    /// `data` in place; `data.len()` must be a multiple of n.
    pub fn forward(&self, data: &mut [Complex32]) -> Result<()> {
        self.run_in_place(data, false)
    }

    /// Inverse transforms (sign +, unnormalized: inverse(forward(x)) = n x) in place.
    pub fn inverse(&self, data: &mut [Complex32]) -> Result<()> {
        self.run_in_place(data, true)
    }

    /// Forward transforms of the rows of `input` into `output` (same length).
    pub fn forward_out_of_place(
        &self,
        input: &[Complex32],
        output: &mut [Complex32],
    ) -> Result<()> {
        self.run(input, output, false)
    }

    /// Forward transforms of real rows: `output` (n complex values per row of n real
    /// values of `input`) gets the bits [`FftPlan::forward`] gives for the rows with +0
    /// imaginary parts; the Stockham plans read the real values in their first stage
    /// instead of a complex copy.
    pub fn forward_real(&self, input: &[f32], output: &mut [Complex32]) -> Result<()> {
        self.forward_real_with_path(best_path(), input, output)
    }

    /// [`FftPlan::forward_real`] with the copy of the vector loops for `path` (a test
    /// hook, like [`FftPlan::transform_with_path`]).
    #[doc(hidden)]
    pub fn forward_real_with_path(
        &self,
        path: VectorPath,
        input: &[f32],
        output: &mut [Complex32],
    ) -> Result<()> {
        self.check_lens(input.len(), output.len())?;
        match &self.kernel {
            Typed::F32(k) => process_real_rows(k, self.n, input, output, path),
            Typed::F64(k) => process_real_rows(k, self.n, input, output, path),
        }
        Ok(())
    }

    /// Inverse transforms (unnormalized) of the rows of `input` into `output`.
    pub fn inverse_out_of_place(
        &self,
        input: &[Complex32],
        output: &mut [Complex32],
    ) -> Result<()> {
        self.run(input, output, true)
    }

    /// An out-of-place transform's lengths: whole rows in, as many values out.
    fn check_lens(&self, input: usize, output: usize) -> Result<()> {
        self.check_len(input)?;
        if output != input {
            bail!("fft: output has {output} values, input {input}");
        }
        Ok(())
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if !len.is_multiple_of(self.n) {
            bail!(
                "fft: buffer of {len} values is not a whole number of rows of {}",
                self.n
            );
        }
        Ok(())
    }

    /// [`FftPlan::forward`] (or the inverse) with the copy of the vector loops for `path`
    /// (falling back to the baseline when the CPU lacks it): a test hook, since every
    /// path gives the same bits; only the vector width differs.
    #[doc(hidden)]
    pub fn transform_with_path(
        &self,
        path: VectorPath,
        data: &mut [Complex32],
        inverse: bool,
    ) -> Result<()> {
        self.run_in_place_with(data, inverse, path)
    }

    fn run_in_place(&self, data: &mut [Complex32], inverse: bool) -> Result<()> {
        self.run_in_place_with(data, inverse, best_path())
    }

    fn run_in_place_with(
        &self,
        data: &mut [Complex32],
        inverse: bool,
        path: VectorPath,
    ) -> Result<()> {
        self.check_len(data.len())?;
        match &self.kernel {
            Typed::F32(k) => process_rows(k, self.n, inverse, None, data, path),
            Typed::F64(k) => process_rows(k, self.n, inverse, None, data, path),
        }
        Ok(())
    }

    fn run(&self, input: &[Complex32], output: &mut [Complex32], inverse: bool) -> Result<()> {
        self.check_lens(input.len(), output.len())?;
        match &self.kernel {
            Typed::F32(k) => process_rows(k, self.n, inverse, Some(input), output, best_path()),
            Typed::F64(k) => process_rows(k, self.n, inverse, Some(input), output, best_path()),
        }
        Ok(())
    }
}

/// Scratch a thread keeps between calls, in bytes: larger scratch (only the longest
/// F64Internal and Bluestein plans) is allocated per call rather than held.
const KEEP_SCRATCH_BYTES: usize = 32 << 20;

thread_local! {
    /// This thread's scratch, reused by every call (f64 words, viewed as f32 or f64).
    static SCRATCH: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on `len` values of scratch of type T (contents unspecified): this thread's
/// reusable buffer when it is free and small enough, else a fresh allocation. A transform
/// writes every scratch value before reading it, so the contents never matter.
fn with_scratch<T: FftScalar, R>(len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    // T is f32 or f64 (the only FftScalar types): every bit pattern is a value, and an
    // f64 buffer is aligned and sized for it.
    const { assert!(std::mem::align_of::<T>() <= 8 && 8 % std::mem::size_of::<T>() == 0) };
    let words = (len * std::mem::size_of::<T>()).div_ceil(8);
    let mut f = Some(f);
    if words * 8 <= KEEP_SCRATCH_BYTES {
        let done = SCRATCH
            .try_with(|cell| {
                let mut buf = cell.try_borrow_mut().ok()?;
                if buf.len() < words {
                    buf.resize(words, 0.0);
                }
                // SAFETY: `words` f64 hold `len` values of T (size and alignment checked
                // above); any bits are a valid f32 / f64; the borrow lasts for the call.
                let s = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut T, len) };
                Some((f.take().expect("called once"))(s))
            })
            .ok()
            .flatten();
        if let Some(r) = done {
            return r;
        }
    }
    let mut buf = vec![T::ZERO; len];
    (f.take().expect("called once"))(&mut buf)
}

/// Rows up to this many values are prefetched whole (64 KiB: the row being transformed
/// and the next one still fit in L2 next to the scratch).
const PREFETCH_MAX_N: usize = 8192;

/// Asks the CPU to start loading a row of `n` values into cache. A short row's first stage
/// reads it in eight strided streams of a few cache lines each, too short for the hardware
/// prefetchers to pick up, so batches of rows in memory would otherwise wait on every
/// line. Only a hint: it reads nothing and changes no value.
#[inline(always)]
fn prefetch_row(row: *const Complex32, n: usize) {
    if n > PREFETCH_MAX_N {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        const LINE: usize = 64 / std::mem::size_of::<Complex32>();
        for i in (0..n).step_by(LINE) {
            // SAFETY: prefetch never faults, whatever the address; this one lies in the
            // buffer (`row` is the start of a whole row inside it).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(row.wrapping_add(i) as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Transforms row after row (rows are independent: a row's bits never depend on its
/// neighbours). The inverse is conj(forward(conj(x))): negations are exact, so it shares
/// the forward DAG and tables. Outputs are rounded to f32 once and NaNs made canonical.
/// Power-of-two rows go straight from the interleaved input through the Stockham stages
/// into the interleaved output (the same values as the split route below, with the
/// conversions fused into the first and last stages); `path` picks the copy of the stage
/// loops (vector width only).
fn process_rows<T: FftScalar>(
    kernel: &Kernel<T>,
    n: usize,
    inverse: bool,
    input: Option<&[Complex32]>,
    output: &mut [Complex32],
    path: VectorPath,
) {
    let rows = output.len() / n;
    if rows == 0 {
        return;
    }
    if let Kernel::Stockham(s) = kernel {
        // Where the rows are read from: the next one is prefetched while this one runs.
        let source = input.map_or(output.as_ptr(), |i| i.as_ptr());
        with_scratch::<T, _>(s.interleaved_scratch_len(), |scratch| {
            for (r, out) in output.chunks_exact_mut(n).enumerate() {
                if r + 1 < rows {
                    prefetch_row(source.wrapping_add((r + 1) * n), n);
                }
                let src = input.map(|i| &i[r * n..(r + 1) * n]);
                s.forward_interleaved(path, src, out, inverse, scratch);
            }
        });
        return;
    }
    with_scratch::<T, _>(2 * n + kernel.scratch_len(n), |buf| {
        let (re, rest) = buf.split_at_mut(n);
        let (im, scratch) = rest.split_at_mut(n);
        for r in 0..rows {
            let out = &mut output[r * n..(r + 1) * n];
            let src: &[Complex32] = match input {
                Some(i) => &i[r * n..(r + 1) * n],
                None => out,
            };
            for (j, z) in src.iter().enumerate() {
                re[j] = T::from_f32(z.re);
                im[j] = T::from_f32(if inverse { -z.im } else { z.im });
            }
            kernel.forward(re, im, scratch);
            for (j, z) in out.iter_mut().enumerate() {
                let (a, b) = (re[j].to_f32(), im[j].to_f32());
                *z = Complex32::new(canonical(a), canonical(if inverse { -b } else { b }));
            }
        }
    });
}

/// [`process_rows`] for real rows (forward): Stockham reads them in its first stage; the
/// other algorithms get each row as complex values with +0 imaginary parts, in place.
fn process_real_rows<T: FftScalar>(
    kernel: &Kernel<T>,
    n: usize,
    input: &[f32],
    output: &mut [Complex32],
    path: VectorPath,
) {
    if let Kernel::Stockham(s) = kernel {
        with_scratch::<T, _>(s.interleaved_scratch_len(), |scratch| {
            for (src, out) in input.chunks_exact(n).zip(output.chunks_exact_mut(n)) {
                s.forward_real(path, src, out, scratch);
            }
        });
        return;
    }
    for (o, &v) in output.iter_mut().zip(input) {
        *o = Complex32::new(v, 0.0);
    }
    process_rows(kernel, n, false, None, output, path);
}

/// The plan's algorithm and tables in their working type, for
/// [`device_plan`](super::device_plan) (which flattens them for the CUDA kernels).
#[doc(hidden)]
pub enum KernelRef<'a> {
    F32(&'a Kernel<f32>),
    F64(&'a Kernel<f64>),
}

impl FftPlan {
    /// The algorithm and its tables (read-only; the CUDA path uploads these very values).
    #[doc(hidden)]
    pub fn kernel_ref(&self) -> KernelRef<'_> {
        match &self.kernel {
            Typed::F32(k) => KernelRef::F32(k),
            Typed::F64(k) => KernelRef::F64(k),
        }
    }
}

type PlanCache = Mutex<HashMap<(usize, Precision), Arc<FftPlan>>>;

/// The plan for (n, precision), built on first use and shared by every later call in the
/// process (a plan is a pure function of its key, so sharing changes no bit).
///
/// ```rust
/// # fn main() -> repro_core::Result<()> {
/// use repro_core::fft::Precision;
/// use repro_core::fft::plan::cached_plan;
/// use std::sync::Arc;
///
/// let a = cached_plan(12, Precision::F32)?;
/// assert_eq!(a.len(), 12);
/// assert!(Arc::ptr_eq(&a, &cached_plan(12, Precision::F32)?));
/// assert!(cached_plan(0, Precision::F32).is_err());
/// # Ok(()) }
/// ```
pub fn cached_plan(n: usize, precision: Precision) -> Result<Arc<FftPlan>> {
    static PLANS: OnceLock<PlanCache> = OnceLock::new();
    let cache = PLANS.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (n, precision);
    if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(p.clone());
    }
    // Planned outside the lock (large plans take a while); a concurrent duplicate is
    // identical, and the first one inserted wins.
    let plan = Arc::new(FftPlan::new(n, precision)?);
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    Ok(map.entry(key).or_insert(plan).clone())
}
