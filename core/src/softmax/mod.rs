//! Order-independent softmax and log-softmax over rows, with backward passes, over plain
//! slices: the definition the adapters' tensor ops share (candle-repro's
//! `softmax_last_dim` and `log_softmax_last_dim`, burn-repro's `softmax` and
//! `log_softmax`), whose bits do not depend on the batch size, the thread count, the vector
//! width or the way a row is split into blocks (on the CPU or on CUDA).
//!
//! # Forward, per row x_1..x_n (inputs widened exactly to f32, then f64)
//! 1. m = max x_i (order-free; NaNs are detected separately, see below).
//! 2. d_i = x_i - m in f64. It is exact when the exponents of x_i and m are within 28 of
//!    each other; otherwise it rounds with error <= ulp(d_i)/2, and while e^d_i matters
//!    (d_i >= -746, so |x_i|, |m| < 2^10) that is below 2^-44 absolutely, hence 2^-44
//!    relatively in e_i (2^-46 while y_i is representable in f32: d_i >= -104).
//!    e_i = exp_fast_f64(d_i) (relative error <= 2^-51; exactly 1 for the maxima, exactly 0
//!    for -inf entries, NaN for NaN entries).
//! 3. softmax: S = sum e_i, exactly in the sense of `crate::math::exact_sum`: each e_i in
//!    [0, 1] is split into multiples of 2^-40 and 2^-80 (dropping at most 2^-81), and those
//!    are summed exactly (f64 lanes that cannot round, flushed into 128-bit integers). The
//!    integer totals depend only on the multiset of the e_i: not on the order, the lanes,
//!    the block split, the threads or the CUDA reduction tree. S >= 1 (the maximum gives
//!    1), so S's relative error is below 2^-51 + n 2^-81. A NaN entry makes a lane NaN,
//!    which the flush detects (NaN row).
//!    y_i = e_i * (1/S) in f64, rounded once to the output dtype. Error before that
//!    rounding below 2^-49.4 relative (e_i 2^-51, S 2^-51 + n 2^-81, 1/S and the product
//!    2^-53 each; 2^-43.9 in the rare inexact-d_i case): at most 0.5 ulp + 2^-25 ulp of
//!    f32 (0.5 + 2^-19.9 ulp in that case), within the 1-ulp target with a wide margin.
//! 4. log-softmax needs more: y_max = -log1p(T) with T = S - 1, which can be tiny (a row
//!    [0, -100] has T = e^-100, and y_max = -3.7e-44 is a subnormal f32 that a sum of e_i
//!    to 2^-80 could not resolve). So: k = #{x_i = m} and x2 = max {x_i < m} (counting
//!    pass, which also finds NaNs: #{x_i <= m} < n), e2 = exp_fast_f64(x2 - m) with binary
//!    exponent E2, and the non-maximal terms scaled by 2^-(E2+1) into [0, 1 + 2^-50] are
//!    summed exactly as above: T = (k - 1) + 2^(E2+1) Sigma as a double-double, relative
//!    error about 2^-50 whatever its size. y_i = (x_i - m) - log1p(T): x_i - m exact as a
//!    double-double (two_sum), log1p(T) by `log1p_dd` (2^-100), the difference in
//!    double-double (no cancellation: both terms are <= 0), so y_i's relative error is at
//!    most T's 2^-50 times T/(|d_i| + T) <= 1; rounded to odd, then once to the dtype.
//!
//! # Special rows (the same on CPU and CUDA)
//! * any NaN: the whole row is the canonical NaN;
//! * +inf entries (k of them): the limit as they grow together: softmax 1/k on them and 0
//!   elsewhere; log-softmax -ln k on them and -inf elsewhere;
//! * all entries -inf: NaN row (like PyTorch and candle: the row has no finite mass);
//! * other -inf entries: softmax 0, log-softmax -inf;
//! * a row of length 1 (finite): softmax 1, log-softmax +0.
//!
//! # Backward (order-independent as well)
//! With y the forward output and g the incoming gradient:
//! * softmax: dx_i = y_i (g_i - s), s = sum g_j y_j. Each product g_j y_j is exact in f64
//!   (two 24-bit significands); s is their order-free fixed-point sum (quantum 2^-80 of
//!   the largest |g_j y_j|), then dx_i = (g_i - s) y_i in f64, rounded once to the dtype.
//! * log-softmax: dx_i = g_i - p_i G, G = sum g_j (the same exact sum), p_i =
//!   exp_fast_f64(y_i), in f64, rounded once.
//!   Non-finite gradients make s or G the IEEE sum of the non-finite terms (NaN if any NaN
//!   or both infinities: order-free).
//!
//! # Parallelism
//! Rows are grouped into tasks of a fixed size (at most [`TASK_ELEMS`] elements) over
//! rayon; a row longer than [`LONG_ROW`] is split into blocks of [`BLOCK`] elements whose
//! maxima, counts and fixed-point sums are combined exactly. Neither the grouping nor the
//! split changes a bit: every step is either elementwise or an exact, order-free reduction.

/// The rows on every vector path, the parallel split and the backward rows.
mod cpu;

pub use cpu::{
    log_softmax_slice_with, softmax_bwd_slice, softmax_rows, softmax_rows_with, softmax_slice_with,
};

/// Elements per rayon task for short rows (whole rows per task).
pub const TASK_ELEMS: usize = 1 << 15;
/// Rows longer than this are split into blocks, each block one rayon task.
pub const LONG_ROW: usize = 1 << 16;
/// Block size of long rows (a multiple of the accumulator's lanes).
pub const BLOCK: usize = 1 << 15;
