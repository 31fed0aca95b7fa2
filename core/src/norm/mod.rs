//! RMSNorm and LayerNorm over rows, correctly rounded, over plain slices: the definition
//! the adapters' tensor ops share (candle-repro's `nn::rms_norm` and `nn::layer_norm`,
//! burn-repro's `rms_norm` and `layer_norm`), whose bits do not depend on the batch, the
//! thread count, the vector width or the device.
//!
//! # Definition
//! For a row x_1..x_n, weight w and bias b (LayerNorm), eps >= 0:
//!   mean = sum x_j / n (LayerNorm; 0 for RMSNorm), V = sum (x_j - mean)^2 / n + eps,
//!   y_i = round((x_i - mean) w_i / sqrt(V) + b_i),
//! the exact real value rounded once to the dtype (f32, bf16, f16), nearest even. The
//! sums are exact, so there is no E[x^2] - mean^2 cancellation and no order. An exact
//! zero takes IEEE's sign for the sequence ((x_i - mean) w_i) / sqrt(V) + b_i (x - mean
//! exactly zero is +0). Rows with an infinity or NaN, V = 0, and non-finite weights or
//! biases take the same formula in IEEE arithmetic (NaN canonical): x / sqrt(inf) = 0,
//! inf / inf = NaN, 0 / 0 = NaN, where every sign is that of the exact operands.
//!
//! # How (`cpu.rs`, `exact.rs`)
//! Tier 1, f64: the mean by a compensated sum (its bound below), the deviations, their squares summed in f64 (relative error below (A + 5) u
//! plus the mean's error squared, A the additions count below), V, r = 1/sqrt(V), and
//! y = ((d w) r) + b with an absolute bound r |w| delta_mean + |z| (3u + e_r) + u |y|;
//! accepted when the interval rounds to one value. Tier 2, exact: the row's sums in fixed
//! point, and y - m decided in integers for the midpoints m between the candidates tier 1
//! left (bisection); ties go to even. The CUDA kernels (`kernels/norm/norm.cu`) reach the
//! same values.
//!
//! # The mean's bound (`cpu::mean_from_sums`, mirrored in kernels/norm/row.cuh)
//! The row's sum is a compensated sum (`crate::math::exact_dot::dot2`'s order on the CPU;
//! on the device each thread's TwoSum chain, then a tree of TwoSums): every TwoSum is
//! error-free, so S = sum x_j = s + sum tau exactly, with s the final TwoSum sum and the
//! tau its errors, and only the error sum e = fl(sum tau) and the last addition
//! sx = fl(s + e) round. With L lanes or threads there are at most N = n + L terms tau,
//! each |tau| <= u (1 + gamma_N) sum |x|, and the error sum, in any order, errs by at most
//! gamma_(N-1) sum |tau| <= N^2 u^2 sum |x| (to first order; the factor 1 + 2^-20 covers
//! the rest for n below 2^26). So |sx - S| <= u |sx| + N^2 2^-106 (1 + 2^-20) sum |x|
//! (round to nearest: |fl(a) - a| <= u |fl(a)|), and the mean mu = fl(sx / n) adds
//! u |mu|:
//!   |mu - mean| <= (u |sx| + N^2 2^-106 (1 + 2^-20) sum |x|) / n + u |mu| = delta_mu,
//! times SLACK for the bound's own roundings (sum |x| is computed with relative error
//! below N u, covered by a second 1 + 2^-20). Both first-order terms are reached: for a
//! row whose exact sum lies just under half an ulp from sx, with sx / n rounded by
//! nearly half an ulp the same way, the error is about 1.8 u |mu| at n = 17 (rows in
//! `tests/hard_norms.rs`), so half of delta_mu (about u |mu|) is not a bound and those
//! rows catch it. (The first-order terms used to be 2^-52 |sx| / n + 2 u |mu|, twice
//! what the rounding needs: half of that was still a bound, and no input could show it.)
//! The second-order term is loose (a chain of N terms errs by about N^2 / 2 u^2 sum |x|
//! at most, the CPU's 8 lanes by far less) and is negligible beside the first-order
//! terms unless the sum cancels to below about 2^-50 sum |x|.
//!
//! # The sum of squares' bound (`cpu::stats_from_sums`, mirrored in kernels/norm/row.cuh)
//! Let mu be the computed mean (0 for RMSNorm), delta_mu its bound, u = 2^-53. Each
//! deviation rounds once, d_i = (x_i - mu)(1 + a_i), each square once, fl(d_i^2) =
//! d_i^2 (1 + b_i), |a_i|, |b_i| <= u. The squares (all >= 0) are then added in the path's
//! fixed order. An addition with a zero operand is exact, so only the additions with two
//! nonzero operands round a square's contribution, each by a factor (1 + c), |c| <= u; A is
//! the largest number of such additions that any one square passes through on its way to
//! the total, counted on the order's structure (an accumulator's initial 0 and a lane or
//! thread without elements are the zero operands; the data's zeros only make fewer):
//! * the CPU (`cpu::row_stats`): element i into lane i mod 8, each lane a chain from 0.0,
//!   then the 8 lanes added in order by `Iterator::sum` (which folds from -0.0, 0.0 in older
//!   Rust: either way its first addition is exact). A square of lane 0 meets its lane's
//!   ceil(n/8) - 1 chain additions and the 7 lane additions (for n <= 8 only lanes 1 to
//!   n - 1 hold elements, so n - 1 of them); a square of lane l >= 1 meets fewer. So
//!   A_cpu = min(n - 1, ceil(n/8) + 6) (`cpu::cpu_square_additions`).
//! * a CUDA block of T threads (T a power of two; `kernels/norm/norm.cu`): thread t sums
//!   elements t, t + T, .. in a chain from 0.0, then the tree `s[j] += s[j + k]` for k = T/2,
//!   .., 1. Thread 0's chain has the most additions, ceil(n/T) - 1. At level k the slot j
//!   holds the threads congruent to j mod 2k, so the addition of slot j has a nonzero
//!   right operand only if j + k < min(n, T); the square's slot is t mod k, and thread 0
//!   (slot 0) meets every level with k < min(n, T): ceil(log2 min(n, T)) of them, no
//!   thread more. So A_dev(n, T) = ceil(n/T) - 1 + ceil(log2 min(n, T))
//!   (`block_square_additions` in row.cuh; n - 1 at one thread per block).
//!
//! Then with S' = sum (x_i - mu)^2, gamma = (1 + u)^(A + 3) - 1: |ss - S'| <= gamma S' <=
//! gamma / (1 - gamma) ss <= (A + 3) u / (1 - 2 (A + 3) u) ss <= (A + 5) u ss while
//! (A + 3)(A + 5) u <= 1, i.e. A below 2^26 (rows below 2^29 elements on the CPU, 2^34
//! at 256 threads per block; the old count n - 1 had the same limit at 2^26 elements).
//! As sum (x_i - mean) = 0 exactly,
//! S' = sum (x_i - mean)^2 + n (mu - mean)^2, within n delta_mu^2. Hence
//!   |ss - sum (x_i - mean)^2| <= (A + 5) u ss + 2 n delta_mu^2,
//! the code's e_ss (the factor 2 and SLACK = 1 + 2^-10 cover the bound's own roundings).
//! The count used to be n - 1 for every path (the bound n + 4 instead of A + 5): valid,
//! but about 8 times too loose on the CPU at large n, so that halving it left a valid
//! bound there and no input could show the difference. With A the halved bound is a
//! defect that rows built in `tests/hard_norms.rs` catch (docs/VERIFICATION.md, "Hardest
//! inputs: norms"). The bound is only tier 1's: the outputs are the correctly rounded
//! values whatever the count, so no output bit depends on it.
//!
//! # Backward
//! Not correctly rounded: a documented fixed sequence of f64 operations (see
//! [`norm_backward`]) in fixed orders, so its bits too are the same on every run, thread
//! count and batch split (the adapters differentiate device tensors on the CPU).

mod cpu;
mod exact;

use crate::math::Format;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// What a norm computes besides its inputs.
#[derive(Clone, Copy, Debug)]
pub struct NormParams {
    /// LayerNorm (subtract the mean) or RMSNorm.
    pub remove_mean: bool,
    /// Added to the variance (finite, >= 0; the adapters check it).
    pub eps: f32,
    /// Tier 1 off: every output through the exact tier (tests).
    pub exact_only: bool,
}

/// Rows per rayon task (at least one row; about 2^15 elements).
fn rows_per_task(n: usize) -> usize {
    ((1 << 15) / n.max(1)).max(1)
}

/// The forward pass over the rows of length n = `w.len()` of `x` into `out` (the same
/// length as `x`, a multiple of n; every element written): weight `w`, bias `b` (LayerNorm
/// with a bias), each output correctly rounded. Rows are grouped into rayon tasks of about
/// 2^15 elements; no bit depends on the grouping.
pub fn norm_rows<F: Format>(
    x: &[F],
    w: &[F],
    b: Option<&[F]>,
    p: NormParams,
    out: &mut [MaybeUninit<F>],
) {
    let n = w.len();
    assert_eq!(x.len(), out.len(), "input and output differ in length");
    assert!(
        b.is_none_or(|b| b.len() == n),
        "bias and weight differ in length"
    );
    if n == 0 {
        return;
    }
    assert_eq!(x.len() % n, 0, "length not a multiple of the row length");
    let per = rows_per_task(n) * n;
    out.par_chunks_mut(per)
        .zip(x.par_chunks(per))
        .for_each(|(o, xr)| {
            for (o, xr) in o.chunks_exact_mut(n).zip(xr.chunks_exact(n)) {
                cpu::norm_row(xr, w, b, p, o);
            }
        });
}

/// The gradients of a norm ([`norm_backward`]), in the dtype of its inputs.
#[derive(Clone, Debug)]
pub struct NormGrads<F> {
    /// The input's gradient (the shape of x).
    pub dx: Vec<F>,
    /// The weight's gradient (n).
    pub dw: Vec<F>,
    /// The bias's gradient (n): the column sums of the output's gradient.
    pub db: Vec<F>,
}

/// The backward pass over the rows of length n = `w.len()`, a fixed sequence of f64
/// operations per row (r, the mean and every sum as the forward pass's tier 1 computes
/// them, sums over a row in 8 lanes, over rows in row order): with d = x - mean (x for
/// RMSNorm), a = g w (exact),
///   dx_j = r ((a_j - sum a / n) - d_j (sum a d) r^2 / n)   (RMSNorm: r (a_j - x_j (sum a x) r^2 / n)),
///   dw_j = sum over rows of (g_j d_j) r,   db_j = sum over rows of g_j,
/// each rounded once to the dtype at the end. The inputs are widened exactly to f32.
pub fn norm_backward<F: Format>(p: NormParams, x: &[F], w: &[F], g: &[F]) -> NormGrads<F> {
    let n = w.len();
    assert_eq!(x.len(), g.len(), "input and gradient differ in length");
    assert!(
        n == 0 || x.len().is_multiple_of(n),
        "length not a multiple of the row length"
    );
    let widen = |v: &[F]| v.iter().map(|e| e.to_f32()).collect::<Vec<f32>>();
    let (xs, ws, gs) = (widen(x), widen(w), widen(g));
    let rows = xs.len() / n.max(1);
    let mut dx = vec![0f64; xs.len()];
    let mut dw_parts = vec![0f64; xs.len()];
    dx.par_chunks_mut(n.max(1))
        .zip(dw_parts.par_chunks_mut(n.max(1)))
        .enumerate()
        .for_each(|(r, (dxr, dwr))| {
            let xr = &xs[r * n..(r + 1) * n];
            let gr = &gs[r * n..(r + 1) * n];
            cpu::backward_row(p, xr, &ws, gr, dxr, dwr);
        });
    let mut dw = vec![0f64; n];
    let mut db = vec![0f64; n];
    for r in 0..rows {
        for j in 0..n {
            dw[j] += dw_parts[r * n + j];
            db[j] += gs[r * n + j] as f64;
        }
    }
    let round = |v: Vec<f64>| v.into_iter().map(F::round).collect::<Vec<F>>();
    NormGrads {
        dx: round(dx),
        dw: round(dw),
        db: round(db),
    }
}
