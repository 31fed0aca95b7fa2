//! The CPU half of the norms: one row at a time, two tiers (the definition and the bounds
//! are in `super`'s header).
//!
//! 1. f64: the mean (compensated sum), the deviations, their sum of squares, 1/sqrt(V),
//!    each output with an absolute error bound; accepted when the bound's interval rounds
//!    to one value ([`round_within_parts`]).
//! 2. exact: the row's exact sums (fixed-point, [`ExactDot`]), and for each output the
//!    tier left, the sign of y - m for dyadic m decided in integers ([`super::exact`]),
//!    by bisection between the two candidates tier 1 gave ([`round_by_comparison`]).

use super::NormParams;
use super::exact::{ExactRow, decide};
use crate::math::Format;
use crate::math::exact_dot::{DOT2_LANES, dot2};
use crate::math::exact_round::round_by_comparison;
use crate::math::round::round_within_parts;
use std::mem::MaybeUninit;

/// u = 2^-53.
const U: f64 = f64::from_bits(0x3CA0_0000_0000_0000);
/// 1 + 2^-10: slack for the bounds' own roundings and second-order terms.
const SLACK: f64 = f64::from_bits(0x3FF0_0400_0000_0000);

/// The row statistics of tier 1.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowStats {
    /// The mean as computed (0 without mean removal) and the bound of its error.
    pub mu: f64,
    pub delta_mu: f64,
    /// 1/sqrt(V) as computed and the bound of its relative error.
    pub r: f64,
    pub e_r: f64,
}

/// The mean and its error bound from the compensated sum `sx` of the row, the computed
/// sum of |x| (`abs`), and the number of TwoSum lanes or threads the sum was spread over
/// (`lanes`: 8 here, the block size on CUDA; the bound holds for any order of the
/// error-free additions, see `crate::math::exact_dot`). Mirrored in kernels/norm/row.cuh.
#[inline]
pub(crate) fn mean_from_sums(n: usize, sx: f64, abs: f64, lanes: usize) -> (f64, f64) {
    let nf = n as f64;
    // sum |x| is computed with relative error below (n + lanes) u: (1 + 2^-20) covers it.
    let abs = abs * f64::from_bits(0x3FF0_0001_0000_0000);
    let m = (n + lanes) as f64;
    // sx's own rounding (u |sx|) and the error sum's (second order); `super`'s header.
    let e_sx = sx.abs() * U + m * m * f64::from_bits(0x3950_0001_0000_0000) * abs; // 2^-106 (1 + 2^-20)
    let mu = sx / nf;
    // The division's rounding, u |mu|.
    (mu, (e_sx / nf + U * mu.abs()) * SLACK)
}

/// The most additions with two nonzero operands that one square passes through in
/// [`row_stats`]'s sum of squares (element i into lane i mod 8, each lane a chain from
/// 0.0, the lanes added in order by `Iterator::sum`, whose first addition is exact):
/// lane 0's ceil(n/8) - 1 chain additions and the 7 lane additions, or n - 1 when n < 8
/// (the derivation is in `super`'s header). The device's count is
/// `block_square_additions` in kernels/norm/row.cuh.
#[inline]
pub(crate) fn cpu_square_additions(n: usize) -> usize {
    n.saturating_sub(1)
        .min(n.div_ceil(DOT2_LANES) + DOT2_LANES - 2)
}

/// Tier 1's statistics from the mean (and its bound) and the computed sum of squared
/// deviations `ss` (terms >= 0 in a fixed order in which a square passes through at most
/// `adds` additions with two nonzero operands: [`cpu_square_additions`] here,
/// `block_square_additions` on the device). `None` when V is 0 (every deviation is then
/// exactly 0 and every output 0 / 0). Mirrored in kernels/norm/row.cuh.
#[inline]
pub(crate) fn stats_from_sums(
    n: usize,
    adds: usize,
    mu: f64,
    delta_mu: f64,
    ss: f64,
    eps: f32,
) -> Option<RowStats> {
    let nf = n as f64;
    // |ss - sum of exact squared deviations| <= (adds + 5) u ss + 2 n delta_mu^2 (`super`'s
    // header: adds additions, the deviation's and the square's roundings, 2 u spare).
    let e_ss = ((adds as f64 + 5.0) * U * ss + 2.0 * nf * delta_mu * delta_mu) * SLACK;
    let v = ss / nf + eps as f64;
    if v == 0.0 {
        return None;
    }
    let e_v = (e_ss / nf) / v + 2.0 * U;
    let r = 1.0 / v.sqrt();
    let e_r = (e_v * 0.5 + 2.0 * U) * SLACK;
    Some(RowStats {
        mu,
        delta_mu,
        r,
        e_r,
    })
}

/// Tier 1 on one element: (y, its error bound) for y = ((x - mean) w) r (+ b). Mirrored
/// in kernels/norm/row.cuh.
#[inline(always)]
pub(crate) fn element_tier1(x: f32, w: f32, b: Option<f32>, st: &RowStats) -> (f64, f64) {
    let wi = w as f64;
    let d = x as f64 - st.mu;
    let z = d * wi * st.r;
    // No bias adds nothing (not even +0, which would turn a -0 into +0).
    let y = b.map_or(z, |c| z + c as f64);
    let err = (st.r * wi.abs() * st.delta_mu + z.abs() * (3.0 * U + st.e_r) + U * y.abs()) * SLACK;
    (y, err)
}

/// Tier 1's statistics of a finite row (8-lane sums in a fixed order).
fn row_stats(x: &[f32], p: NormParams) -> Option<RowStats> {
    let n = x.len();
    let (mu, delta_mu) = if p.remove_mean {
        let sx = dot2(n, |i| x[i], |_| 1.0, None);
        let mut abs = [0.0f64; DOT2_LANES];
        for (i, v) in x.iter().enumerate() {
            abs[i % DOT2_LANES] += (*v as f64).abs();
        }
        mean_from_sums(n, sx, abs.iter().sum(), DOT2_LANES)
    } else {
        (0.0, 0.0)
    };
    // The sum of squares in the order `cpu_square_additions` counts.
    let mut ss = [0.0f64; DOT2_LANES];
    for (i, v) in x.iter().enumerate() {
        let d = *v as f64 - mu;
        ss[i % DOT2_LANES] += d * d;
    }
    let adds = cpu_square_additions(n);
    stats_from_sums(n, adds, mu, delta_mu, ss.iter().sum(), p.eps)
}

/// One row of the norm: `x`, `w` (and `b`) of length n, the outputs into `out`.
pub(crate) fn norm_row<F: Format>(
    x: &[F],
    w: &[F],
    b: Option<&[F]>,
    p: NormParams,
    out: &mut [MaybeUninit<F>],
) {
    let n = x.len();
    let xs: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
    if !xs.iter().all(|v| v.is_finite()) {
        special_row(&xs, w, b, p, out);
        return;
    }
    let Some(st) = row_stats(&xs, p) else {
        // V = 0: every deviation is exactly 0 (and eps = 0): 0 / 0.
        for o in out.iter_mut() {
            o.write(F::round(f64::NAN));
        }
        return;
    };
    let mut undecided: Vec<(usize, F, F)> = Vec::new();
    for i in 0..n {
        let (y, err) = element_tier1(xs[i], w[i].to_f32(), b.map(|b| b[i].to_f32()), &st);
        let (v, sure) = round_within_parts::<F>(y, err);
        // An exact zero (y = 0, err = 0) needs its sign from the exact tier.
        if sure && !(y == 0.0 && err == 0.0) && !p.exact_only {
            out[i].write(v);
        } else {
            undecided.push((i, F::round(y - err * 2.0), F::round(y + err * 2.0)));
        }
    }
    if undecided.is_empty() {
        return;
    }
    let exact = ExactRow::new(&xs, p);
    for (i, lo, hi) in undecided {
        out[i].write(exact_element::<F>(
            &exact,
            xs[i],
            w[i].to_f32(),
            b.map(|b| b[i].to_f32()),
            lo,
            hi,
            &st,
        ));
    }
}

/// The exact tier for one element (the row finite, V > 0): special weights and biases,
/// else the bisection between tier 1's candidates `lo` and `hi`.
fn exact_element<F: Format>(
    exact: &ExactRow,
    x: f32,
    w: f32,
    b: Option<f32>,
    lo: F,
    hi: F,
    st: &RowStats,
) -> F {
    if exact.v_is_zero() {
        // V = 0 exactly although tier 1's was not (possible only if its mean was off):
        // every deviation is 0, 0 / 0.
        return F::round(f64::NAN);
    }
    if !w.is_finite() || b.is_some_and(|c| !c.is_finite()) {
        return special_one::<F>(exact, x, w, b, st);
    }
    let e = exact.element(x, w, b);
    round_by_comparison::<F>(lo, hi, |m| decide(exact, &e, m), || e.zero_negative(exact))
}

/// An element whose weight or bias is not finite (the row is finite): the formula in IEEE
/// f64, ((x - mean) w) r + b, with x - mean taken at its exact sign (so that 0 * inf is
/// NaN only where x equals the mean exactly) and any magnitude (inf absorbs it).
fn special_one<F: Format>(exact: &ExactRow, x: f32, w: f32, b: Option<f32>, st: &RowStats) -> F {
    let z = if w.is_finite() {
        // Only the bias is not finite: any finite z gives the same sum.
        0.0
    } else {
        let e = exact.element(x, 1.0, None);
        let d = if e.a_is_zero() {
            if e.a_zero_negative() { -0.0 } else { 0.0 }
        } else if e.a_is_negative() {
            -1.0
        } else {
            1.0
        };
        d * w as f64 * st.r
    };
    F::round(b.map_or(z, |c| z + c as f64))
}

/// A row with an infinity or NaN: the formula in IEEE f64 in a fixed order. Any order
/// gives the same: the mean is +-inf or NaN, the sum of squares inf or NaN, r 0 or NaN,
/// whatever the finite elements add.
fn special_row<F: Format>(
    xs: &[f32],
    w: &[F],
    b: Option<&[F]>,
    p: NormParams,
    out: &mut [MaybeUninit<F>],
) {
    let nf = xs.len() as f64;
    let mu = if p.remove_mean {
        xs.iter().map(|&v| v as f64).sum::<f64>() / nf
    } else {
        0.0
    };
    let ss: f64 = xs.iter().map(|&v| (v as f64 - mu) * (v as f64 - mu)).sum();
    let r = 1.0 / (ss / nf + p.eps as f64).sqrt();
    for i in 0..xs.len() {
        let d = xs[i] as f64 - mu;
        // No bias adds nothing (not even +0, which would turn a -0 into +0).
        let z = d * w[i].to_f32() as f64 * r;
        out[i].write(F::round(b.map_or(z, |b| z + b[i].to_f32() as f64)));
    }
}

/// Sum in 8 lanes (element i into lane i mod 8), the lanes added in order.
fn lane_sum(n: usize, v: impl Fn(usize) -> f64) -> f64 {
    let mut lanes = [0.0f64; 8];
    for i in 0..n {
        lanes[i % 8] += v(i);
    }
    lanes.iter().sum()
}

/// The backward pass of one row as [`super::norm_backward`] documents it: `dx` the input's
/// gradient, `dw_part` each element's term of the weight's gradient, both in f64.
pub(crate) fn backward_row(
    p: NormParams,
    x: &[f32],
    w: &[f32],
    g: &[f32],
    dx: &mut [f64],
    dw_part: &mut [f64],
) {
    let n = x.len();
    let nf = n as f64;
    let finite = x.iter().all(|v| v.is_finite());
    let (mu, r) = match row_stats(x, p).filter(|_| finite) {
        Some(st) => (st.mu, st.r),
        None => {
            // The special rows' IEEE evaluation, as the forward pass.
            let mu = if p.remove_mean {
                x.iter().map(|&v| v as f64).sum::<f64>() / nf
            } else {
                0.0
            };
            let ss: f64 = x.iter().map(|&v| (v as f64 - mu) * (v as f64 - mu)).sum();
            (mu, 1.0 / (ss / nf + p.eps as f64).sqrt())
        }
    };
    let d = |i: usize| x[i] as f64 - mu;
    let a = |i: usize| g[i] as f64 * w[i] as f64; // exact
    let ma = if p.remove_mean {
        lane_sum(n, a) / nf
    } else {
        0.0
    };
    let k = lane_sum(n, |i| a(i) * d(i)) * r * r / nf;
    for i in 0..n {
        dx[i] = r * ((a(i) - ma) - d(i) * k);
        dw_part[i] = (g[i] as f64 * d(i)) * r;
    }
}
