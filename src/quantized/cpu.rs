//! The CPU half of the quantized product: x (m, k) times a weight (n, k) kept in its GGUF
//! blocks, every output the exact sum rounded once (`super`'s header has the definition
//! and the bound).
//!
//! * GEMV (m <= [`GEMV_MAX_ROWS`], decode): each weight row streamed once, block by block:
//!   the block's codes unpacked into a small buffer, each weight a q - c formed exactly in
//!   a register and multiplied into f64 sums of up to four rows of x; threads take chunks
//!   of weight rows.
//! * GEMM (prefill): a slab of weight rows decoded exactly into f64 panels, then the
//!   matmul's register micro-kernel (`crate::matmul::kernel`) on row blocks of x, threads
//!   over row blocks.
//!
//! The GEMV of a quantized type first runs the integer tier (`super::int_tier`) on each
//! task's weight rows; only the outputs it leaves take the f64 sums below.
//!
//! Both end in tier 1 (the f64 sum accepted when the interval of its error bound rounds to
//! one value); the rest, rare, go to tier 2 (`dot2_wide`, a compensated sum over the
//! decoded row) and what that leaves to the exact sum (`ExactDot::add_product_wide`).

use super::blocks::{self, QRows, QuantBlock, with_block};
use super::int_tier::{IntCtx, IntPath, IntScales, int_rows};
use crate::math::exact_dot::{ExactDot, dot2_bound, dot2_wide};
use crate::math::madd::madd;
use crate::math::round::{round_within, round_within_parts};
use crate::math::simd::{F64s, with_f64s};
use crate::math::vector::{Isa, PathKernel, run_on};
use crate::math::{Format, VectorPath};
use crate::matmul::Input;
use crate::matmul::cpu::{
    CpuConfig, FAST_MAX_K, GAMMA_UNIT, GEMV_MAX_ROWS, LineStats, NORM_SLACK, Out, Plan, View,
    pack_a, view_stats, zero_sign,
};
use crate::matmul::kernel;
use candle_core::quantized::GgmlDType;
use rayon::prelude::*;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// Weight rows per GEMV task.
const GEMV_ROWS: usize = 32;

/// Each weight row's stats (the norm of its exact values, computed in f64, and its sign
/// classes), computed once per weight.
pub(crate) fn row_stats(w: QRows) -> Vec<LineStats> {
    (0..w.n)
        .into_par_iter()
        .map_init(
            || vec![0f64; w.k],
            |buf, j| {
                w.decode_row(j, buf);
                let mut sq = 0f64;
                let mut signs = 0u8;
                for &v in buf.iter() {
                    sq += v * v; // any order and rounding: only a bound (super's header)
                    signs |= 1 << (v.to_bits() >> 63);
                }
                LineStats {
                    norm: sq.sqrt(),
                    signs,
                }
            },
        )
        .collect()
}

/// Tier 1's error coefficient c (the bound of an output is c (|x row| |w row| + |bias|)):
/// (k + 8 + bias) 2^-53 (1 + 2^-20), NaN when tier 1 is off or k too long for its bound.
pub(crate) fn tier1_coeff(k: usize, has_bias: bool, tier1_on: bool) -> f64 {
    if !tier1_on || k >= FAST_MAX_K {
        f64::NAN
    } else {
        (k + 8 + has_bias as usize) as f64 * GAMMA_UNIT
    }
}

/// One product: x (m rows of k, any strides), the weight, its row stats and the bias.
pub(crate) struct Problem<'a, T> {
    pub x: View<'a, T>,
    pub m: usize,
    pub w: QRows<'a>,
    pub w_stats: &'a [LineStats],
    /// Per weight row, for the types with a min: the norm of (|a_g q_k| + |c_g|)_k (the
    /// integer tier's bound, `int_tier`); empty for the others (|w_j| serves).
    pub w_abs: &'a [f64],
    /// The bias per output column, widened exactly to f32.
    pub bias: Option<Vec<f32>>,
}

/// What every task reads.
struct Shared<'a, T> {
    p: &'a Problem<'a, T>,
    coeff: f64,
    /// Per row of x: its norm, its norm times the coefficient, and its sign classes.
    row_norm: Vec<f64>,
    row_err: Vec<f64>,
    row_signs: Vec<u8>,
    /// Whether tier 2 runs (off when a test starts at tier 3).
    tier2: bool,
    /// The integer first tier of the GEMV (`int_tier`), where it applies.
    int: Option<IntCtx>,
}

impl<T: Input> Shared<'_, T> {
    /// Tier 1 on output (i, j) from its f64 sum `s` (bias not yet added): the correctly
    /// rounded value, or None (then [`Shared::exact`] decides).
    #[inline(always)]
    fn tier1<O: Format>(&self, i: usize, j: usize, s: f64) -> Option<O> {
        let p = self.p;
        let bias = p.bias.as_ref().map(|b| b[j]);
        let b = bias.map_or(0.0, |b| b as f64);
        let y = s + b;
        let ws = p.w_stats[j];
        let err = self.row_err[i] * ws.norm + self.coeff * b.abs();
        let (v, sure) = round_within_parts::<O>(y, err);
        if y == 0.0 && err == 0.0 {
            // Every product is zero: the sign of the exact zero from the sign classes.
            let neg = zero_sign(self.row_signs[i], ws.signs, p.w.k, bias)?;
            return Some(O::round(if neg { -0.0 } else { 0.0 }));
        }
        sure.then_some(v)
    }

    /// The integer tier on output (i, j) from its sum `y` (bias not yet added; NaN where
    /// the tier does not apply): the correctly rounded value, or None.
    #[inline(always)]
    fn int_decide<O: Format>(&self, ctx: &IntCtx, i: usize, j: usize, y: f64) -> Option<O> {
        let p = self.p;
        let b = p.bias.as_ref().map_or(0.0, |b| b[j] as f64);
        let y = y + b;
        if y == 0.0 || y.is_nan() {
            return None; // the sign of a zero, and what the tier left: the f64 tier's
        }
        let ws = p.w_stats[j];
        let pj = if p.w_abs.is_empty() {
            ws.norm
        } else {
            p.w_abs[j]
        };
        let err = ctx.err(i, self.row_norm[i], pj, ws.norm, b);
        round_within::<O>(y, err)
    }

    /// Output (i, j) when tier 1 could not decide: tier 2 (the compensated sum, tested
    /// the same way), else the exact sum rounded once. `buf` holds k values.
    fn slow<O: Format>(&self, i: usize, j: usize, buf: &mut [f64]) -> O {
        let p = self.p;
        let k = p.w.k;
        p.w.decode_row(j, buf);
        let w = &buf[..k];
        let x = |q: usize| p.x.data[p.x.base + i * p.x.rs + q * p.x.cs].widen();
        let bias = p.bias.as_ref().map(|b| b[j]);
        if self.tier2 && k < FAST_MAX_K {
            let r = dot2_wide(k, x, |q| w[q], bias);
            let norms = self.row_norm[i] * p.w_stats[j].norm * NORM_SLACK;
            let err = dot2_bound(2 * k, r, norms + bias.map_or(0.0, |b| b.abs() as f64));
            // An exact zero needs its sign from the exact sum.
            if !(r == 0.0 && err == 0.0)
                && let Some(o) = round_within::<O>(r, err)
            {
                return o;
            }
        }
        let mut acc = ExactDot::new();
        for (q, &w) in w.iter().enumerate() {
            acc.add_product_wide(x(q), w);
        }
        if let Some(b) = bias {
            acc.add(b);
        }
        O::round(acc.finish())
    }
}

/// Dot products of R rows of x (f64, row r at `x[r * k..]`) with one weight row's bytes,
/// each in f64 in some order (tier 1 accepts any order), in the copy `I`.
pub(crate) trait RowDot: 'static {
    fn dot<I: Isa, const R: usize>(k: usize, x: &[f64], row: &[u8]) -> [f64; R];

    /// The integer tier's sums of weight rows [j0, j0 + out.len()) (`int_tier::int_rows`);
    /// false where the type has none (the float types).
    #[inline(always)]
    fn int_rows<const R: usize>(
        _ctx: &IntCtx,
        _w: QRows,
        _j0: usize,
        _out: &mut [[f64; R]],
    ) -> bool {
        false
    }
}

/// Lanes of the GEMV sums: two sets of 16 (32 independent f64 chains per row of x).
const LANES: usize = 16;

impl<B: QuantBlock + IntScales> RowDot for B {
    #[inline(always)]
    fn int_rows<const R: usize>(ctx: &IntCtx, w: QRows, j0: usize, out: &mut [[f64; R]]) -> bool {
        int_rows::<B, R>(ctx.path, &ctx.xs, w, j0, out);
        true
    }

    #[inline(always)]
    fn dot<I: Isa, const R: usize>(k: usize, x: &[f64], row: &[u8]) -> [f64; R] {
        assert!(x.len() >= R * k && row.len() == k / B::LEN * B::BYTES);
        // SAFETY: x holds R rows of k and `row` k / LEN blocks (checked); this runs inside
        // the copy compiled for I, whose vectors `with_f64s` picks.
        with_f64s!(I, LANES, V => unsafe {
            dot_quant::<B, V, R, { LANES / <V as F64s>::W }>(k, x.as_ptr(), row)
        })
    }
}

/// [`RowDot::dot`] of a quantized row on vectors V: per block, the codes unpacked into a
/// buffer, then for each chunk of 16 weights a q - c formed exactly (a product of at most
/// 32 bits and a difference of multiples of 2^-24 below 2^30: `blocks`' header) and
/// multiplied into the sums of each row; chunk u of every pair goes to lane set u.
#[inline(always)]
unsafe fn dot_quant<B: QuantBlock, V: F64s, const R: usize, const NV: usize>(
    k: usize,
    x: *const f64,
    row: &[u8],
) -> [f64; R] {
    // SAFETY: the caller's (x holds R rows of k; the copy has V's instruction set).
    unsafe {
        let mut acc = [[[V::zero(); NV]; 2]; R];
        let mut q = [0i8; 256];
        let mut a = [0f64; 16];
        let mut c = [0f64; 16];
        for (bi, blk) in row.chunks_exact(B::BYTES).enumerate() {
            B::unpack(blk, &mut q[..B::LEN], &mut a, &mut c);
            let base = bi * B::LEN;
            // Chunks of 16 weights (every group is a multiple of 16), two at a time.
            for ch in (0..B::LEN / LANES).step_by(2) {
                for u in 0..2 {
                    let e0 = (ch + u) * LANES;
                    let g = e0 / B::GROUP;
                    let (av, cv) = (V::splat(a[g]), V::splat(c[g]));
                    for v in 0..NV {
                        let e = e0 + v * V::W;
                        let qv = V::from_i8(q.as_ptr().add(e));
                        let w = if B::HAS_MIN {
                            V::sub(V::mul(av, qv), cv)
                        } else {
                            V::mul(av, qv)
                        };
                        for (r, acc) in acc.iter_mut().enumerate() {
                            let xv = V::load(x.add(r * k + base + e));
                            acc[u][v] = V::madd(xv, w, acc[u][v]);
                        }
                    }
                }
            }
        }
        let mut out = [0f64; R];
        for (o, acc) in out.iter_mut().zip(acc) {
            let mut lanes = [[0f64; LANES]; 2];
            for (set, acc) in lanes.iter_mut().zip(acc) {
                for (v, x) in acc.into_iter().enumerate() {
                    x.store(set.as_mut_ptr().add(v * V::W));
                }
            }
            *o = fold(lanes);
        }
        out
    }
}

/// The float weight types as [`RowDot`]s: each value widened exactly.
pub(crate) struct FloatRow<const TY: u8>;
pub(crate) const F32_ROW: u8 = 0;
pub(crate) const F16_ROW: u8 = 1;
pub(crate) const BF16_ROW: u8 = 2;

impl<const TY: u8> FloatRow<TY> {
    const BYTES: usize = if TY == F32_ROW { 4 } else { 2 };

    #[inline(always)]
    fn value(b: &[u8]) -> f64 {
        match TY {
            F32_ROW => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            F16_ROW => crate::math::round::f16_bits_to_f32(u16::from_le_bytes([b[0], b[1]])) as f64,
            _ => f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16) as f64,
        }
    }
}

impl<const TY: u8> RowDot for FloatRow<TY> {
    #[inline(always)]
    fn dot<I: Isa, const R: usize>(k: usize, x: &[f64], row: &[u8]) -> [f64; R] {
        const { assert!(R <= 4) };
        match I::FUSED {
            true => Self::dot_with::<R, true>(k, x, row),
            false => Self::dot_with::<R, false>(k, x, row),
        }
    }
}

impl<const TY: u8> FloatRow<TY> {
    #[inline(always)]
    fn dot_with<const R: usize, const FUSED: bool>(k: usize, x: &[f64], row: &[u8]) -> [f64; R] {
        let xs: [&[f64]; R] = std::array::from_fn(|r| &x[r * k..(r + 1) * k]);
        let mut acc = [[[0f64; LANES]; 2]; R];
        let full = k / LANES * LANES;
        for e0 in (0..full).step_by(LANES) {
            let u = (e0 / LANES) % 2;
            let bytes = &row[e0 * Self::BYTES..(e0 + LANES) * Self::BYTES];
            for t in 0..LANES {
                let w = Self::value(&bytes[t * Self::BYTES..]);
                for r in 0..R {
                    acc[r][u][t] = madd::<FUSED>(xs[r][e0 + t], w, acc[r][u][t]);
                }
            }
        }
        for (t, e) in (full..k).enumerate() {
            let w = Self::value(&row[e * Self::BYTES..]);
            for r in 0..R {
                acc[r][0][t] = madd::<FUSED>(xs[r][e], w, acc[r][0][t]);
            }
        }
        std::array::from_fn(|r| fold(acc[r]))
    }
}

/// The lanes added in a fixed order.
#[inline(always)]
fn fold(v: [[f64; LANES]; 2]) -> f64 {
    let mut s = [0f64; LANES];
    for t in 0..LANES {
        s[t] = v[0][t] + v[1][t];
    }
    let mut w = LANES / 2;
    while w > 0 {
        for t in 0..w {
            s[t] += s[t + w];
        }
        w /= 2;
    }
    s[0]
}

/// One GEMV task: weight rows [j0, j0 + cols) against the m rows of x (as f64 in `x64`).
struct GemvTask<'s, 'a, D, T, O> {
    sh: &'s Shared<'a, T>,
    x64: &'s [f64],
    j0: usize,
    cols: usize,
    out: Out<O>,
    dot: PhantomData<D>,
}

impl<D: RowDot, T: Input, O: Format> PathKernel<()> for GemvTask<'_, '_, D, T, O> {
    #[inline(always)]
    fn run<I: Isa>(self) {
        match self.sh.p.m {
            1 => self.go::<I, 1>(),
            2 => self.go::<I, 2>(),
            3 => self.go::<I, 3>(),
            4 => self.go::<I, 4>(),
            _ => unreachable!("GEMV rows are 1..=4"),
        }
    }
}

impl<D: RowDot, T: Input, O: Format> GemvTask<'_, '_, D, T, O> {
    #[inline(always)]
    fn go<I: Isa, const R: usize>(&self) {
        let sh = self.sh;
        let w = sh.p.w;
        let n = w.n;
        let mut undecided = Vec::new();
        // The integer tier first (`int_tier`), where it applies.
        let mut ints = [[f64::NAN; R]; GEMV_ROWS];
        let ints = &mut ints[..self.cols];
        let int = match &sh.int {
            Some(ctx) => D::int_rows::<R>(ctx, w, self.j0, ints).then_some(ctx),
            None => None,
        };
        for (t, j) in (self.j0..self.j0 + self.cols).enumerate() {
            let mut pending = [true; R];
            if let Some(ctx) = int {
                for (i, p) in pending.iter_mut().enumerate() {
                    if let Some(v) = sh.int_decide::<O>(ctx, i, j, ints[t][i]) {
                        // SAFETY: column j belongs to this task.
                        unsafe { self.out.write(i * n + j, v) };
                        *p = false;
                    }
                }
                if !pending.contains(&true) {
                    continue;
                }
            }
            let s = D::dot::<I, R>(w.k, self.x64, w.row(j));
            for (i, &s) in s.iter().enumerate() {
                if !pending[i] {
                    continue;
                }
                match sh.tier1::<O>(i, j, s) {
                    // SAFETY: column j belongs to this task.
                    Some(v) => unsafe { self.out.write(i * n + j, v) },
                    None => undecided.push((i, j)),
                }
            }
        }
        if !undecided.is_empty() {
            let mut buf = vec![0f64; w.k];
            for (i, j) in undecided {
                let v = sh.slow::<O>(i, j, &mut buf);
                // SAFETY: column j belongs to this task.
                unsafe { self.out.write(i * n + j, v) };
            }
        }
    }
}

/// Decode weight rows [j0, j0 + cols) into panels of `nr` rows: panel t holds, for each p
/// < k, the weights w[j0 + t nr + c][p] (0 past the last row) at `p * nr + c`.
fn decode_slab(w: QRows, j0: usize, cols: usize, nr: usize, dst: &mut [f64]) {
    let k = w.k;
    dst.par_chunks_mut(nr * k).enumerate().for_each_init(
        || vec![0f64; k],
        |buf, (t, panel)| {
            let width = nr.min(cols.saturating_sub(t * nr));
            for c in 0..nr {
                if c >= width {
                    for p in 0..k {
                        panel[p * nr + c] = 0.0;
                    }
                    continue;
                }
                w.decode_row(j0 + t * nr + c, buf);
                for (p, &v) in buf.iter().enumerate() {
                    panel[p * nr + c] = v;
                }
            }
        },
    );
}

thread_local! {
    /// Packing and accumulation space of the GEMM tasks, reused across calls.
    static SCRATCH: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// One GEMM task: rows [i0, i0 + mc) of x against the decoded slab of weight rows
/// [j0, j0 + cols).
struct GemmTask<'s, 'a, T, O> {
    sh: &'s Shared<'a, T>,
    plan: Plan,
    i0: usize,
    j0: usize,
    cols: usize,
    slab: &'s [f64],
    out: Out<O>,
    scratch: &'s mut Vec<f64>,
}

impl<T: Input, O: Format> PathKernel<()> for GemmTask<'_, '_, T, O> {
    #[inline(always)]
    fn run<I: Isa>(self) {
        // The tile comes from the plan (the requested path), the instructions from the
        // copy `run_on` picked: a test can run every tile shape on any CPU.
        match (self.plan.mr, self.plan.nr) {
            (8, 24) => self.go::<I, 8, 24>(),
            (6, 8) => self.go::<I, 6, 8>(),
            _ => self.go::<I, 4, 4>(),
        }
    }
}

impl<T: Input, O: Format> GemmTask<'_, '_, T, O> {
    #[inline(always)]
    fn go<I: Isa, const MR: usize, const NR: usize>(self) {
        let sh = self.sh;
        let p = sh.p;
        let Plan {
            mc, kc, kblocks, ..
        } = self.plan;
        let (k, n) = (p.w.k, p.w.n);
        let rows = mc.min(p.m - self.i0);
        let cols = self.cols;
        let (row_tiles, col_tiles) = (rows.div_ceil(MR), cols.div_ceil(NR));
        let tile_len = MR * NR;
        let acc_len = if kblocks > 1 {
            row_tiles * col_tiles * tile_len
        } else {
            0
        };
        let need = row_tiles * MR * kc + acc_len;
        if self.scratch.len() < need {
            self.scratch.resize(need, 0.0);
        }
        let (apack, acc) = self.scratch.split_at_mut(row_tiles * MR * kc);
        let acc = &mut acc[..acc_len];
        let mut local = [0.0f64; 8 * 24];
        let mut undecided = Vec::new();
        for kb in 0..kblocks {
            let p0 = kb * kc;
            let kcb = kc.min(k - p0);
            let apack = &mut apack[..row_tiles * MR * kcb];
            pack_a::<T, f64, MR>(&p.x, self.i0, rows, p0, kcb, apack);
            let last = kb + 1 == kblocks;
            for jt in 0..col_tiles {
                let bp = &self.slab[jt * NR * k + p0 * NR..][..kcb * NR];
                let j = self.j0 + jt * NR;
                let width = NR.min(cols - jt * NR);
                for it in 0..row_tiles {
                    let ap = &apack[it * MR * kcb..(it + 1) * MR * kcb];
                    let t = if kblocks > 1 {
                        &mut acc[(it * col_tiles + jt) * tile_len..][..tile_len]
                    } else {
                        &mut local[..tile_len]
                    };
                    kernel::micro_tile::<I, MR, NR>(kcb, ap, bp, t, kb > 0);
                    if !last {
                        continue;
                    }
                    for r in 0..MR.min(rows - it * MR) {
                        let i = self.i0 + it * MR + r;
                        for c in 0..width {
                            match sh.tier1::<O>(i, j + c, t[r * NR + c]) {
                                // SAFETY: (i, j + c) lies in this task's block.
                                Some(v) => unsafe { self.out.write(i * n + j + c, v) },
                                None => undecided.push((i, j + c)),
                            }
                        }
                    }
                }
            }
        }
        if !undecided.is_empty() {
            let mut buf = vec![0f64; k];
            for (i, j) in undecided {
                let v = sh.slow::<O>(i, j, &mut buf);
                // SAFETY: (i, j) lies in this task's block.
                unsafe { self.out.write(i * n + j, v) };
            }
        }
    }
}

/// The whole product into `out` (m * n elements, row-major), every element written.
pub(crate) fn qmatmul<T: Input, O: Format>(
    p: &Problem<T>,
    cfg: CpuConfig,
    out: &mut [MaybeUninit<O>],
) {
    let (m, n, k) = (p.m, p.w.n, p.w.k);
    assert_eq!(out.len(), m * n, "output size");
    if out.is_empty() {
        return;
    }
    let rows = view_stats(&p.x, true, m, k);
    let coeff = tier1_coeff(k, p.bias.is_some(), cfg.start_tier.is_none());
    let gemv = cfg.gemv && m <= GEMV_MAX_ROWS && k > 0;
    // The integer tier: the GEMV of a quantized type with tier 1 on.
    let short = blocks::geometry(p.w.ty).0 == 32;
    let int_on = cfg
        .int_tier
        .unwrap_or_else(|| IntPath::of(cfg.path) == IntPath::Avx512Vnni);
    let int = match gemv && int_on && (!short || cfg.int_tier_short_blocks) && !coeff.is_nan() {
        true => IntCtx::new::<T>(cfg.path, p.w.ty, m, k, |i, q| {
            p.x.data[p.x.base + i * p.x.rs + q * p.x.cs].widen()
        }),
        false => None,
    };
    let sh = Shared {
        p,
        coeff,
        row_norm: rows.iter().map(|r| r.norm).collect(),
        row_err: rows.iter().map(|r| coeff * r.norm).collect(),
        row_signs: rows.iter().map(|r| r.signs).collect(),
        tier2: cfg.start_tier.unwrap_or(1) <= 2,
        int,
    };
    let outp = Out(out.as_mut_ptr());
    if k == 0 {
        // Empty sums: the bias, or +0.
        let mut buf = Vec::new();
        for i in 0..m {
            for j in 0..n {
                out[i * n + j].write(sh.slow::<O>(i, j, &mut buf));
            }
        }
        return;
    }
    if gemv {
        let x64: Vec<f64> = (0..m)
            .flat_map(|i| (0..k).map(move |q| p.x.data[p.x.base + i * p.x.rs + q * p.x.cs]))
            .map(|v| v.widen() as f64)
            .collect();
        let tasks = n.div_ceil(GEMV_ROWS);
        let run = |path: VectorPath| {
            (0..tasks).into_par_iter().for_each(|t| {
                let j0 = t * GEMV_ROWS;
                let cols = GEMV_ROWS.min(n - j0);
                macro_rules! task {
                    ($D:ty) => {
                        run_on(
                            path,
                            GemvTask::<$D, T, O> {
                                sh: &sh,
                                x64: &x64,
                                j0,
                                cols,
                                out: outp,
                                dot: PhantomData,
                            },
                        )
                    };
                }
                with_block!(p.w.ty, B => task!(B), float => match p.w.ty {
                    GgmlDType::F32 => task!(FloatRow<F32_ROW>),
                    GgmlDType::F16 => task!(FloatRow<F16_ROW>),
                    _ => task!(FloatRow<BF16_ROW>),
                })
            });
        };
        run(cfg.path);
        return;
    }
    // The slab in f64 is at most NC_TILES rows of k: no larger than x and w as f64.
    let plan = Plan::new(cfg.path, false, m, k, cfg.kc_max, (m + n) * k * 8);
    let row_blocks = m.div_ceil(plan.mc);
    let mut slab = vec![0.0f64; plan.nc.min(n).div_ceil(plan.nr) * plan.nr * k];
    for j0 in (0..n).step_by(plan.nc) {
        let cols = plan.nc.min(n - j0);
        let slab = &mut slab[..cols.div_ceil(plan.nr) * plan.nr * k];
        decode_slab(p.w, j0, cols, plan.nr, slab);
        let slab = &*slab;
        (0..row_blocks).into_par_iter().for_each(|rb| {
            SCRATCH.with(|s| {
                let task = GemmTask {
                    sh: &sh,
                    plan,
                    i0: rb * plan.mc,
                    j0,
                    cols,
                    slab,
                    out: outp,
                    scratch: &mut s.borrow_mut(),
                };
                run_on(cfg.path, task);
            });
        });
    }
}

/// How many of the m n outputs the integer tier decides on its own (the rest go on to
/// the f64 tier), with x's m <= 4 rows, on `path`'s integer kernel: (decided, outputs).
pub(crate) fn int_decided<T: Input, O: Format>(p: &Problem<T>, path: VectorPath) -> (usize, usize) {
    let (m, n, k) = (p.m, p.w.n, p.w.k);
    assert!((1..=GEMV_MAX_ROWS).contains(&m) && k > 0);
    let rows = view_stats(&p.x, true, m, k);
    let coeff = tier1_coeff(k, p.bias.is_some(), true);
    let sh = Shared {
        p,
        coeff,
        row_norm: rows.iter().map(|r| r.norm).collect(),
        row_err: rows.iter().map(|r| coeff * r.norm).collect(),
        row_signs: rows.iter().map(|r| r.signs).collect(),
        tier2: true,
        int: None,
    };
    let Some(ctx) = IntCtx::new::<T>(path, p.w.ty, m, k, |i, q| {
        p.x.data[p.x.base + i * p.x.rs + q * p.x.cs].widen()
    }) else {
        return (0, m * n);
    };
    fn go<B: IntScales, T: Input, O: Format, const R: usize>(
        sh: &Shared<T>,
        ctx: &IntCtx,
    ) -> usize {
        let w = sh.p.w;
        let mut out = vec![[0f64; R]; w.n];
        int_rows::<B, R>(ctx.path, &ctx.xs, w, 0, &mut out);
        let mut decided = 0;
        for (j, y) in out.iter().enumerate() {
            for (i, &y) in y.iter().enumerate() {
                decided += sh.int_decide::<O>(ctx, i, j, y).is_some() as usize;
            }
        }
        decided
    }
    let decided = with_block!(p.w.ty, B => match m {
        1 => go::<B, T, O, 1>(&sh, &ctx),
        2 => go::<B, T, O, 2>(&sh, &ctx),
        3 => go::<B, T, O, 3>(&sh, &ctx),
        _ => go::<B, T, O, 4>(&sh, &ctx),
    }, float => 0);
    (decided, m * n)
}
