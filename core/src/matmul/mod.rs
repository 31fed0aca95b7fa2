//! Correctly rounded matrix products over plain slices: the definition the adapters'
//! tensor ops share (candle-repro's `matmul`, `Linear` and their CUDA half, burn-repro's
//! `matmul`), whose every output is defined mathematically, so no CPU instruction set,
//! thread count, batch size, tiling or device can change a bit.
//!
//! # Definition
//! out[.., i, j] = round(sum over k of a[.., i, k] * b[.., k, j] (+ `bias[j]`)): the exact
//! real sum of the exact products, rounded once to nearest-even into the output dtype
//! (f32, bf16 or f16, the inputs' dtype; f32 or bf16 for f8e4m3 inputs). Overflow gives
//! +-inf as IEEE rounding does. Special values are those of an IEEE sum of the exact
//! products in any order: NaN if any product is NaN (a NaN input, or 0 * inf) or if
//! products +inf and -inf meet, +-inf if an infinite product remains; an exact zero sum is
//! -0 exactly when every term (each product, and the bias) is -0, and +0 otherwise (an
//! empty sum, k = 0, is +0 or the bias). Every NaN is the canonical quiet NaN.
//!
//! # How the CPU reaches it (`cpu.rs`)
//! Every input widens exactly to f32, and a product of two f32 is exact in f64 (48-bit
//! significands, exponents from -298 to 256). So:
//!
//! 1. Tier 1 sums the products (and the bias) in f64, in whatever order the kernel likes:
//!    a blocked GEMM with a register micro-kernel (`kernel.rs`) or, for at most four rows
//!    against a B contiguous along k, a streaming GEMV. Any summation tree of n = k + 1
//!    terms has |computed - exact| <= gamma_n sum|terms|, gamma_n = n u / (1 - n u), u =
//!    2^-53 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., 4.2;
//!    additions of a zero are exact and do not count). By Cauchy-Schwarz, sum|a_k b_k| <=
//!    |a|_2 |b|_2, computed once per row of A and column of B in f64 (within (1 + k u) of
//!    the true norms). For k < 2^26 the bound used, err = n 2^-53 (1 + 2^-20) (|a| |b| +
//!    |bias|) with the computed norms, exceeds gamma_n (1 + k u)^2 (|a| |b| + |bias|) and
//!    the four roundings of its own evaluation. The output is accepted when every number
//!    within err of the f64 sum rounds to the same value of the dtype
//!    (`crate::math::round::round_within`); with err = 0 and a zero sum (all products
//!    zero) the sign of the zero comes from the sign bits of the row and column.
//!    f8e4m3 products are multiples of 2^-18 below 2^17.7, so for k <= 2^17 every partial
//!    sum is exact in f64 in any order: err = 0 (the one rounding of adding the bias is
//!    covered by the test's own widening).
//!
//!    **The float route** (the GEMM on bf16 and f16 inputs, where `cpu::float_route`
//!    takes it: bf16 on the AVX2 and baseline paths, where it was measured faster): the
//!    products are summed in f32 multiply-adds, each lane in k order, in runs of R = 8
//!    consecutive k (`kernel::RUN`, restarting at every k-block); the run sums are added
//!    in f32 in groups of G = 8 runs (`kernel::GROUP`), and each group's sum is widened
//!    exactly and added to the f64 sum of its output, in any order. The bound:
//!    * every step rounds once: an FMA computes s + ab exactly and rounds it, and a
//!      product of two bf16 (8-bit significands) or f16 (11-bit) values has at most 22
//!      significant bits, so an unfused multiply is exact too, except that a bf16
//!      product below 2^-126 may round (bf16 has f32's exponent range). With u = 2^-24,
//!      each step's result is v (1 + d) + e with v the exact sum of its operands, |d| <=
//!      u and |e| <= 2^-148 (at most 2^-150 from a product's rounding, 2^-150 from the
//!      sum's in the subnormal range; e = 0 for f16 inputs, whose products and their
//!      sums are multiples of 2^-48, and nonzero ones at least 2^-48, normal in f32);
//!    * a run of r <= R products p_q (the first step, 0 + p, exact but for e) is within
//!      ((1 + u)^(r-1) - 1) P + r (1 + u)^(r-1) 2^-148 of its exact sum, P = sum |p_q|
//!      (Higham 4.3, recursive summation), so within gamma_(R-1) P + 2R 2^-148; a group
//!      of g <= G run sums, recursively summed, adds gamma_(G-1) (1 + gamma_(R-1)) of
//!      the sum of |products| of the group (sums of two f32 values that land below
//!      2^-126 are exact: no e there). Over all groups: (gamma_(R-1) + gamma_(G-1) (1 +
//!      gamma_(R-1))) sum|a_k b_k| + 2k 2^-148 <= (R + G - 2) u (1 + 2^-19) sum|a_k b_k|
//!      + k 2^-147;
//!    * the f64 sum of the groups' f32 sums (exact in f64) and the bias, at most k + 1
//!      terms in any order, adds gamma_(k+1) (2^-53) of the sum of their magnitudes,
//!      each within the above of its exact value;
//!    * with Cauchy-Schwarz and the computed norms as above, the bound used, err = c
//!      (|a| |b| + |bias|) + k 2^-145 (the last term for bf16 inputs and only when
//!      |a| |b| > 0: a zero row or column gives exact zeros), c = ((R + G - 2) 2^-24 +
//!      (k + 1 + bias) 2^-53) (1 + 2^-16), covers all of it and the roundings of its own
//!      evaluation for k < 2^26.
//!
//!    Infinities and NaN: a product or sum beyond f32's range becomes +-inf (f32
//!    overflows where the f64 route would not: bf16 values reach 2^128, their products
//!    2^256), and +inf meeting -inf gives NaN; either one stays in the f64 sum, and the
//!    rounding test never accepts a non-finite sum, so such an output goes on below
//!    like every other the route leaves. With R + G - 2 = 14 the bound is about 2^-20
//!    |a| |b|: at k = 576 it leaves about 3.5% of random bf16 outputs and 18% of f16
//!    ones (their 11-bit outputs are finer). Those get a second try: the products in f32
//!    (exact, or rounded by 2^-150 below 2^-126, covered by the same k 2^-145) summed
//!    in f64 in any order (`kernel::dot_f32_products`), under the f64 route's bound plus
//!    that term; what it leaves goes to tier 2.
//! 2. Tier 2, for the outputs tier 1 leaves (with random data about 1 in 10^3 in f32 at
//!    k = 576, fewer in bf16 and f16): a compensated dot product with error below 2^-52
//!    relative plus (k + 8)^2 2^-106 |a| |b| (`crate::math::exact_dot::dot2`), tested the
//!    same way.
//! 3. Tier 3, for what is left (sums at a rounding midpoint, inf and NaN rows, k >= 2^26):
//!    the exact fixed-point sum (`crate::math::exact_dot::ExactDot`), rounded to odd in
//!    f64 and then once to the dtype.
//!
//! Each tier returns the correctly rounded value or nothing, so which tier decides an
//! output, and everything that influences that (vector width, k-blocking, thread count,
//! the GEMV/GEMM choice, the device), is invisible in the output. The CUDA half
//! (candle-repro's `matmul::cuda`, `kernels/matmul/matmul.cu`) reaches the same values the same way, with the second
//! and third tiers in headers that compile as host C++ (`kernels/matmul/*.cuh`). Its tier 1
//! is, by default for f32, bf16 and f16 inputs (`cuda::Tier1::for_input`), the integer tier
//! on the int8 tensor cores: each row of a and column of b cut into s8 slices under one
//! power of two per 64 k, the slice products exact in s32, combined in f64 under a bound
//! that also carries what the slices do not cover (`kernels/matmul/ozaki.cuh` has the
//! proof), then the same decision and tiers; f8e4m3 inputs, and `CpuConfig::int_tier =
//! Some(false)`, take f64 sums in shared-memory tiles.

#[doc(hidden)]
pub mod cpu;
#[doc(hidden)]
pub mod kernel;

pub use cpu::{
    CpuConfig, GEMV_MAX_ROWS, KC_MAX, LineStats, Problem, TierCounts, View, tier_counts,
};

use crate::math::Format;
use crate::math::f8::f8e4m3_to_f32;
use crate::{Error, Result};
use half::{bf16, f16};

/// An input element type of the product: widens exactly to f32.
pub trait Input: Copy + Send + Sync + 'static {
    /// The value as f32 (exact).
    fn widen(self) -> f32;
}

impl Input for f32 {
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

impl Input for bf16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        <bf16 as Format>::to_f32(self)
    }
}

impl Input for f16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        <f16 as Format>::to_f32(self)
    }
}

/// Every f8e4m3 value as f32 bits (a table: the widening is a lookup).
static F8E4M3_TABLE: std::sync::LazyLock<[f32; 256]> =
    std::sync::LazyLock::new(|| std::array::from_fn(|b| f8e4m3_to_f32(b as u8)));

impl Input for float8::F8E4M3 {
    #[inline(always)]
    fn widen(self) -> f32 {
        F8E4M3_TABLE[self.to_bits() as usize]
    }
}

/// Whether `T` is f8e4m3, whose sums of products are exact in f64 up to
/// [`cpu::F8_EXACT_MAX_K`] terms.
fn is_f8<T: Input>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<float8::F8E4M3>()
}

impl<T> View<'_, T> {
    /// Whether every element of a (rows, cols) operand lies inside `data`.
    fn fits(&self, rows: usize, cols: usize) -> bool {
        if rows == 0 || cols == 0 {
            return true;
        }
        let last = (rows - 1)
            .checked_mul(self.rs)
            .zip((cols - 1).checked_mul(self.cs))
            .and_then(|(r, c)| r.checked_add(c))
            .and_then(|rc| rc.checked_add(self.base));
        last.is_some_and(|l| l < self.data.len())
    }
}

impl<'a, T: Input> Problem<'a, T> {
    /// `a.len()` products of an (m, k) A by a (k, n) B (one view of each per batch index),
    /// with an optional bias of n values (exact f32 values) added to every output row. An
    /// error when the views disagree in number or reach past their data, or the bias has
    /// another length than n.
    pub fn new(
        (m, k, n): (usize, usize, usize),
        a: Vec<View<'a, T>>,
        b: Vec<View<'a, T>>,
        bias: Option<Vec<f32>>,
    ) -> Result<Self> {
        if a.len() != b.len() {
            return Err(Error::new(format!(
                "matmul: {} views of A against {} of B",
                a.len(),
                b.len()
            )));
        }
        if let Some(v) = a.iter().find(|v| !v.fits(m, k)) {
            return Err(Error::new(format!(
                "matmul: an A view (base {}, strides {} x {}) of an ({m}, {k}) operand reaches past its {} values",
                v.base,
                v.rs,
                v.cs,
                v.data.len()
            )));
        }
        if let Some(v) = b.iter().find(|v| !v.fits(k, n)) {
            return Err(Error::new(format!(
                "matmul: a B view (base {}, strides {} x {}) of a ({k}, {n}) operand reaches past its {} values",
                v.base,
                v.rs,
                v.cs,
                v.data.len()
            )));
        }
        if let Some(c) = &bias
            && c.len() != n
        {
            return Err(Error::new(format!(
                "matmul: a bias of {} values for {n} columns",
                c.len()
            )));
        }
        Ok(Problem {
            m,
            n,
            k,
            a,
            b,
            bias,
            exact_sums: is_f8::<T>() && k <= cpu::F8_EXACT_MAX_K,
        })
    }

    /// The number of products (batch indices).
    pub fn batch(&self) -> usize {
        self.a.len()
    }

    /// (m, k, n).
    pub fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.k, self.n)
    }
}

/// Every product of `p`, row-major (batch, m, n): `out[b, i, j] = round(sum_q A_b[i, q]
/// B_b[q, j] (+ bias[j]))`, the exact sum rounded once to `O` (see the module header).
///
/// ```
/// use repro_core::matmul::{Problem, View, matmul};
/// // 1e8 + 1 - 1e8: a running f32 sum loses the 1; the exact sum rounded once keeps it.
/// let a = [1e8f32, 1.0, -1e8];
/// let b = [1f32, 1.0, 1.0];
/// let view = |data| View { data, base: 0, rs: 3, cs: 1 };
/// let col = View { data: &b[..], base: 0, rs: 1, cs: 1 };
/// let p = Problem::new((1, 3, 1), vec![view(&a[..])], vec![col], None).unwrap();
/// assert_eq!(matmul::<f32, f32>(&p), [1.0]);
/// ```
pub fn matmul<T: Input, O: Format>(p: &Problem<T>) -> Vec<O> {
    let mut out = crate::buffer::uninit::<O>(p.batch() * p.m * p.n);
    cpu::matmul::<T, O>(p, CpuConfig::default(), None, &mut out);
    // SAFETY: cpu::matmul writes every element.
    unsafe { crate::buffer::assume_init(out) }
}

/// [`matmul`] under a chosen configuration (vector path, blocking, tiers: none changes a
/// bit) and with B's column stats computed once beforehand (for a weight shared by many
/// products; [`column_stats`]).
#[doc(hidden)]
pub fn matmul_with<T: Input, O: Format>(
    p: &Problem<T>,
    cfg: CpuConfig,
    prepared_cols: Option<&[LineStats]>,
) -> Result<Vec<O>> {
    if let Some(c) = prepared_cols
        && c.len() != p.n
    {
        return Err(Error::new(format!(
            "matmul: {} prepared column stats for {} columns",
            c.len(),
            p.n
        )));
    }
    let mut out = crate::buffer::uninit::<O>(p.batch() * p.m * p.n);
    cpu::matmul::<T, O>(p, cfg, prepared_cols, &mut out);
    // SAFETY: cpu::matmul writes every element.
    Ok(unsafe { crate::buffer::assume_init(out) })
}

/// The column stats of a (k, n) operand, for [`matmul_with`]; an error when the view
/// reaches past its data.
#[doc(hidden)]
pub fn column_stats<T: Input>(b: View<T>, k: usize, n: usize) -> Result<Vec<LineStats>> {
    if !b.fits(k, n) {
        return Err(Error::new(format!(
            "matmul: a B view of a ({k}, {n}) operand reaches past its {} values",
            b.data.len()
        )));
    }
    Ok(cpu::column_stats(b, k, n))
}
