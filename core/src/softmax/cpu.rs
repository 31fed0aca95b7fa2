//! The CPU rows of softmax and log-softmax (the algorithm, its error bound and the special
//! rows are in the parent module's documentation): the row passes, written once and compiled
//! for each vector path; the split of rows into rayon tasks and of long rows into blocks; and
//! the backward rows. The adapters' CPU ops (candle-repro's `softmax_fwd` on candle's
//! storage, burn-repro's on Flex) call these over plain slices.

use super::{BLOCK, LONG_ROW, TASK_ELEMS};
use crate::buffer;
use crate::math::dd::{DD, round_odd, two_sum};
use crate::math::exact_sum::{FLUSH_CHUNKS, FixedSum, LANES, exponent_floor, split};
use crate::math::exp::exp_fast_f64;
use crate::math::log::{log_dd, log1p_dd};
use crate::math::round::pow2;
use crate::math::vector::path_copies;
use crate::math::{Format, VectorPath};
use rayon::prelude::*;

/// f32 lanes of the max/count passes.
const MLANES: usize = 16;

// ---------------------------------------------------------------------------------------
// Row passes (generic, inlined into the vector-path copies below)
// ---------------------------------------------------------------------------------------

/// The maximum of a block, NaNs ignored (-inf for an empty block or a block of NaNs).
#[inline(always)]
fn max_pass<F: Format>(x: &[F]) -> f32 {
    let mut m = [f32::NEG_INFINITY; MLANES];
    let mut chunks = x.chunks_exact(MLANES);
    for c in &mut chunks {
        for l in 0..MLANES {
            let v = c[l].to_f32();
            m[l] = if v > m[l] { v } else { m[l] };
        }
    }
    for v in chunks.remainder() {
        let v = v.to_f32();
        m[0] = if v > m[0] { v } else { m[0] };
    }
    let mut mm = f32::NEG_INFINITY;
    for v in m {
        mm = if v > mm { v } else { mm };
    }
    mm
}

/// Counts of a block against the maximum m: (#{x == m}, #{x <= m}, max {x < m}). A block
/// has a NaN exactly when #{x <= m} is below its length (every other value is <= m).
#[inline(always)]
fn count_pass<F: Format>(x: &[F], m: f32) -> (u64, u64, f32) {
    let mut k = [0u32; MLANES];
    let mut le = [0u32; MLANES];
    let mut x2 = [f32::NEG_INFINITY; MLANES];
    let (mut k_total, mut le_total) = (0u64, 0u64);
    // u32 lane counters, folded every 2^20 chunks.
    for big in x.chunks(MLANES << 20) {
        let mut chunks = big.chunks_exact(MLANES);
        for c in &mut chunks {
            for l in 0..MLANES {
                let v = c[l].to_f32();
                k[l] += (v == m) as u32;
                le[l] += (v <= m) as u32;
                x2[l] = if v < m && v > x2[l] { v } else { x2[l] };
            }
        }
        for v in chunks.remainder() {
            let v = v.to_f32();
            k[0] += (v == m) as u32;
            le[0] += (v <= m) as u32;
            x2[0] = if v < m && v > x2[0] { v } else { x2[0] };
        }
        for l in 0..MLANES {
            k_total += k[l] as u64;
            le_total += le[l] as u64;
            k[l] = 0;
            le[l] = 0;
        }
    }
    let mut xx = f32::NEG_INFINITY;
    for v in x2 {
        xx = if v > xx { v } else { xx };
    }
    (k_total, le_total, xx)
}

/// What a finite-maximum row needs after the first two passes.
#[derive(Clone, Copy, Debug)]
struct RowParams {
    /// 2^-(E2+1): scales the non-maximal terms into [0, 1 + 2^-50].
    scale: f64,
    /// E2 + 1.
    scale_exp: i32,
}

impl RowParams {
    fn new(m: f32, x2: f32) -> RowParams {
        let e2 = exp_fast_f64(x2 as f64 - m as f64);
        let scale_exp = exponent_floor(e2) + 1;
        RowParams {
            scale: pow2(-scale_exp),
            scale_exp,
        }
    }
}

/// e^(x - m) for one element.
#[inline(always)]
fn term(x: f32, m: f32) -> f64 {
    exp_fast_f64(x as f64 - m as f64)
}

/// Fixed-point sum of a block's terms. softmax (`LOG = false`): every e_i (the maxima
/// give exactly 1), each also written to `scratch` (same length as x). log-softmax
/// (`LOG = true`): the non-maximal terms scaled by `scale` (maxima give 0), nothing stored.
/// Also says whether a NaN entered (a NaN x gives a NaN e_i, which makes its lane NaN:
/// checked at every flush, before the lanes become integers).
#[inline(always)]
fn sum_pass<F: Format, const LOG: bool>(
    x: &[F],
    m: f32,
    scale: f64,
    scratch: &mut [f64],
) -> (FixedSum, bool) {
    let mut total = FixedSum::default();
    let mut nan = false;
    let block = FLUSH_CHUNKS * LANES;
    let mut base = 0;
    for xb in x.chunks(block) {
        // One flush period: every lane addition below is exact (see exact_sum).
        let mut hi = [0.0f64; LANES];
        let mut lo = [0.0f64; LANES];
        let mut chunks = xb.chunks_exact(LANES);
        for c in &mut chunks {
            let mut e = [0.0f64; LANES];
            for l in 0..LANES {
                let xf = c[l].to_f32();
                e[l] = term(xf, m);
                let v = if LOG {
                    if xf < m { e[l] * scale } else { 0.0 }
                } else {
                    e[l]
                };
                let (h, lw) = split(v);
                hi[l] += h;
                lo[l] += lw;
            }
            if !LOG {
                scratch[base..base + LANES].copy_from_slice(&e);
            }
            base += LANES;
        }
        for xv in chunks.remainder() {
            let xf = xv.to_f32();
            let e = term(xf, m);
            let v = if LOG {
                if xf < m { e * scale } else { 0.0 }
            } else {
                scratch[base] = e;
                e
            };
            base += 1;
            let (h, lw) = split(v);
            hi[0] += h;
            lo[0] += lw;
        }
        for h in hi {
            nan |= h.is_nan();
        }
        total = total.merge(FixedSum::from_lanes(&hi, &lo));
    }
    (total, nan)
}

/// T = S - 1 for log-softmax, from the count of maxima and the exact scaled sum.
fn log_total(k: u64, sum: FixedSum, p: RowParams) -> DD {
    sum.to_dd(p.scale_exp).add_f64((k - 1) as f64)
}

/// r = 1/S in f64 from the row's exact total.
fn softmax_recip(sum: FixedSum) -> f64 {
    1.0 / sum.to_dd(0).hi
}

/// One softmax output: e^(x - m) * r rounded once (a multiplication, not a division per
/// element: vector division is several times slower).
#[inline(always)]
fn softmax_value<F: Format>(x: f32, m: f32, r: f64) -> F {
    F::round(term(x, m) * r)
}

/// softmax outputs of a block: [`softmax_value`], from the terms of the sum pass when
/// they were kept (the same e_i).
#[inline(always)]
fn softmax_out<F: Format>(x: &[F], m: f32, r: f64, scratch: Option<&[f64]>, out: &mut [Out<F>]) {
    match scratch {
        Some(e) => {
            for (o, &e) in out.iter_mut().zip(e) {
                o.write(F::round(e * r));
            }
        }
        None => {
            for (o, xv) in out.iter_mut().zip(x) {
                o.write(softmax_value(xv.to_f32(), m, r));
            }
        }
    }
}

/// One log-softmax output: (x - m) - L, L = log1p(T) as a double-double, rounded to odd
/// and then once to F; -inf entries give -inf.
#[inline(always)]
fn log_softmax_value<F: Format>(x: f32, m: f32, l: DD) -> F {
    let (dh, dl) = two_sum(x as f64, -(m as f64));
    let y = round_odd(DD::new(dh, dl).sub(l));
    F::round(if x == f32::NEG_INFINITY {
        f64::NEG_INFINITY
    } else {
        y
    })
}

/// log-softmax outputs of a block.
#[inline(always)]
fn log_softmax_out<F: Format>(x: &[F], m: f32, l: DD, out: &mut [Out<F>]) {
    for (o, xv) in out.iter_mut().zip(x) {
        o.write(log_softmax_value(xv.to_f32(), m, l));
    }
}

/// The values of a special row (a NaN, or a non-finite maximum): (value of the +inf
/// entries, value of the others); both the canonical NaN for a row with a NaN or all -inf.
pub(crate) fn special_values<F: Format>(log: bool, nan: bool, m: f32, k: u64) -> (F, F) {
    if nan || m == f32::NEG_INFINITY {
        let q = F::round(f64::NAN);
        return (q, q);
    }
    // m = +inf: the k infinite entries share the mass.
    let kd = DD::from_f64(k as f64);
    if log {
        (
            F::round(round_odd(DD::from_f64(0.0).sub(log_dd(kd)))),
            F::round(f64::NEG_INFINITY),
        )
    } else {
        (
            F::round(round_odd(DD::from_f64(1.0).div(kd))),
            F::round(0.0),
        )
    }
}

/// Fill a row whose maximum is not finite, or that has a NaN.
fn special_row<F: Format>(log: bool, nan: bool, m: f32, x: &[F], k: u64, out: &mut [Out<F>]) {
    let (on, off) = special_values::<F>(log, nan, m, k);
    for (o, v) in out.iter_mut().zip(x) {
        o.write(if v.to_f32() == f32::INFINITY { on } else { off });
    }
}

/// One short row, all passes (scratch.len() >= x.len()).
#[inline(always)]
fn row_generic<F: Format>(log: bool, x: &[F], out: &mut [Out<F>], scratch: &mut [f64]) {
    if x.is_empty() {
        return;
    }
    let m = max_pass(x);
    if log {
        let (k, le, x2) = count_pass(x, m);
        let nan = le != x.len() as u64;
        if nan || !m.is_finite() {
            special_row(log, nan, m, x, k, out);
            return;
        }
        let p = RowParams::new(m, x2);
        let (sum, _) = sum_pass::<F, true>(x, m, p.scale, &mut []);
        log_softmax_out(x, m, log1p_dd(log_total(k, sum, p)), out);
    } else {
        if !m.is_finite() {
            let (k, le, _) = count_pass(x, m);
            special_row(log, le != x.len() as u64, m, x, k, out);
            return;
        }
        let scratch = &mut scratch[..x.len()];
        let (sum, nan) = sum_pass::<F, false>(x, m, 1.0, scratch);
        if nan {
            special_row(log, true, m, x, 0, out);
            return;
        }
        softmax_out(x, m, softmax_recip(sum), Some(scratch), out);
    }
}

/// A group of whole short rows of length n.
#[inline(always)]
fn rows_generic<F: Format>(log: bool, n: usize, x: &[F], out: &mut [Out<F>]) {
    let mut scratch = vec![0.0f64; n];
    for (xr, or) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        row_generic(log, xr, or, &mut scratch);
    }
}

// ---------------------------------------------------------------------------------------
// Vector-path copies (`path_copies!`): the same code compiled for AVX2 / AVX-512 (FMA
// enabled, never used: Rust does not contract a * b + c), so every copy gives the same bits.
// ---------------------------------------------------------------------------------------

path_copies! {
    fn rows_mv<F: Format>(log: bool, n: usize, x: &[F], out: &mut [Out<F>]) = rows_generic::<F>;
}
path_copies! {
    fn max_mv<F: Format>(x: &[F]) -> f32 = max_pass::<F>;
}
path_copies! {
    fn count_mv<F: Format>(x: &[F], m: f32) -> (u64, u64, f32) = count_pass::<F>;
}

#[inline(always)]
fn sum_block_log<F: Format>(x: &[F], m: f32, scale: f64) -> FixedSum {
    sum_pass::<F, true>(x, m, scale, &mut []).0
}
path_copies! {
    fn sum_log_mv<F: Format>(x: &[F], m: f32, scale: f64) -> FixedSum = sum_block_log::<F>;
}

/// softmax's sum over a block of a long row (the terms are recomputed for the output).
#[inline(always)]
fn sum_block_softmax<F: Format>(x: &[F], m: f32) -> (FixedSum, bool) {
    let mut scratch = vec![0.0; x.len()];
    sum_pass::<F, false>(x, m, 1.0, &mut scratch)
}
path_copies! {
    fn sum_softmax_mv<F: Format>(x: &[F], m: f32) -> (FixedSum, bool) = sum_block_softmax::<F>;
}

#[inline(always)]
fn softmax_block<F: Format>(x: &[F], m: f32, r: f64, out: &mut [Out<F>]) {
    softmax_out(x, m, r, None, out)
}
path_copies! {
    fn softmax_out_mv<F: Format>(x: &[F], m: f32, r: f64, out: &mut [Out<F>]) = softmax_block::<F>;
}

#[inline(always)]
fn log_block<F: Format>(x: &[F], m: f32, l: DD, out: &mut [Out<F>]) {
    log_softmax_out(x, m, l, out)
}
path_copies! {
    fn log_out_mv<F: Format>(x: &[F], m: f32, l: DD, out: &mut [Out<F>]) = log_block::<F>;
}

/// One long row, each pass split into blocks of [`BLOCK`] over rayon.
fn long_row<F: Format>(path: VectorPath, log: bool, x: &[F], out: &mut [Out<F>]) {
    let m = x
        .par_chunks(BLOCK)
        .map(|b| max_mv(path, b))
        .reduce(|| f32::NEG_INFINITY, |a, b| if b > a { b } else { a });
    let counts = || {
        x.par_chunks(BLOCK).map(|b| count_mv(path, b, m)).reduce(
            || (0, 0, f32::NEG_INFINITY),
            |a, b| (a.0 + b.0, a.1 + b.1, if b.2 > a.2 { b.2 } else { a.2 }),
        )
    };
    if log {
        let (k, le, x2) = counts();
        let nan = le != x.len() as u64;
        if nan || !m.is_finite() {
            special_row(log, nan, m, x, k, out);
            return;
        }
        let p = RowParams::new(m, x2);
        let sum = x
            .par_chunks(BLOCK)
            .map(|b| sum_log_mv(path, b, m, p.scale))
            .reduce(FixedSum::default, FixedSum::merge);
        let l = log1p_dd(log_total(k, sum, p));
        out.par_chunks_mut(BLOCK)
            .zip(x.par_chunks(BLOCK))
            .for_each(|(o, b)| log_out_mv(path, b, m, l, o));
    } else {
        if !m.is_finite() {
            let (k, le, _) = counts();
            special_row(log, le != x.len() as u64, m, x, k, out);
            return;
        }
        let (sum, nan) = x
            .par_chunks(BLOCK)
            .map(|b| sum_softmax_mv(path, b, m))
            .reduce(
                || (FixedSum::default(), false),
                |a, b| (a.0.merge(b.0), a.1 | b.1),
            );
        if nan {
            special_row(log, true, m, x, 0, out);
            return;
        }
        let r = softmax_recip(sum);
        out.par_chunks_mut(BLOCK)
            .zip(x.par_chunks(BLOCK))
            .for_each(|(o, b)| softmax_out_mv(path, b, m, r, o));
    }
}

/// An output element not yet written: the output buffers are allocated uninitialized (no
/// memset of memory that every row overwrites anyway) and written exactly once.
type Out<F> = std::mem::MaybeUninit<F>;

/// Softmax (or log-softmax) of every row of length `n` of `x` into `out`, on the given
/// vector path. The bits depend on nothing but the row's values.
pub fn softmax_rows_with<F: Format>(
    path: VectorPath,
    log: bool,
    n: usize,
    x: &[F],
    out: &mut [Out<F>],
) {
    assert_eq!(x.len(), out.len(), "input and output differ in length");
    if n == 0 || x.is_empty() {
        return;
    }
    assert_eq!(x.len() % n, 0, "length not a multiple of the row length");
    if n > LONG_ROW {
        for (xr, or) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
            long_row(path, log, xr, or);
        }
    } else {
        let rows_per_task = (TASK_ELEMS / n).max(1);
        out.par_chunks_mut(rows_per_task * n)
            .zip(x.par_chunks(rows_per_task * n))
            .for_each(|(o, xs)| rows_mv(path, log, n, xs, o));
    }
}

/// [`softmax_rows_with`] on the crate's vector path (`crate::math::vector::best_path`).
pub fn softmax_rows<F: Format>(log: bool, n: usize, x: &[F], out: &mut [Out<F>]) {
    softmax_rows_with(crate::math::vector::best_path(), log, n, x, out)
}

/// Softmax over rows of length `n` of a slice, on a chosen vector path (for tests and
/// benchmarks; the adapters' tensor ops call [`softmax_rows`]).
pub fn softmax_slice_with<F: Format + Default>(path: VectorPath, n: usize, x: &[F]) -> Vec<F> {
    let mut out = buffer::uninit(x.len());
    softmax_rows_with(path, false, n, x, &mut out);
    // SAFETY: softmax_rows_with wrote every element.
    unsafe { buffer::assume_init(out) }
}

/// Log-softmax over rows of length `n` of a slice, on a chosen vector path.
pub fn log_softmax_slice_with<F: Format + Default>(path: VectorPath, n: usize, x: &[F]) -> Vec<F> {
    let mut out = buffer::uninit(x.len());
    softmax_rows_with(path, true, n, x, &mut out);
    // SAFETY: softmax_rows_with wrote every element.
    unsafe { buffer::assume_init(out) }
}

// ---------------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------------

/// The order-free sum of `v(i)`, i in 0..n: the exact fixed-point sum relative to the
/// largest magnitude when every term is finite, else the IEEE sum of the non-finite terms
/// (which does not depend on the order either).
fn exact_row_sum(n: usize, v: impl Fn(usize) -> f64) -> f64 {
    let mut amax = 0.0f64;
    let mut pinf = false;
    let mut ninf = false;
    let mut nan = false;
    for i in 0..n {
        let t = v(i);
        let a = t.abs();
        amax = if a > amax { a } else { amax };
        nan |= t.is_nan();
        pinf |= t == f64::INFINITY;
        ninf |= t == f64::NEG_INFINITY;
    }
    if nan || (pinf && ninf) {
        return f64::NAN;
    }
    if pinf {
        return f64::INFINITY;
    }
    if ninf {
        return f64::NEG_INFINITY;
    }
    if amax == 0.0 {
        return 0.0;
    }
    let e = exponent_floor(amax) + 1;
    let sum = crate::math::exact_sum::sum_scaled(n, pow2(-e), &v);
    sum.to_dd(e).hi
}

/// The summand of element i: softmax g_i y_i (exact in f64: two 24-bit significands),
/// log-softmax g_i.
#[inline(always)]
fn bwd_term<F: Format>(log: bool, y: F, g: F) -> f64 {
    let gv = g.to_f32() as f64;
    if log { gv } else { gv * y.to_f32() as f64 }
}

/// One gradient element from the row's sum s: softmax (g - s) y, log-softmax g - e^y s, in
/// f64, rounded once.
#[inline(always)]
fn bwd_value<F: Format>(log: bool, y: F, g: F, s: f64) -> F {
    let (gv, yv) = (g.to_f32() as f64, y.to_f32() as f64);
    if log {
        F::round(gv - exp_fast_f64(yv) * s)
    } else {
        F::round((gv - s) * yv)
    }
}

/// Backward of one row: y the forward output, g the gradient of the output.
fn bwd_row<F: Format>(log: bool, y: &[F], g: &[F], out: &mut [F]) {
    let s = exact_row_sum(y.len(), |i| bwd_term(log, y[i], g[i]));
    for ((o, &y), &g) in out.iter_mut().zip(y).zip(g) {
        *o = bwd_value(log, y, g, s);
    }
}

fn bwd_rows<F: Format + Default>(log: bool, n: usize, y: &[F], g: &[F]) -> Vec<F> {
    let mut out = vec![F::default(); y.len()];
    if n == 0 || y.is_empty() {
        return out;
    }
    let rows_per_task = (TASK_ELEMS / n).max(1);
    out.par_chunks_mut(rows_per_task * n)
        .zip(y.par_chunks(rows_per_task * n))
        .zip(g.par_chunks(rows_per_task * n))
        .for_each(|((o, y), g)| {
            for ((o, y), g) in o
                .chunks_exact_mut(n)
                .zip(y.chunks_exact(n))
                .zip(g.chunks_exact(n))
            {
                bwd_row(log, y, g, o);
            }
        });
    out
}

/// The backward pass over rows of length `n` of slices (`y` the forward output, `g` the
/// output's gradient), for the host cross-check of the CUDA kernels; the tensor ops use the
/// same code through their `bwd`.
#[doc(hidden)]
pub fn softmax_bwd_slice<F: Format + Default>(log: bool, n: usize, y: &[F], g: &[F]) -> Vec<F> {
    assert_eq!(y.len(), g.len(), "output and gradient differ in length");
    bwd_rows(log, n, y, g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_fast_is_exact_where_softmax_relies_on_it() {
        assert_eq!(exp_fast_f64(0.0), 1.0);
        assert_eq!(exp_fast_f64(-0.0), 1.0);
        assert_eq!(exp_fast_f64(f64::NEG_INFINITY), 0.0);
        assert!(exp_fast_f64(f64::NAN).is_nan());
    }

    /// The block-split path of long rows gives the one-pass path's bits.
    #[test]
    fn long_row_blocks_equal_one_pass() {
        let mut st = 1u64;
        let n = 3 * BLOCK + 77;
        let x: Vec<f32> = (0..n)
            .map(|_| {
                st = st
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((st >> 40) as f32 / (1u64 << 24) as f32) * 40.0 - 20.0
            })
            .collect();
        for log in [false, true] {
            let mut a = buffer::uninit::<f32>(n);
            let mut b = buffer::uninit::<f32>(n);
            let mut scratch = vec![0.0; n];
            row_generic(log, &x, &mut a, &mut scratch);
            long_row(VectorPath::detect(), log, &x, &mut b);
            // SAFETY: both functions write every element of the row.
            let (a, b) = unsafe { (buffer::assume_init(a), buffer::assume_init(b)) };
            assert!(a.iter().zip(&b).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }

    #[test]
    fn special_rows() {
        let p = VectorPath::Baseline;
        let y = softmax_slice_with::<f32>(p, 3, &[f32::INFINITY, 1.0, f32::INFINITY]);
        assert_eq!(y, vec![0.5, 0.0, 0.5]);
        let y = log_softmax_slice_with::<f32>(p, 3, &[f32::INFINITY, 1.0, f32::INFINITY]);
        assert_eq!(
            y,
            vec![
                -std::f32::consts::LN_2,
                f32::NEG_INFINITY,
                -std::f32::consts::LN_2
            ]
        );
        let y = softmax_slice_with::<f32>(p, 2, &[f32::NEG_INFINITY; 2]);
        assert!(y.iter().all(|v| v.to_bits() == 0x7FC0_0000));
        let y = softmax_slice_with::<f32>(p, 3, &[1.0, f32::NAN, 2.0]);
        assert!(y.iter().all(|v| v.to_bits() == 0x7FC0_0000));
        assert_eq!(softmax_slice_with::<f32>(p, 1, &[3.0]), vec![1.0]);
        let l = log_softmax_slice_with::<f32>(p, 1, &[3.0]);
        assert_eq!(l[0].to_bits(), 0);
        let y = softmax_slice_with::<f32>(p, 3, &[f32::NEG_INFINITY, 0.0, 0.0]);
        assert_eq!(y, vec![0.0, 0.5, 0.5]);
        let l = log_softmax_slice_with::<f32>(p, 2, &[0.0, -100.0]);
        // -log1p(e^-100) = -3.720075976020836e-44 (a subnormal f32).
        assert_eq!(l[0], -f32::from_bits(0x1B)); // 27 * 2^-149
        assert_eq!(l[1], -100.0);
    }
}
