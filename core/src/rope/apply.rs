//! The rotation kernels (CPU) shared by the table ops and the fused op.
//!
//! One scheme everywhere (the CUDA kernel in `kernels/rope/rope.cu` performs the same steps):
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
    round_from_odd::<F>(f64::from_bits(if fix { moved } else { b }))
}

/// Round an f64 (already rounded to odd) to `F`: `Format::round`, except for bf16 where a
/// cheaper route gives the same value: f64 -> f32 rounded to odd (IEEE conversion, then
/// one ulp towards the f64 when inexact and even), then f32 -> bf16 to nearest even on the
/// bits. Rounding to odd at 24 bits then to 8 bits equals rounding once (24 >= 8 + 2,
/// Boldo and Melquiond), subnormals included (f32 subnormals keep 16 more bits than bf16
/// ones); an f32 overflow (inf) is beyond the bf16 overflow threshold as well.
#[inline(always)]
fn round_from_odd<F: Format>(y: f64) -> F {
    if std::any::TypeId::of::<F>() == std::any::TypeId::of::<half::bf16>() {
        let t = y as f32;
        let tb = t.to_bits();
        let inexact = (t as f64) != y;
        let fix = inexact & (tb & 1 == 0) & (t.abs() < f32::INFINITY);
        let toward_larger = (y.abs() > (t as f64).abs()) as u32;
        // one ulp up or down in magnitude, keeping the sign (t = ±0 with a tiny y moves
        // up to the smallest subnormal)
        let moved = tb.wrapping_add(2 * toward_larger).wrapping_sub(1);
        let ob = if fix { moved } else { tb };
        let r = ((ob + 0x7FFF + ((ob >> 16) & 1)) >> 16) as u16;
        let r = if y.is_nan() { 0x7FC0 } else { r };
        let v = half::bf16::from_bits(r);
        // SAFETY: F is bf16 (same type, checked above).
        return unsafe { std::mem::transmute_copy::<half::bf16, F>(&v) };
    }
    F::round(y)
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
    /// `rope`: xs (b, h, t, d), rotated halves (`x[i]`, `x[i + d/2]`).
    Halves,
    /// `rope_i`: xs (b, h, t, d), interleaved pairs (`x[2i]`, `x[2i+1]`).
    Interleaved,
    /// `rope_thd`: xs (b, t, h, d), rotated halves.
    Thd,
}

impl RopeLayout {
    /// candle_nn's name of the layout's function.
    pub fn name(self) -> &'static str {
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
pub struct Geometry {
    /// Which of the three layouts.
    pub layout: RopeLayout,
    /// Batch entries.
    pub b: usize,
    /// Heads.
    pub h: usize,
    /// Positions (rows of the sequence).
    pub t: usize,
    /// The head size (even).
    pub d: usize,
    /// Table rows per batch entry (at least t).
    pub cs_t: usize,
    /// Per-batch tables (b, cs_t, d/2) rather than one (cs_t, d/2).
    pub batched: bool,
}

impl Geometry {
    /// The cos/sin row used by xs row `r` (rows of d elements in memory order).
    #[inline(always)]
    pub fn cs_row(&self, r: usize) -> usize {
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
fn row_halves<F: Format>(x: &[F], c: &[F], s: &[F], y: &mut [Out<F>], sgn: f64) {
    let h = c.len();
    let (x1, x2) = x.split_at(h);
    let (y1, y2) = y.split_at_mut(h);
    let s = &s[..h];
    let x2 = &x2[..h];
    let y2 = &mut y2[..h];
    for i in 0..h {
        let (a, b) = rotate(x1[i], x2[i], c[i], s[i], sgn);
        y1[i].write(a);
        y2[i].write(b);
    }
}

#[inline(always)]
fn row_interleaved<F: Format>(x: &[F], c: &[F], s: &[F], y: &mut [Out<F>], sgn: f64) {
    let h = c.len();
    let s = &s[..h];
    for (i, (xp, yp)) in x.chunks_exact(2).zip(y.chunks_exact_mut(2)).enumerate() {
        let (a, b) = rotate(xp[0], xp[1], c[i], s[i], sgn);
        yp[0].write(a);
        yp[1].write(b);
    }
}

/// Rows per parallel task (rows of d elements).
const ROWS_PER_TASK: usize = 64;

/// Rotate the consecutive rows of `xs` (the first is xs row `first`) into `ys`.
#[inline(always)]
fn rows_generic<F: Format>(
    g: &Geometry,
    first: usize,
    xs: &[F],
    cos: &[F],
    sin: &[F],
    ys: &mut [Out<F>],
    sgn: f64,
) {
    let d = g.d;
    let half = d / 2;
    for (k, (xr, yr)) in xs.chunks_exact(d).zip(ys.chunks_exact_mut(d)).enumerate() {
        let row = g.cs_row(first + k);
        let c = &cos[row * half..row * half + half];
        let s = &sin[row * half..row * half + half];
        match g.layout {
            RopeLayout::Interleaved => row_interleaved(xr, c, s, yr, sgn),
            _ => row_halves(xr, c, s, yr, sgn),
        }
    }
}

crate::math::vector::path_copies! {
    /// [`rows_generic`] compiled for `path` (or the widest path below it that the CPU
    /// has); the operations are the same IEEE operations, so every copy gives the same bits
    /// (the products are exact, so even a contraction into an FMA could not change a sum;
    /// Rust does not contract anyway).
    #[allow(clippy::too_many_arguments)]
    fn rows<F: Format>(
        g: &Geometry,
        first: usize,
        xs: &[F],
        cos: &[F],
        sin: &[F],
        ys: &mut [Out<F>],
        sgn: f64,
    ) = rows_generic::<F>;
}

/// Apply the rotation to contiguous `x` (b*h*t*d elements) with contiguous cos/sin tables
/// (rows of d/2), returning the output. Each output depends only on its own inputs, so the
/// thread count, the task split and the vector width change no bit.
pub fn apply<F: Format + Default>(g: &Geometry, x: &[F], cos: &[F], sin: &[F], sgn: f64) -> Vec<F> {
    use rayon::prelude::*;
    let d = g.d;
    if d == 0 || x.is_empty() {
        return vec![F::default(); x.len()];
    }
    let mut out = crate::buffer::uninit::<F>(x.len());
    let y = &mut out[..];
    let path = crate::math::vector::best_path();
    let chunk = d * ROWS_PER_TASK;
    if g.layout != RopeLayout::Thd && g.h > 1 && g.t >= 2 * T_BLOCK && x.len() > chunk {
        // (b, h, t, d): a task is one batch entry and a block of T_BLOCK positions, looping
        // over the heads, so the block's table rows stay in L1 across the heads (a head-major
        // order would stream the whole table once per head).
        let nblk = g.t.div_ceil(T_BLOCK);
        let yp = SyncPtr(y.as_mut_ptr());
        (0..g.b * nblk).into_par_iter().for_each(|task| {
            let (b_i, t0) = (task / nblk, (task % nblk) * T_BLOCK);
            let len = T_BLOCK.min(g.t - t0);
            for h_i in 0..g.h {
                let r0 = (b_i * g.h + h_i) * g.t + t0;
                let xs = &x[r0 * d..(r0 + len) * d];
                // SAFETY: rows r0..r0+len of y, inside y, written by this task only (the
                // (batch, head, block) triples of distinct tasks are disjoint).
                let ys = unsafe { std::slice::from_raw_parts_mut(yp.get().add(r0 * d), len * d) };
                rows(path, g, r0, xs, cos, sin, ys, sgn);
            }
        });
    } else if x.len() <= chunk {
        rows(path, g, 0, x, cos, sin, y, sgn);
    } else {
        x.par_chunks(chunk)
            .zip(y.par_chunks_mut(chunk))
            .enumerate()
            .for_each(|(task, (xs, ys))| {
                rows(path, g, task * ROWS_PER_TASK, xs, cos, sin, ys, sgn)
            });
    }
    // SAFETY: the rows cover all of x (x.len() is a multiple of d, every row writes its d
    // outputs: d/2 pairs), so every element is initialized.
    unsafe { crate::buffer::assume_init(out) }
}

type Out<F> = std::mem::MaybeUninit<F>;

/// Positions per task in the (b, h, t, d) layouts.
const T_BLOCK: usize = 16;

/// The output pointer, shared by tasks that write disjoint rows.
#[derive(Clone, Copy)]
struct SyncPtr<T>(*mut T);
// SAFETY: only used to hand disjoint row ranges to the tasks of `apply`.
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}
impl<T> SyncPtr<T> {
    fn get(self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    #[test]
    fn bf16_route_equals_format_round() {
        let mut st = 0x2545_F491_4F6C_DD1Du64;
        let mut n = 0;
        for k in 0..2_000_000u64 {
            st ^= st << 13;
            st ^= st >> 7;
            st ^= st << 17;
            // random bits over every exponent, plus values near bf16 midpoints and limits
            let y = match k % 4 {
                0 => f64::from_bits(st),
                1 => f64::from_bits(
                    (st & 0x800F_FFFF_FFFF_FFFF) | (((st >> 52) % 300 + 1023 - 150) << 52),
                ),
                2 => {
                    let m = f32::from_bits(((st >> 32) as u32 & 0x7FFF_0000) | 0x8000);
                    (m as f64) * (1.0 + ((st & 0xFF) as f64 - 128.0) * f64::EPSILON)
                }
                _ => {
                    f64::from_bits(st >> 12 | 0x3690_0000_0000_0000)
                        * if st & 1 == 0 { 1.0 } else { -1.0 }
                }
            };
            let a: bf16 = round_from_odd(y);
            let b = <bf16 as Format>::round(y);
            assert!(
                a.to_bits() == b.to_bits() || (y.is_nan() && a.is_nan()),
                "{y:e}: {a} vs {b}"
            );
            n += 1;
        }
        for y in [
            0.0,
            -0.0,
            f64::INFINITY,
            -f64::INFINITY,
            f64::MAX,
            3.4e38,
            3.39e38,
            1e-45,
            1e-300,
            -1e-300,
        ] {
            let a: bf16 = round_from_odd(y);
            assert_eq!(a.to_bits(), <bf16 as Format>::round(y).to_bits(), "{y:e}");
        }
        assert!(n > 0);
    }

    #[test]
    fn vector_copies_give_the_same_bits() {
        fn check<F: Format + Default + PartialEq + std::fmt::Debug>(conv: fn(f32) -> F) {
            let (b, h, t, d) = (2, 3, 5, 64);
            let mut st = 0x9E37_79B9_7F4A_7C15u64;
            let mut next = || {
                st ^= st << 13;
                st ^= st >> 7;
                st ^= st << 17;
                conv(f32::from_bits((st >> 32) as u32 & 0xBFFF_FFFF)) // finite, any exponent below 2
            };
            let x: Vec<F> = (0..b * h * t * d).map(|_| next()).collect();
            let c: Vec<F> = (0..t * d / 2).map(|_| next()).collect();
            let s: Vec<F> = (0..t * d / 2).map(|_| next()).collect();
            for layout in [RopeLayout::Halves, RopeLayout::Interleaved, RopeLayout::Thd] {
                let g = Geometry {
                    layout,
                    b,
                    h,
                    t,
                    d,
                    cs_t: t,
                    batched: false,
                };
                let mut outs = Vec::new();
                for path in crate::math::VectorPath::available() {
                    let mut y = vec![std::mem::MaybeUninit::new(F::default()); x.len()];
                    rows(path, &g, 0, &x, &c, &s, &mut y, 1.0);
                    let y: Vec<u32> = y
                        .iter()
                        .map(|v| unsafe { v.assume_init() }.bits())
                        .collect();
                    outs.push(y);
                }
                for o in &outs[1..] {
                    assert!(o == &outs[0], "{layout:?}");
                }
            }
        }
        check::<f32>(|v| v);
        check::<bf16>(bf16::from_f32);
        check::<half::f16>(half::f16::from_f32);
    }
}
