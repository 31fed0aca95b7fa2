//! The planner, with candle's error type: the plans are the core's
//! ([`repro_core::fft::plan`]: which algorithm runs for (n, precision), and the rows they
//! transform); [`FftPlan`] here wraps one so that every fallible call returns a
//! `candle_core::Result`, as it always has.

use crate::math::VectorPath;
use crate::ops::core_error;
use candle_core::Result;
use num_complex::Complex32;
use repro_core::fft::plan as core_plan;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

pub use core_plan::{DFT_GEMM_MAX, DFT_GEMM_MAX_POW2, MAX_LEN, Precision};
#[doc(hidden)]
pub use core_plan::{Kernel, KernelRef, uses_dft_gemm};

/// A planned complex transform of length n ([`repro_core::fft::FftPlan`], whose methods it
/// also has through `Deref`): twiddle tables and the algorithm, built once and reused for
/// any number of rows.
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_repro::fft::{FftPlan, Precision};
/// use num_complex::Complex32;
///
/// let plan = FftPlan::new(8, Precision::F32)?;
/// // A delta at 0: its transform is all ones.
/// let mut data = vec![Complex32::new(0.0, 0.0); 8];
/// data[0] = Complex32::new(1.0, 0.0);
/// plan.forward(&mut data)?;
/// assert!(data.iter().all(|z| *z == Complex32::new(1.0, 0.0)));
/// assert!(plan.forward(&mut data[..5]).is_err()); // not a whole number of rows
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct FftPlan(Arc<core_plan::FftPlan>);

impl std::ops::Deref for FftPlan {
    type Target = core_plan::FftPlan;

    fn deref(&self) -> &core_plan::FftPlan {
        &self.0
    }
}

impl FftPlan {
    /// Plans a transform of length `n` (1 ..= 2^20) at `precision`.
    pub fn new(n: usize, precision: Precision) -> Result<Self> {
        let plan = core_plan::FftPlan::new(n, precision).map_err(core_error)?;
        Ok(FftPlan(Arc::new(plan)))
    }

    /// The core's plan.
    pub fn core(&self) -> &core_plan::FftPlan {
        &self.0
    }

    /// Forward transforms (X_k = sum_j x_j exp(-2 pi i jk/n), unnormalized) of every row of
    /// `data` in place; `data.len()` must be a multiple of n.
    pub fn forward(&self, data: &mut [Complex32]) -> Result<()> {
        self.0.forward(data).map_err(core_error)
    }

    /// Inverse transforms (sign +, unnormalized: inverse(forward(x)) = n x) in place.
    pub fn inverse(&self, data: &mut [Complex32]) -> Result<()> {
        self.0.inverse(data).map_err(core_error)
    }

    /// Forward transforms of the rows of `input` into `output` (same length).
    pub fn forward_out_of_place(
        &self,
        input: &[Complex32],
        output: &mut [Complex32],
    ) -> Result<()> {
        self.0
            .forward_out_of_place(input, output)
            .map_err(core_error)
    }

    /// Forward transforms of real rows: `output` (n complex values per row of n real
    /// values of `input`) gets the bits [`FftPlan::forward`] gives for the rows with +0
    /// imaginary parts.
    pub fn forward_real(&self, input: &[f32], output: &mut [Complex32]) -> Result<()> {
        self.0.forward_real(input, output).map_err(core_error)
    }

    /// [`FftPlan::forward_real`] with the copy of the vector loops for `path` (a test hook).
    #[doc(hidden)]
    pub fn forward_real_with_path(
        &self,
        path: VectorPath,
        input: &[f32],
        output: &mut [Complex32],
    ) -> Result<()> {
        self.0
            .forward_real_with_path(path, input, output)
            .map_err(core_error)
    }

    /// Inverse transforms (unnormalized) of the rows of `input` into `output`.
    pub fn inverse_out_of_place(
        &self,
        input: &[Complex32],
        output: &mut [Complex32],
    ) -> Result<()> {
        self.0
            .inverse_out_of_place(input, output)
            .map_err(core_error)
    }

    /// [`FftPlan::forward`] (or the inverse) with the copy of the vector loops for `path`
    /// (a test hook: every path gives the same bits).
    #[doc(hidden)]
    pub fn transform_with_path(
        &self,
        path: VectorPath,
        data: &mut [Complex32],
        inverse: bool,
    ) -> Result<()> {
        self.0
            .transform_with_path(path, data, inverse)
            .map_err(core_error)
    }
}

type PlanCache = Mutex<HashMap<(usize, Precision), Arc<FftPlan>>>;

/// The plan for (n, precision), built on first use and shared by every later call in the
/// process (the core's [`repro_core::fft::plan::cached_plan`], with candle's error).
///
/// ```rust
/// # fn main() -> candle_core::Result<()> {
/// use candle_repro::fft::Precision;
/// use candle_repro::ops::fft::cached_plan;
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
    let core = core_plan::cached_plan(n, precision).map_err(core_error)?;
    let plan = Arc::new(FftPlan(core));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    Ok(map.entry(key).or_insert(plan).clone())
}
