//! The rotation kernels (CPU) shared by the table ops and the fused op.
//!
//! One scheme everywhere (the CUDA kernel in `kernels/rope.cu` performs the same steps):
//! the inputs are widened exactly to f64 (bf16 and f16 through f32); the two products
//! `x1*c` and `x2*s` are exact in f64 (24-bit by 24-bit significands); TwoSum gives their
//! exact sum as `s + e`; `s` is rounded to odd using `e` (if `e != 0` and `s` is even, move
//! one ulp towards `e`); one final rounding to the dtype. Rounding to odd at 53 bits then
//! to at most 51 bits equals rounding the exact value once (Boldo and Melquiond), so every
//! output is the exact `x1*c - x2*s` (resp. `x1*s + x2*c`) of the stored inputs, correctly
//! rounded. No operation can be contracted into an FMA with a different result: the
//! products are exact, so a fused `a*b + c` gives the same sum as `a*b` then `+ c`.

use crate::math::Format;

/// The exact sum p + q (p, q exact products) correctly rounded to `F`.
#[inline(always)]
pub(crate) fn sum_cr<F: Format>(p: f64, q: f64) -> F {
    // TwoSum: s + e = p + q exactly.
    let s = p + q;
    let bb = s - p;
    let e = (p - (s - bb)) + (q - bb);
    // Round to odd: the exact value lies strictly between s and its neighbour towards e
    // when e != 0; if s is even, the odd neighbour is the odd-rounded value. (s is finite
    // unless an input is inf or NaN; then it is passed through as is.)
    let b = s.to_bits();
    let fix = (e != 0.0) & (b & 1 == 0) & (s.abs() < f64::INFINITY);
    let away = (e > 0.0) == (s > 0.0);
    let moved = if away {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    };
    F::round(f64::from_bits(if fix { moved } else { b }))
}

/// (x1*c - x2*s, x1*s + x2*c), each correctly rounded; `sgn` is +1 (forward) or -1 (the
/// rotation by -theta: backward), applied exactly to s.
#[inline(always)]
pub(crate) fn rotate<F: Format>(x1: F, x2: F, c: F, s: F, sgn: f64) -> (F, F) {
    let a = x1.to_f32() as f64;
    let b = x2.to_f32() as f64;
    let c = c.to_f32() as f64;
    let s = s.to_f32() as f64 * sgn;
    (sum_cr(a * c, -(b * s)), sum_cr(a * s, b * c))
}

/// The three layouts of candle_nn::rotary_emb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RopeLayout {
    /// `rope`: xs (b, h, t, d), rotated halves (x[i], x[i + d/2]).
    Halves,
    /// `rope_i`: xs (b, h, t, d), interleaved pairs (x[2i], x[2i+1]).
    Interleaved,
    /// `rope_thd`: xs (b, t, h, d), rotated halves.
    Thd,
}

impl RopeLayout {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RopeLayout::Halves => "rope",
            RopeLayout::Interleaved => "rope_i",
            RopeLayout::Thd => "rope_thd",
        }
    }
}

/// Geometry of one application: xs dims (b, h, t, d) in the layout's order, cos/sin rows
/// of d/2 entries, `cs_t` rows per batch entry, batched (3D cos/sin) or not.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    pub layout: RopeLayout,
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub b: usize,
    pub h: usize,
    pub t: usize,
    pub d: usize,
    pub cs_t: usize,
    pub batched: bool,
}

impl Geometry {
    /// The cos/sin row used by xs row `r` (rows of d elements in memory order).
    #[inline(always)]
    pub(crate) fn cs_row(&self, r: usize) -> usize {
        let (b_i, t_i) = match self.layout {
            RopeLayout::Halves | RopeLayout::Interleaved => (r / (self.h * self.t), r % self.t),
            RopeLayout::Thd => (r / (self.t * self.h), (r / self.h) % self.t),
        };
        if self.batched {
            b_i * self.cs_t + t_i
        } else {
            t_i
        }
    }
}

#[inline(always)]
fn row_halves<F: Format>(x: &[F], c: &[F], s: &[F], y: &mut [F], sgn: f64) {
    let h = c.len();
    let (x1, x2) = x.split_at(h);
    let (y1, y2) = y.split_at_mut(h);
    let s = &s[..h];
    let x2 = &x2[..h];
    let y2 = &mut y2[..h];
    for i in 0..h {
        let (a, b) = rotate(x1[i], x2[i], c[i], s[i], sgn);
        y1[i] = a;
        y2[i] = b;
    }
}

#[inline(always)]
fn row_interleaved<F: Format>(x: &[F], c: &[F], s: &[F], y: &mut [F], sgn: f64) {
    let h = c.len();
    let s = &s[..h];
    for (i, (xp, yp)) in x.chunks_exact(2).zip(y.chunks_exact_mut(2)).enumerate() {
        let (a, b) = rotate(xp[0], xp[1], c[i], s[i], sgn);
        yp[0] = a;
        yp[1] = b;
    }
}

/// Rows per parallel task (rows of d elements).
const ROWS_PER_TASK: usize = 64;

/// Apply the rotation to contiguous `x` (b*h*t*d elements) with contiguous cos/sin tables
/// (rows of d/2), writing `y`. Each output depends only on its own inputs, so the thread
/// count and the task split change no bit.
pub(crate) fn apply<F: Format + Default>(
    g: &Geometry,
    x: &[F],
    cos: &[F],
    sin: &[F],
    y: &mut [F],
    sgn: f64,
) {
    use rayon::prelude::*;
    let d = g.d;
    let half = d / 2;
    if d == 0 || x.is_empty() {
        return;
    }
    let run = |task: usize, xs: &[F], ys: &mut [F]| {
        for (k, (xr, yr)) in xs.chunks_exact(d).zip(ys.chunks_exact_mut(d)).enumerate() {
            let row = g.cs_row(task * ROWS_PER_TASK + k);
            let c = &cos[row * half..row * half + half];
            let s = &sin[row * half..row * half + half];
            match g.layout {
                RopeLayout::Interleaved => row_interleaved(xr, c, s, yr, sgn),
                _ => row_halves(xr, c, s, yr, sgn),
            }
        }
    };
    let chunk = d * ROWS_PER_TASK;
    if x.len() <= chunk {
        run(0, x, y);
    } else {
        x.par_chunks(chunk)
            .zip(y.par_chunks_mut(chunk))
            .enumerate()
            .for_each(|(task, (xs, ys))| run(task, xs, ys));
    }
}
